"""The process entry: `python -m pqbench` and the `pqbench` script.

It loads the one command the command line names (`pqbench.cli.load`) and runs it; a Ctrl-C
while the commands load ends pqbench as it ends a running command, with one line on stderr
and status 130, written here, before any of the rooms that print has loaded.
"""

from __future__ import annotations

import sys

from pqbench import cli


def main() -> None:
    if sys.argv[1:] == ["worker"]:
        cli.serve_worker()
    try:
        try:
            app = cli.load(sys.argv[1:2])
        except KeyboardInterrupt:
            from pqbench.platform import interrupts

            interrupts.ignore_later()  # as once a command was interrupted
            sys.stderr.write("error: interrupted\n")
            raise SystemExit(interrupts.SIGINT_EXIT) from None
        app()
    except SystemExit as done:
        from pqbench.platform import interrupts

        if done.code in (interrupts.SIGINT_EXIT, interrupts.SIGTERM_EXIT):
            interrupts.forget_caught_interruption()
        raise


if __name__ == "__main__":
    main()

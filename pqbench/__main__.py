"""The process entry: `python -m pqbench` and the `pqbench` script.

It loads the one command the command line names (`pqbench.cli.load`) and runs it; a Ctrl-C
while the commands load ends pqbench as it ends a running command, with one line on stderr
and status 130, written here, before any of the rooms that print has loaded.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from pqbench import cli


def _loaded(first: list[str]) -> Any:
    """`cli.load`, without a garbage collection while the modules load, then frozen.

    Loading typer, rich and a command's modules makes tens of thousands of objects that live
    as long as the process: Python's collector, counting them as new, walked them again and
    again, a good part of a short command's time (`pqbench show`). Frozen (`gc.freeze`),
    they are out of every later collection; the collector is on again for the command
    itself, whose cycles it still collects."""
    gc.disable()
    try:
        return cli.load(first)
    finally:
        gc.freeze()
        gc.enable()


def main() -> None:
    if sys.argv[1:] == ["worker"]:
        cli.serve_worker()
    try:
        try:
            app = _loaded(sys.argv[1:2])
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

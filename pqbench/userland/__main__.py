"""`python -m pqbench.userland`: the commands of `pqbench userland`, and the plumbing that
every command prefix goes through.

  build NAME          build or reuse NAME, refresh its pqbench; print where it is
  status [NAME]       what is built, what is inside, which container engines run
  prefix NAME         the command that starts NAME's pqbench (append `worker`, `speed` ...)
  run NAME -- CMD...  run CMD inside NAME (with /proc, /dev, /sys and the caches mounted)

`run` (which every `ab` worker of a userland side starts through) and the internal
`_enter` (the far side of `unshare --mount`) are handled here without loading the whole
command line, so entering costs a fraction of a second; the rest is `pqbench userland`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pqbench.errors import PqbenchError, UsageError
from pqbench.userland import exec_inside, given_command


def _plumbing(argv: list[str]) -> None:
    """`run NAME -- CMD...` and `_enter ROOT --cwd DIR --host-namespace NS -- CMD...`."""
    from pqbench.userland.chroot import enter

    if argv[0] == "run":
        if len(argv) < 2 or argv[1].startswith("-"):
            raise UsageError("usage: python -m pqbench.userland run NAME -- COMMAND [ARGS...]")
        exec_inside(argv[1], argv[2:])
    parser = argparse.ArgumentParser(prog="python -m pqbench.userland _enter")
    parser.add_argument("root", type=Path)
    parser.add_argument("--cwd", default="/")
    parser.add_argument("--host-namespace", required=True)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv[1:])
    enter(args.root, given_command(args.argv), args.cwd, args.host_namespace)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["run"], ["_enter"]):
        try:
            _plumbing(args)
        except PqbenchError as exc:
            print(f"pqbench userland: error: {exc}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            print("pqbench userland: interrupted", file=sys.stderr)
            return 130
        return 0
    from pqbench.cli.userland import userland_app

    try:
        userland_app(args=args, prog_name="python -m pqbench.userland", standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

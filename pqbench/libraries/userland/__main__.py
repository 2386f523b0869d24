"""`python -m pqbench.libraries.userland`: the plumbing every command prefix goes through.

  run NAME -- CMD...  run CMD inside NAME (with /proc, /dev, /sys and the caches mounted)
  _enter ROOT ...     the far side of `unshare --mount` (internal)

`run` (which every `ab` worker of a userland side starts through) and `_enter` are handled
here without loading the command line, so entering costs a fraction of a second. Building,
status and prefixes are `pqbench userland build|status|prefix|run`: the command line sits
above this package and this package never imports it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pqbench.libraries.userland import exec_inside, given_command
from pqbench.platform.errors import PqbenchError, UsageError

_USAGE = ("usage: python -m pqbench.libraries.userland run NAME -- COMMAND [ARGS...]\n"
          "(build, status and prefix are `pqbench userland build|status|prefix NAME`)")


def _plumbing(argv: list[str]) -> None:
    """`run NAME -- CMD...` and `_enter ROOT --cwd DIR --host-namespace NS -- CMD...`."""
    from pqbench.libraries.userland.chroot import enter

    if argv[0] == "run":
        if len(argv) < 2 or argv[1].startswith("-"):
            raise UsageError(_USAGE)
        exec_inside(argv[1], argv[2:])
    parser = argparse.ArgumentParser(prog="python -m pqbench.libraries.userland _enter")
    parser.add_argument("root", type=Path)
    parser.add_argument("--cwd", default="/")
    parser.add_argument("--host-namespace", required=True)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv[1:])
    enter(args.root, given_command(args.argv), args.cwd, args.host_namespace)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] not in (["run"], ["_enter"]):
        print(f"pqbench userland: error: {_USAGE}", file=sys.stderr)
        return 2
    try:
        _plumbing(args)
    except PqbenchError as exc:
        print(f"pqbench userland: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("pqbench userland: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

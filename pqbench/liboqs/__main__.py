"""`python -m pqbench.liboqs`: find or build liboqs, then say which one pqbench will use.

Progress goes to stderr; stdout carries only the answer (plain lines, or JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import sys

from pqbench.errors import PqbenchError
from pqbench.liboqs import ensure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pqbench.liboqs", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the install as JSON")
    parser.add_argument(
        "--force",
        action="store_true",
        help="rebuild the pinned liboqs even if a usable one is found",
    )
    args = parser.parse_args(argv)
    try:
        install = ensure(force=args.force)
    except PqbenchError as exc:
        print(f"pqbench.liboqs: error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.json:
        print(json.dumps(install.to_dict(), indent=2, default=str))
    else:
        for name in ("prefix", "library", "version", "origin"):
            print(f"{name}: {getattr(install, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

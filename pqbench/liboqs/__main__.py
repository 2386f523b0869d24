"""`python -m pqbench.liboqs`: find or build liboqs, then say which one pqbench will use.

By default pqbench builds only the NIST standards and HQC (ML-KEM, ML-DSA, SLH-DSA/SPHINCS+,
Falcon, HQC) in about a minute; --all builds every algorithm liboqs offers. Progress goes to
stderr; stdout carries only the answer (plain lines, or JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import sys

from pqbench.errors import PqbenchError
from pqbench.liboqs import ensure
from pqbench.liboqs.build import SourceUnavailable, log_to_stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pqbench.liboqs", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the install as JSON")
    parser.add_argument(
        "--all",
        action="store_true",
        help="build every algorithm liboqs offers (several minutes) unless the liboqs found "
        "already enables them all",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="rebuild the pinned liboqs even if a usable one is found",
    )
    parser.add_argument(
        "--no-fallback",
        action="store_true",
        help="without cargo, stop (exit 0, nothing on stdout) instead of running liboqs-python's "
        "installer; set-up uses this to build liboqs while pip installs liboqs-python",
    )
    args = parser.parse_args(argv)
    try:
        install = ensure(force=args.force, full=args.all, fallback=not args.no_fallback)
    except SourceUnavailable as exc:
        log_to_stderr(f"{exc}; leaving liboqs to liboqs-python's installer")
        return 0
    except PqbenchError as exc:
        print(f"pqbench.liboqs: error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.json:
        print(json.dumps(install.to_dict(), indent=2, default=str))
        return 0
    for name in ("prefix", "library", "version", "origin"):
        print(f"{name}: {getattr(install, name)}")
    algorithms = install.build.get("algorithms")
    if algorithms == "minimal":
        print("algorithms: minimal (the NIST standards and HQC; --all builds every algorithm)")
    elif algorithms is not None:
        print(f"algorithms: {algorithms}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

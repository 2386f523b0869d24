"""`python -m pqbench.libraries.liboqs`: find or build liboqs, then say which one pqbench will use.

By default pqbench builds only the NIST standards and HQC (ML-KEM, ML-DSA, SLH-DSA/SPHINCS+,
Falcon, HQC) in about a minute; --all builds every algorithm liboqs offers. Progress goes to
stderr; stdout carries only the answer (plain lines, or JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from pqbench.libraries.liboqs import ensure
from pqbench.libraries.liboqs.compiling import SourceUnavailable, progress
from pqbench.platform.errors import PqbenchError


def _show_progress() -> None:
    """This entry runs without the command line's console: logging's own stream handler
    shows the build's progress on stderr, in the form the command line shows it."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger = logging.getLogger("pqbench")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pqbench.libraries.liboqs", description=__doc__)
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
    _show_progress()
    try:
        install = ensure(force=args.force, full=args.all, fallback=not args.no_fallback)
    except SourceUnavailable as exc:
        progress(f"{exc}; leaving liboqs to liboqs-python's installer")
        return 0
    except PqbenchError as exc:
        progress(f"error: {exc}")
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

"""How long `pqbench --help`, `pqbench env` and `pqbench runs` take to start (not a test).

Issue #13 asks for under 0.5 s. Each command runs as a user runs it (`python -m pqbench`, a
fresh process), interleaved with the bare interpreter (`python -c pass`) so a neighbour's
load hits both alike: pairs (command, interpreter) in random order, replicated. Prints per
command the median wall time, the interpreter's, and the median of the paired differences
(what pqbench itself costs on top of starting Python). With `--reference DIR` (another
checkout, e.g. /work/main) its pqbench joins each round, and the median of the paired
ratios this tree / reference is printed too.

    .venv/bin/python benchmarks/startup.py [--pairs 15] [--reference DIR]

The reference should be a copy you may write bytecode caches into (`git archive main pqbench
| tar -x -C /tmp/ref`), so both sides start from .pyc as an installed pqbench does.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def wall(argv: list[str], pythonpath: str | None = None) -> float:
    # Bytecode caches on, as a user has them (the first, untimed round writes them).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    started = time.perf_counter()
    # From / : `python -m` puts the working directory first on sys.path.
    subprocess.run(argv, capture_output=True, check=False, env=env, cwd="/")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--reference", help="another checkout's root, run alongside")
    options = parser.parse_args()
    pairs, reference = options.pairs, options.reference
    python = [sys.executable]
    with tempfile.TemporaryDirectory() as scratch:
        db = str(Path(scratch) / "results.db")
        subprocess.run([*python, "-m", "pqbench", "speed", "sha256", "-i", "python",
                        "--bytes", "64", "--seconds", "0.05", "--rounds", "2", "--db", db],
                       capture_output=True, check=True)
        commands = {"--help": ["--help"], "env": ["env"], "runs": ["runs", "--db", db]}
        print(f"{'command':8} {'median s':>9} {'python s':>9} {'pqbench s':>10}"
              + (f" {'reference s':>12} {'ours/ref':>9}" if reference else "")
              + f"  ({pairs} rounds)")
        for name, args in commands.items():
            times: dict[str, list[float]] = {"ours": [], "bare": [], "reference": []}
            argv = {"ours": [*python, "-m", "pqbench", *args], "bare": [*python, "-c", "pass"],
                    "reference": [*python, "-m", "pqbench", *args]}
            for which in argv:  # untimed: caches warm, .pyc written
                wall(argv[which], reference if which == "reference" else None)
            for _ in range(pairs):
                order = ["ours", "bare", *(["reference"] if reference else [])]
                random.shuffle(order)
                for which in order:
                    times[which].append(wall(argv[which],
                                             reference if which == "reference" else None))
            ours, bare = times["ours"], times["bare"]
            extra = statistics.median(a - b for a, b in zip(ours, bare, strict=True))
            line = (f"{name:8} {statistics.median(ours):9.3f} {statistics.median(bare):9.3f} "
                    f"{extra:10.3f}")
            if reference:
                ratio = statistics.median(a / r for a, r in zip(ours, times["reference"],
                                                                  strict=True))
                line += f" {statistics.median(times['reference']):12.3f} {ratio:9.2f}"
            print(line)

if __name__ == "__main__":
    main()

"""How long `pqbench --help`, `pqbench env`, `pqbench runs` and `pqbench show` take (not a test).

The first three should start in under 0.5 s, `show` of one run finish in under 1 s. Each
command runs as a user runs it (`python -m pqbench`, a fresh process), interleaved with the
bare interpreter (`python -c pass`) so a neighbour's load hits both alike: pairs (command,
interpreter) in random order, replicated. Prints per command the median wall time, the
interpreter's, and the median of the paired differences (what pqbench itself costs on top of
starting Python). With `--reference DIR` (another checkout, e.g. /work/main) its pqbench joins
each round, and the median of the paired ratios this tree / reference is printed too, with
its interval (`analysis.ratios.paired`).
`show` shows the newest run of a small store made here, or `--show-db DB` (and `--show-run
RUN`): a real speed run of many rows draws tables that take time of their own.

    .venv/bin/python benchmarks/startup.py [--pairs 15] [--reference DIR]
        [--commands --help,env,runs,show] [--show-db DB --show-run RUN]

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

from pqbench.analysis import ratios


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
    parser.add_argument("--commands", default="--help,env,runs,show",
                        help="which commands, comma-separated")
    parser.add_argument("--show-db", help="the store `show` reads (default: one made here)")
    parser.add_argument("--show-run", help="the run `show` shows (default: the newest)")
    options = parser.parse_args()
    pairs, reference = options.pairs, options.reference
    python = [sys.executable]
    with tempfile.TemporaryDirectory() as scratch:
        db = str(Path(scratch) / "results.db")
        subprocess.run([*python, "-m", "pqbench", "speed", "sha256", "-i", "python",
                        "--bytes", "64", "--seconds", "0.05", "--rounds", "2", "--db", db],
                       capture_output=True, check=True)
        shown = [*([options.show_run] if options.show_run else []),
                 "--db", options.show_db or db]
        commands = {"--help": ["--help"], "env": ["env"], "runs": ["runs", "--db", db],
                    "show": ["show", *shown]}
        print(f"{'command':8} {'median s':>9} {'python s':>9} {'pqbench s':>10}"
              + (f" {'reference s':>12} {'ours/ref [95 % CI]':>24}" if reference else "")
              + f"  ({pairs} rounds, load {os.getloadavg()[0]:.2f})")
        for name, args in commands.items():
            if name not in options.commands.split(","):
                continue
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
                found = ratios.paired(ours, times["reference"], 0.95)
                assert found is not None
                ratio, low, high, _ = found
                line += (f" {statistics.median(times['reference']):12.3f} "
                         f"{f'{ratio:.3f} [{low:.3f}, {high:.3f}]':>24}")
            print(line, flush=True)
        print(f"load after: {os.getloadavg()[0]:.2f}")

if __name__ == "__main__":
    main()

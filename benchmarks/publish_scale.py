"""`pqbench publish` at fleet scale: 10,000 runs (20 machines x 50 OS builds x 10 runs), the
site published from nothing, published again after one more run, and its index opened in a
real headless Chromium until its script says it is ready.

The fleet is `tests.helpers.fleet.Fleet` (the runs the browser tests publish, at scale):
ten rows a run (an ML-KEM-768 and an X25519 exchange, an ML-DSA-65 and an Ed25519
signature, AES-256-GCM at 16 KiB), five rounds taken in cycles, a lognormal machine state
per run; planted steps (every fifth machine's ML-KEM 20 % slower from build 30, every
seventh machine's newest build with AES-NI masked). The runs are stored in one SQLite
store, then every command is a real `pqbench` process, as users run it.

Each target is timed --repeat times, alternated with a reference in the same moment of
this shared machine, and shown as the paired ratio with its range; each process's own CPU
time is shown too (on a machine whose cores other work oversubscribes, wall time says more
about the others than about publish):

* publish from nothing, against `pqbench history ML-KEM-768 -i liboqs -o encaps` (the
  fleet's existing one-row view, which also reads every run);
* publish again after one more run (the folder as the last publish left it), against the
  same `history`;
* the index in a fresh headless Chromium (a new profile each time: nothing cached), from
  navigation to `data-ready`, against `about:blank` loaded the same way.

Not a test. From the repository root:

    .venv/bin/python benchmarks/publish_scale.py --repeat 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # pqbench and tests.helpers, run from anywhere

from pqbench.data.store import Store  # noqa: E402
from tests.helpers.browser import Browser  # noqa: E402
from tests.helpers.fleet import Fleet  # noqa: E402

PQBENCH = [sys.executable, "-m", "pqbench"]
HISTORY = ["history", "ML-KEM-768", "-i", "liboqs", "-o", "encaps"]


def fleet(machines: int, builds: int, runs: int) -> Fleet:
    return Fleet(machines=machines, builds=builds, runs=runs,
                 jumps={(m, builds * 3 // 5): {"ML-KEM-768": 0.8}
                        for m in range(0, machines, 5)},
                 masked=frozenset((m, builds - 1) for m in range(0, machines, 7)),
                 loaded=frozenset({(1, builds - 1)}))


#: The CPU seconds (user + system) of each pqbench process, by what it timed.
CPU: dict[str, list[float]] = {}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], name: str) -> float:
    """One pqbench process's wall time. Its CPU time (the children's rusage across it) goes
    to `CPU[name]`: on a shared machine whose cores are oversubscribed, what the process
    itself took, about its wall time on a quiet machine (it computes on one thread)."""
    before, start = _children_cpu(), time.perf_counter()
    done = subprocess.run([*PQBENCH, *argv], capture_output=True, text=True, check=False,
                          env={**os.environ, "COLUMNS": "120"})
    elapsed = time.perf_counter() - start
    CPU.setdefault(name, []).append(_children_cpu() - before)
    if done.returncode != 0:
        raise SystemExit(f"pqbench {' '.join(argv[:3])} exited {done.returncode}: "
                         f"{done.stderr[-800:]}")
    return elapsed


def opened(page: str) -> float:
    """Seconds from navigation to ready, in a fresh browser (its start not counted)."""
    with Browser(timeout=120) as browser:
        if page == "about:blank":
            start = time.perf_counter()
            browser.page("Page.navigate", url="about:blank")
            browser.evaluate("document.readyState")
            return time.perf_counter() - start
        return browser.open(Path(page))


def size_of(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def describe(name: str, values: list[float], reference: list[float]) -> str:
    ratios = [v / r for v, r in zip(values, reference, strict=True)]
    return (f"| {name} | {statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"
            f" | {statistics.median(reference):.2f} s | x{statistics.median(ratios):.2f} "
            f"({min(ratios):.2f}–{max(ratios):.2f}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--machines", type=int, default=20)
    parser.add_argument("--builds", type=int, default=50)
    parser.add_argument("--runs", type=int, default=10, help="runs per build per machine")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, help="keep the store and sites here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="pqbench-publish-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "fleet.db"
    chosen = fleet(args.machines, args.builds, args.runs)
    total = args.machines * args.builds * args.runs
    if not db.exists():
        start = time.perf_counter()
        store = Store.open(str(db))
        batch = []
        for run in chosen.all_runs():
            batch.append(run)
            if len(batch) == 1000:
                store.save_runs(batch)
                batch = []
        store.save_runs(batch)
        print(f"stored {total:,} runs in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min average, {os.cpu_count()} cores)",
          file=sys.stderr)
    first, again, reference, reference_again = [], [], [], []
    index, blank = [], []
    for number in range(args.repeat):
        out = work / f"site-{number}"
        shutil.rmtree(out, ignore_errors=True)
        copy = work / f"fleet-{number}.db"
        shutil.copyfile(db, copy)
        reference.append(timed([*HISTORY, "--db", str(copy)], "history"))
        first.append(timed(["publish", "--db", str(copy), "--out", str(out)], "publish"))
        Store.open(str(copy)).save_runs([next(chosen.runs_of(
            number % args.machines, args.builds - 1, start=100 + number))])
        reference_again.append(timed([*HISTORY, "--db", str(copy)], "history again"))
        again.append(timed(["publish", "--db", str(copy), "--out", str(out)], "again"))
        blank.append(opened("about:blank"))
        index.append(opened(str(out / "index.html")))
        print(f"repeat {number + 1}: publish {first[-1]:.1f} s (CPU {CPU['publish'][-1]:.1f} s), "
              f"again {again[-1]:.1f} s (CPU {CPU['again'][-1]:.1f} s), "
              f"index {index[-1]:.2f} s", file=sys.stderr)
        copy.unlink()
    count, size = size_of(work / "site-0")
    plotly = (work / "site-0" / "assets" / "plotly.min.js").stat().st_size
    print(f"\n{total:,} runs ({args.machines} machines x {args.builds} builds x {args.runs} "
          f"runs, 10 rows of 5 rounds each); load after: {os.getloadavg()[0]:.2f}\n")
    print("| what | median (range) | reference, median | paired ratio (range) |")
    print("|---|---|---|---|")
    print(describe("publish from nothing (reference: history of one row)", first, reference))
    print(describe("publish again after one run (reference: the same history)", again,
                   reference_again))
    print(describe("index ready in a fresh headless Chromium (reference: about:blank)",
                   index, blank))
    print("\n| CPU time of the process (user + system) | median (range) |\n|---|---|")
    for name, values in CPU.items():
        print(f"| {name} | {statistics.median(values):.2f} s ({min(values):.2f}–"
              f"{max(values):.2f}) |")
    print(f"\nsite: {count} files, {size / 1e6:.1f} MB (plotly.min.js "
          f"{plotly / 1e6:.1f} MB of it)")


if __name__ == "__main__":
    main()

"""The store at fleet scale: import, `runs`, `compare`, `history` and `report`
over a synthetic history of thousands of runs, on SQLite and on a real PostgreSQL server.

The history is made from one real run (`pqbench speed --json`, the quick suite: 79 rows of
5 rounds; made here unless --seed names one): the largest size's runs spread over 100
builds (labels and OS builds `build-000` ... `build-099`, in order; 100 runs a build at
10,000 runs), each run that real run with its rounds
varied plausibly: a lognormal machine state per run (sigma 3 %), per-round noise (2 %),
and two planted steps (AES rows 20 % faster from build 40, ML-KEM rows 10 % slower from
build 70), ops kept and elapsed times rescaled. The runs are written as `pqbench export`
bundles (500 runs a file, under the 64 MiB import limit) and imported a thousand runs per
`pqbench import`, as a fleet would import its machines' exports.

Every command is a real `pqbench` process, as users run it; its wall time and peak
resident memory (os.wait4's rusage of that child) are recorded. The history grows in one
database, oldest builds first: at 1,000 runs it holds the first 10 builds, at 10,000 all
100, so `compare` of the two newest builds asks for the same 200 runs at each size (its
time should not grow), `history` of one row asks for every run, and `report --by
os_build` for every group. At each size the read commands run --repeat times in rotation
(runs, compare, history, report, then again), so a slow phase of this shared machine hits
each of them; the tables show the median and the range. A command that exceeds --timeout
is stopped and shown as "> TIMEOUT".

Not a test. From the repository root:

    .venv/bin/python benchmarks/store_scale.py --sizes 1000,10000 --backends sqlite,postgresql
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # pqbench and tests.helpers.postgres, run from anywhere
PQBENCH = [sys.executable, "-m", "pqbench"]
BUILDS = 100
RUNS_PER_FILE = 500
RUNS_PER_IMPORT = 1000
#: Planted steps: (first build, algorithm prefix, factor).
STEPS = ((40, "AES", 1.20), (70, "ML-KEM", 0.90))


@dataclass
class Timing:
    seconds: float
    peak_mb: float
    ok: bool
    note: str = ""
    #: The child's CPU time (user + system, wait4): what a shared machine's load does not
    #: stretch as it stretches the wall time.
    cpu: float = 0.0


@dataclass
class Figures:
    backend: str
    runs: int
    rows: int
    import_seconds: float = 0.0
    import_rows: int = 0
    import_peak_mb: float = 0.0
    write_rows: int = 0
    write_seconds: float = 0.0
    reads: dict[str, list[Timing]] = field(default_factory=dict)
    store: dict[str, float] = field(default_factory=dict)


def run_command(argv: list[str], timeout: float, cwd: Path) -> Timing:
    """One pqbench process: wall time and its own peak RSS (wait4 rusage, KiB on Linux)."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen([*PQBENCH, *argv], stdout=sink, stderr=subprocess.PIPE,
                                 cwd=cwd, env={**os.environ, "COLUMNS": "120"})
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            return Timing(time.perf_counter() - start, usage.ru_maxrss / 1024, False,
                          "timeout", usage.ru_utime + usage.ru_stime)
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    error = child.stderr.read().decode(errors="replace") if child.stderr else ""
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        print(f"  ! {' '.join(argv[:3])} exited {child.returncode}: {error[-500:]}",
              file=sys.stderr)
    return Timing(elapsed, usage.ru_maxrss / 1024, child.returncode == 0,
                  cpu=usage.ru_utime + usage.ru_stime)


# --- the synthetic history -----------------------------------------------------------------


def seed_run(path: Path | None, work: Path) -> dict[str, Any]:
    if path is None:
        path = work / "seed.json"
        print("making the seed run: pqbench speed --json (the quick suite) ...", flush=True)
        with path.open("w") as out:
            subprocess.run([*PQBENCH, "speed", "--json", "--db", str(work / "seed.db")],
                           stdout=out, check=True, cwd=work)
    document = json.loads(path.read_text())
    if document.get("format") == "pqbench-export":
        document = document["runs"][0]
    return document


def _factor(algorithm: str, build: int) -> float:
    factor = 1.0
    for first, prefix, step in STEPS:
        if build >= first and algorithm.startswith(prefix):
            factor *= step
    return factor


def synthetic_run(seed: dict[str, Any], index: int, build: int, rng: random.Random
                  ) -> dict[str, Any]:
    """Run `index` of the history, measured on `build`: the seed's rounds rescaled."""
    doc = copy.deepcopy(seed)
    minute = index  # one run a minute, builds in order
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(1_780_000_000 + 60 * minute))
    name = f"build-{build:03d}"
    doc["run_id"] = f"{stamp[:10].replace('-', '')}T{stamp[11:19].replace(':', '')}Z-" \
                    f"{index:06x}"
    doc["started_at"] = doc["finished_at"] = stamp
    doc["label"] = name
    env = doc["environment"]
    env["os_build"] = name
    if isinstance(env.get("os"), dict):
        env["os"]["build"] = name
    state = math.exp(rng.gauss(0.0, 0.03))
    for row in doc["results"]:
        level = state * _factor(row["algorithm"], build)
        for sample in row["samples"]:
            speed = level * math.exp(rng.gauss(0.0, 0.02))
            sample["elapsed_ns"] = max(1, round(sample["elapsed_ns"] / speed))
            if sample.get("cycles") is not None:
                sample["cycles"] = max(0, round(sample["cycles"] / speed))
        for derived in ("ops_per_sec", "us_per_op", "bytes_per_sec", "ci_low", "ci_high",
                        "cv", "cycles_per_op", "cycles_per_byte"):
            row.pop(derived, None)  # summaries are derived from the samples on import
    return doc


def write_history(seed: dict[str, Any], first: int, last: int, total: int, work: Path
                  ) -> list[Path]:
    """Export bundles holding runs first..last-1 of a history of `total` runs."""
    rng = random.Random(first)
    files = []
    per_build = total / BUILDS
    for start in range(first, last, RUNS_PER_FILE):
        docs = [synthetic_run(seed, i, int(i / per_build), rng)
                for i in range(start, min(last, start + RUNS_PER_FILE))]
        path = work / f"history-{total}-{start:06d}.json"
        path.write_text(json.dumps({"format": "pqbench-export", "format_version": 1,
                                    "runs": docs}))
        files.append(path)
    return files


# --- backends ------------------------------------------------------------------------------


@contextmanager
def databases(backend: str, work: Path, postgres: str | None) -> Iterator[Callable[[], str]]:
    """A maker of fresh, empty databases on the backend."""
    made = itertools.count()
    if backend == "sqlite":
        yield lambda: str(work / f"fleet-{next(made)}.db")
        return
    from tests.helpers.postgres import fresh_database, running_server

    if postgres:
        yield lambda: fresh_database(postgres)
        return
    with running_server() as base:
        yield lambda: fresh_database(base)


# --- measuring -------------------------------------------------------------------------------


def read_commands(db: str, out: Path, history_size: int, total: int
                  ) -> dict[str, list[str]]:
    """The read commands; compare takes the two newest builds stored so far."""
    builds = math.ceil(history_size / (total / BUILDS))
    last, before = f"build-{builds - 1:03d}", f"build-{builds - 2:03d}"
    return {
        "runs": ["runs", "--db", db],
        "compare": ["compare", "--by", "label", before, last, "--json", "--db", db],
        "history": ["history", "ML-KEM-768", "-i", "liboqs", "-o", "encaps", "--json",
                    "--db", db],
        "report": ["report", "--by", "os_build", "--out", str(out / f"report-{history_size}"),
                   "--force", "--db", db],
    }


def inner(name: str, *argv: str) -> Any:
    """Run one of the in-process measurements below in a child process, so that this one
    stays small: a child's peak RSS counts the parent's pages it was forked with."""
    done = subprocess.run([sys.executable, __file__, "--inner", name, *argv],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def write_rate(db: str, path: str) -> tuple[int, float]:
    """Rows of one export file and the seconds the store takes to write them to an empty
    database (`Store.save_documents`, as `pqbench import` writes), in this process (GC
    paused, as the command does): the store's share of an import, without starting
    Python and validating the file."""
    from pqbench.cli.common import many_records
    from pqbench.data.record import transfer
    from pqbench.data.store import Store

    with many_records():
        documents = transfer.read_documents([Path(path)])
        store = Store.open(db)
        start = time.perf_counter()
        store.save_documents(documents)
        elapsed = time.perf_counter() - start
        store.close()
    return sum(len(doc["results"]) for doc in documents), elapsed


def store_share(db: str, before: str, after: str, repeat: str) -> dict[str, float]:
    """Median seconds of the store queries `compare` of two builds and `history` of one
    row make, in this process: what the database answers, without the statistics."""
    from pqbench.analysis.history import names_algorithm
    from pqbench.cli.common import many_records
    from pqbench.data.store import RunFilter, Store

    store = Store.open(db, create=False)
    found: dict[str, list[float]] = {"compare": [], "history": []}
    with many_records():
        for _ in range(int(repeat)):
            start = time.perf_counter()
            store.load_runs(RunFilter(by="label", values=(before, after)))
            found["compare"].append(time.perf_counter() - start)
            start = time.perf_counter()
            names = tuple(n for n in store.algorithms() if names_algorithm(n, "ML-KEM-768"))
            headers = store.load_runs(rows_too=False, fingerprints=False)
            store.row_rates([r.run_id for r in headers], RunFilter(
                algorithms=names, implementation="liboqs", operation="encaps"))
            found["history"].append(time.perf_counter() - start)
    store.close()
    return {name: statistics.median(times) for name, times in found.items()}


def measure(backend: str, sizes: list[int], seed: dict[str, Any], work: Path,
            args: argparse.Namespace) -> list[Figures]:
    found: list[Figures] = []
    rows_per_run = len(seed["results"])
    with databases(backend, work, args.postgres) as new_database:
        db = new_database()
        stored = 0
        for size in sizes:
            files = write_history(seed, stored, size, sizes[-1], work)
            figures = Figures(backend, size, size * rows_per_run)
            figures.write_rows, figures.write_seconds = inner(
                "write_rate", new_database(), str(files[0]))
            per_import = max(1, RUNS_PER_IMPORT // RUNS_PER_FILE)
            for start in range(0, len(files), per_import):
                chunk = files[start:start + per_import]
                timing = run_command(["import", *map(str, chunk), "--db", db],
                                     args.timeout, work)
                if not timing.ok:
                    raise SystemExit(f"import failed on {backend}")
                figures.import_seconds += timing.seconds
                figures.import_peak_mb = max(figures.import_peak_mb, timing.peak_mb)
            figures.import_rows = (size - stored) * rows_per_run
            for path in files:
                path.unlink()
            stored = size
            print(f"{backend} {size} runs: imported {figures.import_rows:,} rows in "
                  f"{figures.import_seconds:.1f} s", flush=True)
            commands = read_commands(db, work, size, sizes[-1])
            figures.store = inner("store_share", db, commands["compare"][3],
                                  commands["compare"][4], str(args.repeat))
            print(f"  store share: {figures.store}", flush=True)
            skip: set[str] = set()
            for _ in range(args.repeat):
                for name, argv in commands.items():
                    if name in skip or name not in args.commands:
                        continue
                    limit = args.report_timeout if name == "report" else args.timeout
                    timing = run_command(argv, limit, work)
                    figures.reads.setdefault(name, []).append(timing)
                    print(f"  {name}: {timing.seconds:.2f} s, {timing.peak_mb:.0f} MB"
                          f"{' (' + timing.note + ')' if timing.note else ''}", flush=True)
                    if not timing.ok:
                        skip.add(name)  # a timeout once is a timeout: do not wait again
            found.append(figures)
    return found


# --- printing ------------------------------------------------------------------------------


def _cell(timings: list[Timing]) -> str:
    if not timings:
        return "—"
    if not all(t.ok for t in timings):
        stopped = [t for t in timings if t.note == "timeout"]
        return f"> {stopped[0].seconds:.0f} s (stopped)" if stopped else "failed"
    seconds = sorted(t.seconds for t in timings)
    peak = max(t.peak_mb for t in timings)
    spread = f" ({seconds[0]:.2f}–{seconds[-1]:.2f})" if len(seconds) > 1 else ""
    return f"{statistics.median(seconds):.2f} s{spread}, {peak:.0f} MB"


def table(figures: list[Figures]) -> str:
    lines = ["| backend | runs (rows) | import | runs | compare --by label (2 builds) | "
             "history (1 row) | report --by os_build |",
             "|---|---|---|---|---|---|---|"]
    for f in figures:
        rate = f.import_rows / f.import_seconds if f.import_seconds else 0
        imported = (f"{f.import_seconds:.1f} s for {f.import_rows:,} rows "
                    f"({rate:,.0f} rows/s), {f.import_peak_mb:.0f} MB")
        cells = [_cell(f.reads.get(n, []))
                 for n in ("runs", "compare", "history", "report")]
        lines.append(f"| {f.backend} | {f.runs:,} ({f.rows:,}) | {imported} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def store_table(figures: list[Figures]) -> str:
    lines = ["| backend | runs | Store.save_documents (one file, empty database) | "
             "store share of compare | store share of history |", "|---|---|---|---|---|"]
    for f in figures:
        rate = f.write_rows / f.write_seconds if f.write_seconds else 0
        lines.append(f"| {f.backend} | {f.runs:,} | {f.write_rows:,} rows in "
                     f"{f.write_seconds:.2f} s ({rate:,.0f} rows/s) | "
                     f"{f.store.get('compare', 0):.2f} s | {f.store.get('history', 0):.2f} s |")
    return "\n".join(lines)


def growth(figures: list[Figures]) -> str:
    lines = []
    for backend in dict.fromkeys(f.backend for f in figures):
        mine = [f for f in figures if f.backend == backend]
        if len(mine) < 2:
            continue
        small, large = mine[0], mine[-1]
        parts = []
        for name in ("runs", "compare", "history", "report"):
            a, b = small.reads.get(name, []), large.reads.get(name, [])
            if a and b and all(t.ok for t in a + b):
                ratio = (statistics.median(t.seconds for t in b)
                         / statistics.median(t.seconds for t in a))
                parts.append(f"{name} x{ratio:.1f}")
        lines.append(f"{backend}, {small.runs:,} -> {large.runs:,} runs "
                     f"(x{large.runs / small.runs:g}): " + ", ".join(parts))
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1:2] == ["--inner"]:
        measured: Callable[..., Any] = {"write_rate": write_rate,
                                        "store_share": store_share}[sys.argv[2]]
        print(json.dumps(measured(*sys.argv[3:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000",
                        help="history sizes in runs, ascending (each grows the last)")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--seed", type=Path, help="a `pqbench speed --json` document")
    parser.add_argument("--postgres", help="an existing server's base URL "
                        "(default: start a throw-away one, as the tests do)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--report-timeout", type=float, default=600.0,
                        help="seconds before `report` is stopped (the slowest read command)")
    parser.add_argument("--commands", default="runs,compare,history,report")
    args = parser.parse_args()
    args.commands = set(args.commands.split(","))
    sizes = sorted(int(s) for s in args.sizes.split(","))
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="store-scale-")))
        seed = seed_run(args.seed, work)
        print(f"seed run: {len(seed['results'])} rows, "
              f"{sum(len(r['samples']) for r in seed['results'])} samples; "
              f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}", flush=True)
        figures: list[Figures] = []
        for backend in args.backends.split(","):
            backend_dir = work / backend
            backend_dir.mkdir()
            figures += measure(backend, sizes, seed, backend_dir, args)
        print()
        print(table(figures))
        print()
        print(store_table(figures))
        print()
        print(growth(figures))
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""A fleet's store at 10,000 runs: 20 machines x 50 builds x 10 runs of the quick suite,
on SQLite and a real PostgreSQL server, and how fast the questions a fleet asks answer.

The runs are made from one real quick-suite run (`pqbench speed --json`, made here unless
--seed names one), as benchmarks/store_scale.py makes its history: each run that run with
its rounds' times rescaled by a machine's own speed (lognormal, sigma 10 %), the run's
state (3 %) and each round's (2 %), ops kept, and one planted step (ML-KEM rows 10 % slower
from build 35 on); each run's record of the machine over its window (its fingerprint's
`run` part) varied too, as no two real runs record the same. Machines differ as real ones
do in the fingerprint: each its host name, one of four CPU models with its core count, and
the testbed pqbench derives from the CPU (`environment.testbed`: model, flags, arch), so
five machines share each testbed. A run's OS build is its build's (`debian-12/build-NNN`)
and its label its machine's and build's (`fleet-MM/build-NNN`, as a CI job would label it).
The runs go in time order, a build at a time (each machine runs the suite ten times on it),
as `pqbench export` bundles imported 1,000 runs per `pqbench import`.

Every command is a real `pqbench` process, timed from outside, with its peak resident
memory (the child's ru_maxrss, os.wait4) and the load average at its start and end:

- import: rows per second over the ten imports (and the last, into 9,000 runs stored);
- history of one row (`history ML-KEM-768 -i liboqs -o encaps`), goal < 2 s;
- compare of two builds of one machine (`compare --by label fleet-00/build-048
  fleet-00/build-049`, ten runs a side), goal < 5 s;
- show of one run, goal < 1 s;
- a one-machine report (`report RUN... --by os_build`, the machine's 500 runs by id, or
  `--machine` where the command has it), goal < 30 s.

The read commands run --repeat times in rotation, so a slow phase of a shared machine hits
each of them; the table shows the median and the range. Beside each, the floor: the store
reads the command needs done once, in one process (`--inner floor`): the run headers and
that row's rounds across every run; the two builds' runs whole; the one run whole; the
machine's runs whole; and the noise model's input for one machine, its runs' estimates
(`Store.row_estimates`) against every round of its rows (`Store.row_rates`), as the model
read them before.

Not a test. From the repository root:

    .venv/bin/python benchmarks/fleet_scale.py --backends sqlite,postgresql
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import store_scale  # noqa: E402  (the seed run, the processes timed, the backends)

#: (CPU model, cores): four kinds of machine, five of each.
CPUS = (("AMD EPYC 7B13", 8), ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 4),
        ("AMD EPYC 9654 96-Core Processor", 16), ("Intel(R) Core(TM) i7-8559U", 2))
#: The planted step: ML-KEM rows this much slower from this build on.
STEP_BUILD, STEP_PREFIX, STEP_FACTOR = 35, "ML-KEM", 0.90
RUNS_PER_FILE = 200  # a quick-suite run's document is about 220 KB; 64 MiB per file
RUNS_PER_IMPORT = 1000
#: The row `history` asks for.
ROW = ("ML-KEM-768", "liboqs", "encaps")
GOALS = {"history": 2.0, "compare": 5.0, "show": 1.0, "report": 30.0}


@dataclass(frozen=True)
class Fleet:
    machines: int
    builds: int
    runs: int  # per machine and build

    @property
    def total(self) -> int:
        return self.machines * self.builds * self.runs

    def host(self, machine: int) -> str:
        return f"fleet-{machine:02d}"

    def label(self, machine: int, build: int) -> str:
        return f"{self.host(machine)}/build-{build:03d}"

    def order(self) -> Iterator[tuple[int, int, int, int]]:
        """(index, build, machine, repeat) of every run, in time order."""
        index = 0
        for build in range(self.builds):
            for machine in range(self.machines):
                for repeat in range(self.runs):
                    yield index, build, machine, repeat
                    index += 1


@dataclass
class Timing:
    seconds: float
    peak_mb: float
    load: tuple[float, float]
    ok: bool
    cpu: float = 0.0  # the child's user + system time


@dataclass
class Figures:
    backend: str
    runs: int = 0
    rows: int = 0
    imports: list[Timing] = field(default_factory=list)
    import_rows: list[int] = field(default_factory=list)
    reads: dict[str, list[Timing]] = field(default_factory=dict)
    floor: dict[str, float] = field(default_factory=dict)


def timed(argv: list[str], timeout: float, cwd: Path) -> Timing:
    before = os.getloadavg()[0]
    found = store_scale.run_command(argv, timeout, cwd)
    return Timing(found.seconds, found.peak_mb, (before, os.getloadavg()[0]), found.ok,
                  found.cpu)


# --- the fleet's runs ------------------------------------------------------------------------


def _testbed(model: str, flags: Any, arch: Any) -> str:
    """As `measure.environment.testbed` derives it from the CPU."""
    blob = json.dumps([model, flags, arch], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


class Maker:
    """Run documents of the fleet from the seed run, without copying it whole per run."""

    def __init__(self, seed: dict[str, Any], fleet: Fleet) -> None:
        self.seed = {k: v for k, v in seed.items() if k != "ratios"}  # derived, not stored
        self.fleet = fleet
        rng = random.Random(7)
        self.speed = [math.exp(rng.gauss(0.0, 0.10)) for _ in range(fleet.machines)]
        self.environments = [self._environment(m) for m in range(fleet.machines)]

    def _environment(self, machine: int) -> dict[str, Any]:
        env = json.loads(json.dumps(self.seed["environment"]))
        model, count = CPUS[machine % len(CPUS)]
        env["hostname"] = self.fleet.host(machine)
        cpu = env.setdefault("cpu", {})
        cpu["model"], cpu["count"] = model, count
        env["testbed"] = _testbed(model, cpu.get("flags"), env.get("arch"))
        return env

    def run(self, index: int, build: int, machine: int, rng: random.Random) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00",
                              time.gmtime(1_780_000_000 + 60 * index))
        env = dict(self.environments[machine])
        env["os_build"] = f"debian-12/build-{build:03d}"
        if isinstance(env.get("os"), dict):
            env["os"] = {**env["os"], "build": env["os_build"]}
        state = self.speed[machine] * math.exp(rng.gauss(0.0, 0.03))
        # Each run's own record of the machine over its window, as real runs have: no two
        # fingerprints are the same text (schema 5 reads the rest once per distinct value).
        if isinstance(env.get("run"), dict):
            env["run"] = {**env["run"], **{
                name: round(value * math.exp(rng.gauss(0.0, 0.05)), 4)
                for name, value in env["run"].items()
                if isinstance(value, float) and name in ("seconds", "others_cpu", "steal")}}
        results = []
        for row in self.seed["results"]:
            level = state * (STEP_FACTOR if build >= STEP_BUILD
                             and row["algorithm"].startswith(STEP_PREFIX) else 1.0)
            samples = []
            for sample in row["samples"]:
                speed = level * math.exp(rng.gauss(0.0, 0.02))
                made = {**sample, "elapsed_ns": max(1, round(sample["elapsed_ns"] / speed))}
                if sample.get("cycles") is not None:
                    made["cycles"] = max(0, round(sample["cycles"] / speed))
                samples.append(made)
            kept = {k: v for k, v in row.items() if k not in _DERIVED}
            results.append({**kept, "samples": samples})
        return {**self.seed, "run_id": f"{stamp[:10].replace('-', '')}T"
                f"{stamp[11:19].replace(':', '')}Z-{index:06x}",
                "started_at": stamp, "finished_at": stamp,
                "label": self.fleet.label(machine, build), "environment": env,
                "results": results}


#: A result row's figures derived from its samples, worked out again on import.
_DERIVED = frozenset({"ops_per_sec", "us_per_op", "bytes_per_sec", "ci_low", "ci_high", "cv",
                      "cycles_per_op", "cycles_per_byte"})


def write_files(maker: Maker, first: int, last: int, work: Path) -> list[Path]:
    """Export bundles holding runs first..last-1 of the fleet, in time order."""
    rng = random.Random(first)
    wanted = [spec for spec in maker.fleet.order() if first <= spec[0] < last]
    files = []
    for start in range(0, len(wanted), RUNS_PER_FILE):
        docs = [maker.run(index, build, machine, rng)
                for index, build, machine, _ in wanted[start:start + RUNS_PER_FILE]]
        path = work / f"fleet-{wanted[start][0]:06d}.json"
        path.write_text(json.dumps({"format": "pqbench-export", "format_version": 1,
                                    "runs": docs}))
        files.append(path)
    return files


# --- what each command reads, once, in one process (`--inner floor DB`) ---------------------


def floor(db: str, machine_host: str, before: str, after: str) -> dict[str, float]:
    """Seconds to read what each command needs, once: the store's share, nothing drawn or
    judged."""
    from pqbench.cli.common import many_records
    from pqbench.data.store import RunFilter, Store

    store = Store.open(db, create=False)
    found: dict[str, float] = {}

    def clock(name: str, work: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        answer = work()
        found[name] = time.perf_counter() - start
        return answer

    with many_records():
        clock("history", lambda: store.row_rates(
            [r.run_id for r in store.load_runs(rows_too=False, fingerprints=False)],
            RunFilter(algorithms=(ROW[0],), implementation=ROW[1], operation=ROW[2])))
        clock("compare", lambda: store.load_runs(RunFilter(by="label",
                                                           values=(before, after))))
        mine = [r.run_id for r in store.load_runs(RunFilter(by="hostname",
                                                            values=(machine_host,)),
                                                  rows_too=False)]
        clock("show", lambda: store.load_run(mine[-1]))
        clock("report", lambda: store.load_runs(RunFilter(ids=tuple(mine))))
        clock("estimates", lambda: store.row_estimates(mine))
        clock("rounds", lambda: store.row_rates(mine))
    store.close()
    return found


def inner_floor(*argv: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--inner", "floor", *argv],
                          capture_output=True, text=True, check=True, cwd=REPO)
    return dict(json.loads(done.stdout))


# --- measuring ------------------------------------------------------------------------------


def _has_option(command: str, option: str) -> bool:
    done = subprocess.run([*store_scale.PQBENCH, command, "--help"], capture_output=True,
                          text=True, check=False, cwd=REPO, env={**os.environ, "COLUMNS": "200"})
    return option in done.stdout


def read_commands(db: str, fleet: Fleet, out: Path, machine_runs: list[str]
                  ) -> dict[str, list[str]]:
    before, after = fleet.label(0, fleet.builds - 2), fleet.label(0, fleet.builds - 1)
    report = (["report", "--by", "os_build", "--machine", fleet.host(0)]
              if _has_option("report", "--machine") else
              ["report", *machine_runs, "--by", "os_build"])
    return {
        "history": ["history", *ROW[:1], "-i", ROW[1], "-o", ROW[2], "--json", "--db", db],
        "compare": ["compare", "--by", "label", before, after, "--json", "--db", db],
        "show": ["show", machine_runs[-1], "--db", db],
        "report": [*report, "--out", str(out / "report"), "--force", "--db", db],
    }


def machine_runs(db: str, host: str) -> list[str]:
    from pqbench.data.store import RunFilter, Store

    store = Store.open(db, create=False)
    ids = [r.run_id for r in store.load_runs(RunFilter(by="hostname", values=(host,)),
                                             rows_too=False, fingerprints=False)]
    store.close()
    return ids


def measure(backend: str, maker: Maker, work: Path, args: argparse.Namespace) -> Figures:
    fleet = maker.fleet
    figures = Figures(backend, fleet.total, fleet.total * len(maker.seed["results"]))
    with store_scale.databases(backend, work, args.postgres) as new_database:
        db = new_database()
        for start in range(0, fleet.total, RUNS_PER_IMPORT):
            last = min(fleet.total, start + RUNS_PER_IMPORT)
            files = write_files(maker, start, last, work)
            timing = timed(["import", *map(str, files), "--db", db], args.timeout, work)
            for path in files:
                path.unlink()
            if not timing.ok:
                raise SystemExit(f"import failed on {backend}")
            figures.imports.append(timing)
            figures.import_rows.append((last - start) * len(maker.seed["results"]))
            print(f"{backend}: {last:,} runs stored; this import "
                  f"{figures.import_rows[-1] / timing.seconds:,.0f} rows/s "
                  f"({figures.import_rows[-1] / timing.cpu:,.0f} a CPU second), "
                  f"{timing.peak_mb:.0f} MB, load {timing.load[0]:.1f}-{timing.load[1]:.1f}",
                  flush=True)
        mine = machine_runs(db, fleet.host(0))
        commands = read_commands(db, fleet, work, mine)
        figures.floor = inner_floor(db, fleet.host(0), commands["compare"][3],
                                    commands["compare"][4])
        print(f"  floor: {figures.floor}", flush=True)
        for _ in range(args.repeat):
            for name, argv in commands.items():
                if name not in args.commands:
                    continue
                timing = timed(argv, args.timeout, work)
                figures.reads.setdefault(name, []).append(timing)
                print(f"  {name}: {timing.seconds:.2f} s ({timing.cpu:.2f} s CPU), "
                      f"{timing.peak_mb:.0f} MB, load "
                      f"{timing.load[0]:.1f}-{timing.load[1]:.1f}", flush=True)
    return figures


# --- printing -------------------------------------------------------------------------------


def _loads(timings: list[Timing]) -> str:
    values = [v for t in timings for v in t.load]
    return f"{min(values):.1f}–{max(values):.1f}"


def _cell(timings: list[Timing], goal: float | None) -> str:
    if not timings:
        return "—"
    if not all(t.ok for t in timings):
        return "failed or stopped"
    seconds = sorted(t.seconds for t in timings)
    middle = statistics.median(seconds)
    spread = f" ({seconds[0]:.2f}–{seconds[-1]:.2f})" if len(seconds) > 1 else ""
    met = "" if goal is None else (" ✓" if middle < goal else " ✗")
    cpu = statistics.median(t.cpu for t in timings)
    return (f"{middle:.2f} s{spread}{met} ({cpu:.2f} s CPU), "
            f"{max(t.peak_mb for t in timings):.0f} MB, load {_loads(timings)}")


def table(all_figures: list[Figures]) -> str:
    lines = ["| figure (goal) | " + " | ".join(f.backend for f in all_figures) + " |",
             "|---|" + "---|" * len(all_figures)]

    def rate(f: Figures, which: slice) -> str:
        rows, seconds = sum(f.import_rows[which]), sum(t.seconds for t in f.imports[which])
        peak = max(t.peak_mb for t in f.imports[which])
        mark = " ✓" if rows / seconds >= 20_000 else " ✗"
        cpu = sum(t.cpu for t in f.imports[which])
        return (f"{rows / seconds:,.0f} rows/s{mark} ({rows / cpu:,.0f} a CPU second), "
                f"{peak:.0f} MB, load {_loads(f.imports[which])}")

    lines.append("| import, all (>= 20,000 rows/s) | "
                 + " | ".join(rate(f, slice(None)) for f in all_figures) + " |")
    lines.append("| import, the last 1,000 runs | "
                 + " | ".join(rate(f, slice(-1, None)) for f in all_figures) + " |")
    names = {"history": "history of one row", "compare": "compare, two builds of one machine",
             "show": "show one run", "report": "report, one machine"}
    for name, words in names.items():
        lines.append(f"| {words} (< {GOALS[name]:g} s) | "
                     + " | ".join(_cell(f.reads.get(name, []), GOALS[name])
                                  for f in all_figures) + " |")
        lines.append("| of which the store, read once | "
                     + " | ".join(f"{f.floor.get(name, 0):.2f} s" for f in all_figures) + " |")
    lines.append("| one machine's noise model input: its estimates | "
                 + " | ".join(f"{f.floor.get('estimates', 0):.3f} s" for f in all_figures)
                 + " |")
    lines.append("| the same machine's every round (as read before) | "
                 + " | ".join(f"{f.floor.get('rounds', 0):.3f} s" for f in all_figures) + " |")
    return "\n".join(lines)


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "pqbench"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def main() -> None:
    if sys.argv[1:3] == ["--inner", "floor"]:
        print(json.dumps(floor(*sys.argv[3:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machines", type=int, default=20)
    parser.add_argument("--builds", type=int, default=50)
    parser.add_argument("--runs", type=int, default=10, help="per machine and build")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--seed", type=Path, help="a `pqbench speed --json` document")
    parser.add_argument("--postgres", help="an existing server's base URL "
                        "(default: start a throw-away one, as the tests do)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--commands", default="history,compare,show,report")
    args = parser.parse_args()
    args.commands = set(args.commands.split(","))
    fleet = Fleet(args.machines, args.builds, args.runs)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fleet-scale-")))
        maker = Maker(store_scale.seed_run(args.seed, work), fleet)
        print(f"{fleet.machines} machines x {fleet.builds} builds x {fleet.runs} runs = "
              f"{fleet.total:,} runs of {len(maker.seed['results'])} rows; "
              f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}", flush=True)
        found = []
        for backend in args.backends.split(","):
            (work / backend).mkdir()
            found.append(measure(backend, maker, work / backend, args))
    print(f"\n{started} to {time.strftime('%H:%M UTC', time.gmtime())}, "
          f"{platform.node()}, {os.cpu_count()} CPUs, commit {_commit()}; "
          f"{fleet.total:,} runs ({found[0].rows:,} result rows); medians of "
          f"{args.repeat} (range), peak RSS of the process, load average at its start and "
          "end\n")
    print(table(found))


if __name__ == "__main__":
    main()

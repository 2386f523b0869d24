"""One run per build: does pqbench call a real jump and stay quiet on an A/A series?

Two experiments, each resumable (its runs go to a database under ``--work``, default
``benchmarks/.work/one-run-per-build``; running the command again continues where it
stopped), each measured with the quick suite or a few rows, single runs, each run its own
process:

* ``aa``: single runs of the quick suite (``pqbench speed``), each labelled as a build of
  its own (aa-01, aa-02 ...), alternately on the machine as it is and beside ``--busy`` busy
  loops (default 2: every core of a 2-core machine). Every run measures the same build, so
  any ``faster``/``slower`` in ``compare --by label --all`` and any step in ``history --by
  label`` is a false alarm. The same runs give the spread of one run of a row around the
  row's level (the prior `pqbench.analysis.noise` starts from) and the coverage of the
  prediction intervals: each run against the run before it, judged with a noise model
  made from the other runs only.
* ``jumps``: real changes measured one run per build: AES-GCM and AES-XTS with AES-NI
  hidden (``--mask aesni``), SHA-256 with SHA-NI hidden (``--mask shani``, only where the
  CPU has sha_ni), and AES-256-GCM in two releases of cryptography whose bundled OpenSSL
  differ (pip builds, as `pqbench ab` makes them: 42.0.8 -> 43.0.3, OpenSSL 3.2 -> 3.3, and
  44.0.3 -> 45.0.1, OpenSSL 3.4 -> 3.5). Each as 1 against 1 and 5 against 1.

``report`` prints what the stored runs say (``--json`` for the figures). A benchmark
script, not a test: it asserts nothing about timing.

    python benchmarks/one_run_per_build.py aa [--runs 24] [--busy 2]
    python benchmarks/one_run_per_build.py jumps [--repeat 5]
    python benchmarks/one_run_per_build.py report [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORK = Path(__file__).resolve().parent / ".work" / "one-run-per-build"


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """Processes that spin until killed, one per core asked for."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(count)]


def stop(loops: list[subprocess.Popen[bytes]]) -> None:
    for loop in loops:
        loop.kill()
        loop.wait()


def pqbench(*argv: str, db: Path, python: str = sys.executable, check: bool = True
            ) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([python, "-m", "pqbench", *argv, "--db", str(db)],
                          capture_output=True, text=True, check=False)
    if check and done.returncode not in (0, 3, 4):
        sys.stderr.write(done.stderr)
        raise SystemExit(f"pqbench {' '.join(argv)} exited {done.returncode}")
    return done


class Ledger:
    """What an experiment has measured so far: one JSON file beside its database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[dict[str, Any]] = (json.loads(path.read_text())
                                              if path.exists() else [])

    def has(self, name: str) -> bool:
        return any(e["name"] == name for e in self.entries)

    def add(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.entries, indent=1))
        tmp.replace(self.path)


def measure(name: str, argv: list[str], ledger: Ledger, db: Path, *, busy: int = 0,
            label: str | None = None, python: str = sys.executable) -> None:
    """One `pqbench speed` run, labelled `label` (default `name`), unless the ledger has
    it already."""
    if ledger.has(name):
        return
    before = os.getloadavg()
    loops = busy_loops(busy)
    started = time.monotonic()
    try:
        done = pqbench("speed", *argv, "--label", label or name, "--json", db=db,
                       python=python)
    finally:
        stop(loops)
    run_id = json.loads(done.stdout)["run_id"]
    ledger.add({"name": name, "run_id": run_id, "busy": busy, "load_before": before[0],
                "load_after": os.getloadavg()[0],
                "seconds": round(time.monotonic() - started, 1)})
    print(f"{name}: run {run_id}, busy {busy}, load {before[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)


def collect_aa(work: Path, runs: int, busy: int) -> None:
    ledger = Ledger(work / "aa.json")
    for index in range(runs):
        measure(f"aa-{index + 1:02d}", [], ledger, work / "aa.db",
                busy=busy if index % 2 else 0)


#: The real jumps: rows, the change standing in for the new build, how many old runs.
JUMPS: dict[str, dict[str, Any]] = {
    "aesni": {"rows": ["aes-256-gcm", "aes-256-xts", "-i", "libcrypto", "-i", "cryptography",
                       "--bytes", "16384"], "new": ["--mask", "aesni"]},
    "shani": {"rows": ["sha-256", "-i", "libcrypto", "-i", "cryptography", "--bytes", "16384"],
              "new": ["--mask", "shani"], "needs": "sha_ni"},
    "pip": {"old": "cryptography==42.0.8", "new": "cryptography==43.0.3"},
    "pip45": {"old": "cryptography==44.0.3", "new": "cryptography==45.0.1"},
}
#: What a pip build runs: `pqbench speed`'s suite through its Python API (the CLI imports
#: every command, and the tls command needs a newer cryptography than an old wheel has).
PIP_SPEED = """
import sys
from pqbench.catalog import algorithms
from pqbench.measure import environment
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure.speed import suite
from pqbench.data.store import Store
db, label = sys.argv[1], sys.argv[2]
settings = suite.SpeedSettings(seconds=0.5, rounds=10, operations=(), block_sizes=(16384,),
                               label=label, processes=1, cpus=(), time_base="cpu")
chosen = algorithms.resolve(["aes-256-gcm"], *liboqs_mechanisms())
run = suite.run_suite(suite.plan(chosen, select(["cryptography"]), settings), settings,
                      environment.collect(extra={"mask": None}), lambda t: None)
Store.open(db).save_runs([run])
print('{"run_id": "%s"}' % run.run_id)
"""


def cpu_has(flag: str) -> bool:
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


def pip_python(spec: str) -> str:
    from pqbench.sessions.sides.pip import ensure_pip, parse_pip

    return str(ensure_pip(parse_pip(spec)).python)


def measure_pip(name: str, spec: str, ledger: Ledger, db: Path, label: str) -> None:
    if ledger.has(name):
        return
    python = pip_python(spec)
    before = os.getloadavg()[0]
    done = subprocess.run([python, "-c", PIP_SPEED, str(db), label], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{spec}: the speed run failed")
    run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
    ledger.add({"name": name, "run_id": run_id, "busy": 0, "load_before": before,
                "load_after": os.getloadavg()[0], "build": spec})
    print(f"{name}: run {run_id} ({spec})", file=sys.stderr, flush=True)


def collect_jumps(work: Path, repeat: int, only: list[str]) -> None:
    for case, plan in JUMPS.items():
        if only and case not in only:
            continue
        if "needs" in plan and not cpu_has(plan["needs"]):
            print(f"{case}: this CPU has no {plan['needs']}: skipped", file=sys.stderr)
            continue
        ledger = Ledger(work / f"jumps-{case}.json")
        db = work / f"jumps-{case}.db"
        for index in range(repeat):
            name = f"{case}-old-{index + 1}"
            if "old" in plan:
                measure_pip(name, plan["old"], ledger, db, f"{case}-old")
            else:
                measure(name, plan["rows"], ledger, db, label=f"{case}-old")
        if "old" in plan:
            measure_pip(f"{case}-new", plan["new"], ledger, db, f"{case}-new")
        else:
            measure(f"{case}-new", [*plan["rows"], *plan["new"]], ledger, db)


# --- what the stored runs say ----------------------------------------------------------

LEVELS = (0.5, 0.9, 0.95, 0.99)


def _estimates(runs: list[Any]) -> dict[Any, list[float | None]]:
    """Per row key, each run's ln estimate (None where the run did not measure it)."""
    import math
    import statistics

    from pqbench.analysis.compare import run_samples

    found: dict[Any, list[float | None]] = {}
    for index, run in enumerate(runs):
        for key, per_run in run_samples([run]).items():
            found.setdefault(key, [None] * len(runs))[index] = statistics.median(
                math.log(v) for v in per_run[0])
    return found


def coverage(runs: list[Any]) -> dict[str, Any]:
    """Nominal against realised coverage of the prediction interval of one run against the
    next (an A/A series: the true difference is 0), each judged with a noise model learnt
    from the other runs only."""
    from scipy import stats as sp

    from pqbench.app.noise import model_from_runs

    estimates = _estimates(runs)
    covered = {level: 0 for level in LEVELS}
    total = 0
    for k in range(len(runs) - 1):
        others = [r for i, r in enumerate(runs) if i not in (k, k + 1)]
        model = model_from_runs(others, estimates)
        for key, values in estimates.items():
            a, b = values[k], values[k + 1]
            if a is None or b is None:
                continue
            spread = model.spread(key)
            total += 1
            for level in LEVELS:
                half = sp.t.ppf(0.5 + level / 2, spread.freedom) * spread.sd * 2 ** 0.5
                covered[level] += abs(b - a) <= half
    return {"pairs": total, "nominal": list(LEVELS),
            "realised": [covered[level] / total if total else None for level in LEVELS]}


def judge_series(runs: list[Any], model: Any) -> dict[str, Any]:
    """Each run against the next (compare) and every row's history over the runs, each
    run its own build by label."""
    from pqbench.analysis.compare import compare_runs
    from pqbench.app.history import history_of_runs

    verdicts: dict[str, int] = {}
    alarms: list[str] = []
    for before, after in itertools.pairwise(runs):
        result = compare_runs([before], [after], noise=model, before_name=before.label,
                              after_name=after.label)
        for row in result.rows:
            verdicts[row.verdict] = verdicts.get(row.verdict, 0) + 1
            if row.changed:
                alarms.append(f"{before.label} -> {after.label} {row.algorithm} "
                              f"{row.implementation} {row.operation}: {row.ratio:.3f}")
    steps: list[str] = []
    series = 0
    for name in dict.fromkeys(m.algorithm for r in runs for m in r.measurements):
        for one in (h.series for h in history_of_runs(runs, name, by="label", model=model)):
            series += 1
            steps += [f"{one.algorithm} {one.implementation} {one.operation} at "
                      f"{s.build}: {s.ratio:.3f}" for s in one.steps]
    return {"runs": len(runs), "verdicts": verdicts, "false_alarms": alarms,
            "series": series, "steps": steps}


def report_aa(work: Path) -> dict[str, Any]:
    from pqbench.app.noise import NoiseModels
    from pqbench.data.store import Store

    entries = {e["run_id"]: e for e in Ledger(work / "aa.json").entries}
    store = Store.open(str(work / "aa.db"), create=False)
    runs = sorted((r for r in store.load_runs() if r.run_id in entries),
                  key=lambda r: r.started_at)
    model = NoiseModels(store).for_runs(runs)
    quiet = [r for r in runs if not entries[r.run_id]["busy"]]
    busy = [r for r in runs if entries[r.run_id]["busy"]]
    spreads = sorted(model.spread(k).percent for k in model.rows) if model else []
    return {
        "runs": len(runs), "busy_loops": max((e["busy"] for e in entries.values()), default=0),
        "load": [entries[r.run_id]["load_before"] for r in runs],
        "spread_percent": {"median": spreads[len(spreads) // 2] if spreads else None,
                           "max": spreads[-1] if spreads else None, "rows": len(spreads)},
        "alternating": judge_series(runs, model), "quiet": judge_series(quiet, model),
        "busy": judge_series(busy, model), "coverage": coverage(runs),
        "coverage_quiet": coverage(quiet), "coverage_busy": coverage(busy)}


def _judged(result: Any) -> list[dict[str, Any]]:
    return [{"row": f"{r.algorithm} {r.implementation} {r.operation}"
                    + (f" @{r.block_size}B" if r.block_size else ""),
             "ratio": r.ratio, "ci": [r.ci_low, r.ci_high], "verdict": r.verdict,
             "causes": [c.field for c in r.causes], "basis": r.outcome.basis}
            for r in result.rows]


def report_jumps(work: Path) -> dict[str, Any]:
    """Per case: 5 old runs against the new one, the first old run against it (in the
    store of all six, and alone, where only the default prior is known), and the history."""
    from pqbench.analysis.compare import compare_runs
    from pqbench.analysis.noise import NoiseModel
    from pqbench.app.history import history_of_runs
    from pqbench.app.noise import NoiseModels
    from pqbench.data.store import Store

    found: dict[str, Any] = {}
    smallest: float | None = None
    for case in JUMPS:
        db = work / f"jumps-{case}.db"
        if not db.exists():
            continue
        store = Store.open(str(db), create=False)
        runs = sorted(store.load_runs(), key=lambda r: r.started_at)
        old = [r for r in runs if r.label == f"{case}-old"]
        new = [r for r in runs if r.label == f"{case}-new"]
        if not old or not new:
            continue
        model = NoiseModels(store).for_runs(runs)
        five = compare_runs(old, new, noise=model, before_name="old", after_name="new")
        one = compare_runs(old[:1], new, noise=model, before_name="old", after_name="new")
        alone = compare_runs(old[:1], new, noise=NoiseModel(), before_name="old",
                             after_name="new")
        steps = []
        for name in dict.fromkeys(m.algorithm for r in runs for m in r.measurements):
            for series in (h.series for h in history_of_runs([*old, *new], name, by="label",
                                                             model=model)):
                steps += [f"{series.implementation} {series.operation}: {s.verdict} "
                          f"{s.ratio:.3g}" for s in series.steps]
        for row in one.rows:
            if row.changed:
                size = max(row.ratio, 1 / row.ratio)
                smallest = size if smallest is None else min(smallest, size)
        found[case] = {"old_runs": len(old), "load": [e["load_before"] for e in
                                                      Ledger(work / f"jumps-{case}.json").entries],
                       "five_against_one": _judged(five), "one_against_one": _judged(one),
                       "one_against_one_alone": _judged(alone), "history_steps": steps}
    found["smallest_step_one_against_one"] = smallest
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=WORK)
    commands = parser.add_subparsers(dest="command", required=True)
    aa = commands.add_parser("aa", help="single A/A runs of the quick suite")
    aa.add_argument("--runs", type=int, default=24)
    aa.add_argument("--busy", type=int, default=2, help="busy loops beside every other run")
    jumps = commands.add_parser("jumps", help="real changes, five old runs and one new")
    jumps.add_argument("--repeat", type=int, default=5, help="runs of the old build")
    jumps.add_argument("cases", nargs="*", default=[], help=f"of {', '.join(JUMPS)}")
    shown = commands.add_parser("report", help="what the stored runs say")
    shown.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.command == "report":
        found = {"aa": report_aa(args.work)} if (args.work / "aa.db").exists() else {}
        found["jumps"] = report_jumps(args.work)
        print(json.dumps(found, indent=1))
        return 0
    if args.command == "aa":
        collect_aa(args.work, args.runs, args.busy)
    elif args.command == "jumps":
        unknown = sorted(set(args.cases) - set(JUMPS))
        if unknown:
            parser.error(f"unknown case {', '.join(unknown)}: choose from {', '.join(JUMPS)}")
        collect_jumps(args.work, args.repeat, args.cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())

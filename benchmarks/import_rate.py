"""`pqbench import` against a plain importer of the same files, paired.

The target is 20,000 result rows a second into a store that holds 10,000 runs. This VM
changes speed by up to 2x within a minute, so a rate alone says little; each replicate
here runs, back to back and in alternating order, on the same database state:

- import: `pqbench import FILES --db DB`, the real command in its own process (start-up,
  the one-pass validation, the writes, the commit);
- models: the same files through the models (`json` decode, `record.models` validation,
  Runs built, `Store.save_runs`): how pqbench imported before the one-pass path, and
  still does for a file that path does not vouch for;
- reference: the same files decoded with `json` and the same rows written by hand with
  the driver (executemany on SQLite, COPY on PostgreSQL), nothing validated: the floor a
  writer of these tables could reach on this machine at this moment.

Each arm is a fresh Python process timed from outside; after each, the imported runs are
deleted (their rows go by cascade) so every arm meets the same database. The
history is the one benchmarks/store_scale.py builds (a real quick-suite run varied over
100 builds): --stored runs first (imported once, untimed), then --runs runs imported by
every arm. Printed: each arm's median rate and range, and the paired ratios import /
reference and import / models (median and range over the replicates).

Not a test. From the repository root:

    .venv/bin/python benchmarks/import_rate.py --backend sqlite --stored 9000 --runs 1000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import store_scale  # noqa: E402  (the synthetic history, shared)

ARMS = ("import", "models", "reference")
#: The columns of pqbench_measurements the reference writes (the database gives the ids).
MEASUREMENT_COLUMNS = ("run_id, algorithm, implementation, operation, block_size, ops_per_sec, "
                       "us_per_op, cycles_per_op, counter, sizes, attributes, round_ops, "
                       "round_elapsed_ns, round_cycles")


# --- the arms (each in its own process: `import_rate.py --inner ARM DB FILE...`) ----------


def arm_models(db: str, files: list[str]) -> None:
    from pqbench.cli.common import many_records
    from pqbench.data.record import transfer
    from pqbench.data.store import Store

    with many_records():
        runs = [run for path in files for run in transfer.parse(
            transfer.decode(Path(path).read_bytes(), path), path)]
        Store.open(db).save_runs(runs)


def arm_reference(db: str, files: list[str]) -> None:
    """The same tables' rows from json.loads, written with the driver; no checks."""
    docs = [doc for path in files for doc in json.loads(Path(path).read_bytes())["runs"]]
    runs, rows = [], []
    for doc in docs:
        env = dict(doc["environment"])
        state = env.pop("run") if isinstance(env.get("run"), dict) else None
        shared = json.dumps(env)  # the fingerprint in two parts, as schema 5 keeps it
        runs.append((doc["run_id"], doc.get("kind", "speed"), doc["started_at"],
                     doc["finished_at"], doc["status"], doc.get("label"), doc["command"],
                     env.get("os_build"), env.get("hostname"), env.get("testbed"),
                     json.dumps(doc.get("settings", {})), shared,
                     json.dumps(doc.get("problems", [])),
                     json.dumps(doc.get("verifications", [])),
                     hashlib.sha256(shared.encode()).hexdigest(),
                     None if state is None else json.dumps(state)))
        for row in doc["results"]:
            rates = [s["ops"] * 1e9 / s["elapsed_ns"] for s in row["samples"] if s["ops"]]
            rate = statistics.median(rates) if rates else 0.0
            rows.append([doc["run_id"], row["algorithm"], row["implementation"],
                         row["operation"], row.get("block_size"), rate,
                         1e6 / rate if rate else 0.0, None, row.get("cycle_counter"),
                         json.dumps(row.get("sizes", {})), "{}",
                         *(_array(db, [s.get(k) for s in row["samples"]])
                           for k in ("ops", "elapsed_ns", "cycles"))])
    if "://" in db:
        _reference_postgresql(db, runs, rows)
    else:
        _reference_sqlite(db, runs, rows)


def _array(db: str, values: list[Any]) -> str:
    """A round array's text: PostgreSQL's literal, or JSON on SQLite."""
    if "://" in db:
        return "{" + ",".join("NULL" if v is None else str(v) for v in values) + "}"
    return json.dumps(values)


def _reference_sqlite(db: str, runs: list[Any], rows: list[Any]) -> None:
    import sqlite3

    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA cache_size=-65536")
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(f"INSERT INTO pqbench_runs VALUES ({','.join('?' * 16)})", runs)
    conn.executemany(f"INSERT INTO pqbench_measurements ({MEASUREMENT_COLUMNS}) "
                     f"VALUES ({','.join('?' * 14)})", rows)
    conn.execute("COMMIT")


def _reference_postgresql(db: str, runs: list[Any], rows: list[Any]) -> None:
    import psycopg

    with psycopg.connect(db) as conn, conn.cursor() as cur:
        with cur.copy("COPY pqbench_runs FROM STDIN") as copy:
            for run in runs:
                copy.write_row(run)
        with cur.copy(f"COPY pqbench_measurements ({MEASUREMENT_COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


# --- the driver ---------------------------------------------------------------------------


def timed(arm: str, db: str, files: list[Path]) -> float:
    if arm == "import":
        argv = [sys.executable, "-m", "pqbench", "import", *map(str, files), "--db", db]
    else:
        argv = [sys.executable, __file__, "--inner", arm, db, *map(str, files)]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{arm} failed: {done.stderr[-2000:]}")
    return elapsed


def forget(db: str, run_ids: list[str]) -> None:
    """Delete the runs an arm imported (their rows by cascade), outside the clock."""
    from sqlalchemy import text

    from pqbench.data.store import Store

    store = Store.open(db, create=False)
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM pqbench_runs WHERE run_id = :id"),
                     [{"id": run_id} for run_id in run_ids])
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
    store.close()


def history_files(seed: dict[str, Any], first: int, last: int, total: int, work: Path
                  ) -> list[Path]:
    return store_scale.write_history(seed, first, last, total, work)


def measure(args: argparse.Namespace, work: Path, db: str) -> dict[str, list[float]]:
    seed = store_scale.seed_run(args.seed, work)
    total = args.stored + args.runs
    rows = args.runs * len(seed["results"])
    from pqbench.data.store import Store

    Store.open(db).close()  # the schema, for the reference arm when nothing is stored
    for start in range(0, args.stored, 1000):  # the history already stored, untimed
        chunk = history_files(seed, start, min(args.stored, start + 1000), total, work)
        timed("import", db, chunk)
        for path in chunk:
            path.unlink()
    files = history_files(seed, args.stored, total, total, work)
    run_ids = [doc["run_id"] for path in files for doc in json.loads(path.read_text())["runs"]]
    print(f"{args.backend}: {args.stored:,} runs stored; each arm imports {args.runs:,} runs "
          f"({rows:,} rows); load {os.getloadavg()[0]:.1f}", flush=True)
    rates: dict[str, list[float]] = {arm: [] for arm in args.arms}
    for replicate in range(args.repeat):
        order = args.arms if replicate % 2 == 0 else args.arms[::-1]
        for arm in order:
            seconds = timed(arm, db, files)
            rates[arm].append(rows / seconds)
            forget(db, run_ids)
        print(f"  {replicate + 1}: " + ", ".join(
            f"{arm} {rates[arm][-1]:,.0f} rows/s" for arm in args.arms)
            + f" (load {os.getloadavg()[0]:.1f})", flush=True)
    return rates


def summary(rates: dict[str, list[float]]) -> str:
    lines = []
    for arm, values in rates.items():
        lines.append(f"{arm}: median {statistics.median(values):,.0f} rows/s "
                     f"({min(values):,.0f}-{max(values):,.0f})")
    for other in ("reference", "models"):
        if "import" in rates and other in rates:
            ratios = [a / b for a, b in zip(rates["import"], rates[other], strict=True)]
            lines.append(f"import / {other}: median {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f}), paired")
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1:2] == ["--inner"]:
        arm, db, *files = sys.argv[2:]
        {"models": arm_models, "reference": arm_reference}[arm](db, files)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--stored", type=int, default=9000,
                        help="runs stored before the timed imports")
    parser.add_argument("--runs", type=int, default=1000, help="runs each arm imports")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--seed", type=Path, help="a `pqbench speed --json` document")
    parser.add_argument("--postgres", help="an existing server's base URL (default: start "
                        "a throw-away one, as the tests do)")
    args = parser.parse_args()
    args.arms = tuple(args.arms.split(","))
    with tempfile.TemporaryDirectory(prefix="import-rate-") as tmp:
        work = Path(tmp)
        with store_scale.databases(args.backend, work, args.postgres) as new_database:
            rates = measure(args, work, new_database())
    print(summary(rates))


if __name__ == "__main__":
    main()

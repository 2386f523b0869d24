"""The store against both backends: SQLite files and a real PostgreSQL server.

Same code path and schema for both; many processes writing at once lose nothing and
leave no half-written run; a newer schema is refused with nothing written.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, update

from pqbench.data.record import codec as document
from pqbench.data.record import transfer
from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import Store, schema
from tests.helpers.runs import environment, make_run, make_runs

WRITERS = 8
RUNS_PER_WRITER = 4



def _writer(location: str, writer: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait(timeout=60)  # every writer opens the brand-new database at the same moment
    store = Store.open(location)
    for i in range(RUNS_PER_WRITER):
        assert store.save_run(make_run(f"w{writer}-r{i}", seed=writer * 100 + i))
    store.close()


def test_round_trip_is_lossless(location: str) -> None:
    run = make_run("roundtrip", seed=1)
    store = Store.open(location)
    assert store.save_run(run)
    assert document.run_document(store.load_run("roundtrip")) == document.run_document(run)
    assert not store.save_run(run)  # idempotent by run id
    assert [r.run_id for r in store.list_runs()] == ["roundtrip"]


@pytest.mark.process
def test_concurrent_writers_lose_nothing(location: str) -> None:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(WRITERS)
    workers = [context.Process(target=_writer, args=(location, w, barrier))
               for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=180)
    assert [w.exitcode for w in workers] == [0] * WRITERS

    store = Store.open(location, create=False)
    stored = {info.run_id: info for info in store.list_runs()}
    expected = {f"w{w}-r{i}" for w in range(WRITERS) for i in range(RUNS_PER_WRITER)}
    assert set(stored) == expected
    for run_id in expected:
        writer, index = (int(part[1:]) for part in run_id.split("-"))
        want = document.run_document(make_run(run_id, seed=writer * 100 + index))
        assert document.run_document(store.load_run(run_id)) == want


def test_failed_write_leaves_nothing(location: str) -> None:
    store = Store.open(location)
    good = make_run("half", seed=3)
    broken = Measurement(algorithm=None, implementation="x", operation="y",  # type: ignore[arg-type]
                         rounds=(LoopResult(1, 1000, None),))
    bad = Run(**{**good.__dict__, "measurements": (*good.measurements, broken)})
    try:  # the NOT NULL violation surfaces as an error or as "not stored"
        stored = store.save_run(bad)
    except Exception:
        stored = False
    assert stored is False
    assert not store.has_run("half")
    with store.engine.connect() as conn:
        orphans = conn.execute(select(func.count()).select_from(schema.measurements)).scalar()
    assert orphans == 0
    assert store.save_run(good)  # and the same run goes in whole afterwards


def test_newer_schema_is_refused_and_untouched(location: str, tmp_path: Path) -> None:
    Store.open(location).close()
    url = location if "://" in location else f"sqlite:///{location}"
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as conn:
        conn.execute(update(schema.meta).where(schema.meta.c.key == "schema_version")
                     .values(value="99"))
    engine.dispose()
    export = tmp_path / "runs.json"
    export.write_text(transfer.export([make_run("newer", seed=4)], "json"))
    from pqbench.platform.errors import StoreError

    with pytest.raises(StoreError, match="newer pqbench"):
        Store.open(location)
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(schema.runs)).scalar() == 0
    engine.dispose()


def test_cli_import_and_compare_on_each_backend(location: str, tmp_path: Path) -> None:
    from tests.helpers import invoke

    # Five runs a side: the run is the unit, and fewer could not show a change.
    before = make_runs("base", 5, seed=5, label="10.14.4")
    after = make_runs("next", 5, seed=6, label="10.14.5", factor=3.0, start_day=2)
    export = tmp_path / "pair.json"
    export.write_text(transfer.export([*before, *after], "json"))
    for _ in range(2):  # the second import stores nothing new
        done = invoke("import", str(export), "--json", "--db", location)
        assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["already_stored"] == [r.run_id for r in [*before, *after]]
    done = invoke("compare", "--by", "label", "--json", "--db", location)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert rows and all(r["verdict"] == "faster" and r["runs_before"] == 5 for r in rows)


def test_a_memory_run_round_trips_on_each_backend(location: str) -> None:
    """Rows without rounds (pqbench memory) store their figures and no samples."""
    from datetime import UTC, datetime

    from pqbench.data.record import memory as memory_runs

    figure = memory_runs.MemoryFigure(
        "ML-DSA-87", "liboqs", "sign", stack_bytes=112920, heap_bytes=1120, allocations=30,
        method="painted stack (high-water mark, harness subtracted); LD_PRELOAD malloc "
               "interposer (bytes requested)", calls=5,
        ranges={"stack_bytes": (112920, 112920), "heap_bytes": (1120, 1120),
                "allocations": (18, 30)}, sizes={"signature": 4627})
    run = memory_runs.memory_run(datetime(2026, 1, 1, tzinfo=UTC), {"calls": 5},
                             make_run("env", seed=1).environment, [figure], ())
    store = Store.open(location)
    assert store.save_run(run)
    loaded = store.load_run(run.run_id)
    assert loaded.kind == "memory" and loaded.measurements[0].rounds == ()
    assert memory_runs.figures([loaded]) == [figure]
    assert document.run_document(loaded) == document.run_document(run)


def test_runs_of_one_build_share_their_fingerprint_and_keep_their_own_state(
        location: str) -> None:
    """Four runs: three of one build on one machine, each with its own state over its
    window (the fingerprint's `run` part; the third's an odd value, not an object, which
    stays in its fingerprint's shared part), and one of another build. Each loads with
    its fingerprint whole and its own state; what is derived from a fingerprint is worked
    out once for the first two (never seeing a run's state), then for each other."""
    states = [{"others_cpu": 0.01, "steal": 0.0, "loadavg_start": [0.1, 0.2, 0.3]},
              {"others_cpu": 0.5, "steal": 0.0}, "busy"]
    saved = [make_run(f"r{i}", seed=i, env={**environment(), "run": state},
                      started_at=f"2026-01-0{i + 1}T00:00:00+00:00")
             for i, state in enumerate(states)]
    saved.append(make_run("r3", seed=3, started_at="2026-01-04T00:00:00+00:00",
                          env=environment(os_build="18F132")))
    store = Store.open(location)
    store.save_runs(saved)
    loaded = store.load_runs()
    assert [run.run_id for run in loaded] == ["r0", "r1", "r2", "r3"]
    for mine, stored in zip(loaded, saved, strict=True):
        assert mine.environment.to_dict() == stored.environment.to_dict()
        assert document.run_document(mine) == document.run_document(stored)
    assert [run.environment.others_cpu for run in loaded] == [0.01, 0.5, None, None]
    assert loaded[2].environment.machine_state == {} and loaded[2].environment["run"] == "busy"
    assert "run" not in loaded[3].environment

    seen: list[dict[str, object]] = []

    def make(env: Fingerprint) -> str | None:
        seen.append(env.to_dict())
        return env.os_build

    assert [run.environment.derived("test", make) for run in loaded] == [
        "18E226", "18E226", "18E226", "18F132"]
    assert [env["os_build"] for env in seen] == ["18E226", "18E226", "18F132"]
    assert all("run" not in env for env in seen)


def test_the_stored_algorithm_names_are_every_distinct_name_in_the_stores_order(
        location: str) -> None:
    """`Store.algorithms` walks the row-key index one name at a time (a loose index scan):
    it gives what SELECT DISTINCT ... ORDER BY gives, each name once, in the backend's own
    order (names apart only in case, a name prefixing another, a name past every other),
    and nothing from an empty store."""
    store = Store.open(location)
    assert store.algorithms() == []
    names = ["X25519", "x25519", "ML-KEM-768", "ML-KEM-7681", "ML-KEM", "~last", "Ed25519"]
    for index, name in enumerate(names):
        rows = ((name, "liboqs", "keygen", None, 1000.0), (name, "liboqs", "encaps", None, 900.0))
        assert store.save_run(make_run(f"names-{index}", seed=index, rows=rows))
    assert store.save_run(make_run("names-again", seed=9, rows=(("X25519", "libcrypto",
                                                                  "derive", None, 1e4),)))
    engine = create_engine(location.replace("postgresql://", "postgresql+psycopg://")
                           if "://" in location else f"sqlite:///{location}")
    m = schema.measurements
    with engine.connect() as conn:
        distinct = list(conn.execute(select(m.c.algorithm).distinct()
                                     .order_by(m.c.algorithm)).scalars())
    engine.dispose()
    assert sorted(distinct) == sorted(names)
    assert store.algorithms() == distinct
    assert store.algorithms(timed_only=True) == distinct

"""Upgrading a store an older pqbench wrote (`store.migrate`), on SQLite and a real
PostgreSQL server: every run reads back exactly as it was stored, the upgraded store has
the layout a new one gets, several processes opening it at once upgrade it once, and a
user who may not write is told who can upgrade it, the file untouched.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from pqbench.data.record import codec
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import Store, schema
from pqbench.platform.errors import StoreError
from tests.helpers import old_schemas
from tests.helpers.runs import environment, make_run, make_runs


def _runs() -> list[Run]:
    """Runs whose rows differ in what the upgrade moves: nine rounds and two, cycles in
    every round, in some and in none, a row without rounds (a memory run's); problems
    (with an operation and without) and checks in runs of their own number, or none."""
    runs = [*make_runs("b01-", 3, seed=1, label="b01", env=environment(os_build="b01")),
            *make_runs("b02-", 2, seed=2, label="b02", env=environment(os_build="b02"))]
    counted = replace(runs[0].measurements[0], rounds=(
        LoopResult(5, 1000, 12345), LoopResult(6, 1100, None), LoopResult(0, 0, 7)))
    ticks = replace(runs[0].measurements[1], rounds=tuple(
        LoopResult(r.ops, r.elapsed_ns, 3 * r.elapsed_ns) for r in runs[0].measurements[1].rounds))
    memory = Measurement(algorithm="ML-KEM-768", implementation="liboqs", operation="keygen",
                         rounds=(), attributes={"stack_bytes": 4096, "heap_bytes": 0})
    short = make_run("two-rounds", seed=3, rounds=2, label="b02")
    noted = replace(runs[1], problems=(
        Problem("ML-DSA-65", "liboqs", "unavailable", "not built", "sign"),
        Problem("X448", "cryptography", "not offered", 'quote " and \\ kept')),
        verifications=(Verification("ML-KEM-768", "liboqs", ("kat", "decaps rejects")),
                       Verification("SHA-256", "python", ())))
    checked = replace(runs[2], verifications=(Verification("AES-256-XTS", "cryptography",
                                                           ("vectors",)),))
    return [replace(runs[0], measurements=(counted, ticks, *runs[0].measurements[2:], memory)),
            noted, checked, *runs[3:], short]


def _documents(runs: list[Run]) -> dict[str, dict[str, Any]]:
    return {r.run_id: codec.run_document(r) for r in runs}


@pytest.mark.process
def test_a_version_2_store_reads_as_it_was_written_after_the_upgrade(location: str) -> None:
    runs = _runs()
    Store.open(location).save_runs(runs)
    new_layout = old_schemas.layout(location)
    samples = old_schemas.as_version(location, 2, seed=3)
    assert len(samples) == sum(len(m.rounds) for r in runs for m in r.measurements)
    assert {"pqbench_samples", "pqbench_problems", "pqbench_verifications"} <= set(
        old_schemas.layout(location)["tables"])
    # Any open upgrades it, a reader's too, when its user may write.
    store = Store.open(location, create=False)
    assert old_schemas.layout(location) == new_layout  # samples gone, arrays NOT NULL
    assert new_layout["version"] == str(schema.SCHEMA_VERSION)
    assert _documents(store.load_runs()) == _documents(runs)
    # Rounds in round order, cycles where counted: the samples' own order said nothing.
    first = store.load_run(runs[0].run_id)
    assert first.measurements[0].rounds == runs[0].measurements[0].rounds
    assert first.measurements[-1].rounds == ()
    assert store.load_run(runs[1].run_id).problems == runs[1].problems
    # New runs go in after it, with ids after the upgraded rows'.
    later = make_run("later", seed=9, label="b03")
    assert store.save_runs([later]) == ["later"]
    assert codec.run_document(store.load_run("later")) == codec.run_document(later)
    assert len(store.load_runs()) == len(runs) + 1
    # Deleting a run with SQL deletes its result rows, as the foreign key's cascade did.
    assert old_schemas.delete_run(location, runs[0].run_id) == {
        "pqbench_runs": 0, "pqbench_measurements": 0, "pqbench_estimates": 0}
    assert len(store.load_runs()) == len(runs)


def test_deleting_a_run_with_sql_deletes_its_rows(location: str) -> None:
    """What ON DELETE CASCADE did, a trigger does (schema.CASCADE, and
    schema.ESTIMATES_CASCADE): a user's DELETE of a run takes its result rows and
    estimates along, and no other run's."""
    runs = _runs()
    Store.open(location).save_runs(runs)
    layout = old_schemas.layout(location)
    assert layout["triggers"] == ["pqbench_runs_delete_estimates",
                                  "pqbench_runs_delete_result_rows"]
    assert not any(table["keys"] for table in layout["tables"].values())
    assert old_schemas.delete_run(location, runs[1].run_id) == {
        "pqbench_runs": 0, "pqbench_measurements": 0, "pqbench_estimates": 0}
    store = Store.open(location, create=False)
    assert _documents(store.load_runs()) == _documents([runs[0], *runs[2:]])


def _opener(location: str, barrier: Any) -> None:
    barrier.wait(timeout=60)
    Store.open(location).close()


@pytest.mark.process
def test_a_version_1_store_is_upgraded_once_by_concurrent_openers(location: str) -> None:
    runs = _runs()
    Store.open(location).save_runs(runs)
    new_layout = old_schemas.layout(location)
    old_schemas.as_version(location, 1)
    indexes = {i for t in old_schemas.layout(location)["tables"].values() for i in t["indexes"]}
    assert not indexes & {index.name for index in (*schema.RUN_INDEXES, schema.ROW_KEY_INDEX)}
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(4)
    openers = [context.Process(target=_opener, args=(location, barrier)) for _ in range(4)]
    for process in openers:
        process.start()
    for process in openers:
        process.join(timeout=120)
    assert [p.exitcode for p in openers] == [0] * 4
    assert old_schemas.layout(location) == new_layout
    assert _documents(Store.open(location, create=False).load_runs()) == _documents(runs)


def _read_only(path: Path) -> str:
    return f"sqlite:///file:{path}?mode=ro&uri=true"  # as a reader without write access


def test_a_read_only_old_file_is_refused_with_who_can_upgrade_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    Store.open(str(path)).save_runs(make_runs("r", 2, seed=1))
    old_schemas.as_version(str(path), 2)
    before = path.read_bytes()
    for create in (False, True):
        with pytest.raises(StoreError, match=r"older pqbench \(schema 2\).*may write"
                           if not create else "read-only"):
            Store.open(_read_only(path), create=create)
    assert path.read_bytes() == before
    store = Store.open(str(path), create=False)  # a user who may write upgrades it
    assert [r.run_id for r in store.load_runs()] == ["r0", "r1"]


def test_a_read_only_current_file_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "now.db"
    runs = make_runs("r", 2, seed=1)
    Store.open(str(path)).save_runs(runs)
    before = path.read_bytes()
    store = Store.open(_read_only(path), create=False)
    assert _documents(store.load_runs()) == _documents(runs)
    assert path.read_bytes() == before


@pytest.mark.process
def test_a_store_without_an_upgrade_path_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    Store.open(str(path)).close()
    engine = create_engine(old_schemas.url(str(path)))
    with engine.begin() as conn:
        conn.execute(text("UPDATE pqbench_meta SET value = '0' WHERE key = 'schema_version'"))
    engine.dispose()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="no upgrade path"):
        Store.open(str(path))
    assert path.read_bytes() == before


def _stated_runs() -> list[Run]:
    """`_runs`, and three runs of one build each with its own state over its window (the
    fingerprint's `run` part; one of them an odd value, not an object)."""
    states = [{"others_cpu": 0.01, "steal": 0.0}, {"others_cpu": 0.4, "steal": 0.02}, "busy"]
    return [*_runs(), *(make_run(f"s{i}", seed=20 + i, label="b02",
                                 env={**environment(os_build="b02"), "run": state})
                        for i, state in enumerate(states))]


def test_a_version_4_store_reads_as_it_was_written_before_and_after_the_upgrade(
        location: str) -> None:
    """A version 4 store keeps each fingerprint whole. Read as it is (a reader who may not
    upgrade it), each run's fingerprint comes back whole; upgraded, each is split as the
    writer splits it: the shared part with its key (runs of one build share it), the
    state apart, and every run reads back as it was written."""
    from pqbench.data.store import queries

    runs = _stated_runs()
    Store.open(location).save_runs(runs)
    new_layout = old_schemas.layout(location)
    old_schemas.as_version(location, 4)
    columns = [c for c, _ in old_schemas.layout(location)["tables"]["pqbench_runs"]["columns"]]
    assert "machine_state" not in columns and "environment_key" not in columns
    engine = create_engine(old_schemas.url(location))
    with engine.connect() as conn:
        as_it_is = queries.load(conn, queries.RunFilter(), [], rows_too=True,
                                fingerprints=True, version=4)
    engine.dispose()
    assert _documents(as_it_is) == _documents(runs)
    store = Store.open(location, create=False)
    assert old_schemas.layout(location) == new_layout
    assert _documents(store.load_runs()) == _documents(runs)
    engine = create_engine(old_schemas.url(location))
    with engine.connect() as conn:
        split = {row.run_id: row for row in conn.execute(text(
            "SELECT run_id, CAST(environment AS TEXT) AS environment, environment_key, "
            "CAST(machine_state AS TEXT) AS machine_state FROM pqbench_runs"))}
    engine.dispose()
    for run in runs:
        row = split[run.run_id]
        state = run.environment.get("run")
        assert row.environment_key == hashlib.sha256(row.environment.encode()).hexdigest()
        assert ("run" in json.loads(row.environment)) is (state == "busy")
        assert (json.loads(row.machine_state) if row.machine_state else None) == (
            state if isinstance(state, dict) else None)
    assert split["s0"].environment_key == split["s1"].environment_key
    assert split["s0"].environment_key != split["s2"].environment_key
    assert split["s0"].environment_key != split[runs[0].run_id].environment_key

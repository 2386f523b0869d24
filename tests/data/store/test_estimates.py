"""Each run's estimate of each row (`record.estimates`), kept in pqbench_estimates, on
SQLite and a real PostgreSQL server: written with the run by both writers (a measured
run, an import), made and filled by the upgrade from schema 3, worked out from the rounds
where a reader may not upgrade, read for a set of runs in one statement.

Expected estimates are the median of the ln rates as numpy gives it, per measurement,
never the store's own arithmetic.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from pqbench.data.record import transfer
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import Store, schema
from tests.helpers import old_schemas
from tests.helpers.runs import make_run, make_runs


def _median_ln(rates: list[float]) -> float | None:
    """The estimate worked out here: numpy's median of numpy's ln, None without a rate or
    with a rate of 0."""
    if not rates or min(rates) <= 0:
        return None
    return float(np.median(np.log(np.asarray(rates, dtype=np.float64))))


def _odd_runs() -> list[Run]:
    """Runs whose rows test every case of an estimate: odd and even round counts, a round
    without operations (not counted), one without elapsed time (no estimate), a memory
    row (no rounds, no estimate), and a key measured twice in one run (two, in order)."""
    runs = make_runs("r", 3, seed=1, drift=0.05)
    first, second = runs[0].measurements[:2]
    skipped = replace(first, rounds=(LoopResult(0, 5), *first.rounds[:4]))
    unrated = replace(second, rounds=(LoopResult(5, 0), *second.rounds[1:]))
    memory = Measurement(algorithm="ML-KEM-768", implementation="liboqs", operation="keygen",
                         rounds=(), attributes={"stack_bytes": 4096, "heap_bytes": 0})
    twice = replace(runs[0].measurements[2], rounds=runs[0].measurements[2].rounds[:3])
    runs[0] = replace(runs[0], measurements=(
        skipped, unrated, *runs[0].measurements[2:], memory, twice))
    return [*runs, make_run("even", seed=4, rounds=4)]


#: Per row key, (position of the run among those asked, estimate, rounds counted).
Found = dict[tuple[Any, ...], list[tuple[int, float, int]]]


def _expected(runs: list[Run], asked: list[str]) -> Found:
    """Per key, (position of the run among `asked`, estimate, rounds counted) in the order
    of `asked` and of each run's rows."""
    by_id = {r.run_id: r for r in runs}
    found: Found = {}
    for at, run_id in enumerate(asked):
        for m in by_id[run_id].measurements:
            value = _median_ln(m.samples)
            if value is not None:
                found.setdefault(tuple(m.key), []).append((at, value, len(m.samples)))
    return found


def _read(store: Store, asked: list[str]) -> Found:
    estimates = store.row_estimates(asked)
    found = {}
    for key in estimates:
        positions, values = estimates.of(key)
        if positions.size:
            found[tuple(key)] = list(zip(positions.tolist(), values.tolist(),
                                         estimates.rounds(key).tolist(), strict=True))
    return found


def _stored(location: str) -> list[tuple[Any, ...]]:
    from sqlalchemy import create_engine, select

    engine = create_engine(old_schemas.url(location))
    with engine.connect() as conn:
        rows = conn.execute(select(schema.estimates).order_by(
            schema.estimates.c.run_id, schema.estimates.c.position)).all()
    engine.dispose()
    return [tuple(row) for row in rows]


def test_each_writer_stores_each_rows_estimate_with_its_run(location: str,
                                                            tmp_path: Path) -> None:
    runs = _odd_runs()
    store = Store.open(location)
    store.save_runs(runs[:2])
    # The import path writes from validated documents, not from Measurements.
    path = tmp_path / "export.json"
    path.write_text(transfer.export(runs[2:], "json"))
    store.save_documents(transfer.read_documents([path]))
    asked = [r.run_id for r in reversed(runs)]
    assert _read(store, asked) == _expected(runs, asked)
    first = _read(store, ["r0"])
    key = tuple(runs[0].measurements[-1].key)
    # Measured twice in r0: 9 rounds, then the 3 of its second measurement, in that order.
    assert [(p, n) for p, _, n in first[key]] == [(0, 9), (0, 3)]
    assert first[tuple(runs[0].measurements[0].key)][0][2] == 4  # the round without ops
    # A round without elapsed time, a memory row: no estimate, and the key named all the same.
    estimates = store.row_estimates(["r0"])
    for m in (runs[0].measurements[1], runs[0].measurements[-2]):
        assert tuple(m.key) not in first and estimates.keys().count(m.key) == 1
        assert estimates.of(m.key)[0].size == 0 and estimates.of_runs(m.key, ["r0"]) == []
    # A key no run asked for measured; runs not stored.
    assert store.row_estimates(["nothing"]).keys() == []
    assert store.row_estimates([]).keys() == []
    none = store.row_estimates(["r0"]).of(("X", "y", "z", None))
    assert none[0].size == 0 and none[1].size == 0


def test_a_version_3_store_is_upgraded_to_the_estimates_its_writer_gives(
        location: str) -> None:
    runs = _odd_runs()
    Store.open(location).save_runs(runs)
    layout, written = old_schemas.layout(location), _stored(location)
    assert len(written) == sum(len(r.measurements) for r in runs)
    assert sum(row[-2] is None for row in written) == 2  # no timed round, no elapsed time
    old_schemas.as_version(location, 3)
    assert "pqbench_estimates" not in old_schemas.layout(location)["tables"]
    store = Store.open(location, create=False)
    assert old_schemas.layout(location) == layout
    assert _stored(location) == written  # the same numbers, to the bit
    later = make_run("later", seed=9)
    store.save_runs([later])
    asked = [r.run_id for r in [*runs, later]]
    assert _read(store, asked) == _expected([*runs, later], asked)
    # Deleting a run with SQL takes its estimates along, and no other run's.
    kept = [row for row in _stored(location) if row[0] != "r1"]
    assert len(kept) < len(_stored(location))
    assert old_schemas.delete_run(location, "r1") == {
        "pqbench_runs": 0, "pqbench_measurements": 0, "pqbench_estimates": 0}
    assert _stored(location) == kept


def test_a_read_only_version_3_file_has_the_same_estimates_from_its_rounds(
        tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    runs = _odd_runs()
    Store.open(str(path)).save_runs(runs)
    asked = [r.run_id for r in runs]
    written = _read(Store.open(str(path), create=False), asked)
    old_schemas.as_version(str(path), 3)
    before = path.read_bytes()
    reader = Store.open(f"sqlite:///file:{path}?mode=ro&uri=true", create=False)
    assert _read(reader, asked) == written
    assert path.read_bytes() == before

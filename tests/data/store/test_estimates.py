"""Each run's estimate of each row (`record.estimates`), kept in pqbench_estimates, on
SQLite and a real PostgreSQL server: written with the run by both writers (a measured
run, an import), made and filled by the upgrade from schema 3, worked out from the rounds
where a reader may not upgrade, read for a machine's runs in one statement; and the noise
model learnt from them is the model learnt from the rounds, to the bit, reading one row
per run and per (run, row) whatever the history.

Expected estimates are the median of the ln rates as numpy gives it, per measurement,
never the store's own arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pqbench.analysis import noise, pairing
from pqbench.analysis.noise import NoiseModel
from pqbench.app import noise as app_noise
from pqbench.app.noise import NoiseModels
from pqbench.data.record import codec, transfer
from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import RunFilter, Store, schema
from pqbench.data.store.selection import noise_inputs
from tests.helpers import CPU_FLAGS, old_schemas
from tests.helpers.reads import counting_store
from tests.helpers.runs import environment, make_ab_session, make_run, make_runs


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


#: (key, run positions, estimates, rounds) of each key, in the order of `keys()`.
Whole = list[tuple[tuple[Any, ...], list[int], list[float], list[int]]]


def _whole(estimates: Any) -> Whole:
    """Everything a RowEstimates holds, in its order, each array's dtype checked."""
    found = []
    keys = estimates.keys()
    assert list(estimates) == keys
    for key in keys:
        positions, values = estimates.of(key)
        rounds = estimates.rounds(key)
        assert (positions.dtype, values.dtype, rounds.dtype) == (np.int64, np.float64,
                                                                  np.int64)
        found.append((tuple(key), positions.tolist(), values.tolist(), rounds.tolist()))
    return found


def _expected_whole(runs: list[Run], asked: list[str], rows: RunFilter | None) -> Whole:
    """What `row_estimates(asked, rows)` holds, worked out from the runs: every key the
    asked runs measured that `rows` keeps, in the order of its first row (by the run's
    place among `asked`, then the row's in the run), rows without an estimate named but
    not in the arrays."""
    by_id = {r.run_id: r for r in runs}
    found: dict[tuple[Any, ...], tuple[list[int], list[float], list[int]]] = {}
    for at, run_id in enumerate(asked):
        for m in by_id[run_id].measurements:
            if rows is not None and rows.algorithms and not (
                    m.algorithm in rows.algorithms
                    and rows.implementation in (None, m.implementation)
                    and rows.operation in (None, m.operation)):
                continue
            positions, values, rounds = found.setdefault(tuple(m.key), ([], [], []))
            value = _median_ln(m.samples)
            if value is not None:
                positions.append(at)
                values.append(value)
                rounds.append(len(m.samples))
    return [(key, *parts) for key, parts in found.items()]


#: Which rows a history or a comparison asks for, and how many of `_odd_runs`' five keys
#: they keep: none (every row, also as a filter naming no algorithm, as `load_runs` reads
#: it), one algorithm, two with an implementation, one with an operation measured and one
#: not, an algorithm no run measured.
ASKED_ROWS = [(None, 5), (RunFilter(), 5), (RunFilter(algorithms=("ML-KEM-768",)), 3),
              (RunFilter(algorithms=("ML-KEM-768", "SHA-256"), implementation="liboqs"), 3),
              (RunFilter(algorithms=("AES-256-XTS",), operation="encrypt"), 1),
              (RunFilter(algorithms=("AES-256-XTS",), operation="decrypt"), 0),
              (RunFilter(algorithms=("nothing",)), 0)]


@pytest.mark.parametrize(("rows", "count"), ASKED_ROWS, ids=lambda part: repr(
    (part.algorithms, part.implementation, part.operation)
    if isinstance(part, RunFilter) else part))
def test_the_rows_asked_for_are_read_as_every_row_would_be(
        location: str, rows: RunFilter | None, count: int) -> None:
    """With and without `rows`, on both backends: the keys in the order of their first
    row, each key's positions, estimates (to the bit) and rounds, runs asked for in
    another order than stored (the first asked stored last, its rows in reverse order)
    and one not stored; with `rows`, exactly what reading every row keeps of those keys;
    and the same again from those rows' rates (`RowRates.estimates`)."""
    runs = _odd_runs()
    last = make_run("backwards", seed=12)
    runs.append(replace(last, measurements=tuple(reversed(last.measurements))))
    store = Store.open(location)
    store.save_runs(runs)
    asked = [runs[4].run_id, "not-stored", runs[0].run_id, runs[3].run_id, runs[1].run_id,
             runs[2].run_id]
    expected = _expected_whole(runs, [a for a in asked if a != "not-stored"], rows)
    # The run not stored holds a place among those asked, with no row.
    expected = [(key, [p + (p >= 1) for p in positions], values, rounds)
                for key, positions, values, rounds in expected]
    found = _whole(store.row_estimates(asked, rows))
    assert found == expected
    assert len(found) == count
    every = {key: parts for key, *parts in _whole(store.row_estimates(asked))}
    assert found == [(key, *every[key]) for key, *_ in found]
    # Worked out from the same rows' rates in hand (a history's): the same, to the bit.
    assert _whole(store.row_rates(asked, rows).estimates(asked)) == found
    store.close()


def test_a_read_only_version_3_file_keeps_the_rows_asked_for_as_well(tmp_path: Path) -> None:
    """The estimates worked out from the rounds keep the same rows as the stored ones."""
    path = tmp_path / "old.db"
    runs = _odd_runs()
    Store.open(str(path)).save_runs(runs)
    asked = [r.run_id for r in reversed(runs)]
    written = {repr(rows): _whole(Store.open(str(path), create=False).row_estimates(asked, rows))
               for rows, _ in ASKED_ROWS}
    old_schemas.as_version(str(path), 3)
    reader = Store.open(f"sqlite:///file:{path}?mode=ro&uri=true", create=False)
    for rows, _ in ASKED_ROWS:
        assert _whole(reader.row_estimates(asked, rows)) == written[repr(rows)]
        assert written[repr(rows)] == _expected_whole(runs, asked, rows)


# --- the noise model learnt from them -------------------------------------------------------


def _from_rounds(store: Store, testbed: str, leave_out: Any = None) -> NoiseModel:
    """The model as it was learnt before the estimates were stored: every round of every
    row read back (`Store.row_rates`), and each run's estimate worked out from them."""
    headers = store.load_runs(RunFilter(by="testbed", values=(testbed,)), rows_too=False)
    plain = [r.run_id for r in headers if pairing.ab_session(r) is None]
    rates = store.row_rates(plain)

    def estimates(key: Any, ids: Any) -> list[float]:
        return [float(np.median(np.log(np.asarray(one, dtype=np.float64))))
                for one in rates.runs(key, ids) if len(one) and min(one) > 0]

    sides = [r.run_id for r in headers if pairing.ab_session(r) is not None]
    kept, left = app_noise.kept(sorted(headers, key=lambda r: (r.started_at, r.run_id)),
                                leave_out)
    groups = [noise.Replicates(tuple(r.run_id for r in group),
                               sum(1 for r in group if noise.calibration_of(r) is not None))
              for group in app_noise.replicate_groups(kept)]
    return noise.learn(groups, rates.row_keys(), estimates, sessions=pairing.all_sessions(
        store.load_runs(RunFilter(ids=tuple(sides)))), left_out=left, machine=testbed)


def _same_model(found: NoiseModel, expected: NoiseModel) -> None:
    """The same model, to the bit; within 1e-12 on a CPU with AVX-512, whose numpy ln (the
    old way's) may differ from the C library's (`record.estimates`) in the last bit."""
    if "avx512f" in CPU_FLAGS:
        assert found.rows.keys() == expected.rows.keys()
        for key, evidence in expected.rows.items():
            assert replace(found.rows[key], squares=evidence.squares) == evidence
            assert found.rows[key].squares == pytest.approx(evidence.squares, rel=1e-12)
    else:
        assert found.rows == expected.rows  # every sum of squares equal, to the bit
    assert (found.sessions, found.session_count) == (expected.sessions,
                                                     expected.session_count)
    assert found.left_out == expected.left_out
    for key in {*expected.rows, *expected.sessions}:
        if "avx512f" in CPU_FLAGS:
            assert found.spread(key).sd == pytest.approx(expected.spread(key).sd, rel=1e-12)
        else:
            assert found.spread(key) == expected.spread(key)
    assert found.rows and any(e.freedom for e in found.rows.values())
    assert found.sessions or not expected.sessions


def _calibration(run: Run) -> Run:
    return replace(run, settings={**run.settings, "calibration": {"series": "c1", "runs": 3}})


def test_the_model_from_estimates_is_the_model_from_rounds(tmp_path: Path) -> None:
    """Synthetic runs of every kind the model groups: two builds, labels holding several
    runs and one, calibration runs, an ab session, a run of another testbed, rows
    without estimates; and one run left out, as taken under load."""
    runs = [*_odd_runs(),
            *make_runs("pip", 3, seed=5, drift=0.05, factor=2.0, label="pip",
                       env=environment(libraries__cryptography="42.0.8")),
            *map(_calibration, make_runs("cal", 3, seed=6, drift=0.03, label="calibration")),
            *make_runs("aa", 2, seed=7, drift=0.04, label="aa"),
            make_run("lone", seed=8, env=environment(os_build="other")),
            make_run("elsewhere", seed=9, env=environment(testbed="tb-2")),
            *make_ab_session("s", seed=10, drift=0.01, workers=6, process=0.02)]
    _learns_the_same_both_ways(str(tmp_path / "model.db"), runs, "tb-1")


def _learns_the_same_both_ways(location: str, runs: list[Run], testbed: str) -> None:
    store = Store.open(location)
    store.save_runs(runs)
    under_load = next(r.run_id for r in runs if pairing.ab_session(r) is None)

    def leave_out(run: Run) -> str | None:
        return "taken under load" if run.run_id == under_load else None

    found = app_noise.from_inputs(noise_inputs(store, testbed), leave_out)
    _same_model(found, _from_rounds(store, testbed, leave_out))
    assert found.left_out == {"taken under load": 1}
    store.close()


def _varied(run: Run, run_id: str, build: str, label: str | None, speed: float,
            seed: int) -> Run:
    """A real run measured again: its rounds' times divided by `speed` and a little
    per-round noise (1 %), ops kept, on OS build `build`."""
    rng = np.random.default_rng(seed)
    env = {**dict(run.environment), "os_build": build, "label": label}
    return replace(run, run_id=run_id, label=label, environment=Fingerprint(env),
                   measurements=tuple(replace(m, rounds=tuple(
                       replace(r, elapsed_ns=max(1, round(
                           r.elapsed_ns / speed / math.exp(rng.normal(0.0, 0.01)))))
                       for r in m.rounds)) for m in run.measurements))


def test_the_model_from_estimates_is_the_model_from_rounds_on_real_runs(
        location: str, small_run: tuple[Path, dict[str, Any]]) -> None:
    """A real speed run (the headline pairs), measured again on three builds of four runs
    each, at its own machine state each (3 %): stored, the model learnt from the stored
    estimates is the model learnt from every stored round."""
    real = Store.open(str(small_run[0]), create=False).load_runs()[0]
    rng = np.random.default_rng(11)
    runs = [_varied(real, f"b{b}-{i}", f"build-{b}", f"build-{b}",
                    math.exp(rng.normal(0.0, 0.03)) * (1.2 if b == 2 else 1.0), 100 * b + i)
            for b in range(3) for i in range(4)]
    _learns_the_same_both_ways(location, runs, str(real.environment.testbed))


# --- what the model reads ---------------------------------------------------------------------


def _fingerprints(runs: list[Run]) -> int:
    """How many distinct fingerprints (but for each run's state) the runs have."""
    return len({codec.fingerprint_columns(r.environment)["environment_key"] for r in runs})


def test_the_model_reads_a_row_per_run_and_per_estimate_in_the_same_statements(
        location: str) -> None:
    """On stores of N, 2N and 4N runs of one machine (and as many of another), learning
    its noise model sends the same statements, none reading the rounds of a plain run,
    and fetches one row per run header, one per stored estimate of the machine's runs
    and one per distinct fingerprint read (`codec.fingerprint_columns`' key: one a build
    here), plus what its one ab session's sides take whatever the size: linear in rows."""
    session = make_ab_session("s", seed=10, drift=0.01, workers=6, process=0.02)
    Store.open(location).save_runs(session)
    store, reads = counting_store(location)
    counted = []
    stored = 0
    for size in (4, 8, 16):
        mine = make_runs(f"n{size}-", size - stored, seed=size, drift=0.05,
                         label=f"build-{size}", env=environment(os_build=f"build-{size}"))
        others = make_runs(f"o{size}-", size - stored, seed=size + 1,
                           env=environment(hostname="other"))
        Store.open(location).save_runs([*mine, *others])
        stored = size
        headers = store.load_runs(RunFilter(by="hostname", values=("mac",)), rows_too=False)
        reads.clear()
        model = NoiseModels(store).for_runs(headers)
        statements, fetched = list(reads.statements), reads.rows
        assert model is not None and model.sessions
        whole = store.load_runs(RunFilter(by="hostname", values=("mac",)))
        plain = [r for r in whole if pairing.ab_session(r) is None]
        sides = [r for r in whole if pairing.ab_session(r) is not None]
        estimates = sum(len(r.measurements) for r in plain)
        fingerprints = _fingerprints(whole) + _fingerprints(sides)
        counted.append((len(statements), fetched - len(headers) - estimates - fingerprints))
        # One statement reads the estimates; the rounds read are the session's sides'
        # alone (by their ids).
        assert sum("FROM pqbench_estimates" in s for s in statements) == 1
        assert sum("FROM pqbench_measurements" in s for s in statements) == 1
    # The same statements at every size; what is fetched beyond one row per run and per
    # estimate is the session's two sides, the same at every size: their ids checked,
    # their headers, their result rows.
    assert counted[0] == counted[1] == counted[2], counted
    assert counted[0][1] == 2 * (1 + 1 + len(session[0].measurements))

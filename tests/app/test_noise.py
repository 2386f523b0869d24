"""What the noise model learns from: one machine's runs, grouped into replicates of one
build, with session sides and flagged runs left out; read from the store in few queries."""

from __future__ import annotations

import numpy as np
import pytest

from pqbench.app import noise
from pqbench.app.identity import machine_of
from pqbench.data.store import RunFilter, Store
from tests.helpers.reads import counting_store
from tests.helpers.runs import environment, make_ab_session, make_run, make_runs

KEY = ("SHA-256", "python", "hash", 16384)


def _estimate(run: object, key: tuple) -> float:
    samples = next(m.samples for m in run.measurements if m.key == key)  # type: ignore[attr-defined]
    return float(np.median(np.log(samples)))


def test_replicates_are_runs_of_one_build_leaving_out_flagged_runs_and_sessions() -> None:
    host = make_runs("h", 4, seed=3, drift=0.05)
    pip = make_runs("p", 3, seed=4, drift=0.05, factor=2.0,
                    env=environment(libraries__cryptography="42.0.8"))
    lone = make_run("lone", seed=5, env=environment(os_build="other"))
    side_a, side_b = make_ab_session("s", seed=6, drift=0.01, workers=6, process=0.02)
    runs = [*host, *pip, lone, side_a, side_b]
    keys = {m.key for r in runs for m in r.measurements}
    model = noise.model_from_runs(
        runs, keys, leave_out=lambda r: "taken under load" if r.run_id == "h3" else None)
    evidence = model.rows[KEY]
    # h0-h2 (h3 left out) and p0-p2: two builds, 6 runs, 4 df; `lone` has no partner.
    assert (evidence.runs, evidence.groups, evidence.freedom) == (6, 2, 4)
    expected = sum(float(np.sum((np.array(g) - np.mean(g)) ** 2)) for g in (
        [_estimate(r, KEY) for r in host[:3]], [_estimate(r, KEY) for r in pip]))
    assert evidence.squares == pytest.approx(expected)
    assert model.left_out == {"taken under load": 1}
    # Every row of the session: six worker pairs, 5 df of a session each.
    assert set(model.session_count) == {m.key for m in side_a.measurements}
    assert all(e.freedom == 5 for e in model.sessions.values())


def test_runs_under_one_label_are_a_group_and_single_labelled_runs_another() -> None:
    """Two labels of three runs each are two groups (a difference the fingerprint does not
    see is not noise); three runs labelled one each are one group (an A/A series)."""
    a = make_runs("a", 3, seed=1, drift=0.05, label="a")
    b = make_runs("b", 3, seed=2, drift=0.05, label="b", factor=1.5)
    singles = [make_run(f"s{i}", seed=10 + i, label=f"s{i}") for i in range(3)]
    groups = noise.replicate_groups([*a, *b, *singles])
    assert [[r.run_id for r in g] for g in groups] == [
        ["a0", "a1", "a2"], ["b0", "b1", "b2"], ["s0", "s1", "s2"]]


def test_a_foreign_stacks_rows_are_replicated_over_its_own_builds_only() -> None:
    """Runs of one OS build where two of four started the Go worker: for every row they
    are one build (four runs, one group); for Go's rows, two Go versions are two builds."""
    rows = (("X25519", "go", "derive", None, 30_000.0),
            ("X25519", "libcrypto", "derive", None, 40_000.0))
    go1 = [make_run(f"g1{i}", seed=i, rows=rows,
                    env=environment(**{"libraries__go:runtime": "go1.26.8"}))
           for i in range(2)]
    go2 = [make_run(f"g2{i}", seed=10 + i, rows=rows, factor=1.3,
                    env=environment(**{"libraries__go:runtime": "go1.27.0"}))
           for i in range(2)]
    keys = [m.key for m in go1[0].measurements]
    model = noise.model_from_runs([*go1, *go2], keys)
    libcrypto, go = model.rows[keys[1]], model.rows[keys[0]]
    assert (libcrypto.runs, libcrypto.groups) == (4, 1)
    assert (go.runs, go.groups) == (4, 2)


def test_a_model_is_one_machines_and_two_machines_get_none(tmp_path: object) -> None:
    store = Store.open(str(tmp_path) + "/r.db")  # type: ignore[operator]
    mine = make_runs("m", 3, seed=1, drift=0.05)
    other = make_runs("o", 3, seed=2, drift=0.3, env=environment(hostname="other"))
    store.save_runs([*mine, *other])
    models = noise.NoiseModels(store)
    assert models.for_runs([mine[0], other[0]]) is None
    model = models.for_runs(mine[:1])
    assert model is not None and model.machine == machine_of(mine[0]).name
    # Learnt from this machine's three runs only: the other's wider drift is not in it.
    assert model.rows[KEY].runs == 3
    expected = np.var([_estimate(r, KEY) for r in mine], ddof=1)
    assert model.rows[KEY].squares / model.rows[KEY].freedom == pytest.approx(expected)


#: Rows of three kinds: two KEM families (liboqs with two rows, go with one), a cipher, a hash.
KIN_ROWS = (("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
            ("ML-KEM-768", "liboqs", "decaps", None, 50_000.0),
            ("ML-KEM-512", "go", "encaps", None, 80_000.0),
            ("AES-256-XTS", "cryptography", "encrypt", 16384, 550_000.0),
            ("SHA-256", "python", "hash", 16384, 100_000.0))


def test_a_model_asked_about_some_algorithms_gives_their_rows_the_whole_models_spreads(
        tmp_path: object) -> None:
    """Learnt for ML-KEM-512's rows alone (a history's), a machine's model reads the rows of
    its kind only and gives them the spreads the model of every row gives: ML-KEM-512 on
    go has no family of its own, so it borrows from its kind (ML-KEM-768 on liboqs). Given
    the headers a history read, each machine's model is the one read from the store."""
    store = Store.open(str(tmp_path) + "/kin.db")  # type: ignore[operator]
    runs = [run for build in range(2) for host in ("a", "b") for run in make_runs(
        f"{host}{build}-", 2, seed=10 * build + len(host), drift=0.04, rows=KIN_ROWS,
        env=environment(hostname=host, os_build=f"build-{build}"))]
    store.save_runs(runs)
    whole = noise.NoiseModels(store)
    asked = noise.NoiseModels(store, asked=RunFilter(algorithms=("ML-KEM-512",)))
    kem = [m.key for m in runs[0].measurements[:3]]
    for host in ("a", "b"):
        mine = [r for r in runs if r.environment.hostname == host]
        full, kin = whole.for_runs(mine), asked.for_runs(mine)
        assert full is not None and kin is not None
        assert set(kin.rows) == set(kem) and set(full.rows) == {m.key for m in runs[0].measurements}
        for key in kem:
            assert kin.spread(key) == full.spread(key)
            assert kin.spread_for(key, True) == full.spread_for(key, True)
        # Each row has 2 degrees of freedom of its own: every one borrows.
        assert "its kind (kem" in str(kin.spread(kem[2]).borrowed)
        assert "its family (kem, liboqs" in str(kin.spread(kem[0]).borrowed)
    headers = store.load_runs(rows_too=False, fingerprints=True)
    given = noise.NoiseModels(store, headers=headers)
    for host in ("a", "b"):
        mine = [r for r in runs if r.environment.hostname == host]
        assert given.for_runs(mine) == whole.for_runs(mine)
    # No run of that kind stored: every row is read.
    assert noise.kin_rows(store, ("X25519",)) is None


def test_a_model_asked_about_rows_that_stand_alone_learns_those_rows_only(
        tmp_path: object) -> None:
    """Where the rows asked have replicated runs enough of their own (BORROWED_DF degrees of
    freedom), their family and kind never count: the model learns the rows asked alone,
    with the spreads the model of every row gives them. A row short of that makes it
    learn their kinds' rows, as it must to borrow."""
    store = Store.open(str(tmp_path) + "/alone.db")  # type: ignore[operator]
    runs = [run for build in range(4) for run in make_runs(
        f"b{build}-", 4, seed=5 + build, drift=0.04, rows=KIN_ROWS,
        env=environment(os_build=f"build-{build}"))]
    store.save_runs(runs)
    whole = noise.NoiseModels(store).for_runs(runs)
    encaps = RunFilter(algorithms=("ML-KEM-768",), implementation="liboqs", operation="encaps")
    alone = noise.NoiseModels(store, asked=encaps).for_runs(runs)
    assert whole is not None and alone is not None
    key = runs[0].measurements[0].key
    # Four builds of four runs: 12 degrees of freedom, no borrowing.
    assert alone.rows[key].freedom == 12 and alone.stands_alone(key)
    assert set(alone.rows) == {key}
    assert alone.spread(key) == whole.spread(key)
    assert alone.spread(key).borrowed is None
    # A store of two of those builds: 6 degrees of freedom, so the rows of the kind are
    # learnt too, and the row borrows from its family as the whole model has it.
    fewer = Store.open(str(tmp_path) + "/fewer.db")  # type: ignore[operator]
    few = [r for r in runs if r.environment.os_build in ("build-0", "build-1")]
    fewer.save_runs(few)
    short = noise.NoiseModels(fewer, asked=encaps).for_runs(few)
    everything = noise.NoiseModels(fewer).for_runs(few)
    assert short is not None and everything is not None and not short.stands_alone(key)
    assert len(short.rows) == 3  # the KEM rows: ML-KEM-768's two, ML-KEM-512's one
    assert short.spread(key) == everything.spread(key)
    assert "its family (kem, liboqs" in str(short.spread(key).borrowed)


def test_a_model_learnt_from_the_rates_in_hand_is_the_model_read_from_the_store(
        tmp_path: object) -> None:
    """A history hands its model the rates it read of the rows asked, for every run: each
    machine's model of those rows is then the one the store's estimates give, read from no
    estimate at all where the rows stand alone; where they do not, the model learns their
    kinds' rows from the store as before, to the same spreads. Rates that leave out a run
    of the machine are not used (the store is read instead)."""
    store = Store.open(str(tmp_path) + "/hand.db")  # type: ignore[operator]
    runs = [run for build in range(4) for host in ("a", "b") for run in make_runs(
        f"{host}{build}-", 4 if host == "a" else 2, seed=7 * build + len(host), drift=0.04,
        rows=KIN_ROWS, env=environment(hostname=host, os_build=f"build-{build}"))]
    store.save_runs(runs)
    headers = store.load_runs(rows_too=False, fingerprints=True)
    ids = [r.run_id for r in headers]
    encaps = RunFilter(algorithms=("ML-KEM-768",), implementation="liboqs", operation="encaps")
    read = noise.NoiseModels(store, asked=encaps, headers=headers)
    in_hand = noise.NoiseModels(store, asked=encaps, headers=headers,
                                rates=store.row_rates(ids, encaps))
    short = noise.NoiseModels(store, asked=encaps, headers=headers,
                              rates=store.row_rates(ids[1:], encaps))
    key = runs[0].measurements[0].key
    for host, alone in (("a", True), ("b", False)):
        mine = [r for r in headers if r.environment.hostname == host]
        expected = read.for_runs(mine)
        assert expected is not None and expected.stands_alone(key) is alone
        assert in_hand.for_runs(mine) == expected
        assert short.for_runs(mine) == expected
        assert expected.spread(key) == noise.NoiseModels(store).for_runs(mine).spread(key)
    counted, reads = counting_store(str(tmp_path) + "/hand.db")  # type: ignore[operator]
    for host, estimates_read in (("a", 0), ("b", 1)):
        reads.clear()
        mine = [r for r in headers if r.environment.hostname == host]
        model = noise.NoiseModels(counted, asked=encaps, headers=headers,
                                  rates=store.row_rates(ids, encaps)).for_runs(mine)
        assert model == read.for_runs(mine)
        assert sum("FROM pqbench_estimates" in s for s in reads.statements) == estimates_read

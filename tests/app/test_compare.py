"""Which runs a comparison uses: the groups compared, one build a side, one machine (or each
machine against itself), decided without a process."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pqbench.app.compare import compare_groups, compare_sides, compare_steps
from pqbench.app.identity import machine_of
from pqbench.data.record.results import Run
from pqbench.platform.errors import ComparisonError
from tests.helpers.runs import environment, make_run, make_runs


def test_groups_need_two() -> None:
    with pytest.raises(ComparisonError, match="at least two groups"):
        compare_groups([("x", [make_run("a", seed=1)])])


def test_steps_compare_the_newest_two_groups_or_every_neighbour_loading_only_those() -> None:
    """Groups ordered oldest first by name; without `every` only the two whose newest runs
    are newest are compared, and only they are loaded whole."""
    groups = [(name, make_runs(name, 3, seed=seed, start_day=day, factor=factor))
              for name, seed, day, factor in (("a", 1, 1, 1.0), ("b", 2, 3, 1.0),
                                              ("c", 3, 2, 1.5))]
    loaded: list[str] = []

    def whole(runs: Sequence[Run]) -> Sequence[Run]:
        loaded.append(runs[0].run_id)
        return runs

    (step,) = compare_steps(groups, whole)
    assert (step.comparison.before_name, step.comparison.after_name) == ("b", "c")
    assert [r.run_id for r in step.before] == ["b0", "b1", "b2"] and loaded == ["b0", "c0"]
    every = compare_steps(groups, whole, every=True)
    assert [(s.comparison.before_name, s.comparison.after_name) for s in every] == [
        ("a", "b"), ("b", "c")]
    assert [s.after[0].run_id for s in every] == ["b0", "c0"]
    with pytest.raises(ComparisonError, match="at least two groups"):
        compare_steps(groups[:1], whole)


def _on(host: str, run_id: str, *, seed: int, factor: float = 1.0, **env: object) -> Run:
    return make_run(run_id, seed=seed, factor=factor, env=environment(hostname=host, **env))


def test_two_machines_are_never_pooled_unasked_and_are_named() -> None:
    a, b = _on("m1", "a", seed=1), _on("m2", "b", seed=2, cpu__model="AMD EPYC 9B14")
    with pytest.raises(ComparisonError) as refused:
        compare_sides([a], [b])
    message = str(refused.value)
    assert "--cross-machine" in message and "no machine measured both sides" in message
    assert machine_of(a).name in message and machine_of(b).name in message
    pooled = compare_sides([a], [b], cross_machine=True)
    assert "pooled as --cross-machine asks" in pooled.warnings[0]
    assert {r.design for r in pooled.rows} == {"runs"}


def test_a_cpu_model_apart_under_one_host_name_is_another_machine() -> None:
    a = _on("m1", "a", seed=1)
    b = _on("m1", "b", seed=2, cpu__model="AMD EPYC 9B14")
    with pytest.raises(ComparisonError, match="2 machines"):
        compare_sides([a], [b])
    c = _on("m1", "c", seed=3, cpu__count=4)
    with pytest.raises(ComparisonError, match="2 machines"):
        compare_sides([a], [c])


def test_the_one_machine_that_measured_both_sides_is_compared_and_the_others_named() -> None:
    before = [_on("m1", "a", seed=1), _on("m2", "x", seed=9)]
    after = [_on("m1", "b", seed=2, factor=1.5)]
    result = compare_sides(before, after)
    assert result.before_runs == ("a",) and result.after_runs == ("b",)
    assert any("only m1" in w and "left out 'm2 (" in w for w in result.warnings)


def test_machines_that_measured_both_builds_judge_it_each_against_itself() -> None:
    """Ten machines, one run a side each, the candidate 10 % slower on every machine: the
    machines are the unit, so every row is slower though the machines' levels differ by
    far more than 10 %; with no change, no row is."""
    levels = [0.6, 0.8, 1.0, 1.25, 1.5, 0.7, 0.9, 1.1, 1.35, 1.6]
    before = [_on(f"m{i}", f"b{i}", seed=i, factor=level) for i, level in enumerate(levels)]
    slower = [_on(f"m{i}", f"s{i}", seed=100 + i, factor=level * 0.9)
              for i, level in enumerate(levels)]
    same = [_on(f"m{i}", f"n{i}", seed=200 + i, factor=level) for i, level in enumerate(levels)]
    judged = compare_sides(before, slower, before_name="old", after_name="new")
    assert {r.verdict for r in judged.rows} == {"slower"}
    assert {r.design for r in judged.rows} == {"machines"}
    assert {r.machines for r in judged.rows} == {10}
    # The table's units column says what stood behind each verdict.
    from pqbench.views.comparisons import units
    assert {units(r) for r in judged.rows} == {"10 machines"}
    assert judged.design == "machines" and judged.designs == {"machines": 4}
    for row in judged.rows:
        assert row.ci_low <= row.ratio <= row.ci_high < 1.0
        assert row.ratio == pytest.approx(0.9, rel=0.03)
    assert "10 machines measured both sides" in judged.warnings[0]
    assert "'m0 (" in judged.warnings[0] and "'m9 (" in judged.warnings[0]
    assert judged.machines == tuple(machine_of(r).name for r in before)
    assert judged.as_dict()["machines"] == list(judged.machines)
    unchanged = compare_sides(before, same)
    assert not [r for r in unchanged.rows if r.changed]


def test_a_machine_that_measured_one_build_only_is_left_out_and_named() -> None:
    before = [_on(f"m{i}", f"b{i}", seed=i) for i in range(4)]
    after = [_on(f"m{i}", f"a{i}", seed=10 + i) for i in range(3)]
    judged = compare_sides(before, after)
    assert {r.machines for r in judged.rows} == {3}
    assert any("left out, having measured one side only: 'm3 (" in w for w in judged.warnings)
    assert judged.machines_left_out == (machine_of(before[3]).name,)
    assert judged.as_dict()["machines_left_out"] == [machine_of(before[3]).name]


def test_a_fleet_of_many_machines_is_named_whole_in_json_and_briefly_in_warnings() -> None:
    before = [_on(f"m{i:02d}", f"b{i}", seed=i) for i in range(13)]
    after = [_on(f"m{i:02d}", f"a{i}", seed=50 + i) for i in range(12)]
    judged = compare_sides(before, after)
    assert judged.warnings[0].endswith("'m09 (Intel(R) Core(TM) i7-8559U, 8 cores)' and 2 more")
    assert judged.warnings[0].count("'m") == 10
    assert len(judged.machines) == 12 and judged.machines[-1].startswith("m11 (")
    assert judged.machines_left_out == (machine_of(before[12]).name,)


def test_a_group_named_by_its_builds_name_is_that_builds_runs(tmp_path: object) -> None:
    """`compare --by label` of "A (cryptography 42.0.8)" and "B": the runs of that build
    in A alone, as history names them; "A" and "A (x)" are the groups stored under those
    names, whole; a name no group has is refused, naming the groups."""
    from pqbench.app.compare import compare
    from pqbench.data.store import Store

    old = environment(libraries__cryptography="42.0.8")
    runs = [*make_runs("a", 3, seed=1, drift=0.03, label="A"),
            *make_runs("p", 2, seed=2, drift=0.03, label="A", env=old),
            *make_runs("z", 2, seed=3, drift=0.03, label="A (x)", env=old),
            *make_runs("b", 3, seed=4, drift=0.03, label="B", factor=1.2)]
    db = str(tmp_path) + "/groups.db"  # type: ignore[operator]
    Store.open(db).save_runs(runs)
    (step,) = compare(db, ["A (cryptography 42.0.8)", "B"], by="label").steps
    assert [r.run_id for r in step.before] == ["p0", "p1"]
    assert [r.run_id for r in step.after] == ["b0", "b1", "b2"]
    (step,) = compare(db, ["A (x)", "B"], by="label").steps
    assert [r.run_id for r in step.before] == ["z0", "z1"]
    (step,) = compare(db, ["A", "B"], by="label").steps
    assert sorted(r.run_id for r in step.before) == ["a0", "a1", "a2", "p0", "p1"]
    with pytest.raises(ComparisonError, match=r"no runs with label = 'C'.*'A \(x\)'"):
        compare(db, ["C", "B"], by="label")


def test_a_group_named_twice_is_a_usage_error_not_a_gate_that_always_passes(
        tmp_path: object) -> None:
    """`compare --by label base base --fail-on slower` (two CI variables that resolved to
    one label) compared a group with itself and passed whatever was measured; it is refused
    as naming one run twice is, before anything is loaded."""
    from pqbench.app.compare import compare
    from pqbench.data.store import Store
    from pqbench.platform.errors import UsageError

    db = str(tmp_path) + "/twice.db"  # type: ignore[operator]
    Store.open(db).save_runs([*make_runs("a", 3, seed=1, label="base"),
                              *make_runs("b", 2, seed=2, label="cand", factor=0.5)])
    with pytest.raises(UsageError, match=r"^'base' is named twice: give two different "
                                         r"values of label \(before, after\)$"):
        compare(db, ["base", "base"], by="label")
    (step,) = compare(db, ["base", "cand"], by="label").steps  # two names: compared
    assert len(step.before) == 3 and len(step.after) == 2


def test_a_group_no_run_has_is_refused_naming_the_closest_few_of_a_fleet_s(
        tmp_path: object) -> None:
    """A fleet's store has a label per machine and build: a mistyped one is refused with
    the closest labels first and a count of the rest, never every label stored."""
    from pqbench.app.compare import compare
    from pqbench.data.store import Store

    db = str(tmp_path) + "/fleet.db"  # type: ignore[operator]
    Store.open(db).save_runs([make_run(f"r{i:02d}", seed=i, label=f"fleet-{i:02d}/build-7")
                              for i in range(25)])
    with pytest.raises(ComparisonError) as refused:
        compare(db, ["fleet-13/buidl-7", "fleet-01/build-7"], by="label")
    said = str(refused.value)
    assert said.startswith("no runs with label = 'fleet-13/buidl-7'; found: "
                           "'fleet-13/build-7', ")
    assert said.endswith(" and 15 more") and said.count("'fleet-") == 11


def test_history_of_a_machine_no_run_has_names_the_closest_few(tmp_path: object) -> None:
    """`history --machine` of a host the store lacks: refused, naming the closest of the
    machines first, at most ten of them and a count of the rest."""
    from pqbench.app.history import histories
    from pqbench.data.store import Store

    db = str(tmp_path) + "/fleet.db"  # type: ignore[operator]
    store = Store.open(db)
    store.save_runs([_on(f"host-{i:02d}", f"r{i:02d}", seed=i) for i in range(14)])
    algorithm = store.algorithms()[0]
    with pytest.raises(ComparisonError) as refused:
        histories(store, algorithm, machine="host-O7")
    said = str(refused.value)
    assert f"no stored run of {algorithm} on a machine named 'host-O7'; machines: " in said
    assert said.split("machines: ")[1].startswith("'host-07 (")
    assert said.endswith(" and 4 more")
    (found,) = histories(store, algorithm, machine="host-07")
    assert found.machine.host == "host-07"

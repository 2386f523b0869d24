"""`pqbench speed`'s decisions, called directly: the settings its options make, what is
planned and said before measuring, and what a stored run answers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pqbench.app import speed
from pqbench.catalog import algorithms
from pqbench.data.record.results import Measurement
from pqbench.measure.speed import suite
from pqbench.platform.errors import UsageError
from tests.helpers.runs import KEX_ROWS, make_run


def _settings(algorithm: list[str] | None = None, **changes: object) -> suite.SpeedSettings:
    given: dict[str, object] = {"seconds": None, "rounds": None, "operation": None,
                                "block_bytes": None, "label": None, "processes": 1,
                                "cpu": None, "elapsed": False, **changes}
    return speed.settings(algorithm, **given)  # type: ignore[arg-type]


def test_the_quick_suite_is_shorter_by_default_and_a_named_algorithm_is_not() -> None:
    quick, named = _settings(), _settings(["x25519"])
    assert (quick.seconds, quick.rounds) == (speed.QUICK_SECONDS, speed.QUICK_ROUNDS)
    assert (named.seconds, named.rounds) == (1.0, speed.DEFAULT_ROUNDS)
    assert quick.seconds < named.seconds
    given = _settings(None, seconds=0.25, rounds=3)
    assert (given.seconds, given.rounds) == (0.25, 3)


def test_operations_and_sizes_named_twice_are_measured_once_in_order() -> None:
    found = _settings(["aes-128-gcm"], operation=["encrypt", "decrypt", "encrypt"],
                      block_bytes=[16384, 16, 16384])
    assert found.operations == ("encrypt", "decrypt")
    assert found.block_sizes == (16, 16384)
    assert _settings().block_sizes == suite.BLOCK_SIZES


def test_the_time_base_cpus_label_and_mark_are_the_options() -> None:
    found = _settings(["x25519"], elapsed=True, cpu="0", label="before", processes=2,
                      extra={"calibration": {"series": "s", "index": 1, "runs": 3}})
    assert found.time_base == "wall" and _settings().time_base == "cpu"
    assert found.cpus == (0,) and _settings().cpus == ()
    assert (found.label, found.processes) == ("before", 2)
    assert found.as_dict()["calibration"] == {"series": "s", "index": 1, "runs": 3}
    with pytest.raises(UsageError, match="--cpu takes a list"):
        _settings(cpu="0-")


def test_a_plan_is_one_task_per_row_and_counts_its_steps() -> None:
    settings = _settings(["x25519"], rounds=4, operation=["derive"])
    plan = speed.plan(["x25519", "ml-kem-768"], ["cryptography"], "mlkem768", settings)
    assert [(t.algorithm.name, t.operation) for t in plan.tasks] == [("X25519", "derive")]
    assert [i.name for i in plan.implementations] == ["cryptography"]
    assert plan.steps == 1 * (1 + 4)
    assert plan.reference == "ML-KEM-768"  # named by an alias, kept as measured
    assert plan.notes == ["-o: each algorithm is measured for the operations it has; "
                          "no derive in ML-KEM-768"]
    assert plan.warnings == []


@pytest.mark.parametrize(("args", "message"), [
    ((["x25519"], ["python"], None), "nothing to measure: python does not cover X25519"),
    ((["x25519"], None, "ml-kem-768"), r"--relative-to ml-kem-768: not one of the "
                                       r"algorithms measured \(X25519\)"),
    ((["x25519"], ["nonesuch"], None), "nonesuch"),
])
def test_a_plan_that_measures_nothing_asked_for_is_refused(args: tuple, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        speed.plan(*args, _settings(["x25519"]))


def test_an_operation_no_algorithm_has_names_the_operations_they_have() -> None:
    with pytest.raises(UsageError) as raised:
        speed.plan(["x25519"], None, None, _settings(["x25519"], operation=["sign"]))
    said = str(raised.value)
    assert "X25519 has no operation 'sign' (-o): X25519 has keygen, derive;" in said
    assert "'sign' is an operation of ML-DSA-44, ML-DSA-65, ML-DSA-87 ..." in said


def test_an_operation_only_some_algorithms_have_is_noted_once() -> None:
    """`-o encaps -o derive` over KEMs and key agreements: one note naming what lacks
    which operation, not one per algorithm."""
    chosen = algorithms.resolve(["ml-kem-768", "ml-kem-512", "x25519", "ecdhp256"])
    (said,) = speed.check_operations(("encaps", "derive"), chosen)
    assert said.count("-o") == 1, said
    assert "no encaps in X25519, ECDH-P-256" in said
    assert "no derive in ML-KEM-768, ML-KEM-512" in said
    assert speed.check_operations(("encaps",), algorithms.resolve(["ml-kem-768"])) == []


def test_more_workers_than_cpus_is_warned_and_as_many_is_not() -> None:
    (warning,) = speed.oversubscribed(3, 2)
    assert warning.startswith("--multi 3 on 2 CPU(s): the workers take turns")
    assert speed.oversubscribed(2, 2) == []
    assert speed.oversubscribed(1, 2) == []


def test_no_mask_measures_here() -> None:
    assert speed.masked(None) == (None, None)


def _with(run_rows: tuple[Measurement, ...], index: int, **attributes: object
          ) -> tuple[Measurement, ...]:
    changed = replace(run_rows[index], attributes={**run_rows[index].attributes, **attributes})
    return (*run_rows[:index], changed, *run_rows[index + 1:])


def test_rows_worth_a_second_look_are_named() -> None:
    run = make_run("r", seed=1)
    assert speed.second_looks(run) == []
    rows = _with(_with(run.measurements, 0, helper_threads=True), 1, warmup_settled=False)
    helped, unsettled = speed.second_looks(replace(run, measurements=rows))
    assert helped.endswith("than the timed thread: ML-KEM-768 encaps [liboqs]")
    assert unsettled.endswith("(20 tried): ML-KEM-768 decaps [liboqs]")
    settled = _with(run.measurements, 1, warmup_settled=True)
    assert speed.second_looks(replace(run, measurements=settled)) == []


def test_the_answer_carries_every_ratio_and_those_asked_for() -> None:
    run = make_run("r", seed=3, rows=KEX_ROWS)
    run = replace(run, settings={**run.settings, "interleaved": True})
    plain = speed.answer(run, None)
    assert plain.asked == []
    assert plain.document()["run_id"] == "r"
    assert plain.figures.ratios
    assert len(plain.document()["ratios"]) == len(plain.figures.ratios)
    asked = speed.answer(run, "ML-KEM-768")
    assert asked.asked and all(r.denominator.algorithm == "ML-KEM-768" for r in asked.asked)
    assert len(asked.document()["ratios"]) == len(asked.figures.ratios) + len(asked.asked)

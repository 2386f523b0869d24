"""The gate fails closed: it names every row it cannot pass, decided without a process."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pqbench.app import gate
from pqbench.app.compare import compare_sides
from pqbench.data.record.results import Problem, Run
from pqbench.platform.errors import UsageError
from tests.helpers.runs import ROWS, make_run, make_runs

KEM = ROWS[0]


def _without(run: Run, algorithm: str, operation: str, *problems: Problem) -> Run:
    return replace(run, measurements=tuple(
        m for m in run.measurements if (m.algorithm, m.operation) != (algorithm, operation)),
        problems=problems)


def test_undecided_is_inconclusive_and_too_few_runs_and_names_are_joined() -> None:
    parsed = gate.Gate.parse("slower, undecided")
    assert parsed is not None
    assert parsed.verdicts == {"slower", "inconclusive", "too few runs"}
    assert gate.Gate.parse("any").verdicts == {"faster", "slower"}  # type: ignore[union-attr]
    assert gate.Gate.parse(None) is None
    for bad in ("slow", "", "slower,,", "faster;slower"):
        with pytest.raises(UsageError, match="--fail-on takes"):
            gate.Gate.parse(bad)


def test_a_row_gone_in_the_candidate_fails_every_gate_and_is_named() -> None:
    """`--fail-on slower` with one row still compared: the row that vanished is named (with
    the candidate's own reason), not only the rows compared."""
    before = make_runs("b", 5, seed=1)
    after = [_without(r, "ML-KEM-768", "encaps", Problem(
        "ML-KEM-768", "liboqs", "unavailable", "liboqs not found", "encaps"))
        for r in make_runs("a", 5, seed=2)]
    comparison = compare_sides(before, after, before_name="baseline", after_name="candidate")
    failures = gate.judge(gate.Gate(frozenset({"slower"}), "slower"), comparison, after)
    assert [f.what for f in failures] == ["ML-KEM-768 [liboqs] encaps"]
    assert failures[0].why == ("gone: baseline measured it, candidate did not; unavailable: "
                               "liboqs not found")
    # A gate naming no verdict that occurs still fails on it.
    assert gate.judge(gate.Gate(frozenset({"faster"}), "faster"), comparison, after)


def test_the_verdicts_named_fail_it_and_others_do_not() -> None:
    before, after = make_runs("b", 5, seed=1), make_runs("a", 5, seed=2, factor=0.5)
    comparison = compare_sides(before, after)
    assert {r.verdict for r in comparison.rows} == {"slower"}
    slower = gate.judge(gate.Gate.parse("slower"), comparison, after)  # type: ignore[arg-type]
    assert len(slower) == len(comparison.rows)
    assert all(f.why.startswith("slower: ") for f in slower)
    assert gate.judge(gate.Gate.parse("faster"), comparison, after) == []  # type: ignore[arg-type]


def test_a_row_that_failed_its_checks_in_the_candidate_fails_the_gate() -> None:
    """Even where the baseline never measured the row (a foreign row that gives the same
    secret as a different peer): a wrong answer is never a pass."""
    before = make_runs("b", 5, seed=1)
    broken = Problem("X25519", "go", "failed verification",
                     "a different peer gave the same secret", "derive")
    after = [replace(r, problems=(broken,)) for r in make_runs("a", 5, seed=2)]
    comparison = compare_sides(before, after)
    (failure,) = gate.judge(gate.Gate.parse("slower"), comparison, after)  # type: ignore[arg-type]
    assert failure.what == "X25519 [go] derive"
    assert "failed its checks" in failure.why and "different peer" in failure.why


def test_an_implementation_asked_for_and_unavailable_fails_the_gate_one_not_asked_does_not(
) -> None:
    missing = Problem("ML-DSA-65", "go", "unavailable", "go is not installed")
    asked = [replace(r, problems=(missing,), settings={"implementations": ["go", "liboqs"]})
             for r in make_runs("a", 5, seed=2)]
    unasked = [replace(r, problems=(missing,)) for r in make_runs("u", 5, seed=3)]
    (once,) = gate.missing(asked)
    assert once.what == "ML-DSA-65 [go]" and "a0, a1, a2, a3, a4" in once.why
    assert gate.missing(unasked) == []
    errored = [replace(r, problems=(replace(missing, kind="error"),),
                       settings={"implementations": ["go"]}) for r in asked[:1]]
    assert "asked for and error" in gate.missing(errored)[0].why


def test_a_candidate_that_measured_nothing_fails_with_every_baseline_row_gone() -> None:
    before = [make_run("b", seed=1)]
    empty = replace(make_run("a", seed=2), measurements=(), status="failed", problems=(
        Problem("ML-KEM-768", "liboqs", "unavailable", "liboqs not found"),))
    failures = gate.nothing_in_common(before, [empty])
    assert [f.what for f in failures] == [
        "ML-KEM-768 [liboqs] encaps", "ML-KEM-768 [liboqs] decaps",
        "AES-256-XTS [cryptography] encrypt 16384 B", "SHA-256 [python] hash 16384 B",
        "run a"]
    assert failures[0].why == "gone: b measured it, a did not; unavailable: liboqs not found"
    assert failures[-1].why == "measured nothing"

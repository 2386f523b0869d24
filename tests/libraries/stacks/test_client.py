"""The stack worker protocol against a fake worker: a worker that greets in garbage, never
greets, hangs, dies, or sends rounds that cannot be true is a clear error naming what
happened (and a problem of its rows in a suite), never a hang or a traceback."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from pqbench.catalog.algorithms import resolve
from pqbench.data.record.rounds import LoopResult
from pqbench.libraries.stacks import running
from pqbench.libraries.stacks.client import StackWorker
from pqbench.measure.checks.pair import check_pair
from pqbench.measure.speed import suite
from pqbench.platform.errors import WorkerFailed
from tests.helpers.stacks import fake_command, fake_implementation

#: Every test starts fake workers (real processes).
pytestmark = pytest.mark.process


def _alg(name: str):  # type: ignore[no-untyped-def]
    return resolve([name], (), ())[0]


@pytest.fixture(autouse=True)
def _stop_workers() -> Iterator[None]:
    """Each test's workers are stopped when it ends, as pqbench stops them at exit."""
    yield
    running._close_all()


def test_a_good_worker_greets_checks_prepares_and_times() -> None:
    impl = fake_implementation()
    x25519 = _alg("X25519")
    checked = check_pair(x25519, impl)
    assert checked.passed, checked.problem
    assert "interop with cryptography" in {c.name for c in checked.checks}
    op = impl.prepare(x25519, "derive")
    result = op.run(0.02)
    assert isinstance(result, LoopResult) and result.ops >= 1
    assert result.elapsed_ns >= 20_000_000
    assert result.cpu_ns is not None and result.process_cpu_ns is not None
    assert result.cpu_ns <= result.process_cpu_ns
    assert op.attributes["library"] == "cryptography" and op.warmup == "steady"
    assert impl.versions()["go:cryptography"]


@pytest.mark.parametrize(("mode", "said"), [
    ("garbage-hello", "does not speak the stack worker protocol: not a JSON line: "
                      "'Picked up JAVA_TOOL_OPTIONS"),
    ("no-hello", "did not answer start within 0.5 s"),
])
def test_a_worker_that_does_not_greet_is_stopped(mode: str, said: str) -> None:
    worker = StackWorker("go", fake_command("go", mode), start_timeout=0.5)
    with pytest.raises(WorkerFailed) as caught:
        worker.greet("go")
    assert said in str(caught.value)
    assert worker.process.poll() is not None  # stopped, not left behind


def test_a_worker_greeting_as_another_implementation_is_refused() -> None:
    worker = StackWorker("java", fake_command("bouncycastle"))
    with pytest.raises(WorkerFailed, match="says it is 'bouncycastle', pqbench started "
                                           "'java'"):
        worker.greet("java")


@pytest.mark.parametrize(("mode", "said"), [
    ("exit-run", "exited with status 3 during run; it wrote: fatal error: out of memory"),
    ("wrong-counts", "faster than one per nanosecond"),
    ("short-round", "shorter than the 0.01 s asked"),
    ("wrong-row", "round names row 'another'"),
    ("huge-line", "a line longer than 1048576 bytes"),
    ("set:wall_ns=1180591620717411303424", "wall_ns of 1180591620717411303424 ns is more "
                                           "than the "),
    ("set:ops=231,thread_cpu_ns=1", "231 operations in 1 ns of thread_cpu_ns"),
])
def test_a_round_that_cannot_be_true_stops_the_worker(mode: str, said: str) -> None:
    impl = fake_implementation(mode)
    with pytest.raises(WorkerFailed) as caught:
        impl.prepare(_alg("X25519"), "derive").run(0.01)
    assert said in str(caught.value)
    worker = impl.process.worker
    assert worker is not None and worker.process.poll() is not None
    # Every later row of that worker gets the same reason, at once.
    assert said in (impl.unavailable_reason() or "")


def test_a_worker_that_writes_every_reply_twice_is_stopped() -> None:
    """The duplicate is on the pipe when pqbench asks again (then it is a line nobody asked
    for), or comes as the next request's answer (then it answers run with `prepared`):
    either way the worker is stopped."""
    impl = fake_implementation("twice")
    operation = impl.prepare(_alg("X25519"), "derive")
    with pytest.raises(WorkerFailed, match=r"it sent a line nobody asked for before run|"
                                           r"it answered run with 'prepared'"):
        operation.run(0.01)
    worker = impl.process.worker
    assert worker is not None and worker.process.poll() is not None


def test_a_hanging_round_times_out() -> None:
    impl = fake_implementation("hang-run")
    impl.process.ensure()
    assert impl.process.worker is not None
    impl.process.worker.request_timeout = 0.5
    with pytest.raises(WorkerFailed, match=r"did not answer run within 0\.53 s"):
        impl.prepare(_alg("X25519"), "derive").run(0.01)


def test_a_wrong_answer_fails_verification_and_is_never_timed() -> None:
    impl = fake_implementation("wrong-answer")
    record = suite.SuiteRecorder()
    settings = suite.SpeedSettings(seconds=0.05, rounds=2)
    suite.execute(suite.plan([_alg("ML-KEM-768")], [impl], settings), settings, record)
    assert record.measurements == []
    assert {p.kind for p in record.problems} == {"failed verification"}
    assert "decapsulation did not return the encapsulated secret" in record.problems[0].reason


def test_a_worker_that_dies_mid_run_is_a_problem_of_its_rows_the_others_go_on() -> None:
    """Its rows keep the rounds they finished and say why they have no more; a row of
    another implementation in the same cycles gets every round."""
    from pqbench.libraries.implementations import select

    dying = fake_implementation("exit-later")
    pyca = select(["cryptography"])[0]
    settings = suite.SpeedSettings(seconds=0.06, rounds=6, warmup=0.005)
    record = suite.SuiteRecorder()
    suite.execute(suite.plan([_alg("X25519")], [dying, pyca], settings), settings, record,
                  rng=random.Random(1))
    rows = {(m.implementation, m.operation): m for m in record.measurements}
    assert all(len(rows[("cryptography", op)].rounds) == 6 for op in ("keygen", "derive"))
    errors = [p for p in record.problems if p.kind == "error"]
    assert {p.operation for p in errors} == {"keygen", "derive"}
    assert all("exited with status 3" in p.reason for p in errors)
    go_rounds = [len(m.rounds) for m in record.measurements if m.implementation == "go"]
    assert all(r < 6 for r in go_rounds)


def test_a_worker_that_dies_in_a_rows_warm_up_is_an_error_of_every_row_after_it() -> None:
    """The worker dies on its first run, the first row's warm-up: that row and the next one
    (its worker gone before it was prepared) are errors that say why, never "not offered";
    the other implementation's rows get every round. (Under load the first test's worker
    too may die in a warm-up: its warm-up takes rounds until two agree.)"""
    from pqbench.libraries.implementations import select

    dying = fake_implementation("exit-run")
    settings = suite.SpeedSettings(seconds=0.06, rounds=3, warmup=0.005)
    record = suite.SuiteRecorder()
    suite.execute(suite.plan([_alg("X25519")], [dying, select(["cryptography"])[0]],
                             settings), settings, record, rng=random.Random(1))
    mine = {p.operation: p for p in record.problems if p.implementation == "go"}
    assert set(mine) == {"keygen", "derive"}
    assert {p.kind for p in mine.values()} == {"error"}
    assert all("exited with status 3" in p.reason for p in mine.values())
    assert {m.operation: len(m.rounds) for m in record.measurements
            if m.implementation == "cryptography"} == {"keygen": 3, "derive": 3}
    assert not [m for m in record.measurements if m.implementation == "go"]


def test_a_stack_row_keeps_the_process_clock_and_its_warm_up() -> None:
    impl = fake_implementation()
    settings = suite.SpeedSettings(seconds=0.04, rounds=2)
    record = suite.SuiteRecorder()
    suite.execute(suite.plan([_alg("Ed25519")], [impl], settings), settings, record)
    sign = next(m for m in record.measurements if m.operation == "sign")
    attrs = sign.attributes
    assert len(attrs["process_cpu_ns"]) == 2 and isinstance(attrs["helper_threads"], bool)
    assert 2 <= attrs["warmup_rounds"] <= suite.WARMUP_MAX_ROUNDS
    assert attrs["signing"] == "deterministic" and attrs["messages"] == 64

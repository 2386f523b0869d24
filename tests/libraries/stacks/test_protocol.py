"""The stack worker protocol's decisions, called directly or through pqbench's client with
the fake worker answering in this process (no process started: the fast lane): which
rounds could be true, on every clock; a reply sent twice; a hello's fields; what a row
carries from its stack; and the checks before timing on a worker that answers wrong."""

from __future__ import annotations

from typing import Any

import pytest

from pqbench.catalog.algorithms import resolve
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations import stacks_interop
from pqbench.libraries.stacks import protocol
from pqbench.measure.checks.pair import check_pair
from pqbench.measure.speed import suite
from pqbench.platform.errors import VerificationError, WorkerFailed
from tests.helpers.stacks import in_process_implementation

#: A round of 0.1 s that could be true: 1,000 operations, the thread on the CPU for most
#: of it and the process a little more.
GOOD = {"type": "round", "row": "r1", "ops": 1000, "wall_ns": 10**8,
        "thread_cpu_ns": 9 * 10**7, "process_cpu_ns": 95 * 10**6}


def _alg(name: str) -> Algorithm:
    return resolve([name], (), ())[0]


def _round(**changed: Any) -> dict[str, Any]:
    return {**GOOD, **changed}


# --- rounds ------------------------------------------------------------------------------

def test_a_round_that_could_be_true_is_kept_as_sent() -> None:
    found = protocol.parse_round(GOOD, "r1", 0.1, waited_ns=11 * 10**7, cpus=2)
    assert found == protocol.Round(1000, 10**8, 9 * 10**7, 95 * 10**6)
    # The edges are rounds too: one nanosecond per operation on every clock, the thread's
    # CPU time equal to the process's, and exactly the seconds asked.
    edge = _round(ops=10**8, thread_cpu_ns=10**8, process_cpu_ns=10**8)
    assert protocol.parse_round(edge, "r1", 0.1).ops == 10**8


def test_a_round_without_operations_is_refused() -> None:
    with pytest.raises(protocol.ProtocolError, match="ops must be an integer >= 1"):
        protocol.parse_round({"row": "r1", "ops": 0, "wall_ns": 10**8, "thread_cpu_ns": 0,
                              "process_cpu_ns": 0}, "r1", 0.1)


def test_the_thread_cpu_limit_is_the_process_cpu_not_the_wall_time() -> None:
    with pytest.raises(protocol.ProtocolError, match="exceeds the process's"):
        protocol.parse_round({"row": "r1", "ops": 1000, "wall_ns": 10**9,
                              "thread_cpu_ns": 11 * 10**7, "process_cpu_ns": 10**8},
                             "r1", 0.1)
    with pytest.raises(protocol.ProtocolError, match="exceeds the wall time"):
        protocol.parse_round(_round(thread_cpu_ns=2 * 10**8, process_cpu_ns=3 * 10**8),
                             "r1", 0.1)


@pytest.mark.parametrize("clock", protocol.CLOCKS)
def test_no_clock_may_read_beyond_what_any_clock_holds(clock: str) -> None:
    """2^70 ns cannot be stored, exported or imported: refused on any clock, as the
    worker sends it, whatever the other clocks say."""
    huge = {"wall_ns": 2**70, "thread_cpu_ns": 2**70, "process_cpu_ns": 2**70}
    changed = {name: huge[name] for name in protocol.CLOCKS[protocol.CLOCKS.index(clock):]}
    with pytest.raises(protocol.ProtocolError,
                       match=f"{clock} of {2**70} ns is more than any clock's range"):
        protocol.parse_round(_round(**changed), "r1", 0.1)
    at_most = {name: protocol.MAX_NS for name in protocol.CLOCKS}
    assert protocol.parse_round(_round(**at_most), "r1", 0.1).wall_ns == protocol.MAX_NS


@pytest.mark.parametrize("clock", protocol.CLOCKS)
def test_no_clock_may_read_more_than_pqbench_waited(clock: str) -> None:
    """The worker timed its round while pqbench waited for the reply: no clock of it can
    be longer than that (a process's CPU time than that on each CPU)."""
    waited, cpus = 12 * 10**7, 2
    # The slack: 2 ms and 2 % of the wait, for clocks read a few instructions apart.
    over = waited + 2_000_000 + waited // 50 + 1
    changed = {"wall_ns": {"wall_ns": over},
               "thread_cpu_ns": {"thread_cpu_ns": over, "process_cpu_ns": over},
               "process_cpu_ns": {"process_cpu_ns": over + (cpus - 1) * waited}}[clock]
    with pytest.raises(protocol.ProtocolError, match=f"{clock} of .* is more than the 0.12 s "
                                                     "pqbench waited for it"):
        protocol.parse_round(_round(**changed), "r1", 0.1, waited_ns=waited, cpus=cpus)
    within = {"wall_ns": waited, **{name: ns - 1 for name, ns in changed.items()}}
    assert protocol.parse_round(_round(**within), "r1", 0.1, waited_ns=waited, cpus=cpus)


@pytest.mark.parametrize(("clock", "ns"), [
    ("wall_ns", 999), ("thread_cpu_ns", 0), ("thread_cpu_ns", 1), ("process_cpu_ns", 0),
    ("process_cpu_ns", 1)])
def test_no_clock_may_count_less_than_a_nanosecond_per_operation(clock: str, ns: int) -> None:
    """One rule for every clock, as for wall time already: 1,000 operations take at least
    1,000 ns of each; 0 or 1 ns of CPU time would be stored as a rate of hundreds of
    billions per second."""
    changed = {name: ns for name in protocol.CLOCKS} if clock == "wall_ns" else {clock: ns}
    pattern = f"1000 operations in {ns} ns of {clock}: faster than one per nanosecond"
    with pytest.raises(protocol.ProtocolError, match=pattern):
        protocol.parse_round(_round(**changed), "r1", 0.0)
    with pytest.raises(protocol.ProtocolError, match="faster than one per nanosecond"):
        protocol.parse_round(_round(ops=10**30), "r1", 0.1)


def test_the_same_round_twice_is_refused_as_a_repeated_reply() -> None:
    first = protocol.parse_round(GOOD, "r1", 0.1)
    with pytest.raises(protocol.ProtocolError, match="a reply repeated"):
        protocol.parse_round(GOOD, "r1", 0.1, previous=first)
    # One clock a nanosecond apart is another round.
    assert protocol.parse_round(_round(process_cpu_ns=95 * 10**6 + 1), "r1", 0.1,
                                previous=first)


def test_a_round_of_another_row_or_shorter_than_asked_is_refused() -> None:
    with pytest.raises(protocol.ProtocolError, match="round names row 'r2', not 'r1'"):
        protocol.parse_round(_round(row="r2"), "r1", 0.1)
    with pytest.raises(protocol.ProtocolError, match=r"shorter than the 0\.2 s asked"):
        protocol.parse_round(GOOD, "r1", 0.2)


# --- hello ---------------------------------------------------------------------------------

def test_hello_fields_are_checked_and_made_printable() -> None:
    hello = {"type": "hello", "protocol": 1, "implementation": "go", "runtime": "go\x1b[31m1",
             "libraries": {"x": "1"}, "offers": {"X25519": ["keygen"]}}
    assert protocol.parse_hello(hello, "go").runtime == "go[31m1"
    with pytest.raises(protocol.ProtocolError, match="unknown operations"):
        protocol.parse_hello({**hello, "offers": {"X25519": ["mine"]}}, "go")
    with pytest.raises(protocol.ProtocolError, match="speaks protocol '2', pqbench 1"):
        protocol.parse_hello({**hello, "protocol": 2}, "go")
    with pytest.raises(protocol.ProtocolError, match="longer than"):
        protocol.parse_hello({**hello, "runtime": "x" * 1000}, "go")
    with pytest.raises(protocol.ProtocolError, match="says it is 'go', pqbench started 'java'"):
        protocol.parse_hello(hello, "java")


# --- through the client, answered in this process -------------------------------------------

def test_a_good_worker_is_checked_prepared_and_timed() -> None:
    impl = in_process_implementation()
    x25519 = _alg("X25519")
    checked = check_pair(x25519, impl)
    assert checked.passed, checked.problem
    assert "interop with cryptography" in {c.name for c in checked.checks}
    operation = impl.prepare(x25519, "derive")
    first, second = operation.run(0.002), operation.run(0.002)
    assert first.ops >= 1 and first.elapsed_ns >= 2_000_000 and second.ops >= 1
    assert first.cpu_ns is not None and first.process_cpu_ns is not None
    assert operation.attributes["library"] == "cryptography"
    assert operation.attributes["code_path"] == "unknown"


@pytest.mark.parametrize(("name", "minimum"), [("java", 10.0), ("bouncycastle", 10.0),
                                               ("go", 0.0), ("libcrux", 0.0)])
def test_a_row_carries_its_stacks_least_warm_up(name: str, minimum: float) -> None:
    """A JVM's rows warm up for at least 10 s (its JIT compiles late); the others need no
    least time."""
    operation = in_process_implementation(name=name).prepare(_alg("X25519"), "keygen")
    assert operation.warmup == "steady"
    assert operation.warmup_min_seconds == minimum


@pytest.mark.parametrize(("mode", "said"), [
    ("set:wall_ns=1180591620717411303424", "wall_ns of 1180591620717411303424 ns is more "
                                           "than the "),  # what pqbench waited
    ("set:thread_cpu_ns=0", "ns of thread_cpu_ns: faster than one per nanosecond"),
    ("set:ops=231,thread_cpu_ns=1", "231 operations in 1 ns of thread_cpu_ns: faster than "
                                    "one per nanosecond"),
    ("set:ops=551,process_cpu_ns=1", "551 operations in 1 ns of process_cpu_ns: faster "
                                     "than one per nanosecond"),
    ("set:ops=1000000000000000000000000000000", "faster than one per nanosecond"),
    ("wrong-counts", "faster than one per nanosecond"),
    ("short-round", "shorter than the 0.002 s asked"),
    ("wrong-row", "round names row 'another'"),
])
def test_a_round_that_cannot_be_true_stops_the_worker(mode: str, said: str) -> None:
    impl = in_process_implementation(mode)
    with pytest.raises(WorkerFailed, match="its round breaks the protocol") as caught:
        impl.prepare(_alg("X25519"), "derive").run(0.002)
    assert said in str(caught.value)
    assert impl.process.worker is not None and impl.process.worker.failure is not None
    assert said in (impl.unavailable_reason() or "")  # every later row is told why


def test_a_worker_that_sends_every_reply_twice_is_refused() -> None:
    impl = in_process_implementation("twice")
    operation = impl.prepare(_alg("X25519"), "derive")  # its first reply is as asked
    with pytest.raises(WorkerFailed, match="it sent a line nobody asked for before run"):
        operation.run(0.002)


def test_a_row_whose_worker_repeats_its_round_is_a_problem_never_a_spread_of_0() -> None:
    """A suite's row whose worker sends its last round again (every clock to the
    nanosecond) is a problem naming it, never a row of identical rounds."""
    record = suite.SuiteRecorder()
    settings = suite.SpeedSettings(seconds=0.02, rounds=4, warmup=0.002)
    suite.execute(suite.plan([_alg("X25519")], [in_process_implementation("repeat-round")],
                             settings), settings, record)
    # Its first row's warm-up meets the repeat; every later row of the worker is told why.
    # A stale round comes back at once, so it is refused as identical or, first, as longer
    # than pqbench waited for it.
    assert [p.operation for p in record.problems] == ["keygen", "derive"]
    assert all("a reply repeated" in p.reason or "pqbench waited for it" in p.reason
               for p in record.problems), record.problems
    assert record.measurements == []


def test_a_tampered_ciphertext_decapsulated_to_a_short_secret_fails_verification() -> None:
    """FIPS 203 implicit rejection gives a 32-byte secret of its own: a worker whose
    tampered ciphertext decapsulates to 16 bytes is never timed."""
    impl = in_process_implementation("short-rejection")
    with pytest.raises(VerificationError, match="FIPS 203 implicit rejection"):
        stacks_interop.check(impl, _alg("ML-KEM-768"))
    record = suite.SuiteRecorder()
    settings = suite.SpeedSettings(seconds=0.01, rounds=2)
    suite.execute(suite.plan([_alg("ML-KEM-768")], [in_process_implementation(
        "short-rejection")], settings), settings, record)
    assert record.measurements == []
    assert {p.kind for p in record.problems} == {"failed verification"}
    # The same worker answering right passes the same check.
    assert stacks_interop.check(in_process_implementation(), _alg("ML-KEM-768"))

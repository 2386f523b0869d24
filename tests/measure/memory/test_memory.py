"""The memory probe against operations of known memory use, and real operations' figures.

The known-answer operations live in the C extension for these tests only
(csrc/memtest.c); every expected value below comes from the test's own parameters (bytes
per frame, blocks and their sizes), never from the code under test. Everything runs in a
real worker process with the real allocator interposer preloaded, as `pqbench memory`
runs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pqbench.analysis import memory as memory_compare
from pqbench.data.record import memory as memory_runs
from pqbench.data.record.results import Measurement
from pqbench.measure.memory import runner
from pqbench.timing import native
from tests.helpers import starts_processes

#: Fixed frames around the test's arrays: op_stack's and recurse's return addresses,
#: saved registers and alignment. The x86-64 and AArch64 ABIs keep these well under this.
FRAME_SLACK = 256
#: One recursion level's overhead beyond its array: return address, saved frame pointer
#: and callee-saved registers, 16-byte aligned.
LEVEL_SLACK = 64


@pytest.fixture(scope="module")
@starts_processes
def worker() -> Iterator[runner.Worker]:
    hook, reason = runner.interposer()
    assert hook is not None, reason
    started = runner.Worker(hook)
    assert started.hello == {"ready": True, "native": None, "heap": True}
    yield started
    started.close()


def measure(worker: runner.Worker, test: str, count: int = 0, nbytes: int = 0,
            calls: int = 1) -> dict[str, Any]:
    reply = worker.ask({"test": test, "count": count, "bytes": nbytes, "calls": calls})
    assert reply["ok"], reply
    memory: dict[str, Any] = reply["memory"]
    return memory


def stack(worker: runner.Worker, depth: int, nbytes: int) -> int:
    low, high = measure(worker, "stack", depth, nbytes)["stack_bytes"]
    assert low == high
    return int(high)


# --- stack: known bytes in, the same bytes out ------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("nbytes", [1024, 4096, 16384, 65536])
def test_one_frame_of_known_size_is_measured(worker: runner.Worker, nbytes: int) -> None:
    measured = stack(worker, 1, nbytes)
    assert nbytes <= measured <= nbytes + FRAME_SLACK


@pytest.mark.process
def test_stack_grows_by_exactly_the_bytes_added(worker: runner.Worker) -> None:
    base = stack(worker, 1, 1024)
    assert stack(worker, 1, 4096) - base == 4096 - 1024
    assert stack(worker, 1, 65536) - base == 65536 - 1024


def test_recursion_adds_one_known_frame_per_level(worker: runner.Worker) -> None:
    one = stack(worker, 1, 2048)
    level = stack(worker, 2, 2048) - one
    assert 2048 <= level <= 2048 + LEVEL_SLACK
    for depth in (4, 16, 64, 1000):
        assert stack(worker, depth, 2048) == one + (depth - 1) * level


def test_the_empty_call_is_the_subtracted_baseline(worker: runner.Worker) -> None:
    empty = measure(worker, "empty", calls=3)
    assert empty["stack_bytes"] == [0, 0]
    assert empty["heap_bytes"] == [0, 0] and empty["allocations"] == [0, 0]
    assert 0 < empty["harness_stack_bytes"] <= FRAME_SLACK


@pytest.mark.process
def test_the_whole_region_is_usable_and_a_deeper_call_dies_at_the_guard() -> None:
    hook, _ = runner.interposer()
    deep = runner.Worker(hook)
    try:
        # 7000 levels of 1 KiB arrays: about 7.4 MB, inside the 8 MiB region.
        assert stack(deep, 7000, 1024) >= 7000 * 1024
        with pytest.raises(runner.WorkerDied, match=r"SIGSEGV.*guard"):
            deep.ask({"test": "stack", "count": 15000, "bytes": 1024})
    finally:
        deep.close()


# --- heap: known blocks in, the same bytes and count out --------------------------------


def test_blocks_held_at_once_peak_at_their_sum(worker: runner.Worker) -> None:
    found = measure(worker, "heap", 10, 1000, calls=3)
    assert found["heap_bytes"] == [10 * 1000, 10 * 1000]
    assert found["allocations"] == [10, 10]
    assert found["heap_total_bytes"] == [10 * 1000, 10 * 1000]


def test_blocks_freed_in_turn_peak_at_one_block(worker: runner.Worker) -> None:
    found = measure(worker, "heap-churn", 10, 1000)
    assert found["heap_bytes"] == [1000, 1000]
    assert found["allocations"] == [10, 10]
    assert found["heap_total_bytes"] == [10 * 1000, 10 * 1000]


def test_many_small_blocks_are_each_counted(worker: runner.Worker) -> None:
    found = measure(worker, "heap", 1024, 1)
    assert found["heap_bytes"] == [1024, 1024] and found["allocations"] == [1024, 1024]


def test_every_replaced_allocator_is_counted(worker: runner.Worker) -> None:
    # The steps of csrc/memtest.c op_allocators, as (live-bytes change, allocating?).
    steps = [(+1000, True),              # malloc(1000)
             (+10 * 100, True),          # calloc(10, 100)
             (-1000 + 3000, True),       # realloc(first, 3000)
             (+5000, True),              # posix_memalign(64, 5000)
             (+6400, True),              # aligned_alloc(64, 6400)
             (+700, True),               # memalign(128, 700)
             (-1000 + 30 * 100, True),   # reallocarray(second, 30, 100)
             (-3000 - 3000 - 5000 - 6400 - 700, False)]  # free everything
    live = peak = 0
    for change, _ in steps:
        live += change
        peak = max(peak, live)
    requested = 1000 + 1000 + 3000 + 5000 + 6400 + 700 + 3000
    found = measure(worker, "allocators")
    assert live == 0
    assert found["heap_bytes"] == [peak, peak] == [18100, 18100]
    assert found["allocations"] == [sum(a for _, a in steps)] * 2
    assert found["heap_total_bytes"] == [requested, requested]


@pytest.mark.process
def test_without_the_interposer_the_heap_is_not_counted_and_the_stack_still_is(
        worker: runner.Worker) -> None:
    bare = runner.Worker(None)
    try:
        assert bare.hello["heap"] is False
        reply = bare.ask({"test": "heap", "count": 3, "bytes": 100})
        assert reply["memory"]["heap_bytes"] is None
        assert reply["memory"]["allocations"] is None
        assert stack(bare, 1, 4096) == stack(worker, 1, 4096)
    finally:
        bare.close()
    # In this very process (no interposer either) the facade says the same.
    assert not native.mem_heap_available()
    here = native.mem_test("heap", 2, 64)
    assert here.heap_bytes is None and here.allocations is None


def test_bad_test_arguments_are_refused_not_crashed(worker: runner.Worker) -> None:
    with pytest.raises(ValueError, match="stack test"):
        native.mem_test("stack", 0, 1024)
    with pytest.raises(ValueError, match="calls"):
        native.mem_test("empty", 0, 0, calls=0)
    assert measure(worker, "empty")["stack_bytes"] == [0, 0]  # the worker lives on


# --- real operations: consistency ------------------------------------------------------


def _real(worker: runner.Worker, implementation: str, algorithm: str, operation: str,
          calls: int = 3) -> dict[str, Any]:
    reply = worker.ask({"implementation": implementation, "algorithm": algorithm,
                        "liboqs_kind": None, "operation": operation, "calls": calls})
    assert reply["ok"], reply
    memory: dict[str, Any] = reply["memory"]
    return memory


def test_ml_dsa_signing_stack_grows_with_the_parameter_set(worker: runner.Worker) -> None:
    # FIPS 204 Table 1: (k, l) = (4, 4), (6, 5), (8, 7): more polynomials on the stack.
    signing = [_real(worker, "liboqs", name, "sign")["stack_bytes"][1]
               for name in ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")]
    assert 0 < signing[0] < signing[1] < signing[2]


def test_ml_kem_implicit_rejection_costs_what_decapsulation_costs(
        worker: runner.Worker) -> None:
    """FIPS 203 decapsulation computes both the real and the rejection key and selects in
    constant time, so a tampered ciphertext takes the same path: the same memory."""
    depth = []
    for name in ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"):
        valid = _real(worker, "liboqs", name, "decaps")
        rejected = _real(worker, "liboqs", name, "decaps-reject")
        for metric in ("stack_bytes", "heap_bytes", "allocations"):
            assert valid[metric][0] == valid[metric][1]  # constant time: every call alike
            assert rejected[metric] == valid[metric]
        depth.append(valid["stack_bytes"][1])
    assert 0 < depth[0] < depth[1] < depth[2]  # k = 2, 3, 4 polynomial vectors


def test_key_generation_in_libcrypto_allocates_the_key_it_returns(
        worker: runner.Worker) -> None:
    # op_pkey_keygen: EVP_PKEY_keygen allocates a new EVP_PKEY, which the op then frees.
    found = _real(worker, "libcrypto", "X25519", "keygen")
    assert found["allocations"][0] >= 1 and found["heap_bytes"][0] > 0
    assert found["heap_total_bytes"][0] >= found["heap_bytes"][0]
    assert found["stack_bytes"][0] > 0


def test_an_unoffered_operation_is_a_problem_not_a_crash(worker: runner.Worker) -> None:
    reply = worker.ask({"implementation": "libcrypto", "algorithm": "ML-KEM-768",
                        "liboqs_kind": None, "operation": "decaps", "calls": 1})
    if native.ssl_offers("ML-KEM-768") is None:  # an OpenSSL >= 3.5 libcrypto
        assert reply["ok"] and reply["memory"]["stack_bytes"][0] > 0
    else:
        assert reply == {"ok": False, "kind": "not offered",
                         "reason": native.ssl_offers("ML-KEM-768")}
    reply = worker.ask({"implementation": "cryptography", "algorithm": "X25519",
                        "operation": "derive"})
    assert reply["ok"] is False and "native implementations" in reply["reason"]


# --- records and verdicts -----------------------------------------------------------------


def _figure(stack_span: tuple[int, int], heap: int | None = 864) -> memory_runs.MemoryFigure:
    return memory_runs.MemoryFigure(
        "ML-KEM-768", "liboqs", "decaps", stack_bytes=stack_span[1], heap_bytes=heap,
        allocations=None if heap is None else 8, method=runner.method(heap is not None),
        calls=3, ranges={"stack_bytes": stack_span,
                         **({"heap_bytes": (heap, heap), "allocations": (8, 8)}
                            if heap is not None else {})},
        sizes={"ciphertext": 1088})


def test_a_figure_survives_the_record_both_ways() -> None:
    for fig in (_figure((18000, 18488)), _figure((100, 100), heap=None)):
        m = memory_runs.measurement(fig)
        assert isinstance(m, Measurement) and m.rounds == ()
        assert memory_runs.figure(m) == fig
    speed_row = Measurement("ML-KEM-768", "liboqs", "decaps", rounds=())
    assert memory_runs.figure(speed_row) is None


@pytest.mark.parametrize(("before", "after", "verdict"), [
    ((100, 100), (100, 100), "same"),
    ((100, 100), (101, 101), "larger"),
    ((100, 120), (121, 130), "larger"),
    ((100, 120), (50, 99), "smaller"),
    ((100, 120), (110, 130), "varies"),    # overlapping ranges: within the call-to-call spread
    ((100, 120), (100, 121), "varies"),
])
def test_memory_verdicts(before: tuple[int, int], after: tuple[int, int],
                         verdict: str) -> None:
    assert memory_compare.verdict(before, after) == verdict


@pytest.mark.process
def test_a_call_that_kills_its_worker_is_a_problem_and_the_run_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pqbench.catalog import algorithms
    from pqbench.libraries.implementations.native import native_implementations

    libcrypto = next(i for i in native_implementations() if i.name == "libcrypto")
    tasks = runner.plan(algorithms.resolve(["x25519"]), [libcrypto], ("keygen", "derive"))
    crashing = runner.MemoryTask.request

    def request(self: runner.MemoryTask, calls: int) -> dict[str, Any]:
        if self.operation == "keygen":  # fault injected: a stack deeper than the region
            return {"test": "stack", "count": 15000, "bytes": 1024}
        return crashing(self, calls)

    monkeypatch.setattr(runner.MemoryTask, "request", request)
    record = runner.MemoryRecorder()
    runner.execute(tasks, 1, record)
    (problem,) = record.problems
    assert (problem.algorithm, problem.operation, problem.kind) == ("X25519", "keygen",
                                                                     "error")
    assert "SIGSEGV" in problem.reason and "guard" in problem.reason
    assert [f.operation for f in record.figures] == ["derive"]
    assert record.figures[0].stack_bytes > 0 and record.heap_counted is True

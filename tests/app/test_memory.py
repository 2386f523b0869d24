"""`pqbench memory`'s decisions, called directly: which calls are measured, what the run
records of how, and how the command ends."""

from __future__ import annotations

import dataclasses

import pytest

from pqbench.app import memory
from pqbench.data.record.results import Problem
from pqbench.measure.memory.runner import MemoryRecorder
from pqbench.platform.errors import UsageError
from tests.helpers.runs import make_run


@pytest.mark.parametrize(("args", "message"), [
    ((["ml-kem-768"], None, None, 0), "--calls must be between 1 and 1000"),
    ((["ml-kem-768"], None, None, 1001), "--calls must be between 1 and 1000"),
    ((["ml-kem-768"], ["cryptography"], None, 5),
     "memory is measured through liboqs, libcrypto; not cryptography"),
    ((["aes-256-gcm"], None, None, 5), "AES-256-GCM is not one"),
    ((["ml-kem-768"], None, ["sign"], 5), "nothing to measure: no operation of ML-KEM-768"),
])
def test_a_plan_that_measures_nothing_is_refused_naming_why(args: tuple, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        memory.plan(*args)


def test_the_calls_at_their_limits_are_planned() -> None:
    assert memory.plan(["x25519"], ["libcrypto"], ["derive"], 1)
    assert memory.plan(["x25519"], ["libcrypto"], ["derive"], memory.MAX_CALLS)


def test_the_default_plan_is_the_suite_with_implicit_rejection() -> None:
    """Every algorithm of the suite, in its order; a KEM's implicit rejection beside its
    operations; RSA's key generation only when asked for (seconds a call)."""
    tasks = memory.plan(None, None, None, 5)
    assert list(dict.fromkeys(t.algorithm.name for t in tasks)) == list(memory.SUITE)
    assert {t.operation for t in tasks if t.algorithm.name == "ML-KEM-768"
            and t.implementation.name == "liboqs"} == {"keygen", "encaps", "decaps",
                                                       "decaps-reject"}
    assert "keygen" not in {t.operation for t in tasks if t.algorithm.name == "RSA-2048"}
    assert {t.implementation.name for t in tasks} == {"liboqs", "libcrypto"}


def test_one_named_operation_narrows_every_algorithm() -> None:
    tasks = memory.plan(["ml-kem-768", "x25519"], None, ["keygen"], 3)
    assert {t.operation for t in tasks} == {"keygen"}
    assert {t.algorithm.name for t in tasks} == {"ML-KEM-768", "X25519"}


def test_the_settings_say_why_the_heap_was_not_counted() -> None:
    counted = MemoryRecorder(heap_counted=True, harness_stack_bytes=512)
    settings = memory.settings(5, ["keygen", "keygen"], "x", counted, "no interposer")
    assert settings["heap"] == "counted" and settings["harness_stack_bytes"] == 512
    assert settings["operations"] == ["keygen"]  # -o twice is one operation
    uncounted = dataclasses.replace(counted, heap_counted=False)
    assert memory.settings(5, None, None, uncounted, "no interposer")["heap"] == "no interposer"


def test_the_ending_is_the_interruption_then_a_failed_check_or_measurement() -> None:
    run = dataclasses.replace(make_run("r1", seed=1), kind="memory")
    assert memory.ending(run) is None
    failed = dataclasses.replace(run, problems=(
        Problem("X25519", "libcrypto", "failed verification", "wrong secret"),))
    died = dataclasses.replace(run, problems=(
        Problem("X25519", "libcrypto", "error", "worker died", "derive"),))
    offered = dataclasses.replace(run, problems=(
        Problem("X25519", "liboqs", "not offered", "no X25519"),))
    assert memory.ending(failed) == memory.ending(died) == memory.Ending(
        "an operation failed its check or its measurement (see above)", 1)
    assert memory.ending(offered) is None
    stopped = dataclasses.replace(failed, status="interrupted")
    ending = memory.ending(stopped)
    assert ending is not None and ending.status in (130, 143)
    assert ending.message == (f"interrupted; the {len(run.measurements)} completed rows "
                              "were stored as run r1")


def test_a_memory_run_that_measured_nothing_ends_1_saying_why() -> None:
    run = dataclasses.replace(make_run("r2", seed=1), kind="memory", measurements=(),
                              status="failed", problems=(
        Problem("ML-KEM-768", "liboqs", "unavailable", "liboqs not found"),))
    assert memory.ending(run) == memory.Ending(
        "nothing was measured (liboqs: unavailable, liboqs not found); stored as failed run "
        "r2", 1)

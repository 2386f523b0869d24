"""`pqbench memory`: which calls are measured, the run they make, and how the command ends.

The figures come from `measure.memory` (one worker process per operation); what is decided
here is checked without one: the options, the plan, the run's settings, the ending.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from pqbench.app.ending import Ending, of_run
from pqbench.catalog import algorithms
from pqbench.data.record import memory as memory_runs
from pqbench.data.record.results import Run
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure import environment
from pqbench.measure.memory import runner
from pqbench.platform.errors import UsageError

#: What `pqbench memory` measures with no argument.
SUITE = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65",
         "ML-DSA-87", "X25519", "ECDH-P-256", "RSA-2048", "Ed25519")
MAX_CALLS = 1000


def plan(algorithm: Sequence[str] | None, implementation: Sequence[str] | None,
         operation: Sequence[str] | None, calls: int) -> list[runner.MemoryTask]:
    """The calls to measure, one task per algorithm, implementation and operation; a
    usage error names the option that asks for nothing measurable."""
    if not 1 <= calls <= MAX_CALLS:
        raise UsageError(f"--calls must be between 1 and {MAX_CALLS}")
    wrong = [n for n in implementation or () if n not in runner.IMPLEMENTATIONS]
    if wrong:
        raise UsageError(f"memory is measured through {', '.join(runner.IMPLEMENTATIONS)}; "
                         f"not {', '.join(wrong)}")
    kems, sigs = liboqs_mechanisms()
    chosen = algorithms.resolve(list(algorithm or SUITE), kems, sigs)
    impls = select(list(implementation or runner.IMPLEMENTATIONS))
    tasks = runner.plan(chosen, impls, tuple(operation or ()))
    if not tasks:
        raise UsageError(f"nothing to measure: no operation of {', '.join(a.name for a in chosen)}"
                         f" matches {', '.join(operation or ())} through "
                         f"{', '.join(i.name for i in impls)}")
    return tasks


def settings(calls: int, operation: Sequence[str] | None, label: str | None,
             recorder: runner.MemoryRecorder, missing: str | None) -> dict[str, Any]:
    """What the run records of how it was measured (the heap's reason when uncounted)."""
    return {"calls": calls, "operations": list(dict.fromkeys(operation or ())), "label": label,
            "stack_region_bytes": runner.STACK_REGION_BYTES,
            "harness_stack_bytes": recorder.harness_stack_bytes,
            "heap_counted": recorder.heap_counted,
            "heap": "counted" if recorder.heap_counted else missing}


def measure(tasks: Sequence[runner.MemoryTask], calls: int, operation: Sequence[str] | None,
            label: str | None, advance: Callable[[str], None]) -> Run:
    """Measure every task, each in a worker of its own; Ctrl-C or SIGTERM keeps the rows
    measured so far, in a run marked interrupted."""
    env = environment.collect()
    started = datetime.now(UTC)
    watch = environment.Watch()
    recorder = runner.MemoryRecorder()
    status = "complete"
    try:
        runner.execute(tasks, calls, recorder, lambda t: advance(t.title))
    except KeyboardInterrupt:
        status = "interrupted"
    env["run"] = watch.state()
    return memory_runs.memory_run(started, settings(calls, operation, label, recorder,
                                                    runner.interposer()[1]),
                                  env, recorder.figures, recorder.problems,
                                  recorder.verifications, status)


def ending(run: Run) -> Ending | None:
    """Interrupted: 130 or 143, saying what was kept; an operation that failed its check or
    its measurement: 1; else none."""
    return of_run(run, "an operation failed its check or its measurement (see above)",
                  ("failed verification", "error"))

"""Memory figures as stored runs of kind "memory", using the records every run kind shares.

The mapping between a `MemoryFigure` and the shared record (`results.Measurement`) lives
here alone, in `measurement` and `figure`; `record.models.MemoryFacts` types the attributes
they write:

* algorithm, implementation, operation: as in a speed row, so a memory row sits beside
  the timing of the same operation (plus "decaps-reject", which speed does not time);
* rounds: none. A memory row carries no timing, so compare, history and the pytest-benchmark
  export, which read per-round rates, never mistake it for one;
* sizes: the bytes on the wire, as in the speed row;
* attributes: `stack_bytes`, `heap_bytes`, `allocations` (the largest over the measured
  calls, each on freshly prepared inputs; heap figures None where the heap was not
  counted), `memory_method`, `memory_calls`, and `memory_range`, the smallest and largest
  of each figure over the calls (a figure that varies between calls, such as ML-DSA
  signing's allocations with its rejection loop, says so there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.runs import new_run

KIND = "memory"
#: The figures a memory row carries, in the order tables show them.
METRICS = ("stack_bytes", "heap_bytes", "allocations")
#: Every attribute key of a memory row (documented in the README's JSON table).
ATTRIBUTES = (*METRICS, "memory_method", "memory_calls", "memory_range")

Span = tuple[int, int]


@dataclass(frozen=True)
class MemoryFigure:
    """What one call of an operation used: the largest figure over `calls` measured calls.

    `ranges` holds (smallest, largest) per metric; heap figures are None when the heap
    was not counted (no interposer), and `method` says how each figure was obtained.
    """

    algorithm: str
    implementation: str
    operation: str
    stack_bytes: int
    heap_bytes: int | None
    allocations: int | None
    method: str
    calls: int
    ranges: Mapping[str, Span] = field(default_factory=dict)
    sizes: Mapping[str, int] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.algorithm, self.implementation, self.operation)

    def value(self, metric: str) -> int | None:
        value: int | None = getattr(self, metric)
        return value

    def span(self, metric: str) -> Span | None:
        """(smallest, largest) of a metric over the calls; None where it was not counted."""
        value = self.value(metric)
        if value is None:
            return None
        return self.ranges.get(metric, (value, value))


def measurement(fig: MemoryFigure) -> Measurement:
    """The one place a memory figure becomes the shared record."""
    attributes: dict[str, Any] = {
        "stack_bytes": fig.stack_bytes, "heap_bytes": fig.heap_bytes,
        "allocations": fig.allocations, "memory_method": fig.method,
        "memory_calls": fig.calls,
        "memory_range": {k: list(v) for k, v in fig.ranges.items()},
    }
    return Measurement(algorithm=fig.algorithm, implementation=fig.implementation,
                       operation=fig.operation, rounds=(), sizes=dict(fig.sizes),
                       attributes=attributes)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def figure(m: Measurement) -> MemoryFigure | None:
    """The memory figure a record carries, or None for a record of another kind."""
    a = m.attributes
    stack = _int(a.get("stack_bytes"))
    if stack is None:
        return None
    raw_ranges = a.get("memory_range") if isinstance(a.get("memory_range"), dict) else {}
    ranges: dict[str, Span] = {}
    for metric, pair in (raw_ranges or {}).items():
        if isinstance(pair, list | tuple) and len(pair) == 2 and all(
                _int(v) is not None for v in pair):
            ranges[str(metric)] = (int(pair[0]), int(pair[1]))
    return MemoryFigure(
        algorithm=m.algorithm, implementation=m.implementation, operation=m.operation,
        stack_bytes=stack, heap_bytes=_int(a.get("heap_bytes")),
        allocations=_int(a.get("allocations")), method=str(a.get("memory_method") or ""),
        calls=_int(a.get("memory_calls")) or 1, ranges=ranges, sizes=dict(m.sizes))


def figures(runs: Sequence[Run]) -> list[MemoryFigure]:
    """Every memory figure in the runs, in run order."""
    return [f for run in runs for m in run.measurements if (f := figure(m)) is not None]


def memory_run(started: datetime, settings: Mapping[str, Any], environment: Mapping[str, Any],
               found: Sequence[MemoryFigure], problems: Sequence[Problem],
               verifications: Sequence[Verification] = (), status: str = "complete") -> Run:
    return new_run(KIND, started, settings=settings, environment=environment,
                   measurements=(measurement(f) for f in found), problems=problems,
                   verifications=verifications, status=status, label=settings.get("label"))

"""Memory figures before and after: larger, smaller or the same, without statistics.

A memory figure is a count, not a sample of a noisy rate: for a given build, the stack,
heap and allocations of a call with the same inputs come out the same every time. So a
difference in bytes between two builds is a change, shown as before and after bytes and
their ratio. Some operations do vary from call to call (ML-DSA signing repeats its
rejection loop a random number of times, RSA key generation tries a random number of
candidates); each figure carries the smallest and largest over the calls measured
(`MemoryFigure.ranges`), and pooled over the runs on a side. The verdict:

* `same`: both sides have exactly the same smallest and largest value;
* `larger` / `smaller`: every value after lies above / below every value before;
* `varies`: the sides differ but their ranges overlap, so the difference is within what
  the operation itself varies by, and no change is claimed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pqbench.data.record.memory import METRICS, figures
from pqbench.data.record.results import Run

VERDICTS = ("larger", "smaller", "same", "varies")
METHOD = ("memory figures are counts, compared exactly: smallest and largest over the calls "
          "measured, pooled per side; larger or smaller only when the ranges do not overlap")


@dataclass(frozen=True)
class MemoryChange:
    """One figure (stack_bytes, heap_bytes or allocations) of one operation, before/after."""

    algorithm: str
    implementation: str
    operation: str
    metric: str
    before: tuple[int, int]
    after: tuple[int, int]
    verdict: str

    @property
    def ratio(self) -> float | None:
        """Largest after / largest before; None when before is 0 and after is not."""
        if self.before[1] == 0:
            return 1.0 if self.after[1] == 0 else None
        return self.after[1] / self.before[1]

    @property
    def changed(self) -> bool:
        return self.verdict in ("larger", "smaller")

    def as_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "implementation": self.implementation,
                "operation": self.operation, "metric": self.metric,
                "before": self.before[1], "after": self.after[1],
                "before_range": list(self.before), "after_range": list(self.after),
                "ratio": self.ratio, "verdict": self.verdict}


def verdict(before: tuple[int, int], after: tuple[int, int]) -> str:
    if before == after:
        return "same"
    if after[0] > before[1]:
        return "larger"
    if after[1] < before[0]:
        return "smaller"
    return "varies"


def _pooled(runs: Sequence[Run]) -> dict[tuple[str, str, str, str], tuple[int, int]]:
    """Per (algorithm, implementation, operation, metric): smallest and largest, all runs."""
    pooled: dict[tuple[str, str, str, str], tuple[int, int]] = {}
    for fig in figures(runs):
        for metric in METRICS:
            span = fig.span(metric)
            if span is None:
                continue
            key = (*fig.key, metric)
            low, high = pooled.get(key, span)
            pooled[key] = (min(low, span[0]), max(high, span[1]))
    return pooled


def compare_memory(before: Sequence[Run], after: Sequence[Run]) -> list[MemoryChange]:
    """Every figure measured on both sides; changes first, largest ratio first."""
    pooled_before, pooled_after = _pooled(before), _pooled(after)
    rows = [MemoryChange(*key, before=pooled_before[key], after=span,
                         verdict=verdict(pooled_before[key], span))
            for key, span in pooled_after.items() if key in pooled_before]
    return sorted(rows, key=lambda r: (not r.changed, -abs((r.ratio or 2.0) - 1.0),
                                       r.algorithm, r.implementation, r.operation,
                                       METRICS.index(r.metric)))

"""The comparison model: one row of a before/after comparison, and the level it is judged at.

A `Row` is its key (algorithm, implementation, operation, block size), the `verdict.Outcome`
the statistics gave it, how many rounds each side contributed, and the fingerprint
differences that can explain it. Every figure a reader sees (levels, ratio, interval,
p-value, verdict) is read from the Outcome, never copied: one model per concept, as pyperf
keeps one CompareResult. `compare` builds rows, `news` tells them, `presentation` and
`report` show them; this module imports none of those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pqbench.analysis import explain, verdict
from pqbench.analysis.memory import MemoryChange
from pqbench.analysis.verdict import MIN_THRESHOLD
from pqbench.data.record.results import RowKey

__all__ = ["ALPHA", "Row", "RowComparison", "RowKey"]

#: Significance level of every comparison (two-sided); intervals are at 1 - ALPHA.
ALPHA = 0.01


@dataclass(frozen=True)
class Row:
    """One (algorithm, implementation, operation, block size) before and after.

    ``before``/``after`` are the two levels (bytes per second for rows with a block size,
    operations per second otherwise; ``unit`` says which) and ``ratio`` = after / before
    exactly (greater than 1 is faster): one estimate, the Outcome's. ``n_*`` count rounds,
    ``runs_*`` runs (or pairs); ``pairs`` is set for a paired (`ab`) row.
    """

    key: RowKey
    outcome: verdict.Outcome
    n_before: int
    n_after: int
    pairs: int | None = None
    seconds: float | None = None
    causes: tuple[explain.Cause, ...] = ()
    #: The rounds counted bytes, not operations (a `files` row: bytes over a pass).
    counts_bytes: bool = False
    #: Set for a row judged across a fleet: the machines, each its own control.
    machines: int | None = None

    @property
    def design(self) -> str:
        """What the row was judged by: "runs" (the run as the unit), "pairs" (an `ab`
        session's pairs) or "machines" (each machine's own before and after)."""
        return "machines" if self.machines is not None else \
            "pairs" if self.pairs is not None else "runs"

    @property
    def algorithm(self) -> str:
        return self.key.algorithm

    @property
    def implementation(self) -> str:
        return self.key.implementation

    @property
    def operation(self) -> str:
        return self.key.operation

    @property
    def block_size(self) -> int | None:
        return self.key.block_size

    @property
    def unit(self) -> str:
        return "bytes/s" if self.block_size or self.counts_bytes else "ops/s"

    @property
    def before(self) -> float:
        return self.outcome.before * (self.block_size or 1)

    @property
    def after(self) -> float:
        return self.outcome.after * (self.block_size or 1)

    @property
    def ratio(self) -> float:
        return self.outcome.ratio

    @property
    def ci_low(self) -> float:
        return self.outcome.ci_low

    @property
    def ci_high(self) -> float:
        return self.outcome.ci_high

    @property
    def ci_level(self) -> float:
        return self.outcome.ci_level

    @property
    def p_value(self) -> float:
        return self.outcome.p_value

    @property
    def verdict(self) -> str:
        return self.outcome.verdict

    @property
    def reason(self) -> str:
        return self.outcome.reason

    @property
    def runs_before(self) -> int:
        return self.outcome.units_before

    @property
    def runs_after(self) -> int:
        return self.outcome.units_after

    @property
    def spread_before(self) -> float | None:
        return self.outcome.spread_before

    @property
    def spread_after(self) -> float | None:
        return self.outcome.spread_after

    @property
    def noise_floor(self) -> float | None:
        return self.outcome.floor

    @property
    def threshold(self) -> float:
        return self.outcome.threshold

    @property
    def changed(self) -> bool:
        return self.outcome.changed

    def as_dict(self) -> dict[str, Any]:
        """The JSON row of `pqbench compare --json` (docs/compare.schema.json)."""
        return {
            "algorithm": self.algorithm, "implementation": self.implementation,
            "operation": self.operation, "block_size": self.block_size, "unit": self.unit,
            "before": self.before, "after": self.after, "ratio": self.ratio,
            "ci_low": verdict.finite(self.ci_low), "ci_high": verdict.finite(self.ci_high),
            "ci_level": self.ci_level, "p_value": self.p_value, "verdict": self.verdict,
            "reason": self.reason, "basis": self.outcome.basis,
            "n_before": self.n_before, "n_after": self.n_after,
            "runs_before": self.runs_before, "runs_after": self.runs_after,
            "spread_before": self.spread_before, "spread_after": self.spread_after,
            "noise_floor": self.noise_floor, "threshold": self.threshold,
            "design": self.design, "pairs": self.pairs, "machines": self.machines,
            "seconds": self.seconds,
            "causes": [c.as_dict() for c in self.causes],
        }


@dataclass(frozen=True)
class RowComparison:
    """The rows of one before/after pair of run groups, and what only one side measured.

    ``threshold`` is the fixed band, or None for auto (max(5 %, each row's noise floor)).
    """

    before_name: str
    after_name: str
    before_runs: tuple[str, ...]
    after_runs: tuple[str, ...]
    threshold: float | None
    rows: tuple[Row, ...]
    differences: tuple[explain.Difference, ...]
    only_before: tuple[RowKey, ...] = ()
    only_after: tuple[RowKey, ...] = ()
    warnings: tuple[str, ...] = ()
    method: str = ""
    paired: bool = False
    #: The level each row was judged at: ALPHA, or an `ab` session's alpha per look.
    alpha: float = ALPHA
    #: Memory figures (runs of kind "memory"), compared exactly: pqbench.analysis.memory.
    memory: tuple[MemoryChange, ...] = ()
    #: A fleet comparison's machines by name: those that judged the rows, each against
    #: itself, and those left out for having measured one side only.
    machines: tuple[str, ...] = ()
    machines_left_out: tuple[str, ...] = ()

    @property
    def designs(self) -> dict[str, int]:
        """How many rows each design judged ("runs", "pairs", "machines"), in that order."""
        found = {design: 0 for design in ("runs", "pairs", "machines")}
        for row in self.rows:
            found[row.design] += 1
        return {design: count for design, count in found.items() if count}

    @property
    def design(self) -> str:
        """The design of every row, or "mixed" where rows were judged differently (the
        rows an `ab` session measured by its pairs, the others by runs)."""
        designs = list(self.designs)
        if not designs:
            return "pairs" if self.paired else "runs"
        return designs[0] if len(designs) == 1 else "mixed"

    def as_dict(self) -> dict[str, Any]:
        return {
            "before": {"name": self.before_name, "runs": list(self.before_runs)},
            "after": {"name": self.after_name, "runs": list(self.after_runs)},
            "threshold": MIN_THRESHOLD if self.threshold is None else self.threshold,
            "threshold_mode": "auto" if self.threshold is None else "fixed",
            "alpha": self.alpha,
            "design": self.design,
            "designs": self.designs,
            "method": self.method,
            "rows": [r.as_dict() for r in self.rows],
            "differences": [d.as_dict() for d in self.differences],
            "only_before": [list(k) for k in self.only_before],
            "only_after": [list(k) for k in self.only_after],
            "warnings": list(self.warnings),
            "memory": [m.as_dict() for m in self.memory],
            "machines": list(self.machines),
            "machines_left_out": list(self.machines_left_out),
        }

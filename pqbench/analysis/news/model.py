"""The news record: plain frozen data, dicts only at the JSON edge (`News.as_dict`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pqbench.analysis.rows import Row, RowKey
from pqbench.analysis.verdict import finite

__all__ = ["Availability", "CauseGroup", "Change", "Failure", "Highlight", "News", "OneSided",
           "Reason", "RowKey"]


@dataclass(frozen=True)
class Change:
    """One topic of the fingerprint that differs, by its most telling field."""

    topic: str
    field: str
    before: Any
    after: Any
    fields: tuple[str, ...]
    #: Why the difference cannot act here, where explain says so ("no effect expected").
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "field": self.field, "before": self.before,
                "after": self.after, "fields": list(self.fields), "note": self.note}


@dataclass(frozen=True)
class OneSided:
    """An operation measured on one side only: its level there, and the fastest other
    implementation of the same operation on that side, for scale."""

    operation: str
    rate: float
    peer: str | None = None
    peer_rate: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "rate": self.rate, "fastest_other":
                None if self.peer is None else {"implementation": self.peer,
                                                "rate": self.peer_rate}}


@dataclass(frozen=True)
class Availability:
    """Rows of one algorithm and implementation that appeared (or disappeared), with the
    reason the other side gave, and the checks the measuring side passed first."""

    algorithm: str
    implementation: str
    block_size: int | None
    unit: str
    reason: str
    checks: tuple[str, ...]
    rows: tuple[OneSided, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "implementation": self.implementation,
                "block_size": self.block_size, "unit": self.unit, "reason": self.reason,
                "checks": list(self.checks), "rows": [r.as_dict() for r in self.rows]}


@dataclass(frozen=True)
class Failure:
    """An implementation that failed its checks on one side (it was not timed there)."""

    side: str  # "before" | "after"
    algorithm: str
    implementation: str
    operation: str | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"side": self.side, "algorithm": self.algorithm,
                "implementation": self.implementation, "operation": self.operation,
                "reason": self.reason}


@dataclass(frozen=True)
class Highlight:
    """A row judged faster or slower (the compared Row itself, not a copy of its figures),
    with the topics of its causes, strongest first."""

    row: Row
    causes: tuple[tuple[str, str], ...]  # (topic, strength)

    @property
    def key(self) -> RowKey:
        return self.row.key

    def as_dict(self) -> dict[str, Any]:
        row = self.row
        return {"algorithm": row.algorithm, "implementation": row.implementation,
                "operation": row.operation, "block_size": row.block_size, "unit": row.unit,
                "before": row.before, "after": row.after, "ratio": row.ratio,
                "ci_low": finite(row.ci_low), "ci_high": finite(row.ci_high),
                "verdict": row.verdict,
                "causes": [{"topic": t, "strength": s} for t, s in self.causes]}


@dataclass(frozen=True)
class Reason:
    """One explanation of a cause, and the changed rows it applies to."""

    strength: str
    why: str
    rows: tuple[RowKey, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"strength": self.strength, "why": self.why, "rows": [list(k) for k in self.rows]}


@dataclass(frozen=True)
class CauseGroup:
    """A topic named as a cause of changed rows: told once, with every row it explains."""

    topic: str
    before: Any
    after: Any
    strength: str  # the strongest of its reasons
    reasons: tuple[Reason, ...]
    #: The fingerprint field its values are of (words for a knob's value), where known.
    field: str | None = None

    @property
    def rows(self) -> tuple[RowKey, ...]:
        return tuple(dict.fromkeys(k for r in self.reasons for k in r.rows))

    def as_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "before": self.before, "after": self.after,
                "strength": self.strength, "rows": len(self.rows),
                "reasons": [r.as_dict() for r in self.reasons]}


@dataclass(frozen=True)
class News:
    """What changed from `before_name` to `after_name`; see the module docstring."""

    before_name: str
    after_name: str
    builds: tuple[Change, ...]
    unchanged: tuple[str, ...]
    other_fields: int
    appeared: tuple[Availability, ...]
    disappeared: tuple[Availability, ...]
    failed: tuple[Failure, ...]
    changes: tuple[Highlight, ...]
    more_changes: int
    causes: tuple[CauseGroup, ...]
    unexplained: tuple[RowKey, ...]
    verdicts: tuple[tuple[str, int], ...]
    paired: bool
    #: What judged the rows: how many each design did ("runs", "pairs", "machines").
    designs: tuple[tuple[str, int], ...] = ()

    @property
    def compared(self) -> int:
        return sum(n for _, n in self.verdicts)

    def as_dict(self) -> dict[str, Any]:
        """The `news` object of `compare --json` (documented in the README)."""
        return {
            "before": self.before_name, "after": self.after_name,
            "builds": [c.as_dict() for c in self.builds], "unchanged": list(self.unchanged),
            "other_fields": self.other_fields,
            "appeared": [a.as_dict() for a in self.appeared],
            "disappeared": [a.as_dict() for a in self.disappeared],
            "failed": [f.as_dict() for f in self.failed],
            "changes": [h.as_dict() for h in self.changes],
            "more_changes": self.more_changes,
            "causes": [c.as_dict() for c in self.causes],
            "unexplained": [list(k) for k in self.unexplained],
            "verdicts": dict(self.verdicts), "compared": self.compared,
        }

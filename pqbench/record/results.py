"""Frozen result records. They become dicts only at the storage and JSON edges."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pqbench.analysis import stats
from pqbench.timing.contract import LoopResult


@dataclass(frozen=True)
class Measurement:
    """All rounds of one (algorithm, implementation, operation[, block size])."""

    algorithm: str
    implementation: str
    operation: str
    rounds: tuple[LoopResult, ...]
    #: Bytes that travel or are stored: public_key, secret_key, ciphertext, signature ...
    sizes: Mapping[str, int] = field(default_factory=dict)
    #: Bytes processed per operation (symmetric and hash rows); None for public-key rows.
    block_size: int | None = None
    #: Further facts of the row: key_bits, security_bits, quantum_security_bits, processes.
    attributes: Mapping[str, Any] = field(default_factory=dict)
    #: Label of the cycle counter behind cycles_per_op ("rdtsc (reference cycles)").
    counter: str | None = None

    @property
    def key(self) -> tuple[str, str, str, int | None]:
        return (self.algorithm, self.implementation, self.operation, self.block_size)

    @property
    def samples(self) -> list[float]:
        """Per-round operations per second."""
        return [r.ops_per_sec for r in self.rounds if r.ops > 0]

    @property
    def summary(self) -> stats.Summary:
        return stats.summarize(self.samples)

    @property
    def ops_per_sec(self) -> float:
        return self.summary.median

    @property
    def us_per_op(self) -> float:
        return 1e6 / self.ops_per_sec if self.ops_per_sec else float("inf")

    @property
    def bytes_per_sec(self) -> float | None:
        return self.ops_per_sec * self.block_size if self.block_size else None

    @property
    def cycles_per_op(self) -> float | None:
        per_round = [r.cycles_per_op for r in self.rounds if r.cycles_per_op is not None]
        if not per_round:
            return None
        return stats.summarize(per_round).median

    @property
    def total_ops(self) -> int:
        return sum(r.ops for r in self.rounds)


@dataclass(frozen=True)
class Problem:
    """Something not measured, and why: not offered, unavailable, or failed its checks."""

    algorithm: str
    implementation: str
    kind: str  # "not offered" | "unavailable" | "failed verification" | "error"
    reason: str
    operation: str | None = None


@dataclass(frozen=True)
class Verification:
    """The checks an (algorithm, implementation) passed before it was timed."""

    algorithm: str
    implementation: str
    checks: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    """One invocation of a suite, with the environment it ran in."""

    run_id: str
    started_at: str
    finished_at: str
    status: str  # "complete" | "interrupted"
    command: str
    label: str | None
    settings: Mapping[str, Any]
    environment: Mapping[str, Any]
    measurements: tuple[Measurement, ...] = ()
    problems: tuple[Problem, ...] = ()
    verifications: tuple[Verification, ...] = ()
    kind: str = "speed"  # "speed" | "files" | "tls"

"""Frozen result records. They become dicts only at the storage and JSON edges (`codec`).

A `Run` holds `Measurement`s (result rows), each with every timed round as a `LoopResult`
(the timing contract's sample), plus what was not measured (`Problem`) and what was
checked (`Verification`), and the `Fingerprint` it ran in. Fields a row carries beyond its
key and samples live in `attributes`; `record.models` types every one of them, so adding
one touches that model and the place that measures it.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.record.rounds import LoopResult, cycles_per_op_in_base
from pqbench.data.record.summary import Summary, summarize


class RowKey(NamedTuple):
    """What names a row across runs: the same four make the same row in every run."""

    algorithm: str
    implementation: str
    operation: str
    block_size: int | None


@dataclass(frozen=True)
class Measurement:
    """All rounds of one (algorithm, implementation, operation[, block size]).

    `unit` says what a round's count counts: "op" (one operation, of `block_size` bytes
    for ciphers and hashes) or "byte" (file rows: the bytes of one pass over a file).
    """

    algorithm: str
    implementation: str
    operation: str
    rounds: tuple[LoopResult, ...]
    #: Bytes that travel or are stored: public_key, secret_key, ciphertext, signature ...
    sizes: Mapping[str, int] = field(default_factory=dict)
    #: Bytes processed per operation (symmetric and hash rows); None for public-key rows.
    block_size: int | None = None
    #: Further facts of the row, typed by `record.models.ResultRow`: key_bits, processes,
    #: a file's path, a TLS cell's bytes, a memory row's figures ...
    attributes: Mapping[str, Any] = field(default_factory=dict)
    #: Label of the cycle counter behind cycles_per_op ("rdtsc (reference cycles)").
    counter: str | None = None
    unit: str = "op"

    @property
    def key(self) -> RowKey:
        return RowKey(self.algorithm, self.implementation, self.operation, self.block_size)

    @property
    def time_base(self) -> str:
        """The clock a round's `elapsed_ns` counts and every rate is in: "cpu" (the
        measuring thread's CPU time) or "wall"; rows stored before the choice are wall."""
        return "cpu" if self.attributes.get("time_base") == "cpu" else "wall"

    @property
    def samples(self) -> list[float]:
        """Per-round rate: operations (bytes, for a byte row) per second of the row's time
        base."""
        return [r.ops_per_sec for r in self.rounds if r.ops > 0]

    @property
    def summary(self) -> Summary:
        return summarize(self.samples)

    @property
    def rate(self) -> float:
        """Median per-round rate in the row's unit (0 for a row without rounds)."""
        samples = self.samples
        return statistics.median(samples) if samples else 0.0

    @property
    def ops_per_sec(self) -> float:
        return self.rate

    @property
    def us_per_op(self) -> float:
        return 1e6 / self.ops_per_sec if self.ops_per_sec else float("inf")

    @property
    def bytes_per_sec(self) -> float | None:
        if self.unit == "byte":
            return self.rate
        return self.rate * self.block_size if self.block_size else None

    @property
    def cycles_per_op(self) -> float | None:
        """Median counter cycles per operation in the row's time base
        (`rounds.cycles_per_op_in_base`: a CPU-time row's counts scaled to the thread's
        share of each round), so that cycles/op and µs/op tell one story."""
        wall = self.attributes.get("wall_ns")
        per_round = cycles_per_op_in_base(
            [r.ops for r in self.rounds], [r.elapsed_ns for r in self.rounds],
            [r.cycles for r in self.rounds], wall if isinstance(wall, list) else None,
            self.time_base)
        return statistics.median(per_round) if per_round else None

    @property
    def total_ops(self) -> int:
        return sum(r.ops for r in self.rounds)


@dataclass(frozen=True)
class Problem:
    """Something not measured, and why: not offered, unavailable, or failed its checks."""

    algorithm: str
    implementation: str
    kind: str  # "not offered" | "unavailable" | "failed verification" | "error" | "no rate"
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
    """One invocation of a suite, with the environment it ran in (`record.runs.new_run`
    makes one; `record.codec` reads one back)."""

    run_id: str
    started_at: str
    finished_at: str
    status: str  # "complete" | "interrupted" | "failed" (measured nothing)
    command: str
    label: str | None
    settings: Mapping[str, Any]
    environment: Fingerprint
    measurements: tuple[Measurement, ...] = ()
    problems: tuple[Problem, ...] = ()
    verifications: tuple[Verification, ...] = ()
    kind: str = "speed"  # "speed" | "files" | "tls" | "memory"

    def __post_init__(self) -> None:
        if not isinstance(self.environment, Fingerprint):
            object.__setattr__(self, "environment", Fingerprint(self.environment))

    @functools.cached_property
    def session(self) -> Mapping[str, Any] | None:
        """The `pqbench ab` session this run is one side of: its settings["ab"], holding the
        session's id and the side ("a" or "b"); None for any other run. Worked out once a
        run (a run is read-only): a fleet's history asks each of 10,000 runs several times."""
        info = self.settings.get("ab") if isinstance(self.settings, Mapping) else None
        if isinstance(info, Mapping) and isinstance(info.get("session"), str) \
                and info.get("side") in ("a", "b"):
            return info
        return None

"""What every implementation offers: support asked, not assumed; set-up outside the clock."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.vectors import Vector
from pqbench.data.record.rounds import LoopResult
from pqbench.timing.loop import run_for


class TimedOperation(ABC):
    """One operation, fully prepared: keys, messages and buffers already exist."""

    #: Bytes that travel or are stored (public_key, secret_key, ciphertext, signature ...).
    sizes: Mapping[str, int]
    #: Further facts stored with the row (key_bits, security_bits, quantum_security_bits).
    attributes: Mapping[str, object] = {}
    #: Name of the cycle counter the loop reads, None when it reads none.
    counter: str | None = None
    #: How it is warmed up before its timed rounds: one short untimed round, or untimed
    #: rounds until two agree (a JIT compiles the hot code while it runs: `measure.suite`).
    warmup: Literal["once", "steady"] = "once"
    #: A "steady" warm-up lasts at least this long (a JVM's JIT compiles its hottest code
    #: only after many calls, so two early rounds can agree before it has).
    warmup_min_seconds: float = 0.0

    @abstractmethod
    def run(self, seconds: float) -> LoopResult:
        """Time the operation for `seconds` (the one timing contract)."""


@dataclass
class PythonOperation(TimedOperation):
    """An operation timed by the Python loop around a zero-argument callable."""

    call: Callable[[], object]
    sizes: Mapping[str, int] = field(default_factory=dict)
    attributes: Mapping[str, object] = field(default_factory=dict)
    counter: str | None = None

    def run(self, seconds: float) -> LoopResult:
        return run_for(self.call, seconds)


#: A known-answer check of one vector: True/False, or the reason it does not apply to it.
VectorCheck = Callable[[Algorithm, Vector], bool | str]


@dataclass(frozen=True)
class Check:
    """One correctness check an implementation passed before it was timed."""

    name: str
    detail: str = ""


class Implementation(ABC):
    """A library through which algorithms can be measured."""

    #: Stable identifier shown in tables and stored with results.
    name: str
    #: One line saying what sits behind the name.
    description: str
    #: Kinds of algorithm this library is about at all. Pairs outside them are not listed
    #: as "not offered" (nobody expects X25519 from liboqs); gaps inside them are.
    kinds: frozenset[str] = frozenset(
        {"kem", "signature", "key-agreement", "rsa", "cipher", "hash"})
    #: Whether `speed --multi` can prepare it again in each of several processes.
    multi_process: bool = True

    def in_scope(self, alg: Algorithm) -> bool:
        return alg.kind in self.kinds

    def unavailable_reason(self) -> str | None:
        """None when usable here; otherwise why not and how to fix it."""
        return None

    def provision(self) -> None:
        """Make what this implementation needs before its first use here (a worker built
        once per machine, its progress logged); nothing for most. A failure is not raised:
        `unavailable_reason` then says it."""
        return None

    def failure(self) -> str | None:
        """Why the worker this implementation runs in stopped during this process (a
        stack's), else None: its rows from then on are errors, not rows it does not offer."""
        return None

    @abstractmethod
    def offers(self, alg: Algorithm, operation: str) -> str | None:
        """None when this implementation offers the operation; otherwise the reason."""

    @abstractmethod
    def self_check(self, alg: Algorithm) -> list[Check]:
        """Round trip and tamper checks; raises VerificationError on a wrong answer."""

    @abstractmethod
    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        """Make everything the operation needs, outside the clock.

        `block_size` is the bytes processed per operation for symmetric ciphers and hashes
        (None for public-key operations).
        """

    def vector_checks(self, alg: Algorithm) -> Mapping[str, VectorCheck | str]:
        """Known-answer checks this implementation takes for `alg`, as its own API allows:
        check name -> a check of one vector, or the reason the API cannot express it
        (`checks.kat` loads the vectors and tallies). Empty: pqbench has none."""
        return {}

    def without_vectors(self, alg: Algorithm) -> str:
        """Why `alg` has no known-answer checks here, and what is checked instead."""
        return f"pqbench has no known-answer vectors for {alg.name} through {self.name}"

    def versions(self) -> dict[str, object]:
        """Library versions for the environment fingerprint."""
        return {}

    def details(self) -> dict[str, dict[str, object]]:
        """Where the libraries were loaded from and how they were built, by library name."""
        return {}

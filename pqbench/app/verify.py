"""`pqbench verify`: which pairs are checked, their known-answer, round-trip and tamper
checks, and how the command ends."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pqbench.app.ending import Ending
from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import PUBLIC_KEY_KINDS, Algorithm
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.libraries.implementations.base import Implementation
from pqbench.measure.checks.verify import Outcome, pairs, verify_all


@dataclass(frozen=True)
class Plan:
    algorithms: Sequence[Algorithm]
    implementations: Sequence[Implementation]

    @property
    def size(self) -> int:
        """Pairs to check: an algorithm and an implementation that has it in scope."""
        return len(pairs(self.algorithms, self.implementations))


def plan(algorithm: Sequence[str] | None, implementation: Sequence[str] | None) -> Plan:
    """The algorithms named (every public-key one when none is) through the implementations
    named (every one when none is); a foreign worker in scope is built and started here."""
    kems, sigs = liboqs_mechanisms()
    names = list(algorithm or [a.name for a in algorithms.all_algorithms()
                           if a.kind in PUBLIC_KEY_KINDS])
    chosen = algorithms.resolve(names, kems, sigs)
    impls = select(list(implementation) if implementation else None)
    for impl in impls:
        if any(impl.in_scope(alg) for alg in chosen):
            impl.provision()
    return Plan(chosen, impls)


@dataclass(frozen=True)
class Verified:
    outcomes: list[Outcome]
    seconds: float

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def ending(self) -> Ending | None:
        """1 when any check failed."""
        return Ending(f"{len(self.failed)} check(s) failed", 1) if self.failed else None


def verify(chosen: Plan, advance: Callable[..., None]) -> Verified:
    started = time.monotonic()
    outcomes = verify_all(chosen.algorithms, chosen.implementations, advance)
    return Verified(outcomes, time.monotonic() - started)

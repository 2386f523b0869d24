"""Verification: round-trip and tamper checks, then known-answer tests, per implementation.

`pqbench speed` runs the self-checks before timing; `pqbench verify` runs both kinds and
reports each check as a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from pqbench.algorithms.base import Algorithm
from pqbench.errors import NotOfferedError, VerificationError
from pqbench.implementations.base import Implementation


@dataclass(frozen=True)
class Outcome:
    """One check of one (algorithm, implementation)."""

    algorithm: str
    implementation: str
    check: str
    status: str  # "passed" | "failed" | "not offered" | "unavailable"
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def self_checks(alg: Algorithm, impl: Implementation) -> list[Outcome]:
    first = alg.operations[0]
    reason = impl.offers(alg, first)
    if reason:
        status = "unavailable" if impl.unavailable_reason() else "not offered"
        return [Outcome(alg.name, impl.name, "all", status, reason)]
    try:
        checks = impl.self_check(alg)
    except VerificationError as exc:
        return [Outcome(alg.name, impl.name, "self-check", "failed", str(exc))]
    except NotOfferedError as exc:
        return [Outcome(alg.name, impl.name, "self-check", "not offered", str(exc))]
    return [Outcome(alg.name, impl.name, c.name, "passed", c.detail) for c in checks]


def verify_all(algorithms: Sequence[Algorithm],
               implementations: Sequence[Implementation]) -> list[Outcome]:
    """Self-checks and known-answer tests for every pair that is offered."""
    from pqbench.checks.kat import known_answer_checks

    outcomes: list[Outcome] = []
    for alg in algorithms:
        for impl in implementations:
            if not impl.in_scope(alg):
                continue
            pair = self_checks(alg, impl)
            outcomes.extend(pair)
            if all(o.status == "passed" for o in pair):
                outcomes.extend(known_answer_checks(alg, impl))
    return outcomes

"""`pqbench verify`: each pair's pre-timing checks, then its known-answer tests.

Every check is one `Outcome` row; known-answer tests run only for pairs whose own checks
passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pqbench.algorithms.base import Algorithm
from pqbench.checks.kat import known_answer_checks
from pqbench.checks.outcome import Outcome
from pqbench.checks.pair import check_pair
from pqbench.implementations.base import Implementation

__all__ = ["Outcome", "self_checks", "verify_all"]


def self_checks(alg: Algorithm, impl: Implementation) -> list[Outcome]:
    """The pair's pre-timing checks (`checks.pair`) as rows: each check passed, or the one
    problem that stopped the pair ("all" when it is not offered at all)."""
    checked = check_pair(alg, impl)
    problem = checked.problem
    if problem is None:
        return [Outcome(alg.name, impl.name, c.name, "passed", c.detail)
                for c in checked.checks]
    if checked.refused:
        return [Outcome(alg.name, impl.name, "all", problem.kind, problem.reason)]
    status = "failed" if problem.kind == "failed verification" else problem.kind
    return [Outcome(alg.name, impl.name, "self-check", status, problem.reason)]


def verify_all(algorithms: Sequence[Algorithm],
               implementations: Sequence[Implementation]) -> list[Outcome]:
    """Self-checks and known-answer tests for every pair that is offered."""
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

"""`pqbench verify`: each pair's pre-timing checks, then its known-answer tests.

Every check is one `Outcome` row; known-answer tests run only for pairs whose own checks
passed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations.base import Implementation
from pqbench.measure.checks.kat import known_answer_checks
from pqbench.measure.checks.outcome import Outcome
from pqbench.measure.checks.pair import check_pair

__all__ = ["Outcome", "pairs", "self_checks", "tally", "verify_all"]


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


def pairs(algorithms: Sequence[Algorithm], implementations: Sequence[Implementation]
          ) -> list[tuple[Algorithm, Implementation]]:
    """The (algorithm, implementation) pairs `verify_all` checks, in its order."""
    return [(alg, impl) for alg in algorithms for impl in implementations
            if impl.in_scope(alg)]


def verify_all(algorithms: Sequence[Algorithm], implementations: Sequence[Implementation],
               progress: Callable[[str], None] | None = None) -> list[Outcome]:
    """Self-checks and known-answer tests for every pair that is offered; `progress` is
    told each pair ("ML-KEM-768 [liboqs]") as its checks start."""
    outcomes: list[Outcome] = []
    for alg, impl in pairs(algorithms, implementations):
        if progress:
            progress(f"{alg.name} [{impl.name}]")
        pair = self_checks(alg, impl)
        outcomes.extend(pair)
        if all(o.status == "passed" for o in pair):
            outcomes.extend(known_answer_checks(alg, impl))
    return outcomes


def tally(outcomes: Sequence[Outcome]) -> dict[str, int]:
    """Checks per status, passed first, failed last: {"passed": 129, "not offered": 38}."""
    order = ("passed", "not offered", "unavailable", "failed")
    counts = {status: sum(1 for o in outcomes if o.status == status)
              for status in dict.fromkeys([*order[:-1], *(o.status for o in outcomes),
                                           order[-1]])}
    return {status: n for status, n in counts.items() if n or status == "failed"}

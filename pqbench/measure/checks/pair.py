"""The check every (algorithm, implementation) passes before anything of it is timed.

One function for `speed`, the `ab` worker and `verify`: support asked first (a pair not
offered, or an implementation unavailable here, is a problem with its reason), then the
implementation's own round-trip and tamper checks (`Implementation.self_check`); a wrong
answer is a "failed verification", never a timing.
"""

from __future__ import annotations

from dataclasses import dataclass

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.data.record.results import Problem, Verification
from pqbench.libraries.implementations.base import Check, Implementation
from pqbench.platform.errors import (
    ImplementationUnavailable,
    NotOfferedError,
    VerificationError,
    WorkerFailed,
)


@dataclass(frozen=True)
class PairCheck:
    """What checking one pair found: the checks it passed, or the problem that stops it.

    `refused` is True when the pair was not offered at all, so no check ran.
    """

    algorithm: str
    implementation: str
    checks: tuple[Check, ...] = ()
    problem: Problem | None = None
    refused: bool = False

    @property
    def passed(self) -> bool:
        return self.problem is None

    @property
    def verification(self) -> Verification:
        return Verification(self.algorithm, self.implementation,
                            tuple(c.name for c in self.checks))


def check_pair(alg: Algorithm, impl: Implementation) -> PairCheck:
    """Support first, then the self-checks; the first problem found stops the pair."""
    pair = (alg.name, impl.name)
    try:
        reason = impl.offers(alg, alg.all_operations[0])
        if reason:
            kind = "unavailable" if impl.unavailable_reason() else "not offered"
            return PairCheck(*pair, problem=Problem(*pair, kind, reason), refused=True)
        checks = impl.self_check(alg)
    except VerificationError as exc:
        return PairCheck(*pair, problem=Problem(*pair, "failed verification", str(exc)))
    except NotOfferedError as exc:
        return PairCheck(*pair, problem=Problem(*pair, "not offered", str(exc)))
    except ImplementationUnavailable as exc:
        return PairCheck(*pair, problem=Problem(*pair, "unavailable", str(exc)),
                         refused=True)
    except WorkerFailed as exc:
        # Its worker died, hung or broke the protocol: an error of this pair, not a
        # wrong answer (which is a failed verification).
        return PairCheck(*pair, problem=Problem(*pair, "error", str(exc)))
    return PairCheck(*pair, checks=tuple(checks))

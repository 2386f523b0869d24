"""When a row of a paired session may stop: a fixed set of looks with alpha spent evenly.

Looking at the data after every pair and stopping at the first p < alpha would call
changes that are not there far more often than alpha (Armitage, McPherson & Rowe, JRSS A
132, 1969). pqbench therefore looks only at a fixed, pre-set number K of pair counts
(12, 24, 48, 96, 192, 384), and each look tests at alpha / K and builds its interval at
1 - alpha / K: by Bonferroni's inequality the chance of any false "faster"/"slower", and of
any interval missing the true ratio, over all looks together stays below alpha (the
simplest alpha-spending rule; cf. Lan & DeMets, Biometrika 70, 1983).

A row whose time share runs out between two looks takes one last look there, in place of
the next scheduled one, so it never looks more than K times. The schedule of looks depends
on time only; time is the sum of both sides' rounds, which swapping A and B within a pair
leaves unchanged, so under "no difference" the stopping time is independent of the signs
the signed-rank test uses and each look stays exact.

The first look comes at 12 pairs: the fewest with which the exact signed-rank test can
reach p < 0.01 / 6 is 11 (2 / 2**11). A session whose round pairs rotate over J worker
pairs is tested over those (a t test with J - 1 degrees of freedom at each look's level,
`signedrank.compare_worker_pairs`); every look count is a multiple of 12, so with 3, 4,
6 or 12 worker pairs each has taken equally many round pairs at every scheduled look.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pqbench.analysis import signedrank, verdict

#: Pair counts at which a row is analysed; K = 6 looks.
LOOKS = (12, 24, 48, 96, 192, 384)


@dataclass(frozen=True)
class Looks:
    """The schedule of one session and the level of each look."""

    counts: tuple[int, ...] = LOOKS
    alpha: float = 0.01

    @property
    def per_look(self) -> float:
        return self.alpha / len(self.counts)

    def due(self, pairs: int) -> bool:
        return pairs in self.counts

    @property
    def last(self) -> int:
        return self.counts[-1]


def analyse(before: list[float], after: list[float], looks: Looks,
            threshold: float | None, workers: Sequence[object] | None = None) -> verdict.Outcome:
    """The row's outcome at a look, at the per-look alpha: over the worker pairs that took
    the round pairs (``workers[i]`` took pair i) when given, else pair by pair."""
    if workers is not None:
        return signedrank.compare_worker_pairs(before, after, workers, threshold=threshold,
                                               alpha=looks.per_look)
    return signedrank.compare_pairs(before, after, threshold=threshold, alpha=looks.per_look)


def decided(outcome: verdict.Outcome) -> bool:
    """faster, slower and no change end a row; inconclusive and too few runs go on."""
    return outcome.verdict in (*verdict.CHANGED, verdict.NO_CHANGE)

"""The verdict rule every comparison shares, and what a verdict is made from.

A comparison of two configurations ends in one of five verdicts:

* ``faster`` / ``slower``: the test rejects "no difference" (p < alpha) AND the whole
  confidence interval of the ratio lies beyond the noise band [1/(1+t), 1+t];
* ``no change``: the whole interval lies inside the band: whatever the difference is, it is
  smaller than the band (an equivalence statement, as in Schuirmann's two one-sided tests:
  an interval inside the margin);
* ``inconclusive``: anything else: the interval is too wide to tell, or it straddles an edge
  of the band;
* ``too few runs``: with this many independent units (runs, or pairs in an `ab` session) no
  outcome of the exact test could reach p < alpha, so no change can ever be shown, and no
  run-to-run spread of the machine was at hand to judge them against (`noise`).

The band is symmetric in log, so "twice as fast" and "half as fast" need equal evidence.
The unit of replication and the method differ between callers (runs: `replicates`; pairs:
`signedrank`); the rule and the vocabulary are here, once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE, TOO_FEW = (
    "faster", "slower", "no change", "inconclusive", "too few runs")
VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE, TOO_FEW)
CHANGED = (FASTER, SLOWER)
#: The verdicts that decide nothing: a CI gate that fails closed fails on these too.
UNDECIDED = (INCONCLUSIVE, TOO_FEW)
#: The smallest noise band `--threshold auto` uses, whatever the noise floor.
MIN_THRESHOLD = 0.05


@dataclass(frozen=True)
class Outcome:
    """Before against after, estimated from one consistent model.

    ``before`` and ``after`` are the two levels (rates) and ``ratio`` = after / before
    exactly, so the three never contradict each other. ``units_*`` are
    the independent replicates each side contributed (runs, or pairs), ``spread_*`` the
    standard deviation of their ln estimates (None with fewer than two), ``floor`` the noise
    floor (None when it cannot be estimated) and ``threshold`` the band actually used.
    """

    before: float
    after: float
    ratio: float
    ci_low: float
    ci_high: float
    ci_level: float
    p_value: float
    verdict: str
    reason: str
    units_before: int
    units_after: int
    spread_before: float | None
    spread_after: float | None
    floor: float | None
    threshold: float
    method: str
    #: What the verdict rests on beyond its own runs: the machine's run-to-run spread it
    #: was judged against (`noise.Spread.describe`), or an `ab` session; None otherwise.
    basis: str | None = None

    @property
    def changed(self) -> bool:
        return self.verdict in CHANGED

    def as_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "ratio": self.ratio,
                "ci_low": finite(self.ci_low), "ci_high": finite(self.ci_high),
                "ci_level": self.ci_level, "p_value": self.p_value, "verdict": self.verdict,
                "reason": self.reason}


def finite(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded interval end is null."""
    return value if value is not None and math.isfinite(value) else None


def threshold_for(floor: float | None, fixed: float | None) -> float:
    """The band a row is judged against: ``fixed`` when given, else max(5 %, the floor)."""
    if fixed is not None:
        return fixed
    return max(MIN_THRESHOLD, floor if floor is not None else 0.0)


def floor_from_spread(spread: float | None) -> float | None:
    """A noise floor as a fraction: one standard deviation ``spread`` of ln rate, exp(s) - 1."""
    return None if spread is None else math.expm1(spread)


def decide(p_value: float, log_low: float, log_high: float, *, alpha: float,
           threshold: float) -> tuple[str, str]:
    """The verdict and its reason from a p-value and a (log) interval of the ratio.

    Callers have already answered ``too few runs`` where the test cannot reach alpha.
    """
    bound = math.log1p(threshold)
    band = f"±{threshold * 100:.1f} %"
    interval = f"{_fmt(log_low)}–{_fmt(log_high)}"
    if p_value < alpha and log_low > bound:
        return FASTER, f"p={p_value:.3g} and the CI {interval} lies above 1+t = {1 + threshold:.3g}"
    if p_value < alpha and log_high < -bound:
        return SLOWER, (f"p={p_value:.3g} and the CI {interval} lies below 1/(1+t) = "
                        f"{1 / (1 + threshold):.3g}")
    if log_low >= -bound and log_high <= bound:
        return NO_CHANGE, f"the CI {interval} lies inside the {band} band"
    if p_value < alpha:
        return INCONCLUSIVE, (f"p={p_value:.3g}, but the CI {interval} reaches inside the "
                              f"{band} band")
    return INCONCLUSIVE, (f"p={p_value:.3g} is not below alpha={alpha:g} and the CI "
                          f"{interval} reaches beyond the {band} band")


def _fmt(log_value: float) -> str:
    return f"{math.exp(log_value):.3g}" if math.isfinite(log_value) else (
        "0" if log_value < 0 else "∞")


# --- how many units an exact test needs ------------------------------------------------


def smallest_two_sample_p(n: int, m: int) -> float:
    """Smallest two-sided p of an exact permutation or rank test on n and m units.

    Complete separation is one arrangement of C(n + m, n) under the null, so the two-sided
    minimum is 2 / C(n + m, n) (Mann & Whitney, Ann. Math. Statist. 18, 1947; the same
    holds for any permutation test of the two group means, Pitman, JRSS Suppl. 4, 1937).
    """
    if n < 1 or m < 1:
        return 1.0
    arrangements = math.comb(n + m, n)
    # Past about 10^308 arrangements (500 runs a side) the quotient is below the smallest
    # float, and dividing by an int that large raises OverflowError instead of giving 0.
    return min(1.0, 2.0 / arrangements) if arrangements.bit_length() < 1000 else 0.0


def runs_needed(n: int, m: int, alpha: float) -> str:
    """Which run counts can reach p < alpha: "5 a side, or 4 and 6" (alpha 0.01).

    Lists the smallest balanced design, the cheapest design one run smaller on one side
    and, when one side already has more runs, what the other side would need.
    """
    balanced = 1
    while smallest_two_sample_p(balanced, balanced) >= alpha:
        balanced += 1
    options = [f"{balanced} a side"]
    if balanced > 1:
        other = _partner(balanced - 1, alpha)
        if other is not None:
            options.append(f"{balanced - 1} and {other}")
    have = max(n, m)
    if have > balanced:
        partner = next((k for k in range(1, balanced) if
                        smallest_two_sample_p(k, have) < alpha), None)
        if partner is not None:
            options.append(f"{partner} against the {have} already recorded")
    return ", or ".join(options)


def _partner(k: int, alpha: float, limit: int = 1000) -> int | None:
    for other in range(k, limit):
        if smallest_two_sample_p(k, other) < alpha:
            return other
    return None


def smallest_signed_rank_p(n: int) -> float:
    """Smallest two-sided p of the exact Wilcoxon signed-rank test on n pairs: 2 / 2**n
    (all n differences of one sign; Wilcoxon, Biometrics Bull. 1, 1945)."""
    return min(1.0, 2.0 / 2.0 ** n) if n >= 1 else 1.0


def pairs_needed(alpha: float) -> int:
    """The fewest pairs with which the exact signed-rank test can reach p < alpha."""
    n = 1
    while smallest_signed_rank_p(n) >= alpha:
        n += 1
    return n

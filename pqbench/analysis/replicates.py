"""Comparisons with the run as the unit of replication: pure functions, no I/O.

Rounds of one run are taken back to back and share that run's phase of a drifting machine
(clock speed, co-tenants, cache and page placement), so they are not independent evidence:
pooling every round of every run as independent samples (pseudo-replication) makes
intervals and p-values far too narrow. Following Kalibera & Jones, "Rigorous
Benchmarking in Reasonable Time" (ISMM 2013), variation is taken at the level where it
enters, the run:

* each run gives one estimate per row: the median of its rounds' ln rates;
* a side's level is the mean of its runs' ln estimates (the geometric mean of the run
  medians); ``before``, ``after`` and ``ratio = after / before`` all come from these levels;
* the ratio's interval is a two-level (hierarchical) percentile bootstrap: resample runs
  with replacement, then rounds with replacement within each resampled run (Davison &
  Hinkley, *Bootstrap Methods and their Application*, 1997, section 3.8; Kalibera & Jones
  2013, section 4). With few runs the bootstrap spread of a mean shrinks by a factor
  (R - 1) / R in variance, and a percentile interval from a few clusters is too narrow
  (in simulation, 96 % coverage for a nominal 99 % with five runs a side). Hesterberg's
  "expanded percentile" interval (Hesterberg, The American Statistician 69, 2015, section
  5.1) corrects both: each side's resampled levels are expanded about the observed level
  by sqrt(R / (R - 1)), and the resampled log ratios about the observed one by
  t(1 - alpha/2, df) / z(1 - alpha/2), df = R_before + R_after - 2 (the pooled degrees of
  freedom). With no side holding two runs the between-run variance is unknown and the
  interval is unbounded. The generator is seeded, so the same data give the same bytes.
  Where both sides hold `LIMIT_RUNS` runs or more, the bootstrap's limit is taken instead
  of drawing it (`level_cumulants`, `_limit_quantiles`): exact cumulants, Cornish-Fisher;
* the p-value is an exact two-sided Mann-Whitney U (Wilcoxon rank-sum) test over the run
  estimates, i.e. an exact permutation test of their ranks (Mann & Whitney 1947);
* the noise floor of a row is the pooled between-run standard deviation s of the ln run
  estimates within each side, reported as exp(s) - 1: how far one run of this row lands
  from its side's level on this machine, by itself.

Where the exact test cannot reach alpha on these run counts (1 against 1, 5 against 1),
the runs are judged against the machine's run-to-run spread of the row instead, when the
caller has one (`noise.Spread`: from the store's replicated runs, sessions and
calibrations, or the documented prior): the difference of the two sides' mean ln run
estimates, d = mean(after) - mean(before), has standard error SE = s sqrt(1/n + 1/m),
and d / SE follows Student's t with the spread's degrees of freedom when the runs scatter
about their builds' levels as the model's runs did (a two-sample t test with the variance
known from other samples of the same machine; with one run a side, a prediction interval
for the next run). Its interval is d ± t(1 - alpha/2, df) SE, its p-value two-sided, the
band max(5 %, exp(s) - 1), and the verdict follows `verdict.decide` as every other.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from pqbench.analysis import stats, verdict
from pqbench.analysis.noise import Spread
from pqbench.data.record.summary import summarize

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Bootstrap resamples of the 99 % interval (`draws_for`): its tails hold 0.5 % each, 20
#: resamples beyond each end at this size, enough for a stable percentile.
DRAWS = 4000
#: Fixed seed: reports must be byte-for-byte reproducible from the same stored data.
SEED = 20130613

METHOD = ("run as the unit: per run the median of its rounds' ln rates; levels are means of "
          "run estimates (geometric means of run medians); two-level bootstrap CI (runs, "
          "then rounds), expanded for few runs; exact Mann-Whitney U over run estimates")
SPREAD_METHOD = ("run as the unit, judged against the machine's run-to-run spread: per run "
                 "the median of its rounds' ln rates; levels are means of run estimates; "
                 "t interval and two-sided t test of their difference with SE = s sqrt(1/n "
                 "+ 1/m), s the row's spread from the noise model, at its degrees of freedom")


def log_runs(runs: Sequence[Sequence[float]], what: str) -> list[FloatArray]:
    """ln rates per run; every run needs at least one positive, finite rate. Checked and
    logged at once, not run by run: runs of equal length (the usual case) come back as the
    rows of one 2-D array."""
    if not runs:
        raise ValueError(f"{what}: need at least one run")
    if len({len(run) for run in runs}) == 1:
        matrix = np.asarray(runs, dtype=np.float64)
        if matrix.ndim == 2 and matrix.shape[1] > 0 and np.all(np.isfinite(matrix)) \
                and np.all(matrix > 0):
            return list(np.log(matrix))
    arrays = [np.asarray(values, dtype=np.float64) for values in runs]
    if any(array.ndim != 1 or array.size == 0 for array in arrays):
        raise ValueError(f"{what}: every run needs finite, positive rates")
    flat = np.concatenate(arrays)
    if not np.all(np.isfinite(flat)) or np.any(flat <= 0):
        raise ValueError(f"{what}: every run needs finite, positive rates")
    return np.split(np.log(flat), np.cumsum([array.size for array in arrays])[:-1])


def run_estimates(logs: Sequence[FloatArray]) -> FloatArray:
    """One estimate per run: the median of its ln rates."""
    if len({run.size for run in logs}) == 1:
        return np.median(np.stack(logs), axis=1)  # runs of equal length, at once
    return np.array([float(np.median(run)) for run in logs])


def spread_of(estimates: FloatArray) -> float | None:
    """Between-run standard deviation of ln estimates (n - 1 denominator); None below 2."""
    return float(np.std(estimates, ddof=1)) if estimates.size >= 2 else None


def pooled_spread(*sides: FloatArray) -> float | None:
    """Pooled within-side standard deviation of run estimates: sqrt(SS / (N - k)).

    Each side is centred on its own level, so a real change between the sides does not
    count as noise. None when no side has two runs.
    """
    squares = sum(float(np.sum((side - side.mean()) ** 2)) for side in sides)
    freedom = sum(side.size for side in sides) - len(sides)
    return math.sqrt(squares / freedom) if freedom > 0 else None


def draws_for(tail: float) -> int:
    """Resamples for a percentile interval with `tail` in each tail: at least 20 beyond each
    end (Davison & Hinkley section 5.2.3), and never fewer than 1000: 4000 at 99 %, 1000 at
    95 %."""
    return max(1000, math.ceil(20 / tail - 1e-9))


@lru_cache(maxsize=64)
def median_positions(k: int) -> tuple[IntArray, IntArray, FloatArray]:
    """Where the median of a resample of k rounds lands among the run's sorted rounds.

    Resampling k rounds with replacement and taking the median picks the order statistics
    at positions (lo, hi) of the sorted run, averaged ((k-1)//2 and k//2: one position for
    odd k). Which positions depends on k alone, never on the values, so the two-level
    bootstrap can draw the resampled median directly from this exact distribution instead
    of drawing k rounds and sorting them: the same resampling distribution, k times fewer
    random numbers and no sort. With l = (k-1)//2 and N(<=a) ~ Binomial(k, (a+1)/k) draws
    at or below position a:

    * P(lo = a) = P(N(<=a) >= l+1) - P(N(<=a-1) >= l+1);
    * for even k and a < b, (lo, hi) = (a, b) needs exactly l+1 draws at or below a, one at
      least at a, none strictly between, one at least at b:
      C(k, l+1) [((a+1)/k)^(l+1) - (a/k)^(l+1)] [((k-b)/k)^(k-l-1) - ((k-b-1)/k)^(k-l-1)];
      P(lo = hi = a) is what remains of P(lo = a).

    Returns (lo, hi, probability) over the pairs that can occur; the tests check it against
    enumerating all k**k resamples.
    """
    from scipy import special  # on first use: importing it takes a tenth of a second

    low = (k - 1) // 2
    at = np.arange(k)
    # bdtrc(l, k, p) = P(Binomial(k, p) > l)
    marginal = special.bdtrc(low, k, (at + 1) / k) - special.bdtrc(low, k, at / k)
    if k % 2:
        return at, at, marginal
    a, b = at[:, None], at[None, :]
    rest = k - low - 1
    joint = np.where(b > a, math.comb(k, low + 1)
                     * (((a + 1) / k) ** (low + 1) - (a / k) ** (low + 1))
                     * (((k - b) / k) ** rest - ((k - b - 1) / k) ** rest), 0.0)
    joint[at, at] = marginal - joint.sum(axis=1)
    lo, hi = np.nonzero(joint > 0)
    return lo, hi, joint[lo, hi]


#: Position tables up to this size are searched by comparisons, larger ones by bisection.
_SCAN = 12


def bootstrap_levels(logs: Sequence[FloatArray], rng: np.random.Generator,
                     draws: int = DRAWS) -> FloatArray:
    """Two-level bootstrap of a side's level (mean of run medians of ln rates), expanded.

    Each resample picks R runs with replacement and, within each picked run, the median of
    its rounds resampled with replacement; that median is drawn from its exact distribution
    over the run's order statistics (`median_positions`). One uniform number per picked run
    gives both: its integer part (scaled by R) is the run, its fraction the median's place.
    """
    runs = len(logs)
    sizes = {run.size for run in logs}
    uniform = len(sizes) == 1  # the usual case: one position table for every run
    if uniform:
        lo, hi, probability = median_positions(sizes.pop())
        ordered = np.sort(np.stack(logs), axis=1)
        table = ((ordered[:, lo] + ordered[:, hi]) / 2).ravel()
        cumulative = [np.cumsum(probability)] * runs
    else:
        values, cumulative = [], []
        for run in logs:
            lo, hi, probability = median_positions(run.size)
            ordered = np.sort(run)
            values.append((ordered[lo] + ordered[hi]) / 2)
            cumulative.append(np.cumsum(probability))
        table = np.concatenate(values)
    # Below R, also where rounding would carry a fraction just under 1 up to R.
    scaled = np.minimum(rng.random((draws, runs)) * runs, np.nextafter(runs, 0))
    width = table.size // runs
    if uniform and width <= _SCAN:
        # The run is the integer part; the place in its table is how many of the table's
        # cumulative probabilities the fraction reaches.
        picked = scaled.astype(np.int64)
        fraction = scaled - picked
        place = picked * width
        for edge in cumulative[0][:-1]:
            place += fraction >= edge
    else:
        # Run i owns [i, i + 1); its places split that by their cumulative probabilities.
        bounds = np.concatenate([i + c for i, c in enumerate(cumulative)])[:-1]
        place = places(bounds, scaled, cumulative[0] if uniform else None)
    levels = np.take(table, place).mean(axis=1)
    observed = float(run_estimates(logs).mean())
    if runs >= 2:
        levels = observed + math.sqrt(runs / (runs - 1)) * (levels - observed)
    return levels


def places(bounds: FloatArray, draws: FloatArray, cumulative: FloatArray | None = None
           ) -> NDArray[np.intp]:
    """np.searchsorted(bounds, draws, side="right"), where `bounds` is run i's own
    `cumulative` table shifted by i for every run (its last bound left out): each draw's
    place guessed in its own run's short table from its integer part and its fraction,
    then checked against `bounds` (sorted, a place p is the answer exactly where
    bounds[p - 1] <= draw < bounds[p]); a draw a rounding puts elsewhere is searched in
    the whole. The same places, without a search of every draw through every run's."""
    if cumulative is None or bool(np.any(np.diff(bounds) < 0)):
        return np.searchsorted(bounds, draws, side="right")
    run = draws.astype(np.int64)
    guess = run * cumulative.size + search_fractions(cumulative[:-1], draws - run)
    edges = np.concatenate([[-np.inf], bounds, [np.inf]])
    wrong = ~((edges[guess] <= draws) & (draws < edges[guess + 1]))
    if wrong.any():
        guess[wrong] = np.searchsorted(bounds, draws[wrong], side="right")
    return guess


#: The cells of [0, 1) `search_fractions` looks a fraction up in: a power of two, so a
#: fraction's cell, floor(f * GRID), is exact.
GRID = 4096


def search_fractions(table: FloatArray, fractions: FloatArray) -> NDArray[np.intp]:
    """np.searchsorted(table, fractions, side="right") for fractions in [0, 1) and a short
    sorted table (a run's cumulative median-place probabilities): looked up by the
    fraction's cell of `GRID` equal cells, searched only in the few cells a table entry
    falls inside. A bootstrap of hundreds of runs places millions of draws; numpy's
    search of each took most of the time."""
    edges = np.arange(GRID + 1, dtype=np.float64) / GRID
    low = np.searchsorted(table, edges[:-1], side="right")
    # Every fraction of a cell [k/G, (k+1)/G) has the same count of entries <= it, but
    # where an entry lies strictly inside the cell.
    mixed = low != np.searchsorted(table, edges[1:], side="left")
    cells = (fractions * GRID).astype(np.intp)
    found = low[cells]
    searched = mixed[cells]
    if searched.any():
        found[searched] = np.searchsorted(table, fractions[searched], side="right")
    return found


#: Runs a side holds from which `ratio_interval` takes the bootstrap's limit (its exact
#: cumulants) instead of drawing it: the level is then a mean of at least this many
#: independent draws, whose distribution Cornish-Fisher's first correction (skewness)
#: gives to within its next term, O(1/R); drawing 4,000 resamples of hundreds of runs
#: took most of a fleet's history (a step's sides hold hundreds of runs).
LIMIT_RUNS = 100


def level_cumulants(logs: Sequence[FloatArray]) -> tuple[float, float, float]:
    """The first three cumulants of a side's expanded bootstrap level (`bootstrap_levels`),
    exactly, without drawing: a resampled level is the mean of R independent draws, each a
    run picked uniformly and that run's resampled median (`median_positions`), expanded
    about the observed level by c = sqrt(R / (R - 1)). A draw's mean mu, variance v and
    third central moment m3 over every (run, median place) give the level's cumulants
    observed + c (mu - observed), c^2 v / R and c^3 m3 / R^2."""
    runs = len(logs)
    value, weight = _median_places(logs)
    weight = weight / runs
    # Sums of products, not `@`: a BLAS dot product wakes OpenBLAS's threads, which then
    # spin on every other core for a while (1.5 s of CPU over a fleet's history).
    mean = float((value * weight).sum())
    centred = value - mean
    variance, third = float((centred ** 2 * weight).sum()), float((centred ** 3 * weight).sum())
    observed = float(run_estimates(logs).mean())
    c = math.sqrt(runs / (runs - 1)) if runs >= 2 else 1.0
    return observed + c * (mean - observed), c * c * variance / runs, c ** 3 * third / runs ** 2


def _median_places(logs: Sequence[FloatArray]) -> tuple[FloatArray, FloatArray]:
    """Every (run, median place) of `level_cumulants`: the resampled median's value and its
    probability (`median_positions`), run after run. Runs of one length (the usual case;
    a step's sides hold hundreds) are sorted and indexed at once, as the rows of one array:
    the same values in the same order as run by run, which a fleet's history did 10,000
    times."""
    if len({run.size for run in logs}) == 1:
        lo, hi, probability = median_positions(logs[0].size)
        ordered = np.sort(np.stack(logs), axis=1)
        return (ordered[:, lo] + ordered[:, hi]).ravel() / 2, np.tile(probability, len(logs))
    values, weights = [], []
    for run in logs:
        lo, hi, probability = median_positions(run.size)
        ordered = np.sort(run)
        values.append((ordered[lo] + ordered[hi]) / 2)
        weights.append(probability)
    return np.concatenate(values), np.concatenate(weights)


def _limit_quantiles(before: Sequence[FloatArray], after: Sequence[FloatArray],
                     tails: Sequence[float]) -> list[float]:
    """Quantiles of the bootstrap's ln(after level / before level) in its limit of
    infinitely many resamples: the difference of the two sides' levels has the cumulants'
    difference (mean, third) and sum (variance); Cornish-Fisher with the skewness term
    (Hall, The Bootstrap and Edgeworth Expansion, 1992, section 2.5)."""
    (a1, a2, a3), (b1, b2, b3) = level_cumulants(after), level_cumulants(before)
    mean, variance, third = a1 - b1, a2 + b2, a3 - b3
    sd = math.sqrt(variance)
    skew = third / sd ** 3 if sd > 0 else 0.0
    normal = statistics.NormalDist()
    return [mean + sd * (z + skew * (z * z - 1) / 6)
            for z in (normal.inv_cdf(tail) for tail in tails)]


def ratio_interval(before: Sequence[FloatArray], after: Sequence[FloatArray], alpha: float,
                   draws: int = DRAWS, seed: int = SEED) -> tuple[float, float]:
    """(1 - alpha) expanded percentile interval of ln(after level / before level); from
    the bootstrap's limit (`_limit_quantiles`) where both sides hold `LIMIT_RUNS` runs."""
    freedom = len(before) + len(after) - 2
    if freedom < 1:
        return -math.inf, math.inf
    observed = float(run_estimates(after).mean() - run_estimates(before).mean())
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    widen = _t_quantile(1 - alpha / 2, freedom) / z
    if min(len(before), len(after)) >= LIMIT_RUNS:
        low, high = _limit_quantiles(before, after, (alpha / 2, 1 - alpha / 2))
        return observed + widen * (low - observed), observed + widen * (high - observed)
    rng = np.random.default_rng(seed)
    shifts = bootstrap_levels(after, rng, draws) - bootstrap_levels(before, rng, draws)
    shifts = observed + widen * (shifts - observed)
    low, high = np.quantile(shifts, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def compare_replicates(before: Sequence[Sequence[float]], after: Sequence[Sequence[float]], *,
                 threshold: float | None = None, alpha: float = 0.01,
                 draws: int | None = None, spread: Spread | None = None) -> verdict.Outcome:
    """Is ``after`` faster or slower than ``before``, with the run as the unit?

    ``before`` and ``after`` hold, per run, its per-round rates. ``threshold`` None means
    auto: max(5 %, the row's noise floor). Levels, interval and p as the module docstring
    says; the verdict follows `verdict.decide`. When the exact test on these run counts
    cannot reach alpha: judged against ``spread`` (`against_spread`), or without one ``too
    few runs`` (the reason says how many runs would).
    """
    if threshold is not None and threshold < 0:
        raise ValueError("threshold must be >= 0")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    logs_before, logs_after = log_runs(before, "before"), log_runs(after, "after")
    est_before, est_after = run_estimates(logs_before), run_estimates(logs_after)
    n, m = est_before.size, est_after.size
    if spread is not None and verdict.smallest_two_sample_p(n, m) >= alpha:
        return against_spread(est_before, est_after, spread, threshold=threshold, alpha=alpha)
    floor = verdict.floor_from_spread(pooled_spread(est_before, est_after))
    band = verdict.threshold_for(floor, threshold)
    shift = float(est_after.mean() - est_before.mean())
    log_low, log_high = ratio_interval(logs_before, logs_after, alpha,
                                       draws or draws_for(alpha / 2))
    p_value = stats.mann_whitney_p(est_before.tolist(), est_after.tolist())
    attainable = verdict.smallest_two_sample_p(n, m)
    if attainable >= alpha:
        outcome: tuple[str, str] = (verdict.TOO_FEW, (
            f"{n} and {m} runs: the exact test over runs can reach p = {attainable:.3g} at "
            f"best, not below alpha={alpha:g}; record more runs "
            f"({verdict.runs_needed(n, m, alpha)}), interleaved, or measure with `pqbench ab`"))
    else:
        outcome = verdict.decide(p_value, log_low, log_high, alpha=alpha, threshold=band)
    before_level = math.exp(float(est_before.mean()))
    return verdict.Outcome(
        before=before_level, after=before_level * math.exp(shift), ratio=math.exp(shift),
        ci_low=math.exp(log_low), ci_high=math.exp(log_high), ci_level=1 - alpha,
        p_value=p_value, verdict=outcome[0], reason=outcome[1], units_before=n,
        units_after=m, spread_before=spread_of(est_before), spread_after=spread_of(est_after),
        floor=floor, threshold=band, method=METHOD)


def against_spread(est_before: FloatArray, est_after: FloatArray, spread: Spread, *,
                   threshold: float | None = None, alpha: float = 0.01) -> verdict.Outcome:
    """Two sides' ln run estimates judged against the machine's run-to-run spread of the
    row: the t interval and test of the module docstring, the band max(5 %, exp(s) - 1)."""
    n, m = est_before.size, est_after.size
    shift = float(est_after.mean() - est_before.mean())
    error = spread.sd * math.sqrt(1 / n + 1 / m)
    half = _t_quantile(1 - alpha / 2, spread.freedom) * error
    if error > 0:
        from scipy import special  # on first use: importing it takes a tenth of a second

        p_value = min(1.0, 2.0 * float(special.stdtr(spread.freedom, -abs(shift) / error)))
    else:
        p_value = 1.0 if shift == 0 else 0.0
    floor = math.expm1(spread.sd)
    band = verdict.threshold_for(floor, threshold)
    found, why = verdict.decide(p_value, shift - half, shift + half, alpha=alpha,
                                threshold=band)
    basis = spread.describe()
    before_level = math.exp(float(est_before.mean()))
    return verdict.Outcome(
        before=before_level, after=before_level * math.exp(shift), ratio=math.exp(shift),
        ci_low=math.exp(shift - half), ci_high=math.exp(shift + half), ci_level=1 - alpha,
        p_value=p_value, verdict=found, reason=f"{n} and {m} runs against {spread.short()}: {why}",
        units_before=n, units_after=m, spread_before=spread_of(est_before),
        spread_after=spread_of(est_after), floor=floor, threshold=band,
        method=SPREAD_METHOD, basis=basis)


@lru_cache(maxsize=256)
def _t_quantile(q: float, freedom: int) -> float:
    from scipy import special  # on first use: importing it takes a tenth of a second

    return float(special.stdtrit(freedom, q))


def level_interval(runs: Sequence[Sequence[float]], confidence: float = 0.95
                   ) -> tuple[float, float, float]:
    """One side's level (geometric mean of run medians) and its interval: a history point.

    With the run as the unit, the level is the mean of the runs' ln estimates and its
    interval Student's t interval of that mean, mean ± t(1 - tail, R - 1) · s / √R, the
    analytic interval Kalibera & Jones (2013, section 4) give for the top level of a
    repeated experiment. It needs no resampling (a small fraction of a two-level bootstrap's
    time, which over a large report's thousands of points adds up to minutes; docs:
    measurements), so `history` and every report draw their points the same way. No verdict
    rests on it: comparisons keep the bootstrap. With a single run the interval is that
    run's order-statistic median interval (`record.summary.summarize`): no between-run
    information exists.
    """
    return level_intervals([runs], confidence)[0]


def level_intervals(sides: Sequence[Sequence[Sequence[float]]], confidence: float = 0.95
                    ) -> list[tuple[float, float, float]]:
    """`level_interval` of each side, in order: a history's points. Sides whose runs share
    one length are taken by shape (as many runs of as many rounds: a fleet's 1,000 points
    mostly share one), each shape's runs logged, reduced to their estimates and summed up
    as one array; a side of runs of several lengths on its own (`log_runs`)."""
    found: list[tuple[float, float, float] | None] = [None] * len(sides)
    shapes: dict[tuple[int, int], list[int]] = {}
    for at, runs in enumerate(sides):
        lengths = {len(run) for run in runs}
        if len(lengths) == 1 and 0 not in lengths:
            shapes.setdefault((len(runs), lengths.pop()), []).append(at)
        else:
            estimates = run_estimates(log_runs(runs, "runs"))
            found[at] = _level(estimates, float(estimates.mean()),
                               float(np.std(estimates, ddof=1)), runs, confidence)
    for (count, _), members in shapes.items():
        # Every run of the shape's sides at once, through the checks and medians of a side.
        estimates = run_estimates(log_runs([run for at in members for run in sides[at]],
                                           "runs")).reshape(len(members), count)
        sds = (np.std(estimates, axis=1, ddof=1).tolist() if count > 1
               else [0.0] * len(members))  # one run: its own interval (`_level`)
        for at, row, mean, sd in zip(members, estimates, estimates.mean(axis=1).tolist(),
                                     sds, strict=True):
            found[at] = _level(row, mean, sd, sides[at], confidence)
    return [one for one in found if one is not None]


def _level(estimates: FloatArray, mean: float, sd: float, runs: Sequence[Sequence[float]],
           confidence: float) -> tuple[float, float, float]:
    """A side's level and interval (`level_interval`) from its run estimates, their mean
    and standard deviation."""
    if estimates.size == 1:
        summary = summarize(list(runs[0]), confidence=confidence)
        return math.exp(mean), summary.ci_low, summary.ci_high
    half = _t_quantile(0.5 + confidence / 2, estimates.size - 1) * sd / math.sqrt(
        estimates.size)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)

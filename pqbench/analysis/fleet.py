"""A build judged across a fleet: each machine is its own control.

Machines differ from each other by far more than a build changes a rate (another CPU model,
another load, another memory layout), and a single run of each build says little about
either on one machine: one run against one, judged against the machine's run-to-run spread,
can only call a jump beyond about 1.7x. But when many machines move to the same build, each
machine's own before and after form a pair: the pair's ln ratio cancels everything that
differs between machines, and the pairs of N machines narrow the estimate by about sqrt(N).

So the machine is the unit of replication (the top level at which variation enters, as in
Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013): per machine, the
ln ratio of its after level to its before level, each level the mean of its runs' ln
estimates (one run a side is enough); over the N machines, their mean, the Student t interval
mean ± t(1 - alpha/2, N - 1) s / sqrt(N), and the two-sided one-sample t test of mean 0
(Student, Biometrika 6, 1908), exactly as `ab` judges its worker pairs
(`signedrank.compare_worker_pairs`). The band a verdict must leave is the paired designs'
5 % minimum: the machines' own scatter is already in the interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pqbench.analysis import replicates, signedrank, verdict

#: Fewer machines than this leave the spread between machines unknown.
FEWEST_MACHINES = 2

METHOD = ("machines as the unit: per machine the ln ratio of its after level to its before "
          "level (each the mean of its runs' ln median rates); the build's estimate, Student t "
          "interval and two-sided one-sample t test over the machines (N - 1 df)")


def compare_machines(before: Sequence[Sequence[Sequence[float]]],
                     after: Sequence[Sequence[Sequence[float]]], *,
                     threshold: float | None = None, alpha: float = 0.01) -> verdict.Outcome:
    """Is the after build faster or slower than the before build, machine by machine?

    ``before[i]`` and ``after[i]`` are machine i's runs of each build, each run its
    per-round rates. ``units_*`` count the machines; ``spread_*`` are the standard
    deviations of the machines' ln levels on each side (what pairing cancels)."""
    if len(before) != len(after):
        raise ValueError("machines: need both sides of every machine")
    levels_before = np.array([_level(runs) for runs in before])
    levels_after = np.array([_level(runs) for runs in after])
    count = levels_before.size
    return signedrank.unit_outcome(
        levels_after - levels_before,
        math.exp(float(levels_before.mean())) if count else math.nan,
        fewest=FEWEST_MACHINES,
        too_few=(f"{count} machine: the spread between machines cannot be estimated; at "
                 f"least {FEWEST_MACHINES} machines must measure both builds"),
        spreads=(float(np.std(levels_before, ddof=1)) if count >= 2 else None,
                 float(np.std(levels_after, ddof=1)) if count >= 2 else None),
        alpha=alpha, threshold=threshold, method=METHOD)

def _level(runs: Sequence[Sequence[float]]) -> float:
    """One machine's ln level of one build: the mean of its runs' ln median rates."""
    return float(replicates.run_estimates(replicates.log_runs(runs, "machine")).mean())

"""A speed run's derived figures, each worked out once, before anything shows it.

What `speed` prints under its table, what its --json adds and what the report's summary and
"What it costs, paired" show are the same figures: every paired cost ratio (`ratios`), the
headline few of them, the rows too unsteady to trust (`stability`), and the OpenSSL that
cryptography bundles where it is not the system's (`bindings`). The terminal, the JSON and
the report lay these out; none of them computes one. The unsteady rows are worked out when
first read, as `show` never reads them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from pqbench.analysis import ratios
from pqbench.analysis.bindings import bundled_openssl
from pqbench.analysis.exchanges import BASELINE, Exchange, baseline_for
from pqbench.analysis.ratios import Ratio
from pqbench.data.record.results import Measurement, RowKey, Run


@dataclass(frozen=True)
class Unsteady:
    """A row whose spread or trend makes its figure shaky, and why (`stability.problems`)."""

    key: RowKey
    problems: tuple[str, ...]


@dataclass(frozen=True)
class RunFigures:
    """Everything a speed run tells beyond its rows."""

    ratios: tuple[Ratio, ...]
    #: Those the mission asks for (`ratios.mission`): what `speed` and `ratios` show.
    mission: tuple[Ratio, ...]
    #: The few `ratios.headline` picks from them: the report's lead.
    headline: tuple[Ratio, ...]
    #: (cryptography's bundled OpenSSL, the system's) where they differ and cryptography
    #: was measured: its ratio against libcrypto then holds that difference too.
    bundled: tuple[str, str] | None
    #: The run's rows, whose steadiness `unsteady` checks.
    rows: tuple[Measurement, ...] = field(repr=False, compare=False)

    @functools.cached_property
    def unsteady(self) -> tuple[Unsteady, ...]:
        """The rows too unsteady to trust (`stability.problems`), worked out once, when
        first asked for: `show` prints none, and their checks took most of the time its
        figures took."""
        from pqbench.analysis import stability

        return tuple(Unsteady(m.key, tuple(problems)) for m in self.rows
                     if (problems := stability.problems(m.samples)))


def run_figures(run: Run) -> RunFigures:
    """The figures of `run`, each worked out once."""
    every = tuple(ratios.run_ratios(run))
    measured = any(m.implementation == "cryptography" for m in run.measurements)
    return RunFigures(every, tuple(ratios.mission(every)), tuple(ratios.headline(every)),
                      bundled_openssl(run.environment) if measured else None,
                      tuple(run.measurements))


@dataclass(frozen=True)
class Cost:
    """What one exchange (signature) costs in µs, with its interval and that interval's true
    level; low, high and level None where the rows allow none. Paired by cycle, it is the
    median of the per-cycle sums of the operations' costs with that median's
    distribution-free interval. Unpaired (an `ab` side's rows, paired with the other
    side's rather than with each other), it is the sum of the operations' medians, and the
    interval the sum of their intervals' ends, which holds at least 1 minus the sum of
    their misses (Bonferroni): a lower level, honestly stated, and none below 90 %."""

    us: float
    low: float | None = None
    high: float | None = None
    level: float | None = None


#: The largest joint miss an unpaired exchange's interval may have (it then holds at 90 %).
MISSED = 0.10


def exchange_cost(ex: Exchange, cycles: int) -> Cost:
    if cycles:
        found = ratios.exchange_cost(ex, cycles)
        if found is not None:
            return Cost(*found)
    low = high = 0.0
    missed = 0.0
    for _, count, m in ex.operations:
        if len(m.samples) < 2:
            return Cost(ex.us)
        s = m.summary
        if s.ci_low <= 0:
            return Cost(ex.us)
        # A rate's interval (ops/s) turned into a time's (µs/op): the ends swap.
        low += count * 1e6 / s.ci_high
        high += count * 1e6 / s.ci_low
        missed += 1 - s.ci_level
    # Below 90 % jointly (few rounds a row) the sum's interval says too little to print.
    return Cost(ex.us, low, high, 1 - missed) if missed <= MISSED else Cost(ex.us)


@dataclass(frozen=True)
class Versus:
    """An exchange (signature) as a report's table lines it up: its cost, and its ratio
    against the role's baseline (X25519, Ed25519) through its own implementation or its
    counterpart, the same pairing `speed` and the report's lead use; `ratio` None where the
    two were not paired by cycle (an `ab` side), or for the baseline itself."""

    exchange: Exchange
    cost: Cost
    baseline: Exchange | None
    ratio: Ratio | None


def versus_baseline(role: str, found: Sequence[Exchange], cycles: int) -> list[Versus]:
    """Each exchange of `found` against its baseline (`exchanges.baseline_for`, own
    implementation else counterpart): one answer for one question wherever it is shown."""
    baselines = {ex.implementation: ex for ex in found if ex.algorithm == BASELINE[role]}
    lines = []
    for ex in found:
        base = baseline_for(ex, baselines, False)
        ratio = (ratios.exchange_ratio(role, ex, base, cycles)
                 if base is not None and base is not ex else None)
        lines.append(Versus(ex, exchange_cost(ex, cycles), base, ratio))
    return lines

"""A run's paired cost ratios (`analysis.ratios`) as lines and as a table, for the terminal
and the report alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.presentation import numbers
from pqbench.presentation.tables import Column, Table

if TYPE_CHECKING:  # the analysis loads numpy; showing a ratio does not need it
    from pqbench.analysis.ratios import Across, Ratio

#: How a time base is named wherever a figure in it is shown.
TIME_BASES = {"cpu": "CPU time", "wall": "wall time", "mixed": "mixed time bases"}


def level(value: float) -> str:
    """A confidence level as it truly is: "99 % CI", "93.8 % CI"."""
    return f"{numbers.share(value)} CI"


def line(r: Ratio) -> str:
    """"ML-KEM-768 [liboqs] takes 0.292x the time of X25519 [libcrypto] per exchange
    (99 % CI 0.288–0.297, 10 cycles, CPU time)"."""
    return (f"{r.numerator.label} takes {numbers.ratio(r.estimate)} the time of "
            f"{r.denominator.label} per {r.per} ({level(r.ci_level)} "
            f"{numbers.interval(r.ci_low, r.ci_high)}, {r.pairs} cycles, "
            f"{TIME_BASES.get(r.time_base, r.time_base)})")


def lines(ratios: Sequence[Ratio]) -> list[str]:
    return [line(r) for r in ratios]


def table(ratios: Sequence[Ratio], title: str = "what it costs: paired ratios") -> Table:
    """One line per ratio: numerator, denominator, per what, the estimate, its interval and
    its true level, the cycles it rests on."""
    columns = (Column("what"), Column("against"), Column("per"),
               Column("time ratio", "ratio"), Column("interval"),
               Column("level", priority=1), Column("cycles", "count", priority=2),
               Column("time base", priority=2))
    return Table(title, columns, tuple(
        (r.numerator.label, r.denominator.label, r.per, r.estimate,
         numbers.interval(r.ci_low, r.ci_high), numbers.share(r.ci_level), r.pairs,
         TIME_BASES.get(r.time_base, r.time_base)) for r in ratios))


def followed_lines(found: Sequence[Across]) -> list[str]:
    """"ML-KEM-768 [liboqs] against X25519 [libcrypto], per exchange: 0.27x -> 0.31x
    (1.15x, 99 % CI 1.10–1.20; rose)"."""
    return [f"{a.name}: {numbers.ratio(a.before)} -> {numbers.ratio(a.after)} "
            f"({numbers.ratio(a.outcome.ratio)}, {level(a.outcome.ci_level)} "
            f"{numbers.interval(a.outcome.ci_low, a.outcome.ci_high)}; {a.change}, "
            f"{a.outcome.units_before} and {a.outcome.units_after} runs)" for a in found]

"""Which runs are the two sides of `pqbench ab` sessions, and their rounds as pairs.

A session stores one run per side; settings["ab"] names the session and the side, and
round i of one side's row pairs with round i of the other's (the order `ab` took them in).
Pairs are compared in operations per second of the CPU time each worker's thread got
(attribute ``ab_cpu_ns``, one entry per round): on a busy machine a worker is descheduled
for part of a round, which the wall clock counts and the CPU clock does not. Measured on
this 2-core VM at load 8: the sd of pair log ratios of SHA-256 was 0.31 in wall time and
0.011 in CPU time.
`compare` uses this to analyse such runs pair by pair, at the per-look alpha the session
used, so it gives the verdict `ab` gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pqbench.analysis.rows import ALPHA
from pqbench.record.results import Measurement, RowKey, Run


def ab_session(run: Run) -> Mapping[str, Any] | None:
    """The `pqbench ab` session a run is one side of (its settings["ab"]), or None."""
    info = run.settings.get("ab") if isinstance(run.settings, Mapping) else None
    if isinstance(info, Mapping) and isinstance(info.get("session"), str) \
            and info.get("side") in ("a", "b"):
        return info
    return None


def session_pairs(before: Sequence[Run], after: Sequence[Run]) -> list[tuple[Run, Run]] | None:
    """(before run, after run) per `ab` session when the two groups are exactly the two
    sides of the same sessions; None otherwise (then runs are the unit)."""
    sides: list[dict[str, Run]] = []
    for group in (before, after):
        by_session: dict[str, Run] = {}
        for run in group:
            info = ab_session(run)
            if info is None or info["session"] in by_session:
                return None
            by_session[str(info["session"])] = run
        sides.append(by_session)
    if not sides[0] or set(sides[0]) != set(sides[1]):
        return None
    pairs = [(sides[0][s], sides[1][s]) for s in sorted(sides[0])]
    if any(side_of(b) == side_of(a) for b, a in pairs):
        return None
    return pairs


def side_of(run: Run) -> str | None:
    """"a" or "b" for a side of an `ab` session, None for any other run."""
    info = ab_session(run)
    return None if info is None else str(info["side"])


def paired_alpha(pairs: Sequence[tuple[Run, Run]]) -> float:
    """The per-look alpha of the sessions: their alpha over their number of looks
    (Bonferroni), so recomputing a session's verdict here gives the verdict `ab` gave.
    Several sessions together take the smallest."""
    levels = []
    for run, _ in pairs:
        info = ab_session(run) or {}
        alpha = info.get("alpha")
        looks = len(info.get("looks") or [1])
        levels.append((alpha if isinstance(alpha, float) and 0 < alpha < 1 else ALPHA)
                      / max(looks, 1))
    return min(levels, default=ALPHA)


def cpu_rates(m: Measurement) -> list[float | None]:
    """Per round, operations per second of CPU time the worker's thread got (the rate `ab`
    pairs; see `worker._run`); None where a round has no CPU time recorded, so its wall
    rate stands in. Rows stored before CPU times were kept have none."""
    cpu = m.attributes.get("ab_cpu_ns")
    if not isinstance(cpu, list) or len(cpu) != len(m.rounds):
        return [None] * len(m.rounds)
    return [r.ops * 1e9 / ns if isinstance(ns, int) and ns > 0 and r.ops > 0 else None
            for r, ns in zip(m.rounds, cpu, strict=True)]


def pair_rates(before: Measurement, after: Measurement) -> list[tuple[float, float]]:
    """The rates of each complete pair: CPU-time rates where both rounds have them, else
    both wall rates (a pair is never mixed)."""
    pairs = []
    for b, a, cpu_b, cpu_a in zip(before.rounds, after.rounds, cpu_rates(before),
                                  cpu_rates(after), strict=False):
        if b.ops <= 0 or a.ops <= 0:
            continue
        pairs.append((cpu_b, cpu_a) if cpu_b and cpu_a else (b.ops_per_sec, a.ops_per_sec))
    return pairs


def paired_samples(pairs: Sequence[tuple[Run, Run]]
                   ) -> dict[RowKey, tuple[list[float], list[float], float | None]]:
    """Per row key: the before and after rates of every complete pair, over all sessions,
    and the seconds the sessions spent on the row. Round i of one side pairs with round i
    of the other (the order `ab` took them in)."""
    found: dict[RowKey, tuple[list[float], list[float], float | None]] = {}
    for run_before, run_after in pairs:
        after_rows = {m.key: m for m in run_after.measurements}
        for m in run_before.measurements:
            other = after_rows.get(m.key)
            rates = pair_rates(m, other) if other is not None else []
            if not rates:
                continue
            before, after, seconds = found.get(m.key, ([], [], None))
            spent = m.attributes.get("ab_seconds")
            if isinstance(spent, int | float):
                seconds = (seconds or 0.0) + float(spent)
            found[m.key] = ([*before, *(b for b, _ in rates)], [*after, *(a for _, a in rates)],
                            seconds)
    return found

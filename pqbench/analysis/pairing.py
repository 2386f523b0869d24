"""Which runs are the two sides of `pqbench ab` sessions, and their rounds as pairs.

A session stores one run per side; settings["ab"] names the session and the side, and
round i of one side's row pairs with round i of the other's (the order `ab` took them in).
Pairs are compared in operations per second of the CPU time each worker's thread got
(attribute ``ab_cpu_ns``, one entry per round): on a busy machine a worker is descheduled
for part of a round, which the wall clock counts and the CPU clock does not, so pairs of
CPU-time rates spread far less on a loaded machine (docs: measurements).
Sessions that replicate their workers also store, per round, the worker pair that took it
(attribute ``ab_worker``); `compare` then takes the worker pair as the unit above the round
pairs (`signedrank.compare_worker_pairs`), and pair by pair (`signedrank.compare_pairs`)
for rows stored before that, at the per-look alpha the session used either way, so it
gives the verdict `ab` gave. It reads stored runs only, so it lives with the analysis,
below `ab`, which writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pqbench.analysis.rows import ALPHA
from pqbench.data.record.results import Measurement, RowKey, Run


def ab_session(run: Run) -> Mapping[str, Any] | None:
    """The `pqbench ab` session a run is one side of (its settings["ab"]), or None
    (`Run.session`)."""
    return run.session


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


def sessions_between(before: Sequence[Run], after: Sequence[Run]
                     ) -> tuple[list[tuple[Run, Run]], list[Run], list[Run]]:
    """The `ab` sessions whose one side is in `before` and whose other side is in `after`,
    as (before run, after run) pairs in session order, and the runs of each group that are
    not such a side (`speed` runs, a session's side whose other side is elsewhere)."""
    found: dict[str, dict[str, Run]] = {}
    for where, group in (("before", before), ("after", after)):
        for run in group:
            info = ab_session(run)
            if info is not None:
                found.setdefault(str(info["session"]), {}).setdefault(where, run)
    pairs = [(sides["before"], sides["after"]) for _, sides in sorted(found.items())
             if len(sides) == 2 and side_of(sides["before"]) != side_of(sides["after"])]
    paired = {run.run_id for pair in pairs for run in pair}
    return (pairs, [r for r in before if r.run_id not in paired],
            [r for r in after if r.run_id not in paired])


def all_sessions(runs: Sequence[Run]) -> list[tuple[Run, Run]]:
    """(side A, side B) of every `ab` session both of whose sides are among `runs`."""
    sides: dict[str, dict[str, Run]] = {}
    for run in runs:
        info = ab_session(run)
        if info is not None:
            sides.setdefault(str(info["session"]), {})[str(info["side"])] = run
    return [(found["a"], found["b"]) for _, found in sorted(sides.items())
            if "a" in found and "b" in found]


def session_of(run: Run) -> str | None:
    """The id of the `ab` session a run is one side of, or None."""
    info = ab_session(run)
    return None if info is None else str(info["session"])


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
    return [(b, a) for b, a, _ in worker_pair_rates(before, after)]


def round_workers(m: Measurement) -> list[int] | None:
    """Per round, the worker pair that took it (attribute ``ab_worker``), or None for a row
    stored before sessions replicated their workers."""
    workers = m.attributes.get("ab_worker")
    if isinstance(workers, list) and len(workers) == len(m.rounds) \
            and all(isinstance(w, int) and not isinstance(w, bool) for w in workers):
        return workers
    return None


def worker_pair_rates(before: Measurement, after: Measurement
              ) -> list[tuple[float, float, int | None]]:
    """(before rate, after rate, worker pair) of each complete pair, as `pair_rates`; the
    worker pair is None for rows without ``ab_worker`` or whose two sides disagree."""
    workers_b, workers_a = round_workers(before), round_workers(after)
    same = workers_b is not None and workers_b == workers_a
    pairs = []
    for index, (b, a, cpu_b, cpu_a) in enumerate(zip(
            before.rounds, after.rounds, cpu_rates(before), cpu_rates(after), strict=False)):
        if b.ops <= 0 or a.ops <= 0:
            continue
        worker = workers_b[index] if same and workers_b is not None else None
        rates = (cpu_b, cpu_a) if cpu_b and cpu_a else (b.ops_per_sec, a.ops_per_sec)
        pairs.append((*rates, worker))
    return pairs


class PairedRow(NamedTuple):
    """One row's complete pairs over all sessions: the rates before and after, the worker
    pair of each (``(session, worker pair)``; None where any session's row predates worker
    pairs, which then leaves the row to the pair-by-pair analysis) and the seconds spent."""

    before: list[float]
    after: list[float]
    workers: list[tuple[int, int]] | None
    seconds: float | None


def paired_rows(pairs: Sequence[tuple[Run, Run]]) -> dict[RowKey, PairedRow]:
    """Per row key, every complete pair over all sessions, with the worker pair that took
    it. Round i of one side pairs with round i of the other (the order `ab` took them in);
    worker pairs of different sessions are different units."""
    found: dict[RowKey, PairedRow] = {}
    for session, (run_before, run_after) in enumerate(pairs):
        after_rows = {m.key: m for m in run_after.measurements}
        for m in run_before.measurements:
            other = after_rows.get(m.key)
            rates = worker_pair_rates(m, other) if other is not None else []
            if not rates:
                continue
            row = found.get(m.key, PairedRow([], [], [], None))
            seconds = row.seconds
            spent = m.attributes.get("ab_seconds")
            if isinstance(spent, int | float):
                seconds = (seconds or 0.0) + float(spent)
            workers = None if row.workers is None or any(w is None for *_, w in rates) \
                else [*row.workers, *((session, int(w)) for *_, w in rates if w is not None)]
            found[m.key] = PairedRow([*row.before, *(b for b, _, _ in rates)],
                                     [*row.after, *(a for _, a, _ in rates)], workers, seconds)
    return found


def paired_samples(pairs: Sequence[tuple[Run, Run]]
                   ) -> dict[RowKey, tuple[list[float], list[float], float | None]]:
    """Per row key: the before and after rates of every complete pair, over all sessions,
    and the seconds the sessions spent on the row. Round i of one side pairs with round i
    of the other (the order `ab` took them in)."""
    return {key: (row.before, row.after, row.seconds)
            for key, row in paired_rows(pairs).items()}

"""A build compared across a fleet: the machines that measured both builds, each against
itself (`analysis.fleet`: the machine is the unit; one run a side on each is enough).

Which machines take part is decided here: a machine counts for a row where it measured the
row on both sides; machines that measured one side only are named and left out, never
pooled. The comparison that results reads like any other (`RunComparison`): its rows say
they were judged by machines, with how many; its warnings name the machines (at most ten)
and `machines` and `machines_left_out` list every one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pqbench.analysis import fleet
from pqbench.analysis.compare import RunComparison, Sides, run_samples, told
from pqbench.analysis.rows import ALPHA, Row, RowKey
from pqbench.app.identity import Machine, one_build_side
from pqbench.data.record.results import Run
from pqbench.platform.untrusted import named

FEWEST_MACHINES = fleet.FEWEST_MACHINES


def compare_fleet(before: Mapping[Machine, Sequence[Run]], after: Mapping[Machine, Sequence[Run]],
                  threshold: float | None = None, *, before_name: str | None = None,
                  after_name: str | None = None, left_out: Sequence[Machine] = ()
                  ) -> RunComparison:
    """Each row judged by the machines that measured it on both sides (`before` and
    `after` map the same machines to their runs of each build); each side of each machine
    is one build (`identity.one_build_side`)."""
    warnings: list[str] = []
    before_name = before_name or "before"
    after_name = after_name or "after"
    machines = [m for m in before if m in after]
    kept_before = {m: one_build_side(before[m], f"{before_name} on {m.name}", warnings)
                   for m in machines}
    kept_after = {m: one_build_side(after[m], f"{after_name} on {m.name}", warnings)
                  for m in machines}
    samples_before = {m: run_samples(kept_before[m]) for m in machines}
    samples_after = {m: run_samples(kept_after[m]) for m in machines}
    keys = list(dict.fromkeys(k for m in machines for k in samples_before[m]))
    outcomes: dict[RowKey, Row] = {}
    for key in keys:
        both = [m for m in machines if key in samples_before[m] and key in samples_after[m]]
        if not both:
            continue
        outcome = fleet.compare_machines([samples_before[m][key] for m in both],
                                         [samples_after[m][key] for m in both],
                                         threshold=threshold, alpha=ALPHA)
        rounds = [sum(map(len, side[m][key])) for side in (samples_before, samples_after)
                  for m in both]
        outcomes[key] = Row(key, replace(outcome, basis=_basis(both)),
                            sum(rounds[:len(both)]), sum(rounds[len(both):]),
                            machines=len(both))
    seen_after = {k for m in machines for k in samples_after[m]}
    only_before = tuple(k for k in keys if k not in outcomes and k not in seen_after)
    only_after = tuple(dict.fromkeys(k for m in machines for k in samples_after[m]
                                     if k not in outcomes and k not in keys))
    names = tuple(m.name for m in machines)
    warnings.insert(0, f"{len(machines)} machines measured both sides, each judged against "
                       f"itself: {named(names)}")
    if left_out:
        warnings.append(f"left out, having measured one side only: "
                        f"{named([m.name for m in left_out])}")
    compared = told([r for m in machines for r in kept_before[m]],
                    [r for m in machines for r in kept_after[m]], outcomes,
                    Sides(before_name, after_name, threshold), only_before, only_after,
                    warnings=warnings, method=fleet.METHOD, paired=False, alpha=ALPHA)
    return replace(compared, machines=names,
                   machines_left_out=tuple(m.name for m in left_out))


def _basis(machines: Sequence[Machine]) -> str:
    return (f"{len(machines)} machines, each its own control (the ln ratio of its own "
            "after and before levels)")

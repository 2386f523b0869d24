"""A bisection's result shown: the table of where each row changed, and the JSON of
`pqbench bisect --json` (the figures are `bisect.search`'s; this module only lays them out)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pqbench.analysis import explain
from pqbench.bisect.series import NAMING
from pqbench.presentation import console, numbers
from pqbench.presentation.runs import operation as operation_name

if TYPE_CHECKING:
    from pqbench.bisect.search import ChangePoint, Result
    from pqbench.bisect.series import Series


def _name(key: Any) -> str:
    return f"{key.algorithm} {operation_name(key.operation, key.block_size)} [{key.implementation}]"


def cause_text(point: ChangePoint) -> str:
    """The fingerprint differences the comparison ranks as causes of this row, strongest
    first; without one, what else differs between the two builds' fingerprints."""
    causes = [f"{_change(c.field, c.before, c.after, short=True)} ({c.strength})"
              for c in point.row.causes]
    if causes:
        return "; ".join(causes)
    other = [_change(d.field, d.before, d.after) for d in point.differences
             if d.field not in NAMING and d.note is None]
    return ("differs: " + "; ".join(other)) if other else "the fingerprints do not differ"


def _change(field: str, before: Any, after: Any, *, short: bool = False) -> str:
    """A difference in words: a loaded binary by what makes it another one (its identity,
    package and path, `explain.binary_change`), any other field as "before → after"."""
    if field.startswith("binaries."):
        return f"{field.removeprefix('binaries.')}: {explain.binary_change(before, after)}"
    name = field.rpartition(".")[2] if short else field
    return f"{name} {before} → {after}"


def show_bisection(result: Result, chosen: Series) -> None:
    """The unusable builds as warnings, then one table: each row's change points with their
    ratio, interval, verdict and cause, its unsearched ends and its spreads."""
    builds = chosen.builds
    for position, reason in sorted(result.unusable.items()):
        console.warning(f"build {position + 1} ({builds[position].spec}) is unusable: {reason}")
    lines = []
    first, last = result.ends or (0, len(builds) - 1)
    for row in result.rows:
        ends = row.ends
        if not row.searched:
            lines.append([_name(row.key), f"{builds[first].name} → {builds[last].name}",
                          numbers.ratio(ends.ratio), numbers.interval(ends.ci_low, ends.ci_high),
                          ends.verdict, f"the ends' verdict is {ends.verdict}: not searched"])
        for point in row.change_points:
            between = (f" ({len(point.skipped)} unusable between)" if point.skipped else "")
            lines.append([_name(row.key),
                          f"{builds[point.before].name} → {builds[point.after].name}{between}",
                          numbers.ratio(point.row.ratio),
                          numbers.interval(point.row.ci_low, point.row.ci_high),
                          point.row.verdict, cause_text(point)])
        for spread in row.spreads:
            lines.append([_name(row.key), f"{builds[spread.before].name} … "
                          f"{builds[spread.after].name}", "", "", "spread",
                          "no single step beyond the band: the change accumulates over "
                          "these builds"])
    if lines:
        console.stdout.print(console.rows_table(
            "where it changed", ["row", "builds", "ratio", "interval", "verdict", "cause"],
            lines))
    console.note("what bisection cannot see: a change undone between two builds that "
                 "agree, and steps smaller than the band (--every-pair measures each pair)")


def bisection_document(result: Result, chosen: Series, location: str) -> dict[str, Any]:
    """The JSON of `pqbench bisect --json`."""
    builds = chosen.builds

    def build(position: int) -> dict[str, Any]:
        return {"position": position, "build": builds[position].spec}

    return {
        "series": {"id": chosen.series_id, "builds": chosen.specs()},
        "status": result.status,
        "ends": [build(p) for p in result.ends] if result.ends else None,
        "unusable": [{**build(p), "reason": reason}
                     for p, reason in sorted(result.unusable.items())],
        "sessions": [{"before": build(s.before), "after": build(s.after),
                      "runs": list(s.run_ids), "seconds": round(s.seconds, 3),
                      "status": s.status} for s in result.sessions],
        "rows": [{**r.key._asdict(), "ends": r.ends.as_dict(), "searched": r.searched,
                  "change_points": [{"before": build(c.before), "after": build(c.after),
                                     "unusable_between": [build(p) for p in c.skipped],
                                     "comparison": c.row.as_dict(),
                                     "differences": [d.as_dict() for d in c.differences]}
                                    for c in r.change_points],
                  "spread": [{"before": build(s.before), "after": build(s.after)}
                             for s in r.spreads]}
                 for r in result.rows],
        "store": location,
    }

"""A bisection's result shown: the table of where each row changed, and the JSON of
`pqbench bisect --json` (the figures are `bisect.search`'s; this module only lays them out)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pqbench.analysis import explain
from pqbench.sessions.bisect.series import NAMING
from pqbench.views import console, numbers, tables
from pqbench.views.runs import operation as operation_name

if TYPE_CHECKING:
    from pqbench.sessions.bisect.search import ChangePoint, Result
    from pqbench.sessions.bisect.series import Series
    from pqbench.sessions.bisect.stored import Search


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


def _verdict(row: Any) -> str:
    """A session's row as `compare` says it: "1.57x faster [1.54–1.59]", "no change", the
    reason where there is no verdict ("too few runs")."""
    from pqbench.views.comparisons import change

    return change(row)


def sessions_table(result: Result, chosen: Series) -> tables.Table:
    """Each session in the order it ran, as `git bisect log` lists each step: the two
    builds, and per row the change with its interval and the verdict."""
    builds = chosen.builds
    several = len({key for s in result.sessions for key in s.rows}) > 1
    lines = []
    for number, session in enumerate(result.sessions, 1):
        for key, row in sorted(session.rows.items(), key=lambda item: _name(item[0])):
            lines.append((number, f"{builds[session.before].name} → "
                                  f"{builds[session.after].name}",
                          *((_name(key),) if several else ()), _verdict(row), row.verdict))
    columns = (tables.Column("#", "count"), tables.Column("builds", wrap=True),
               *((tables.Column("row", wrap=True),) if several else ()),
               tables.Column("change [CI]", wrap=True, min_width=24),
               tables.Column("verdict", priority=1))
    return tables.Table("sessions, in the order they ran", columns, tuple(lines),
                        tuple(row[-1] for row in lines))


def levels_tables(search: Search, chosen: Series) -> list[tables.Table]:
    """Per row, the series as measured: each build's level (the median of its rounds, with
    its 95 % interval) and, where a session compared it with the build measured before it,
    that session's answer."""
    found = []
    for key in search.row_keys():
        levels = search.levels(key)
        by_pair = {(s.before, s.after): s.rows[key] for s in search.sessions if key in s.rows}
        lines = []
        previous: int | None = None
        for position, level in levels.items():
            row = by_pair.get((previous, position)) if previous is not None else None
            if row is None and previous is not None:
                row = by_pair.get((position, previous))
            answer = (_verdict(row) if row is not None else
                      "" if previous is None else "not compared directly")
            lines.append((chosen.builds[position].name if position < len(chosen.builds)
                          else str(position + 1),
                          numbers.level_interval(level.median, level.ci_low,
                                                 level.ci_high, level.unit),
                          answer))
            previous = position
        found.append(tables.Table(
            f"{_name(key)}: each build measured",
            (tables.Column("build", wrap=True), tables.Column("level [95 % CI]"),
             tables.Column("against the build before it [CI]", wrap=True, min_width=24)),
            tuple(lines)))
    return found


def show_bisection(result: Result, chosen: Series, search: Search | None = None) -> None:
    """The unusable builds as warnings; the sessions as they ran, each with its verdict;
    per row each build's level with its interval; then the change points with their
    ratio, interval, verdict and cause, the unsearched ends and the spreads."""
    builds = chosen.builds
    for position, reason in sorted(result.unusable.items()):
        console.warning(f"build {position + 1} ({builds[position].spec}) is unusable: {reason}")
    if result.sessions:
        console.print_table(sessions_table(result, chosen))
    for table in levels_tables(search, chosen) if search is not None else []:
        console.print_table(table)
    lines = []
    first, last = result.ends or (0, len(builds) - 1)
    for row in result.rows:
        ends = row.ends
        if not row.searched:
            lines.append([_name(row.key), f"{builds[first].name} → {builds[last].name}",
                          _verdict(ends), ends.verdict,
                          f"the ends' verdict is {ends.verdict}: not searched"])
        for point in row.change_points:
            between = (f" ({len(point.skipped)} unusable between)" if point.skipped else "")
            lines.append([_name(row.key),
                          f"{builds[point.before].name} → {builds[point.after].name}{between}",
                          _verdict(point.row), point.row.verdict, cause_text(point)])
        for spread in row.spreads:
            lines.append([_name(row.key), f"{builds[spread.before].name} … "
                          f"{builds[spread.after].name}", "", "spread",
                          "no single step beyond the band: the change accumulates over "
                          "these builds"])
    if lines:
        console.print_table(tables.Table(
            "where it changed",
            (tables.Column("row", wrap=True), tables.Column("builds", wrap=True),
             tables.Column("change [CI]", wrap=True, min_width=24),
             tables.Column("verdict", priority=2), tables.Column("cause", wrap=True,
                                                                 priority=1)),
            tuple(tuple(line) for line in lines)))
    console.note("what bisection cannot see: a change undone between two builds that "
                 "agree, and steps smaller than the band (--every-pair measures each pair)")


def show_stored(sessions: int, runs: int, location: str) -> None:
    """How many sessions the bisection took and where their runs are."""
    console.note(f"{sessions} session{'s' if sessions != 1 else ''}, "
                 f"{numbers.count(runs)} runs stored in {location}")


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

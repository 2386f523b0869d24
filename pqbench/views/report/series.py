""""Where it changed": each row's level along a bisected series, with its change points.

One table per bisection and row: every build of the series in order, its level over the
sessions that measured it (median with its interval), "not measured" for the builds the
search never needed, and at each change point the session's change with its interval (in
`compare`'s words) and the fingerprint differences ranked as its causes. The runs alone are
the source (`bisect.stored`): the sessions are re-judged from them as `ab` judged them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.data.record.results import RowKey, Run
from pqbench.sessions.bisect import stored
from pqbench.sessions.bisect.series import NAMING
from pqbench.views import comparisons, numbers
from pqbench.views import markdown as md
from pqbench.views.report.base import Section
from pqbench.views.runs import operation as operation_name

if TYPE_CHECKING:
    from pqbench.analysis.rows import Row

NOT_MEASURED = "not measured"


def is_bisection(run: Run) -> bool:
    """Whether a run (a header is enough) is one side of a bisection's session."""
    return stored.info(run) is not None


def section(runs: Sequence[Run]) -> Section | None:
    """The section for every bisection among `runs`; None when there is none."""
    found = [s for s in stored.searches(runs) if s.sessions]
    if not found:
        return None
    parts = [md.heading(2, "Where it changed"),
             md.text("Each build of the series in order: the row's level, the median rate of "
                     "all its rounds in the paired sessions that measured it (in CPU time, "
                     "as the pairs are compared) with the 95 % interval of that median; "
                     "where it changed, the ratio of that session with its interval and the "
                     "fingerprint differences ranked as causes (else every difference). A "
                     "build the bisection did not need is not measured. Bisection does not "
                     "see a change that is undone between two builds that agree.")]
    bullets = []
    for search in found:
        for key in search.row_keys():
            points = search.change_points(key)
            parts += [md.heading(3, f"{_row_name(key)}: {len(points)} change point(s) over "
                                    f"{len(search.builds)} builds (search {search.search_id}, "
                                    f"{numbers.count(len(search.sessions))} sessions)"),
                      _table(search, key)]
            for session, row in points:
                bullets.append(
                    f"- {md.text(_row_name(key))} changed between "
                    f"{md.inline_code(search.builds[session.before])} and "
                    f"{md.inline_code(search.builds[session.after])}: "
                    f"{md.text(_change(row))}")
    return Section("\n\n".join(parts), bullets=tuple(bullets))


def _change(row: Row) -> str:
    """A change point in the words of `compare`: "1.82x slower [1.71–1.93]", "inconclusive:
    1.02x faster [...]"."""
    return comparisons.change(row)


def _row_name(key: RowKey) -> str:
    return f"{key.algorithm} {operation_name(key.operation, key.block_size)} [{key.implementation}]"


def _table(search: stored.Search, key: RowKey) -> md.Markdown:
    levels = search.levels(key)
    changes = {min(s.before, s.after): (s, row) for s, row in search.change_points(key)}
    rows = []
    for position, build in enumerate(search.builds):
        found = levels.get(position)
        level = (f"{numbers.rate(found.median, found.unit)} "
                 f"({numbers.rate(found.ci_low, found.unit)} – "
                 f"{numbers.rate(found.ci_high, found.unit)}; "
                 f"{numbers.count(found.rounds)} rounds)" if found else NOT_MEASURED)
        change = ""
        if position in changes:
            session, row = changes[position]
            after = search.builds[max(session.before, session.after)]
            causes = "; ".join(f"{c.field.rpartition('.')[2]}: {c.before} → {c.after}"
                               for c in row.causes) or "; ".join(
                f"{d.field}: {d.before} → {d.after}" for d in session.differences
                if d.field not in NAMING and d.note is None) or "no fingerprint difference"
            change = f"→ {after}: {_change(row)}; {causes}"
        rows.append([numbers.count(position + 1), build, level, change])
    return md.table(["#", "build", "level", "change to the next measured build"], rows,
                    ["r", "l", "r", "l"])

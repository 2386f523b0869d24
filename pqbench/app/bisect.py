"""`pqbench bisect`: the series, the sessions between its builds, what they found, and how
the command ends.

The search is `sessions.bisect`'s (pure, with the measuring as a callback); what is decided
here is checked without a session: the plan, the answer's parts, the ending.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pqbench.app.ending import Ending
from pqbench.platform import interrupts
from pqbench.sessions import sides

if TYPE_CHECKING:
    from pqbench.data.store import Store
    from pqbench.sessions.ab.session import Settings
    from pqbench.sessions.bisect.runner import Plan
    from pqbench.sessions.bisect.search import Result
    from pqbench.sessions.bisect.series import Series
    from pqbench.sessions.bisect.stored import Search


def plan(series: Series, settings: Settings, band: float | None,
         argv: Sequence[str]) -> Plan:
    """The series and what each session measures, with the command line (redacted) that
    each stored run names."""
    from pqbench.sessions.bisect import runner

    return runner.Plan(series, settings, band, sides.command_line(argv))


@dataclass(frozen=True)
class Answer:
    """What the sessions found, the search as the stored runs tell it (for the levels
    table), how many runs were stored, and the ending."""

    result: Result
    search: Search | None
    runs_stored: int
    ending: Ending | None


def ending(result: Result) -> Ending | None:
    """Interrupted: 130 or 143; no two builds measured, or a build unusable: 1."""
    if result.status == "interrupted":
        return Ending("interrupted; the sessions done so far were stored, the builds made "
                      "so far stay cached", interrupts.exit_code())
    if result.ends is None:
        return Ending("no two builds of the series could be measured (see above)", 1)
    if result.unusable:
        return Ending(f"{len(result.unusable)} build(s) of the series were unusable "
                      "(see above)", 1)
    return None


def run(chosen: Plan, store: Store, every_pair: bool, show: Callable[[str], None], *,
        search: bool = True) -> Answer:
    """Bisect (or measure every neighbouring pair), storing each session as two runs; the
    stored runs read back as one search when `search` is asked for."""
    from pqbench.data.store import RunFilter
    from pqbench.sessions.bisect import runner, stored

    measuring = runner.Runner(chosen, store, show)
    result = measuring.exhaustive() if every_pair else measuring.bisect()
    found = stored.searches(store.load_runs(RunFilter(ids=tuple(measuring.stored)))) \
        if search and measuring.stored else []
    return Answer(result, found[-1] if found else None, len(measuring.stored),
                  ending(result))

"""`pqbench ab`: the two sides, the session between them, what is kept, and the answer.

The session itself is `sessions.ab`'s (its workers, its stopping rule); what is decided here
is checked without a worker: which runs are kept, what the answer compares, which problems
are shown once for both sides, and how the command ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pqbench.app.ending import Ending, nothing_measured
from pqbench.data.record.results import Problem, Run
from pqbench.platform import interrupts
from pqbench.platform.errors import UsageError
from pqbench.sessions import sides
from pqbench.sessions.ab.client import WorkerError

# The session and the statistics (numpy, scipy) are imported inside the functions: `pqbench
# --help` and the other commands start without them.
if TYPE_CHECKING:
    from pqbench.analysis.compare import RunComparison
    from pqbench.sessions.ab import session


def provision(a: sides.Side, b: sides.Side, settings: session.Settings) -> None:
    """The foreign workers each side starts, built before it starts."""
    for side in (a, b):
        sides.provision_stacks(side, settings.implementations)


def run(a: sides.Side, b: sides.Side, settings: session.Settings, argv: Sequence[str],
        show: Callable[[str, str], None]) -> session.Outcome:
    """The session, in alternation; SIGTERM arrives as interrupts.Terminated (a
    KeyboardInterrupt): the session stops its workers and keeps the finished pairs."""
    from pqbench.sessions.ab import session

    return session.Session(a, b, settings, sides.command_line(argv), show).run()


def kept(outcome: session.Outcome, settings: session.Settings) -> tuple[Run, Run] | None:
    """Both runs when either measured or noted anything; none when nothing started (the
    workers' error is raised), or when no side offers a row (a usage error)."""
    runs = (outcome.run_a, outcome.run_b)
    if _stored(outcome):
        return runs
    if outcome.error:
        raise WorkerError(outcome.error)
    if outcome.status == "complete":
        raise UsageError(f"nothing to measure: no side offers {', '.join(settings.algorithms)}"
                         f" with these operations and implementations")
    return None


def _stored(outcome: session.Outcome) -> bool:
    """Whether the session's runs are stored: either side measured or noted anything."""
    return any(r.measurements or r.problems for r in (outcome.run_a, outcome.run_b))


@dataclass(frozen=True)
class Answer:
    """What `ab` shows: the comparison of the rows both sides measured (None when they
    share none), the session's own figures, the problems (once when both sides lack the
    same), what was stored, and the ending."""

    outcome: session.Outcome
    comparison: RunComparison | None
    session: dict[str, Any]
    problems: tuple[tuple[tuple[Problem, ...], str], ...]
    stored: str
    ending: Ending | None


def shared(a: Run, b: Run) -> bool:
    """The two runs measured at least one row alike."""
    return bool({m.key for m in a.measurements} & {m.key for m in b.measurements})


def problems(a: Run, b: Run) -> tuple[tuple[tuple[Problem, ...], str], ...]:
    """The problems to show and whose they are: one table when two workers of one machine
    lack the same things, else one per side that has any."""
    if a.problems == b.problems:
        return ((a.problems, "both sides"),) if a.problems else ()
    return tuple((run.problems, name) for run, name in ((a, "side A"), (b, "side B"))
                 if run.problems)


def ending(outcome: session.Outcome) -> Ending | None:
    """A worker's error: 1; interrupted: 130 or 143; a side that failed its checks: 1."""
    if outcome.error:
        return Ending(outcome.error, 1)
    if outcome.status == "interrupted":
        finished = any(r.measurements for r in (outcome.run_a, outcome.run_b))
        return Ending("interrupted; the completed pairs were stored" if finished
                      else "interrupted before any pair finished", interrupts.exit_code())
    if any(p.kind == "failed verification" for r in (outcome.run_a, outcome.run_b)
           for p in r.problems):
        return Ending("an implementation failed its checks and was not timed (see above)", 1)
    return nothing_measured(outcome.run_a, outcome.run_b) if _stored(outcome) else None


def answer(outcome: session.Outcome, band: float | None, location: str) -> Answer:
    """The answer to show once the runs are kept (`kept`)."""
    a, b = outcome.run_a, outcome.run_b
    stored = (f"stored as runs {a.run_id} (A) and {b.run_id} (B) in {location}"
              if _stored(outcome) else "nothing was measured, so nothing was stored")
    comparison = None
    figures = dict(a.settings.get("ab") or {}, status=outcome.status)
    if a.measurements and b.measurements and shared(a, b):
        from pqbench.analysis.compare import compare_runs

        comparison = compare_runs([a], [b], band, before_name=a.label, after_name=b.label)
        figures["runs"] = [a.run_id, b.run_id]
    return Answer(outcome, comparison, figures, problems(a, b), stored, ending(outcome))

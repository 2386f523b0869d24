"""The gate a CI job or a fleet rollout puts on `compare`: it fails closed.

`--fail-on` names the verdicts that fail it (slower, faster, any, undecided). Whatever it
names, a gate also fails on what it cannot judge, because a candidate that lost a row could
hide a slowdown as well as anything: a row the baseline measured that the candidate did not
(gone), a row that failed its checks in the candidate (a wrong answer is never timed), a row
of an implementation the candidate asked for that was unavailable or whose worker failed,
and a candidate that measured nothing at all. Each failure names its row and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pqbench.analysis import verdict
from pqbench.analysis.rows import RowKey
from pqbench.data.record.results import Problem, Run
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import printable

if TYPE_CHECKING:
    from pqbench.analysis.compare import RunComparison

#: The exit status of a gate that fails (1 and 2 are errors and usage).
EXIT = 3
#: The verdicts each name of `--fail-on` stands for.
VERDICTS = {"slower": (verdict.SLOWER,), "faster": (verdict.FASTER,),
            "any": (verdict.FASTER, verdict.SLOWER),
            "undecided": (verdict.INCONCLUSIVE, verdict.TOO_FEW)}
#: Problems that fail a gate when the candidate asked for the implementation.
UNAVAILABLE = ("unavailable", "error")


@dataclass(frozen=True)
class Gate:
    """The verdicts that fail the gate, and how the user wrote them."""

    verdicts: frozenset[str]
    text: str

    @classmethod
    def parse(cls, text: str | None) -> Gate | None:
        """The gate `--fail-on TEXT` asks for (None without one): the union of the
        comma-separated names."""
        if text is None:
            return None
        names = [name.strip().lower() for name in text.split(",")]
        unknown = [name for name in names if name not in VERDICTS]
        if unknown or not any(names):
            raise UsageError(f"--fail-on takes one or more of {', '.join(VERDICTS)} joined "
                             f"by commas, not {printable(text)!r}")
        return cls(frozenset(v for name in names for v in VERDICTS[name]), text)


@dataclass(frozen=True)
class Failure:
    """One reason the gate fails: the row (or the side) and why."""

    what: str
    why: str

    def as_dict(self) -> dict[str, str]:
        return {"what": self.what, "why": self.why}


def _row(key: RowKey) -> str:
    algorithm, implementation, operation, block_size = key
    size = f" {block_size} B" if block_size else ""
    return f"{algorithm} [{implementation}] {operation}{size}"


def _problem_of(key: RowKey, problems: Iterable[Problem]) -> Problem | None:
    """The candidate's problem that says why it did not measure a row, if it said."""
    for problem in problems:
        if problem.algorithm == key.algorithm and problem.implementation == key.implementation \
                and problem.operation in (None, key.operation):
            return problem
    return None


def asked_implementations(run: Run) -> frozenset[str]:
    """The implementations a run was asked for by name (`-i`), as its settings record."""
    asked = run.settings.get("implementations") if hasattr(run.settings, "get") else None
    return frozenset(str(i) for i in asked) if isinstance(asked, list) else frozenset()


def judge(gate: Gate, comparison: RunComparison, candidate: Sequence[Run]) -> list[Failure]:
    """Every reason `gate` fails on one comparison whose after side holds the `candidate`
    runs: rows with a verdict it names, rows gone, rows that failed their checks, rows
    asked for and unavailable, and a candidate that measured nothing."""
    found = [Failure(_row(row.key), f"{row.verdict}: {row.reason}")
             for row in comparison.rows if row.verdict in gate.verdicts]
    problems = [p for run in candidate for p in run.problems]
    found += [_gone(key, problems, comparison.before_name, comparison.after_name)
              for key in comparison.only_before]
    return found + missing(candidate, skip={f.what for f in found})


def _gone(key: RowKey, problems: Sequence[Problem], before: str, after: str) -> Failure:
    """A row the baseline measured and the candidate did not, with the candidate's reason
    where it gave one."""
    problem = _problem_of(key, problems)
    said = f"; {problem.kind}: {problem.reason}" if problem is not None else ""
    return Failure(_row(key), f"gone: {before} measured it, {after} did not{said}")


def missing(candidate: Sequence[Run], skip: Iterable[str] = ()) -> list[Failure]:
    """The candidate's own failures, whatever it is compared with: checks failed, an
    implementation asked for that was unavailable or whose worker failed, nothing measured
    (each once, naming the runs it happened in)."""
    skipped = set(skip)
    seen: dict[tuple[str, str], list[str]] = {}
    for run in candidate:
        asked = asked_implementations(run)
        for problem in run.problems:
            what = f"{problem.algorithm} [{problem.implementation}]" + (
                f" {problem.operation}" if problem.operation else "")
            if any(s.startswith(what) for s in skipped):
                continue
            if problem.kind == "failed verification":
                why = f"failed its checks: {problem.reason}"
            elif problem.kind in UNAVAILABLE and problem.implementation in asked:
                why = f"asked for and {problem.kind}: {problem.reason}"
            else:
                continue
            seen.setdefault((what, why), []).append(run.run_id)
    found = [Failure(what, f"{why} (run {', '.join(dict.fromkeys(ids))})")
             for (what, why), ids in seen.items()]
    return found + [Failure(f"run {run.run_id}", "measured nothing")
                    for run in candidate if not run.measurements]


def nothing_in_common(before: Sequence[Run], after: Sequence[Run]) -> list[Failure]:
    """A baseline and a candidate that share no row: every baseline row is gone (with the
    candidate's reason where it gave one), and the candidate's own failures."""
    problems = [p for run in after for p in run.problems]
    keys = dict.fromkeys(m.key for run in before for m in run.measurements if m.samples)
    found = [_gone(key, problems, _side(before), _side(after)) for key in keys]
    return found + missing(after, skip={f.what for f in found})


def _side(runs: Sequence[Run]) -> str:
    return ", ".join(r.label or r.run_id for r in runs[:3]) + ("..." if len(runs) > 3 else "")

"""How a command ends when it does not end well: the one line it says and its exit status.
A use case decides it; the command says it and exits (`cli.common.end`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pqbench.platform import interrupts

if TYPE_CHECKING:
    from pqbench.data.record.results import Run


@dataclass(frozen=True)
class Ending:
    message: str
    #: 1: something failed; 130 or 143: interrupted by Ctrl-C or SIGTERM.
    status: int


def of_run(run: Run, failed: str, kinds: Sequence[str] = ("failed verification",),
           stored_what: str = "rows") -> Ending | None:
    """A measuring command's ending once its run is stored: interrupted, 130 or 143 and what
    was kept; nothing measured, 1 and why (`nothing_measured`); a problem of one of `kinds`
    (a pair that failed its checks), 1 and `failed`; else none."""
    if run.status == "interrupted":
        return Ending(f"interrupted; the {len(run.measurements)} completed {stored_what} were "
                      f"stored as run {run.run_id}", interrupts.exit_code())
    if (found := nothing_measured(run)) is not None:
        return found
    if any(p.kind in kinds for p in run.problems):
        return Ending(failed, 1)
    return None


def nothing_measured(*runs: Run, shown: int = 3) -> Ending | None:
    """1, and why, when a run measured nothing: it was stored as failed (`record.runs.
    new_run`), and a CI job whose library went missing must not go green. The reasons are
    the run's problems, the first few and how many more."""
    failed = [run for run in runs if run.status == "failed"]
    if not failed:
        return None
    said = []
    for run in failed:
        reasons = list(dict.fromkeys(f"{p.implementation}: {p.kind}, {p.reason}"
                                     for p in run.problems)) or ["no row was timed"]
        more = f"; and {len(reasons) - shown} more" if len(reasons) > shown else ""
        said.append(f"nothing was measured ({'; '.join(reasons[:shown])}{more}); stored as "
                    f"failed run {run.run_id}")
    return Ending("\n".join(said), 1)

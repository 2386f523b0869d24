"""`pqbench ab`: two configurations in one paired, interleaved session; `pqbench worker`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pqbench.cli import paired
from pqbench.cli.common import (
    AlgorithmsArgument,
    DbOption,
    ImplementationsOption,
    JsonOption,
    ThresholdOption,
    check_text,
    handles_errors,
    print_json,
    store_or_keep,
)
from pqbench.cli.root import app
from pqbench.data.record import codec
from pqbench.data.record.format import LABEL_CHARS
from pqbench.platform import interrupts
from pqbench.platform.errors import UsageError
from pqbench.sessions import sides
from pqbench.sessions.ab.client import WorkerError
from pqbench.views import console

# The session and the statistics (numpy, scipy) are imported inside the command:
# `pqbench --help` and the other commands start without them.
if TYPE_CHECKING:
    from pqbench.sessions.ab import session

@app.command()
@handles_errors
def ab(
    algorithm: AlgorithmsArgument = None,
    side_a: Annotated[list[str] | None, typer.Option(
        "--a", metavar="SIDE",
        help=f"Side A (before): {' | '.join(sides.SPELLINGS.values())}; repeatable.")] = None,
    side_b: Annotated[list[str] | None, typer.Option(
        "--b", metavar="SIDE", help="Side B (after), as --a.")] = None,
    operation: paired.Operations = None,
    implementation: ImplementationsOption = None,
    block_bytes: paired.Bytes = None,
    max_seconds: Annotated[float, typer.Option(
        "--max-seconds", help="Time budget of the whole session; each row gets what is left "
                              "over the rows still to come.")] = 300.0,
    round_seconds: Annotated[float, typer.Option(
        "--round", help="Seconds per round (each pair is one round of A and one of B).")
    ] = 0.05,
    threshold: ThresholdOption = "auto",
    cpu: paired.Cpu = None,
    worker_pairs: Annotated[int, typer.Option(
        "--worker-pairs", help="Worker pairs (an A and a B process each) the rounds rotate "
                               "over; at least 3.")] = 6,
    label_a: Annotated[str | None, typer.Option(
        "--label-a", help=f"Label of side A's run (up to {LABEL_CHARS} characters).",
        callback=lambda value: check_text(value, "--label-a"))] = None,
    label_b: Annotated[str | None, typer.Option(
        "--label-b", help=f"Label of side B's run (up to {LABEL_CHARS} characters).",
        callback=lambda value: check_text(value, "--label-b"))] = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Measure two configurations in alternation on one CPU and say, row by row, whether B
    is faster or slower than A; both sides are stored as runs."""
    from pqbench.data.store import Store
    from pqbench.sessions.ab import session

    a, b = sides.parse(side_a or [], "a"), sides.parse(side_b or [], "b")
    settings, band = paired.settings(
        algorithm, implementation, operation, block_bytes, max_seconds=max_seconds,
        round_seconds=round_seconds, threshold=threshold, cpu=cpu, worker_pairs=worker_pairs,
        label_a=label_a, label_b=label_b)
    store = Store.open(db)  # fail before measuring if the database is unusable
    for side in (a, b):  # the foreign workers each side starts, built before it starts
        sides.provision_stacks(side, settings.implementations)
    command = sides.command_line(sys.argv[1:])
    # SIGTERM arrives as interrupts.Terminated (a KeyboardInterrupt, installed by
    # handles_errors): the session stops its workers and keeps the finished pairs.
    with console.session_status("starting the workers", max_seconds) as show:
        outcome = session.Session(a, b, settings, command, show).run()
    runs = (outcome.run_a, outcome.run_b)
    if any(run.measurements or run.problems for run in runs):
        # A second signal waits until both runs are stored (or kept in a file).
        store_or_keep(store, runs, {"runs": [codec.run_document(run) for run in runs]}
                      if json_output else None)
    elif outcome.error:  # nothing started: nothing to keep, only the error to say
        raise WorkerError(outcome.error)
    elif outcome.status == "complete":
        raise UsageError(f"nothing to measure: no side offers {', '.join(settings.algorithms)}"
                         f" with these operations and implementations")
    _report(outcome, band, json_output, store.location)


def _report(outcome: session.Outcome, band: float | None, json_output: bool,
            location: str) -> None:
    for note in outcome.notes:
        console.warning(note)
    a, b = outcome.run_a, outcome.run_b
    kept = any(run.measurements or run.problems for run in (a, b))
    stored = (f"stored as runs {a.run_id} (A) and {b.run_id} (B) in {location}" if kept
              else "nothing was measured, so nothing was stored")
    if a.measurements and b.measurements and _shared(a, b):
        from pqbench.analysis.compare import compare_runs

        result = compare_runs([a], [b], band, cross_machine=True,
                              before_name=a.label, after_name=b.label)
        if json_output:
            document: dict[str, Any] = result.as_dict()
            document["session"] = dict(a.settings.get("ab") or {}, status=outcome.status,
                                       runs=[a.run_id, b.run_id])
            print_json(document)
        else:
            console.show_comparison(result)
            console.show_load(a)  # one window for the session: both sides share it
    elif json_output:
        print_json({"rows": [], "session": dict(a.settings.get("ab") or {},
                                                status=outcome.status)})
    else:
        console.note("no row was measured on both sides")
    # Two workers of one machine usually lack the same things: one table then, not two.
    same = a.problems == b.problems
    for run, name in ((a, "both sides"),) if same else ((a, "side A"), (b, "side B")):
        if run.problems:
            console.stderr.print(console.problems_table(run.problems), markup=False)
            console.note(f"({name})")
    console.note(stored)
    if outcome.error:
        console.error(outcome.error)
        raise typer.Exit(1)
    if outcome.status == "interrupted":
        console.error("interrupted; the completed pairs were stored")
        raise typer.Exit(interrupts.exit_code())
    if any(p.kind == "failed verification" for r in (a, b) for p in r.problems):
        console.error("an implementation failed its checks and was not timed (see above)")
        raise typer.Exit(1)


def _shared(a: Any, b: Any) -> bool:
    return bool({m.key for m in a.measurements} & {m.key for m in b.measurements})


@app.command(hidden=True)
def worker() -> None:
    """Serve one side of a `pqbench ab` session on stdin/stdout (JSON lines)."""
    from pqbench.sessions.ab.worker import serve

    raise typer.Exit(serve())

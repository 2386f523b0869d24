"""`pqbench calibrate`: measure this machine's run-to-run spread for the rows you care about."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import (
    AlgorithmsArgument,
    DbOption,
    ImplementationsOption,
    JsonOption,
    LabelOption,
    handles_errors,
    print_json,
)
from pqbench.cli.root import app
from pqbench.views import console


@app.command()
@handles_errors
def calibrate(
    algorithm: AlgorithmsArgument = None,
    runs: Annotated[int, typer.Option(
        "--runs", "-n", min=2, max=50, metavar="N",
        help="Separate runs of the suite, each its own process.")] = 5,
    implementation: ImplementationsOption = None,
    operation: Annotated[list[str] | None, typer.Option(
        "--operation", "-o", metavar="OP", help="Only these operations.")] = None,
    block_bytes: Annotated[list[int] | None, typer.Option(
        "--bytes", min=1, metavar="BYTES",
        help="Ciphers and hashes: bytes per operation (repeatable).")] = None,
    seconds: Annotated[float | None, typer.Option(
        metavar="SECONDS", min=0.001, max=3600.0,
        help="Timed seconds per operation, as `pqbench speed --seconds`.")] = None,
    rounds: Annotated[int | None, typer.Option(
        min=1, max=1000, metavar="N", help="Rounds per operation, as `pqbench speed`.")
    ] = None,
    pause: Annotated[float, typer.Option(
        "--pause", min=0.0, max=3600.0, metavar="SECONDS",
        help="Wait between runs, so they see more of the machine's drift.")] = 0.0,
    label: LabelOption = "calibration",
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Take a few runs of a suite, each in its own process, and store them as calibration.

    `compare` and `history` judge a build with one or few runs against this machine's
    run-to-run spread of each row; these runs measure it (one build, run after run), and
    the table says how large a change one run against one can now call.
    """
    from pqbench.measure.speed.calibration import run_series

    argv = [*(algorithm or [])]
    for impl in implementation or []:
        argv += ["-i", impl]
    for op in operation or []:
        argv += ["-o", op]
    for size in block_bytes or []:
        argv += ["--bytes", str(size)]
    if seconds is not None:
        argv += ["--seconds", repr(seconds)]
    if rounds is not None:
        argv += ["--rounds", str(rounds)]
    if label:
        argv += ["--label", label]
    with console.status(f"calibrating: {runs} runs of the suite, one process each"):
        ids = run_series(argv, runs, db, pause=pause,
                         done=lambda i, run_id: console.note(f"run {i} of {runs}: {run_id}"))
    from pqbench.analysis.noise import NoiseModels, smallest_call
    from pqbench.data.store import RunFilter, Store
    from pqbench.views.noise import spread_table

    store = Store.open(db, create=False)
    stored = store.load_runs(RunFilter(ids=tuple(ids)))
    model = NoiseModels(store).for_runs(stored)
    keys = list(dict.fromkeys(m.key for run in stored for m in run.measurements if m.samples))
    spreads = [(key, model.spread(key) if model is not None else None) for key in keys]
    if json_output:
        print_json({"runs": ids, "rows": [
            {"algorithm": k[0], "implementation": k[1], "operation": k[2], "block_size": k[3],
             "spread": s.as_dict() if s else None,
             "smallest_change_one_against_one": smallest_call(s, 1, 1) if s else None}
            for k, s in spreads]})
        return
    console.print_table(spread_table(spreads))
    console.note(f"stored {len(ids)} calibration runs ({', '.join(ids)}); compare and history "
                 "judge one run per build against these spreads")

"""`pqbench speed`: time algorithms like `openssl speed`, verified first, stored always."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app.speed import (
    DEFAULT_ROUNDS,
    MAX_BLOCK_BYTES,
    MAX_PROCESSES,
    MAX_ROUNDS,
    MAX_SECONDS,
    MIN_SECONDS,
    QUICK_SECONDS,
)
from pqbench.cli.common import (
    AlgorithmsArgument,
    CsvOption,
    DbOption,
    ImplementationsOption,
    JsonOption,
    LabelOption,
    RelativeToOption,
    check_text,
    exit_for,
    finite_float,
    handles_errors,
    one_output,
    provision,
    store_or_keep,
)
from pqbench.cli.root import app
from pqbench.data.record import codec
from pqbench.platform.errors import UsageError
from pqbench.views import console


@app.command()
@handles_errors
def speed(
    algorithm: AlgorithmsArgument = None,
    seconds: Annotated[float | None, typer.Option(
        metavar="SECONDS", parser=finite_float(MIN_SECONDS, MAX_SECONDS),
        help="Timed seconds per operation, split over the rounds (default 1; quick suite "
             f"{QUICK_SECONDS}; at least {MIN_SECONDS:g}, at most {MAX_SECONDS:g}).")] = None,
    rounds: Annotated[int | None, typer.Option(
        min=1, max=MAX_ROUNDS, metavar="N",
        help=f"Timed rounds per operation, taken in cycles of one round of every row "
             f"(default {DEFAULT_ROUNDS}; at most {MAX_ROUNDS}).")] = None,
    implementation: ImplementationsOption = None,
    operation: Annotated[list[str] | None, typer.Option(
        "--operation", "-o", metavar="OP",
        help="Only these operations (repeatable); `-o keygen` adds RSA "
                                  "key generation.")] = None,
    block_bytes: Annotated[list[int] | None, typer.Option(
        "--bytes", min=1, max=MAX_BLOCK_BYTES, metavar="BYTES",
        help="Ciphers and hashes: only these bytes per operation (repeatable), at most 64 "
             "MiB (default: the openssl speed sweep 16 64 256 1024 8192 16384).")] = None,
    label: LabelOption = None,
    mask: Annotated[str | None, typer.Option(
        "--mask", metavar="NAMES",
        help="Hide CPU capabilities from OpenSSL for this run, e.g. aesni,shani "
                       "(OPENSSL_ia32cap; OPENSSL_armcap on ARM); recorded in the "
                       "fingerprint.")] = None,
    processes: Annotated[int, typer.Option(
        "--multi", min=1, max=MAX_PROCESSES, metavar="N",
        help="Run N worker processes at once per operation, as `openssl speed -multi`; "
             "rows show the aggregate, JSON also each worker.")] = 1,
    cpu: Annotated[str | None, typer.Option(
        "--cpu", metavar="LIST",
        help="Pin the measurement (with --multi, its workers in turn) to these "
                      "CPUs, e.g. 0 or 0,2-3 (Linux).")] = None,
    elapsed: Annotated[bool, typer.Option(
        "--elapsed", metavar="",
        help="Rates in wall-clock time, as `openssl speed -elapsed` (default: "
                          "the measuring thread's CPU time).")] = False,
    relative_to: RelativeToOption = None,
    calibration: Annotated[str | None, typer.Option(
        "--calibration", metavar="SERIES:I:N", hidden=True,
        help="Mark the run as run I of N of a `pqbench calibrate` series.")] = None,
    json_output: JsonOption = False,
    csv_output: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Measure ops/s, µs/op, spread and sizes per algorithm, implementation and operation."""
    from pqbench.app import speed as use_case
    from pqbench.data.store import Store
    from pqbench.views import speed as speed_views

    one_output(json=json_output, csv=csv_output)
    capability_mask, relaunched = use_case.masked(mask)
    if relaunched is not None:  # a child that started with the mask measured
        raise typer.Exit(relaunched)
    plan = use_case.plan(algorithm, implementation, relative_to, use_case.settings(
        algorithm, seconds, rounds, operation, block_bytes, label, processes, cpu, elapsed,
        calibration_mark(calibration), implementation), capability_mask)
    speed_views.before(plan)
    store = Store.open(db)  # fail before measuring if the database is unusable
    provision(plan.implementations)
    with console.progress_bar(plan.steps) as advance:
        run = use_case.measure(plan, lambda task: advance(task.title))
    # A second Ctrl-C or SIGTERM waits until the run is stored (or kept in a file).
    store_or_keep(store, [run], codec.run_document(run) if json_output else None)
    speed_views.show(use_case.answer(run, plan.reference), store.location,
                     json_output=json_output, csv_output=csv_output)
    exit_for(run, "measurements", "an implementation", workers_fail=True)


def calibration_mark(text: str | None) -> dict[str, object]:
    """The settings a `pqbench calibrate` run carries: its series, place and count."""
    if text is None:
        return {}
    series, _, rest = text.partition(":")
    index, _, count = rest.partition(":")
    if not series or not index.isdigit() or not count.isdigit() or not \
            0 < int(index) <= int(count):
        raise UsageError("--calibration takes SERIES:I:N, as `pqbench calibrate` passes it")
    return {"calibration": {"series": check_text(series, "--calibration"),
                            "index": int(index), "runs": int(count)}}


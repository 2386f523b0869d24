"""`pqbench speed`: time algorithms like `openssl speed`, verified first, stored always."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm, normalize
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
    print_json,
    provision,
    store_or_keep,
)
from pqbench.cli.root import app
from pqbench.data.record import codec
from pqbench.data.record.results import Run
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure import environment
from pqbench.measure.speed import mask as capmask
from pqbench.measure.speed import suite
from pqbench.platform.errors import UnknownAlgorithmError, UsageError
from pqbench.timing import multi
from pqbench.views import console, delimited

QUICK_SECONDS = 0.5
#: Rounds are cycles of the paired ratios: 10 reach a 99 % signed-rank interval (8 is the
#: least that can), 5 at most 93.75 %.
QUICK_ROUNDS = 10
DEFAULT_ROUNDS = 10
#: An hour per operation is more than any figure needs; beyond it a typo runs for days.
MAX_SECONDS = 3600.0
#: The native loops time rounds of whole nanoseconds: with MAX_ROUNDS rounds, a
#: millisecond still gives each round a microsecond.
MIN_SECONDS = 0.001
#: Rounds are samples: a thousand pins a median far beyond what drift between runs allows.
MAX_ROUNDS = 1000
#: The native loops' largest block (64 MiB, one buffer per operation and direction).
MAX_BLOCK_BYTES = 64 << 20
MAX_PROCESSES = 1024


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
    from pqbench.data.store import Store

    one_output(json=json_output, csv=csv_output)
    capability_mask = capmask.build(mask) if mask is not None else None
    if capability_mask is not None:
        # OpenSSL reads the mask when it initialises: measure in a child that starts with it.
        exit_code = capmask.relaunch(capability_mask)
        if exit_code is not None:
            raise typer.Exit(exit_code)
    quick = not algorithm
    settings = suite.SpeedSettings(
        seconds=seconds if seconds is not None else (QUICK_SECONDS if quick else 1.0),
        rounds=rounds if rounds is not None else (QUICK_ROUNDS if quick else DEFAULT_ROUNDS),
        operations=tuple(dict.fromkeys(operation or ())),  # -o twice is one operation
        block_sizes=tuple(sorted(set(block_bytes))) if block_bytes else suite.BLOCK_SIZES,
        label=label,
        processes=processes,
        cpus=multi.parse_cpus(cpu) if cpu is not None else (),
        time_base="wall" if elapsed else "cpu",
        extra=calibration_mark(calibration),
    )
    kems, sigs = liboqs_mechanisms()
    try:
        chosen = algorithms.resolve(algorithm or algorithms.QUICK_SUITE, kems, sigs)
    except UnknownAlgorithmError as exc:
        from pqbench.libraries.liboqs.mechanisms import explain_unknown

        raise explain_unknown(exc) from None  # liboqs knows it, this build left it out
    reference = _reference(relative_to, chosen)
    _check_operations(settings.operations, chosen)
    _warn_oversubscribed(processes)
    impls = select(implementation)
    tasks = suite.plan(chosen, impls, settings)
    if not tasks:
        raise UsageError(f"nothing to measure: {', '.join(i.name for i in impls)} "
                         f"{'does' if len(impls) == 1 else 'do'} not cover "
                         f"{', '.join(a.name for a in chosen)}")
    store = Store.open(db)  # fail before measuring if the database is unusable
    provision(list(dict.fromkeys(task.implementation for task in tasks)))
    env = environment.collect(extra={
        "mask": capability_mask.fingerprint() if capability_mask else None})
    # One step to check and prepare each row, then one per round of it.
    with console.progress_bar(len(tasks) * (1 + settings.rounds)) as advance:
        run = suite.run_suite(tasks, settings, env, lambda t: advance(t.title))
    # A second Ctrl-C or SIGTERM waits until the run is stored (or kept in a file).
    store_or_keep(store, [run], codec.run_document(run) if json_output else None)
    from pqbench.analysis import ratios
    from pqbench.analysis.figures import run_figures

    figures = run_figures(run)
    console.warn_unstable(figures)
    asked = ratios.relative_to(run, reference) if reference else []
    if json_output:
        document = codec.run_document(run)
        document["ratios"] = [r.as_dict() for r in (*figures.ratios, *asked)]
        print_json(document)
    elif csv_output:
        console.write(delimited.run_csv(run))
    else:
        console.show_run(run, figures)
        _note_helpers(run)
        console.show_ratios(figures.mission, asked)
        console.note(f"stored as run {run.run_id} in {store.location}")
    exit_for(run, "measurements", "an implementation", workers_fail=True)


def _note_helpers(run: Run) -> None:
    """Foreign rows whose process's other threads worked while they were timed, and those
    whose warm-up never settled: their rates deserve a second look."""
    helped = [f"{m.algorithm} {m.operation} [{m.implementation}]" for m in run.measurements
              if m.attributes.get("helper_threads")]
    unsettled = [f"{m.algorithm} {m.operation} [{m.implementation}]"
                 for m in run.measurements if m.attributes.get("warmup_settled") is False]
    if helped:
        console.note(f"other threads of the worker's process (a JIT, a collector) used over "
                     f"10 % more CPU than the timed thread: {', '.join(helped)}")
    if unsettled:
        console.note(f"no two warm-up rounds agreed within 5 % (20 tried): "
                     f"{', '.join(unsettled)}")


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


def _reference(name: str | None, chosen: Sequence[Algorithm]) -> str | None:
    """The algorithm --relative-to names, which must be one of those measured."""
    if name is None:
        return None
    key = normalize(name)
    for alg in chosen:
        if key in {normalize(alg.name), *map(normalize, alg.aliases)}:
            return alg.name
    raise UsageError(f"--relative-to {name}: not one of the algorithms measured "
                     f"({', '.join(a.name for a in chosen)})")


def _check_operations(wanted: Sequence[str], chosen: Sequence[Algorithm]) -> None:
    """`-o NAME` that no chosen algorithm has: the operation is the problem, not the
    algorithm, and the message says which operations the algorithms have (and which
    algorithms have NAME, when it is another family's); those only some have are noted
    once, naming the algorithms that lack each (not measured for it)."""
    lacking_any: dict[str, list[str]] = {}
    for operation in wanted:
        lacking = [alg for alg in chosen if operation not in alg.all_operations]
        if len(lacking) < len(chosen):
            if lacking:
                lacking_any[operation] = [alg.name for alg in lacking]
            continue
        offered = "; ".join(f"{alg.name} has {', '.join(alg.all_operations)}"
                            for alg in chosen)
        owners = [alg.name for alg in algorithms.all_algorithms()
                  if operation in alg.all_operations]
        where = (f"; {operation!r} is an operation of {', '.join(owners[:3])}"
                 f"{' ...' if len(owners) > 3 else ''}" if owners else "")
        names = ", ".join(alg.name for alg in chosen)
        raise UsageError(f"{names} {'has' if len(chosen) == 1 else 'have'} no operation "
                         f"{operation!r} (-o): {offered}{where}")
    if lacking_any:
        console.note("-o: each algorithm is measured for the operations it has; " + "; ".join(
            f"no {op} in {', '.join(names)}" for op, names in lacking_any.items()))


def _warn_oversubscribed(processes: int) -> None:
    cpus = multi.usable_cpus()
    if processes > cpus:
        console.warning(f"--multi {processes} on {cpus} CPU(s): the workers take turns on "
                        "the CPUs, so the aggregate shows the scheduler's sharing, not more "
                        "throughput; use at most one worker per CPU")

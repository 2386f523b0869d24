"""`pqbench memory`: the peak stack, peak heap and allocations of one call per operation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.catalog import algorithms
from pqbench.cli.common import (
    DbOption,
    JsonOption,
    LabelOption,
    handles_errors,
    one_output,
    store_and_print,
)
from pqbench.cli.root import app
from pqbench.data.record import memory as memory_runs
from pqbench.data.record.memory import MemoryFigure
from pqbench.data.record.results import Run
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure import environment
from pqbench.measure.memory import runner
from pqbench.platform import interrupts
from pqbench.platform.errors import UsageError
from pqbench.views import comparisons, console
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:
    from pqbench.data.store import Store

#: What `pqbench memory` measures with no argument (the issue's list).
MEMORY_SUITE = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65",
                "ML-DSA-87", "X25519", "ECDH-P-256", "RSA-2048", "Ed25519")
_MAX_CALLS = 1000


def _varies(fig: MemoryFigure) -> str:
    """The figures that differed between the calls, as smallest–largest."""
    return "; ".join(f"{short} {comparisons.span(span)}"
                     for metric, short in (("stack_bytes", "stack"), ("heap_bytes", "heap"),
                                           ("allocations", "allocs"))
                     if (span := fig.span(metric)) is not None and span[0] != span[1])


def show(run: Run, store: Store) -> None:
    found = memory_runs.figures([run])
    console.print_table(Table(
        f"pqbench memory run {run.run_id} ({run.status}): one call per operation",
        (Column("algorithm"), Column("implementation", short="impl."),
         Column("operation"), Column("stack B", "count"), Column("heap peak B", "count"),
         Column("allocations", "count", short="allocs"),
         Column("varies between calls", priority=1, wrap=True)),
        tuple((f.algorithm, f.implementation, f.operation, f.stack_bytes, f.heap_bytes,
               f.allocations, _varies(f)) for f in found)))
    console.show_load(run)
    if run.problems:
        console.stdout.print(console.problems_table(run.problems))
    settings = run.settings
    console.note(
        f"Largest of {settings.get('calls')} calls, each on valid inputs prepared afresh and "
        "checked as for timing, in a process of its own. Stack: high-water mark on a painted "
        f"{runner.STACK_REGION_BYTES >> 20} MiB stack, less the harness's own "
        f"{settings.get('harness_stack_bytes')} B. Heap: "
        + ("bytes requested and not yet freed at the peak, through an LD_PRELOAD "
           "allocator interposer." if settings.get("heap_counted")
           else f"not counted ({settings.get('heap')})."))
    console.note(f"stored as run {run.run_id} in {store.location}")


@app.command()
@handles_errors
def memory(
    algorithm: Annotated[list[str] | None, typer.Argument(
        help="Public-key algorithms by name (ml-kem-768, mldsa65, x25519, rsa2048, or any "
             f"liboqs name). None: {', '.join(MEMORY_SUITE)}.")] = None,
    implementation: Annotated[list[str] | None, typer.Option(
        "--implementation", "-i",
        help=f"Only these implementations (repeatable): {', '.join(runner.IMPLEMENTATIONS)}."
    )] = None,
    operation: Annotated[list[str] | None, typer.Option(
        "--operation", "-o", help="Only these operations (repeatable); decaps-reject is a "
                                  "KEM's implicit rejection; `-o keygen` adds RSA keygen.")
    ] = None,
    calls: Annotated[int, typer.Option(
        help="Calls measured per operation, each on fresh keys and inputs; each figure is "
             "the largest.")
    ] = runner.DEFAULT_CALLS,
    label: LabelOption = None,
    json_output: JsonOption = False,
    csv_output: Annotated[bool, typer.Option("--csv", help="Print CSV rows on stdout.")] = False,
    db: DbOption = None,
) -> None:
    """Measure peak stack bytes, peak heap bytes and allocations of one call per operation,
    through liboqs and the system libcrypto (stored as a run of kind memory)."""
    from pqbench.data.store import Store

    one_output(json=json_output, csv=csv_output)
    if not 1 <= calls <= _MAX_CALLS:
        raise UsageError(f"--calls must be between 1 and {_MAX_CALLS}")
    wrong = [n for n in implementation or () if n not in runner.IMPLEMENTATIONS]
    if wrong:
        raise UsageError(f"memory is measured through {', '.join(runner.IMPLEMENTATIONS)}; "
                         f"not {', '.join(wrong)}")
    kems, sigs = liboqs_mechanisms()
    chosen = algorithms.resolve(algorithm or MEMORY_SUITE, kems, sigs)
    impls = select(list(implementation or runner.IMPLEMENTATIONS))
    tasks = runner.plan(chosen, impls, tuple(operation or ()))
    if not tasks:
        raise UsageError(f"nothing to measure: no operation of {', '.join(a.name for a in chosen)}"
                         f" matches {', '.join(operation or ())} through "
                         f"{', '.join(i.name for i in impls)}")
    store = Store.open(db)  # fail before measuring if the database is unusable
    env = environment.collect()
    started = datetime.now(UTC)
    watch = environment.Watch()
    recorder = runner.MemoryRecorder()
    status = "complete"
    with console.progress_bar(len(tasks)) as advance:
        try:
            runner.execute(tasks, calls, recorder, lambda t: advance(t.title))
        except KeyboardInterrupt:
            status = "interrupted"
    _, missing = runner.interposer()
    settings = {"calls": calls, "operations": list(dict.fromkeys(operation or ())), "label": label,
                "stack_region_bytes": runner.STACK_REGION_BYTES,
                "harness_stack_bytes": recorder.harness_stack_bytes,
                "heap_counted": recorder.heap_counted,
                "heap": "counted" if recorder.heap_counted else missing}
    env["run"] = watch.state()
    run = memory_runs.memory_run(started, settings, env, recorder.figures, recorder.problems,
                                 recorder.verifications, status)
    store_and_print(store, run, show, json_output=json_output, csv_output=csv_output)
    if status == "interrupted":
        console.error(f"interrupted; the {len(run.measurements)} completed rows were stored "
                      f"as run {run.run_id}")
        raise typer.Exit(interrupts.exit_code())  # 143 after SIGTERM, 130 after Ctrl-C
    if any(p.kind in ("failed verification", "error") for p in run.problems):
        console.error("an operation failed its check or its measurement (see above)")
        raise typer.Exit(1)

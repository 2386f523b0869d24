"""A `pqbench memory` run on the terminal: one call per operation, with what varied between
the calls and how each figure was taken."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pqbench.data.record import memory as memory_runs
from pqbench.data.record.memory import MemoryFigure
from pqbench.views import console
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:
    from pqbench.data.record.results import Run
    from pqbench.data.store import Store

def varies(fig: MemoryFigure) -> str:
    """The figures that differed between the calls, as smallest–largest."""
    # Here, not at the top: `show` imports this module for every run it shows.
    from pqbench.views import comparisons

    return "; ".join(f"{short} {comparisons.span(span)}"
                     for metric, short in (("stack_bytes", "stack"), ("heap_bytes", "heap"),
                                           ("allocations", "allocs"))
                     if (span := fig.span(metric)) is not None and span[0] != span[1])


def table(run: Run) -> Table:
    return Table(
        f"pqbench memory run {run.run_id} ({run.status}): one call per operation",
        (Column("algorithm"), Column("implementation", short="impl."),
         Column("operation"), Column("stack B", "count"), Column("heap peak B", "count"),
         Column("allocations", "count", short="allocs"),
         Column("varies between calls", priority=1, wrap=True)),
        tuple((f.algorithm, f.implementation, f.operation, f.stack_bytes, f.heap_bytes,
               f.allocations, varies(f)) for f in memory_runs.figures([run])))


def show(run: Run, store: Store) -> None:
    """The run's table, its load, what was not measured, and how the figures were taken."""
    from pqbench.measure.memory.runner import STACK_REGION_BYTES

    console.print_table(table(run))
    console.show_load(run)
    if run.problems:
        console.stdout.print(console.problems_table(run.problems))
    settings = run.settings
    region = int(settings.get("stack_region_bytes") or STACK_REGION_BYTES)
    console.note(
        f"Largest of {settings.get('calls')} calls, each on valid inputs prepared afresh and "
        "checked as for timing, in a process of its own. Stack: high-water mark on a painted "
        f"{region >> 20} MiB stack, less the harness's own "
        f"{settings.get('harness_stack_bytes')} B. Heap: "
        + ("bytes requested and not yet freed at the peak, through an LD_PRELOAD "
           "allocator interposer." if settings.get("heap_counted")
           else f"not counted ({settings.get('heap')})."))
    console.note(f"stored as run {run.run_id} in {store.location}")

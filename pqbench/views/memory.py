"""A `pqbench memory` run on the terminal: one call per operation, with what varied between
the calls and how each figure was taken."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pqbench.data.record import memory as memory_runs
from pqbench.data.record.memory import MemoryFigure
from pqbench.views import console, runs
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
        f"{runs.heading(run, 'memory')}: one call per operation",
        (Column("algorithm"), Column("implementation", short="impl."),
         Column("operation"), Column("stack B", "count"), Column("heap peak B", "count"),
         Column("allocations", "count", short="allocs"),
         Column("varies between calls", priority=1, wrap=True)),
        tuple((f.algorithm, f.implementation, f.operation, f.stack_bytes, f.heap_bytes,
               f.allocations, varies(f)) for f in memory_runs.figures([run])))


def show(run: Run, store: Store) -> None:
    """The run's table, its load, what was not measured, and how the figures were taken."""
    console.print_table(table(run))
    console.show_load(run)
    if run.problems:
        console.stdout.print(console.problems_table(run.problems))
    console.note(method(run.settings))
    console.note(f"stored as run {run.run_id} in {store.location}")


def method(settings: Mapping[str, Any]) -> str:
    """How a memory run's figures were taken, said under its table."""
    from pqbench.measure.memory.runner import STACK_REGION_BYTES

    region = int(settings.get("stack_region_bytes") or STACK_REGION_BYTES)
    calls = settings.get("calls")
    return (("One call on" if calls == 1 else f"Largest of {calls} calls, each on")
            + " valid inputs prepared afresh and checked as for timing, in a process of its "
            f"own. Stack: high-water mark on a painted {region >> 20} MiB stack, less the "
            f"harness's own {settings.get('harness_stack_bytes')} B. Heap: "
            + ("bytes requested and not yet freed at the peak, through an LD_PRELOAD "
               "allocator interposer." if settings.get("heap_counted")
               else f"not counted ({settings.get('heap')})."))

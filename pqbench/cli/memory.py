"""`pqbench memory`: the peak stack, peak heap and allocations of one call per operation."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app import memory as use_case
from pqbench.cli.common import (
    DbOption,
    JsonOption,
    LabelOption,
    end,
    handles_errors,
    one_output,
    store_and_print,
)
from pqbench.cli.root import app
from pqbench.measure.memory import runner
from pqbench.views import console
from pqbench.views import memory as memory_views


@app.command()
@handles_errors
def memory(
    algorithm: Annotated[list[str] | None, typer.Argument(
        help="Public-key algorithms by name (ml-kem-768, mldsa65, x25519, rsa2048, or any "
             f"liboqs name). None: {', '.join(use_case.SUITE)}.")] = None,
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
    tasks = use_case.plan(algorithm, implementation, operation, calls)
    store = Store.open(db)  # fail before measuring if the database is unusable
    with console.progress_bar(len(tasks)) as advance:
        run = use_case.measure(tasks, calls, operation, label, advance)
    store_and_print(store, run, memory_views.show, json_output=json_output,
                    csv_output=csv_output)
    end(use_case.ending(run))

"""`pqbench history` and `pqbench annotate`: one algorithm over OS builds, with its steps."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import DbOption, JsonOption, check_text, handles_errors, print_json
from pqbench.cli.root import app
from pqbench.errors import ComparisonError, UsageError
from pqbench.presentation import console
from pqbench.store import Store


@app.command()
@handles_errors
def history(
    algorithm: Annotated[str, typer.Argument(help="Algorithm name, e.g. ML-KEM-768.")],
    implementation: Annotated[str | None, typer.Option(
        "--implementation", "-i", help="Only this implementation.")] = None,
    operation: Annotated[str | None, typer.Option(
        "--operation", "-o", help="Only this operation.")] = None,
    by: Annotated[str, typer.Option(
        help="What a point is: os_build (default), label, date, or any fingerprint field.")
    ] = "os_build",
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Rate per build, oldest first, with detected steps and annotations."""
    # The statistics (numpy, scipy) load here, not when `pqbench --help` starts.
    from pqbench.analysis.history import history as build_history

    store = Store.open(db, create=False)
    runs = store.load_runs()
    if not runs:
        raise ComparisonError(f"no runs stored in {store.location}")
    notes: dict[str, list[str]] = {}
    for build, text, _created in store.annotations():
        notes.setdefault(build, []).append(text)
    series = build_history(runs, algorithm, implementation=implementation,
                           operation=operation, by=by, annotations=notes)
    if json_output:
        print_json({"algorithm": algorithm, "by": by, "series": [s.as_dict() for s in series]})
        return
    for one in series:
        console.stdout.print(console.history_table(one))


@app.command()
@handles_errors
def annotate(
    build: Annotated[str, typer.Argument(help="The build (or label) the note belongs to.")],
    text: Annotated[str, typer.Argument(help="The explanation, e.g. 'AES-NI enabled'.")],
    db: DbOption = None,
) -> None:
    """Attach an explanation to a build; `history` and reports show it."""
    if not build.strip() or not text.strip():
        raise UsageError("both BUILD and TEXT must be non-empty")
    check_text(build, "BUILD")
    check_text(text, "TEXT")
    store = Store.open(db, create=False)
    store.annotate(build, text)
    console.note(f"noted for {build}: {text}")

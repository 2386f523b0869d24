"""`pqbench export` and `pqbench import`: move runs between machines as files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pqbench.app import transfer as use_case
from pqbench.cli.common import DbOption, JsonOption, end, handles_errors, many_records
from pqbench.cli.root import app
from pqbench.views import console


@app.command()
@handles_errors
def export(
    runs: Annotated[list[str] | None, typer.Argument(
        metavar="RUN",
        help="Run ids (or unique prefixes); or --last N, or --all.")] = None,
    last: Annotated[int | None, typer.Option(
        "--last", "-n", min=1, metavar="N", help="The N newest runs.")] = None,
    every: Annotated[bool, typer.Option("--all", metavar="", help="Every stored run.")] = False,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", metavar="FORMAT",
            help="json (pqbench, re-importable) or pytest-benchmark.")
    ] = "json",
    output: Annotated[Path | None, typer.Option(
        "--output", "-O", metavar="PATH", help="Write here instead of stdout.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", metavar="", help="Replace an existing --output file.")] = False,
    db: DbOption = None,
) -> None:
    """Write runs to a file that `pqbench import` or `pytest-benchmark compare` reads."""
    from pqbench.data.store import Store

    use_case.check(fmt, output, force, runs, last, every)
    store = Store.open(db, create=False)
    text, count = use_case.export(store, runs, last, every, fmt)
    if output is None:
        console.write(text)
        return
    use_case.write_whole(output, text)
    console.note(f"exported {count} run(s) to {output}")


@app.command(name="import")
@handles_errors
def import_(
    files: Annotated[list[Path], typer.Argument(metavar="FILE", help="pqbench export files.")],
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Store the runs of export files; runs already stored are skipped (idempotent)."""
    with many_records():
        found = use_case.import_files(files, db)
    if json_output:
        console.print_json(found.document())
    else:
        console.note(f"imported {len(found.stored)} run(s) into {found.location}"
                     + (f"; {len(found.skipped)} already stored" if found.skipped else ""))
    end(found.ending)

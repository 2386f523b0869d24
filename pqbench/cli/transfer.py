"""`pqbench export` and `pqbench import`: move runs between machines as files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from pqbench.cli.common import DbOption, JsonOption, handles_errors, many_records, print_json
from pqbench.cli.root import app
from pqbench.platform.errors import InputFileError, StoreError, UsageError
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
    # The validation models (pydantic) load here, not when `pqbench --help` starts.
    from pqbench.data.record import transfer
    from pqbench.data.store import RunFilter, Store

    if fmt not in transfer.FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; choose from {', '.join(transfer.FORMATS)}")
    # An earlier export (perhaps the only copy of runs from another machine) is never
    # replaced by accident; checked before the database is read.
    if output is not None and (output.is_symlink()
                               or (output.exists() and not output.is_file())):
        # Even with --force: replacing /dev/null (as root) or a link to /proc/self/fd/1
        # with a regular file is never what was meant.
        raise InputFileError(f"{output} is not a regular file; pqbench replaces only "
                             "regular files: choose another --output")
    if output is not None and not force and output.exists():
        raise InputFileError(f"{output} already exists; pass --force to replace it, or "
                             "choose another --output")
    chosen = [bool(runs), last is not None, every]
    if sum(chosen) != 1:
        raise UsageError("name the runs to export, or give --last N or --all (one of them)")
    store = Store.open(db, create=False)
    if not runs:
        from pqbench.data.store.selection import newest_ids

        runs = newest_ids(store, None if every else last)
        if not runs:
            raise UsageError(f"no runs stored in {store.location}; nothing to export")
    loaded = store.load_runs(RunFilter(ids=tuple(runs)))
    text = transfer.export(loaded, fmt)
    if output is None:
        console.write(text)
        return
    _write_whole(output, text)
    console.note(f"exported {len(loaded)} run(s) to {output}")


def _write_whole(output: Path, text: str) -> None:
    """Write `text` to `output` whole or not at all: a temporary file beside it, renamed
    into place, so a full disk or an interruption never leaves half an export."""
    temporary = None
    try:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=output.parent or ".",
                                         prefix=f".{output.name}.", delete=False) as file:
            temporary = Path(file.name)
            file.write(text)
        os.replace(temporary, output)
    except OSError as exc:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise InputFileError(f"cannot write {output}: {exc.strerror or exc}") from None


@app.command(name="import")
@handles_errors
def import_(
    files: Annotated[list[Path], typer.Argument(metavar="FILE", help="pqbench export files.")],
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Store the runs of export files; runs already stored are skipped (idempotent)."""
    from pqbench.data.record import transfer
    from pqbench.data.store import Store

    with many_records():
        # Every file validated before anything is written, then all runs of all files
        # written in one transaction, straight from the validated documents.
        documents = transfer.read_documents(files)
        store = Store.open(db)
        stored = store.save_documents(documents)
    written = set(stored)
    skipped = [doc for doc in documents if doc["run_id"] not in written]
    differing = store.stored_otherwise(skipped)
    if json_output:
        print_json({"database": store.location, "imported": stored,
                    "already_stored": [doc["run_id"] for doc in skipped],
                    "stored_with_other_contents": differing})
    else:
        console.note(f"imported {len(stored)} run(s) into {store.location}"
                     + (f"; {len(skipped)} already stored" if skipped else ""))
    if differing:
        shown = ", ".join(differing[:5]) + (" ..." if len(differing) > 5 else "")
        raise StoreError(f"{len(differing)} run(s) of the files were not imported: a run "
                         f"with the same id but other contents is stored ({shown}); the "
                         f"stored run was kept as it is (import the file into another "
                         "database to compare them)")

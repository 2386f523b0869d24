"""`pqbench publish`: every machine's history as a static site that opens from disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pqbench.cli.common import DbOption, handles_errors, many_records
from pqbench.cli.root import app
from pqbench.platform import untrusted
from pqbench.views import console


@app.command()
@handles_errors
def publish(
    out: Annotated[Path, typer.Option(
        "--out", metavar="DIR",
        help="Folder to write the site into: new, empty, or written by an earlier "
             "publish (then only what changed is rewritten).")],
    db: DbOption = None,
) -> None:
    """Write a static site of every machine's history: machines and builds, regressions,
    post-quantum against classical ratios, a page per row and per comparison. It opens
    from disk in a browser: no server, no network."""
    # The statistics (numpy, scipy) and plotly's JavaScript load here, not at --help.
    from pqbench.app.publish import site_of
    from pqbench.data.store import Store
    from pqbench.views import site

    site.check_folder(out)
    store = Store.open(db, create=False)
    known = site.known_parts(out)
    # A folder named like a database URL keeps its password off the screen.
    secrets = untrusted.passwords_in(str(out))
    with many_records(), console.status(
            f"publishing {store.location} to {untrusted.redact(str(out), secrets)}"):
        found = site_of(store, known)
        written = site.write(found, out)
    console.note(
        f"wrote {len(written.written)} of {len(written.written) + len(written.unchanged)} "
        f"files ({len(found.made)} of {len(found.parts)} machines computed afresh"
        f"{f', {len(written.removed)} removed' if written.removed else ''}; "
        f"{written.size / 1e6:.1f} MB in all)")
    console.note(f"open {untrusted.redact((out / 'index.html').resolve().as_uri(), secrets)}")

"""`pqbench list`: what can be measured, and the names it answers to."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app import listing as use_case
from pqbench.cli.common import JsonOption, end, handles_errors
from pqbench.cli.root import app
from pqbench.views import listing


@app.command("list")
@handles_errors
def list_command(
    kind: Annotated[str | None, typer.Argument(
        metavar="KIND",
        help="Only this kind: kem, signature, key-agreement, rsa, cipher or hash.")] = None,
    compile_now: Annotated[bool, typer.Option(
        "--compile", help="Compile every foreign worker this machine can compile now, "
        "instead of on its first use (Go in seconds, Rust in minutes).")] = False,
    json_output: JsonOption = False,
) -> None:
    """List the algorithms `speed` and `ab` measure: kind, operations, the implementations
    that offer them here (a foreign one compiled on first use marked *), and every spelling
    they answer to (openssl speed's among them: rsa2048, ecdhx25519, aes-256-cbc, sha256)."""
    found = use_case.listing(kind, compile_now)
    listing.show(found, kind, json_output)
    end(found.ending)

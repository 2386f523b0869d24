"""`pqbench list`: what can be measured, and the names it answers to."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import JsonOption, handles_errors, print_json
from pqbench.cli.root import app
from pqbench.views import console
from pqbench.views.tables import Column, Table


@app.command("list")
@handles_errors
def list_command(
    kind: Annotated[str | None, typer.Argument(
        metavar="KIND",
        help="Only this kind: kem, signature, key-agreement, rsa, cipher or hash.")] = None,
    json_output: JsonOption = False,
) -> None:
    """List the algorithms `speed` and `ab` measure: kind, operations, the implementations
    that offer them here, and every spelling they answer to (openssl speed's among them:
    rsa2048, ecdhx25519, aes-256-cbc, sha256)."""
    from pqbench.catalog.algorithms import all_algorithms
    from pqbench.libraries.implementations import all_implementations, on_request
    from pqbench.libraries.implementations.stacks import StackImplementation
    from pqbench.platform.errors import UsageError

    algorithms = [a for a in all_algorithms() if kind is None or a.kind == kind]
    if not algorithms:
        kinds = sorted({a.kind for a in all_algorithms()})
        raise UsageError(f"unknown kind {kind!r}; choose from {', '.join(kinds)}")
    # Foreign stacks are listed from their build's manifest: nothing is built or started.
    stacks = {impl.name: impl.process.availability() for impl in all_implementations()
              if isinstance(impl, StackImplementation)}
    usable = [impl for impl in all_implementations()
              if not on_request(impl) and impl.unavailable_reason() is None]
    listed = []
    for alg in algorithms:
        offered = [impl.name for impl in usable if impl.in_scope(alg)
                   and any(impl.offers(alg, op) is None for op in alg.operations)]
        offered += [name for name, found in stacks.items() if found.hello is not None
                    and alg.name in found.hello.offers]
        listed.append({"algorithm": alg.name, "kind": alg.kind,
                       "operations": list(alg.operations),
                       "on_request": list(alg.optional_operations),
                       "implementations": offered, "spellings": list(alg.aliases)})
    foreign = [{"implementation": impl.name, "language": impl.stack.language,
                "what": impl.stack.description, "state": stacks[impl.name].state,
                "detail": stacks[impl.name].detail}
               for impl in all_implementations() if isinstance(impl, StackImplementation)]
    if json_output:
        print_json({"algorithms": listed, "stacks": foreign})
        return
    table = Table("algorithms (any other liboqs KEM or signature: by its liboqs name)",
                  (Column("algorithm"), Column("kind", priority=2),
                   Column("operations", wrap=True), Column("implementations", wrap=True,
                                                           priority=1),
                   Column("also spelled", wrap=True)),
                  tuple((a["algorithm"], a["kind"],
                         " ".join([*a["operations"], *(f"({op})" for op in a["on_request"])]),
                         ", ".join(a["implementations"]) or None,
                         ", ".join(a["spellings"]) or None) for a in listed))
    console.print_table(table)
    if kind in (None, "kem", "signature", "key-agreement"):
        console.print_table(Table(
            "foreign implementations (-i NAME; built on first use, once per machine)",
            (Column("implementation"), Column("language", priority=2),
             Column("what", wrap=True, priority=3), Column("here", wrap=True)),
            tuple((f["implementation"], f["language"], f["what"],
                   "built" if f["state"] == "built" else f["detail"]) for f in foreign)))
    unusable = [impl.name for impl in all_implementations()
                if not on_request(impl) and impl not in usable]
    if unusable:
        console.note(f"not usable here: {', '.join(unusable)} (`pqbench env` says why)")


"""`pqbench list`'s answer: the algorithms of each kind with who offers them here (a foreign
implementation compiled on its first use marked `*`), the foreign implementations and
their state, and what --compile did; or one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pqbench.views import console
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:
    from pqbench.app.listing import Listed, Listing

#: The mark of an implementation compiled on first use, and the note that says so.
FIRST_USE = "*"
FIRST_USE_NOTE = ("* compiled on first use, once per machine (`pqbench list --compile` "
                  "compiles them now)")


def document(found: Listing) -> dict[str, Any]:
    return {
        "algorithms": [{"algorithm": a.algorithm.name, "kind": a.algorithm.kind,
                        "operations": list(a.algorithm.operations),
                        "on_request": list(a.algorithm.optional_operations),
                        "implementations": [*a.ready, *a.on_first_use],
                        "compiled_on_first_use": list(a.on_first_use),
                        "spellings": list(a.algorithm.aliases)} for a in found.algorithms],
        "stacks": [{"implementation": f.name, "language": f.language, "what": f.what,
                    "state": f.state, "detail": f.detail} for f in found.stacks],
        **({"compiled": [{"implementation": c.name, "compiled": c.compiled,
                          "detail": c.detail} for c in found.compiled]}
           if found.compiled else {}),
    }


def _implementations(listed: Listed) -> str | None:
    names = [*listed.ready, *(f"{name}{FIRST_USE}" for name in listed.on_first_use)]
    return ", ".join(names) or None


#: What a kind's table says under its title.
BY_LIBOQS_NAME = {"kem": "any other liboqs KEM: by its liboqs name",
                  "signature": "any other liboqs signature: by its liboqs name"}


def tables(found: Listing) -> list[Table]:
    """One table of algorithms per kind, in the order the kinds come: a kind's names are
    as long as its own (ML-KEM-768 beside AES-256-CTR-CASCADE took a column of 19), and
    the kind is said once, in the title, where a column said it on every row."""
    kinds: dict[str, list[Listed]] = {}
    for listed in found.algorithms:
        kinds.setdefault(listed.algorithm.kind, []).append(listed)
    return [Table(
        f"{kind} algorithms" + (f" ({BY_LIBOQS_NAME[kind]})" if kind in BY_LIBOQS_NAME else ""),
        (Column("algorithm"), Column("operations", wrap=True),
         Column("implementations", wrap=True), Column("also spelled", wrap=True)),
        tuple((a.algorithm.name,
               " ".join([*a.algorithm.operations,
                         *(f"({op})" for op in a.algorithm.optional_operations)]),
               _implementations(a), ", ".join(a.algorithm.aliases) or None)
              for a in listed)) for kind, listed in kinds.items()]


def stacks_table(found: Listing) -> Table:
    """The foreign implementations and their state here; a long state (the toolchain it
    would be compiled with, what is missing) goes below as a note where it would make
    its row tall."""
    return Table(
        "foreign implementations (-i NAME; compiled on first use, once per machine)",
        (Column("implementation"), Column("language", priority=2),
         Column("what", wrap=True, priority=3), Column("here", wrap=True, notes=True)),
        tuple((f.name, f.language, f.what, "compiled" if f.state == "built" else f.detail)
              for f in found.stacks))


def show(found: Listing, kind: str | None, json_output: bool) -> None:
    if json_output:
        console.print_json(document(found))
        return
    for table in tables(found):
        console.print_table(table)
    if any(a.on_first_use for a in found.algorithms):
        console.note(FIRST_USE_NOTE)
    if kind in (None, "kem", "signature", "key-agreement"):
        console.print_table(stacks_table(found))
    if found.compiled:
        console.print_table(Table(
            "compiled now", (Column("implementation"), Column("result", wrap=True)),
            tuple((c.name, ("compiled into " if c.compiled else "failed: ") + c.detail)
                  for c in found.compiled),
            tuple(None if c.compiled else "failed" for c in found.compiled)))
    if found.unusable:
        console.note(f"not usable here: {', '.join(found.unusable)} (`pqbench env` says why)")

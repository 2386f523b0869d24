"""`pqbench list`'s answer: the algorithms with who offers them here (a foreign
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


def show(found: Listing, kind: str | None, json_output: bool) -> None:
    if json_output:
        console.print_json(document(found))
        return
    console.print_table(Table(
        "algorithms (any other liboqs KEM or signature: by its liboqs name)",
        (Column("algorithm"), Column("kind", priority=2), Column("operations", wrap=True),
         Column("implementations", wrap=True, priority=1),
         Column("also spelled", wrap=True)),
        tuple((a.algorithm.name, a.algorithm.kind,
               " ".join([*a.algorithm.operations,
                         *(f"({op})" for op in a.algorithm.optional_operations)]),
               _implementations(a), ", ".join(a.algorithm.aliases) or None)
              for a in found.algorithms)))
    if any(a.on_first_use for a in found.algorithms):
        console.note(FIRST_USE_NOTE)
    if kind in (None, "kem", "signature", "key-agreement"):
        console.print_table(Table(
            "foreign implementations (-i NAME; compiled on first use, once per machine)",
            (Column("implementation"), Column("language", priority=2),
             Column("what", wrap=True, priority=3), Column("here", wrap=True)),
            tuple((f.name, f.language, f.what, "compiled" if f.state == "built" else f.detail)
                  for f in found.stacks)))
    if found.compiled:
        console.print_table(Table(
            "compiled now", (Column("implementation"), Column("result", wrap=True)),
            tuple((c.name, ("compiled into " if c.compiled else "failed: ") + c.detail)
                  for c in found.compiled),
            tuple(None if c.compiled else "failed" for c in found.compiled)))
    if found.unusable:
        console.note(f"not usable here: {', '.join(found.unusable)} (`pqbench env` says why)")

"""The house the architecture test enforces (tests/project/test_architecture.py) and the
flow test reads (tests/project/test_flow.py): its rooms ranked top to bottom."""

from __future__ import annotations

#: The house, top to bottom: one tier per line of the drawing in docs/architecture.md (a
#: test checks that the drawing says the same). A module imports from its own room and from
#: rooms of lower tiers only: never up the list, and never sideways to another room of its
#: own tier. Loose modules at the root are rooms of their own, named without ".py"
#: (`pqbench` is the package's `__init__.py`). A room may be ranked before it is built.
HOUSE: tuple[tuple[str, ...], ...] = (
    ("__main__", "pytest_plugin"),
    ("cli",),
    ("views",),
    ("app",),
    ("sessions",),
    ("measure",),
    ("analysis",),
    ("libraries",),
    ("timing",),
    ("catalog",),
    ("data",),
    ("platform", "pqbench"),
)

#: The same rule one level down, in the rooms that hold rooms of their own: their tiers top
#: to bottom, drawn indented under the room in docs/architecture.md. A room's own modules
#: (its `__init__.py` and the modules loose in it, named "") stand below its inner rooms.
INNER: dict[str, tuple[tuple[str, ...], ...]] = {
    "views": (("report", "site"), ("",)),
    "sessions": (("bisect",), ("ab",), ("sides",), ("",)),
    "measure": (("speed", "files", "tls", "memory"), ("checks", "environment"), ("",)),
    "libraries": (("implementations",), ("stacks", "userland"), ("liboqs",), ("",)),
    "catalog": (("vectors", "algorithms"), ("",)),
    "data": (("store",), ("record",), ("",)),
}


def room(module: str) -> str:
    """The room a module lives in: its package below pqbench (`analysis`, `record` ...), or
    the module itself for one loose at the root (`environment`, `errors` ...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def tier_of(house: tuple[tuple[str, ...], ...] = HOUSE) -> dict[str, int]:
    """room -> its tier's index, 0 at the top."""
    return {r: i for i, tier in enumerate(house) for r in tier}

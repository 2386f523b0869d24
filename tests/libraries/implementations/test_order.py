"""One registry of implementation names and one table order, which every table, chart,
report and TLS grid sorts by."""

from __future__ import annotations

from pqbench.libraries import implementations
from pqbench.libraries.implementations import ORDER, SPEED, STACKS, TLS, rank
from pqbench.measure.tls import registry


def test_every_implementation_is_named_once_in_the_order() -> None:
    assert len(ORDER) == len(set(ORDER))
    measured = [impl.name for impl in implementations.all_implementations()]
    assert measured == [name for name in ORDER if name in measured]
    assert set(measured) == set(SPEED)  # every speed implementation is built, and only they
    assert list(registry.names()) == list(TLS)


def test_native_loops_stand_beside_their_bindings_and_stacks_after_python() -> None:
    for binding, native in implementations.BINDINGS:
        assert ORDER.index(binding) == ORDER.index(native) + 1
    assert ORDER.index("python") < min(ORDER.index(s) for s in STACKS)
    assert max(ORDER.index(s) for s in STACKS) < min(ORDER.index(t) for t in TLS)


def test_an_unknown_name_comes_last_by_name() -> None:
    names = ["zeta", "libssl", "alpha", "liboqs", "cryptography"]
    assert sorted(names, key=rank) == ["liboqs", "cryptography", "libssl", "alpha", "zeta"]


def test_the_tls_grid_keeps_the_order_whatever_is_asked() -> None:
    chosen = registry.select(["libssl", "pyopenssl", "libssl"])
    assert [i.name for i in chosen] == ["pyopenssl", "libssl"]


def test_the_recipes_enter_the_one_registry_in_their_order() -> None:
    """The stack workers' recipes are not a second registry: each is an implementation of
    the one registry, named in ORDER in the recipes' order."""
    from pqbench.libraries.stacks import registry as recipes

    assert recipes.names() == STACKS
    assert ORDER[ORDER.index(STACKS[0]):][:len(STACKS)] == STACKS
    built = [impl.name for impl in implementations.all_implementations()]
    assert [name for name in built if name in STACKS] == list(STACKS)


def test_every_name_a_chart_colours_is_in_the_order() -> None:
    """The chart styles key colours by name: a name there outside ORDER is a table order
    of its own (or a renamed implementation the charts still colour)."""
    from pqbench.views.report.charts import IMPLEMENTATION_STYLE

    directions = {"client to server", "server to client"}  # the TLS bytes chart's series
    assert set(IMPLEMENTATION_STYLE) - directions <= set(ORDER)
    assert set(IMPLEMENTATION_STYLE) & directions == directions

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

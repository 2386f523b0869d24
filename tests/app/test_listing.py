"""`pqbench list`'s decisions without a process: how --compile ends, and what a foreign
implementation not yet compiled is listed for."""

from __future__ import annotations

from pqbench.app.listing import Compiled, Listing
from pqbench.libraries.stacks import registry


def test_compile_ahead_ends_with_1_naming_what_failed() -> None:
    done = Listing((), (), (), (Compiled("go", True, "/cache/go"),
                                Compiled("libcrux", False, "cargo exited with status 101")))
    assert done.ending is not None and done.ending.status == 1
    assert "libcrux" in done.ending.message and "go" not in done.ending.message
    assert Listing((), (), (), (Compiled("go", True, "/cache/go"),)).ending is None
    assert Listing((), (), ()).ending is None


def test_every_stack_declares_what_it_offers_in_the_protocols_names() -> None:
    for stack in registry.STACKS:
        assert stack.offers and set(stack.offers) <= set(registry.PROTOCOL_ALGORITHMS)
    assert "ECDH-P-256" not in registry.by_name("libcrux").offers
    assert registry.by_name("go").offers == registry.PROTOCOL_ALGORITHMS

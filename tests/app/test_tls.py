"""`pqbench tls`'s decisions, called directly: the settings, the grid, the libraries'
fingerprint and how the command ends."""

from __future__ import annotations

import dataclasses

import pytest

from pqbench.app import tls
from pqbench.data.record.results import Problem
from pqbench.measure.tls import catalog, registry
from pqbench.platform.errors import UsageError
from tests.helpers.runs import make_run


def _settings(operations: list[str] | None = None,
              transports: list[str] | None = None) -> object:
    return tls.settings(1.0, 5, operations, transports, 1500, 10, 1, None)


def test_operations_and_transports_keep_their_order_whatever_the_options_say() -> None:
    chosen = tls.settings(0.5, 3, ["resumed", "full"], ["loopback", "memory"], 9000, 4, 2,
                          "x")
    assert chosen.operations == ("full", "resumed")
    assert chosen.transports == ("memory", "loopback")
    assert (chosen.seconds, chosen.rounds, chosen.mtu, chosen.initial_window,
            chosen.intermediates, chosen.label) == (0.5, 3, 9000, 4, 2, "x")
    assert tls.settings(1.0, 5, ["resumed"], None, 1500, 10, 1, None).operations == (
        "resumed",)


@pytest.mark.parametrize(("operations", "transports", "message"), [
    (["half"], None, "unknown --operation 'half'; known: full, resumed"),
    (None, ["udp"], "unknown --transport 'udp'; known: memory, loopback"),
])
def test_an_unknown_operation_or_transport_is_named(operations: list[str] | None,
                                                    transports: list[str] | None,
                                                    message: str) -> None:
    with pytest.raises(UsageError, match=message):
        _settings(operations, transports)


def test_the_plan_is_the_default_grid_through_every_library() -> None:
    plan = tls.plan(None, None, None, _settings())
    assert len(plan.cells) == len(catalog.DEFAULT_GROUPS) * len(catalog.DEFAULT_CERTIFICATES)
    assert [i.name for i in plan.implementations] == registry.names()
    narrowed = tls.plan([catalog.DEFAULT_GROUPS[0]], [catalog.DEFAULT_CERTIFICATES[0]],
                        [registry.names()[0]], _settings(["full"], ["memory"]))
    assert len(narrowed.cells) == 1 and len(narrowed.implementations) == 1
    assert 0 < narrowed.size < plan.size


def test_the_fingerprint_names_each_library_or_why_it_is_unavailable() -> None:
    found = tls.fingerprint(registry.select(None))
    assert list(found) == registry.names()
    for implementation in registry.select(None):
        entry = found[implementation.name]
        reason = implementation.unavailable_reason()
        assert entry == {"unavailable": reason} if reason else entry["library"]


def test_the_ending_is_the_interruption_then_a_failed_handshake() -> None:
    run = dataclasses.replace(make_run("t1", seed=2), kind="tls")
    assert tls.ending(run) is None
    failed = dataclasses.replace(run, problems=(
        Problem("X25519MLKEM768", "libssl", "failed verification", "group not negotiated"),))
    assert tls.ending(failed) == tls.Ending(
        "a handshake failed its checks and was not timed (see above)", 1)
    died = dataclasses.replace(run, problems=(Problem("x", "libssl", "error", "died"),))
    assert tls.ending(died) is None
    ending = tls.ending(dataclasses.replace(failed, status="interrupted"))
    assert ending is not None and ending.status in (130, 143)
    assert ending.message.startswith("interrupted; the ")


def test_a_tls_run_that_measured_nothing_ends_1_saying_why() -> None:
    run = dataclasses.replace(make_run("t2", seed=2), kind="tls", measurements=(),
                              status="failed", problems=(
        Problem("X25519MLKEM768", "libssl", "unavailable", "no ML-KEM group"),))
    assert tls.ending(run) == tls.Ending(
        "nothing was measured (libssl: unavailable, no ML-KEM group); stored as failed run "
        "t2", 1)

"""`pqbench tls`: what post-quantum key exchange and certificates cost in a real handshake."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.app import tls as use_case
from pqbench.app.tls import MAX_INITIAL_WINDOW, MAX_INTERMEDIATES, MAX_MTU, MAX_ROUNDS, MAX_SECONDS
from pqbench.cli.common import (
    DbOption,
    JsonOption,
    LabelOption,
    end,
    finite_float,
    handles_errors,
    store_and_print,
)
from pqbench.cli.root import app
from pqbench.measure.tls import catalog
from pqbench.views import console
from pqbench.views import tls as tls_views


@app.command()
@handles_errors
def tls(
    group: Annotated[list[str] | None, typer.Option(
        "--group", "-g", help="Key-exchange groups (repeatable): "
        + ", ".join(g.name for g in catalog.GROUPS)
        + f". Default: {', '.join(catalog.DEFAULT_GROUPS)}.")] = None,
    cert: Annotated[list[str] | None, typer.Option(
        "--cert", "-c", help="Server certificate key types (repeatable): "
        + ", ".join(catalog.DEFAULT_CERTIFICATES) + ". Default: all.")] = None,
    implementation: Annotated[list[str] | None, typer.Option(
        "--implementation", "-i", help="Only these TLS implementations (repeatable): "
                                       "pyopenssl, python-ssl, libssl.")] = None,
    operation: Annotated[list[str] | None, typer.Option(
        "--operation", "-o", help="full, resumed (repeatable; default both).")] = None,
    transport: Annotated[list[str] | None, typer.Option(
        "--transport", help="memory (one process, CPU only), loopback (two processes over "
                            "127.0.0.1); repeatable, default both.")] = None,
    seconds: Annotated[float, typer.Option(
        parser=finite_float(0, MAX_SECONDS, low_open=True),
        help=f"Timed seconds per row, split over the rounds (at most {MAX_SECONDS:g}).")
    ] = 1.0,
    rounds: Annotated[int, typer.Option(
        min=1, max=MAX_ROUNDS, help=f"Timed rounds per row (at most {MAX_ROUNDS}).")] = 5,
    mtu: Annotated[int, typer.Option(
        min=41, max=MAX_MTU, help="MTU of the round-trip model, bytes.")] = 1500,
    initial_window: Annotated[int, typer.Option(
        "--initial-window", min=1, max=MAX_INITIAL_WINDOW,
        help="TCP initial congestion window of the model, segments (RFC 6928: 10).")] = 10,
    intermediates: Annotated[int, typer.Option(
        min=0, max=MAX_INTERMEDIATES,
        help="Intermediate CAs between the root and the server certificate; the server "
             "sends them with its certificate.")] = 1,
    label: LabelOption = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Time real TLS 1.3 handshakes over a key-exchange x certificate grid: handshakes/s,
    CPU per side, bytes per side and round trips, each handshake verified first."""
    from pqbench.data.store import Store

    settings = use_case.settings(seconds, rounds, operation, transport, mtu, initial_window,
                                 intermediates, label)
    plan = use_case.plan(group, cert, implementation, settings)
    store = Store.open(db)  # fail before measuring if the database is unusable
    with console.progress_bar(plan.size) as advance:
        run = use_case.measure(plan, advance)
    # A second Ctrl-C or SIGTERM waits until the run is stored (or kept in a file).
    store_and_print(store, run, tls_views.show, json_output=json_output)
    end(use_case.ending(run))

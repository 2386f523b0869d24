"""`pqbench tls`: what post-quantum key exchange and certificates cost in a real handshake."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pqbench.cli.common import (
    DbOption,
    JsonOption,
    LabelOption,
    exit_for,
    finite_float,
    handles_errors,
    store_and_print,
)
from pqbench.cli.root import app
from pqbench.data.record.results import Run
from pqbench.measure import environment
from pqbench.measure.tls import catalog, grid, registry
from pqbench.measure.tls import runs as tls_runs
from pqbench.measure.tls.base import TlsImplementation
from pqbench.platform.errors import UsageError
from pqbench.views import console, runs

if TYPE_CHECKING:
    from pqbench.data.store import Store

MAX_INTERMEDIATES = 4
#: As `speed`: an hour per row is more than any figure needs; beyond it a typo runs for days.
MAX_SECONDS = 3600.0
MAX_ROUNDS = 1000
#: Jumbo frames and beyond: the largest IPv4 packet.
MAX_MTU = 65535
MAX_INITIAL_WINDOW = 1000


def _settings(seconds: float, rounds: int, operations: list[str] | None,
              transports: list[str] | None, mtu: int, initial_window: int,
              intermediates: int, label: str | None) -> grid.TlsSettings:
    for given, known, option in ((operations, grid.OPERATIONS, "--operation"),
                                 (transports, grid.TRANSPORTS, "--transport")):
        unknown = [v for v in given or () if v not in known]
        if unknown:
            raise UsageError(f"unknown {option} {unknown[0]!r}; known: {', '.join(known)}")
    return grid.TlsSettings(
        seconds=seconds, rounds=rounds,
        operations=tuple(o for o in grid.OPERATIONS if o in (operations or grid.OPERATIONS)),
        transports=tuple(t for t in grid.TRANSPORTS if t in (transports or grid.TRANSPORTS)),
        mtu=mtu, initial_window=initial_window, intermediates=intermediates, label=label)


def _show(run: Run, store: Store) -> None:
    settings = run.settings
    console.print_table(runs.tls_table(run))
    console.show_load(run)
    if run.problems:
        console.stdout.print(console.problems_table(run.problems))
    console.note("hs/s: handshakes per second (median of the rounds); client/server µs: CPU "
                 "time per handshake; B: bytes each side sent, and the certificate chain. "
                 "Transport memory: client and server in one process over memory buffers "
                 "(CPU only); loopback: two processes over 127.0.0.1. Round trips (and the "
                 "server flight's TCP segments) are "
                 "computed from the bytes at MTU "
                 f"{settings.get('mtu')} and an initial window of "
                 f"{settings.get('initial_window')} segments (TCP's own handshake not "
                 "counted).")
    console.note(f"stored as run {run.run_id} in {store.location}")


def _fingerprint(implementations: list[TlsImplementation]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for implementation in implementations:
        reason = implementation.unavailable_reason()
        found[implementation.name] = ({"unavailable": reason} if reason else
                                      {"library": implementation.library(),
                                       **implementation.versions()})
    return found


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

    settings = _settings(seconds, rounds, operation, transport, mtu, initial_window,
                         intermediates, label)
    cells = catalog.grid(catalog.resolve_groups(group or catalog.DEFAULT_GROUPS),
                         catalog.resolve_certificates(cert or catalog.DEFAULT_CERTIFICATES))
    implementations = registry.select(implementation)
    store = Store.open(db)  # fail before measuring if the database is unusable
    env = environment.collect(extra={"tls": _fingerprint(implementations)})
    started = datetime.now(UTC)
    watch = environment.Watch()
    recorder = grid.GridRecorder()
    status = "complete"
    with console.progress_bar(grid.plan_size(cells, implementations, settings)) as advance:
        try:
            grid.run_grid(cells, implementations, settings, recorder, advance)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: keep the rows completed so far
            status = "interrupted"
    env["run"] = watch.state()
    run = tls_runs.tls_run(started, settings, env, recorder.results, recorder.problems,
                           recorder.verifications, status)
    # A second Ctrl-C or SIGTERM waits until the run is stored (or kept in a file).
    store_and_print(store, run, _show, json_output=json_output)
    exit_for(run, "rows", "a handshake")

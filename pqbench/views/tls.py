"""A `pqbench tls` run on the terminal: the grid's table and what its columns mean."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pqbench.views import console, runs

if TYPE_CHECKING:
    from pqbench.data.record.results import Run
    from pqbench.data.store import Store


def show(run: Run, store: Store) -> None:
    """The run's table, its load, what was not measured, and the round-trip model's
    inputs."""
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

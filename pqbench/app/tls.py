"""`pqbench tls`: which handshakes are timed, the run they make, and how the command ends.

The handshakes are `measure.tls`'s; what is decided here is checked without a server: the
options, the grid, the libraries' fingerprint, the ending.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pqbench.app.ending import Ending, of_run
from pqbench.data.record.results import Run
from pqbench.measure import environment
from pqbench.measure.tls import catalog, grid, registry
from pqbench.measure.tls import runs as tls_runs
from pqbench.measure.tls.base import TlsImplementation
from pqbench.platform.errors import UsageError

MAX_INTERMEDIATES = 4
#: As `speed`: an hour per row is more than any figure needs; beyond it a typo runs for days.
MAX_SECONDS = 3600.0
MAX_ROUNDS = 1000
#: Jumbo frames and beyond: the largest IPv4 packet.
MAX_MTU = 65535
MAX_INITIAL_WINDOW = 1000


@dataclass(frozen=True)
class Plan:
    """The grid to time: its cells, the libraries and the settings every row shares."""

    cells: Sequence[catalog.Cell]
    implementations: Sequence[TlsImplementation]
    settings: grid.TlsSettings

    @property
    def size(self) -> int:
        """Steps of the progress bar: every row's check and rounds."""
        return grid.plan_size(self.cells, self.implementations, self.settings)


def settings(seconds: float, rounds: int, operations: Sequence[str] | None,
             transports: Sequence[str] | None, mtu: int, initial_window: int,
             intermediates: int, label: str | None) -> grid.TlsSettings:
    """The settings, operations and transports in their fixed order; an unknown one is a
    usage error that names it and what is known."""
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


def plan(group: Sequence[str] | None, cert: Sequence[str] | None,
         implementation: Sequence[str] | None, chosen: grid.TlsSettings) -> Plan:
    """Groups x certificates (each default when none is named), through the libraries
    named (every one when none is)."""
    cells = catalog.grid(catalog.resolve_groups(list(group or catalog.DEFAULT_GROUPS)),
                         catalog.resolve_certificates(list(cert or catalog.DEFAULT_CERTIFICATES)))
    return Plan(cells, registry.select(implementation), chosen)


def fingerprint(implementations: Sequence[TlsImplementation]) -> dict[str, Any]:
    """Each library's name and versions, or why it is unavailable."""
    found: dict[str, Any] = {}
    for implementation in implementations:
        reason = implementation.unavailable_reason()
        found[implementation.name] = ({"unavailable": reason} if reason else
                                      {"library": implementation.library(),
                                       **implementation.versions()})
    return found


def measure(chosen: Plan, advance: Callable[..., None]) -> Run:
    """Time the grid; Ctrl-C or SIGTERM keeps the rows completed so far, in a run marked
    interrupted."""
    env = environment.collect(extra={"tls": fingerprint(chosen.implementations)})
    started = datetime.now(UTC)
    watch = environment.Watch()
    recorder = grid.GridRecorder()
    status = "complete"
    try:
        grid.run_grid(chosen.cells, chosen.implementations, chosen.settings, recorder, advance)
    except KeyboardInterrupt:
        status = "interrupted"
    env["run"] = watch.state()
    return tls_runs.tls_run(started, chosen.settings, env, recorder.results,
                            recorder.problems, recorder.verifications, status)


def ending(run: Run) -> Ending | None:
    """Interrupted: 130 or 143, saying what was kept; a handshake that failed its checks: 1;
    else none."""
    return of_run(run, "a handshake failed its checks and was not timed (see above)")

"""What `pqbench ab` and `pqbench bisect` share: the options that choose a paired session's
rows and the CPU its workers share (their settings are `app.paired`'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.app import paired
from pqbench.cli.common import parse_threshold

if TYPE_CHECKING:
    from pqbench.sessions.ab import session

#: What else narrows a paired session's rows, and which CPU its workers share.
Operations = Annotated[list[str] | None, typer.Option(
    "--operation", "-o", metavar="OP", help="Only these operations (repeatable).")]
Bytes = Annotated[list[int] | None, typer.Option(
    "--bytes", metavar="BYTES",
    help="Ciphers and hashes: only these bytes per operation (repeatable).")]
Cpu = Annotated[int | None, typer.Option(
    "--cpu", metavar="CPU",
    help="The CPU all workers are pinned to (default: the highest allowed that no "
         "other paired session holds).")]


def settings(algorithm: list[str] | None, implementation: list[str] | None,
             operation: list[str] | None, block_bytes: list[int] | None, *,
             max_seconds: float, round_seconds: float, threshold: str, cpu: int | None,
             worker_pairs: int | None = None, label_a: str | None = None,
             label_b: str | None = None) -> tuple[session.Settings, float | None]:
    """The session's settings (`app.paired.settings`) and the band `--threshold` names."""
    band = parse_threshold(threshold)
    return paired.settings(algorithm, implementation, operation, block_bytes,
                           max_seconds=max_seconds, round_seconds=round_seconds, band=band,
                           cpu=cpu, worker_pairs=worker_pairs, label_a=label_a,
                           label_b=label_b), band

"""What `pqbench ab` and `pqbench bisect` share: the options that choose a paired session's
rows and the CPU its workers share, and the session settings built from them, each checked."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated

import typer

from pqbench.catalog import algorithms
from pqbench.cli.common import parse_threshold
from pqbench.libraries.implementations import ORDER, liboqs_mechanisms
from pqbench.measure.speed import suite
from pqbench.platform.errors import UsageError
from pqbench.timing import multi

# The session and the statistics (numpy, scipy) are imported inside `settings`: `pqbench
# --help` and the other commands start without them.
if TYPE_CHECKING:
    from pqbench.sessions.ab import session

#: Every implementation name a pqbench worker can offer (a side may lack some of them).
IMPLEMENTATION_NAMES = (*ORDER, "python")

#: What else narrows a paired session's rows, and which CPU its workers share.
Operations = Annotated[list[str] | None, typer.Option(
    "--operation", "-o", metavar="OP", help="Only these operations (repeatable).")]
Bytes = Annotated[list[int] | None, typer.Option(
    "--bytes", metavar="BYTES",
    help="Ciphers and hashes: only these bytes per operation (repeatable).")]
Cpu = Annotated[int | None, typer.Option(
    "--cpu", metavar="CPU",
    help="The CPU all workers are pinned to (default: the highest allowed).")]


def settings(algorithm: list[str] | None, implementation: list[str] | None,
             operation: list[str] | None, block_bytes: list[int] | None, *,
             max_seconds: float, round_seconds: float, threshold: str, cpu: int | None,
             worker_pairs: int | None = None, label_a: str | None = None,
             label_b: str | None = None) -> tuple[session.Settings, float | None]:
    """What a paired session measures and how long it may take, from the options `ab` and
    `bisect` share, each checked (a usage error names the option), and the band."""
    from pqbench.sessions.ab import sequential, session

    if not (math.isfinite(max_seconds) and max_seconds > 0) or not 0 < round_seconds <= 10:
        raise UsageError("--max-seconds must be a finite positive number and --round "
                         "between 0 and 10 s")
    if worker_pairs is not None and not session.MIN_WORKER_PAIRS <= worker_pairs <= 64:
        raise UsageError(f"--worker-pairs must be between {session.MIN_WORKER_PAIRS} and 64")
    if cpu is not None:  # a CPU this process may not use: refused, as `speed --cpu` does
        multi.parse_cpus(str(cpu))
    if any(size < 1 for size in block_bytes or ()):
        raise UsageError("--bytes must be at least 1")
    band = parse_threshold(threshold)
    unknown = [name for name in implementation or () if name not in IMPLEMENTATION_NAMES]
    if unknown:
        raise UsageError(f"unknown implementation {', '.join(unknown)}; choose from "
                         f"{', '.join(IMPLEMENTATION_NAMES)}")
    kems, sigs = liboqs_mechanisms()
    chosen = algorithms.resolve(algorithm or algorithms.QUICK_SUITE, kems, sigs)
    chosen_settings = session.Settings(
        algorithms=tuple(alg.name for alg in chosen),
        implementations=tuple(implementation) if implementation else None,
        operations=tuple(dict.fromkeys(operation or ())),  # -o twice is one operation
        block_sizes=tuple(sorted(set(block_bytes))) if block_bytes else suite.BLOCK_SIZES,
        max_seconds=max_seconds, round_seconds=round_seconds, threshold=band, cpu=cpu,
        label_a=label_a, label_b=label_b, looks=sequential.Looks(),
        **({"worker_pairs": worker_pairs} if worker_pairs is not None else {}))
    return chosen_settings, band

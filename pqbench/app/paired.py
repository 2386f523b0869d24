"""What a paired session (`ab`, and each session of `bisect`) measures and how long it may
take, from the options both commands take, each checked: a usage error names the option."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.catalog import algorithms
from pqbench.libraries.implementations import SPEED, liboqs_mechanisms
from pqbench.measure.speed import suite
from pqbench.platform.errors import UsageError
from pqbench.timing import multi

# The session and the statistics (numpy, scipy) are imported inside `settings`: `pqbench
# --help` and the other commands start without them.
if TYPE_CHECKING:
    from pqbench.sessions.ab import session

#: Every implementation name a pqbench worker can offer (a side may lack some of them).
IMPLEMENTATION_NAMES = SPEED
#: The most worker pairs a session rotates its rounds over.
MAX_WORKER_PAIRS = 64


def settings(algorithm: Sequence[str] | None, implementation: Sequence[str] | None,
             operation: Sequence[str] | None, block_bytes: Sequence[int] | None, *,
             max_seconds: float, round_seconds: float, band: float | None, cpu: int | None,
             worker_pairs: int | None = None, label_a: str | None = None,
             label_b: str | None = None) -> session.Settings:
    """The session's settings: its rows (algorithms resolved; every block size unless some
    are named, then each named size once, smallest first), its time budget and round, the
    band, the shared CPU and the worker pairs."""
    from pqbench.sessions.ab import sequential, session

    if not (math.isfinite(max_seconds) and max_seconds > 0) or not 0 < round_seconds <= 10:
        raise UsageError("--max-seconds must be a finite positive number and --round "
                         "between 0 and 10 s")
    if worker_pairs is not None and not \
            session.MIN_WORKER_PAIRS <= worker_pairs <= MAX_WORKER_PAIRS:
        raise UsageError(f"--worker-pairs must be between {session.MIN_WORKER_PAIRS} and "
                         f"{MAX_WORKER_PAIRS}")
    if cpu is not None:  # a CPU this process may not use: refused, as `speed --cpu` does
        multi.parse_cpus(str(cpu))
    if any(size < 1 for size in block_bytes or ()):
        raise UsageError("--bytes must be at least 1")
    unknown = [name for name in implementation or () if name not in IMPLEMENTATION_NAMES]
    if unknown:
        raise UsageError(f"unknown implementation {', '.join(unknown)}; choose from "
                         f"{', '.join(IMPLEMENTATION_NAMES)}")
    kems, sigs = liboqs_mechanisms()
    chosen = algorithms.resolve(list(algorithm or algorithms.QUICK_SUITE), kems, sigs)
    return session.Settings(
        algorithms=tuple(alg.name for alg in chosen),
        implementations=tuple(implementation) if implementation else None,
        operations=tuple(dict.fromkeys(operation or ())),  # -o twice is one operation
        block_sizes=tuple(sorted(set(block_bytes))) if block_bytes else suite.BLOCK_SIZES,
        max_seconds=max_seconds, round_seconds=round_seconds, threshold=band, cpu=cpu,
        label_a=label_a, label_b=label_b, looks=sequential.Looks(),
        **({"worker_pairs": worker_pairs} if worker_pairs is not None else {}))

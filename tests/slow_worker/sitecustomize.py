"""A pqbench worker slower by a known factor, or failing its checks: faults injected into
real worker processes for the `pqbench bisect` tests.

On PYTHONPATH, Python imports this at start-up. It does nothing unless the worker's
environment (an ``env:`` side) asks:

* ``PQBENCH_TEST_SLOWER=F``: after each round's real loop, the worker's thread burns
  (F - 1) times the CPU time the loop took, and reports it in the round, so each row's
  rate is 1/F of what it was (the pairs are compared in CPU time);
* ``PQBENCH_TEST_BROKEN=1``: every row fails its correctness checks.
"""

from __future__ import annotations

import os
import time
from typing import Any

_SLOWER = os.environ.get("PQBENCH_TEST_SLOWER")
_BROKEN = os.environ.get("PQBENCH_TEST_BROKEN")

if _SLOWER or _BROKEN:
    from pqbench.sessions.ab import worker

    _run, _prepare = worker._run, worker._prepare

    def _slowed(message: dict[str, Any], state: Any) -> dict[str, Any]:
        reply = _run(message, state)
        extra = int(reply["cpu_ns"] * (float(_SLOWER or 1) - 1))
        cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
        while time.thread_time_ns() - cpu < extra:
            pass
        reply["cpu_ns"] += time.thread_time_ns() - cpu
        reply["elapsed_ns"] += time.perf_counter_ns() - wall
        return reply

    def _broken(message: dict[str, Any], state: Any) -> dict[str, Any]:
        row = list(message["row"])
        return {"type": "problem", "algorithm": row[0], "implementation": row[1],
                "operation": row[2], "kind": "failed verification",
                "reason": "injected fault: known-answer test mismatch"}

    if _SLOWER:
        worker._run = _slowed  # type: ignore[assignment]
    if _BROKEN:
        worker._prepare = _broken  # type: ignore[assignment]

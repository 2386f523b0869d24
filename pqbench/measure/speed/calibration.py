"""`pqbench calibrate`: a few runs of one suite, each its own process, stored as calibration.

What the noise model needs is how far one run of a row lands from the next run of the same
build: the spread between processes started at different moments (clock speed, co-tenants,
memory layout), not between rounds of one process. So each run is a separate `pqbench
speed` process, as a user's own runs are, optionally some seconds apart; each is marked
with its series, place and count (settings["calibration"]), and `analysis.noise` counts
them as replicated runs of the build they measured.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Callable, Sequence

from pqbench.platform import processes
from pqbench.platform.errors import PqbenchError
from pqbench.platform.untrusted import printable

#: The most runs one series takes (each is a whole `speed` run).
MAX_RUNS = 50


class CalibrationError(PqbenchError):
    """A calibration run failed; the runs already stored are kept."""


def new_series() -> str:
    return f"cal-{secrets.token_hex(3)}"


def run_series(speed_argv: Sequence[str], runs: int, db: str | None, *, pause: float = 0.0,
               series: str | None = None, done: Callable[[int, str], None] | None = None
               ) -> list[str]:
    """`runs` separate `pqbench speed` processes with `speed_argv` (the suite), each marked
    as run i of the series, stored in `db`; `pause` seconds between them. Returns the run
    ids; `done(i, run_id)` after each."""
    if not 2 <= runs <= MAX_RUNS:
        raise CalibrationError(f"--runs must be from 2 to {MAX_RUNS}: a spread needs two runs")
    series = series or new_series()
    found: list[str] = []
    for index in range(1, runs + 1):
        if index > 1 and pause > 0:
            time.sleep(pause)
        argv = [*processes.python_module("pqbench"), "speed", *speed_argv, "--calibration",
                f"{series}:{index}:{runs}", "--json", *(["--db", db] if db else [])]
        finished = subprocess.run(argv, capture_output=True, text=True, check=False)
        if finished.returncode != 0:
            tail = printable(finished.stderr.strip().splitlines()[-1]
                             if finished.stderr.strip() else f"exit {finished.returncode}")
            raise CalibrationError(f"calibration run {index} of {runs} failed ({tail}); "
                                   f"{len(found)} run(s) of series {series} stored")
        run_id = str(json.loads(finished.stdout)["run_id"])
        found.append(run_id)
        if done is not None:
            done(index, run_id)
    return found

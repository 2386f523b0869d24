"""`pqbench calibrate`: a few runs of one suite, each in a process of its own, and this
machine's run-to-run spread per row learnt from them (what `compare` and `history` judge
one run against one by)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pqbench.analysis.noise import Spread
    from pqbench.data.record.results import RowKey


def speed_arguments(algorithm: Sequence[str] | None, implementation: Sequence[str] | None,
                    operation: Sequence[str] | None, block_bytes: Sequence[int] | None,
                    seconds: float | None, rounds: int | None, label: str | None
                    ) -> list[str]:
    """The `pqbench speed` command line each run of the series takes."""
    argv = [*(algorithm or [])]
    for impl in implementation or []:
        argv += ["-i", impl]
    for op in operation or []:
        argv += ["-o", op]
    for size in block_bytes or []:
        argv += ["--bytes", str(size)]
    for option, value in (("--seconds", seconds), ("--rounds", rounds)):
        if value is not None:
            argv += [option, repr(value)]
    if label:
        argv += ["--label", label]
    return argv


@dataclass(frozen=True)
class Calibration:
    """The runs stored, and each row's spread (None where the runs span machines)."""

    ids: list[str]
    spreads: list[tuple[RowKey, Spread | None]]


def calibrate(speed_argv: Sequence[str], runs: int, db: str | None, pause: float,
              done: Callable[[int, str], None]) -> Calibration:
    """`runs` runs of the suite, each in its own process (`done` after each), and the
    spread the noise model learns from them, row by row in the order first measured."""
    from pqbench.app.noise import NoiseModels
    from pqbench.data.store import RunFilter, Store
    from pqbench.measure.speed.calibration import run_series

    ids = run_series(speed_argv, runs, db, pause=pause, done=done)
    store = Store.open(db, create=False)
    stored = store.load_runs(RunFilter(ids=tuple(ids)))
    model = NoiseModels(store).for_runs(stored)
    keys = list(dict.fromkeys(m.key for run in stored for m in run.measurements if m.samples))
    return Calibration(ids, [(key, model.spread(key) if model is not None else None)
                             for key in keys])

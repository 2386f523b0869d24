"""The series of a history of whole runs in hand, one machine's (the use case returns them
per machine; most tests store one machine's runs)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pqbench.analysis.history import Series
from pqbench.app.history import history_of_runs
from pqbench.data.record.results import Run


def history(runs: Iterable[Run], algorithm: str, **options: Any) -> list[Series]:
    """Every series of `algorithm` over the runs, on whichever machine measured them."""
    return [one.series for one in history_of_runs(runs, algorithm, **options)]

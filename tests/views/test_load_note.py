"""The line under a run's table that says it was taken while other work ran."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pqbench.views import runs
from tests.helpers.runs import environment, make_run


def _run(state: dict[str, Any] | None) -> Any:
    env = environment()
    if state is not None:
        env["run"] = state
    return replace(make_run("20260101-a", seed=1), environment=env)


def test_a_run_under_load_says_how_much_and_from_what_threshold() -> None:
    line = runs.load_note(_run({"seconds": 4.0, "cpus": 2, "loadavg_start": [2.1, 1.5, 1.0],
                                "loadavg_end": [3.4, 1.8, 1.1], "others_cpu": 0.37,
                                "steal": 0.06}))
    assert line == ("taken under load: other processes took 37 % of 2 cores, the hypervisor "
                    "stole 6 %, load 2.10 → 3.40 (flagged from 10 % of the machine or 5 % "
                    "stolen); its figures may be slower than on a quiet machine")


def test_a_quiet_run_and_a_run_from_before_the_load_was_kept_say_nothing() -> None:
    assert runs.load_note(_run({"seconds": 4.0, "cpus": 2, "loadavg_start": [0.1, 0.1, 0.1],
                                "loadavg_end": [0.1, 0.1, 0.1], "others_cpu": 0.02,
                                "steal": None})) is None
    assert runs.load_note(_run(None)) is None

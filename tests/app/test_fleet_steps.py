"""A fleet's histories gathered by build: on how many of the machines that measured a build
of a row that row stepped there, and which way (`app.history.fleet_steps`); each step stays
its machine's own, judged on that machine alone."""

from __future__ import annotations

import json

import pytest

from pqbench.analysis.history import HistoryStep, Point, Series
from pqbench.app.history import FleetStep, MachineHistory, fleet_steps
from pqbench.app.identity import Machine
from pqbench.views import answers, comparisons
from pqbench.views.markdown import render

A, B, C, D = (Machine(f"m{i}", "AMD EPYC 7B13", 8, None) for i in range(4))
BUILDS = ("debian-12/b0", "debian-12/b1", "debian-12/b2")


def _series(steps: dict[str, float], builds: tuple[str, ...] = BUILDS,
            algorithm: str = "ML-KEM-768", implementation: str = "liboqs",
            started: tuple[str, ...] = ("2026-01-01", "2026-01-02", "2026-01-03")) -> Series:
    points = tuple(Point(b, t, ("r",), 5, 100.0, 99.0, 101.0)
                   for b, t in zip(builds, started, strict=True))
    return Series(algorithm, implementation, "encaps", None, "ops/s", points, tuple(
        HistoryStep(builds.index(b), b, 100.0, 100.0 * r, r,
                    "slower" if r < 1 else "faster", r * 0.99, r * 1.01)
        for b, r in steps.items()))


def test_machines_that_stepped_are_counted_against_those_that_measured_the_build() -> None:
    found = [MachineHistory(A, _series({"debian-12/b1": 0.90})),
             MachineHistory(B, _series({"debian-12/b1": 0.88})),
             MachineHistory(C, _series({})),  # measured b1, no step there
             MachineHistory(D, _series({}, builds=("debian-12/b0", "debian-12/b2"),
                                       started=("2026-01-01", "2026-01-03")))]
    (step,) = fleet_steps(found)
    assert (step.build, step.verdict, step.machines, step.measured) == (
        "debian-12/b1", "slower", (A.name, B.name), 3)
    assert (step.low, step.high) == (0.88, 0.90)
    assert step.hosts == ("m0", "m1")
    assert step.as_dict()["ratio_low"] == 0.88 and step.as_dict()["measured"] == 3


def test_each_direction_row_and_build_is_a_line_of_its_own_in_build_order() -> None:
    found = [MachineHistory(A, _series({"debian-12/b2": 0.9, "debian-12/b1": 1.2})),
             MachineHistory(B, _series({"debian-12/b2": 1.1})),
             MachineHistory(B, _series({"debian-12/b2": 0.8}, implementation="libcrypto"))]
    gathered = [(f.build, f.implementation, f.verdict, len(f.machines))
                for f in fleet_steps(found)]
    assert gathered == [("debian-12/b1", "liboqs", "faster", 1),
                        ("debian-12/b2", "libcrypto", "slower", 1),
                        ("debian-12/b2", "liboqs", "faster", 1),
                        ("debian-12/b2", "liboqs", "slower", 1)]


def test_the_builds_are_ordered_by_their_first_point_not_by_name() -> None:
    late_name_first = ("debian-12/z", "debian-12/a")
    found = [MachineHistory(m, _series({b: 0.9}, builds=(*late_name_first, "debian-12/m")))
             for m in (A, B) for b in late_name_first[1:]] + [
        MachineHistory(C, _series({"debian-12/z": 0.5, "debian-12/a": 0.9},
                                  builds=(*late_name_first, "debian-12/m")))]
    assert [f.build for f in fleet_steps(found)] == ["debian-12/z", "debian-12/a"]


def test_one_machine_has_no_fleet_steps_its_series_say_it_all() -> None:
    assert fleet_steps([MachineHistory(A, _series({"debian-12/b1": 0.9})),
                        MachineHistory(A, _series({"debian-12/b1": 0.9},
                                                  implementation="libcrypto"))]) == []


def _step(low: float, high: float, machines: int = 2) -> FleetStep:
    return FleetStep("ML-KEM-768", "liboqs", "encaps", None, "debian-12/b1",
                     "slower" if high < 1 else "faster", tuple(f"m{i}" for i in range(machines)),
                     machines + 1, low, high, tuple(f"h{i}" for i in range(machines)))


@pytest.mark.parametrize(("low", "high", "said"), [
    (0.88, 0.90, "1.11x–1.14x slower"), (1.10, 1.25, "1.10x–1.25x faster"),
    (0.90, 0.90, "1.11x slower")])
def test_the_table_gives_the_range_of_the_machines_own_steps(low: float, high: float,
                                                             said: str) -> None:
    table = comparisons.fleet_steps_table([_step(low, high)], machines=3)
    (row,) = table.rows
    assert row[2:4] == ("2 of 3", said)
    assert "each judged on its own machine" in table.title


def test_the_table_names_five_hosts_and_counts_the_rest() -> None:
    (row,) = comparisons.fleet_steps_table([_step(0.8, 0.9, machines=7)], machines=9).rows
    assert row[-1] == "h0, h1, h2, h3, h4 and 2 more"
    (row,) = comparisons.fleet_steps_table([_step(0.8, 0.9, machines=5)], machines=9).rows
    assert row[-1] == "h0, h1, h2, h3, h4"
    assert "|" in render(comparisons.fleet_steps_table([_step(0.8, 0.9)], machines=3))


@pytest.mark.parametrize("width", [80, 120])
def test_a_fleet_s_history_ends_with_its_steps_gathered_and_json_lists_them(
        width: int, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    found = [MachineHistory(A, _series({"debian-12/b1": 0.90})),
             MachineHistory(B, _series({"debian-12/b1": 0.88}))]
    answers.histories(found, algorithm="ML-KEM-768", by="os_build", fleet=fleet_steps(found))
    out = capsys.readouterr().out
    assert out.index("steps across the fleet (2 machines)") > out.rindex("debian-12/b2")
    assert "1.11x–1.14x slower" in out and "2 of 2" in out
    answers.histories(found, algorithm="ML-KEM-768", by="os_build", fleet=fleet_steps(found),
                      json_output=True)
    (listed,) = json.loads(capsys.readouterr().out)["fleet_steps"]
    assert listed["machines"] == [A.name, B.name] and listed["verdict"] == "slower"

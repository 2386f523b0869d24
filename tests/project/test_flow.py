"""The map of docs/architecture.md ("One run through the house") is the code's: each command
drawn there runs in-process under a profiler; every line of its drawing must name a function
the command enters, in the order it first enters them, and every room whose functions it
calls must have a line (the run format, the data and the floor, which every room uses,
excepted)."""

from __future__ import annotations

import gc
import inspect
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.store import Store
from tests.helpers import REPO, house
from tests.helpers.runs import make_run

Step = tuple[str, str]

#: Rooms every room uses: the run format, the data and the floor. A map draws the rooms a
#: command passes through; it may draw these, and need not.
EVERYWHERE = {"data.record", "catalog.algorithms", "platform", "pqbench"}


def drawn_flows(text: str) -> dict[str, tuple[list[str], list[Step]]]:
    """command name -> (its arguments, its steps as (module, function)), from the code
    blocks of the section that draws them."""
    section = text.split("## One run through the house", 1)[1].split("\n## ", 1)[0]
    flows = {}
    for block in re.findall(r"```\n(pqbench .*?)```", section, re.S):
        first, *lines = block.strip("\n").splitlines()
        steps = []
        for line in lines:
            path, function = line.split()[:2]
            module = "pqbench." + path.removesuffix(".py").replace("/", ".")
            steps.append((module.removesuffix(".__init__"), function))
        words = first.split()[1:]
        flows[words[0]] = (words, steps)
    return flows


FLOWS = drawn_flows((REPO / "docs" / "architecture.md").read_text("utf-8"))


def entered(args: list[str]) -> list[Step]:
    """The pqbench functions `pqbench ARGS` enters, in the order of their first call (a
    module or class body run by an import is no step of the command)."""
    order: dict[Step, None] = {}

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_flags & inspect.CO_NEWLOCALS:
            module = frame.f_globals.get("__name__", "")
            if module.startswith("pqbench."):
                order.setdefault((module, frame.f_code.co_qualname), None)

    # Earlier tests' garbage first: a finalizer the collector runs during the command (a
    # TLS context's __del__ from a handshake test) is no step of it.
    gc.collect()
    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(app, args)
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.stderr
    return list(order)


def entered_afresh(args: list[str]) -> list[Step]:
    """`entered`, in an interpreter of its own: what a process does once and keeps (finding
    liboqs, listing the implementations) is seen as a user's first run sees it, not as the
    warm test process, which asked for it before the first test (tests/conftest.py)."""
    probe = ("import json, sys\nfrom tests.project.test_flow import entered\n"
             "print(json.dumps(entered(sys.argv[1:])))")
    done = subprocess.run([sys.executable, "-c", probe, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return [(module, function) for module, function in json.loads(done.stdout)]


def _follows(drawn: list[Step], seen: list[Step]) -> list[str]:
    """What is wrong with the drawing: a step never entered, or entered before the step
    drawn above it."""
    position = {step: i for i, step in enumerate(seen)}
    wrong, last = [], -1
    for step in drawn:
        if step not in position:
            wrong.append(f"{step[0]} {step[1]}: never entered")
        elif position[step] < last:
            wrong.append(f"{step[0]} {step[1]}: entered before the step above it")
        else:
            last = position[step]
    return wrong


def room(module: str) -> str:
    """The room a step is in: its room below pqbench, and the room within it where it has
    one (`measure.speed`, `data.record`; `analysis`, `cli`)."""
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]
    inner = ".".join(parts[:3])
    package = REPO.joinpath(*inner.split(".")) / "__init__.py"
    return ".".join(parts[1:3]) if len(parts) > 3 or package.is_file() else parts[1]


def rooms_not_drawn(drawn: list[Step], seen: list[Step]) -> list[str]:
    """The rooms whose functions the command called that its drawing has no line for."""
    return sorted({room(m) for m, _ in seen} - {room(m) for m, _ in drawn} - EVERYWHERE)


def test_both_commands_are_drawn() -> None:
    assert set(FLOWS) == {"speed", "compare"}
    assert all(len(steps) >= 10 for _, steps in FLOWS.values())


def test_the_order_check_names_a_missing_or_misplaced_step() -> None:
    seen = [("m", "a"), ("m", "b"), ("m", "c")]
    assert _follows([("m", "a"), ("m", "c")], seen) == []
    assert _follows([("m", "c"), ("m", "a"), ("m", "x")], seen) == [
        "m a: entered before the step above it", "m x: never entered"]


def test_a_room_the_command_passes_through_undrawn_is_named() -> None:
    drawn = [("pqbench.cli.speed", "speed"), ("pqbench.data.store.database", "Store.open")]
    seen = [*drawn, ("pqbench.libraries.liboqs", "import_oqs"),
            ("pqbench.data.record.runs", "new_run"),
            ("pqbench.platform.untrusted", "printable"), ("pqbench.data.store.location", "resolve")]
    assert rooms_not_drawn(drawn, seen) == ["libraries.liboqs"]


@pytest.mark.slow  # it measures, and the fingerprint runs ldconfig and the like
@pytest.mark.process
def test_the_speed_run_drawn_is_the_one_the_code_makes(tmp_path: Path) -> None:
    words, steps = FLOWS["speed"]
    seen = entered_afresh([*words, "--seconds", "0.01", "--rounds", "2",
                           "--db", str(tmp_path / "r.db")])
    assert _follows(steps, seen) == []
    assert rooms_not_drawn(steps, seen) == []


def test_the_comparison_drawn_is_the_one_the_code_makes(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1, label="a"))
    store.save_run(make_run("20260102-b", seed=2, label="b", factor=1.2))
    store.close()
    words, steps = FLOWS["compare"]
    seen = entered([*words, "--db", str(db)])
    assert _follows(steps, seen) == []
    assert rooms_not_drawn(steps, seen) == []


#: How often each drawn path climbs back up the house (a step into a room above the one
#: before it, the rooms every room uses left out): a path may only get straighter. speed
#: returns to measuring after opening the store and after each round, then climbs to the
#: analysis and the views once it stored its run; compare climbs to the analysis after
#: reading the store, then to the views.
CLIMBS = {"speed": 5, "compare": 2}


def climbs(steps: list[Step]) -> int:
    """Steps into a room above the previous step's room (`HOUSE` tiers)."""
    tiers = house.tier_of()
    ranks = [tiers[house.room(module)] for module, _ in steps
             if room(module) not in EVERYWHERE and house.room(module) not in EVERYWHERE]
    return sum(1 for before, after in itertools.pairwise(ranks) if after < before)


def test_each_drawn_path_goes_down_the_house_with_few_returns() -> None:
    found = {name: climbs(steps) for name, (_, steps) in FLOWS.items()}
    assert set(found) == set(CLIMBS)
    assert all(found[name] <= CLIMBS[name] for name in CLIMBS), found
    assert climbs([("pqbench.cli.speed", "speed"), ("pqbench.data.store.database", "open"),
                   ("pqbench.measure.speed.suite", "run_suite"),
                   ("pqbench.views.console", "show_run")]) == 2

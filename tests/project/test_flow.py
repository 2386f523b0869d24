"""The map of docs/architecture.md ("One run through the house") is the code's: each command
drawn there runs in-process under a profiler, and every line of its drawing must name a
function the command enters, in the order it first enters them."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.store import Store
from tests.helpers import REPO
from tests.helpers.runs import make_run

Step = tuple[str, str]


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
    """The pqbench functions `pqbench ARGS` enters, in the order of their first call."""
    order: dict[Step, None] = {}

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.startswith("pqbench."):
                order.setdefault((module, frame.f_code.co_qualname), None)

    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(app, args)
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0, result.stderr
    return list(order)


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


def test_both_commands_are_drawn() -> None:
    assert set(FLOWS) == {"speed", "compare"}
    assert all(len(steps) >= 10 for _, steps in FLOWS.values())


def test_the_order_check_names_a_missing_or_misplaced_step() -> None:
    seen = [("m", "a"), ("m", "b"), ("m", "c")]
    assert _follows([("m", "a"), ("m", "c")], seen) == []
    assert _follows([("m", "c"), ("m", "a"), ("m", "x")], seen) == [
        "m a: entered before the step above it", "m x: never entered"]


@pytest.mark.slow  # it measures, and the fingerprint runs ldconfig and the like
@pytest.mark.process
def test_the_speed_run_drawn_is_the_one_the_code_makes(tmp_path: Path) -> None:
    words, steps = FLOWS["speed"]
    seen = entered([*words, "--seconds", "0.01", "--rounds", "2",
                    "--db", str(tmp_path / "r.db")])
    assert _follows(steps, seen) == []


def test_the_comparison_drawn_is_the_one_the_code_makes(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1, label="a"))
    store.save_run(make_run("20260102-b", seed=2, label="b", factor=1.2))
    store.close()
    words, steps = FLOWS["compare"]
    assert _follows(steps, entered([*words, "--db", str(db)])) == []

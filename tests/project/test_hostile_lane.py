"""The hostile rounds (tests/hostile/) run whenever the whole suite does (`make test`,
CI): the suite's paths take them in, nothing deselects them, and none of them is skipped
or expected to fail. A hostile test that silently stopped running would be a defect
come back unseen."""

from __future__ import annotations

import ast
import re
import tomllib

from tests.helpers import REPO

HOSTILE = REPO / "tests" / "hostile"


def test_make_test_runs_the_whole_suite_and_the_suite_takes_in_tests_hostile() -> None:
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)
    assert recipe is not None
    (pytest_line,) = [line for line in recipe.group(1).splitlines() if "pytest" in line]
    arguments = pytest_line.split("pytest", 1)[1]
    assert not re.search(r"(^|\s)(-m|-k|--ignore|--deselect|--ignore-glob)\b", arguments)
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]
    assert "tests" in options["testpaths"]
    assert not re.search(r"(^|\s)(-m|-k|--ignore|--deselect)\b", options.get("addopts", ""))


def test_no_hostile_test_is_skipped_or_expected_to_fail() -> None:
    files = sorted(HOSTILE.glob("test_*.py"))
    assert len(files) >= 15
    for path in files:
        tree = ast.parse(path.read_text())
        names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        called = {node.func.id for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert not names & {"skip", "skipif", "xfail", "importorskip"}, path.name
        assert not called & {"skip", "xfail", "importorskip"}, path.name
        tests = [node.name for node in tree.body
                 if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
        assert tests, f"{path.name} holds no test"

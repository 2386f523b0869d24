"""constraints.txt locks what `make setup` installs: every dependency pyproject.toml names
(the test extra's too) at one version inside its range, and nothing left unpinned."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.helpers import REPO
from tests.helpers.lock import pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(text) for text in
            [*project["dependencies"], *project["optional-dependencies"]["test"]]]


def test_every_declared_dependency_is_locked_inside_its_range() -> None:
    locked = pins()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in constraints.txt: run `make lock`"
        for version, marker in locked[name]:
            assert requirement.specifier.contains(version, prereleases=True), (
                f"constraints.txt locks {name} {version} ({marker}), outside "
                f"{requirement.specifier}: run `make lock`")


def test_the_lock_pins_one_version_per_python() -> None:
    """One version of each package for each Python from 3.11 on: two pins whose markers
    both hold would leave the installer to choose."""
    for name, each in pins().items():
        for python in ("3.11", "3.12", "3.13", "3.14"):
            chosen = [version for version, marker in each if marker is None or marker.evaluate(
                {"python_version": python, "python_full_version": f"{python}.0",
                 "sys_platform": "linux", "platform_system": "Linux",
                 "platform_machine": "x86_64", "implementation_name": "cpython",
                 "platform_python_implementation": "CPython", "os_name": "posix"})]
            assert len(chosen) <= 1, (name, python, chosen)

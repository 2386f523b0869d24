"""`pqbench userland status`'s data, read directly from an empty cache (nothing built)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pqbench.app import userland
from pqbench.libraries.userland import RECIPES
from pqbench.platform.errors import PqbenchError


@pytest.mark.process  # the architecture is asked of dpkg
def test_nothing_built_is_each_recipe_not_built_with_its_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path))
    found = userland.status(None)
    assert list(found["userlands"]) == sorted(RECIPES)
    for info in found["userlands"].values():
        assert info["state"] == "not built" and info["reason"]
        assert Path(info["root"]).is_relative_to(tmp_path)
    assert found["container_engines"]  # a dict of engines, or "none installed"


@pytest.mark.process
def test_one_userland_by_name_and_an_unknown_one_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path))
    name = sorted(RECIPES)[0]
    assert list(userland.status(name)["userlands"]) == [name]
    with pytest.raises(PqbenchError, match="potato"):
        userland.status("potato")


def test_the_install_manifest_is_shown_without_its_file_list() -> None:
    install = {"installed_at": "2026-11-28", "install_seconds": 12.5, "files": ["a"] * 3000}
    assert userland.install_info(install) == {"installed_at": "2026-11-28",
                                              "install_seconds": 12.5}

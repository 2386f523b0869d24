"""`pqbench userland`: another OS userland built (or reused) with pqbench inside, and what
is known of each, as plain data the command shows or prints as JSON."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pqbench.platform.errors import PqbenchError

if TYPE_CHECKING:
    from pqbench.libraries.userland import Userland


def install_info(install: dict[str, Any]) -> dict[str, Any]:
    """The install manifest without its file list (thousands of paths)."""
    return {k: v for k, v in install.items() if k != "files"}


@dataclass(frozen=True)
class Built:
    userland: Userland
    seconds: float

    def document(self) -> dict[str, Any]:
        built = self.userland
        return {"name": built.name, "root": str(built.root), "seconds": round(self.seconds, 2),
                "prefix": built.command_prefix(), "base": built.base,
                "install": install_info(built.install)}


def build(name: str, log: Callable[[str], None]) -> Built:
    """Build the userland or reuse it, and set this checkout's pqbench up inside."""
    from pqbench.libraries.userland import ensure

    started = time.monotonic()
    built = ensure(name, log)
    return Built(built, time.monotonic() - started)


def state(name: str) -> dict[str, Any]:
    """One userland's status as plain data; `state` is built, stale or not built."""
    from pqbench.libraries.userland import find, is_current
    from pqbench.libraries.userland.recipe import recipe, root_of

    try:
        built = find(name)
    except PqbenchError as exc:
        return {"state": "not built", "root": str(root_of(recipe(name))), "reason": str(exc)}
    base, install = built.base, built.install
    current = is_current(built)
    return {
        "state": "built" if current else "built, pqbench inside older than this checkout",
        "root": str(built.root), "current": current, "prefix": built.command_prefix(),
        "base": base, "install": install_info(install),
        "base_summary": f"{base.get('suite')} {base.get('arch')}, built "
                        f"{base.get('built_at')} in {base.get('build_seconds')} s",
        "install_summary": f"{built.install_dir}, set up {install.get('installed_at')} in "
                           f"{install.get('install_seconds')} s",
    }


def status(name: str | None) -> dict[str, Any]:
    """Every known userland's state (or one's), and the container engines installed."""
    from pqbench.libraries.userland import RECIPES, container_engines
    from pqbench.libraries.userland.recipe import recipe

    names = [recipe(name).name] if name else sorted(RECIPES)
    return {"userlands": {n: state(n) for n in names},
            "container_engines": container_engines() or "none installed"}

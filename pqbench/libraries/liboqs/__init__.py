"""Provision a liboqs for liboqs-python and load exactly that one.

`ensure()` (run by `make setup` / `python -m pqbench.libraries.liboqs`) finds or builds a liboqs;
`import_oqs()` is how the rest of pqbench gets the `oqs` module. It never lets liboqs-python's
own import-time installer (a silent `git clone` from GitHub) fire, keeps liboqs-python's log
handler off stdout so `--json` output stays clean, and checks which library was loaded.
Standard library only: this runs during set-up, before other dependencies exist.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import importlib
import logging
import os
import sys
import types
import warnings
from collections.abc import Iterator
from pathlib import Path

from pqbench.libraries.liboqs.compiling import ensure, progress
from pqbench.libraries.liboqs.locate import (
    ORIGIN_SYSTEM,
    LiboqsInstall,
    Rejected,
    cache_root,
    find_installed,
    loaded_path,
    survey,
)
from pqbench.platform.errors import ImplementationUnavailable

__all__ = [
    "LiboqsInstall",
    "Rejected",
    "activate",
    "cache_root",
    "ensure",
    "find_installed",
    "import_oqs",
    "loaded_install",
    "progress",
    "survey",
]

_SETUP_HINT = "run `make setup` (or python -m pqbench.libraries.liboqs) to build one"
_loaded: tuple[LiboqsInstall, types.ModuleType] | None = None


def activate(install: LiboqsInstall) -> None:
    """Point liboqs-python at `install`; must happen before `import oqs` (it loads at import)."""
    os.environ["OQS_INSTALL_PATH"] = str(install.prefix)


def loaded_install() -> LiboqsInstall | None:
    """The liboqs that import_oqs() loaded, or None before it has succeeded."""
    return _loaded[0] if _loaded else None


def import_oqs() -> types.ModuleType:
    """liboqs-python's `oqs`, bound to the first usable liboqs; cached after the first call."""
    global _loaded
    if _loaded is not None:
        return _loaded[1]
    install, rejected = survey()
    if install is None:
        skipped = "; ".join(str(r) for r in rejected)
        raise ImplementationUnavailable(f"liboqs not found ({skipped}); {_SETUP_HINT}")
    if "oqs" in sys.modules:
        module = sys.modules["oqs"]  # imported before us: accept it only if it is our choice
    else:
        activate(install)
        module = _import_quietly(install)
    _check_loaded(module, install)
    _loaded = (install, module)
    return module


def _import_quietly(install: LiboqsInstall) -> types.ModuleType:
    """Import oqs with stdout pointing at stderr: its StreamHandler binds sys.stdout then."""
    try:
        with (
            contextlib.redirect_stdout(sys.stderr),
            _only_this_library(install),
            warnings.catch_warnings(),
        ):
            # liboqs-python warns when liboqs's major.minor differs from its own; our 0.13
            # build is deliberate and the one missing symbol is provided by compat.c.
            warnings.filterwarnings("ignore", message=r"liboqs version .* differs from")
            # Its import-time INFO line ("faulthandler is disabled") is noise on every run.
            logging.disable(logging.INFO)
            try:
                module = importlib.import_module("oqs")
            finally:
                logging.disable(logging.NOTSET)
            logging.getLogger("oqs.oqs").setLevel(logging.WARNING)
            return module
    except SystemExit as exc:  # liboqs-python exits when it cannot load or install liboqs
        raise ImplementationUnavailable(
            f"liboqs-python could not load {install.library}: {exc}; {_SETUP_HINT}"
        ) from None
    except (ImportError, OSError, AttributeError, RuntimeError) as exc:
        raise ImplementationUnavailable(
            f"liboqs-python could not load {install.library}: {exc}"
        ) from exc


@contextlib.contextmanager
def _only_this_library(install: LiboqsInstall) -> Iterator[None]:
    """Hide other liboqs copies from liboqs-python while it imports.

    liboqs-python tries `ctypes.util.find_library("oqs")` *before* OQS_INSTALL_PATH, so a
    system liboqs would otherwise win over the install we chose.
    """
    if install.origin == ORIGIN_SYSTEM:
        yield
        return
    original = ctypes.util.find_library

    def find_library(name: str) -> str | None:
        return None if name in ("oqs", "liboqs") else original(name)

    ctypes.util.find_library = find_library
    try:
        yield
    finally:
        ctypes.util.find_library = original


def _check_loaded(module: types.ModuleType, install: LiboqsInstall) -> None:
    """The library oqs actually opened must be `install.library`."""
    try:
        actual = loaded_path(module.native())
    except AttributeError as exc:
        raise ImplementationUnavailable(f"oqs module has no native(): {exc}") from exc
    if actual is None or Path(actual).resolve() != install.library:
        raise ImplementationUnavailable(
            f"oqs loaded {actual} instead of {install.library}; import pqbench.libraries.liboqs "
            "before anything imports oqs"
        )

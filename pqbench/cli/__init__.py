"""The `pqbench` command line: typer commands that parse, call one use case, render.

Loading the commands (typer, rich, the domain) takes about a second; the process entry
(`pqbench.__main__.main`) loads them itself through `load`, so a Ctrl-C in that second ends
pqbench as it ends a running command: one line, status 130, no traceback of the import
machinery. `app` is loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The module (pqbench/cli/MODULE.py) that registers each command. A command line that names
#: one loads that module alone, not every command's domain; anything else (`--help`, a
#: typo that deserves a suggestion) loads them all. tests/cli/test_entry.py checks this
#: against what the modules register.
COMMAND_MODULES = {
    "ab": "ab", "worker": "ab", "bisect": "bisect", "calibrate": "calibrate",
    "compare": "compare", "export": "transfer", "import": "transfer", "history": "history",
    "annotate": "history", "env": "info", "runs": "info", "list": "list", "memory": "memory",
    "publish": "publish", "ratios": "ratios", "report": "report", "show": "show",
    "speed": "speed", "tls": "tls", "verify": "verify", "files": "files",
    "userland": "userland",
}


#: What a command's body imports as it runs, beyond its module: the module imports them
#: inside the body, so that `--help`, which loads every command, does not. A command line
#: that names the command loads them with it, where the process entry loads the commands
#: with the collector off (`pqbench.__main__`) rather than as the command runs.
BODY_MODULES = {
    "show": ("pqbench.app.show", "pqbench.data.store.database", "pqbench.analysis.figures"),
}


def load(first: list[str]) -> Any:
    """The app with the command the command line's first word names (and what its body
    imports, `BODY_MODULES`), or with them all."""
    module = COMMAND_MODULES.get(first[0]) if first else None
    if module is None:
        from pqbench.cli.commands import app

        return app
    importlib.import_module(f"pqbench.cli.{module}")
    for used in BODY_MODULES.get(first[0], ()):
        importlib.import_module(used)
    from pqbench.cli.root import app

    return app


def serve_worker() -> None:
    """`pqbench worker`, as `ab` starts each worker: served without loading the commands
    (typer, rich, every command's domain), which would take the larger part of a worker's
    start-up and which a worker never uses. `pqbench worker --help` still goes through the
    commands."""
    from pqbench.sessions.ab.worker import serve

    raise SystemExit(serve())


def __getattr__(name: str) -> Any:
    if name == "app":
        from pqbench.cli.commands import app

        return app
    raise AttributeError(f"module 'pqbench.cli' has no attribute {name!r}")

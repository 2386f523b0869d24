"""Runs the database would not take, kept in a file `pqbench import` reads.

A measurement can take minutes; a database that is locked by another writer, full, or
gone read-only at the moment of storing must not throw it away. The runs are written as
an export bundle (`record.transfer`), the same file `pqbench export` makes, into the first
of these folders that takes it: the per-user state folder, the current directory, the
temporary folder. The file is written whole under a temporary name and then renamed, so
a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from pqbench.data.record import transfer
from pqbench.data.record.results import Run


def folders() -> list[Path]:
    """Where a recovery file is tried, in order."""
    return [Path(platformdirs.user_state_dir("pqbench")) / "unsaved", Path.cwd(),
            Path(tempfile.gettempdir())]


def keep(runs: Sequence[Run]) -> Path | None:
    """Write `runs` to a recovery file; its path, or None when no folder took it."""
    text = transfer.export(runs, "json")
    name = f"pqbench-unsaved-{runs[0].run_id}.json"
    for folder in folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".pqbench-unsaved-", dir=folder)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            target = folder / name
            os.replace(temporary, target)
            return target
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return None

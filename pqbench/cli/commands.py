"""Every command, registered on `app` as its module is imported."""

from __future__ import annotations

# Each module registers its commands on `app` when imported.
from pqbench.cli import (  # noqa: F401
    ab,
    bisect,
    calibrate,
    compare,
    files,
    history,
    info,
    list,
    memory,
    publish,
    ratios,
    report,
    show,
    speed,
    tls,
    transfer,
    userland,
    verify,
)
from pqbench.cli.root import app

__all__ = ["app"]

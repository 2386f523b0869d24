"""constraints.txt, the lock `make setup` installs, as the tests read it."""

from __future__ import annotations

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.helpers import REPO

LOCK = REPO / "constraints.txt"


def pins() -> dict[str, list[tuple[Version, Marker | None]]]:
    """Each locked package (by its canonical name) with its versions and the marker that
    selects each (a universal lock pins numpy once for Python 3.11 and once for later
    ones). A line that is not one exact version fails here."""
    locked: dict[str, list[tuple[Version, Marker | None]]] = {}
    for line in LOCK.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier
        assert spec.operator == "==", line
        locked.setdefault(canonicalize_name(requirement.name), []).append(
            (Version(spec.version), requirement.marker))
    return locked

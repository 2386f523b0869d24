"""`pqbench annotate`: which build a note may belong to.

A note is shown beside the point of `history` and `report` that bears its name: an OS build
(the default grouping), a label, a host or a date, or a build a group was split into
("debian-12/6.18 (AES-NI hidden)"). A note for a name no stored run bears would be kept and
never shown, and "noted for no-such-build" would say it was taken; it is refused, naming
the builds and labels there are.
"""

from __future__ import annotations

from collections.abc import Sequence

from pqbench.data.store.database import RunInfo
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import named, printable


def names(runs: Sequence[RunInfo]) -> dict[str, list[str]]:
    """Per grouping, the names the stored runs give their points, in the order first
    stored: "OS builds", "labels", "hosts", "dates"."""
    found: dict[str, dict[str, None]] = {"OS builds": {}, "labels": {}, "hosts": {},
                                          "dates": {}}
    for run in runs:
        for kind, value in (("OS builds", run.os_build), ("labels", run.label),
                            ("hosts", run.hostname), ("dates", run.started_at[:10])):
            if value:
                found[kind][value] = None
    return {kind: list(values) for kind, values in found.items()}


def check_build(build: str, runs: Sequence[RunInfo]) -> None:
    """Nothing when some stored run bears `build` (or `build` is one a group of them was
    split into: a known name, then what sets the build apart in parentheses); a UsageError
    listing the OS builds and labels there are otherwise."""
    found = names(runs)
    known = {name for values in found.values() for name in values}
    if build in known or any(build.startswith(f"{name} (") and build.endswith(")")
                             for name in known):
        return
    listed = "; ".join(_listed(kind, found[kind], build) for kind in ("OS builds", "labels")
                       if found[kind])
    raise UsageError(f"no stored run has the build {printable(build)!r}, so no history or "
                     f"report would show its note: {listed}")


def _listed(kind: str, values: Sequence[str], near: str) -> str:
    """"the OS builds are 'a', 'b' and 3 more" (those closest to `near` first), "the label
    is 'x'"."""
    if len(values) == 1:
        return f"the {kind[:-1]} is {named(values)}"
    return f"the {kind} are {named(values, near=near)}"

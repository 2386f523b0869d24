"""The static site `pqbench publish` writes: pages that open from disk, with no server
and no network (`pages.POLICY`), and plotly.js written beside them from the package that
ships it.

`files` turns the application layer's `Site` into every file's bytes; `write` puts them
into the output folder, rewriting only the files whose bytes changed and removing only
the pages an earlier publish wrote that are gone now. The folder's `STATE` file lists
those pages and keeps each machine's part (`app.publish.MachinePart` as JSON), so the
next publish recomputes only the machines with new runs (`known_parts`), and the
machines' sections of the rows' pages as they were rendered, so it renders again only the
machines it recomputed (`rendering` names the code that rendered them). A folder that
holds files but no `STATE` was not written by publish and is refused: nothing a user put
there is overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pqbench.app.publish import MachinePart, Site, part_as_dict, part_from_dict
from pqbench.platform.errors import InputFileError, UsageError
from pqbench.views import chartkit, numbers
from pqbench.views.site import charts as site_charts
from pqbench.views.site import pages

#: What publish keeps in the folder it writes: its pages and each machine's part.
STATE = "publish-state.json"
STATE_FORMAT = 1
#: This process's umask (read by setting it, so set back at once).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


@dataclass(frozen=True)
class Written:
    """What a publish did to the folder: files written, left as they were, removed."""

    out: Path
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    size: int


def _asset(name: str) -> bytes:
    return (resources.files("pqbench.views.site") / "assets" / name).read_bytes()


def plotly_js() -> bytes:
    """plotly.js as the plotly package ships it (no CDN)."""
    return (resources.files("plotly") / "package_data" / "plotly.min.js").read_bytes()


def files(site: Site, fragments: pages.Fragments | None = None) -> dict[str, bytes]:
    """Every file of the site, by its path in the folder; `fragments` holds the machines'
    sections rendered before (and gets those rendered now)."""
    fragments = {} if fragments is None else fragments
    found: dict[str, bytes] = {
        "assets/site.css": _asset("site.css"), "assets/site.js": _asset("site.js"),
        pages.PLOTLY: plotly_js(),
        "index.html": pages.index_page(site).encode(),
        "regressions.html": pages.regressions_page(site).encode(),
    }
    for key in site.rows:
        found[pages.row_file(key)] = pages.row_page(site, key, fragments).encode()
    for part in site.parts:
        if part.comparison is not None:
            found[pages.compare_file(part)] = pages.compare_page(
                part, part.comparison).encode()
    return found


def check_folder(out: Path) -> None:
    """A UsageError for a folder publish may not write into: a file, or a folder with
    files in it and no `STATE` (not written by publish)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; name a folder (new or written by publish)")
    if out.is_dir() and not (out / STATE).is_file() and any(out.iterdir()):
        raise UsageError(f"--out {out} holds files that pqbench publish did not write; name "
                         "a new or empty folder, or one an earlier publish wrote")


def _state(out: Path) -> Mapping[str, Any]:
    """The folder's state as the last publish left it; {} where there is none or it is
    not one (then every machine is computed again and nothing is removed)."""
    try:
        found = json.loads((out / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) and found.get("format") == STATE_FORMAT else {}


def rendering() -> str:
    """What the pages look like: a digest of the modules that render them, so a section
    rendered by another version of them is rendered again."""
    digest = hashlib.sha256()
    for module in (pages, site_charts, chartkit, numbers):
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()


def _fragments(state: Mapping[str, Any], parts: Sequence[MachinePart]) -> pages.Fragments:
    """The sections the last publish rendered, of the parts that are still current and by
    the same rendering; anything else is rendered again."""
    found = state.get("fragments")
    if state.get("rendering") != rendering() or not isinstance(found, dict):
        return {}
    current = {p.digest for p in parts}
    kept: pages.Fragments = {}
    for digest, rows in found.items():
        if digest in current and isinstance(rows, dict) and all(
                isinstance(v, list) and len(v) == 2 and all(isinstance(t, str) for t in v)
                for v in rows.values()):
            kept[digest] = rows
    return kept


def known_parts(out: Path) -> dict[str, MachinePart]:
    """The parts the last publish into `out` kept, by machine key (those it cannot read
    back are left out: computed again)."""
    found = {}
    parts = _state(out).get("parts")
    for key, data in (parts.items() if isinstance(parts, dict) else ()):
        try:
            found[key] = part_from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return found


def write(site: Site, out: Path) -> Written:
    """Write the site into `out` (see the module docstring); the state file last, so an
    interrupted publish is made whole by the next. An InputFileError names what could not
    be written."""
    check_folder(out)
    try:
        return _write(site, out)
    except OSError as exc:
        raise InputFileError(f"cannot write the site to {exc.filename or out}: "
                             f"{exc.strerror or exc}") from None


def _write(site: Site, out: Path) -> Written:
    state = _state(out)
    before = state.get("pages")
    before = [p for p in before if isinstance(p, str)] if isinstance(before, list) else []
    fragments = _fragments(state, site.parts)
    wanted = files(site, fragments)
    written, unchanged = [], []
    for name, data in wanted.items():
        path = out / name
        if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
            unchanged.append(name)
            continue
        _replace(path, data)
        written.append(name)
    removed = []
    for name in before:
        path = out / name
        # Only the site's own top-level pages and assets, as the last publish listed them.
        if name not in wanted and _own(name) and path.is_file():
            path.unlink()
            removed.append(name)
    current = {p.digest for p in site.parts}
    kept = {"format": STATE_FORMAT, "pages": sorted(wanted), "rendering": rendering(),
            "parts": {p.machine.key: part_as_dict(p) for p in site.parts},
            "fragments": {d: rows for d, rows in fragments.items() if d in current}}
    _replace(out / STATE, json.dumps(kept, sort_keys=True, allow_nan=True).encode())
    return Written(out, tuple(written), tuple(unchanged), tuple(removed),
                   sum(len(d) for d in wanted.values()))


def _own(name: str) -> bool:
    """A name publish writes: an .html page at the top, or a file under assets/."""
    parts = Path(name).parts
    return (len(parts) == 1 and name.endswith(".html")) or (
        len(parts) == 2 and parts[0] == "assets")


def _replace(path: Path, data: bytes) -> None:
    """Write a file whole or not at all (a reader never sees half a page)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".publish-")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            os.fchmod(stream.fileno(), 0o666 & ~_UMASK)  # as open() would make it
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

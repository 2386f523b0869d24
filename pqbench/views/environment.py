"""`pqbench env`: what to tune before measuring (as `pyperf system show`), then this
machine in a few lines; the whole fingerprint is `env --all`'s (`cli.info.env_sections`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pqbench.measure.environment.tuning import Setting
from pqbench.views.tables import Column, Table, key_values


def tuning_table(found: Sequence[Setting]) -> Table:
    """One line per setting: its value here and what to do ("–" where it is fine)."""
    return Table("what to tune before measuring (as `pyperf system show`)",
                 (Column("setting"), Column("here", wrap=True),
                  Column("advice", wrap=True, optional=False)),
                 tuple((s.name, s.value, s.advice or "fine as it is") for s in found))


def _get(fingerprint: Mapping[str, Any], *path: str) -> Any:
    found: Any = fingerprint
    for key in path:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found


def summary(fingerprint: Mapping[str, Any], implementations: Mapping[str, str]) -> Table:
    """This machine as a run records it, in a few lines: the OS build, the CPU, the
    libraries measured, which implementations are ready, where runs are stored."""
    cpu = ", ".join(str(part) for part in (
        _get(fingerprint, "cpu", "model"),
        f"{_get(fingerprint, 'cpu', 'count')} CPUs" if _get(fingerprint, "cpu", "count")
        else None,
        "flags " + " ".join(_get(fingerprint, "cpu", "flags") or []) or None) if part)
    libraries = _get(fingerprint, "libraries") or {}
    shown = [f"liboqs {libraries['liboqs']}" if libraries.get("liboqs") else None,
             f"cryptography {libraries['cryptography']}"
             + (f" ({libraries['cryptography_openssl']})"
                if libraries.get("cryptography_openssl") else "")
             if libraries.get("cryptography") else None,
             f"system libcrypto {libraries['system_libcrypto']}"
             if libraries.get("system_libcrypto") else None,
             f"Python {libraries['python']}" if libraries.get("python") else None]
    ready = [name for name, state in implementations.items() if state == "available"]
    missing = [f"{name} ({state})" for name, state in implementations.items()
               if state != "available"]
    return key_values("this machine, as a run records it", [
        ("OS build", fingerprint.get("os_build")),
        ("userland", _get(fingerprint, "platform", "userland")),
        ("CPU", cpu),
        ("libraries", "; ".join(part for part in shown if part)),
        ("implementations ready", ", ".join(ready)),
        *((("not ready", "; ".join(missing)),) if missing else ()),
        ("database", fingerprint.get("database"))])

"""`pqbench env` and `pqbench runs`: what this machine is, and what is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pqbench import environment
from pqbench.cli.common import DbOption, JsonOption, handles_errors, print_json
from pqbench.cli.root import app
from pqbench.implementations import all_implementations
from pqbench.presentation import console
from pqbench.presentation import runs as views
from pqbench.store import resolve_location
from pqbench.store.location import is_url
from pqbench.untrusted import redact


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, inner in value.items():
            rows.extend(_flatten(f"{prefix}.{key}" if prefix else str(key), inner))
        return rows
    if isinstance(value, list):
        return [(prefix, ", ".join(map(str, value)))]
    return [(prefix, value)]


@app.command()
@handles_errors
def env(json_output: JsonOption = False, db: DbOption = None) -> None:
    """Show this machine's fingerprint: OS build, CPU flags, libraries, implementations."""
    fingerprint = environment.collect()
    impls = {impl.name: impl.unavailable_reason() or "available" for impl in all_implementations()}
    fingerprint["implementations"] = impls
    fingerprint["database"] = redact(resolve_location(db))
    if json_output:
        print_json(fingerprint)
        return
    console.stdout.print(console.key_value_table("pqbench environment", _flatten("", fingerprint)))


@app.command()
@handles_errors
def runs(json_output: JsonOption = False, db: DbOption = None) -> None:
    """List the stored runs, oldest first."""
    from pqbench.store import Store

    location = resolve_location(db)
    if not is_url(location) and not Path(location).expanduser().exists():
        # No database yet is the first-day state, not an error: nothing is stored.
        listed, shown = [], redact(location)
    else:
        store = Store.open(db, create=False)
        listed, shown = store.list_runs(), store.location
    if json_output:
        print_json({"database": shown, "runs": [info.__dict__ for info in listed]})
        return
    if not listed:
        console.stdout.print(console.safe(
            f"no runs stored yet in {shown}; `pqbench speed` measures and stores one"))
        return
    console.print_table(views.runs_table(listed, shown))

"""`pqbench env` and `pqbench runs`: what this machine is, and what is stored."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pqbench.app.stored import RUNS_SHOWN
from pqbench.cli.common import (
    CsvOption,
    DbOption,
    JsonOption,
    handles_errors,
    one_output,
    print_json,
)
from pqbench.cli.root import app
from pqbench.data.store import resolve_location
from pqbench.libraries.implementations import all_implementations
from pqbench.measure import environment
from pqbench.platform.untrusted import redact
from pqbench.views import console
from pqbench.views import runs as views
from pqbench.views.delimited import csv_text


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, inner in value.items():
            rows.extend(_flatten(f"{prefix}.{key}" if prefix else str(key), inner))
        return rows
    if isinstance(value, list):
        return [(prefix, ", ".join(map(str, value)))]
    return [(prefix, value)]


#: `pqbench env` sections: a title and the fingerprint's top-level keys it shows, in order.
ENV_SECTIONS = (
    ("machine", ("hostname", "testbed", "arch", "cpu", "platform")),
    ("operating system", ("os", "os_build")),
    ("libraries", ("libraries", "library_details")),
    ("OpenSSL capability knobs", ("knobs",)),
    ("implementations", ("implementations",)),
    ("pqbench", ("python_executable", "database")),
)


def env_sections(fingerprint: dict[str, Any]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """The fingerprint in sections, each field once: a top-level copy of a nested field
    (`cpu_flags` of `cpu.flags`) is left out, and unset knobs are said in one line. Keys
    no section names go last, under "other"."""
    flat = {key: value for key, value in _flatten("", fingerprint)}
    duplicates = {key for key in flat if "." not in key and any(
        other != key and other.replace(".", "_") == key and flat[other] == flat[key]
        for other in flat)}
    placed: set[str] = set()
    sections = []
    for title, keys in (*ENV_SECTIONS, ("other", tuple(fingerprint))):
        rows = []
        for top in keys:
            if top in placed or top not in fingerprint:
                continue
            placed.add(top)
            rows += [(k, v) for k, v in _flatten(top, fingerprint[top])
                     if k not in duplicates and not (top == "knobs" and v is None)]
        if title == "OpenSSL capability knobs" and not rows:
            rows = [("knobs", "none set: OpenSSL uses every capability it detects")]
        if rows:
            sections.append((title, rows))
    return sections


@app.command()
@handles_errors
def env(
    every: Annotated[bool, typer.Option(
        "--all", metavar="", help="The whole fingerprint, every field a run records.")
    ] = False,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """What to tune before measuring (as `pyperf system show`: the CPU frequency governor,
    turbo, isolated CPUs, the load, ASLR), then this machine in a few lines; --all and
    --json give its whole fingerprint."""
    from pqbench.measure.environment import tuning
    from pqbench.views import environment as env_views

    fingerprint = environment.collect()
    impls = {impl.name: impl.unavailable_reason() or "available" for impl in all_implementations()}
    fingerprint["implementations"] = impls
    fingerprint["database"] = redact(resolve_location(db))
    found = tuning.settings()
    if json_output:
        print_json({**fingerprint, "tuning": [s.as_dict() for s in found]})
        return
    console.print_table(env_views.tuning_table(found))
    if every:
        for title, rows in env_sections(fingerprint):
            console.stdout.print(console.key_value_table(title, rows))
        return
    console.print_table(env_views.summary(fingerprint, impls))
    console.note("`pqbench env --all` shows every field a run records; --json gives them "
                 "as JSON")


LastOption = Annotated[int | None, typer.Option(
    "--last", "-n", min=1, metavar="N", help=f"Only the N newest runs (default {RUNS_SHOWN}).")]
AllOption = Annotated[bool, typer.Option("--all", metavar="", help="Every stored run.")]


@app.command()
@handles_errors
def runs(last: LastOption = None, every: AllOption = False, csv_output: CsvOption = False,
         json_output: JsonOption = False, db: DbOption = None) -> None:
    """List the stored runs, newest first: the newest 20 unless --last N or --all, then how
    many older ones there are. --json and --csv list every run, oldest first."""
    from pqbench.app.stored import inventory

    one_output(json=json_output, csv=csv_output)
    stored = inventory(db, last, every)
    if json_output:
        print_json({"database": stored.location, "runs": [r.__dict__ for r in stored.runs]})
        return
    if csv_output:
        found = stored.algorithms(stored.runs)
        console.write(csv_text(views.RUNS_CSV, [line for r in stored.runs for line in
                                                views.runs_csv_rows(r, found.get(r.run_id, []))]))
        return
    if not stored.runs:
        console.lines([f"no runs stored yet in {stored.location}; `pqbench speed` measures "
                       "and stores one"])
        return
    newest, older = stored.newest(last, every)
    console.print_table(views.runs_table(newest, stored.location, stored.algorithms(newest),
                                         older=older))
    if older:
        console.note(f"{older} older run(s) not shown; `pqbench runs --all` lists every run, "
                     "`--last N` the N newest")

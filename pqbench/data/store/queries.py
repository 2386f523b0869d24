"""Reading runs back: what a command asks for, in bulk, with the indexes of the schema.

`load` serves `Store.load_runs`: the run rows a filter selects (a `--by` group whose field
is a column is chosen in SQL, any other field over the runs' fingerprints in Python), with
their problems and checks when asked (they are lists in the run's row), then their result
rows (rounds and all) in a query per batch of runs; or, for one row key across every run
(history), by that key through its index. A run header may leave its fingerprint out
(`fingerprints=False`): the fingerprint fields that are columns are enough to group runs
by them, and the fingerprints of ten thousand runs are most of what reading them costs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import (
    Select,
    Text,
    and_,
    case,
    cast,
    func,
    literal,
    literal_column,
    null,
    or_,
    select,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from pqbench.data.record import codec
from pqbench.data.record.fingerprint import STATE_PART, Fingerprint
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.runs import NO_VALUE, group_value
from pqbench.data.store import schema

#: Run ids per IN (...) query: far below SQLite's and PostgreSQL's parameter limits.
IDS_PER_QUERY = 500


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


@dataclass(frozen=True)
class RunFilter:
    """Which runs `Store.load_runs` loads: the ones named (ids or unique prefixes), of
    these kinds, whose `--by` group (`record.runs.group_value`) is one of `values`, the
    newest N; empty parts select everything. `algorithms` (names as stored), with
    `implementation` and `operation`, keeps only those result rows (and the problems and
    checks of those algorithms): every selected run is loaded, with only the rows asked.
    `notes` False leaves the problems and checks out (a history draws rates only)."""

    ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    by: str | None = None
    values: tuple[str, ...] = ()
    newest: int | None = None
    algorithms: tuple[str, ...] = ()
    implementation: str | None = None
    operation: str | None = None
    notes: bool = True


r = schema.runs
m = schema.measurements

#: `--by` fields kept as columns of pqbench_runs, read as `group_value` reads them.
_COLUMNS: dict[str, Any] = {"label": r.c.label, "os_build": r.c.os_build, "kind": r.c.kind,
                            "testbed": r.c.testbed, "hostname": r.c.hostname,
                            "run_id": r.c.run_id}
#: `--by` fields a header without its fingerprint answers.
LIGHT_FIELDS = frozenset({*_COLUMNS, "date"})


def _header_columns(fingerprints: bool, notes: bool, dialect: str, version: int) -> list[Any]:
    left_out = set() if notes else set(schema.NOTE_COLUMNS)
    # The fingerprint's columns, read in parts (`_fingerprint_columns`) or not at all.
    left_out |= {"environment", *_SPLIT_COLUMNS}
    if fingerprints:
        return [*(c for c in r.c if c.name not in left_out),
                *_fingerprint_columns(dialect, version)]
    # A header without its fingerprint reads the settings as text (codec.JsonObject).
    return [cast(c, Text).label(c.name) if c.name == "settings" else c
            for c in r.c if c.name not in left_out]


def _group_condition(by: str, values: Sequence[str]) -> ColumnElement[bool] | None:
    """A condition every run of the groups asked meets (more may: `group_value` decides)."""
    if by == "date":
        return func.substr(r.c.started_at, 1, 10).in_(list(values))
    column = _COLUMNS.get(by)
    if column is None:
        return None
    condition = column.in_([v for v in values if v != NO_VALUE])
    if NO_VALUE in values:
        condition = or_(condition, column.is_(None))
    return condition


def _run_query(wanted: RunFilter, ids: Sequence[str], fingerprints: bool, notes: bool,
               dialect: str, version: int) -> Select[Any]:
    query = select(*_header_columns(fingerprints, notes, dialect, version))
    if ids:
        query = query.where(r.c.run_id.in_(list(ids)))
    if wanted.kinds:
        query = query.where(r.c.kind.in_(list(wanted.kinds)))
    if wanted.by is not None:
        condition = _group_condition(wanted.by, wanted.values)
        if condition is not None:
            query = query.where(condition)
    order = (r.c.started_at, r.c.run_id)
    if wanted.newest is not None:
        return query.order_by(*(c.desc() for c in order)).limit(wanted.newest)
    return query.order_by(*order)


#: The columns schema version 5 split a fingerprint into, beside `environment`.
_SPLIT_COLUMNS = ("environment_key", "machine_state")
#: SQLite's JSON functions as every build has them (3.38 made them part of the core).
_SQLITE_JSON = (3, 38)


def _fingerprint_columns(dialect: str, version: int) -> list[Any]:
    """A run's fingerprint as three columns (`_Fingerprints`): `env_key`, what names the
    part every run of a build on a machine shares (None: `env_base` names itself);
    `env_base`, that part's JSON text where this query reads it (None: `_base_texts`
    reads it once per key); `env_state`, the JSON text of the run's own state
    (`STATE_PART`), or None.

    Schema version 5 stores them so (`codec.fingerprint_columns`): the key and state are
    read, the shared part once per key. An older store holds the fingerprint whole: SQLite
    cuts the state out in SQL (json_remove keeps the order of the rest; a text that is not
    JSON is left whole, for the decoder to name), PostgreSQL keys the rest by the MD5 of
    its jsonb text and the state is dropped in Python."""
    env = r.c.environment
    if version >= 5:
        return [r.c.environment_key.label("env_key"), null().label("env_base"),
                cast(r.c.machine_state, Text).label("env_state")]
    if dialect == "postgresql":
        stateless: ColumnElement[str] = literal_column(
            f"(environment::jsonb - '{STATE_PART}')::text", Text)
        return [func.md5(stateless).label("env_key"), cast(env, Text).label("env_base"),
                cast(env.op("->")(literal(STATE_PART)), Text).label("env_state")]
    import sqlite3

    path = f"$.{STATE_PART}"
    if dialect != "sqlite" or sqlite3.sqlite_version_info < _SQLITE_JSON:
        return [null().label("env_key"), cast(env, Text).label("env_base"),
                null().label("env_state")]
    valid = func.json_valid(env) == 1
    return [null().label("env_key"),
            case((valid, func.json_remove(env, path)), else_=cast(env, Text))
            .label("env_base"),
            case((valid, func.json_quote(func.json_extract(env, path)))).label("env_state")]


def _key(row: Any) -> str:
    """What names a run's shared fingerprint part: its key, else the part's text, else (a
    row without either) the run itself."""
    return row.env_key or (row.env_base if row.env_base is not None else f"run:{row.run_id}")


def _base_texts(conn: Connection, rows: Sequence[Any]) -> dict[str, str]:
    """The shared part's text of each key among `rows` (schema version 5), read from the
    first run that has it: a few hundred texts for a fleet's 10,000 runs."""
    first: dict[str, str] = {}
    for row in rows:
        first.setdefault(_key(row), row.run_id)
    chosen = {run_id: key for key, run_id in first.items()}
    texts: dict[str, str] = {}
    for batch in chunks(list(chosen), IDS_PER_QUERY):
        for run_id, text in conn.execute(select(r.c.run_id, cast(r.c.environment, Text))
                                         .where(r.c.run_id.in_(list(batch)))):
            texts[chosen[run_id]] = text
    return texts


class _Fingerprints:
    """The fingerprints of the runs one query reads: each distinct shared part decoded
    once and shared by the runs that have it (`Fingerprint.of_run`), each run's state its
    own. `texts`: the shared parts by key, where the query read keys alone."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        self._texts = texts or {}
        self._bases: dict[str, Fingerprint] = {}

    def of(self, row: Any) -> Fingerprint:
        key = _key(row)
        base = self._bases.get(key)
        if base is None:
            found = codec.json_value(row.env_base if row.env_base is not None
                                     else self._texts[key])
            if not isinstance(found, dict):
                raise codec.unreadable(f"the environment of run {row.run_id}",
                                       "not a JSON object")
            if row.env_state is not None:  # the state comes apart: an older store's
                found.pop(STATE_PART, None)
            base = self._bases[key] = Fingerprint(found)
        state = None if row.env_state is None else codec.json_value(row.env_state)
        return Fingerprint.of_run(base, state)


def headers(conn: Connection, wanted: RunFilter, ids: Sequence[str], fingerprints: bool,
            notes: bool = False, version: int = schema.SCHEMA_VERSION) -> list[Run]:
    """The selected runs without their result rows (and, unless `notes`, without their
    problems and checks), in the order of `ids` where they name runs, else oldest first."""
    query = _run_query(wanted, ids, fingerprints, notes, conn.dialect.name, version)
    rows = list(conn.execute(query).all())
    if wanted.newest is not None:
        rows.reverse()
    if fingerprints:
        read = _Fingerprints(_base_texts(conn, rows) if version >= 5 else None)
        found = {row.run_id: codec.run_from_columns(row, notes=notes,
                                                    environment=read.of(row))
                 for row in rows}
    else:
        found = {row.run_id: codec.run_header_from_columns(row, notes=notes) for row in rows}
    if wanted.by is not None:
        found = {i: run for i, run in found.items()
                 if group_value(run, wanted.by) in wanted.values}
    return [found[i] for i in ids if i in found] if ids else list(found.values())


def row_condition(wanted: RunFilter) -> ColumnElement[bool]:
    """The result rows of `wanted`'s algorithms (and implementation, operation)."""
    parts: list[ColumnElement[bool]] = [m.c.algorithm.in_(list(wanted.algorithms))]
    if wanted.implementation is not None:
        parts.append(m.c.implementation == wanted.implementation)
    if wanted.operation is not None:
        parts.append(m.c.operation == wanted.operation)
    return and_(*parts)


def _add_rows(conn: Connection, found: dict[str, list[Measurement]],
              condition: ColumnElement[bool], wanted_ids: set[str] | None) -> None:
    """Result rows meeting `condition`, rounds and all: one query."""
    for row in conn.execute(select(m).where(condition).order_by(m.c.run_id, m.c.id)):
        if wanted_ids is None or row.run_id in wanted_ids:
            found.setdefault(row.run_id, []).append(codec.measurement_from_columns(row))


def _notes_kept(run: Run, wanted: RunFilter) -> dict[str, Any]:
    """The run's problems and checks of the algorithms (and implementation) asked for, as
    `replace` arguments; nothing to replace when every algorithm is."""
    if not wanted.algorithms:
        return {}

    def kept(note: Problem | Verification) -> bool:
        return note.algorithm in wanted.algorithms and (
            wanted.implementation is None or note.implementation == wanted.implementation)

    return {"problems": tuple(filter(kept, run.problems)),
            "verifications": tuple(filter(kept, run.verifications))}


def load(conn: Connection, wanted: RunFilter, ids: Sequence[str], *, rows_too: bool,
         fingerprints: bool, version: int = schema.SCHEMA_VERSION) -> list[Run]:
    chosen = headers(conn, wanted, ids, fingerprints, notes=rows_too and wanted.notes,
                     version=version)
    if not rows_too or not chosen:
        return chosen
    run_ids = [run.run_id for run in chosen]
    found: dict[str, list[Measurement]] = {}
    if wanted.algorithms:
        # One row key across every run: by the key's index, not by lists of run ids.
        _add_rows(conn, found, row_condition(wanted), set(run_ids))
    else:
        for batch in chunks(run_ids, IDS_PER_QUERY):
            _add_rows(conn, found, m.c.run_id.in_(list(batch)), None)
    return [replace(run, measurements=tuple(found.get(run.run_id, ())),
                    **_notes_kept(run, wanted)) for run in chosen]


def algorithms(conn: Connection, timed_only: bool = False) -> list[str]:
    """Every algorithm name stored, in order; `timed_only`: those a timed run has rows for
    (memory runs have no rates), which reads every row.

    All of them from the row-key index, one probe per name (a loose index scan): the
    first name, then the least name above the one before, until none is left. A DISTINCT
    over the index reads each of its entries instead, one per result row: 60 ms of every
    `history` over a fleet's 830,000 rows, on SQLite and PostgreSQL alike, for a dozen
    names (neither plans a DISTINCT as a skip over the index)."""
    if timed_only:
        query = (select(m.c.algorithm).distinct().order_by(m.c.algorithm)
                 .join(r, r.c.run_id == m.c.run_id).where(r.c.kind != "memory"))
        return list(conn.execute(query).scalars())
    names = select(func.min(m.c.algorithm).label("name")).cte("names", recursive=True)
    after = select(func.min(m.c.algorithm)).where(m.c.algorithm > names.c.name)
    names = names.union_all(select(after.scalar_subquery()).where(names.c.name.is_not(None)))
    return list(conn.execute(select(names.c.name).where(names.c.name.is_not(None))).scalars())

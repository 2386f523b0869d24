"""The one codec of the run record: documents (`--json`, `export`), CSV rows and the
store's rows, written and read back by the same functions.

A result row is its key, its unit and samples (`models.ResultRow`'s first group), the
summary derived from the samples, and its attributes, written flat beside them: every
field `record.models` types for a run kind, and any other the measuring code adds. Reading
back (`run_from_document`, `measurement`, `run_from_columns`) is for trusted data, our own
store or a document `record.transfer` has validated, and reads the older spellings of
format 1 too: a label kept in the fingerprint, and file rows that counted bytes as
operations of a 1-byte block (`unit` "byte" in the attributes, `block_size` 1).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any, get_args, get_origin

import pydantic_core

from pqbench.data.record.estimates import of_ordered, round_rates
from pqbench.data.record.fingerprint import STATE_PART, Fingerprint
from pqbench.data.record.format import FORMAT_VERSION, RUN_FORMAT
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult, cycles_per_op_in_base
from pqbench.platform.errors import StoreError
from pqbench.platform.untrusted import redact_command_line

FORMAT = RUN_FORMAT
__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "csv_table",
    "measurement",
    "result_row",
    "run_document",
    "run_from_document",
]


def _number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: an undefined figure (one round's CV) is null."""
    return value if value is None or math.isfinite(value) else None


# --- parts every edge shares ----------------------------------------------------------


def sample(r: LoopResult) -> dict[str, Any]:
    return {"ops": r.ops, "elapsed_ns": r.elapsed_ns, "cycles": r.cycles}


def loop_result(fields: Mapping[str, Any]) -> LoopResult:
    cycles = fields.get("cycles")
    return LoopResult(int(fields["ops"]), int(fields["elapsed_ns"]),
                      None if cycles is None else int(cycles))


def problem_fields(p: Problem) -> dict[str, Any]:
    return {"algorithm": p.algorithm, "implementation": p.implementation,
            "operation": p.operation, "kind": p.kind, "reason": p.reason}


def problem(fields: Mapping[str, Any]) -> Problem:
    return Problem(fields["algorithm"], fields["implementation"], fields["kind"],
                   fields["reason"], fields.get("operation"))


def verification_fields(v: Verification) -> dict[str, Any]:
    return {"algorithm": v.algorithm, "implementation": v.implementation,
            "checks": list(v.checks)}


def verification(fields: Mapping[str, Any]) -> Verification:
    return Verification(fields["algorithm"], fields["implementation"],
                        tuple(fields["checks"]))


def measurement(*, algorithm: str, implementation: str, operation: str,
                rounds: Iterable[LoopResult], block_size: int | None = None,
                sizes: Mapping[str, int] | None = None,
                attributes: Mapping[str, Any] | None = None, counter: str | None = None,
                unit: str | None = None) -> Measurement:
    """A stored or imported row: `unit` as written, or from the attributes where format 1
    kept it; a byte row's block size of 1 (how file rows used to count bytes) dropped."""
    extra = dict(attributes or {})
    kept = extra.pop("unit", None)
    unit = unit or (kept if isinstance(kept, str) else None) or "op"
    if unit == "byte" and block_size == 1:
        block_size = None
    return Measurement(algorithm=algorithm, implementation=implementation,
                       operation=operation, rounds=tuple(rounds), sizes=dict(sizes or {}),
                       block_size=block_size, attributes=extra, counter=counter, unit=unit)


def label_of(label: str | None, environment: Fingerprint) -> str | None:
    """The run's label; runs of format 1 may carry it in the fingerprint only."""
    return label if label is not None else environment.legacy_label


# --- JSON documents (`--json`, export, import) ----------------------------------------


def summary_fields(m: Measurement) -> dict[str, Any]:
    """The figures derived from the samples (null where they are undefined)."""
    if not m.rounds:
        return {"ops_per_sec": None, "us_per_op": None, "bytes_per_sec": None,
                "ci_low": None, "ci_high": None, "ci_unit": None, "ci_level": None,
                "cv": None, "rounds": 0,
                "total_ops": 0, "cycles_per_op": None, "cycles_per_byte": None}
    s = m.summary
    per_op = m.unit == "op"
    cycles = m.cycles_per_op
    # The interval in the unit the row is read in: bytes/s where a row moves bytes (a
    # cipher's block, a file), as its headline figure, bytes_per_sec, is.
    scale = m.block_size if per_op and m.block_size else 1
    return {
        "ops_per_sec": _number(s.median) if per_op else None,
        "us_per_op": _number(m.us_per_op) if per_op else None,
        "bytes_per_sec": _number(m.bytes_per_sec),
        "ci_low": _number(s.ci_low * scale), "ci_high": _number(s.ci_high * scale),
        "ci_unit": "ops/s" if per_op and not m.block_size else "bytes/s",
        "ci_level": s.ci_level, "cv": _number(s.cv), "rounds": s.n,
        "total_ops": m.total_ops,
        "cycles_per_op": _number(cycles) if per_op else None,
        "cycles_per_byte": (cycles / m.block_size
                            if cycles is not None and m.block_size else None),
    }


def stored_row(m: Measurement) -> dict[str, Any]:
    """One measurement as a document's result row without the figures derived from its
    samples: what the store writes a row from (`row_columns`)."""
    return {"algorithm": m.algorithm, "implementation": m.implementation,
            "operation": m.operation, "block_size": m.block_size, "unit": m.unit,
            "cycle_counter": m.counter, "sizes": dict(m.sizes),
            "samples": [sample(r) for r in m.rounds], **dict(m.attributes)}


def result_row(m: Measurement) -> dict[str, Any]:
    """One measurement: key, unit, summary figures, sizes, samples and attributes."""
    row = stored_row(m)
    head = {name: row.pop(name)
            for name in ("algorithm", "implementation", "operation", "block_size", "unit")}
    return {**head, **summary_fields(m), **row}


def run_document(run: Run) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run_id": run.run_id,
        "kind": run.kind,
        "status": run.status,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "command": redact_command_line(run.command),
        "label": run.label,
        "settings": dict(run.settings),
        "environment": run.environment.to_dict(),
        "verifications": [verification_fields(v) for v in run.verifications],
        "results": [result_row(m) for m in run.measurements],
        "problems": [problem_fields(p) for p in run.problems],
    }


@cache
def _not_attributes() -> frozenset[str]:
    from pqbench.data.record.models import ROW_FIELDS, SUMMARY_FIELDS

    return ROW_FIELDS | SUMMARY_FIELDS


def _measurement_of_row(row: Mapping[str, Any]) -> Measurement:
    skip = _not_attributes()
    return measurement(
        algorithm=row["algorithm"], implementation=row["implementation"],
        operation=row["operation"], block_size=row.get("block_size"),
        rounds=(loop_result(s) for s in row["samples"]), sizes=row.get("sizes") or {},
        attributes={k: v for k, v in row.items() if k not in skip},
        counter=row.get("cycle_counter"), unit=row.get("unit"))


def run_from_document(doc: Mapping[str, Any], *, results: bool = True) -> Run:
    """The inverse of run_document (the caller validates an untrusted document first);
    without its result rows when `results` is False (the store writes those straight
    from the document: `row_columns`)."""
    environment = Fingerprint(doc["environment"])
    return Run(
        run_id=doc["run_id"], started_at=doc["started_at"], finished_at=doc["finished_at"],
        status=doc["status"], command=doc["command"],
        label=label_of(doc.get("label"), environment),
        settings=dict(doc.get("settings") or {}), environment=environment,
        measurements=tuple(_measurement_of_row(r) for r in doc["results"]) if results
        else (),
        problems=tuple(problem(p) for p in doc.get("problems", [])),
        verifications=tuple(verification(v) for v in doc.get("verifications", [])),
        kind=doc.get("kind", "speed"),
    )


# --- CSV --------------------------------------------------------------------------------

#: The sizes a spreadsheet gets a column for (public-key rows).
CSV_SIZES = ("public_key", "secret_key", "ciphertext", "signature", "shared_secret")


@cache
def csv_columns() -> tuple[str, ...]:
    """run_id, the key and unit, the summary, the wire sizes, then every typed attribute
    that is one value (lists and objects stay in the JSON)."""
    from pqbench.data.record.models import ROW_FIELDS, SUMMARY_FIELDS, ResultRow

    scalar = [name for name, info in ResultRow.model_fields.items()
              if name != "cycle_counter" and not _is_collection(info.annotation)]
    return ("run_id", *(n for n in scalar if n in ROW_FIELDS),
            *(n for n in scalar if n in SUMMARY_FIELDS), *CSV_SIZES,
            *(n for n in scalar if n not in ROW_FIELDS | SUMMARY_FIELDS))


def _is_collection(annotation: Any) -> bool:
    """Whether a field's type is (or may be) a list or an object."""
    if get_origin(annotation) in (list, dict):
        return True
    return any(_is_collection(arg) for arg in get_args(annotation))


#: The run's own facts each row repeats, last: the machine's load over the run (the
#: fingerprint's `run` part), where the run recorded it.
CSV_RUN_COLUMNS = ("others_cpu", "cpu_steal")
#: The run's facts each row repeats, before its load: when it started, on which OS build,
#: under which label (empty without one), so rows of several runs' CSV files concatenated
#: still say which run and build they are.
CSV_RUN_FACTS = ("started_at", "os_build", "label")


def csv_table(run: Run) -> tuple[list[str], list[list[Any]]]:
    """A run as one tidy table (a run has one kind), its columns and its rows, for
    `views.delimited` to write: the key, the summary and the sizes of `csv_columns`
    always, the typed attributes only where some row of this run fills them, so a speed
    run carries no TLS, memory or file columns; then the run's facts (`CSV_RUN_FACTS`)
    always and its load (`CSV_RUN_COLUMNS`) where it was recorded."""
    rows = []
    state = {"others_cpu": run.environment.others_cpu, "cpu_steal": run.environment.steal,
             "started_at": run.started_at, "os_build": run.environment.os_build,
             "label": run.label}
    for m in run.measurements:
        row = result_row(m)
        row.update(row.pop("sizes"))
        row["run_id"] = run.run_id
        row.update(state)
        rows.append(row)
    every = csv_columns()
    core = every.index(CSV_SIZES[-1]) + 1
    columns = [*every[:core], *(name for name in every[core:]
                                if any(row.get(name) not in (None, "") for row in rows)),
               *CSV_RUN_FACTS, *(CSV_RUN_COLUMNS if run.environment.machine_state else ())]
    return columns, [[row.get(name) for name in columns] for row in rows]


# --- the store's rows (`pqbench.data.store`: the columns of store/schema.py) ----------------


def run_columns(run: Run) -> dict[str, Any]:
    """A run's row in pqbench_runs; facts the runs list shows get columns of their own.
    The fingerprint goes in two parts (schema version 5, `fingerprint_columns`)."""
    env = run.environment
    return {"run_id": run.run_id, "kind": run.kind, "started_at": run.started_at,
            "finished_at": run.finished_at, "status": run.status, "label": run.label,
            "command": redact_command_line(run.command), "os_build": env.os_build,
            "hostname": env.hostname, "testbed": env.testbed,
            "settings": dict(run.settings), **fingerprint_columns(env),
            "problems": [problem_fields(p) for p in run.problems],
            "verifications": [verification_fields(v) for v in run.verifications]}


def fingerprint_columns(env: Mapping[str, Any]) -> dict[str, Any]:
    """A fingerprint as pqbench_runs keeps it: `environment`, the JSON text of what every
    run of a build on a machine shares; `machine_state`, the run's own state (its
    `STATE_PART`, where that is an object; anything else stays in the shared part);
    `environment_key`, the SHA-256 of the shared part's text, which a reader decodes once
    per key (`store.queries`)."""
    shared = dict(env)
    state = shared.get(STATE_PART)
    if isinstance(state, Mapping):
        del shared[STATE_PART]
    else:
        state = None
    text = json.dumps(shared)
    return {"environment": text, "environment_key": hashlib.sha256(text.encode()).hexdigest(),
            "machine_state": None if state is None else json.dumps(state)}


def _median(values: list[float]) -> float:
    """statistics.median, to the bit (the mean of the middle two of an even count), without
    its checks: a call per result row of an import."""
    return _median_of_ordered(sorted(values))


def _median_of_ordered(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def row_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row in pqbench_measurements, from a document's result row (validated, or a
    Measurement's `stored_row`), without making its Measurement and LoopResults first (an
    import writes a fleet's rows). The rate columns are a convenience for SQL
    readers (in the row's unit; 0 for a row without rounds); pqbench derives every figure
    from the samples. The unit rides in the attributes, where format 1 kept it. The
    figures by the definitions the record uses: `measurement`'s unit and block size,
    `LoopResult.ops_per_sec` and `.cycles_per_op`, `Measurement.rate`, `.us_per_op`
    and `.cycles_per_op`; tests/data/record/test_import_rows.py holds the two to the same rows.
    Beside the columns, the row's estimate and the rounds it rests on (`record.estimates`,
    from the rates sorted here for the median rate), which the store keeps per run."""
    skip = _not_attributes()
    attributes = {k: v for k, v in row.items() if k not in skip}
    unit = row.get("unit") or "op"
    block_size = row.get("block_size")
    if unit == "byte" and block_size == 1:
        block_size = None
    if unit != "op":
        attributes["unit"] = unit
    samples = row["samples"]
    ops = [s["ops"] for s in samples]
    elapsed = [s["elapsed_ns"] for s in samples]
    counted = [s.get("cycles") for s in samples]
    ordered = round_rates(ops, elapsed)
    ordered.sort()
    rate = _median_of_ordered(ordered) if ordered else 0.0
    per_op = (1e6 / rate if rate else math.inf) if samples else 0.0
    wall = attributes.get("wall_ns")
    cycles = cycles_per_op_in_base(ops, elapsed, counted,
                                   wall if isinstance(wall, list) else None,
                                   "cpu" if attributes.get("time_base") == "cpu" else "wall")
    return {"algorithm": row["algorithm"], "implementation": row["implementation"],
            "operation": row["operation"], "block_size": block_size,
            "ops_per_sec": rate, "us_per_op": per_op,
            "cycles_per_op": _median(cycles) if cycles else None,
            "counter": row.get("cycle_counter"), "sizes": row.get("sizes") or {},
            "attributes": attributes,
            # The rounds themselves, as three arrays in round order (schema version 3).
            "round_ops": ops, "round_elapsed_ns": elapsed, "round_cycles": counted,
            # Schema version 4 keeps these in pqbench_estimates.
            "estimate": of_ordered(ordered), "estimate_rounds": len(ordered)}


def measurement_from_columns(row: Any) -> Measurement:
    """The inverse of row_columns."""
    rounds = itertools.starmap(LoopResult, zip(row.round_ops, row.round_elapsed_ns,
                                               row.round_cycles, strict=True))
    return measurement(algorithm=row.algorithm, implementation=row.implementation,
                       operation=row.operation, rounds=rounds, block_size=row.block_size,
                       sizes=row.sizes, attributes=row.attributes, counter=row.counter)


def json_value(text: str | bytes) -> Any:
    """A stored JSON value decoded, as json.loads decodes it: by pydantic-core's parser
    (jiter), twice as fast on a run's fingerprint (a fleet's history reads 10,000), and by
    json.loads itself wherever jiter refuses the text (a lone surrogate's escape, say), so
    json.loads has the last word on what decodes and what each refusal says."""
    try:
        return pydantic_core.from_json(text)
    except ValueError:
        return json.loads(text)


def run_from_columns(row: Any, measurements: Iterable[Measurement] = (),
                     notes: bool = False, environment: Fingerprint | None = None) -> Run:
    """A run from its row; with `notes`, its problems and checks (the query read them);
    its fingerprint `environment` where the reader decoded it (`store.queries`), else from
    the row's environment column. The label column holds a format-1 run's label too
    (`run_columns`; `store.migrate` moved older rows')."""
    for name in ("settings", *(() if environment is not None else ("environment",))):
        if not isinstance(getattr(row, name), Mapping):
            raise unreadable(f"the {name} of run {row.run_id}", "not a JSON object")
    if environment is None:
        environment = Fingerprint(row.environment)
    return Run(run_id=row.run_id, started_at=row.started_at, finished_at=row.finished_at,
               status=row.status, command=row.command, label=row.label,
               settings=row.settings, environment=environment,
               measurements=tuple(measurements), kind=row.kind,
               **(_notes_of(row) if notes else {}))


def _notes_of(row: Any) -> dict[str, Any]:
    """A run row's problems and checks (`run_columns`)."""
    return {"problems": tuple(map(problem, row.problems)),
            "verifications": tuple(map(verification, row.verifications))}


#: The fingerprint fields pqbench_runs also keeps as columns (`run_columns`).
FINGERPRINT_COLUMNS = ("os_build", "hostname", "testbed")


def unreadable(owner: str, problem: str) -> StoreError:
    """The one error for a stored value pqbench cannot read (a damaged database), whichever
    command reads it and however: "the settings of run X cannot be read (not a JSON
    object); the database may be damaged ..."."""
    return StoreError(f"{owner} cannot be read ({problem}); the database may be damaged: "
                      "restore it from a backup or an export")


class JsonObject(Mapping[str, Any]):
    """A JSON object's text, decoded when first read: a run header's settings. Decoding
    the settings of ten thousand headers took a tenth of a history, which never reads
    them (a paired session's two sides are the headers that are asked)."""

    __slots__ = ("_owner", "_text", "_value")

    def __init__(self, text: str, owner: str = "a stored value") -> None:
        self._text = text
        self._owner = owner
        self._value: dict[str, Any] | None = None

    def _decoded(self) -> dict[str, Any]:
        """The object; a StoreError when the text is not one (a damaged database), raised
        wherever it is first read, as a damaged row read at once is."""
        if self._value is None:
            try:
                value = json.loads(self._text)
            except (TypeError, ValueError) as exc:
                raise unreadable(self._owner, str(exc)) from None
            if not isinstance(value, dict):
                raise unreadable(self._owner, "not a JSON object")
            self._value = value
        return self._value

    def __getitem__(self, key: str) -> Any:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return repr(self._decoded())


def run_header_from_columns(row: Any, notes: bool = False) -> Run:
    """A run from its row without the fingerprint column: the fingerprint holds only the
    fields kept as columns (enough to group runs by them), the settings are read as text
    (`JsonObject`)."""
    kept = ((name, getattr(row, name)) for name in FINGERPRINT_COLUMNS)
    environment = Fingerprint({name: value for name, value in kept if value is not None})
    return Run(run_id=row.run_id, started_at=row.started_at, finished_at=row.finished_at,
               status=row.status, command=row.command, label=row.label,
               settings=JsonObject(row.settings, f"the settings of run {row.run_id}"),
               environment=environment, kind=row.kind, **(_notes_of(row) if notes else {}))

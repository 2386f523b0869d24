"""Export runs to files and import them back: comparisons without a shared database.

Two formats out: pqbench's own JSON (a bundle of run documents, `document.run_document`,
lossless) and pytest-benchmark's JSON (loads in `pytest-benchmark compare`; stats in
seconds per operation, one datum per round). Imports read pqbench JSON only, and treat it
as untrusted data: size-limited before parsing, parsed with `json` (never executed),
validated field by field, and all files are checked before anything is written.
"""

from __future__ import annotations

import json
import math
import platform
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_benchmark import __version__ as pytest_benchmark_version
from pytest_benchmark.stats import Stats

from pqbench import document
from pqbench.errors import InputFileError
from pqbench.results import Run

BUNDLE_FORMAT = "pqbench-export"
BUNDLE_VERSION = 1
#: Refuse files larger than this before reading them (a week of runs is a few MB).
MAX_BYTES = 64 * 1024 * 1024
FORMATS = ("json", "pytest-benchmark")

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


# --- export -----------------------------------------------------------------------------


def export_bundle(runs: Sequence[Run]) -> dict[str, Any]:
    """pqbench's own export: every run document, samples included."""
    return {"format": BUNDLE_FORMAT, "format_version": BUNDLE_VERSION,
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "runs": [document.run_document(r) for r in runs]}


def export_pytest_benchmark(runs: Sequence[Run]) -> dict[str, Any]:
    """A pytest-benchmark JSON file: one benchmark per measurement, seconds per operation.

    `group` is the algorithm; `name` is "operation[implementation-block]" in pytest's
    parametrised-test style, prefixed by the run id when several runs are exported.
    The OS build, library versions and the whole pqbench fingerprint go in `machine_info`.
    """
    if not runs:
        raise InputFileError("nothing to export")
    env = dict(runs[0].environment)
    os_info = env.get("os") or {}
    machine_info = {
        "node": env.get("hostname"), "processor": (env.get("cpu") or {}).get("model"),
        "machine": env.get("arch"), "python_compiler": platform.python_compiler(),
        "python_implementation": platform.python_implementation(),
        "python_implementation_version": (env.get("libraries") or {}).get("python"),
        "python_version": (env.get("libraries") or {}).get("python"),
        "python_build": list(platform.python_build()),
        "release": os_info.get("kernel"), "system": os_info.get("system"),
        "cpu": {"brand_raw": (env.get("cpu") or {}).get("model"),
                "flags": env.get("cpu_flags"), "count": (env.get("cpu") or {}).get("count")},
        "os_build": env.get("os_build"), "cpu_flags": env.get("cpu_flags"),
        "libraries": env.get("libraries"), "knobs": env.get("knobs"),
        "pqbench": env,
    }
    several = len(runs) > 1
    benchmarks = [_benchmark(run, m, several) for run in runs for m in run.measurements
                  if m.samples]
    return {
        "machine_info": machine_info,
        "commit_info": {"id": None, "time": None, "author_time": None, "dirty": False,
                        "project": "pqbench", "branch": None},
        "benchmarks": benchmarks,
        "datetime": runs[-1].finished_at,
        "version": pytest_benchmark_version,
    }


def _benchmark(run: Run, m: Any, several: bool) -> dict[str, Any]:
    seconds = [r.elapsed_ns / 1e9 / r.ops for r in m.rounds if r.ops > 0]
    stats = Stats()
    for value in seconds:
        stats.update(value)
    param = m.implementation + (f"-{m.block_size}" if m.block_size else "")
    name = f"{m.operation}[{param}]"
    if several:
        name = f"{run.run_id}::{name}"
    ops_per_round = sorted(r.ops for r in m.rounds if r.ops > 0)
    return {
        "group": m.algorithm,
        "name": name,
        "fullname": f"pqbench::{m.algorithm}::{name}",
        "params": {"implementation": m.implementation, "block_size": m.block_size},
        "param": param,
        "extra_info": {"run_id": run.run_id, "label": run.label,
                       "os_build": run.environment.get("os_build"),
                       "ops_per_sec": m.ops_per_sec, "bytes_per_sec": m.bytes_per_sec,
                       "cycles_per_op": m.cycles_per_op, "sizes": dict(m.sizes)},
        "options": {"timer": "time.perf_counter_ns", "min_rounds": len(seconds)},
        "stats": {**stats.as_dict(), "data": seconds,
                  "iterations": ops_per_round[len(ops_per_round) // 2]},
    }


def export(runs: Sequence[Run], fmt: str) -> str:
    """The export file's text in the chosen format."""
    if fmt == "json":
        return json.dumps(export_bundle(runs), indent=1) + "\n"
    if fmt == "pytest-benchmark":
        return json.dumps(export_pytest_benchmark(runs), indent=1, default=str) + "\n"
    raise InputFileError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")


# --- import -----------------------------------------------------------------------------


def read_file(path: Path, max_bytes: int = MAX_BYTES) -> list[Run]:
    """The runs in one pqbench export or run document, validated; nothing is stored here."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputFileError(f"{path}: {size} bytes is over the import limit of "
                                 f"{max_bytes} bytes")
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise InputFileError(f"{path} is over the import limit of {max_bytes} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputFileError(f"{path} is not a pqbench export (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{path} is not a pqbench export: invalid JSON at line "
                             f"{exc.lineno} column {exc.colno} ({exc.msg}); "
                             "is the file truncated?") from None
    return parse(data, str(path))


def parse(data: Any, source: str) -> list[Run]:
    """Validate a decoded export (bundle or single run document) and build its Runs."""
    if not isinstance(data, dict):
        raise InputFileError(f"{source} is not a pqbench export (top level is not an object)")
    fmt = data.get("format")
    if fmt == BUNDLE_FORMAT:
        _check_version(data, BUNDLE_VERSION, source)
        docs = data.get("runs")
        if not isinstance(docs, list) or not docs:
            raise InputFileError(f"{source}: a pqbench export needs a non-empty 'runs' list")
    elif fmt == document.FORMAT:
        docs = [data]
    elif "benchmarks" in data and "machine_info" in data:
        raise InputFileError(f"{source} is a pytest-benchmark file; pqbench imports only its "
                             "own exports (`pqbench export --format json`)")
    else:
        raise InputFileError(f"{source} is not a pqbench export (no 'format': "
                             f"'{BUNDLE_FORMAT}' or '{document.FORMAT}')")
    runs = []
    for index, doc in enumerate(docs):
        where = f"{source}: run {index + 1}"
        if not isinstance(doc, dict) or doc.get("format") != document.FORMAT:
            raise InputFileError(f"{where} is not a pqbench run document")
        _check_version(doc, document.FORMAT_VERSION, where)
        _validate_run(doc, where)
        runs.append(document.run_from_document(doc))
    return runs


def _check_version(doc: dict[str, Any], supported: int, where: str) -> None:
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputFileError(f"{where}: missing or invalid format_version")
    if version > supported:
        raise InputFileError(f"{where} was written by a newer pqbench (format version "
                             f"{version}; this pqbench reads up to {supported}); upgrade "
                             "pqbench to import it")


def _fail(where: str, what: str) -> InputFileError:
    return InputFileError(f"{where}: {what}")


def _require(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str,
             optional: bool = False) -> Any:
    value = doc.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _fail(where, f"field {key!r} is missing or not a {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({str: "string", int: "integer", dict: "object", list: "list",
                        float: "number"}.get(k, k.__name__) for k in kinds)


def _validate_run(doc: dict[str, Any], where: str) -> None:
    run_id = _require(doc, "run_id", str, where)
    if not _RUN_ID.match(run_id):
        raise _fail(where, f"run_id {run_id[:80]!r} is not a pqbench run id")
    where = f"{where} ({run_id})"
    for key in ("started_at", "finished_at", "command"):
        _require(doc, key, str, where)
    if doc.get("status") not in ("complete", "interrupted"):
        raise _fail(where, "status must be 'complete' or 'interrupted'")
    _require(doc, "kind", str, where, optional=True)
    _require(doc, "label", str, where, optional=True)
    _require(doc, "settings", dict, where, optional=True)
    _require(doc, "environment", dict, where)
    results = _require(doc, "results", list, where)
    for i, row in enumerate(results):
        _validate_row(row, f"{where} result {i + 1}")
    for key in ("problems", "verifications"):
        items = _require(doc, key, list, where, optional=True) or []
        for item in items:
            if not isinstance(item, dict) or not all(
                    isinstance(item.get(k), str) for k in ("algorithm", "implementation")):
                raise _fail(where, f"an entry of {key!r} is malformed")
        if key == "problems" and any(not isinstance(p.get("kind"), str)
                                     or not isinstance(p.get("reason"), str) for p in items):
            raise _fail(where, "a problem lacks its kind or reason")
        if key == "verifications" and any(not isinstance(v.get("checks"), list)
                                          for v in items):
            raise _fail(where, "a verification lacks its checks")


def _validate_row(row: Any, where: str) -> None:
    if not isinstance(row, dict):
        raise _fail(where, "is not an object")
    for key in ("algorithm", "implementation", "operation"):
        _require(row, key, str, where)
    block = _require(row, "block_size", int, where, optional=True)
    if block is not None and block <= 0:
        raise _fail(where, "block_size must be positive")
    _require(row, "sizes", dict, where, optional=True)
    samples = _require(row, "samples", list, where)
    if not samples:
        raise _fail(where, "has no samples")
    for sample in samples:
        if not isinstance(sample, dict):
            raise _fail(where, "a sample is not an object")
        ops, elapsed, cycles = sample.get("ops"), sample.get("elapsed_ns"), sample.get("cycles")
        if not _count(ops) or not _count(elapsed) or elapsed == 0:
            raise _fail(where, "a sample needs integer ops >= 0 and elapsed_ns > 0")
        if cycles is not None and not _count(cycles):
            raise _fail(where, "a sample's cycles must be a non-negative integer")
    for key in ("ops_per_sec", "ci_low", "ci_high"):
        value = row.get(key)
        if value is not None and (not isinstance(value, int | float)
                                  or not math.isfinite(value)):
            raise _fail(where, f"{key} must be a finite number")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def read_files(paths: Sequence[Path], max_bytes: int = MAX_BYTES) -> list[Run]:
    """All runs of all files; any bad file fails the whole import before anything is saved."""
    runs: list[Run] = []
    for path in paths:
        runs.extend(read_file(path, max_bytes))
    return runs

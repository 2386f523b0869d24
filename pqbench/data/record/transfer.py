"""Export runs to files and import them back: comparisons without a shared database.

Two formats out: pqbench's own JSON (a bundle of run documents, `codec.run_document`,
lossless) and pytest-benchmark's JSON (loads in `pytest-benchmark compare`; stats in
seconds per operation, one datum per round). Imports read pqbench JSON only, and treat it
as untrusted data: size-limited before parsing, parsed (never executed) and validated as
a whole against the run format's schema (`pqbench.data.record.models`: in one pass over the
bytes by `record.validation`, or decoded with `json` and checked against the models
themselves where that pass cannot vouch for a file, for the message), and all files are
checked before anything is written; the store then writes every run of every file in
one transaction, straight from the validated documents.
"""

from __future__ import annotations

import json
import math
import os
import platform
import stat
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pqbench.data.record import codec, models, validation
from pqbench.data.record.format import BUNDLE_FORMAT, BUNDLE_VERSION, FORMAT_VERSION, RUN_FORMAT
from pqbench.data.record.results import Measurement, Run
from pqbench.platform.errors import InputFileError

__all__ = ["BUNDLE_FORMAT", "BUNDLE_VERSION", "FORMATS", "MAX_BYTES", "InputFileError",
           "export", "parse", "parse_models", "read_documents", "read_file",
           "read_files", "vouched_documents"]
#: Refuse files larger than this before reading them (a week of runs is a few MB).
MAX_BYTES = 64 * 1024 * 1024
FORMATS = ("json", "pytest-benchmark")


# --- export -----------------------------------------------------------------------------


def export_bundle(runs: Sequence[Run]) -> dict[str, Any]:
    """pqbench's own export: every run document, samples included."""
    return {"format": BUNDLE_FORMAT, "format_version": BUNDLE_VERSION,
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "runs": [codec.run_document(r) for r in runs]}


def export_pytest_benchmark(runs: Sequence[Run]) -> dict[str, Any]:
    """A pytest-benchmark JSON file: one benchmark per measurement, seconds per operation.

    `group` is the algorithm; `name` is "operation[implementation-block]" in pytest's
    parametrised-test style, prefixed by the run id when several runs are exported.
    The OS build, library versions and the whole pqbench fingerprint go in `machine_info`.
    """
    from pytest_benchmark import __version__ as pytest_benchmark_version

    if not runs:
        raise InputFileError("nothing to export")
    env = runs[0].environment
    machine_info = {
        "node": env.hostname, "processor": env.cpu_model, "machine": env.arch,
        "python_compiler": platform.python_compiler(),
        "python_implementation": platform.python_implementation(),
        "python_implementation_version": env.python, "python_version": env.python,
        "python_build": list(platform.python_build()),
        "release": env.kernel, "system": env.os_system,
        "cpu": {"brand_raw": env.cpu_model, "flags": env.cpu_flags, "count": env.cpu_count},
        "os_build": env.os_build, "cpu_flags": env.cpu_flags,
        "libraries": env.path("libraries"), "knobs": env.path("knobs"),
        "pqbench": env.to_dict(),
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


def _benchmark(run: Run, m: Measurement, several: bool) -> dict[str, Any]:
    from pytest_benchmark.stats import Stats

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
                       "os_build": run.environment.os_build,
                       "ops_per_sec": m.ops_per_sec, "bytes_per_sec": m.bytes_per_sec,
                       "cycles_per_op": m.cycles_per_op, "sizes": dict(m.sizes)},
        "options": {"timer": "time.perf_counter_ns", "min_rounds": len(seconds)},
        "stats": {**stats.as_dict(), "data": seconds,
                  "iterations": ops_per_round[len(ops_per_round) // 2]},
    }


def json_ready(value: Any) -> Any:
    """`value` with every NaN or infinity as null: JSON has neither, and a run stored with
    one (a setting an older pqbench let through) must still export, not crash for ever;
    the published site's data blocks go through it too."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: json_ready(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(inner) for inner in value]
    return value


def export(runs: Sequence[Run], fmt: str) -> str:
    """The export file's text in the chosen format."""
    if fmt == "json":
        bundle = export_bundle(runs)
        try:
            return json.dumps(bundle, indent=1, allow_nan=False) + "\n"
        except ValueError:  # NaN or infinity stored by an older pqbench (a setting)
            return json.dumps(json_ready(bundle), indent=1, allow_nan=False) + "\n"
    if fmt == "pytest-benchmark":
        return json.dumps(export_pytest_benchmark(runs), indent=1, default=str) + "\n"
    raise InputFileError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")


# --- import -----------------------------------------------------------------------------


def read_file(path: Path, max_bytes: int = MAX_BYTES) -> list[Run]:
    """The runs in one pqbench export or run document, validated; nothing is stored here."""
    return [codec.run_from_document(doc) for doc in read_documents([path], max_bytes)]


def read_documents(paths: Sequence[Path], max_bytes: int = MAX_BYTES
                   ) -> list[dict[str, Any]]:
    """Every run document of every file, validated, as the dicts the store writes its
    rows from (`Store.save_documents`); any bad file fails them all, before anything is
    written. A valid file is checked in one pass over its bytes (`record.validation`);
    one that pass does not vouch for is decoded and checked against the models, which
    name what is wrong."""
    documents: list[dict[str, Any]] = []
    for path in paths:
        raw = _read(path, max_bytes)
        vouched = _vouched(raw)
        documents += (vouched if vouched is not None
                      else _documents(parse_models(decode(raw, str(path)), str(path))))
        del raw, vouched
    return _one_per_run_id(documents)


def vouched_documents(path: Path, max_bytes: int = MAX_BYTES) -> list[dict[str, Any]] | None:
    """The run documents of one file as `read_documents` gives them, where the one-pass
    check vouches for the whole file and each of its runs is there once; None where it
    does not, or the file cannot be read: `read_documents` then says why (an import reads
    its files in other processes this way, and every problem the way it always has)."""
    try:
        documents = _vouched(_read(path, max_bytes))
    except InputFileError:
        return None
    if documents is None or len({doc["run_id"] for doc in documents}) != len(documents):
        return None
    return documents


def _vouched(raw: bytes) -> list[dict[str, Any]] | None:
    """The run documents in `raw` where `record.validation` vouches for them."""
    validated = validation.validate(raw)
    if validated is None:
        return None
    return validated["runs"] if validated["format"] == BUNDLE_FORMAT else [validated]


def _one_per_run_id(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run once: the same run twice (one file given twice, a run in two exports) is
    one run; two different runs under one id are refused, since storing one of them would
    drop the other silently."""
    seen: dict[str, dict[str, Any]] = {}
    unique = []
    for doc in documents:
        first = seen.setdefault(doc["run_id"], doc)
        if first is doc:
            unique.append(doc)
        elif first != doc:
            raise InputFileError(f"two different runs share the run id {doc['run_id']!r}; "
                                 "nothing was imported (a run id names one run)")
    return unique


def _read(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, size-limited; only a regular file is read (a FIFO with no writer
    would block the import for ever, a device never end). Opened without blocking, then
    checked, so the file checked is the file read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as handle:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                raise InputFileError(f"{path} is not a regular file; import reads export "
                                     "files only")
            if status.st_size > max_bytes:
                raise InputFileError(f"{path}: {status.st_size} bytes is over the import "
                                     f"limit of {max_bytes} bytes")
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise InputFileError(f"{path} is over the import limit of {max_bytes} bytes")
    return raw


def decode(raw: bytes, source: str) -> Any:
    """Bytes -> JSON values, refusing what would crash later: nesting deeper than Python's
    recursion limit and integers longer than its int-to-string limit (4300 digits)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputFileError(f"{source} is not a pqbench export (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{source} is not a pqbench export: invalid JSON at line "
                             f"{exc.lineno} column {exc.colno} ({exc.msg}); "
                             "is the file truncated?") from None
    except RecursionError:
        raise InputFileError(f"{source} is not a pqbench export: JSON nested too "
                             "deeply") from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string ..."
        raise InputFileError(f"{source} is not a pqbench export: {exc}") from None


def parse(data: Any, source: str) -> list[Run]:
    """Validate a decoded export (bundle or single run document) and build its Runs."""
    return [codec.run_from_document(doc) for doc in _documents(parse_models(data, source))]


def parse_models(data: Any, source: str) -> list[models.RunDocument]:
    """Validate a decoded export against the models: its run documents, or a clear error.

    The whole document is checked against one schema (`pqbench.data.record.models`), so a file
    either yields all its runs or names its first problem.
    """
    if not isinstance(data, dict):
        raise InputFileError(f"{source} is not a pqbench export (top level is not an object)")
    fmt = data.get("format")
    if fmt == BUNDLE_FORMAT:
        _check_version(data, BUNDLE_VERSION, source)
        docs = data.get("runs")
        if isinstance(docs, list):
            for index, doc in enumerate(docs):
                if isinstance(doc, dict):
                    _check_version(doc, FORMAT_VERSION, f"{source}: run {index + 1}")
        model: type[models.Bundle | models.RunDocument] = models.Bundle
    elif fmt == RUN_FORMAT:
        _check_version(data, FORMAT_VERSION, source)
        model = models.RunDocument
    elif "benchmarks" in data and "machine_info" in data:
        raise InputFileError(f"{source} is a pytest-benchmark file; pqbench imports only its "
                             "own exports (`pqbench export --format json`)")
    else:
        raise InputFileError(f"{source} is not a pqbench export (no 'format': "
                             f"'{BUNDLE_FORMAT}' or '{RUN_FORMAT}')")
    try:
        validated = models.built(model).model_validate(data)
    except ValidationError as exc:
        raise InputFileError(_describe(exc, data, source)) from None
    except RecursionError:  # nesting below json's limit but deep enough for pydantic's
        raise InputFileError(f"{source}: values nested too deeply") from None
    return validated.runs if isinstance(validated, models.Bundle) else [validated]


def _documents(validated: list[models.RunDocument]) -> list[dict[str, Any]]:
    """The validated models as the plain documents they hold (only the fields given); each
    model goes as soon as its document is made, so an import holds one copy of its runs."""
    validated.reverse()
    documents = []
    while validated:
        documents.append(validated.pop().model_dump(exclude_unset=True))
    return documents


def _check_version(doc: dict[str, Any], supported: int, where: str) -> None:
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputFileError(f"{where}: missing or invalid format_version")
    if version > supported:
        raise InputFileError(f"{where} was written by a newer pqbench (format version "
                             f"{version}; this pqbench reads up to {supported}); upgrade "
                             "pqbench to import it")


def _describe(exc: ValidationError, data: dict[str, Any], source: str) -> str:
    """The first problem as `file: run 2 (id) results[3].samples[0].elapsed_ns: message`."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    loc = tuple(first["loc"])
    where = source
    if loc[:1] == ("runs",) and len(loc) > 1 and isinstance(loc[1], int):
        run = data["runs"][loc[1]]
        run_id = run.get("run_id") if isinstance(run, dict) else None
        named = f" ({run_id[:64]})" if isinstance(run_id, str) and run_id else ""
        where, loc = f"{source}: run {loc[1] + 1}{named}", loc[2:]
    message = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"{where}: {models.field_path(loc)}: {message}{more}"


def read_files(paths: Sequence[Path], max_bytes: int = MAX_BYTES) -> list[Run]:
    """All runs of all files; any bad file fails the whole import before anything is saved."""
    return [codec.run_from_document(doc) for doc in read_documents(paths, max_bytes)]

"""Runs as JSON documents and CSV rows: the machine-readable edge of pqbench.

The document is what `--json` prints and what `pqbench export` writes; `run_from_document`
is its inverse. Field names are documented in the README ("JSON schema").
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from pqbench.record.models import RUN_FORMAT
from pqbench.record.results import Measurement, Problem, Run, Verification
from pqbench.timing.contract import LoopResult
from pqbench.untrusted import redact

FORMAT = RUN_FORMAT
FORMAT_VERSION = 1


def _number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: an undefined figure (one round's CV) is null."""
    return value if value is None or math.isfinite(value) else None


def result_row(m: Measurement) -> dict[str, Any]:
    """One measurement: summary figures, sizes, attributes and the per-round samples."""
    if not m.rounds:
        return _untimed_row(m)
    s = m.summary
    row: dict[str, Any] = {
        "algorithm": m.algorithm,
        "implementation": m.implementation,
        "operation": m.operation,
        "block_size": m.block_size,
        "ops_per_sec": _number(s.median),
        "us_per_op": _number(m.us_per_op),
        "bytes_per_sec": _number(m.bytes_per_sec),
        "ci_low": _number(s.ci_low),
        "ci_high": _number(s.ci_high),
        "ci_level": s.ci_level,
        "cv": _number(s.cv),
        "rounds": s.n,
        "total_ops": m.total_ops,
        "cycles_per_op": _number(m.cycles_per_op),
        "cycles_per_byte": (m.cycles_per_op / m.block_size
                            if m.cycles_per_op is not None and m.block_size else None),
        "cycle_counter": m.counter,
        "sizes": dict(m.sizes),
        "samples": [{"ops": r.ops, "elapsed_ns": r.elapsed_ns, "cycles": r.cycles}
                    for r in m.rounds],
    }
    row.update(dict(m.attributes))
    return row


def _untimed_row(m: Measurement) -> dict[str, Any]:
    """A row without rounds (a memory row, `pqbench memory`): its timing fields are null."""
    row: dict[str, Any] = {
        "algorithm": m.algorithm, "implementation": m.implementation,
        "operation": m.operation, "block_size": m.block_size, "ops_per_sec": None,
        "us_per_op": None, "bytes_per_sec": None, "ci_low": None, "ci_high": None,
        "ci_level": None, "cv": None, "rounds": 0, "total_ops": 0, "cycles_per_op": None,
        "cycles_per_byte": None, "cycle_counter": m.counter, "sizes": dict(m.sizes),
        "samples": [],
    }
    row.update(dict(m.attributes))
    return row


def problem_row(p: Problem) -> dict[str, Any]:
    return {"algorithm": p.algorithm, "implementation": p.implementation,
            "operation": p.operation, "kind": p.kind, "reason": p.reason}


def run_document(run: Run) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run_id": run.run_id,
        "kind": run.kind,
        "status": run.status,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "command": redact(run.command),
        "label": run.label,
        "settings": dict(run.settings),
        "environment": dict(run.environment),
        "verifications": [{"algorithm": v.algorithm, "implementation": v.implementation,
                           "checks": list(v.checks)} for v in run.verifications],
        "results": [result_row(m) for m in run.measurements],
        "problems": [problem_row(p) for p in run.problems],
    }


_ATTRIBUTE_EXCLUDE = {
    "algorithm", "implementation", "operation", "block_size", "ops_per_sec", "us_per_op",
    "bytes_per_sec", "ci_low", "ci_high", "ci_level", "cv", "rounds", "total_ops",
    "cycles_per_op", "cycles_per_byte", "cycle_counter", "sizes", "samples",
}


def run_from_document(doc: dict[str, Any]) -> Run:
    """The inverse of run_document (the caller validates the document first)."""
    measurements = tuple(
        Measurement(
            algorithm=r["algorithm"], implementation=r["implementation"],
            operation=r["operation"], block_size=r.get("block_size"),
            rounds=tuple(LoopResult(int(s["ops"]), int(s["elapsed_ns"]),
                                    None if s.get("cycles") is None else int(s["cycles"]))
                         for s in r["samples"]),
            sizes=dict(r.get("sizes") or {}),
            attributes={k: v for k, v in r.items() if k not in _ATTRIBUTE_EXCLUDE},
            counter=r.get("cycle_counter"),
        )
        for r in doc["results"])
    return Run(
        run_id=doc["run_id"], started_at=doc["started_at"], finished_at=doc["finished_at"],
        status=doc["status"], command=doc["command"], label=doc.get("label"),
        settings=dict(doc.get("settings") or {}), environment=dict(doc["environment"]),
        measurements=measurements,
        problems=tuple(Problem(p["algorithm"], p["implementation"], p["kind"], p["reason"],
                               p.get("operation")) for p in doc.get("problems", [])),
        verifications=tuple(Verification(v["algorithm"], v["implementation"],
                                         tuple(v["checks"]))
                            for v in doc.get("verifications", [])),
        kind=doc.get("kind", "speed"),
    )


CSV_COLUMNS = ("run_id", "algorithm", "implementation", "operation", "block_size",
               "ops_per_sec", "us_per_op", "bytes_per_sec", "ci_low", "ci_high", "cv",
               "rounds", "cycles_per_op", "public_key", "secret_key", "ciphertext",
               "signature", "shared_secret", "stack_bytes", "heap_bytes", "allocations",
               "memory_method")


def run_csv(run: Run) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for m in run.measurements:
        row = result_row(m)
        row.update(row.pop("sizes"))
        row["run_id"] = run.run_id
        writer.writerow(row)
    return out.getvalue()

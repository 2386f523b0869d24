"""File results as stored runs of kind "files": one Measurement per file and operation.

A file row counts bytes (`unit` "byte"): one round per timed pass (`files hash --runs`),
the file's bytes over the pass's time, so its rate is bytes per second. Per file, a read row
and one row per hash; round i of each was taken in cycle i, so the rows of one file pair
(`analysis.ratios.file_ratios`). Per-file facts
(path, size, digest, cached, flags) go in the attributes; the file system and device the
files lived on go in the environment, under "storage".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pqbench.data.record.results import Measurement, Problem, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import new_run
from pqbench.measure.files.corpus import CorpusResult
from pqbench.measure.files.hashing import FileFailure, FileHash, FileOutcome
from pqbench.measure.files.stream import Pass


def _bytes_row(algorithm: str, implementation: str, operation: str, nbytes: int,
               elapsed_ns: int, attributes: dict[str, Any]) -> Measurement:
    return Measurement(algorithm=algorithm, implementation=implementation, operation=operation,
                       rounds=(LoopResult(nbytes, max(elapsed_ns, 1)),), unit="byte",
                       attributes=attributes)


def _passes_row(algorithm: str, implementation: str, operation: str,
                passes: Sequence[Pass], attributes: dict[str, Any]) -> Measurement:
    """A row with one round per timed pass over the file (bytes, nanoseconds)."""
    return Measurement(algorithm=algorithm, implementation=implementation, operation=operation,
                       rounds=tuple(LoopResult(p.nbytes, max(p.elapsed_ns, 1)) for p in passes),
                       unit="byte", attributes=attributes)


def stored_path(path: str) -> str:
    """A path as text both stores hold: bytes that are not UTF-8 (lone surrogates from
    os.fsdecode) become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def hash_measurements(outcomes: Sequence[FileOutcome]) -> tuple[list[Measurement],
                                                                  list[Problem]]:
    """Rows for the files measured; a problem for each file that could not be, and for
    each empty file (its digest is known, but bytes per second over zero bytes is not)."""
    measurements: list[Measurement] = []
    problems: list[Problem] = []
    for o in outcomes:
        if isinstance(o, FileFailure):
            problems.append(Problem(o.algorithm, "files", "error", stored_path(o.error),
                                    "hash"))
            continue
        assert isinstance(o, FileHash)
        if o.size == 0 or o.read.nbytes == 0:
            for one in o.digests:
                problems.append(Problem(one.algorithm, one.library, "no rate", stored_path(
                    f"{o.path}: empty file, digest {one.digest}; a rate over 0 bytes is not "
                    "defined"), "hash"))
            continue
        common = {"path": stored_path(o.path), "size": o.size, "cache_mode": o.cache_mode,
                  "flags": list(o.flags)}
        measurements.append(_passes_row("read", "os", "read", o.reads,
                                        {**common, "resident": o.read_resident}))
        for one in o.digests:
            measurements.append(_passes_row(one.algorithm, one.library, "hash", one.passes,
                                            {**common, "resident": one.resident,
                                             "digest": one.digest, "cached": one.cached}))
    return measurements, problems


def corpus_measurements(result: CorpusResult) -> list[Measurement]:
    return [_bytes_row(s.algorithm, "os" if s.algorithm == "plain" else "cryptography"
                       if s.algorithm.startswith("AES") else "hashlib", s.operation, s.nbytes,
                       s.elapsed_ns, {"path": s.path, "size": s.size, "resident": s.resident,
                                      "digest": s.digest})
            for s in result.steps if s.nbytes > 0]


def files_run(started: datetime, settings: dict[str, Any], environment: dict[str, Any],
              measurements: Sequence[Measurement], problems: Sequence[Problem] = (),
              status: str = "complete") -> Run:
    return new_run("files", started, settings=settings, environment=environment,
                   measurements=measurements, problems=problems, status=status,
                   label=settings.get("label"))

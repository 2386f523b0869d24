"""`pqbench files hash` and `pqbench files corpus`: the hashes asked for, the run each
makes, and how each command ends.

The passes are timed by `measure.files` (stream hashing with the page cache controlled,
the corpus with its XTS extension); what is decided here is checked without a process:
which hashes, the storage a run records, the run's settings, its document and its ending.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pqbench.app.ending import Ending, nothing_measured
from pqbench.catalog import algorithms
from pqbench.data.record import codec
from pqbench.measure import environment
from pqbench.measure.files import storage
from pqbench.platform import interrupts
from pqbench.platform.errors import UsageError

if TYPE_CHECKING:
    from pqbench.analysis.ratios import Ratio
    from pqbench.data.record.results import Run
    from pqbench.measure.files.corpus import CorpusResult
    from pqbench.measure.files.hashing import CacheMode, FileOutcome


def hash_names(names: Sequence[str] | None) -> list[str]:
    """The hashes -a names, as the catalog spells them (SHA-256 when none is named); a
    name that is no hash is refused, naming some that are."""
    found = []
    for name in names or ["sha256"]:
        (alg,) = algorithms.resolve([name], kind="hash")
        if alg.kind != "hash":
            raise UsageError(f"{alg.name} is not a hash; choose e.g. sha256, sha512, blake3")
        found.append(alg.name)
    return found


def storage_of(paths: Sequence[str]) -> list[dict[str, object]]:
    """The devices the paths are on, each once (a path that cannot be read is left out)."""
    seen: dict[str, dict[str, object]] = {}
    for path in paths:
        try:
            found = storage.fingerprint(path)
        except OSError:
            continue
        seen.setdefault(str(found["st_dev"]), found)
    return list(seen.values())


def hash_steps(paths: Sequence[str], names: Sequence[str], runs: int | None) -> int:
    """The timed passes foreseen (more may follow while an answer is undecided)."""
    from pqbench.measure.files import hashing

    return len(paths) * hashing.passes_per_file(names, runs)


@dataclass(frozen=True)
class Hashed:
    """A `files hash` run, the outcome of each file measured, its paired answers, and the
    Ctrl-C or SIGTERM that cut it short, if any."""

    run: Run
    outcomes: list[FileOutcome]
    ratios: list[Ratio]
    interrupted: KeyboardInterrupt | None = field(default=None, compare=False)

    def document(self) -> dict[str, Any]:
        """The run as --json prints it: with each file's rows and every ratio."""
        return {**codec.run_document(self.run),
                "files": [row for o in self.outcomes for row in o.as_rows()],
                "ratios": [r.as_dict() for r in self.ratios]}


def hash_files(paths: Sequence[str], names: Sequence[str], cache_mode: str, jobs: int,
               runs: int | None, warmup: int, label: str | None,
               advance: Callable[[str], None]) -> Hashed:
    """Read, then hash, each file in cycles; Ctrl-C or SIGTERM keeps the files measured so
    far, in a run marked interrupted."""
    from pqbench.analysis import ratios
    from pqbench.measure.files import hashing
    from pqbench.measure.files import runs as file_runs

    started = datetime.now(UTC)
    watch = environment.Watch()
    outcomes: list[FileOutcome] = []
    interrupted: KeyboardInterrupt | None = None
    mode: CacheMode = cache_mode  # type: ignore[assignment]  # iter_hashes refuses others
    try:
        for outcome in hashing.iter_hashes(paths, names, mode, jobs, runs, warmup, advance):
            outcomes.append(outcome)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: store the files measured so far
        interrupted = exc
    measurements, problems = file_runs.hash_measurements(outcomes)
    env = environment.collect(extra={"storage": storage_of(paths), "run": watch.state()})
    settings = {"algorithm": names[0], "algorithms": list(names), "jobs": jobs,
                "cache": cache_mode, "label": label, "runs": runs, "warmup": warmup,
                "aggregate_hash_bytes_per_sec": hashing.aggregate_hash_rate(outcomes)}
    run = file_runs.files_run(started, settings, env, measurements, problems,
                              status="interrupted" if interrupted else "complete")
    return Hashed(run, outcomes, ratios.file_ratios(run), interrupted)


def hash_ending(hashed: Hashed) -> Ending | None:
    """Interrupted: 130 or 143, saying how many files were kept; a file that could not be
    measured or changed while measured: 1; nothing measured: 1, and why; else none."""
    from pqbench.measure.files import hashing

    if hashed.interrupted is not None:
        return Ending(f"interrupted; the {len(hashed.outcomes)} file(s) measured were stored "
                      f"as run {hashed.run.run_id}", interrupts.exit_code(hashed.interrupted))
    failures = [o for o in hashed.outcomes if isinstance(o, hashing.FileFailure)]
    changed = [o for o in hashed.outcomes if isinstance(o, hashing.FileHash) and o.flags]
    if failures or changed:
        return Ending(f"{len(failures)} file(s) could not be measured, {len(changed)} changed "
                      "while measured", 1)
    return nothing_measured(hashed.run)


@dataclass(frozen=True)
class Corpus:
    """A `files corpus` run and what the corpus did: its files, steps and removal."""

    run: Run
    result: CorpusResult

    def document(self) -> dict[str, Any]:
        """The run as --json prints it, with each step's aggregate throughput."""
        return {**codec.run_document(self.run), "summary": [
            {"operation": op, "algorithm": alg, "bytes": n, "bytes_per_sec": rate}
            for op, alg, n, rate in self.result.summary()]}


def corpus(size: int, directory: str | None, seed: int | None, label: str | None) -> Corpus:
    """Write random files adding up to `size` bytes, read, encrypt and hash them, remove
    them; the first Ctrl-C or SIGTERM stops the corpus and keeps the steps completed."""
    from pqbench.measure.files import corpus as corpora
    from pqbench.measure.files import runs as file_runs

    started = datetime.now(UTC)
    watch = environment.Watch()
    where = directory or os.environ.get("TMPDIR") or "/tmp"
    result = corpora.run_corpus(size, directory, seed)
    env = environment.collect(extra={"storage": storage_of([where]), "run": watch.state()})
    settings = {"total": sum(result.sizes), "files": len(result.sizes), "seed": seed,
                "label": label, "removed": result.removed,
                "xts": corpora.xts_implementation()}
    return Corpus(file_runs.files_run(started, settings, env,
                                      file_runs.corpus_measurements(result),
                                      status="interrupted" if result.interrupted
                                      else "complete"), result)


def corpus_ending(made: Corpus) -> Ending | None:
    """Interrupted: 130 or 143, saying how many steps were kept; nothing measured: 1, and
    why (`nothing_measured`); else none."""
    if made.result.interrupted:
        return Ending(f"interrupted; the {len(made.run.measurements)} steps completed were "
                      f"stored as run {made.run.run_id}", interrupts.exit_code())
    return nothing_measured(made.run)

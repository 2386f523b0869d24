"""`pqbench files`' decisions, called directly: which hashes, the storage a run records,
the passes foreseen, the run's document, and how each command ends."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pqbench.analysis.ratios import file_ratios
from pqbench.app import files
from pqbench.measure.files.corpus import CorpusResult
from pqbench.measure.files.hashing import MIN_CYCLES, Digest, FileFailure, FileHash
from pqbench.measure.files.runs import files_run, hash_measurements
from pqbench.measure.files.stream import Pass
from pqbench.platform.errors import UsageError
from pqbench.platform.interrupts import Terminated


def _hashed(path: str, passes: int = 2, **changes: object) -> FileHash:
    """A 1 MB file read and hashed with SHA-256 in `passes` cycles, each pass 1 ms."""
    timed = tuple(Pass(1_000_000, 1_000_000, i * 3_000_000) for i in range(passes))
    found = FileHash(path, 1_000_000, timed, (Digest("SHA-256", "hashlib", "ab" * 32, timed,
                                                     None),), "as-is", None, None)
    return replace(found, **changes)  # type: ignore[arg-type]


def _outcome(*outcomes: FileHash | FileFailure,
             interrupted: KeyboardInterrupt | None = None) -> files.Hashed:
    measurements, problems = hash_measurements(outcomes)
    run = files_run(datetime.now(UTC), {"algorithms": ["SHA-256"]}, {}, measurements, problems,
                    status="interrupted" if interrupted else "complete")
    return files.Hashed(run, list(outcomes), file_ratios(run), interrupted)


def test_the_hashes_named_are_spelled_as_the_catalog_spells_them() -> None:
    assert files.hash_names(None) == ["SHA-256"]
    assert files.hash_names(["sha512", "blake3"]) == ["SHA-512", "BLAKE3"]
    with pytest.raises(UsageError, match=r"X25519 is not a hash; choose e\.g\. sha256"):
        files.hash_names(["sha256", "x25519"])


def test_the_passes_foreseen_are_a_read_and_each_hash_per_cycle() -> None:
    assert files.hash_steps(["a", "b"], ["SHA-256", "SHA-512"], 5) == 2 * 5 * 3
    assert files.hash_steps(["a"], ["SHA-256"], None) == MIN_CYCLES * 2


def test_each_device_is_recorded_once_and_a_missing_path_not_at_all(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_bytes(b"1")
    two.write_bytes(b"2")
    found = files.storage_of([str(one), str(two), str(tmp_path / "missing")])
    assert len(found) == 1
    dev = os.stat(one).st_dev
    assert found[0]["st_dev"] == f"{os.major(dev)}:{os.minor(dev)}"
    assert files.storage_of([str(tmp_path / "missing")]) == []


def test_a_run_that_measured_every_file_ends_well() -> None:
    hashed = _outcome(_hashed("/data/f.bin"))
    assert files.hash_ending(hashed) is None
    (ratio,) = hashed.ratios
    document = hashed.document()
    assert document["run_id"] == hashed.run.run_id
    assert [row["path"] for row in document["files"]] == ["/data/f.bin"]
    assert document["ratios"] == [ratio.as_dict()]


def test_a_file_not_measured_or_changed_while_measured_fails() -> None:
    failed = _outcome(_hashed("/data/f.bin"), FileFailure("/data/g.bin", "SHA-256", "gone"))
    ending = files.hash_ending(failed)
    assert ending is not None and ending.status == 1
    assert ending.message == "1 file(s) could not be measured, 0 changed while measured"
    changed = files.hash_ending(_outcome(_hashed("/data/f.bin", flags=("size changed",))))
    assert changed is not None and changed.status == 1
    assert changed.message == "0 file(s) could not be measured, 1 changed while measured"


@pytest.mark.parametrize(("signal", "status"), [(KeyboardInterrupt(), 130), (Terminated(), 143)])
def test_an_interrupted_hash_says_what_was_kept(signal: KeyboardInterrupt, status: int) -> None:
    hashed = _outcome(_hashed("/data/f.bin"), FileFailure("/data/g.bin", "SHA-256", "gone"),
                      interrupted=signal)
    ending = files.hash_ending(hashed)
    assert ending is not None and ending.status == status
    assert ending.message == (f"interrupted; the 2 file(s) measured were stored as run "
                              f"{hashed.run.run_id}")


def test_a_corpus_interrupted_says_how_many_steps_were_kept() -> None:
    result = CorpusResult("/tmp/c", [2_000_000], removed=True)
    run = files_run(datetime.now(UTC), {}, {}, [], status="complete")
    # A corpus that timed no step measured nothing: stored as failed, and the command ends 1.
    assert run.status == "failed"
    assert files.corpus_ending(files.Corpus(run, result)) == files.Ending(
        f"nothing was measured (no row was timed); stored as failed run {run.run_id}", 1)
    cut = files.corpus_ending(files.Corpus(run, replace(result, interrupted=True)))
    assert cut is not None and cut.status in (130, 143)
    assert cut.message == f"interrupted; the 0 steps completed were stored as run {run.run_id}"
    assert files.Corpus(run, result).document()["summary"] == []

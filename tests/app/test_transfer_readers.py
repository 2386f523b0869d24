"""An import whose files are validated, and their rows made, in other processes
(`app.transfer.readers`) stores, skips and refuses exactly what one reading them itself
does: the same rows, the same runs already stored, the same messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from pqbench.app import transfer
from pqbench.data.record import transfer as record_transfer
from pqbench.data.store import Store, schema
from pqbench.platform.errors import InputFileError, StoreError
from tests.helpers.runs import make_run

pytestmark = pytest.mark.process  # the readers are forked processes


def _files(tmp_path: Path) -> list[Path]:
    """Three exports, one holding a row with free JSON, a float and a round without
    operations, so what the other processes make is not only the usual."""
    files = []
    for index, name in enumerate("abc"):
        doc = json.loads(record_transfer.export(
            [make_run(f"2026010{index + 1}-{name}{n}", seed=3 * index + n) for n in range(3)],
            "json"))
        row = doc["runs"][0]["results"][0]
        row["vendor_note"] = {"flag": True, "zero": -0.0, "list": [1, "x"]}
        row["samples"] = [{"ops": 0, "elapsed_ns": 5}, *row["samples"]]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        files.append(path)
    return files


def _tables(location: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the run tables, without the ids the database gives."""
    store = Store.open(location, create=False)
    with store.engine.connect() as conn:
        return {table.name: sorted((tuple(r) for r in conn.execute(
            select(*(c for c in table.c if c.name != "id")))), key=repr)
            for table in (schema.runs, schema.measurements, schema.estimates)}


def _every_cpu_idle(cpus: int, meanwhile: Any) -> float:
    meanwhile()
    return 0.0


@pytest.fixture
def in_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files read in other processes, however small and however busy the machine."""
    monkeypatch.setattr(transfer, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(transfer, "_busy_now", _every_cpu_idle)


def test_the_rows_made_elsewhere_are_the_rows_made_here(
        location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On SQLite and PostgreSQL (whose round arrays come from the JSON text made
    elsewhere)."""
    files = _files(tmp_path)
    if "://" in location:
        from tests.helpers.postgres import fresh_database

        here = fresh_database(location.rsplit("/", 1)[0])
    else:
        here = str(tmp_path / "here.db")
    monkeypatch.setattr(transfer, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(transfer, "_busy_now", _every_cpu_idle)
    assert transfer._made_elsewhere(files) is not None  # the other processes did read them
    first = transfer.import_files(files, location)
    monkeypatch.setattr(transfer, "PARALLEL_BYTES", 2**62)
    assert transfer._made_elsewhere(files) is None
    second = transfer.import_files(files, here)
    assert first.stored == second.stored and len(first.stored) == 9
    assert _tables(location) == _tables(here)


def test_runs_stored_already_are_skipped_or_named_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_processes: None) -> None:
    files = _files(tmp_path)
    db = str(tmp_path / "runs.db")
    transfer.import_files(files[:1], db)
    doc = json.loads(files[1].read_text())
    doc["runs"][0]["label"] = "another label"  # stored below with other contents
    changed = copy.deepcopy(doc)
    files[1].write_text(json.dumps(changed))
    doc["runs"][0]["label"] = "the label stored"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**doc, "runs": doc["runs"][:1]}))
    transfer.import_files([other], db)
    found = transfer.import_files(files, db)
    a_ids = [run["run_id"] for run in json.loads(files[0].read_text())["runs"]]
    assert found.skipped == [*a_ids, changed["runs"][0]["run_id"]]
    assert found.differing == [changed["runs"][0]["run_id"]]
    assert len(found.stored) == 5


@pytest.mark.parametrize("change, message", [
    (lambda d: d["runs"][1]["results"][0]["samples"][0].update(elapsed_ns=0),
     r"b\.json: run 2 \(20260102-b1\): results\[0\]\.samples\[0\]\.elapsed_ns"),
    (lambda d: d["runs"][1].update(run_id="20260101-a0"),
     "two different runs share the run id '20260101-a0'"),
], ids=["a bad sample", "a run id of another file"])
def test_a_file_refused_is_named_as_before_and_nothing_is_stored(
        tmp_path: Path, in_processes: None, change: Any, message: str) -> None:
    files = _files(tmp_path)
    doc = json.loads(files[1].read_text())
    change(doc)
    files[1].write_text(json.dumps(doc))
    db = tmp_path / "runs.db"
    with pytest.raises(InputFileError, match=message):
        transfer.import_files(files, str(db))
    assert not db.exists()


def test_a_file_refused_after_others_were_written_leaves_the_store_as_it_was(
        tmp_path: Path, in_processes: None) -> None:
    """The files before the bad one were written as they came, in the import's one
    transaction: it is taken back, and the store (made by an earlier import) keeps its
    runs, no more and no fewer."""
    files = _files(tmp_path)
    db = str(tmp_path / "runs.db")
    first = transfer.import_files(files[:1], db)
    doc = json.loads(files[2].read_text())
    doc["runs"][0]["results"][0]["samples"][0]["elapsed_ns"] = 0
    files[2].write_text(json.dumps(doc))
    before = _tables(db)
    with pytest.raises(InputFileError, match=r"c\.json: run 1"):
        transfer.import_files(files[1:], db)
    assert _tables(db) == before and len(first.stored) == 3


def test_a_store_that_cannot_be_opened_stops_the_readers(tmp_path: Path,
                                                        in_processes: None) -> None:
    """The readers start before the store is opened (so none holds a copy of its
    connection); a store that cannot be opened then ends them too (each finishes the file
    it has begun; none is left behind)."""
    import multiprocessing

    files = _files(tmp_path)
    made = transfer._made_elsewhere(files)
    assert made is not None and len(multiprocessing.active_children()) == 3  # forked now
    made.close()
    assert multiprocessing.active_children() == []
    (tmp_path / "folder.db").mkdir()
    with pytest.raises(StoreError):
        transfer.import_files(files, str(tmp_path / "folder.db"))
    assert multiprocessing.active_children() == []


def test_a_file_given_twice_is_imported_once(tmp_path: Path, in_processes: None) -> None:
    files = _files(tmp_path)
    found = transfer.import_files([*files, files[0]], str(tmp_path / "runs.db"))
    assert len(found.stored) == 9 and not found.skipped

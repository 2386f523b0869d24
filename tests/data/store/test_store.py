"""The SQLite store: round trips, idempotence, and never damaging a file it does not own."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import Store, schema
from pqbench.data.store.location import sqlite_path
from pqbench.platform.errors import StoreError, UsageError


def make_run(run_id: str = "20261122T000000Z-abcdef", label: str | None = "test",
             os_build: str = "debian-12/6.1") -> Run:
    rounds = (LoopResult(100, 10_000_000, 30_000_000), LoopResult(110, 10_000_000, None))
    return Run(
        run_id=run_id, started_at="2026-11-22T00:00:00+00:00",
        finished_at="2026-11-22T00:00:01+00:00", status="complete",
        command="pqbench speed x25519", label=label, settings={"seconds": 0.1},
        environment={"os_build": os_build, "hostname": "h", "testbed": "t",
                     "cpu_flags": ["aes"], "libraries": {"cryptography": "50.0.2"}},
        measurements=(Measurement("X25519", "cryptography", "derive", rounds,
                                  sizes={"public_key": 32}, attributes={"note": "x"},
                                  counter="rdtsc"),
                      Measurement("AES-256-GCM", "cryptography", "encrypt", rounds,
                                  block_size=16384)),
        problems=(Problem("X25519", "liboqs-python", "not offered", "no X25519"),),
        verifications=(Verification("X25519", "cryptography", ("both sides agree",)),),
    )


def test_a_run_round_trips_with_every_sample(db_path: Path) -> None:
    store = Store.open(str(db_path))
    run = make_run()
    assert store.save_run(run) is True
    loaded = store.load_run(run.run_id)
    assert loaded == run
    assert loaded.measurements[0].rounds[0].cycles == 30_000_000
    assert loaded.measurements[1].block_size == 16384


def test_saving_the_same_run_twice_stores_it_once(db_path: Path) -> None:
    store = Store.open(str(db_path))
    assert store.save_run(make_run()) is True
    assert store.save_run(make_run()) is False
    assert [r.run_id for r in store.list_runs()] == [make_run().run_id]
    assert store.list_runs()[0].measurements == 2


def test_run_ids_resolve_from_a_unique_prefix(db_path: Path) -> None:
    store = Store.open(str(db_path))
    store.save_run(make_run("20261122T000000Z-aaaaaa"))
    store.save_run(make_run("20261122T000000Z-bbbbbb"))
    assert store.resolve_run_id("20261122T000000Z-b") == "20261122T000000Z-bbbbbb"
    with pytest.raises(StoreError, match="ambiguous"):
        store.resolve_run_id("20261122")
    with pytest.raises(StoreError, match="no run"):
        store.resolve_run_id("nope")
    for empty in ("", "  "):  # every id starts with it: no run is named, none is ambiguous
        with pytest.raises(UsageError, match="a run id is empty"):
            store.resolve_run_id(empty)


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"my thesis, do not lose\n" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a pqbench database"):
        Store.open(str(path))
    assert path.read_bytes() == before


def test_an_sqlite_database_of_another_application_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE contacts (name TEXT)")
        conn.execute("INSERT INTO contacts VALUES ('Ada')")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a pqbench one"):
        Store.open(str(path))
    assert path.read_bytes() == before


def test_a_database_from_a_newer_schema_is_refused(db_path: Path) -> None:
    Store.open(str(db_path)).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE pqbench_meta SET value = ? WHERE key = 'schema_version'",
                     (str(schema.SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer pqbench"):
        Store.open(str(db_path))


@pytest.mark.process
def test_an_unwritable_directory_is_a_clear_error() -> None:
    # Outside pytest's tmp_path, whose parents are private to the user running the tests.
    locked = Path(tempfile.mkdtemp(prefix="pqbench-ro-"))
    locked.chmod(0o555)
    # Root ignores permissions, so the check runs in a child that drops to `nobody` after
    # importing pqbench (the interpreter itself may live where nobody cannot read).
    code = (
        "import os, sys\n"
        "from pqbench.data.store import Store\n"
        "from pqbench.platform.errors import StoreError\n"
        "if os.geteuid() == 0:\n"
        "    os.setgid(65534); os.setuid(65534)\n"
        "try:\n"
        f"    Store.open({str(locked / 'x.db')!r})\n"
        "except StoreError as exc:\n"
        "    print(exc); sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 3, done.stderr
    assert "not writable" in done.stdout
    assert list(locked.iterdir()) == []
    locked.rmdir()


def test_an_unusable_location_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the database directory"):
        Store.open(str(blocker / "sub" / "x.db"))
    with pytest.raises(StoreError, match="not a regular file"):
        Store.open(str(tmp_path))


def test_a_locked_database_is_a_clear_error(db_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    Store.open(str(db_path)).close()
    monkeypatch.setenv("PQBENCH_DB_TIMEOUT", "0.2")
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        store = Store.open(str(db_path))
        with pytest.raises(StoreError, match="locked"):
            store.save_run(make_run())
        holder.execute("ROLLBACK")
        holder.execute("BEGIN EXCLUSIVE")  # ... or keeps even readers out
        with pytest.raises(StoreError, match="locked"):
            Store.open(str(db_path))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert Store.open(str(db_path)).list_runs() == []


def test_reading_a_missing_database_does_not_create_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    with pytest.raises(StoreError, match="no pqbench database"):
        Store.open(str(path), create=False)
    assert not path.exists()


def test_concurrent_writers_in_threads_lose_nothing(db_path: Path) -> None:
    Store.open(str(db_path)).close()

    def write(i: int) -> None:
        Store.open(str(db_path)).save_run(make_run(f"20261122T000000Z-{i:06d}"))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runs = Store.open(str(db_path)).list_runs()
    assert len(runs) == 8
    assert all(r.measurements == 2 for r in runs)


def test_annotations_are_stored_once(db_path: Path) -> None:
    store = Store.open(str(db_path))
    store.annotate("18F132", "AES-NI enabled in LibreSSL")
    store.annotate("18F132", "AES-NI enabled in LibreSSL")
    assert [(b, t) for b, t, _ in store.annotations()] == [
        ("18F132", "AES-NI enabled in LibreSSL")]


@pytest.mark.parametrize("location", ["sqlite:///somewhere/", "somewhere/", "file:somewhere/",
                                      "sqlite:////"])
def test_a_location_that_ends_with_a_slash_names_a_folder_not_a_file(location: str) -> None:
    with pytest.raises(StoreError, match=r"names a folder .* e\.g\. .*/pqbench\.db"):
        sqlite_path(location)
    assert sqlite_path(location + "x.db").name == "x.db"


def test_a_file_whose_reads_fail_is_a_clear_error(tmp_path: Path) -> None:
    """/proc/self/mem is a regular file whose first bytes cannot be read (EIO)."""
    for create in (True, False):
        with pytest.raises(StoreError, match="cannot read /proc/self/mem: Input/output error"):
            Store.open("/proc/self/mem", create=create)


@pytest.mark.parametrize("column, damage, said", [
    ("settings", "{not json", "the settings of run 20261122T000000Z-bbbbbb cannot be read "
                              "(Expecting property name"),
    ("environment", "[1]", "the environment of run 20261122T000000Z-bbbbbb cannot be read "
                           "(not a JSON object)"),
    ("environment", "{not json", "the environment of run 20261122T000000Z-bbbbbb cannot be "
                                 "read (Expecting property name"),
    ("problems", "{", "the problems of run 20261122T000000Z-bbbbbb cannot be read (Expecting"),
])
def test_a_stored_value_that_does_not_decode_is_named_by_its_run_and_column(
        db_path: Path, column: str, damage: str, said: str) -> None:
    store = Store.open(str(db_path))
    # Two fingerprints: a run's is read once per distinct one, from the first run that
    # has it (`store.queries`), so each run here is read for its own.
    store.save_runs([make_run("20261122T000000Z-aaaaaa"),
                     make_run("20261122T000000Z-bbbbbb", os_build="debian-12/6.2")])
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"UPDATE pqbench_runs SET {column} = ? "  # a column named here
                     "WHERE run_id = '20261122T000000Z-bbbbbb'", (damage,))
    for read in (lambda: store.load_runs(), lambda: store.load_run("20261122T000000Z-bbbbbb")):
        with pytest.raises(StoreError) as refused:
            read()
        assert str(refused.value).startswith(said), refused.value
        assert str(refused.value).endswith("the database may be damaged: restore it from a "
                                           "backup or an export")
    assert store.load_run("20261122T000000Z-aaaaaa").run_id == "20261122T000000Z-aaaaaa"


def _documents(tmp_path: Path, *run_ids: str) -> list[dict[str, Any]]:
    """Run documents as an import reads them from an export file."""
    from pqbench.data.record import transfer

    path = tmp_path / f"{run_ids[0]}.json"
    path.write_text(transfer.export([make_run(run_id) for run_id in run_ids], "json"))
    return transfer.read_documents([path])


def _two_batches(tmp_path: Path, events: list[str]) -> Iterator[list[dict[str, Any]]]:
    """Two batches as an import's readers hand them over (two runs, then one), each
    noted in `events` as it is made."""
    for run_ids in (("20261122T000000Z-a1", "20261122T000000Z-a2"), ("20261122T000000Z-b1",)):
        events.append(f"made {run_ids[0]}")
        yield _documents(tmp_path, *run_ids)


def test_each_batch_is_written_before_the_next_is_asked_for(
        db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An import writes one file's runs while the next file is made: `save_batches` takes
    a batch only when the one before is written, and commits them all at once."""
    from pqbench.data.store import bulk

    events: list[str] = []
    insert = bulk.insert_documents

    def logged(conn: Any, documents: Any) -> list[str]:
        events.append(f"write {documents[0]['run_id']}")
        return insert(conn, documents)

    monkeypatch.setattr(bulk, "insert_documents", logged)

    store = Store.open(str(db_path))
    assert store.save_batches(_two_batches(tmp_path, events)) == [
        "20261122T000000Z-a1", "20261122T000000Z-a2", "20261122T000000Z-b1"]
    assert events == ["made 20261122T000000Z-a1", "write 20261122T000000Z-a1",
                      "made 20261122T000000Z-b1", "write 20261122T000000Z-b1"]
    assert [r.run_id for r in store.list_runs()] == [
        "20261122T000000Z-a1", "20261122T000000Z-a2", "20261122T000000Z-b1"]


class _Refused(Exception):
    pass


def test_a_batch_refused_after_one_was_written_takes_it_back(db_path: Path,
                                                            tmp_path: Path) -> None:
    """The batches are one transaction: an error from them after the first was written
    leaves the store as it was, and the error goes on up."""
    store = Store.open(str(db_path))
    store.save_run(make_run("20261122T000000Z-kept"))

    def batches() -> Iterator[list[dict[str, Any]]]:
        yield _documents(tmp_path, "20261122T000000Z-a1")
        raise _Refused

    with pytest.raises(_Refused):
        store.save_batches(batches())
    assert [r.run_id for r in store.list_runs()] == ["20261122T000000Z-kept"]


def test_only_a_new_file_without_runs_is_discarded(tmp_path: Path) -> None:
    """What an import opened before its files were refused: the SQLite file it made is
    removed where it holds no run, and nothing else ever is."""
    unused = tmp_path / "new.db"
    store = Store.open(str(unused))
    assert unused.exists()
    store.discard_if_unused()
    assert not unused.exists()
    used = tmp_path / "used.db"
    store = Store.open(str(used))
    store.save_run(make_run())
    store.discard_if_unused()
    assert [r.run_id for r in Store.open(str(used)).list_runs()] == [make_run().run_id]
    earlier = tmp_path / "earlier.db"
    Store.open(str(earlier)).close()  # made by an earlier command: not this store's to drop
    Store.open(str(earlier)).discard_if_unused()
    assert earlier.exists()


def test_batches_written_again_after_another_writer_stored_one_of_their_runs(
        db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer stored a run of the first batch while this transaction was writing
    it (a unique key refused): the transaction is tried again with the batches had so far,
    that run skipped, and the batches not yet had taken as before."""
    from sqlalchemy.exc import IntegrityError

    from pqbench.data.store import bulk

    Store.open(str(db_path)).close()
    insert = bulk.insert_documents
    raced: list[str] = []

    def racing(conn: Any, documents: Any) -> list[str]:
        if not raced:  # the other writer commits first; this INSERT then hits its key
            raced.append(documents[0]["run_id"])
            Store.open(str(db_path)).save_run(make_run(documents[0]["run_id"]))
            raise IntegrityError("INSERT INTO pqbench_runs", {}, Exception("UNIQUE"))
        return insert(conn, documents)

    monkeypatch.setattr(bulk, "insert_documents", racing)
    made: list[str] = []
    store = Store.open(str(db_path))
    assert store.save_batches(_two_batches(tmp_path, made)) == ["20261122T000000Z-a2",
                                                                 "20261122T000000Z-b1"]
    assert raced == ["20261122T000000Z-a1"]
    assert made == ["made 20261122T000000Z-a1", "made 20261122T000000Z-b1"]  # each once
    assert [r.run_id for r in store.list_runs()] == [
        "20261122T000000Z-a1", "20261122T000000Z-a2", "20261122T000000Z-b1"]

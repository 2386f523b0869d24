"""The record: one codec for documents, CSV and the store; format 1's older spellings read
back; the one run constructor; Store.load_runs with its filter."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from pqbench.analysis import pairing
from pqbench.data.record import codec, transfer
from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import ab_side, new_run
from pqbench.data.store import RunFilter, Store, schema
from tests.helpers import old_schemas
from tests.helpers.runs import environment, make_run

#: A file row as pqbench wrote it before rows had a unit: 2,000,000 bytes in 0.5 s.
FILE_BYTES, FILE_NS = 2_000_000, 500_000_000


def _v1_document() -> dict[str, object]:
    """A format-1 run document as an older pqbench exported it: the label only in the
    fingerprint, and a file row counting bytes as operations of a 1-byte block."""
    return {
        "format": "pqbench-run", "format_version": 1, "run_id": "20250101T000000Z-old001",
        "kind": "files", "status": "complete", "started_at": "2025-01-01T00:00:00+00:00",
        "finished_at": "2025-01-01T00:00:09+00:00", "command": "pqbench files hash f",
        "settings": {"algorithm": "SHA-256"},
        "environment": {"os_build": "debian-12/6.1", "label": "before the update"},
        "results": [{"algorithm": "SHA-256", "implementation": "hashlib", "operation": "hash",
                     "block_size": 1, "ops_per_sec": 4e6, "unit": "byte",
                     "path": "/data/f", "size": FILE_BYTES,
                     "samples": [{"ops": FILE_BYTES, "elapsed_ns": FILE_NS, "cycles": None}]}],
    }


def test_a_format_1_document_reads_with_its_label_and_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_v1_document()))
    (run,) = transfer.read_file(path)
    assert run.label == "before the update"
    (row,) = run.measurements
    assert (row.unit, row.block_size) == ("byte", None)
    assert row.bytes_per_sec == pytest.approx(FILE_BYTES / (FILE_NS / 1e9))
    assert "unit" not in row.attributes and row.attributes["path"] == "/data/f"


def test_a_byte_row_is_written_as_bytes_not_operations() -> None:
    row = Measurement("SHA-256", "hashlib", "hash", (LoopResult(FILE_BYTES, FILE_NS),),
                      unit="byte", attributes={"path": "/data/f"})
    written = codec.result_row(row)
    assert written["unit"] == "byte" and written["block_size"] is None
    assert written["ops_per_sec"] is None and written["us_per_op"] is None
    assert written["bytes_per_sec"] == pytest.approx(4e6)
    assert written["samples"] == [{"ops": FILE_BYTES, "elapsed_ns": FILE_NS, "cycles": None}]


def test_an_old_database_opens_and_reads_the_older_spellings(tmp_path: Path) -> None:
    """Rows written by the schema-1 writer before rows had a unit read as today's."""
    db = tmp_path / "old.db"
    Store.open(str(db)).close()
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(schema.runs.insert(), [{
            "run_id": "old-1", "kind": "files", "started_at": "2025-01-01T00:00:00+00:00",
            "finished_at": "2025-01-01T00:00:09+00:00", "status": "complete",
            "label": None, "command": "pqbench files hash f", "os_build": "debian-12/6.1",
            "hostname": "h", "testbed": "t", "settings": {},
            "environment": {"os_build": "debian-12/6.1", "label": "kept in the fingerprint"}}])
        conn.execute(schema.measurements.insert(), [{
            "id": 7, "run_id": "old-1", "algorithm": "SHA-256", "implementation": "hashlib",
            "operation": "hash", "block_size": 1, "ops_per_sec": 4e6, "us_per_op": 0.25,
            "cycles_per_op": None, "counter": None, "sizes": {},
            "attributes": {"unit": "byte", "path": "/data/f"}, "round_ops": [FILE_BYTES],
            "round_elapsed_ns": [FILE_NS], "round_cycles": [None]}])
    engine.dispose()
    old_schemas.as_version(str(db), 1)  # as the schema-1 writer left it
    run = Store.open(str(db), create=False).load_run("old-1")
    assert run.label == "kept in the fingerprint"
    (row,) = run.measurements
    assert (row.unit, row.block_size, row.attributes) == ("byte", None, {"path": "/data/f"})
    assert row.bytes_per_sec == pytest.approx(4e6)


def test_a_byte_row_round_trips_through_the_store_and_export(tmp_path: Path) -> None:
    run = new_run("files", datetime(2026, 1, 1, tzinfo=UTC), settings={},
                  environment=environment(), label="files", measurements=[
                      Measurement("SHA-256", "hashlib", "hash",
                                  (LoopResult(FILE_BYTES, FILE_NS),), unit="byte")])
    store = Store.open(str(tmp_path / "r.db"))
    store.save_run(run)
    loaded = store.load_run(run.run_id)
    assert loaded == run
    path = tmp_path / "export.json"
    path.write_text(transfer.export([loaded], "json"))
    assert transfer.read_file(path) == [run]


def test_the_label_lives_on_the_run_alone(tmp_path: Path) -> None:
    run = new_run("speed", datetime(2026, 1, 1, tzinfo=UTC), settings={},
                  environment={"os_build": "b"}, label="mine",
                  command="pqbench speed --db postgresql://u:secret@h/db")
    document = codec.run_document(run)
    assert document["label"] == "mine" and "label" not in document["environment"]
    assert "secret" not in document["command"] and "secret" not in json.dumps(
        codec.run_columns(run))
    assert isinstance(run.environment, Fingerprint) and run.environment.os_build == "b"


def test_every_run_kind_gets_its_id_times_and_command_from_the_one_constructor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pqbench.data.record.memory import memory_run
    from pqbench.measure.files.runs import files_run
    from pqbench.measure.speed.suite import SpeedSettings, run_suite
    from pqbench.measure.tls.grid import TlsSettings
    from pqbench.measure.tls.runs import tls_run

    monkeypatch.setattr("sys.argv", ["pqbench", "speed", "--db", "postgresql://u:pw@h/db"])
    started = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    runs = [files_run(started, {"label": "f"}, {}, []),
            memory_run(started, {"label": "m"}, {}, [], []),
            tls_run(started, TlsSettings(label="t"), {}, [], [], []),
            run_suite([], SpeedSettings(label="s"), {})]
    assert [r.kind for r in runs] == ["files", "memory", "tls", "speed"]
    assert [r.label for r in runs] == ["f", "m", "t", "s"]
    for run in runs:
        started_here = run.kind != "speed"  # the suite takes its own start time
        assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", run.run_id)
        assert run.run_id.startswith("20260102T030405Z-") or not started_here
        assert run.started_at == "2026-01-02T03:04:05.678+00:00" or not started_here
        assert run.command.startswith("pqbench speed --db") and "pw" not in run.command
        assert "label" not in run.environment


def test_csv_has_a_column_per_typed_value(tmp_path: Path) -> None:
    row = Measurement("AES-256-GCM", "cryptography", "encrypt",
                      (LoopResult(100, 10_000_000), LoopResult(120, 10_000_000)),
                      block_size=16384, attributes={"key_bits": 256, "per_op": "one update"})
    run = make_run("csv-1", seed=1)
    columns, rows = codec.csv_table(Run(**{**run.__dict__, "measurements": (row,)}))
    (line,) = [dict(zip(columns, values, strict=True)) for values in rows]
    assert line["run_id"] == "csv-1" and line["key_bits"] == 256
    assert line["unit"] == "op" and line["bytes_per_sec"] == pytest.approx(
        110 / 0.01 * 16384)


@pytest.fixture
def five(tmp_path: Path) -> Store:
    store = Store.open(str(tmp_path / "five.db"))
    for i, (label, kind) in enumerate((("a", "speed"), ("b", "speed"), (None, "speed"),
                                       ("a", "files"), ("b", "speed"))):
        run = make_run(f"2026010{i}-run{i}", seed=i, label=label,
                       started_at=f"2026-01-0{i + 1}T00:00:00+00:00")
        store.save_run(Run(**{**run.__dict__, "kind": kind}))
    return store


def test_load_runs_keeps_the_order_asked_and_loads_every_row(five: Store) -> None:
    runs = five.load_runs(RunFilter(ids=("20260104", "20260100-run0")))
    assert [r.run_id for r in runs] == ["20260104-run4", "20260100-run0"]
    assert all(len(r.measurements) == 4 and all(m.rounds for m in r.measurements)
               for r in runs)


def test_load_runs_filters_by_kind_group_and_age(five: Store) -> None:
    assert [r.run_id for r in five.load_runs(RunFilter(kinds=("files",)))] == ["20260103-run3"]
    by_label = five.load_runs(RunFilter(by="label", values=("b", "(none)")))
    assert [r.run_id for r in by_label] == ["20260101-run1", "20260102-run2", "20260104-run4"]
    assert [r.run_id for r in five.load_runs(RunFilter(newest=2))] == [
        "20260103-run3", "20260104-run4"]
    headers = five.load_runs(rows_too=False)
    assert len(headers) == 5 and all(not r.measurements for r in headers)


def test_a_fingerprints_binary_identity_reads_its_roles_entry_alone() -> None:
    """`Fingerprint.binary_identity(role)` is what `binaries` holds for the role, named:
    the build-id first, else the file hash; None for a role not recorded, an entry that
    is not a mapping, or a fingerprint without binaries (or with them as something else)."""
    from pqbench.data.record.fingerprint import Fingerprint

    env = Fingerprint({"binaries": {
        "libcrypto": {"path": "/usr/lib/libcrypto.so.3", "build_id": "ab", "sha256": "cd"},
        "liboqs": {"sha256": "ef"}, "libc": {"path": "/lib/libc.so.6", "size": 1},
        "odd": "not a mapping"}})
    assert [env.binary_identity(role) for role in ("libcrypto", "liboqs", "libc", "odd",
                                                   "absent")] == [
        "build-id ab", "sha256 ef", None, None, None]
    assert Fingerprint({}).binary_identity("libcrypto") is None
    assert Fingerprint({"binaries": ["libcrypto"]}).binary_identity("libcrypto") is None


@pytest.mark.parametrize(("ab", "side"), [
    (None, None), ({"session": "s1", "side": "a"}, "a"), ({"session": "s1", "side": "b"}, "b"),
    ({"session": "s1", "side": "c"}, None), ({"session": 7, "side": "a"}, None),
    ({"side": "a"}, None), ("s1/a", None)])
def test_a_run_is_a_side_of_an_ab_session_only_by_a_session_id_and_a_side(
        ab: object, side: str | None) -> None:
    """`Run.session` (what `ab_side` and `pairing.ab_session` read): settings["ab"] with a
    session id (text) and a side "a" or "b", else None; worked out once a run."""
    base = make_run("r", seed=1)
    run = replace(base, settings={**base.settings, **({} if ab is None else {"ab": ab})})
    assert ab_side(run) == side
    assert pairing.ab_session(run) == (ab if side is not None else None)
    assert run.session is run.session
    assert replace(run, settings={}).session is None

"""`pqbench memory` end to end: JSON, CSV, the store, export/import, compare and the report."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.record import codec as document
from pqbench.data.record import memory as memory_runs
from pqbench.data.record import transfer
from pqbench.data.store import Store
from pqbench.timing import native
from tests.helpers import starts_processes

SUITE = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87",
         "X25519", "ECDH-P-256", "RSA-2048", "Ed25519")


@pytest.fixture(scope="module")
@starts_processes
def memory_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One real `pqbench memory` run of the default suite (the issue's list)."""
    db = tmp_path_factory.mktemp("memory-run") / "results.db"
    result = CliRunner().invoke(app, ["memory", "--calls", "2", "--label", "base", "--json",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    return db, json.loads(result.stdout)


def _rows(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["algorithm"], r["implementation"], r["operation"]): r for r in doc["results"]}


@pytest.mark.process
def test_the_default_suite_is_measured_through_liboqs_and_libcrypto(memory_run) -> None:
    _, doc = memory_run
    assert doc["kind"] == "memory" and doc["status"] == "complete"
    rows = _rows(doc)
    expected = {(a, "liboqs", op) for a in SUITE[:3]
                for op in ("keygen", "encaps", "decaps", "decaps-reject")}
    expected |= {(a, "liboqs", op) for a in SUITE[3:6] for op in ("keygen", "sign", "verify")}
    expected |= {("X25519", "libcrypto", op) for op in ("keygen", "derive")}
    expected |= {("ECDH-P-256", "libcrypto", op) for op in ("keygen", "derive")}
    expected |= {("RSA-2048", "libcrypto", op) for op in ("sign", "verify", "encrypt",
                                                         "decrypt")}
    expected |= {("Ed25519", "libcrypto", op) for op in ("sign", "verify")}
    assert expected <= set(rows)
    for row in rows.values():
        assert row["stack_bytes"] > 0 and row["heap_bytes"] is not None
        assert row["memory_method"] == ("painted stack (high-water mark, harness "
                                        "subtracted); LD_PRELOAD malloc interposer (bytes "
                                        "requested)")
        assert row["memory_calls"] == 2 and row["samples"] == [] and row["ops_per_sec"] is None
        assert row["memory_range"]["stack_bytes"][1] == row["stack_bytes"]
    assert rows[("ML-KEM-768", "liboqs", "decaps")]["sizes"]["ciphertext"] == 1088
    assert doc["settings"]["heap_counted"] is True
    assert doc["settings"]["harness_stack_bytes"] > 0
    # ML-KEM and ML-DSA through the system libcrypto: offered from OpenSSL 3.5 on.
    refused = {(p["algorithm"], p["implementation"]) for p in doc["problems"]}
    for name in SUITE[:6]:
        if native.ssl_offers(name) is not None:
            assert (name, "libcrypto") in refused
        else:
            assert (name, "libcrypto", "decaps" if "KEM" in name else "sign") in rows


@pytest.mark.slow
def test_the_run_is_stored_and_exported_losslessly(memory_run, tmp_path: Path) -> None:
    db, doc = memory_run
    stored = Store.open(str(db), create=False).load_run(doc["run_id"])
    assert stored.kind == "memory"
    assert document.run_document(stored) == doc
    export = tmp_path / "memory.json"
    export.write_text(transfer.export([stored], "json"))
    other = tmp_path / "other.db"
    result = CliRunner().invoke(app, ["import", str(export), "--db", str(other)])
    assert result.exit_code == 0, result.stderr
    again = Store.open(str(other), create=False).load_run(doc["run_id"])
    assert memory_runs.figures([again]) == memory_runs.figures([stored])


@pytest.mark.process
def test_a_malformed_memory_row_is_refused_on_import(memory_run, tmp_path: Path) -> None:
    _, doc = memory_run
    for key, value in (("stack_bytes", -1), ("heap_bytes", "many"), ("allocations", 1.5)):
        bad = json.loads(json.dumps(doc))
        bad["run_id"] = "20260101T000000Z-bad000"
        bad["results"][0][key] = value
        path = tmp_path / f"bad-{key}.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(transfer.InputFileError, match=key):
            transfer.read_file(path)


@pytest.mark.process
def test_csv_rows_carry_the_memory_columns(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["memory", "ml-kem-768", "-o", "decaps", "--csv",
                                      "--calls", "1", "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["algorithm"], r["implementation"], r["operation"]) for r in rows] == [
        ("ML-KEM-768", "liboqs", "decaps")]
    assert int(rows[0]["stack_bytes"]) > 0 and rows[0]["ops_per_sec"] == ""
    assert rows[0]["memory_method"].startswith("painted stack")


@pytest.mark.process
def test_compare_shows_bytes_before_and_after_with_a_verdict(memory_run) -> None:
    db, doc = memory_run
    store = Store.open(str(db), create=False)
    base = store.load_run(doc["run_id"])
    # The same build measured again: every deterministic figure is the same.
    again = CliRunner().invoke(app, ["memory", "ml-kem-768", "x25519", "--calls", "2",
                                     "--label", "again", "--json", "--db", str(db)])
    assert again.exit_code == 0, again.stderr
    # A planted change: ML-KEM-768 decapsulation needs 4096 more bytes of stack.
    grown = [dataclasses.replace(f, stack_bytes=f.stack_bytes + 4096,
                                 ranges={**f.ranges, "stack_bytes": (
                                     f.ranges["stack_bytes"][0] + 4096,
                                     f.ranges["stack_bytes"][1] + 4096)})
             if f.key == ("ML-KEM-768", "liboqs", "decaps") else f
             for f in memory_runs.figures([base])]
    planted = memory_runs.memory_run(datetime.now(UTC), {**base.settings, "label": "grown"},
                                 base.environment, grown, ())
    assert store.save_run(planted)
    result = CliRunner().invoke(app, ["compare", doc["run_id"], json.loads(again.stdout)
                                      ["run_id"], "--json", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    same = json.loads(result.stdout)
    assert same["rows"] == []
    kem = [m for m in same["memory"] if m["algorithm"] == "ML-KEM-768"]
    assert kem and {m["verdict"] for m in kem} == {"same"}
    result = CliRunner().invoke(app, ["compare", doc["run_id"], planted.run_id, "--json",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    changes = json.loads(result.stdout)["memory"]
    stack = next(m for m in changes if (m["algorithm"], m["operation"], m["metric"])
                 == ("ML-KEM-768", "decaps", "stack_bytes"))
    before = _rows(doc)[("ML-KEM-768", "liboqs", "decaps")]["stack_bytes"]
    assert (stack["before"], stack["after"], stack["verdict"]) == (before, before + 4096,
                                                                  "larger")
    assert stack["ratio"] == pytest.approx((before + 4096) / before)
    assert changes[0] == stack  # changes first
    assert sum(m["verdict"] == "larger" for m in changes) == 1
    table = CliRunner().invoke(app, ["compare", doc["run_id"], planted.run_id, "--db",
                                     str(db)])
    assert table.exit_code == 0 and "larger" in table.stdout and "stack B" in table.stdout


def _tables(markdown: str, heading: str) -> list[list[list[str]]]:
    """The tables under one `##` heading, as rows of cell texts."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables: list[list[list[str]]] = []
    inside = False
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            inside = tokens[i + 1].content == heading
        elif inside and token.type == "table_open":
            tables.append([])
        elif inside and token.type == "tr_open":
            tables[-1].append([])
        elif inside and token.type == "inline" and tokens[i - 1].type in ("th_open",
                                                                           "td_open"):
            tables[-1][-1].append(_rendered(token))
    return tables


def _rendered(token: Any) -> str:
    """The text a reader sees: escapes resolved, markup (there should be none) dropped."""
    return "".join(child.content for child in token.children or []
                   if child.type in ("text", "code_inline"))


def test_the_report_shows_memory_beside_time_and_wire_bytes(memory_run, small_run,
                                                           tmp_path: Path) -> None:
    from pqbench.views import report

    db, doc = memory_run
    speed_db, speed_doc = small_run
    memory = Store.open(str(db), create=False).load_run(doc["run_id"])
    speed = Store.open(str(speed_db), create=False).load_run(speed_doc["run_id"])
    built = report.build([speed, memory])
    (table,) = _tables(built.markdown, "What it costs in memory")
    header, *rows = table
    assert header == ["algorithm", "implementation", "operation", "stack B", "heap peak B",
                      "allocations", "µs/op", "wire"]
    by_key = {tuple(r[:3]): r for r in rows}
    decaps = by_key[("ML-KEM-768", "liboqs", "decaps")]
    figure = _rows(doc)[("ML-KEM-768", "liboqs", "decaps")]
    assert decaps[3] == f"{figure['stack_bytes']:,}" and decaps[7] == "1,088 B"
    timed = {(r["algorithm"], r["implementation"], r["operation"]) for r in speed_doc["results"]}
    assert (decaps[6] != "–") == (("ML-KEM-768", "liboqs", "decaps") in timed)
    assert len(rows) == len(doc["results"])


def test_bad_requests_exit_2_with_a_message(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    for args, message in ((["-i", "cryptography"], "memory is measured through"),
                          (["--calls", "0"], "--calls"),
                          (["aes-256-gcm"], "public-key"),
                          (["ml-kem-768", "-o", "sign"], "nothing to measure")):
        result = CliRunner().invoke(app, ["memory", *args, "--db", db])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.stderr
    assert not Path(db).exists()  # refused before anything was stored


@pytest.mark.process
def test_a_mechanism_only_liboqs_knows_is_measured_there_and_refused_by_libcrypto(
        tmp_path: Path) -> None:
    # Falcon-512 is in every liboqs pqbench builds, the default (minimal) one included.
    result = CliRunner().invoke(app, ["memory", "Falcon-512", "-o", "verify", "--calls", "1",
                                      "--json", "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (row,) = doc["results"]
    assert (row["algorithm"], row["implementation"], row["operation"]) == (
        "Falcon-512", "liboqs", "verify")
    assert row["stack_bytes"] > 0 and row["sizes"]["signature"] > 0
    assert [(p["implementation"], p["kind"]) for p in doc["problems"]] == [
        ("libcrypto", "not offered")]


def test_the_report_compares_memory_runs(memory_run) -> None:
    from pqbench.views import report

    db, doc = memory_run
    base = Store.open(str(db), create=False).load_run(doc["run_id"])
    figures = memory_runs.figures([base])
    shrunk = [dataclasses.replace(f, heap_bytes=f.heap_bytes - 64, ranges={
        **f.ranges, "heap_bytes": (f.ranges["heap_bytes"][0] - 64,
                                   f.ranges["heap_bytes"][1] - 64)})
              if f.key == ("X25519", "libcrypto", "keygen") else f for f in figures]
    later = memory_runs.memory_run(datetime(2030, 1, 1, tzinfo=UTC),
                               {**base.settings, "label": "later"}, base.environment, shrunk,
                               ())
    sections = report.comparison_sections([base, later], None)
    built = report.build([base, later], sections)
    (table,) = _tables(built.markdown, "Memory compared")
    header, *rows = table
    assert header == ["algorithm", "implementation", "operation", "figure", "before", "after",
                      "ratio", "verdict"]
    heap = next(r for r in rows if r[:4] == ["X25519", "libcrypto", "keygen", "heap peak B"])
    before = figures[[f.key for f in figures].index(("X25519", "libcrypto", "keygen"))]
    assert heap[4:] == [f"{before.heap_bytes:,}", f"{before.heap_bytes - 64:,}",
                        f"{(before.heap_bytes - 64) / before.heap_bytes:.3g}x", "smaller"]
    assert all(r[7] in ("smaller", "varies") for r in rows)


def test_names_from_an_imported_file_stay_literal_in_the_report() -> None:
    from pqbench.views import report

    hostile = "ML-KEM-768 **x** | <img src=y> [z](http://e)"
    figure = memory_runs.MemoryFigure(
        hostile, "liboqs", "decaps", stack_bytes=200_000, heap_bytes=864, allocations=8,
        method="painted stack (high-water mark, harness subtracted); heap not counted",
        calls=1, ranges={"stack_bytes": (200_000, 200_000), "heap_bytes": (864, 864),
                         "allocations": (8, 8)})
    run = memory_runs.memory_run(datetime(2030, 1, 1, tzinfo=UTC),
                             {"calls": "<b>5</b>", "harness_stack_bytes": 40},
                             {"os_build": "x"}, [figure], ())
    built = report.build([run])
    (table,) = _tables(built.markdown, "What it costs in memory")
    assert table[1][0] == hostile
    section = built.markdown.split("## What it costs in memory")[1].split("\n## ")[0]
    tokens = MarkdownIt("commonmark").enable("table").parse(section)
    inline = [t for t in tokens if t.type == "inline"]
    assert not any(child.type in ("html_inline", "link_open", "strong_open")
                   for t in inline for child in t.children or [])
    assert "of <b>5</b> calls" in "".join(_rendered(t) for t in inline)
    bullets = [_rendered(t) for t in inline if t.content.startswith("The deepest stack")]
    assert bullets == [f"The deepest stack: {hostile} decaps (liboqs), 200,000 bytes."]

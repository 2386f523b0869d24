"""`pqbench tls` as a user meets it: the JSON rows, the reasons for what is not offered,
clear usage errors, storage, and compare, history, report and export over tls runs."""

from __future__ import annotations

import json
import math
import re
import signal
from pathlib import Path

import pytest
from matplotlib import image as mpimg
from typer.testing import CliRunner

from pqbench.analysis.verdict import INCONCLUSIVE
from pqbench.cli import app
from pqbench.data.store import Store
from tests.helpers import markdown, starts_processes
from tests.helpers.jobs import Job

GRID = ["-g", "x25519", "-g", "X25519MLKEM768", "-c", "ecdsa-p-256", "-c", "mldsa65"]
QUICK = ["--seconds", "0.1", "--rounds", "5"]
REQUIRED = ("group", "certificate", "implementation", "operation", "handshakes_per_sec",
            "client_bytes", "server_bytes", "round_trips")


def _tls(db: Path, *args: str) -> dict:
    result = CliRunner().invoke(app, ["tls", *args, "--json", "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
@starts_processes
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    db = tmp_path_factory.mktemp("tls") / "results.db"
    first = _tls(db, *GRID, *QUICK, "--label", "first")
    second = _tls(db, "-g", "x25519", "-c", "ecdsa-p-256", "-i", "pyopenssl", *QUICK,
                  "--label", "second")
    return db, first, second


@pytest.mark.process
def test_json_rows_carry_the_promised_fields(two_runs: tuple[Path, dict, dict]) -> None:
    _, doc, _ = two_runs
    assert (doc["kind"], doc["status"]) == ("tls", "complete")
    rows = doc["results"]
    for row in rows:
        assert all(row.get(key) is not None for key in REQUIRED), row
        assert row["algorithm"] == f"{row['group']} + {row['certificate']}"
        assert row["operation"] in ("full", "resumed")
        assert row["handshakes_per_sec"] == row["ops_per_sec"] > 0
        assert len(row["samples"]) == 5
        assert row["transport"] == ("loopback" if row["implementation"].endswith("-loopback")
                                    else "memory")
        # The paper model at the defaults (MTU 1500, MSS 1460, initial window 10): a server
        # flight of up to 10 segments is one round trip, up to 30 two.
        segments = math.ceil(row["sizes"]["server_flight"] / 1460)
        assert row["server_segments"] == segments
        assert row["round_trips"] == (1 if segments <= 10 else 2)
    keys = {(r["algorithm"], r["implementation"], r["operation"]) for r in rows}
    for cell in ("X25519 + ECDSA-P-256", "X25519 + ML-DSA-65", "X25519MLKEM768 + ECDSA-P-256",
                 "X25519MLKEM768 + ML-DSA-65"):
        for implementation in ("pyopenssl", "pyopenssl-loopback"):
            assert {(cell, implementation, op) for op in ("full", "resumed")} <= keys
    for implementation in ("python-ssl", "python-ssl-loopback", "libssl", "libssl-loopback"):
        assert ("X25519 + ECDSA-P-256", implementation, "full") in keys
    # An ML-DSA-65 chain (server certificate and intermediate) overflows the initial window.
    pq = next(r for r in rows if r["algorithm"] == "X25519MLKEM768 + ML-DSA-65"
              and r["operation"] == "full")
    assert (pq["round_trips"], pq["sizes"]["signature"]) == (2, 3309)


@pytest.mark.process
def test_what_is_not_offered_is_listed_with_its_reason(two_runs) -> None:
    _, doc, _ = two_runs
    problems = {(p["algorithm"], p["implementation"]): p for p in doc["problems"]}
    for cell in ("X25519 + ML-DSA-65", "X25519MLKEM768 + ECDSA-P-256",
                 "X25519MLKEM768 + ML-DSA-65"):
        for implementation in ("python-ssl", "libssl"):
            if (cell, implementation) in problems:  # a system OpenSSL 3.5 offers them
                problem = problems[(cell, implementation)]
                assert problem["kind"] == "not offered"
                assert "3.5" in problem["reason"] or "3.15" in problem["reason"]
            else:
                assert any(r["algorithm"] == cell and r["implementation"] == implementation
                           for r in doc["results"])
    verified = {(v["algorithm"], v["implementation"]) for v in doc["verifications"]}
    assert ("X25519MLKEM768 + ML-DSA-65", "pyopenssl") in verified


def test_the_run_is_stored_as_a_tls_run(two_runs) -> None:
    db, doc, _ = two_runs
    stored = Store.open(str(db), create=False).load_run(doc["run_id"])
    assert stored.kind == "tls"
    assert len(stored.measurements) == len(doc["results"])
    assert stored.environment["tls"]["pyopenssl"]["library"].startswith("OpenSSL")


@pytest.mark.parametrize(("args", "message"), [
    (["-g", "x448"], "unknown key-exchange group 'x448' for --group; known: X25519, P-256"),
    (["-c", "dsa"], "unknown certificate key type 'dsa' for --cert; known: ECDSA-P-256"),
    (["--transport", "udp"], "unknown --transport 'udp'; known: memory, loopback"),
    (["-o", "zero-rtt"], "unknown --operation 'zero-rtt'; known: full, resumed"),
    (["-i", "gnutls"], "unknown TLS implementation 'gnutls'; known: pyopenssl"),
    (["--mtu", "40"], "Invalid value for '--mtu': Input should be greater than or equal to 41"),
    (["--seconds", "0"], "'0' is not a finite number > 0 and <= 3600"),
    (["--seconds", "nan"], "'nan' is not a finite number > 0 and <= 3600"),
    (["--initial-window", "0"], "'--initial-window': Input should be greater than or equal"),
    (["--intermediates", "5"], "'--intermediates': Input should be less than or equal to 4"),
])
def test_bad_options_are_clear_usage_errors(runner: CliRunner, tmp_path: Path,
                                            args: list[str], message: str) -> None:
    result = runner.invoke(app, ["tls", *args, "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "r.db").exists()


@pytest.mark.process
def test_the_table_names_every_row_and_where_it_was_stored(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    result = runner.invoke(app, ["tls", "-g", "mlkem1024", "-c", "ed25519", "-i", "pyopenssl",
                                 "--transport", "memory", "--seconds", "0.05",
                                 "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("MLKEM1024") == 2 and "Ed25519" in result.stdout
    assert "stored as run" in result.stderr


def test_compare_matches_tls_rows_by_cell_implementation_and_operation(two_runs) -> None:
    db, first, second = two_runs
    result = CliRunner().invoke(app, ["compare", first["run_id"], second["run_id"], "--json",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    comparison = json.loads(result.stdout)
    rows = {(r["algorithm"], r["implementation"], r["operation"]): r
            for r in comparison["rows"]}
    assert set(rows) == {("X25519 + ECDSA-P-256", implementation, op)
                         for implementation in ("pyopenssl", "pyopenssl-loopback")
                         for op in ("full", "resumed")}
    for row in rows.values():
        # One run a side: too few for the exact test over runs, so the row is judged
        # against the machine's run-to-run spread. Handshakes are timed in wall time, so
        # never against the default prior (measured over CPU-time rates): the two runs are
        # one build with one run per label, which the noise model takes for replicates, so
        # the spread is what these rows and the other TLS rows of the two runs show. A
        # spread learnt from the very runs compared can call no change of speed: each row's
        # difference d is at most twice the rows' root mean square, and its interval
        # reaches t(99.5 %, 3-4 df) >= 4.6 times that on either side. Where the two runs
        # agree within about 1 % on every row, it backs "no change"; else inconclusive.
        assert row["verdict"] in (INCONCLUSIVE, "no change") and row["unit"] == "ops/s", row
        assert row["ci_low"] <= 1 <= row["ci_high"], row
        assert row["reason"].startswith("1 and 1 runs against this machine's run-to-run "
                                        "spread"), row
        assert "from 2 runs of this row (1 group of one build)" in row["basis"], row
        assert "default prior" not in row["basis"], row
        assert row["n_before"] == row["n_after"] == 5
    assert ["X25519MLKEM768 + ML-DSA-65", "pyopenssl", "full", None] in \
        comparison["only_before"]


def test_history_follows_one_cell_over_runs(two_runs) -> None:
    db, first, _ = two_runs
    result = CliRunner().invoke(app, ["history", "X25519 + ECDSA-P-256", "-i", "pyopenssl",
                                      "-o", "full", "--by", "label", "--json",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    (series,) = json.loads(result.stdout)["series"]
    assert [p["build"] for p in series["points"]] == ["first", "second"]
    first_row = next(r for r in first["results"] if r["algorithm"] == "X25519 + ECDSA-P-256"
                     and r["implementation"] == "pyopenssl" and r["operation"] == "full")
    assert series["points"][0]["median"] == pytest.approx(first_row["ops_per_sec"])


def _headings_and_tables(text: str) -> tuple[list[str], list[list[list[str]]]]:
    tokens = markdown.parse(text)
    return markdown.headings(tokens), markdown.tables(tokens)


@pytest.mark.slow
def test_the_report_has_a_tls_section_with_its_charts(two_runs, tmp_path: Path) -> None:
    db, first, second = two_runs
    result = CliRunner().invoke(app, ["report", first["run_id"], second["run_id"],
                                      "--db", str(db), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "report.md").read_text("utf-8")
    headings, tables = _headings_and_tables(text)
    assert "PQ in a TLS handshake" in headings
    assert "Comparison of the TLS handshakes" in headings
    grid = next(t for t in tables if t[0][:3] == ["group", "certificate", "implementation"])
    cells = {(r[0], r[1], r[2]) for r in grid[1:]}
    assert ("X25519", "ECDSA-P-256", "pyopenssl") in cells  # the newest run: one cell
    for chart in ("tls-handshakes.png", "tls-bytes.png", "tls-compare-1.png"):
        assert f"]({chart})" in text
        assert mpimg.imread(tmp_path / chart).shape[0] > 100
    single = tmp_path / "single"
    CliRunner().invoke(app, ["report", first["run_id"], "--db", str(db), "--out", str(single)])
    headings, tables = _headings_and_tables((single / "report.md").read_text("utf-8"))
    grid = next(t for t in tables if t[0][:3] == ["group", "certificate", "implementation"])
    row = next(r for r in grid if r[:3] == ["X25519MLKEM768", "ML-DSA-65", "pyopenssl"])
    assert row[-1].startswith("2 (")  # over the initial window: a second round trip
    summary = (single / "report.md").read_text("utf-8")
    # Both rates, and no ratio: the two rows' rounds were not paired.
    assert re.search(r"- A full TLS 1\.3 handshake with X25519MLKEM768 \+ ML-DSA-65 ran at "
                     r"[\d.]+(?: k)? handshakes/s, with X25519 \+ ECDSA-P-256 at [\d.]+(?: k)? "
                     r"\(\w[\w-]* in one process; the rows were timed one after the other, "
                     r"not paired, so no ratio is claimed\)", summary), summary
    assert not re.search(r"handshake with .*\dx (faster|slower)", summary), summary


def test_export_and_import_keep_a_tls_run_whole(two_runs, tmp_path: Path) -> None:
    db, first, _ = two_runs
    exported = tmp_path / "tls.json"
    runner = CliRunner()
    result = runner.invoke(app, ["export", first["run_id"], "-O", str(exported),
                                 "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    other = tmp_path / "other.db"
    result = runner.invoke(app, ["import", str(exported), "--db", str(other)])
    assert result.exit_code == 0, result.stderr
    before = Store.open(str(db), create=False).load_run(first["run_id"])
    after = Store.open(str(other), create=False).load_run(first["run_id"])
    assert after.kind == "tls"
    assert [(m.key, dict(m.attributes), dict(m.sizes), m.rounds) for m in after.measurements] \
        == [(m.key, dict(m.attributes), dict(m.sizes), m.rounds) for m in before.measurements]


@pytest.mark.process
@pytest.mark.parametrize(("signum", "group", "status"), [
    (signal.SIGINT, True, 130),  # Ctrl-C at a terminal reaches the whole process group
    (signal.SIGTERM, False, 143),  # `kill PID`, systemd, CI runners
])
def test_an_interrupted_run_stores_what_finished(tmp_path: Path, signum: int, group: bool,
                                                 status: int) -> None:
    """The server process must not print a traceback, the completed rows are stored, and
    the exit status says which signal it was."""
    db = tmp_path / "r.db"
    job = Job("tls", *GRID, "-i", "pyopenssl", "--seconds", "1", "--db", str(db))
    # One step per (cell, operation, transport), shown before it is timed: from step 2 on
    # a row is stored, and 16 steps make the grid.
    job.wait_for(r"\b(?:[2-9]|1[0-5])/16\b")
    job.signal(signal.Signals(signum), group=group)
    status_seen, output = job.finish()
    assert status_seen == status, output
    assert "Traceback" not in output
    (info,) = Store.open(str(db), create=False).list_runs()
    assert (info.kind, info.status) == ("tls", "interrupted")
    assert 0 < info.measurements < 16

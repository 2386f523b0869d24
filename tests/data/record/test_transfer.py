"""Export and import: lossless round trip, idempotence, pytest-benchmark, and bad files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.data.record import codec as document
from pqbench.data.record import transfer
from pqbench.data.store import Store
from pqbench.platform.errors import InputFileError
from tests.helpers import invoke
from tests.helpers.runs import make_run


def test_export_import_round_trip_is_lossless_and_idempotent(two_runs: Path,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    done = invoke("export", "20260101", "20260102", "-O", str(out), "--db", str(two_runs))
    assert done.returncode == 0, done.stderr
    target = tmp_path / "dst.db"
    first = invoke("import", str(out), "--json", "--db", str(target))
    second = invoke("import", str(out), "--json", "--db", str(target))
    assert json.loads(first.stdout)["imported"] == ["20260101-a", "20260102-b"]
    assert json.loads(second.stdout)["imported"] == []
    src, dst = Store.open(str(two_runs)), Store.open(str(target))
    for run_id in ("20260101-a", "20260102-b"):
        assert (document.run_document(dst.load_run(run_id))
                == document.run_document(src.load_run(run_id)))


@pytest.mark.process
def test_pytest_benchmark_export_loads_in_pytest_benchmark_compare(two_runs: Path,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "0001_pqbench.json"
    done = invoke("export", "20260101", "--format", "pytest-benchmark", "-O", str(out),
                   "--db", str(two_runs))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert {"machine_info", "commit_info", "benchmarks", "datetime", "version"} <= set(data)
    assert data["machine_info"]["os_build"] == "18E226"
    bench = data["benchmarks"][0]
    assert {"group", "name", "fullname", "params", "extra_info", "stats"} <= set(bench)
    stats = bench["stats"]
    assert stats["rounds"] == 9 and stats["median"] == pytest.approx(1 / 60_000, rel=0.05)
    compare = subprocess.run([str(Path(sys.executable).parent / "pytest-benchmark"),
                              "compare", str(out)], capture_output=True, text=True,
                             timeout=120, check=False)
    assert compare.returncode == 0, compare.stderr
    assert "encaps[liboqs]" in compare.stdout and "hash[python-16384]" in compare.stdout
    assert "Failed to load" not in compare.stdout + compare.stderr


def _bundle() -> dict:
    return json.loads(transfer.export([make_run("20260103-c", seed=3)], "json"))


@pytest.mark.parametrize("content, message", [
    (b"not json at all", "invalid JSON"),
    (None, "truncated"),
    (b'{"benchmarks": [], "machine_info": {}}', "pytest-benchmark file"),
    (b'{"hello": "world"}', "not a pqbench export"),
    (b"\xff\xfe garbage", "not UTF-8"),
    ("newer", "newer pqbench"),
    ("bad-sample", "results[0].samples[0].elapsed_ns"),
    ("bad-id", "not a pqbench run id"),
], ids=["not json", "truncated", "pytest-benchmark", "foreign json", "binary", "newer format",
        "bad sample", "bad run id"])
def test_bad_files_are_refused_and_nothing_is_written(tmp_path: Path, content: object,
                                                      message: str) -> None:
    good = tmp_path / "good.json"
    good.write_text(transfer.export([make_run("20260104-d", seed=4)], "json"))
    bad = tmp_path / "bad.json"
    if content is None:
        text = good.read_text()
        bad.write_text(text[: len(text) // 2])
    elif content == "newer":
        doc = _bundle()
        doc["format_version"] = 99
        bad.write_text(json.dumps(doc))
    elif content == "bad-sample":
        doc = _bundle()
        doc["runs"][0]["results"][0]["samples"][0]["elapsed_ns"] = 0
        bad.write_text(json.dumps(doc))
    elif content == "bad-id":
        doc = _bundle()
        doc["runs"][0]["run_id"] = "../../etc/passwd"
        bad.write_text(json.dumps(doc))
    else:
        assert isinstance(content, bytes)
        bad.write_bytes(content)
    db = tmp_path / "dst.db"
    done = invoke("import", str(good), str(bad), "--db", str(db))
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert not db.exists()  # the good file was not two_runs either


def test_oversized_files_are_refused_before_reading(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(transfer.MAX_BYTES + 1)  # sparse: cheap to make
    done = invoke("import", str(huge), "--db", str(tmp_path / "x.db"))
    assert done.returncode == 1 and "over the import limit" in done.stderr
    small = tmp_path / "small.json"
    small.write_text(transfer.export([make_run("20260105-e", seed=5)], "json"))
    with pytest.raises(InputFileError, match="import limit of 100 bytes"):
        transfer.read_file(small, max_bytes=100)


def test_export_of_unknown_run_or_format_fails(two_runs: Path) -> None:
    assert invoke("export", "nope", "--db", str(two_runs)).returncode == 1
    done = invoke("export", "20260101", "--format", "csv", "--db", str(two_runs))
    assert done.returncode == 2 and "pytest-benchmark" in done.stderr


def test_export_never_replaces_a_file_unless_forced(two_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    out.write_text("runs from another machine\n")
    refused = invoke("export", "20260101", "-O", str(out), "--db", str(two_runs))
    assert refused.returncode == 1
    assert "already exists" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert out.read_text() == "runs from another machine\n"
    forced = invoke("export", "20260101", "-O", str(out), "--force", "--db", str(two_runs))
    assert forced.returncode == 0, forced.stderr
    assert [run["run_id"] for run in json.loads(out.read_text())["runs"]] == ["20260101-a"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".runs.json")] == []

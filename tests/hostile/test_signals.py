"""Real signals, sent more than once: the clean-up and the storing that follow the first
one run to their end, and every command exits 130 after Ctrl-C and 143 after SIGTERM
without a traceback (the worker processes of `speed --multi` included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers.jobs import Job, corpus_written, wait_until

pytestmark = pytest.mark.process


def _start(*args: str) -> subprocess.Popen[str]:
    """pqbench in a process group of its own, as a shell job is (Ctrl-C at a terminal
    reaches every process of the group); with Python's fault handler on, so that `_finish`
    can show where a process that never ended was."""
    return subprocess.Popen([sys.executable, "-m", "pqbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONFAULTHANDLER": "1"})


def _finish(proc: subprocess.Popen[str], seconds: float) -> str:
    """The process's stderr once it ended; one still running after `seconds` fails the
    test with the stack of each of its threads (SIGABRT, written by the fault handler)."""
    try:
        return proc.communicate(timeout=seconds)[1]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, stderr = proc.communicate(timeout=60)
        raise AssertionError(f"still running after {seconds} s; where it was:\n"
                             f"{stderr[-6000:]}") from None


@pytest.mark.parametrize("signals, gap", [(3, 0.03), (2, 0.2), (5, 0.0)])
def test_repeated_ctrl_c_during_files_corpus_removes_it_and_keeps_the_run(
        tmp_path: Path, signals: int, gap: float) -> None:
    where = tmp_path / "scratch"
    where.mkdir()
    db = tmp_path / "corpus.db"
    proc = _start("files", "corpus", "--total", "400M", "--dir", str(where), "--seed", "5",
                  "--db", str(db))
    wait_until(lambda: corpus_written(where), "the corpus being written")
    for _ in range(signals):
        proc.send_signal(signal.SIGINT)
        time.sleep(gap)
    stderr = _finish(proc, 180)
    assert "Traceback" not in stderr, stderr
    assert proc.returncode == 130, stderr
    assert list(where.iterdir()) == []  # nothing of the corpus left
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted" and info.kind == "files"


def test_sigterm_during_memory_exits_143_and_keeps_the_rows(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    # 200 calls a row: the suite takes well over a minute (RSA key generation alone
    # seconds), so the signal lands mid-suite however fast the machine.
    job = Job("memory", "--calls", "200", "--db", str(db))
    job.wait_for(r"\b(?:[3-9]|[1-9][0-9]+)/[0-9]+\b")  # two rows measured, each in a worker
    job.signal(signal.SIGTERM, group=False)
    status, output = job.finish()
    assert "Traceback" not in output, output
    assert status == 143, output
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted" and info.kind == "memory"


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_speed_multi_prints_no_worker_traceback(tmp_path: Path, sig: int,
                                                                code: int) -> None:
    db = tmp_path / "multi.db"
    job = Job("speed", "x25519", "ecdh-p-256", "ml-kem-768", "-i", "cryptography",
              "--seconds", "1", "--rounds", "5", "--multi", "2", "--db", str(db))
    job.wait_for(r"\b[1-9][0-9]/[0-9]+\b")  # ten steps: the 7 rows checked, rounds under way
    # A terminal sends Ctrl-C to the whole process group, workers included; `kill`
    # sends SIGTERM to the command alone.
    job.signal(signal.Signals(sig), group=sig == signal.SIGINT)
    status, output = job.finish()
    assert "Traceback" not in output, output
    assert status == code, output
    (info,) = Store.open(str(db), create=False).list_runs()
    assert info.status == "interrupted"

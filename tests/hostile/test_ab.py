"""`pqbench ab` against hostile workers and values: a clear message and exit status, no
traceback, bounded memory, and nothing stored that the run format would refuse."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.runs import fake_worker

pytestmark = pytest.mark.process

ROW = ["X25519", "cryptography", "derive", None]
QUICK = ["x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "1", "--round",
         "0.01"]


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert "Error:" not in done.stderr.replace("error:", ""), done.stderr


def test_an_endless_line_from_a_worker_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    """`cat /dev/zero` as a worker: one line without end. The controller reads at most a
    few MiB of it, stops the worker and says why; its peak memory stays far below what
    buffering the line would take (hundreds of MiB within the time limit)."""
    measure = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], "
               "capture_output=True, text=True); print(json.dumps([done.returncode, "
               "done.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    done = subprocess.run(
        [sys.executable, "-c", "import json; " + measure, sys.executable, "-m", "pqbench",
         "ab", *QUICK, "--a", "here", "--b", 'cmd:sh -c "cat /dev/zero"',
         "--db", str(tmp_path / "x.db")],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PQBENCH_WORKER_TIMEOUT": "20"})
    code, stderr, peak_kib = json.loads(done.stdout)
    assert code == 1, stderr
    assert "Traceback" not in stderr
    assert "longer than" in stderr and "worker B" in stderr, stderr
    assert peak_kib < 400 * 1024, peak_kib


@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-1", "0", "soon"])
def test_worker_timeout_must_be_finite_and_bounded(tmp_path: Path, value: str) -> None:
    done = run_cli("ab", *QUICK, "--a", "here", "--b", "here", "--db", str(tmp_path / "x.db"),
                   env={"PQBENCH_WORKER_TIMEOUT": value})
    _clean(done)
    assert done.returncode == 1 and "PQBENCH_WORKER_TIMEOUT" in done.stderr, done.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5"])
def test_max_seconds_must_be_finite_and_positive(tmp_path: Path, value: str) -> None:
    done = run_cli("ab", "x25519", "--max-seconds", value, "--a", "here", "--b", "here",
                   "--db", str(tmp_path / "x.db"))
    _clean(done)
    assert done.returncode == 2 and "--max-seconds" in done.stderr, done.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_cpu_this_process_may_not_use_is_refused_as_speed_refuses_it(tmp_path: Path
                                                                       ) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    outside = max(allowed) + 5
    for command in (["ab", *QUICK, "--a", "here", "--b", "here", "--cpu", str(outside)],
                    ["speed", "x25519", "--cpu", str(outside)]):
        done = run_cli(*command, "--db", str(tmp_path / "x.db"))
        _clean(done)
        assert done.returncode == 2 and f"--cpu {outside}" in done.stderr, done.stderr
    assert not (tmp_path / "x.db").exists()
    # The CPU it may use is accepted, and both workers are pinned to it.
    done = run_cli("ab", *QUICK, "--a", "here", "--b", "here", "--cpu", str(allowed[-1]),
                   "--json", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session"]["cpu"] == allowed[-1]


@pytest.mark.parametrize("sizes, round_fields, field", [
    ({}, {"ops": 2**80}, "ops"),
    ({}, {"cycles": 2**70}, "cycles"),
    ({}, {"ops": float("nan")}, "ops"),
    ({}, {"cpu_ns": 2**80}, "ab_cpu_ns"),
    ({"public_key": 2**70}, {}, "sizes.public_key"),
    ({"public_key": float("nan")}, {}, "sizes.public_key"),
])
def test_worker_answers_the_run_format_refuses_are_never_stored(
        tmp_path: Path, sizes: dict[str, object], round_fields: dict[str, object],
        field: str) -> None:
    """A worker's answer is validated by the model that validates imports: what is
    stored always exports, and the export always imports (a round trip)."""
    good = fake_worker(tmp_path, [ROW])
    bad = fake_worker(tmp_path, [ROW], sizes, round_fields)
    db = tmp_path / "x.db"
    done = run_cli("ab", *QUICK, "--a", good, "--b", bad, "--db", str(db))
    _clean(done)
    assert done.returncode == 1, done.stderr
    assert re.search(r"worker B\d* sent a", done.stderr) and field in done.stderr, \
        done.stderr
    listed = run_cli("runs", "--json", "--db", str(db))
    ids = [r["run_id"] for r in json.loads(listed.stdout)["runs"]] if listed.stdout else []
    if ids:
        exported = run_cli("export", *ids, "-O", str(tmp_path / "e.json"), "--db", str(db))
        assert exported.returncode == 0, exported.stderr
        back = run_cli("import", str(tmp_path / "e.json"), "--db", str(tmp_path / "y.db"))
        assert back.returncode == 0, back.stderr


def test_a_fake_worker_with_sound_answers_is_stored_and_round_trips(tmp_path: Path) -> None:
    """The fake worker above is sound when its answers are: the refusals come from them."""
    db = tmp_path / "x.db"
    done = run_cli("ab", *QUICK, "--a", fake_worker(tmp_path, [ROW], {"public_key": 32}),
                   "--b", fake_worker(tmp_path, [ROW], {"public_key": 32}, {"ops": 1200}),
                   "--db", str(db))
    assert done.returncode == 0, done.stderr
    ids = [r["run_id"] for r in json.loads(run_cli("runs", "--json", "--db",
                                                   str(db)).stdout)["runs"]]
    assert len(ids) == 2
    assert run_cli("export", *ids, "-O", str(tmp_path / "e.json"), "--db",
                   str(db)).returncode == 0
    assert run_cli("import", str(tmp_path / "e.json"), "--db",
                   str(tmp_path / "y.db")).returncode == 0


def test_a_run_stored_with_a_nan_setting_still_exports_and_imports(tmp_path: Path) -> None:
    """An older pqbench stored `ab --max-seconds nan` as NaN: export said ValueError on
    such runs for ever. They export, the non-finite values as null, and import back."""
    import dataclasses

    from pqbench.data.store import Store
    from tests.helpers.runs import make_run

    run = make_run("20260105-n", seed=1)
    run = dataclasses.replace(run, settings={**run.settings, "seconds": float("inf"),
                                             "ab": {"max_seconds": float("nan")}})
    db = tmp_path / "old.db"
    Store.open(str(db)).save_run(run)
    exported = run_cli("export", "20260105-n", "-O", str(tmp_path / "e.json"), "--db", str(db))
    _clean(exported)
    assert exported.returncode == 0, exported.stderr
    document = json.loads((tmp_path / "e.json").read_text())["runs"][0]
    assert document["settings"]["ab"]["max_seconds"] is None
    assert document["settings"]["seconds"] is None
    back = run_cli("import", str(tmp_path / "e.json"), "--db", str(tmp_path / "new.db"))
    assert back.returncode == 0, back.stderr
    (copy,) = Store.open(str(tmp_path / "new.db"), create=False).load_runs()
    assert [m.rounds for m in copy.measurements] == [m.rounds for m in run.measurements]

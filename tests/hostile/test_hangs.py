"""Workers and inputs that never end: a `cmd:` worker that never answers or writes only to
stderr, one that floods (`yes`), a --cpu range of a trillion CPUs, a --series file without
end. Each is refused with a clear message in bounded time and memory; the time limits
here are the bounds of a hang (the old behaviour: two minutes, or minutes of growing
memory), not measurements."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

AB = ["ab", "x25519", "-i", "cryptography", "-o", "derive", "--max-seconds", "2", "--round",
      "0.01"]
#: Longer than the start-up limit (30 s) and a loaded machine's start-up, far shorter
#: than the two minutes a worker that never answers was waited for.
HANG_BOUND = 100


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr


def _bounded(*args: str) -> subprocess.CompletedProcess[str]:
    """pqbench with its address space limited (RLIMIT_AS, 3 GiB) and a time limit: an
    input that makes it grow without end fails there, never on the machine."""
    limit = 3 << 30
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, timeout=HANG_BOUND, check=False,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (limit, limit)))


def test_a_worker_that_floods_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    """`yes` as a worker: a short line without end. The controller reads a few lines of
    it and stops it; its peak memory stays near its own size (buffering the flood while
    side A's workers start took 600 MB)."""
    measure = ("import json, resource, subprocess, sys; done = subprocess.run(sys.argv[1:], "
               f"capture_output=True, text=True, timeout={HANG_BOUND}); print(json.dumps(["
               "done.returncode, done.stderr, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "pqbench",
                           *AB, "--a", "here", "--b", "cmd:/usr/bin/yes",
                           "--db", str(tmp_path / "x.db")],
                          capture_output=True, text=True, timeout=HANG_BOUND + 30, check=False)
    code, stderr, peak_kib = json.loads(done.stdout)
    assert code == 1 and "Traceback" not in stderr, stderr
    assert "does not speak the pqbench worker protocol" in stderr and "worker B" in stderr
    assert peak_kib < 300 * 1024, peak_kib


@pytest.mark.parametrize("value", ["0-999999999999", "0-99999999", "0-", "", " ", "1,",
                                   "3-1", "9" * 40])
def test_cpu_lists_are_checked_without_expanding_them(tmp_path: Path, value: str) -> None:
    done = _bounded("speed", "x25519", "--cpu", value, "--db", str(tmp_path / "x.db"))
    _clean(done)
    assert done.returncode == 2 and "--cpu" in done.stderr, done.stderr
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("source", ["/dev/zero", "huge", "braces"])
def test_a_series_without_end_is_refused_with_a_bound(tmp_path: Path, source: str) -> None:
    if source == "huge":
        path = tmp_path / "huge.txt"
        path.write_text("here\n" * 400_000)  # 2 MB of builds
        values = ["--series", f"@{path}"]
    elif source == "braces":
        values = ["--series", "env:OQS_X=" + "{1,2}" * 40]  # 2**40 builds if expanded
    else:
        values = ["--series", f"@{source}"]
    done = _bounded("bisect", "x25519", *values, "--db", str(tmp_path / "x.db"))
    _clean(done)
    assert done.returncode == 2 and "--series" in done.stderr, done.stderr
    assert not (tmp_path / "x.db").exists()


#: The workers that never answer, by case: one silent, which meets the default limit (30 s),
#: and one that writes to stderr without end (stderr is no answer), which meets a limit the
#: user chose, 10 s (long enough for side A's worker to start on a loaded machine).
UNANSWERED = {"silent": ("cmd:sh -c 'sleep 300' x", None),
              "stderr-only": ("cmd:sh -c 'while :; do echo starting... >&2; sleep 0.2; done' x",
                              "10")}


@pytest.fixture(scope="module", autouse=True)
def unanswered(tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[dict[str, tuple[subprocess.Popen[bytes], Path]]]:
    """Both sessions, started together when this module starts: they only wait out their
    limits, so the module's other tests run meanwhile, and the tests that read them come
    last. Each one's output goes to a file (a pipe nobody reads could fill and stall it)."""
    started = {}
    for case, (worker, limit) in UNANSWERED.items():
        env = {k: v for k, v in os.environ.items() if k != "PQBENCH_WORKER_TIMEOUT"}
        if limit is not None:
            env["PQBENCH_WORKER_TIMEOUT"] = limit
        tmp = tmp_path_factory.mktemp(case)
        with (tmp / "stderr").open("wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "pqbench", *AB, "--a", "here", "--b", worker,
                 "--worker-pairs", "3", "--db", str(tmp / "x.db")],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        started[case] = (process, tmp / "stderr")
    yield started
    for process, _ in started.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("case", list(UNANSWERED))
def test_a_worker_that_never_answers_is_stopped_at_the_start_up_limit(
        unanswered: dict[str, tuple[subprocess.Popen[bytes], Path]], case: str) -> None:
    """The silent worker meets the default limit, the stderr-only one the limit chosen
    (`UNANSWERED`): each session ends with a message naming the worker and the limit."""
    process, stderr_file = unanswered[case]
    code = process.wait(timeout=HANG_BOUND)
    stderr = stderr_file.read_text(errors="replace")
    assert "Traceback" not in stderr, stderr
    assert code == 1, stderr
    limit = UNANSWERED[case][1]
    assert f"did not answer start within {limit or 30} s" in stderr, stderr
    assert "worker B" in stderr

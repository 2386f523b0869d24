"""The Go worker through the whole of pqbench: built into the per-user cache on first use,
checked (ACVP known answers and interop with liboqs and cryptography), timed in the same
cycles as liboqs and libcrypto with its own post-quantum/classical ratio and its gap to
liboqs, `ab` and a two-build `bisect` over a pinned Go module, a missing toolchain, a
broken source copy, and Ctrl-C while its worker runs. No timing is asserted."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pqbench.data.store import Store
from pqbench.libraries.stacks import compiling, registry
from pqbench.platform.errors import ImplementationUnavailable
from tests.helpers import REPO, run_cli

GO_STACK = registry.by_name("go")
FAKE_SITE = REPO / "tests" / "helpers" / "stack_fake"
CIRCL = "github.com/cloudflare/circl"

#: Each test starts pqbench or the Go worker; the first builds it (with its modules: a
#: minute on a busy machine), so each may take longer than the suite's default limit.
pytestmark = [pytest.mark.process, pytest.mark.timeout(1800)]


def _json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_verify_checks_every_pair_through_the_go_worker() -> None:
    done = run_cli("verify", "ml-kem-768", "ml-kem-512", "ml-dsa-65", "x25519", "ed25519",
                   "ecdh-p-256", "ecdsa-p-256", "-i", "go", "--all", "--json", timeout=900)
    assert done.returncode == 0, done.stderr
    report = _json(done)
    assert report["failed"] == 0
    passed = {(r["algorithm"], r["check"]) for r in report["results"]
              if r["status"] == "passed"}
    for alg in ("ML-KEM-768", "ML-KEM-512"):
        assert {(alg, c) for c in ("round trip", "implicit rejection", "interop with liboqs",
                                   "KAT keygen", "KAT encaps", "KAT decaps",
                                   "KAT implicit rejection")} <= passed
    assert {("ML-DSA-65", c) for c in ("interop with liboqs", "KAT keygen", "KAT sign",
                                       "KAT verify")} <= passed
    assert {("X25519", "interop with cryptography"), ("X25519", "KAT derive"),
            ("Ed25519", "KAT sign"), ("ECDH-P-256", "KAT derive"),
            ("ECDH-P-256", "invalid point refused"), ("ECDSA-P-256", "KAT verify")} <= passed
    kat = [r for r in report["results"] if r["check"].startswith("KAT")
           and r["status"] == "passed"]
    assert all(" vectors, " in r["detail"] for r in kat)


def test_speed_pairs_go_with_liboqs_and_libcrypto_in_one_cycle(tmp_path: Path) -> None:
    done = run_cli("speed", "ml-kem-768", "x25519", "-i", "go", "-i", "liboqs", "-i",
                   "libcrypto", "--seconds", "0.3", "--rounds", "5", "--json", "--db",
                   str(tmp_path / "r.db"), timeout=900)
    assert done.returncode == 0, done.stderr
    run = _json(done)
    go_rows = [r for r in run["results"] if r["implementation"] == "go"]
    assert {(r["algorithm"], r["operation"]) for r in go_rows} == {
        ("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"), ("ML-KEM-768", "decaps"),
        ("X25519", "keygen"), ("X25519", "derive")}
    for row in go_rows:
        assert len(row["samples"]) == 5 and len(row["process_cpu_ns"]) == 5
        assert row["warmup_rounds"] >= 2 and isinstance(row["helper_threads"], bool)
        assert row["library"] == ("crypto/mlkem" if row["algorithm"] == "ML-KEM-768"
                                  else "crypto/ecdh")
        assert row["runtime"].startswith("go1.")
    assert run["environment"]["libraries"]["go:crypto/mlkem"].startswith("go1.")
    ratios = {r["name"]: r for r in run["ratios"]}
    for name in ("ML-KEM-768 [go] against X25519 [go], per exchange",
                 "ML-KEM-768 [go] against ML-KEM-768 [liboqs], per exchange"):
        ratio = ratios[name]
        assert ratio["pairs"] == 5 and ratio["ci_low"] <= ratio["estimate"] <= ratio["ci_high"]


def _without_go() -> str:
    """PATH with every folder holding a `go` left out."""
    return os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if p and not (Path(p) / "go").exists())


def test_a_missing_toolchain_says_what_is_needed_and_builds_nothing(tmp_path: Path) -> None:
    env = {"PATH": _without_go(), "PQBENCH_CACHE_DIR": str(tmp_path / "cache")}
    done = run_cli("speed", "x25519", "-i", "go", "--seconds", "0.1", "--json", "--db",
                   str(tmp_path / "r.db"), env=env)
    # Its only implementation unavailable: nothing measured, stored as failed, exit 1.
    assert done.returncode == 1, done.stderr
    assert "nothing was measured (go: unavailable" in done.stderr
    (problem,) = _json(done)["problems"]
    assert problem["kind"] == "unavailable" and problem["implementation"] == "go"
    assert "needs Go 1.24 or newer (no go on PATH)" in problem["reason"]
    assert "https://go.dev/dl/" in problem["reason"]
    listed = _json(run_cli("list", "--json", env=env))
    (go,) = [s for s in listed["stacks"] if s["implementation"] == "go"]
    assert go["state"] == "missing" and "needs Go 1.24" in go["detail"]
    assert not (tmp_path / "cache" / "stacks").exists()


def test_a_build_that_fails_says_why_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pqbench.catalog.algorithms import resolve
    from pqbench.libraries.implementations.stacks import StackImplementation
    from pqbench.libraries.stacks.running import StackProcess
    from pqbench.measure.checks.pair import check_pair

    copy = tmp_path / "sources"
    shutil.copytree(registry.SOURCES / "go", copy / "go")
    with (copy / "go" / "main.go").open("a") as source:
        source.write("\nfunc broken( {\n")
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path / "cache"))
    stack = replace(GO_STACK, root=copy)
    with pytest.raises(compiling.BuildFailed) as caught:
        compiling.compile_worker(compiling.plan(stack), lambda _message: None)
    message = str(caught.value)
    assert "compiling the go worker: go exited with status 1" in message
    assert "syntax error" in message
    assert [p.name for p in (tmp_path / "cache" / "stacks" / "go").iterdir()] == [".lock"]
    impl = StackImplementation(stack, StackProcess(stack, ()))
    checked = check_pair(resolve(["X25519"], (), ())[0], impl)
    assert checked.problem is not None and checked.problem.kind == "unavailable"
    assert "syntax error" in checked.problem.reason
    with pytest.raises(ImplementationUnavailable, match="syntax error"):
        impl.process.ensure()  # kept: not built again in this process


def test_a_build_is_made_once_and_reused() -> None:
    planned = compiling.plan(GO_STACK)
    messages: list[str] = []
    first = compiling.compile_worker(planned, messages.append)
    again: list[str] = []
    second = compiling.compile_worker(compiling.plan(GO_STACK), again.append)
    assert second.plan.directory == first.plan.directory and again == []
    assert first.hello["implementation"] == "go" and "ML-KEM-768" in first.hello["offers"]


def test_ctrl_c_while_the_go_worker_times_keeps_what_finished(tmp_path: Path) -> None:
    """The fake stands in for the Go worker (the same client and suite), so the signal
    lands inside a run at a known moment: after its warm-up and two timed rounds."""
    fifo = tmp_path / "running"
    os.mkfifo(fifo)
    db = tmp_path / "r.db"
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PQBENCH_TEST_FAKE_STACK": f"block-later:{fifo}",
           "PYTHONPATH": f"{FAKE_SITE}{os.pathsep}{path}" if path else str(FAKE_SITE)}
    proc = subprocess.Popen([sys.executable, "-m", "pqbench", "speed", "x25519", "-o",
                             "derive", "-i", "go", "-i", "cryptography", "--seconds", "0.8",
                             "--rounds", "40", "--db", str(db)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    told: list[str] = []
    reader = threading.Thread(target=lambda: told.append(fifo.read_text()), daemon=True)
    reader.start()
    reader.join(timeout=300)
    assert told, proc.communicate(timeout=60)
    fake_pid = int(told[0])
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole process group
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    (run,) = Store.open(str(db), create=False).load_runs()
    assert run.status == "interrupted"
    rows = {m.implementation: m for m in run.measurements}
    assert len(rows["go"].rounds) >= 2 and len(rows["cryptography"].rounds) >= 2
    with pytest.raises(ProcessLookupError):
        os.kill(fake_pid, 0)  # the worker was stopped, not left behind


def test_ab_between_two_pinned_builds_of_a_go_module(tmp_path: Path) -> None:
    done = run_cli("ab", "ml-kem-512", "-o", "encaps", "-i", "go",
                   "--a", f"gomod:{CIRCL}@v1.6.1", "--b", f"gomod:{CIRCL}@v1.6.5",
                   "--max-seconds", "8", "--json", "--db", str(tmp_path / "r.db"),
                   timeout=900)
    assert done.returncode == 0, done.stderr
    result = _json(done)
    changed = {d["field"]: (d["before"], d["after"]) for d in result["differences"]}
    assert changed[f"libraries.go:{CIRCL}"] == ("v1.6.1", "v1.6.5")
    assert changed["ab_env.PQBENCH_STACK_PINS"] == (f"gomod:{CIRCL}@v1.6.1",
                                                   f"gomod:{CIRCL}@v1.6.5")
    assert [row["implementation"] for row in result["rows"]] == ["go"]


def test_bisect_walks_two_releases_of_a_go_module(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    done = run_cli("bisect", "ml-kem-512", "-o", "encaps", "-i", "go", "--series",
                   f"gomod:{CIRCL}@{{v1.6.1,v1.6.5}}", "--max-seconds", "8", "--json",
                   "--db", str(db), timeout=900)
    assert done.returncode == 0, done.stderr
    result = _json(done)
    assert result["series"]["builds"] == [f"gomod:{CIRCL}@v1.6.1", f"gomod:{CIRCL}@v1.6.5"]
    assert [row["implementation"] for row in result["rows"]] == ["go"]
    runs = Store.open(str(db), create=False).load_runs()
    assert sorted(r.environment["libraries"][f"go:{CIRCL}"] for r in runs) == [
        "v1.6.1", "v1.6.5"]

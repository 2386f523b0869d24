"""`pqbench ab` with real worker processes, real libraries and a real CPU.

Effects of a capability mask are asserted only where /proc/cpuinfo says the CPU has the
capability; on a CPU without it the opposite is asserted (no verdict caused by it, and
"no effect expected" in the differences). No timing is asserted: budgets only bound how
long a session may take.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pqbench.data.store import Store
from tests.helpers import CPU_FLAGS, run_cli
from tests.helpers.jobs import Job


def _ab(db: Path, *args: str, env: dict[str, str] | None = None,
        expect: int = 0) -> dict[str, Any]:
    done = run_cli("ab", *args, "--json", "--db", str(db), env=env, timeout=600)
    assert done.returncode == expect, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def _rows(document: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["algorithm"], r["implementation"], r["operation"]): r
            for r in document["rows"]}


@pytest.fixture(scope="module")
def a_a(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One A/A session: the same configuration on both sides, labelled apart."""
    db = tmp_path_factory.mktemp("ab") / "aa.db"
    document = _ab(db, "sha256", "ml-kem-768", "-o", "hash", "-o", "decaps", "-i",
                   "libcrypto", "-i", "liboqs", "--bytes", "16384", "--a", "here", "--b",
                   "here", "--label-a", "left", "--label-b", "right", "--max-seconds", "24")
    return db, document


@pytest.mark.process
def test_an_a_a_session_gives_no_verdict(a_a) -> None:
    _, document = a_a
    rows = _rows(document)
    assert set(rows) == {("SHA-256", "libcrypto", "hash"),
                         ("ML-KEM-768", "liboqs", "decaps")}
    for row in rows.values():
        assert row["verdict"] in ("no change", "inconclusive"), row
        assert row["causes"] == [] and row["design"] == "pairs"
        assert row["pairs"] >= 12 and row["seconds"] > 0
        assert row["after"] / row["before"] == pytest.approx(row["ratio"])
    assert document["design"] == "pairs" and document["alpha"] == pytest.approx(0.01 / 6)
    assert document["session"]["pinned"] in (True, False)
    fields = {d["field"] for d in document["differences"]}
    assert not any(f.startswith(("knobs", "mask", "libraries", "cpu")) for f in fields)


@pytest.mark.process
def test_both_sides_are_stored_and_compare_recognises_the_session(a_a) -> None:
    db, document = a_a
    runs = document["session"]["runs"]
    store = Store.open(str(db), create=False)
    stored = [store.load_run(run_id) for run_id in runs]
    assert [r.label for r in stored] == ["left", "right"]
    assert [r.settings["ab"]["side"] for r in stored] == ["a", "b"]
    # At least three worker pairs ran: 2J distinct processes, J distinct paddings shared
    # by the two sides of each pair.
    sessions = [r.settings["ab"] for r in stored]
    count = sessions[0]["worker_pairs"]
    assert count >= 3 and sessions[1]["worker_pairs"] == count
    assert sessions[0]["paddings"] == sessions[1]["paddings"]
    assert len(set(sessions[0]["paddings"])) == count
    pids = [pid for info in sessions for pid in info["pids"]]
    assert len(pids) == len(set(pids)) == 2 * count
    for one, other in zip(stored[0].measurements, stored[1].measurements, strict=True):
        assert one.key == other.key and len(one.rounds) == len(other.rounds)
        assert len(one.attributes["ab_order"].split(",")) == len(one.rounds)
        # Round pair i ran on worker pair i mod J, the same on both sides.
        taken = one.attributes["ab_worker"]
        assert taken == other.attributes["ab_worker"]
        assert taken == [i % count for i in range(len(one.rounds))]
        # Rounds are timed in their thread's CPU time (kept also as ab_cpu_ns), never
        # more than the wall time each round also keeps (one thread).
        for m in (one, other):
            assert m.attributes["time_base"] == "cpu"
            cpu, wall = m.attributes["ab_cpu_ns"], m.attributes["wall_ns"]
            assert cpu == [r.elapsed_ns for r in m.rounds]
            assert len(wall) == len(m.rounds)
            assert all(0 < ns <= w * 1.05 for ns, w in zip(cpu, wall, strict=True))
    # Which side runs first is a coin flip per pair (the docs say so): over every pair of
    # the session both orders occur (all one order by chance: about 2 in 10^7).
    orders = [o for m in stored[0].measurements for o in m.attributes["ab_order"].split(",")]
    assert len(orders) >= 24 and set(orders) == {"AB", "BA"}, orders
    done = run_cli("compare", *runs, "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)
    assert again["design"] == "pairs" and "worker pairs as the unit" in again["method"]
    for key, row in _rows(again).items():
        original = _rows(document)[key]
        assert (row["verdict"], row["ratio"], row["ci_low"], row["ci_high"], row["pairs"]) \
            == (original["verdict"], original["ratio"], original["ci_low"],
                original["ci_high"], original["pairs"])
        one = next(m for m in stored[0].measurements if m.key[:3] == key)
        other = next(m for m in stored[1].measurements if m.key[:3] == key)
        assert row["ratio"] == pytest.approx(_worker_pair_ratio(one, other))
    # Exported and imported elsewhere, the two runs are still one session.
    exported = db.parent / "session.json"
    assert run_cli("export", *runs, "-O", str(exported), "--db", str(db)).returncode == 0
    elsewhere = db.parent / "elsewhere.db"
    done = run_cli("import", str(exported), "--db", str(elsewhere))
    assert done.returncode == 0, done.stderr
    done = run_cli("compare", *runs, "--json", "--db", str(elsewhere))
    assert done.returncode == 0, done.stderr
    assert [r["ratio"] for r in json.loads(done.stdout)["rows"]] == \
        [r["ratio"] for r in again["rows"]]
    report = run_cli("report", *runs, "--db", str(db), "--out", str(db.parent / "report"))
    assert report.returncode == 0, report.stderr
    text = (db.parent / "report" / "report.md").read_text()
    assert "pairs of an `ab` session" in text and "left → right" in text


def _worker_pair_ratio(before: Any, after: Any) -> float:
    """The session's ratio recomputed here: per worker pair the median of the Walsh
    averages of its pairs' ln ratios (in CPU time), then the mean over worker pairs."""
    d = np.log([b.ops / b.elapsed_ns for b in after.rounds]) - \
        np.log([a.ops / a.elapsed_ns for a in before.rounds])
    taken = np.array(before.attributes["ab_worker"])
    estimates = []
    for worker in sorted(set(taken.tolist())):
        mine = d[taken == worker]
        walsh = [(mine[i] + mine[j]) / 2 for i in range(mine.size)
                 for j in range(i, mine.size)]
        estimates.append(float(np.median(walsh)))
    return math.exp(float(np.mean(estimates)))


@pytest.mark.process
def test_old_rows_without_worker_pairs_keep_the_round_pair_method(a_a) -> None:
    db, document = a_a
    from pqbench.analysis import compare, signedrank

    store = Store.open(str(db), create=False)
    old = [dataclasses.replace(run, measurements=tuple(
        dataclasses.replace(m, attributes={k: v for k, v in m.attributes.items()
                                           if k != "ab_worker"})
        for m in run.measurements)) for run in
        (store.load_run(run_id) for run_id in document["session"]["runs"])]
    result = compare.compare_runs([old[0]], [old[1]])
    assert result.method.startswith(signedrank.METHOD)
    for row in result.rows:
        one = next(m for m in old[0].measurements if m.key == row.key)
        other = next(m for m in old[1].measurements if m.key == row.key)
        expected = signedrank.compare_pairs(
            [r.ops_per_sec for r in one.rounds], [r.ops_per_sec for r in other.rounds],
            alpha=result.alpha)
        assert (row.ratio, row.ci_low, row.ci_high) == pytest.approx(
            (expected.ratio, expected.ci_low, expected.ci_high))


@pytest.mark.process
def test_a_masked_side_finds_what_the_cpu_has_and_names_the_mask(tmp_path: Path) -> None:
    document = _ab(tmp_path / "mask.db", "aes-256-xts", "sha256", "ml-kem-768", "-o",
                   "encrypt", "-o", "hash", "-o", "encaps", "-o", "decaps", "-i", "libcrypto",
                   "-i", "liboqs", "--bytes", "16384", "--a", "mask:aesni,shani", "--b",
                   "here", "--max-seconds", "30")
    rows = _rows(document)
    notes = {d["field"]: d["note"] for d in document["differences"]}
    assert {"knobs.OPENSSL_ia32cap", "mask.names"} <= set(notes)
    for (algorithm, flag, capability, name) in (("AES-256-XTS", "aes", "aesni", "AES-NI"),
                                                ("SHA-256", "sha_ni", "shani", "SHA-NI")):
        row = rows[(algorithm, "libcrypto", "encrypt" if flag == "aes" else "hash")]
        if flag in CPU_FLAGS:
            assert row["verdict"] == "faster", row
            assert row["ratio"] > 1.5
            cause = row["causes"][0]
            assert (cause["field"], cause["strength"]) == ("knobs.OPENSSL_ia32cap", "strong")
            assert capability in cause["why"]
            assert name not in (notes["knobs.OPENSSL_ia32cap"] or "")
        else:
            assert row["verdict"] in ("no change", "inconclusive"), row
            assert not any(capability in c["why"] for c in row["causes"])
            assert f"this CPU has no {name}" in notes["knobs.OPENSSL_ia32cap"]
            assert "no effect expected" in notes["mask.names"]
    # liboqs's arithmetic is untouched by OpenSSL's capability bits: decapsulation draws
    # no random bytes, so nothing reaches it.
    decaps = rows[("ML-KEM-768", "liboqs", "decaps")]
    assert decaps["verdict"] in ("no change", "inconclusive") and decaps["causes"] == []
    # Encapsulation draws 32 random bytes from OpenSSL's AES DRBG (OQS_USE_OPENSSL; 1.04x
    # measured here): a verdict there is possible, and then that path is named.
    encaps = rows[("ML-KEM-768", "liboqs", "encaps")]
    if encaps["verdict"] in ("faster", "slower"):
        cause = encaps["causes"][0]
        assert cause["field"] == "knobs.OPENSSL_ia32cap" and "random bytes" in cause["why"]


@pytest.mark.process
@pytest.mark.parametrize(("side", "env", "message"), [
    ("cmd:/nonexistent/pqbench", {}, "cannot start worker A"),
    ("cmd:true", {}, "exited with status 0 during start"),
    ("cmd:/bin/echo not a worker", {}, "does not speak the pqbench worker protocol"),
    ("cmd:sh -c 'sleep 60'", {"PQBENCH_WORKER_TIMEOUT": "2"},
     "did not answer start within 2 s"),
], ids=["missing", "exits", "garbage", "hangs"])
def test_a_broken_worker_is_a_clear_error(tmp_path: Path, side: str, env: dict[str, str],
                                          message: str) -> None:
    done = run_cli("ab", "sha256", "--bytes", "64", "-i", "python", "--a", side, "--b",
                   "here", "--max-seconds", "5", "--db", str(tmp_path / "x.db"), env=env,
                   timeout=120)
    assert done.returncode == 1, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.db").exists() or run_cli(
        "runs", "--json", "--db", str(tmp_path / "x.db")).stdout.count('"run_id"') == 0


@pytest.mark.process
def test_a_worker_from_a_command_prefix_joins_a_session(tmp_path: Path) -> None:
    # cmd: starts pqbench through any prefix; here the same Python by its full path.
    document = _ab(tmp_path / "cmd.db", "sha256", "-i", "python", "--bytes", "1024",
                   "--a", "here", "--b", f"cmd:{sys.executable} -m pqbench",
                   "--b", "env:PQBENCH_TEST_SIDE=b", "--max-seconds", "8")
    (row,) = document["rows"]
    assert row["verdict"] in ("no change", "inconclusive")
    assert document["session"]["spec"] == "here"
    store = Store.open(str(tmp_path / "cmd.db"), create=False)
    run_b = store.load_run(document["session"]["runs"][1])
    assert run_b.environment["ab_env"] == {"PQBENCH_TEST_SIDE": "b"}
    assert run_b.settings["ab"]["spec"].startswith("cmd:")


def _workers_with(marker: str) -> list[int]:
    return list(_environments_with(marker))


def _environments_with(marker: str) -> dict[int, dict[bytes, bytes]]:
    """The environment of every process that carries ``marker``, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker.encode() in text:
                found[int(entry.name)] = dict(item.partition(b"=")[::2]
                                              for item in text.split(b"\0") if item)
    return found


@pytest.mark.process
def test_sigterm_stops_the_workers_and_keeps_the_finished_pairs(tmp_path: Path) -> None:
    marker = f"PQBENCH_TEST_MARK=sigterm-{os.getpid()}"
    db = tmp_path / "term.db"
    job = Job("ab", "sha256", "-i", "libcrypto", "--bytes", "1024", "--a", "here",
              "--b", "here", "--threshold", "0", "--max-seconds", "600",
              # half-second rounds: the first look (12 pairs) cannot come before the
              # signal, even when a process effect of 0.1 % would decide an A/A row at
              # threshold 0
              "--round", "0.5", "--worker-pairs", "3", "--db", str(db),
              env={marker.split("=")[0]: marker.split("=")[1]})
    deadline = time.monotonic() + 120
    while len(_workers_with(marker)) < 7 and time.monotonic() < deadline:
        time.sleep(0.5)  # the controller and the 3 x 2 workers carry the marker
    job.wait_for(r"row 1 of 1, [1-9][0-9]* pairs")  # some pairs measured
    # Each worker pair has an environment of its own size, the same on both sides.
    paddings = sorted(len(environ[b"PQBENCH_AB_PADDING"]) for environ
                      in _environments_with(marker).values()
                      if b"PQBENCH_AB_PADDING" in environ)
    assert len(paddings) == 6 and paddings[::2] == paddings[1::2]
    assert len(set(paddings)) == 3
    job.signal(signal.SIGTERM, group=False)
    status, output = job.finish()
    assert status == 143, output  # 128 + SIGTERM, as every command
    assert "interrupted" in output
    assert _workers_with(marker) == []
    store = Store.open(str(db), create=False)
    runs = [store.load_run(info.run_id) for info in store.list_runs()]
    assert sorted(r.settings["ab"]["side"] for r in runs) == ["a", "b"]
    assert {r.status for r in runs} == {"interrupted"}
    by_side = {r.settings["ab"]["side"]: r for r in runs}
    assert [len(m.rounds) for m in by_side["a"].measurements] == \
        [len(m.rounds) for m in by_side["b"].measurements]
    assert sorted(by_side["a"].settings["ab"]["paddings"] * 2) == paddings


@pytest.mark.process
def test_the_worker_speaks_only_the_protocol_on_stdout() -> None:
    requests = [{"type": "pin", "cpu": sorted(os.sched_getaffinity(0))[-1]},
                {"type": "plan", "algorithms": ["SHA-256", "Nonesuch-1"],
                 "implementations": ["python", "nonesuch"], "operations": ["hash"],
                 "block_sizes": [64]},
                {"type": "run", "seconds": 0.01},
                {"type": "prepare", "row": ["SHA-256", "python", "hash", 64]},
                {"type": "run", "seconds": 0.01},
                {"type": "prepare", "row": ["SHA-256", "python", "hash", 128]},
                {"type": "frobnicate"}]
    text = "".join(json.dumps(r) + "\n" for r in requests) + "not json\n" + \
        json.dumps({"type": "quit"}) + "\n"
    done = subprocess.run([sys.executable, "-m", "pqbench", "worker"], input=text,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    hello, pinned, plan, early, prepared, round_, unplanned, unknown, garbage = replies
    assert hello["type"] == "hello" and hello["protocol"] == 1
    assert hello["environment"]["cpu_flags"] is not None
    assert pinned["cpus"] == [requests[0]["cpu"]]
    assert plan["rows"] == [["SHA-256", "python", "hash", 64]]
    assert {p["reason"] for p in plan["problems"]} == {
        "this pqbench does not know Nonesuch-1", "no implementation nonesuch in this pqbench"}
    assert early["type"] == "error" and "before a successful prepare" in early["message"]
    assert prepared["type"] == "prepared" and prepared["checks"]
    assert round_["type"] == "round" and round_["ops"] >= 1 and round_["elapsed_ns"] > 0
    assert 0 < round_["cpu_ns"] <= round_["elapsed_ns"] * 1.05
    assert unplanned["type"] == "error" and "not planned" in unplanned["message"]
    assert unknown["type"] == "error" and garbage["type"] == "error"


@pytest.mark.process
@pytest.mark.parametrize(("args", "message"), [
    (("nosuchalg",), "unknown algorithm"),
    (("sha256", "-i", "nosuchimpl"), "unknown implementation nosuchimpl"),
    (("rsa2048", "-o", "hash"), "nothing to measure"),
    (("sha256", "--round", "0"), "--round"),
    (("sha256", "--threshold", "x"), "'auto' or a fraction"),
    (("sha256", "--worker-pairs", "2"), "--worker-pairs must be between 3 and 64"),
], ids=["algorithm", "implementation", "nothing", "round", "threshold", "worker pairs"])
def test_bad_ab_input_is_a_usage_error(tmp_path: Path, args: tuple[str, ...],
                                       message: str) -> None:
    done = run_cli("ab", *args, "--a", "here", "--b", "here", "--max-seconds", "5",
                   "--db", str(tmp_path / "u.db"), timeout=120)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr



@pytest.mark.process
def test_what_neither_side_offers_is_listed_once_for_both(tmp_path: Path) -> None:
    """Two workers of one machine lack the same rows: one 'not measured' table, not two.
    The system libcrypto offers ML-KEM from OpenSSL 3.5 on; before that both sides lack it."""
    db = tmp_path / "both.db"
    done = run_cli("ab", "ml-kem-768", "-o", "keygen", "-i", "libcrypto", "-i", "liboqs",
                   "--a", "here", "--b", "here", "--max-seconds", "5", "--db", str(db),
                   timeout=600)
    assert done.returncode == 0, done.stderr
    a, b = Store.open(str(db)).load_runs()
    assert a.problems == b.problems
    assert "(side A)" not in done.stderr and "(side B)" not in done.stderr
    assert done.stderr.count("(both sides)") == (1 if a.problems else 0)
    assert done.stderr.count("needs OpenSSL") == len(a.problems)

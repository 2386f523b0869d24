"""A fleet's regression guard end to end, on real runs and real processes: a gate that fails
closed, runs that measured nothing stored as failed, one OS build whatever a run measured,
and every machine named."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pqbench.app.gate import EXIT
from pqbench.app.identity import machine_of
from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.runs import environment, make_run

QUICK = ("--seconds", "0.05", "--rounds", "3")


def _no_liboqs(tmp_path: Path) -> dict[str, str]:
    """An environment in which no liboqs can be found: an empty cache, home and install
    path (this test process set OQS_INSTALL_PATH when it loaded liboqs itself)."""
    empty = tmp_path / "no-liboqs"
    empty.mkdir(exist_ok=True)
    return {"PQBENCH_CACHE_DIR": str(empty / "cache"), "HOME": str(empty),
            "OQS_INSTALL_PATH": str(empty / "none")}


@pytest.mark.process
def test_a_run_that_measured_nothing_is_stored_failed_and_exits_non_zero(tmp_path: Path
                                                                          ) -> None:
    db = str(tmp_path / "r.db")
    done = run_cli("speed", "ml-kem-768", "-i", "liboqs", *QUICK, "--db", db, "--json",
                   env=_no_liboqs(tmp_path))
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "failed" and document["results"] == []
    assert "nothing was measured (liboqs: unavailable, liboqs not found" in done.stderr
    (stored,) = Store.open(db).load_runs()
    assert stored.status == "failed" and stored.run_id in done.stderr


@pytest.mark.process
def test_the_gate_fails_closed_on_a_vanished_row_and_a_candidate_that_measured_nothing(
        tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    base = run_cli("speed", "x25519", "ed25519", "-i", "cryptography", *QUICK, "--label",
                   "baseline", "--db", db)
    assert base.returncode == 0, base.stderr
    lost = run_cli("speed", "x25519", "-i", "cryptography", *QUICK, "--label", "candidate",
                   "--db", db)
    assert lost.returncode == 0, lost.stderr
    gated = run_cli("compare", "--by", "label", "baseline", "candidate", "--fail-on",
                    "slower,undecided", "--db", db)
    assert gated.returncode == EXIT, gated.stderr
    named = re.findall(r"^\s+(Ed25519 \[cryptography\] \w+): gone: baseline measured it, "
                       r"candidate did not", gated.stderr, re.M)
    assert sorted(named) == ["Ed25519 [cryptography] sign", "Ed25519 [cryptography] verify"]
    # Without a gate the same comparison passes: it reports what went.
    assert run_cli("compare", "--by", "label", "baseline", "candidate", "--db",
                   db).returncode == 0
    # An implementation asked for by name that was unavailable in the candidate.
    partial = run_cli("speed", "x25519", "ml-kem-768", "-i", "cryptography", "-i", "liboqs",
                      *QUICK, "--label", "partial", "--db", db, env=_no_liboqs(tmp_path))
    assert partial.returncode == 0, partial.stderr  # cryptography's rows were measured
    gated = run_cli("compare", "--by", "label", "baseline", "partial", "--fail-on", "slower",
                    "--db", db)
    assert gated.returncode == EXIT, gated.stderr
    assert re.search(r"ML-KEM-768 \[liboqs\]: asked for and unavailable: liboqs not found",
                     gated.stderr)
    # A candidate whose library went missing measured nothing: every row is named.
    empty = run_cli("speed", "ml-kem-768", "-i", "liboqs", *QUICK, "--label", "empty",
                    "--db", db, env=_no_liboqs(tmp_path))
    assert empty.returncode == 1
    gated = run_cli("compare", "--by", "label", "baseline", "empty", "--fail-on", "slower",
                    "--json", "--db", db)
    assert gated.returncode == EXIT, gated.stderr
    failures = json.loads(gated.stdout)["gate"]["failures"]
    assert {"what": "X25519 [cryptography] derive",
            "why": "gone: baseline measured it, empty did not"} in failures
    assert failures[-1]["why"] == "measured nothing"
    assert "measured nothing" in gated.stderr


@pytest.mark.process
@pytest.mark.slow
def test_adding_a_foreign_stack_to_a_run_keeps_one_build_one_build(tmp_path: Path) -> None:
    """Two runs of one OS build, one with `-i go` added: one history point of two runs for
    the system library's row, and `compare --by os_build` finds one build, nothing gone."""
    db = str(tmp_path / "r.db")
    first = run_cli("speed", "x25519", "-i", "libcrypto", *QUICK, "--db", db)
    assert first.returncode == 0, first.stderr
    second = run_cli("speed", "x25519", "-i", "libcrypto", "-i", "go", *QUICK, "--db", db,
                     timeout=900)
    assert second.returncode == 0, second.stderr
    stored = Store.open(db).load_runs()
    # Oldest first, but two runs that start within one second tie on their start (stored
    # to the second): the run with Go is found by what it asked for, not by its place.
    (with_go,) = [run for run in stored if "go" in run.settings["implementations"]]
    assert any(name.startswith("go:") for name in with_go.environment.libraries), (
        "the Go worker reported no libraries of its own", with_go.problems, second.stderr)
    shown = run_cli("history", "x25519", "-i", "libcrypto", "-o", "derive", "--json",
                    "--db", db)
    assert shown.returncode == 0, shown.stderr
    (series,) = json.loads(shown.stdout)["series"]
    (point,) = series["points"]
    assert sorted(point["runs"]) == sorted(r.run_id for r in stored)
    by_build = run_cli("compare", "--by", "os_build", "--db", db)
    assert by_build.returncode != 0 and "need at least two groups" in by_build.stderr
    assert "gone" not in by_build.stdout + by_build.stderr


def _store_two_machines(db: str) -> list:
    """Two machines under one OS build string, a CPU model apart, two builds each."""
    runs = []
    for host, model, factor in (("m1", "Intel(R) Core(TM) i7-8559U", 1.0),
                                ("m2", "AMD EPYC 9B14", 1.8)):
        for build, day in (("18E226", 1), ("18F132", 2)):
            runs.append(make_run(f"{host}-{build}", seed=len(runs), factor=factor,
                                 started_at=f"2026-01-0{day}T00:00:00+00:00",
                                 env=environment(hostname=host, cpu__model=model,
                                                 os_build=build)))
    store = Store.open(db)
    store.save_runs(runs)
    store.close()
    return runs


def test_history_gives_each_machine_its_own_series_and_names_it(tmp_path: Path) -> None:
    from tests.helpers import invoke

    db = str(tmp_path / "r.db")
    runs = _store_two_machines(db)
    shown = invoke("history", "ml-kem-768", "-o", "encaps", "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    series = json.loads(shown.stdout)["series"]
    assert [s["machine"]["host"] for s in series] == ["m1", "m2"]
    for one, host in zip(series, ("m1", "m2"), strict=True):
        assert [p["runs"] for p in one["points"]] == [[f"{host}-18E226"], [f"{host}-18F132"]]
    table = invoke("history", "ml-kem-768", "-o", "encaps", "--db", db)
    unwrapped = " ".join(table.stdout.split())
    for run in runs[::2]:
        assert f"[liboqs] on {machine_of(run).name}" in unwrapped
    only = invoke("history", "ml-kem-768", "-o", "encaps", "--machine", "m2", "--json",
                  "--db", db)
    assert [s["machine"]["host"] for s in json.loads(only.stdout)["series"]] == ["m2"]
    unknown = invoke("history", "ml-kem-768", "--machine", "m9", "--db", db)
    assert unknown.returncode == 1 and "machines: 'm1 (" in unknown.stderr


def test_compare_of_two_machines_refuses_and_names_both(tmp_path: Path) -> None:
    from tests.helpers import invoke

    db = str(tmp_path / "r.db")
    runs = _store_two_machines(db)
    refused = invoke("compare", runs[0].run_id, runs[2].run_id, "--db", db)
    assert refused.returncode == 1
    assert "m1 (" in refused.stderr and "m2 (" in refused.stderr
    assert "--cross-machine" in refused.stderr


@pytest.mark.process
def test_speed_and_show_name_the_machine(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    done = run_cli("speed", "x25519", "-i", "cryptography", *QUICK, "--db", db)
    assert done.returncode == 0, done.stderr
    (run,) = Store.open(db).load_runs()
    name = machine_of(run).name
    assert run.environment.hostname in name and f"{run.run_id} (complete) on {name}" in \
        done.stdout.replace("\n", " ")
    shown = run_cli("show", "--db", db)
    assert f"on {name}" in shown.stderr.replace("\n", " ")


def test_show_with_no_run_named_shows_the_newest(tmp_path: Path) -> None:
    from tests.helpers import invoke

    db = str(tmp_path / "r.db")
    store = Store.open(db)
    store.save_run(make_run("20260101-older", seed=1, started_at="2026-01-01T00:00:00+00:00"))
    store.save_run(make_run("20260102-newer", seed=2, started_at="2026-01-02T00:00:00+00:00"))
    store.close()
    shown = invoke("show", "--db", db)
    assert shown.returncode == 0, shown.stderr
    said = " ".join((shown.stdout + shown.stderr).split())
    assert "20260102-newer" in said and "20260101-older" not in said


@pytest.mark.process
def test_undecided_fails_the_gate_where_single_runs_are_too_few(tmp_path: Path) -> None:
    """Two single `files hash` runs (wall time: no prior to judge one against one, so too
    few runs): `--fail-on undecided` fails, `--fail-on slower` does not."""
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 4096)
    db = str(tmp_path / "r.db")
    for label in ("a", "b"):
        done = run_cli("files", "hash", str(data), "--label", label, "--db", db)
        assert done.returncode == 0, done.stderr
    undecided = run_cli("compare", "--by", "label", "a", "b", "--fail-on", "undecided",
                        "--db", db)
    assert undecided.returncode == EXIT, undecided.stderr
    assert "too few runs" in undecided.stderr
    assert run_cli("compare", "--by", "label", "a", "b", "--fail-on", "slower",
                   "--db", db).returncode == 0

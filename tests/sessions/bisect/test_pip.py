"""`pqbench bisect` over real pyca/cryptography releases installed from the registry.

Ten releases around a change of the bundled OpenSSL (3.3 in 43.0.3, 3.4 in 44.0.x, 3.5 in
45.0.x). The builds are made once into pqbench's per-user cache (``pip:`` provisioning)
and reused by later runs. The expected change points come from this machine: every
neighbouring pair is first measured with `pqbench ab`; `bisect` must then find exactly
the pairs that changed, with fewer sessions. Nothing here knows where AES-256-GCM
changed speed, or whether it did.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.deps import PIP_VERSIONS, PIP_WORKER_VERSION

VERSIONS = PIP_VERSIONS  # made before the suite by `make test-deps`
BUILDS = tuple(f"pip:cryptography=={v}" for v in VERSIONS)
#: Each session's budget, the same for every pair and for bisect, so their answers are
#: comparable. The jump between OpenSSL 3.4 and 3.5 (about 1.8x) is decided at the first look
#: (about 5 s); a flat pair whose worker pairs differ by a few percent from their layout
#: stays inconclusive however long it runs, so a longer budget only made the fixture slower
#: (95-171 s with 20 s, most of the spread between `make test` runs).
ROW = ("aes-256-gcm", "-o", "encrypt", "-i", "cryptography", "--bytes", "16384",
       "--max-seconds", "10")


def _json(*args: str) -> dict[str, Any]:
    done = run_cli(*args, "--json", timeout=1800)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = str(tmp_path_factory.mktemp("pip") / "series.db")
    pairs = [_json("ab", *ROW, "--a", before, "--b", after, "--db", db)
             for before, after in itertools.pairwise(BUILDS)]
    found = _json("bisect", *ROW, "--series",
                  "pip:cryptography=={" + ",".join(VERSIONS) + "}", "--db", db)
    return {"db": db, "pairs": pairs, "bisect": found}


@pytest.mark.process
def test_bisect_finds_what_every_pair_found_with_fewer_sessions(measured) -> None:
    expected = set()
    for index, document in enumerate(measured["pairs"]):
        (row,) = document["rows"]
        if row["verdict"] in ("faster", "slower"):
            expected.add((index, index + 1, row["verdict"]))
    found = measured["bisect"]
    (row,) = found["rows"]
    assert {(c["before"]["position"], c["after"]["position"], c["comparison"]["verdict"])
            for c in row["change_points"]} == expected
    assert found["series"]["builds"] == list(BUILDS)
    assert len(found["sessions"]) < len(BUILDS) - 1
    assert found["unusable"] == []
    for point in row["change_points"]:
        fields = {c["field"] for c in point["comparison"]["causes"]}
        assert "libraries.cryptography" in fields


@pytest.mark.process
def test_each_build_loads_its_own_release_and_records_its_openssl(measured) -> None:
    store = Store.open(measured["db"], create=False)
    seen: dict[str, set[str]] = {}
    for session in measured["bisect"]["sessions"]:
        for run_id in session["runs"]:
            run = store.load_run(run_id)
            libraries = run.environment["libraries"]
            build = run.settings["bisect"]["build"]
            assert build == f"pip:cryptography=={libraries['cryptography']}"
            assert run.environment["ab_env"]["PQBENCH_BUILD"] == build
            seen.setdefault(libraries["cryptography"], set()).add(
                libraries["cryptography_openssl"])
    # One OpenSSL per release, and releases of one major version differ from the others.
    assert all(len(openssl) == 1 for openssl in seen.values())
    assert len({next(iter(o)) for o in seen.values()}) > 1


@pytest.mark.process
def test_an_old_release_says_what_it_does_not_offer(measured, tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    done = run_cli("ab", "ml-kem-768", "-i", "cryptography", "-o", "encaps",
                   "--a", BUILDS[0], "--b", "here", "--max-seconds", "10", "--db", str(db),
                   timeout=600)
    # Side A's release does not offer the row: nothing measured there, so ab ends 1.
    assert done.returncode == 1, done.stderr
    assert "nothing was measured (cryptography: not offered" in done.stderr
    assert "Traceback" not in done.stderr
    (old,) = [run for run in Store.open(str(db), create=False).load_runs()
              if run.settings["ab"]["side"] == "a"]
    # cryptography 43 has no ML-KEM module: the worker still runs and says so.
    assert [(p.algorithm, p.kind, p.reason) for p in old.problems] == [
        ("ML-KEM-768", "not offered", "cryptography 43.0.3 does not expose ML-KEM-768")]
    assert old.measurements == ()


@pytest.mark.process
def test_a_release_without_hazmat_decrepit_still_prepares_triple_des() -> None:
    from pqbench.sessions import sides
    from pqbench.sessions.ab.client import Worker

    # cryptography 42 keeps TripleDES among the primitives (43 moved it to decrepit).
    worker = Worker("old", sides.parse([f"pip:cryptography=={PIP_WORKER_VERSION}"], "a"))
    try:
        worker.greet()
        assert worker.environment["libraries"]["cryptography"] == "42.0.8"
        plan = worker.request({"type": "plan", "algorithms": ["des-ede3-cbc"],
                               "implementations": ["cryptography"],
                               "operations": ["encrypt"], "block_sizes": [16384]})
        assert plan["rows"] == [["DES-EDE3-CBC", "cryptography", "encrypt", 16384]]
        prepared = worker.request({"type": "prepare", "row": plan["rows"][0]})
        assert prepared["type"] == "prepared" and "round trip" in prepared["checks"]
        round_ = worker.request({"type": "run", "seconds": 0.05})
        assert round_["ops"] >= 1
    finally:
        worker.close()

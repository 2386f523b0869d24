"""Two real OS builds side by side: this host's userland against
the Debian 13 userland built (or reused) in pqbench's cache, in one short `pqbench ab`
session, both workers pinned to one CPU.

Debian 13's OpenSSL 3.5 offers ML-KEM and ML-DSA in the system libcrypto. On a host whose
libcrypto is older (Debian 12: OpenSSL 3.0), those rows must appear on the trixie side
only, checked before they were timed, with the host's reason ("needs OpenSSL >= 3.5") and
the OpenSSL versions named in the news; on a host with OpenSSL 3.5 or later they must be
compared like any row instead. The expectations come from the host's own fingerprint,
never from the output under test. The session costs about 30 s (20 s of measuring, the
rest starting the two workers); the userland itself is the `trixie` fixture's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from pqbench.data.store import Store
from pqbench.libraries.userland import Userland
from pqbench.measure import environment
from tests.helpers import NAME, run_cli, starts_processes

NEW_IN_35 = {"ML-KEM-768": ("keygen", "encaps", "decaps"),
             "ML-DSA-65": ("keygen", "sign", "verify")}


def _openssl(version: str) -> tuple[int, int]:
    found = re.match(r"OpenSSL (\d+)\.(\d+)", version)
    assert found, version
    return int(found[1]), int(found[2])


@pytest.fixture(scope="module")
@starts_processes
def session(trixie: Userland, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    db = tmp_path_factory.mktemp("os-builds") / "os.db"
    done = run_cli("ab", "ml-kem-768", "ml-dsa-65", "x25519", "-i", "libcrypto", "-i",
                   "liboqs", "--a", "here", "--b", f"userland:{NAME}", "--label-a", "host",
                   "--label-b", "trixie", "--max-seconds", "20", "--json", "--db", str(db),
                   timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return db, json.loads(done.stdout), environment.collect()


@pytest.mark.process
def test_the_new_openssls_pq_rows_appear_checked_with_the_reason(session) -> None:
    db, document, host = session
    host_openssl = host["libraries"]["system_libcrypto"]
    news = document["news"]
    appeared = {(a["algorithm"], a["implementation"]): a for a in news["appeared"]}
    compared = {(r["algorithm"], r["implementation"], r["operation"]) for r in document["rows"]}
    if _openssl(host_openssl) >= (3, 5):  # a host that already has them: compared rows
        assert not appeared
        assert {(alg, "libcrypto", op) for alg, ops in NEW_IN_35.items()
                for op in ops} <= compared
        return
    assert set(appeared) == {(alg, "libcrypto") for alg in NEW_IN_35}
    for algorithm, operations in NEW_IN_35.items():
        entry = appeared[(algorithm, "libcrypto")]
        assert [r["operation"] for r in entry["rows"]] == list(operations)
        assert entry["reason"] == (f"not offered: {algorithm} needs OpenSSL >= 3.5; this "
                                   f"libcrypto is {' '.join(host_openssl.split()[:2])}")
        assert entry["checks"] == ["native check"]  # decaps/verify checked in C, then timed
        for row in entry["rows"]:
            assert row["rate"] > 0
            assert row["fastest_other"]["implementation"] == "liboqs"
        assert not any((algorithm, "libcrypto", op) in compared for op in operations)
    store = Store.open(str(db), create=False)
    host_run, trixie_run = (store.load_run(r) for r in document["session"]["runs"])
    assert trixie_run.problems == () and trixie_run.settings["ab"]["spec"] == f"userland:{NAME}"
    assert {(v.algorithm, v.implementation) for v in trixie_run.verifications} >= {
        (alg, "libcrypto") for alg in NEW_IN_35}
    assert {(p.algorithm, p.implementation, p.operation, p.kind) for p in host_run.problems} \
        == {(alg, "libcrypto", op, "not offered") for alg, ops in NEW_IN_35.items()
            for op in ops}
    # The liboqs rows and X25519 in libcrypto are measured on both sides, pair by pair.
    assert {("ML-KEM-768", "liboqs", "encaps"), ("X25519", "libcrypto", "derive")} <= compared
    assert document["design"] == "pairs"


def test_the_openssl_upgrade_is_named_and_the_kernel_kept(session) -> None:
    _, document, host = session
    news = document["news"]
    builds = {b["topic"]: b for b in news["builds"]}
    openssl = builds["system libcrypto"]
    assert openssl["before"] == host["libraries"]["system_libcrypto"]
    assert _openssl(openssl["after"]) >= (3, 5) and openssl["after"].startswith("OpenSSL 3.")
    assert builds["OS userland"]["after"].startswith("Debian GNU/Linux 13")
    assert builds["C library"]["after"].startswith("glibc ")
    assert {"kernel", "CPU", "liboqs"} <= set(news["unchanged"])  # same machine, same build
    fields = {d["field"]: d for d in document["differences"]}
    assert fields["libraries.system_libcrypto"]["after"] == openssl["after"]
    # Whatever moved in libcrypto or liboqs names the OpenSSL upgrade as a likely cause.
    for change in news["changes"]:
        if change["implementation"] in ("libcrypto", "liboqs"):
            assert {"topic": "system libcrypto", "strength": "likely"} in change["causes"]
    for group in news["causes"]:
        if group["topic"] == "system libcrypto":
            assert (group["before"], group["after"]) == (openssl["before"], openssl["after"])


@pytest.mark.process
def test_compare_and_report_lead_with_the_news(session, tmp_path: Path) -> None:
    db, document, host = session
    runs = document["session"]["runs"]
    terminal = run_cli("compare", *runs, "--db", str(db))
    assert terminal.returncode == 0, terminal.stderr
    text = " ".join(terminal.stdout.split())
    assert text.startswith("what changed: host → trixie")
    assert text.index("system libcrypto:") < text.index("host → trixie (pairs")
    out = tmp_path / "report"
    done = run_cli("report", *runs, "--db", str(db), "--out", str(out))
    assert done.returncode == 0, done.stderr
    tokens = MarkdownIt("commonmark").enable("table").parse(
        (out / "report.md").read_text("utf-8"))
    inline = [t.content for t in tokens if t.type == "inline"]
    # The summary at the top tells the story: the builds, then what appeared or moved.
    story = next(i for i, line in enumerate(inline) if line.startswith("**host → trixie**: "))
    assert f"system libcrypto {host['libraries']['system_libcrypto']} → OpenSSL 3." \
        in inline[story]
    libc = next(row for row in _table_rows(tokens) if row[:1] == ["C library"])
    assert libc[1] == host["platform"]["libc"] and libc[2].startswith("glibc ")
    if _openssl(host["libraries"]["system_libcrypto"]) < (3, 5):
        assert inline[story + 1].startswith(
            "6 row(s) appeared: ML-KEM-768 \\[libcrypto\\], ML-DSA-65 \\[libcrypto\\] (on host: "
            "not offered: ML-KEM-768 needs OpenSSL \\>= 3.5")
        headings = [t.content for t in tokens if t.type == "inline"
                    and t.content.startswith("**")]
        # Each side's lead first (a session's report leads each side with its figures),
        # then what changed: the builds, then what appeared.
        changed = headings.index("**What changed** from host to trixie:")
        assert headings[1:changed] == ["**A: host**:", "**B: trixie**:"], headings
        assert headings[changed:changed + 3] == ["**What changed** from host to trixie:",
                                                 "**builds**", "**appeared on trixie**"]
        # Not measured holds the host's reasons, marked as the host's.
        rows = _table_rows(tokens)
        assert ["ML-KEM-768", "libcrypto", "encaps", "not offered: ML-KEM-768 needs OpenSSL "
                "\\>= 3.5; this libcrypto is " + " ".join(
                    host["libraries"]["system_libcrypto"].split()[:2]), "host"] in rows


def _table_rows(tokens: list[Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows and token.level >= 4:
            rows[-1].append(token.content)
    return rows

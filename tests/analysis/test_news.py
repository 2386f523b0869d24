"""What changed between two builds (`pqbench.news`): the record compare and report lead with.

Synthetic Debian 12 and Debian 13 runs with planted effects: the system OpenSSL moves from
3.0 to 3.5, libcrypto gains ML-KEM (a row that appears, with the reason Debian 12 gave),
one row fails its checks on Debian 13 (a row that goes), Ed25519 signs 1.5x faster and
liboqs encapsulates 1.3x faster. Expected figures are computed here from the samples.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from markdown_it import MarkdownIt

from pqbench.analysis import news
from pqbench.analysis.compare import compare_runs
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult
from pqbench.views import news as text
from pqbench.views import news as whatchanged
from tests.helpers.runs import environment, make_ab_session, make_runs

SHARED = (("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
          ("X25519", "libcrypto", "derive", None, 30_000.0),
          ("Ed25519", "libcrypto", "sign", None, 20_000.0))
NEW = (("ML-KEM-768", "libcrypto", "keygen", None, 12_000.0),
       ("ML-KEM-768", "libcrypto", "encaps", None, 16_000.0))
NEEDS_35 = "ML-KEM-768 needs OpenSSL >= 3.5; this libcrypto is OpenSSL 3.0.19"
BROKEN = "derive: shared secrets differ"


def _debian(version: str, codename: str, openssl: str, glibc: str) -> dict[str, Any]:
    env = environment(os__version=f"{version} ({codename})",
                      os_build=f"debian-{version}/6.18",
                      libraries__system_libcrypto=openssl, libraries__python="3.11.7")
    env["libraries"]["libcrypto"] = openssl
    env["platform"] = {"userland": f"Debian GNU/Linux {version} ({codename})",
                       "libc": glibc, "kernel": "6.18 #1"}
    env["library_details"] = {"liboqs": {"build": {"OQS_USE_OPENSSL": True}}}
    return env


def _with(runs: list[Run], **changes: Any) -> list[Run]:
    return [replace(run, **changes) for run in runs]


@pytest.fixture(scope="module")
def story() -> tuple[list[Run], list[Run]]:
    bookworm = _with(
        make_runs("b", 5, seed=1, drift=0.01, label="bookworm", rows=SHARED,
                  env=_debian("12", "bookworm", "OpenSSL 3.0.19", "glibc 2.36")),
        problems=(Problem("ML-KEM-768", "libcrypto", "not offered", NEEDS_35),))
    trixie = make_runs("t", 5, seed=2, drift=0.01, label="trixie", start_day=2,
                       rows=(*SHARED[:1], *SHARED[2:], *NEW),
                       factors={"Ed25519": 1.5, "ML-KEM-768": 1.3},
                       env=_debian("13", "trixie", "OpenSSL 3.5.7", "glibc 2.41"))
    trixie = _with(trixie, problems=(Problem("X25519", "libcrypto", "failed verification",
                                             BROKEN, "derive"),),
                   verifications=(Verification("ML-KEM-768", "libcrypto",
                                               ("native check",)),))
    return bookworm, trixie


def _level(runs: list[Run], key: tuple[str, str, str, int | None]) -> float:
    """The geometric mean of the runs' median rounds (the run as the unit)."""
    medians = [np.median(np.log(m.samples)) for run in runs for m in run.measurements
               if m.key == key]
    return math.exp(float(np.mean(medians)))


def test_a_row_that_appeared_says_why_it_was_missing_and_what_it_measured(story) -> None:
    bookworm, trixie = story
    result = compare_runs(bookworm, trixie)
    found = result.news
    assert found is not None and (found.before_name, found.after_name) == ("bookworm", "trixie")
    (appeared,) = found.appeared
    assert (appeared.algorithm, appeared.implementation) == ("ML-KEM-768", "libcrypto")
    assert appeared.reason == f"not offered: {NEEDS_35}"
    assert appeared.checks == ("native check",)
    assert [r.operation for r in appeared.rows] == ["keygen", "encaps"]  # measured order
    for row in appeared.rows:
        key = ("ML-KEM-768", "libcrypto", row.operation, None)
        assert row.rate == pytest.approx(_level(trixie, key), rel=1e-9)
    keygen, encaps = appeared.rows
    assert keygen.peer is None  # nothing else measured ML-KEM-768 keygen on trixie
    liboqs = next(r for r in result.rows if r.key == ("ML-KEM-768", "liboqs", "encaps", None))
    assert (encaps.peer, encaps.peer_rate) == ("liboqs", pytest.approx(liboqs.after))


def test_a_row_that_failed_its_checks_is_gone_with_the_failure(story) -> None:
    bookworm, trixie = story
    found = compare_runs(bookworm, trixie).news
    assert found is not None
    (gone,) = found.disappeared
    assert (gone.algorithm, gone.implementation, gone.reason) == (
        "X25519", "libcrypto", f"failed verification: {BROKEN}")
    assert gone.rows[0].rate == pytest.approx(
        _level(bookworm, ("X25519", "libcrypto", "derive", None)), rel=1e-9)
    assert [(f.side, f.algorithm, f.operation, f.reason) for f in found.failed] == [
        ("after", "X25519", "derive", BROKEN)]


def test_one_fact_of_the_build_is_named_once_under_its_topic(story) -> None:
    found = compare_runs(*story).news
    assert found is not None
    builds = {c.topic: c for c in found.builds}
    assert list(builds) == ["OS userland", "C library", "system libcrypto"]
    userland = builds["OS userland"]
    assert (userland.field, userland.before, userland.after) == (
        "platform.userland", "Debian GNU/Linux 12 (bookworm)", "Debian GNU/Linux 13 (trixie)")
    assert set(userland.fields) == {"platform.userland", "os.version", "os_build"}
    openssl = builds["system libcrypto"]
    assert (openssl.field, openssl.before, openssl.after) == (
        "libraries.system_libcrypto", "OpenSSL 3.0.19", "OpenSSL 3.5.7")
    assert set(openssl.fields) == {"libraries.system_libcrypto", "libraries.libcrypto"}
    # What the upgrade kept is said too: the same kernel, CPU and Python isolate the userland.
    assert {"kernel", "CPU", "Python", "liboqs", "cryptography"} <= set(found.unchanged)
    assert found.other_fields == 0


def test_the_largest_changes_lead_with_their_causes_told_once(story) -> None:
    result = compare_runs(*story)
    found = result.news
    assert found is not None
    assert dict(found.verdicts) == {"faster": 2}
    ed, kem = found.changes
    assert ed.key == ("Ed25519", "libcrypto", "sign", None) and ed.row.ratio == pytest.approx(
        1.5, rel=0.03)
    # A highlight refers to the compared row itself: one model, no copied figures.
    assert ed.row is result.rows[0] and kem.row is result.rows[1]
    assert kem.key == ("ML-KEM-768", "liboqs", "encaps", None)
    # Three fields say "OpenSSL changed": the row names the topic once, weak ones omitted.
    assert ed.causes == (("system libcrypto", "likely"),)
    assert kem.causes == (("system libcrypto", "likely"),)
    first = found.causes[0]
    assert (first.topic, first.strength, first.before, first.after) == (
        "system libcrypto", "likely", "OpenSSL 3.0.19", "OpenSSL 3.5.7")
    # Two explanations, each with the row it applies to (no row listed twice).
    told = {r.why: r.rows for r in first.reasons}
    assert told["the library behind libcrypto changed"] == (ed.key,)
    (via_liboqs,) = [why for why in told if "OQS_USE_OPENSSL" in why]
    assert told[via_liboqs] == (kem.key,)
    # The userland is one weak cause, told by its most telling field.
    weak = {g.topic: g for g in found.causes if g.strength == "weak"}
    assert [r.why for r in weak["OS userland"].reasons] == [
        "another OS release rebuilds every library with another compiler"]
    assert weak["OS userland"].rows == (ed.key, kem.key)


def test_the_news_is_in_the_json_document(story) -> None:
    document = json.loads(json.dumps(compare_runs(*story).as_dict()))
    found = document["news"]
    assert found["appeared"][0]["reason"] == f"not offered: {NEEDS_35}"
    assert found["appeared"][0]["rows"][1]["fastest_other"]["implementation"] == "liboqs"
    assert found["builds"][2] == {
        "topic": "system libcrypto", "field": "libraries.system_libcrypto",
        "before": "OpenSSL 3.0.19", "after": "OpenSSL 3.5.7",
        "fields": ["libraries.system_libcrypto", "libraries.libcrypto"], "note": None}
    assert found["verdicts"] == {"faster": 2} and found["compared"] == 2
    assert found["changes"][0]["causes"] == [{"topic": "system libcrypto",
                                              "strength": "likely"}]
    assert found["failed"][0]["side"] == "after"


def test_a_one_sided_row_of_an_ab_session_is_levelled_in_cpu_time() -> None:
    run_a, run_b = make_ab_session("s1", seed=5)
    # B alone offers ML-KEM-768 in libcrypto: 5 rounds, each 1000 operations in 50 ms of
    # wall time of which the worker got 40, 45, 50, 40, 45 ms of CPU time.
    cpu_ms = (40, 45, 50, 40, 45)
    alone = Measurement("ML-KEM-768", "libcrypto", "decaps",
                        tuple(LoopResult(1000, 50_000_000) for _ in cpu_ms),
                        attributes={"ab_cpu_ns": [ms * 1_000_000 for ms in cpu_ms]})
    run_b = replace(run_b, measurements=(*run_b.measurements, alone))
    run_a = replace(run_a, problems=(Problem("ML-KEM-768", "libcrypto", "not offered", "no",
                                             "decaps"),
                                     Problem("ML-KEM-768", "libcrypto", "not offered",
                                             "another operation's reason", "keygen")))
    result = compare_runs([run_a], [run_b])
    assert result.paired and result.news is not None
    (appeared,) = result.news.appeared
    expected = math.exp(np.mean([math.log(1000 / (ms / 1000)) for ms in cpu_ms]))
    assert appeared.rows[0].rate == pytest.approx(expected, rel=1e-12)
    assert appeared.reason == "not offered: no" and appeared.checks == ()


def test_an_unexplained_row_and_a_row_without_reason_are_said_so() -> None:
    before = make_runs("x", 5, seed=3, drift=0.01, rows=SHARED[:2])
    after = make_runs("y", 5, seed=4, drift=0.01, rows=SHARED, start_day=2,
                      factors={"X25519": 2.0})
    found = compare_runs(before, after).news
    assert found is not None
    assert found.builds == () and found.unexplained == (("X25519", "libcrypto", "derive",
                                                         None),)
    assert found.appeared[0].reason == news.NO_REASON
    assert found.changes[0].causes == ()


# --- the text every renderer shows ------------------------------------------------------

FORMATS = text.Formats(rate=lambda value, unit: f"{value:.0f} {unit}",
                       ratio=lambda value: f"{value:.2f}x")


def test_items_read_in_order_with_figures_in_the_callers_format(story) -> None:
    found = compare_runs(*story).news
    assert found is not None
    items = text.items(found, FORMATS)
    assert [i.heading for i in items] == ["builds", "appeared on trixie", "gone on trixie",
                                          "failed its checks", "changes", "causes"]
    builds = items[0].lines
    assert builds[2] == "system libcrypto: OpenSSL 3.0.19 → OpenSSL 3.5.7"
    assert builds[3].startswith("the same on both: kernel")
    appeared = items[1].lines[0]
    rate = found.appeared[0].rows[1]
    # Beside it the rate through liboqs, not a ratio no interval backs (two unpaired rates).
    assert (f"encaps {rate.rate:.0f} ops/s (liboqs: {rate.peer_rate:.0f} ops/s)"
            in appeared)
    assert "x of liboqs" not in appeared
    assert appeared.endswith(f"checked first (native check); on bookworm: not offered: "
                             f"{NEEDS_35}")
    changes = items[4].lines
    assert changes[0] == "2 row(s) measured on both sides (runs as the unit): 2 faster"
    assert changes[1].startswith("faster: Ed25519 sign [libcrypto] 1.5")
    assert changes[1].endswith("causes: system libcrypto (likely)")
    causes = items[5].lines
    assert causes[0] == ("system libcrypto (OpenSSL 3.0.19 → OpenSSL 3.5.7), likely for "
                         "Ed25519 sign [libcrypto]: the library behind libcrypto changed")
    assert causes[1].startswith("system libcrypto (OpenSSL 3.0.19 → OpenSSL 3.5.7), likely "
                                "for ML-KEM-768 encaps [liboqs]: liboqs built with "
                                "OQS_USE_OPENSSL")
    assert list(causes[2:]) == [
        "C library (glibc 2.36 → glibc 2.41): weak: the C library (memcpy, malloc) sits "
        "under every implementation",
        "OS userland (Debian GNU/Linux 12 (bookworm) → Debian GNU/Linux 13 (trixie)): weak: "
        "another OS release rebuilds every library with another compiler"]
    headline, points = text.story(found, FORMATS)
    assert headline == ("OS userland Debian GNU/Linux 12 (bookworm) → Debian GNU/Linux 13 "
                        "(trixie); C library glibc 2.36 → glibc 2.41; system libcrypto "
                        "OpenSSL 3.0.19 → OpenSSL 3.5.7; the same kernel, liboqs, "
                        "cryptography, Python, CPU")
    assert points[0] == (f"2 row(s) appeared: ML-KEM-768 [libcrypto] (on bookworm: not "
                         f"offered: {NEEDS_35})")
    assert points[1] == (f"1 row(s) went away: X25519 [libcrypto] (on trixie: failed "
                         f"verification: {BROKEN})")
    assert points[2].startswith("of the 2 row(s) measured on both sides, 2 got faster and 0 "
                                "slower; the largest: Ed25519 sign [libcrypto] 1.5")
    assert points[2].endswith("(system libcrypto (likely))")
    assert points[3] == "1 implementation(s) failed their checks"


def test_markdown_nests_each_line_under_its_heading(story) -> None:
    found = compare_runs(*story).news
    assert found is not None
    tokens = MarkdownIt("commonmark").parse(whatchanged.markdown(found))
    depth, headings, nested = 0, [], 0
    for token in tokens:
        if token.type == "bullet_list_open":
            depth += 1
        elif token.type == "bullet_list_close":
            depth -= 1
        elif token.type == "inline" and depth == 1:
            headings.append(token.content)
        elif token.type == "inline" and depth == 2:
            nested += 1
    assert headings == ["**builds**", "**appeared on trixie**", "**gone on trixie**",
                        "**failed its checks**", "**changes**", "**causes**"]
    assert nested == sum(len(i.lines) for i in text.items(found, whatchanged.FORMATS))


def test_a_mask_the_cpu_cannot_feel_is_named_with_its_note() -> None:
    no_sha = environment(cpu_flags=["aes", "avx2"])
    masked = {**no_sha, "mask": {"names": ["shani"], "variable": "OPENSSL_ia32cap"}}
    before = make_runs("m", 5, seed=6, drift=0.01, env=masked)
    after = make_runs("u", 5, seed=7, drift=0.01, env=no_sha, start_day=2)
    found = compare_runs(before, after).news
    assert found is not None
    (mask,) = [c for c in found.builds if c.topic == "capability mask"]
    assert mask.note == "hides shani; this CPU has no SHA-NI: no effect expected"
    line = next(x for x in text.items(found, FORMATS)[0].lines if x.startswith("capability"))
    assert line.endswith("(hides shani; this CPU has no SHA-NI: no effect expected)")
    assert found.changes == () and found.causes == ()


def test_news_never_imports_compare_not_even_for_type_hints() -> None:
    """compare calls news, so news reading compare's types would make a circle; the model
    both share lives in `analysis.rows`. Every import counts, `if TYPE_CHECKING:` ones too."""
    import ast
    from pathlib import Path

    package = Path(news.__file__).parent
    imported = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert "pqbench.analysis.rows" in imported  # the shared model is read from its home
    assert not {m for m in imported if m.startswith("pqbench.analysis.compare")}

"""compare_runs and group_runs on synthetic runs with planted effects, and the CLI's errors.

Runs are the unit: a group needs several runs for a verdict, and runs are made on a
"machine" whose state drifts from run to run (tests.helpers.runs.make_runs).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.analysis.compare import compare_runs
from pqbench.analysis.pairing import pair_rates, session_pairs
from pqbench.catalog.algorithms import capabilities
from pqbench.cli import app
from pqbench.data.record import transfer
from pqbench.data.record.results import Measurement
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import group_runs, without_value
from pqbench.data.store import Store
from pqbench.platform.errors import ComparisonError, UsageError
from tests.helpers import invoke
from tests.helpers.runs import environment, make_ab_session, make_run, make_runs

ROW_FIELDS = {"algorithm", "implementation", "operation", "block_size", "before", "after",
              "ratio", "ci_low", "ci_high", "p_value", "verdict", "causes", "runs_before",
              "runs_after", "spread_before", "spread_after", "noise_floor", "threshold",
              "n_before", "n_after", "reason", "ci_level", "unit", "seconds"}
VERDICTS = {"faster", "slower", "no change", "inconclusive", "too few runs"}


def test_planted_jump_is_found_with_its_cause_and_sorted_first() -> None:
    masked = environment(knobs__OPENSSL_ia32cap=capabilities.ia32cap_value(["aesni"]))
    before = make_runs("a", 5, seed=1, env=masked)
    after = make_runs("b", 5, seed=2, factors={"AES-256-XTS": 20.0})
    result = compare_runs(before, after)
    first = result.rows[0]
    assert (first.algorithm, first.verdict) == ("AES-256-XTS", "faster")
    assert first.ratio == pytest.approx(20.0, rel=0.05)
    assert first.ci_low > 1.05 and first.p_value < 0.01
    assert first.before == pytest.approx(550_000 * 16384, rel=0.05)  # bytes/s for block rows
    assert (first.runs_before, first.runs_after, first.n_before) == (5, 5, 45)
    assert [c.field for c in first.causes] == ["knobs.OPENSSL_ia32cap"]
    assert all(r.verdict == "no change" and not r.causes for r in result.rows[1:])
    ratios = [abs(r.ratio - 1) for r in result.rows]
    assert ratios[0] == max(ratios)


def test_before_after_and_ratio_come_from_one_estimate() -> None:
    # Issue #12, point 4: never "31.9k -> 43.2k, ratio 1.01x".
    result = compare_runs(make_runs("a", 5, seed=3, drift=0.2),
                          make_runs("b", 4, seed=4, drift=0.2, factor=1.3))
    for row in result.rows:
        assert row.after / row.before == pytest.approx(row.ratio, rel=1e-9)


def test_json_rows_have_the_issue_fields() -> None:
    result = compare_runs(make_runs("a", 5, seed=1), make_runs("b", 5, seed=2, factor=0.5))
    document = result.as_dict()
    rows = document["rows"]
    assert all(set(r) >= ROW_FIELDS for r in rows)
    assert {r["verdict"] for r in rows} == {"slower"}
    assert document["threshold_mode"] == "auto" and document["design"] == "runs"
    for row in rows:
        assert (row["runs_before"], row["runs_after"]) == (5, 5)
        assert row["spread_before"] > 0 and row["noise_floor"] > 0
        assert row["threshold"] == max(0.05, row["noise_floor"])
    pk = [r for r in rows if r["algorithm"] == "ML-KEM-768"]
    assert pk and all(r["block_size"] is None for r in pk)
    json.dumps(document, allow_nan=False)  # strictly valid JSON


def test_one_run_a_side_is_too_few_runs_with_how_many_are_needed() -> None:
    result = compare_runs([make_run("a", seed=1)], [make_run("b", seed=2, factor=10.0)])
    assert {r.verdict for r in result.rows} == {"too few runs"}
    assert all("5 a side, or 4 and 6" in r.reason for r in result.rows)
    assert any("pqbench ab" in w for w in result.warnings)
    assert all(r.noise_floor is None for r in result.rows)


def test_a_a_runs_labelled_apart_on_a_drifting_machine_give_no_verdict() -> None:
    for seed in range(20):
        runs = make_runs("r", 10, seed=100 + seed, drift=0.3)
        before = [r for i, r in enumerate(runs) if i % 2 == 0]
        after = [r for i, r in enumerate(runs) if i % 2 == 1]
        result = compare_runs(before, after)
        assert not any(r.changed for r in result.rows), [r.reason for r in result.rows]


def test_three_runs_a_side_are_too_few_and_five_are_judged() -> None:
    few = compare_runs(make_runs("a", 3, seed=5), make_runs("b", 3, seed=6, factor=3.0))
    assert {r.verdict for r in few.rows} == {"too few runs"}
    enough = compare_runs(make_runs("a", 5, seed=5), make_runs("b", 5, seed=6, factor=3.0))
    assert {r.verdict for r in enough.rows} == {"faster"}
    assert not enough.warnings


def test_a_fixed_threshold_is_used_as_given() -> None:
    result = compare_runs(make_runs("a", 5, seed=7), make_runs("b", 5, seed=8, factor=1.08),
                          threshold=0.10)
    assert all(r.threshold == 0.10 for r in result.rows)
    assert {r.verdict for r in result.rows} <= {"no change", "inconclusive"}
    assert result.as_dict()["threshold"] == 0.10


def test_a_mask_the_cpu_cannot_feel_is_no_cause_and_says_so() -> None:
    # A CPU without SHA-NI: hiding shani changes nothing, even if SHA-256 drifted 2x.
    no_sha = {"cpu_flags": ["aes", "avx2"], "cpu__flags": ["aes", "avx2"]}
    masked = environment(knobs__OPENSSL_ia32cap=capabilities.ia32cap_value(["aesni", "shani"]),
                         **no_sha)
    plain = environment(**no_sha)
    result = compare_runs(make_runs("a", 5, seed=9, env=masked),
                          make_runs("b", 5, seed=10, env=plain,
                                    factors={"SHA-256": 2.0, "AES-256-XTS": 20.0}))
    rows = {r.algorithm: r for r in result.rows}
    assert rows["SHA-256"].verdict == "faster"
    assert not any(c.field == "knobs.OPENSSL_ia32cap" for c in rows["SHA-256"].causes)
    assert rows["AES-256-XTS"].causes[0].field == "knobs.OPENSSL_ia32cap"
    assert "shani" not in rows["AES-256-XTS"].causes[0].why
    (knob,) = [d for d in result.differences if d.field == "knobs.OPENSSL_ia32cap"]
    assert knob.note == ("hides aesni, shani; this CPU has no SHA-NI: no effect expected "
                         "from shani")


def test_no_common_rows_and_empty_groups_are_errors() -> None:
    only = (("X25519", "cryptography", "derive", None, 1000.0),)
    with pytest.raises(ComparisonError, match="no row in common"):
        compare_runs([make_run("a", seed=1)], [make_run("b", seed=2, rows=only)])
    with pytest.raises(ComparisonError):
        compare_runs([], [make_run("b", seed=2)])


def test_group_runs_by_field_in_time_order() -> None:
    runs = [make_run("r2", seed=2, started_at="2026-01-02", label="10.14.5"),
            make_run("r1", seed=1, started_at="2026-01-01", label="10.14.4"),
            make_run("r3", seed=3, started_at="2026-01-03", label="10.14.4"),
            make_run("r4", seed=4, started_at="2026-01-04",
                     env=environment(libraries__cryptography="51.0.0"))]
    # Unlabelled runs are no configuration: left out, unless asked for as "(none)".
    assert [(n, [r.run_id for r in g]) for n, g in group_runs(runs, "label")] == [
        ("10.14.4", ["r1", "r3"]), ("10.14.5", ["r2"])]
    assert [(n, [r.run_id for r in g]) for n, g in group_runs(runs, "label", missing=True)
            ] == [("10.14.4", ["r1", "r3"]), ("10.14.5", ["r2"]), ("(none)", ["r4"])]
    assert [r.run_id for r in without_value(runs, "label")] == ["r4"]
    assert [n for n, _ in group_runs(runs, "libraries.cryptography")] == ["50.0.2", "51.0.0"]
    with pytest.raises(ComparisonError, match=r"libraries\.cryptography"):
        group_runs(runs, "libraries")


def test_a_field_no_run_records_is_a_usage_error_naming_the_known_ones() -> None:
    runs = [make_run("r1", seed=1, label="a"), make_run("r2", seed=2, label="b")]
    with pytest.raises(UsageError) as raised:
        group_runs(runs, "lable")
    message = str(raised.value)
    assert "unknown --by field 'lable'" in message and "Did you mean: label?" in message
    known = message.split("Known fields: ", 1)[1]
    for name in ("label", "run_id", "date", "os_build", "libraries.cryptography",
                 "knobs.OPENSSL_ia32cap", "cpu.model"):
        assert name in known
    # A field that some run records, even as null, is known: its runs lack a value.
    assert group_runs(runs, "knobs.OPENSSL_ia32cap") == []
    with pytest.raises(UsageError, match=r"Did you mean: libraries\.cryptography"):
        group_runs(runs, "libraries.cryptografy")


# --- the two runs of an ab session --------------------------------------------------------


def test_the_two_runs_of_an_ab_session_are_compared_pair_by_pair() -> None:
    run_a, run_b = make_ab_session("s1", seed=11, factors={"AES-256-XTS": 3.0})
    result = compare_runs([run_a], [run_b])
    assert result.paired and result.alpha == pytest.approx(0.01 / 6)
    rows = {r.algorithm: r for r in result.rows}
    aes = rows["AES-256-XTS"]
    assert aes.verdict == "faster" and aes.pairs == 24 and aes.seconds == 3.5
    assert aes.ratio == pytest.approx(3.0, rel=0.02)
    # 30 % drift between pairs, 1 % within: pairing leaves about 1.4 % per pair ratio.
    for name in ("ML-KEM-768", "SHA-256"):
        assert rows[name].verdict == "no change", rows[name].reason
        assert rows[name].noise_floor is None and rows[name].threshold == 0.05
        assert rows[name].spread_before > 0.2  # the drift the pairs cancelled
    assert not any("runs" in w for w in result.warnings)
    assert result.as_dict()["design"] == "pairs"


def test_sessions_are_recognised_only_when_the_groups_are_their_two_sides() -> None:
    run_a, run_b = make_ab_session("s1", seed=12)
    other_a, other_b = make_ab_session("s2", seed=13)
    assert session_pairs([run_a], [run_b]) == [(run_a, run_b)]
    assert session_pairs([run_b], [run_a]) == [(run_b, run_a)]
    assert session_pairs([run_a, other_a], [run_b, other_b]) == [(run_a, run_b),
                                                                 (other_a, other_b)]
    assert session_pairs([run_a], [other_b]) is None
    assert session_pairs([run_a], [make_run("x", seed=1)]) is None
    assert not compare_runs([run_a], [other_b]).paired


# --- the command line -------------------------------------------------------------------


def _stored(tmp_path: Path) -> Path:
    db = tmp_path / "cmp.db"
    store = Store.open(str(db))
    for run in make_runs("20260101-a", 5, seed=1, label="old", drift=0.01):
        store.save_run(run)
    for run in make_runs("20260102-b", 5, seed=2, label="new", start_day=2, drift=0.01,
                         factors={"SHA-256": 2.0}):
        store.save_run(run)
    store.close()
    return db


def test_cli_groups_table_json_markdown(tmp_path: Path) -> None:
    db = _stored(tmp_path)
    done = invoke("compare", "--by", "label", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    verdicts = {r["algorithm"]: r["verdict"] for r in json.loads(done.stdout)["rows"]}
    assert verdicts["SHA-256"] == "faster" and verdicts["ML-KEM-768"] == "no change"
    done = invoke("compare", "--by", "label", "old", "new", "--markdown", "--db", str(db))
    assert done.returncode == 0 and "| SHA-256 | python | hash @16384B |" in done.stdout
    assert "5/5 runs" in done.stdout
    # One run against one: judged against the spread the ten stored runs (two builds by
    # label, one build by fingerprint) show, so the 2x row is faster.
    done = invoke("compare", "20260101-a0", "20260102-b0", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    rows = {r["algorithm"]: r for r in json.loads(done.stdout)["rows"]}
    assert rows["SHA-256"]["verdict"] == "faster"
    assert "10 runs of this row (2 groups of one build)" in rows["SHA-256"]["basis"]
    assert {r["verdict"] for r in rows.values()} - {"faster"} <= {"no change", "inconclusive"}


@pytest.mark.parametrize(("fail_on", "code"), [("faster", 3), ("any", 3), ("slower", 0)])
def test_cli_fail_on_gates_on_the_verdict(tmp_path: Path, fail_on: str, code: int) -> None:
    db = _stored(tmp_path)
    done = CliRunner().invoke(app, ["compare", "--by", "label", "--fail-on", fail_on,
                                    "--json", "--db", str(db)])
    assert done.exit_code == code, done.stderr
    assert json.loads(done.stdout)["rows"]  # the document is printed either way
    if code:
        assert "--fail-on" in done.stderr and "1 row(s)" in done.stderr


@pytest.mark.parametrize("args, message", [
    (("compare", "nosuchrun", "20260102-b0"), "no run 'nosuchrun'"),
    (("compare", "20260101-a0"), "give two runs"),
    (("compare", "--all"), "give --by FIELD too"),
    (("compare", "--by", "label", "old", "newer"), "no runs with label"),
    (("compare", "--by", "label", "--threshold", "-1"), "threshold"),
    (("compare", "--by", "label", "--threshold", "lots"), "'auto' or a fraction"),
    (("compare", "--by", "label", "--fail-on", "sideways"), "--fail-on takes one or more of"),
], ids=["unknown run", "one run", "--all without --by", "unknown group",
        "negative threshold", "bad threshold", "bad fail-on"])
def test_cli_bad_input_exits_non_zero(tmp_path: Path, args: tuple[str, ...],
                                      message: str) -> None:
    db = _stored(tmp_path)
    done = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert done.exit_code in (1, 2) and message in done.stderr


def test_cli_without_arguments_compares_the_newest_run_with_the_one_before(
        tmp_path: Path) -> None:
    db = _stored(tmp_path)
    done = invoke("compare", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["before"]["runs"], document["after"]["runs"]) == (
        ["20260102-b3"], ["20260102-b4"])
    assert "newest run 20260102-b4" in " ".join(done.stderr.split())
    # The newest run of another kind is compared with the one before it of its kind.
    store = Store.open(str(db))
    files_run = make_run("20260103-f", seed=9, started_at="2026-01-03T00:00:00+00:00")
    store.save_run(replace(files_run, kind="files"))
    store.close()
    done = invoke("compare", "--db", str(db))
    assert done.returncode == 1
    assert "20260103-f is the only files run" in " ".join(done.stderr.split())


def test_cli_without_arguments_compares_the_two_sides_of_the_newest_ab_session(
        tmp_path: Path) -> None:
    db = _stored(tmp_path)
    store = Store.open(str(db))
    for run in make_ab_session("s1", seed=21, factors={"AES-256-XTS": 3.0}):
        store.save_run(run)
    store.close()
    done = invoke("compare", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["design"] == "pairs"
    assert (document["before"]["runs"], document["after"]["runs"]) == (["s1-a"], ["s1-b"])


def test_cli_by_compares_the_newest_two_groups_and_leaves_unlabelled_runs_out(
        tmp_path: Path) -> None:
    db = _stored(tmp_path)
    store = Store.open(str(db))
    for run in make_runs("20260103-c", 5, seed=3, label="newest", start_day=3, drift=0.01,
                         factors={"SHA-256": 2.0}):
        store.save_run(run)
    store.save_run(make_run("20260104-u", seed=4, started_at="2026-01-04T00:00:00+00:00"))
    store.close()
    done = invoke("compare", "--by", "label", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["before"]["name"], document["after"]["name"]) == ("new", "newest")
    assert "1 run(s) without a value for label left out" in " ".join(done.stderr.split())
    done = invoke("compare", "--by", "label", "--all", "--json", "--db", str(db))
    names = [(c["before"]["name"], c["after"]["name"])
             for c in json.loads(done.stdout)["comparisons"]]
    assert names == [("old", "new"), ("new", "newest")]
    done = invoke("compare", "--by", "label", "--all", "--include-missing", "--json",
                   "--db", str(db))
    names = [(c["before"]["name"], c["after"]["name"])
             for c in json.loads(done.stdout)["comparisons"]]
    assert names[-1] == ("newest", "(none)")
    done = invoke("compare", "--by", "lable", "--db", str(db))
    assert done.returncode == 2
    assert "unknown --by field 'lable'. Did you mean: label?" in " ".join(done.stderr.split())


def test_cli_only_changed_shows_the_changed_rows_and_gates_on_all(tmp_path: Path) -> None:
    db = _stored(tmp_path)
    done = invoke("compare", "--by", "label", "--only-changed", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert [(r["algorithm"], r["verdict"]) for r in rows] == [("SHA-256", "faster")]
    done = invoke("compare", "--by", "label", "--only-changed", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "SHA-256" in done.stdout and "ML-KEM-768" not in done.stdout
    assert "3 row(s) without a change not shown" in " ".join(done.stderr.split())
    # Nothing changed: a line says so instead of an empty table.
    done = invoke("compare", "20260101-a0", "20260101-a1", "--only-changed", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "no row changed" in done.stdout and "┏" not in done.stdout
    done = invoke("compare", "--by", "label", "--only-changed", "--fail-on", "faster",
                   "--markdown", "--db", str(db))
    assert done.returncode == 3 and "| SHA-256 |" in done.stdout


def test_cli_no_common_rows(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    only = (("X25519", "cryptography", "derive", None, 1000.0),)
    path.write_text(transfer.export([make_run("20260103-c", seed=3, rows=only)], "json"))
    db = _stored(tmp_path)
    assert invoke("import", str(path), "--db", str(db)).returncode == 0
    done = invoke("compare", "20260101-a0", "20260103", "--db", str(db))
    assert done.returncode == 1 and "no row in common" in done.stderr


def test_pairs_are_compared_in_cpu_time_where_it_was_kept() -> None:
    # Round 1: 1000 ops in 1 s of wall time, of which the worker ran 0.5 s; its partner ran
    # all of its second. Round 2 has no CPU time on one side: both wall rates stand in.
    rounds = (LoopResult(1000, 1_000_000_000), LoopResult(1000, 1_000_000_000))
    a = Measurement("X25519", "libcrypto", "derive", rounds,
                    attributes={"ab_cpu_ns": [500_000_000, 1_000_000_000]})
    b = Measurement("X25519", "libcrypto", "derive", rounds,
                    attributes={"ab_cpu_ns": [1_000_000_000, None]})
    assert pair_rates(a, b) == [(2000.0, 1000.0), (1000.0, 1000.0)]
    legacy = Measurement("X25519", "libcrypto", "derive", rounds)
    assert pair_rates(legacy, b) == [(1000.0, 1000.0), (1000.0, 1000.0)]

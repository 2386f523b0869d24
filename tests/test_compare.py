"""compare_runs and group_runs on synthetic runs with planted effects, and the CLI's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pqbench import exchange, mask
from pqbench.compare import compare_groups, compare_runs, group_runs
from pqbench.errors import ComparisonError
from pqbench.store import Store
from tests.conftest import run_cli
from tests.tests_data import environment, make_run

ROW_FIELDS = {"algorithm", "implementation", "operation", "block_size", "before", "after",
              "ratio", "ci_low", "ci_high", "p_value", "verdict", "causes"}


def test_planted_jump_is_found_and_sorted_first() -> None:
    masked = environment(knobs__OPENSSL_ia32cap=mask.ia32cap_value(["aesni"]))
    before = make_run("a", seed=1, env=masked)
    after = make_run("b", seed=2, factors={"AES-256-XTS": 20.0})
    result = compare_runs([before], [after])
    first = result.rows[0]
    assert (first.algorithm, first.verdict) == ("AES-256-XTS", "faster")
    assert first.ratio == pytest.approx(20.0, rel=0.05)
    assert first.ci_low > 1.05 and first.p_value < 0.01
    assert first.before == pytest.approx(550_000 * 16384, rel=0.05)  # bytes/s for block rows
    assert [c.field for c in first.causes] == ["knobs.OPENSSL_ia32cap"]
    assert all(r.verdict == "no change" and not r.causes for r in result.rows[1:])
    ratios = [abs(r.ratio - 1) for r in result.rows]
    assert ratios[0] == max(ratios)


def test_json_rows_have_the_issue_fields() -> None:
    result = compare_runs([make_run("a", seed=1)], [make_run("b", seed=2, factor=0.5)])
    rows = result.as_dict()["rows"]
    assert all(set(r) >= ROW_FIELDS for r in rows)
    assert {r["verdict"] for r in rows} == {"slower"}
    pk = [r for r in rows if r["algorithm"] == "ML-KEM-768"]
    assert pk and all(r["block_size"] is None for r in pk)
    json.dumps(result.as_dict(), allow_nan=False)  # strictly valid JSON


def test_few_samples_are_refused_not_guessed() -> None:
    result = compare_runs([make_run("a", seed=1, rounds=3)],
                          [make_run("b", seed=2, rounds=3, factor=10.0)])
    assert {r.verdict for r in result.rows} == {"too few samples"}


def test_samples_of_a_group_are_pooled() -> None:
    before = [make_run(f"a{i}", seed=i, rounds=3) for i in range(3)]
    after = [make_run(f"b{i}", seed=10 + i, rounds=3, factor=3.0) for i in range(3)]
    result = compare_runs(before, after)
    assert all(r.n_before == 9 and r.verdict == "faster" for r in result.rows)
    assert not any("single run" in w for w in result.warnings)


def test_a_single_run_a_side_is_warned_about() -> None:
    result = compare_runs([make_run("a", seed=1)], [make_run("b", seed=2)])
    assert any("single run" in w and "interleaved" in w for w in result.warnings)


def test_no_common_rows_and_empty_groups_are_errors() -> None:
    only = (("X25519", "cryptography", "derive", None, 1000.0),)
    with pytest.raises(ComparisonError, match="no row in common"):
        compare_runs([make_run("a", seed=1)], [make_run("b", seed=2, rows=only)])
    with pytest.raises(ComparisonError):
        compare_runs([], [make_run("b", seed=2)])
    with pytest.raises(ComparisonError, match="at least two groups"):
        compare_groups([("x", [make_run("a", seed=1)])])


def test_other_testbeds_need_cross_machine_and_warn() -> None:
    other = make_run("b", seed=2, env=environment(testbed="tb-2", hostname="linux"))
    with pytest.raises(ComparisonError, match="--cross-machine"):
        compare_runs([make_run("a", seed=1)], [other])
    result = compare_runs([make_run("a", seed=1)], [other], cross_machine=True)
    assert result.warnings and "testbeds" in result.warnings[0]


def test_group_runs_by_field_in_time_order() -> None:
    runs = [make_run("r2", seed=2, started_at="2026-01-02", label="10.14.5"),
            make_run("r1", seed=1, started_at="2026-01-01", label="10.14.4"),
            make_run("r3", seed=3, started_at="2026-01-03", label="10.14.4"),
            make_run("r4", seed=4, started_at="2026-01-04",
                     env=environment(libraries__cryptography="51.0.0"))]
    assert [(n, [r.run_id for r in g]) for n, g in group_runs(runs, "label")] == [
        ("10.14.4", ["r1", "r3"]), ("10.14.5", ["r2"]), ("(none)", ["r4"])]
    assert [n for n, _ in group_runs(runs, "libraries.cryptography")] == ["50.0.2", "51.0.0"]
    with pytest.raises(ComparisonError, match=r"libraries\.cryptography"):
        group_runs(runs, "libraries")


def _stored(tmp_path: Path) -> Path:
    db = tmp_path / "cmp.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1, label="old"))
    store.save_run(make_run("20260102-b", seed=2, label="new", started_at="2026-01-02",
                            factors={"SHA-256": 2.0}))
    store.close()
    return db


def test_cli_two_runs_table_json_markdown(tmp_path: Path) -> None:
    db = _stored(tmp_path)
    done = run_cli("compare", "20260101", "20260102", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    verdicts = {r["algorithm"]: r["verdict"] for r in json.loads(done.stdout)["rows"]}
    assert verdicts["SHA-256"] == "faster" and verdicts["ML-KEM-768"] == "no change"
    done = run_cli("compare", "--by", "label", "old", "new", "--markdown", "--db", str(db))
    assert done.returncode == 0 and "| SHA-256 | python | hash @16384B |" in done.stdout
    done = run_cli("compare", "20260101", "20260102", "--db", str(db))
    assert done.returncode == 0 and "faster" in done.stdout


@pytest.mark.parametrize("args, message", [
    (("compare", "nosuchrun", "20260102"), "no run 'nosuchrun'"),
    (("compare", "20260101"), "give two runs"),
    (("compare", "--by", "label", "old", "newer"), "no runs with label"),
    (("compare", "--by", "label", "--threshold", "-1"), "threshold"),
], ids=["unknown run", "one run", "unknown group", "negative threshold"])
def test_cli_bad_input_exits_non_zero(tmp_path: Path, args: tuple[str, ...],
                                      message: str) -> None:
    db = _stored(tmp_path)
    done = run_cli(*args, "--db", str(db))
    assert done.returncode != 0 and message in done.stderr


def test_cli_no_common_rows(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    only = (("X25519", "cryptography", "derive", None, 1000.0),)
    path.write_text(exchange.export([make_run("20260103-c", seed=3, rows=only)], "json"))
    db = _stored(tmp_path)
    assert run_cli("import", str(path), "--db", str(db)).returncode == 0
    done = run_cli("compare", "20260101", "20260103", "--db", str(db))
    assert done.returncode == 1 and "no row in common" in done.stderr

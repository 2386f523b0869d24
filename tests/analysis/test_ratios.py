"""Paired cost ratios between rows of one run: the statistics, the costs they are made of,
and `pqbench speed` printing them from real interleaved runs."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from datetime import UTC, datetime

import numpy as np
import pytest
from typer.testing import CliRunner

from pqbench.analysis import ratios
from pqbench.cli import app
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import new_run
from tests.helpers import starts_processes

# --- the interval -------------------------------------------------------------------------


def test_a_worked_case_of_three_pairs() -> None:
    # d = ln(num) - ln(den) = ln 2, ln 4, ln 8: Walsh averages (6 of them) are
    # ln 2, ln 4, ln 8, ln sqrt 8, ln sqrt 32, ln sqrt 16 = ln 4; the median of the six
    # sorted (ln 2, ln 2.83, ln 4, ln 4, ln 5.66, ln 8) is ln 4.
    estimate, low, high, level = ratios.paired([2.0, 4.0, 8.0], [1.0, 1.0, 1.0])
    assert estimate == pytest.approx(4.0)
    # 3 pairs cannot reach 99 %: the widest interval, at 1 - 2 * P(T+ = 0) = 1 - 2/8.
    assert (low, high) == (pytest.approx(2.0), pytest.approx(8.0))
    assert level == pytest.approx(0.75)


@pytest.mark.parametrize(("pairs", "level"), [(5, 1 - 2 / 32), (8, 1 - 2 / 256),
                                              (10, 1 - 2 * 5 / 1024)])
def test_the_level_printed_is_the_level_reached(pairs: int, level: float) -> None:
    # 5 pairs: at most 93.75 %. 8 pairs: k = 1 (P(T+ = 0) = 1/256 <= 0.005 < 2/256).
    # 10 pairs: k = 4 (P(T+ <= 3) = 5/1024 <= 0.005), 99.02 %.
    rng = np.random.default_rng(pairs)
    found = ratios.paired(list(rng.lognormal(0, 0.1, pairs)), [1.0] * pairs)
    assert found is not None
    assert found[3] == pytest.approx(level)


def test_no_pairs_no_ratio() -> None:
    assert ratios.paired([], []) is None
    assert ratios.paired([1.0, math.nan], [1.0, 1.0]) is None


def _machine(rng: np.random.Generator, cycles: int, sigma: float) -> np.ndarray:
    """A factor per cycle that slows every row of that cycle alike."""
    return rng.lognormal(0.0, sigma, cycles)


def test_paired_intervals_cover_the_truth_where_drift_hits_every_row_of_a_cycle() -> None:
    """2000 runs of two rows whose true cost ratio is 1.4, on a machine whose speed changes
    by a lognormal factor per cycle (sigma 0.3), with 1 % noise of each round's own: the
    99 % paired interval covers 1.4 in at least 98.5 % of them."""
    rng = np.random.default_rng(2026)
    truth, covered, trials = 1.4, 0, 2000
    for _ in range(trials):
        factor = _machine(rng, 10, 0.3)
        num = truth * factor * rng.lognormal(0, 0.01, 10)
        den = factor * rng.lognormal(0, 0.01, 10)
        found = ratios.paired(list(num), list(den))
        assert found is not None and found[3] >= 0.99
        covered += found[1] <= truth <= found[2]
    assert covered / trials >= 0.985


@pytest.mark.slow  # hundreds of simulated sessions: the whole suite's lane
def test_unpaired_medians_with_their_own_intervals_miss_it() -> None:
    """The same machine, the design before cycles: each row's rounds one after the other,
    so each row sits in its own phase of the machine, and the ratio of the two medians is
    read with each median's own distribution-free interval. It misses the truth most of
    the time while looking precise: the drift between phases is in the answer."""
    from pqbench.data.record.summary import summarize

    rng = np.random.default_rng(2027)
    truth, covered, trials = 1.4, 0, 2000
    for _ in range(trials):
        phase = _machine(rng, 2, 0.3)
        num = truth * phase[0] * rng.lognormal(0, 0.01, 10)
        den = phase[1] * rng.lognormal(0, 0.01, 10)
        a, b = summarize(list(1 / num)), summarize(list(1 / den))
        # Widest combination of the two rows' intervals (costs are 1 / rates).
        low, high = b.ci_low / a.ci_high, b.ci_high / a.ci_low
        covered += low <= truth <= high
    assert covered / trials < 0.5


# --- what a ratio is made of ----------------------------------------------------------------


def _row(algorithm: str, implementation: str, operation: str, costs_us: list[float],
         block_size: int | None = None) -> Measurement:
    """A row whose round i took `costs_us[i]` microseconds per operation (1000 ops)."""
    return Measurement(algorithm, implementation, operation,
                       tuple(LoopResult(1000, round(c * 1000 * 1000)) for c in costs_us),
                       block_size=block_size, attributes={"time_base": "cpu"})


def _run(rows: list[Measurement], interleaved: bool = True) -> Run:
    return new_run("speed", datetime.now(UTC), settings={"interleaved": interleaved},
                   environment={}, measurements=rows, problems=(), verifications=())


def test_an_exchange_is_keygen_encaps_decaps_against_two_keygens_and_two_derives() -> None:
    drift = [1.0, 2.0, 1.5, 0.7, 1.1, 1.3, 0.9, 1.0]  # shared by every row of a cycle
    rows = [_row("ML-KEM-768", "liboqs", "keygen", [10 * f for f in drift]),
            _row("ML-KEM-768", "liboqs", "encaps", [12 * f for f in drift]),
            _row("ML-KEM-768", "liboqs", "decaps", [14 * f for f in drift]),
            _row("X25519", "libcrypto", "keygen", [40 * f for f in drift]),
            _row("X25519", "libcrypto", "derive", [30 * f for f in drift])]
    (found,) = [r for r in ratios.run_ratios(_run(rows)) if r.kind == "exchange"]
    # (10 + 12 + 14) / (2 * 40 + 2 * 30) = 36 / 140, in every cycle alike.
    assert found.estimate == pytest.approx(36 / 140)
    assert found.ci_low == pytest.approx(36 / 140) and found.ci_high == pytest.approx(36 / 140)
    assert found.pairs == 8 and found.per == "exchange"
    assert dict(found.numerator.rows) == {("ML-KEM-768", "liboqs", "keygen", None): 1,
                                          ("ML-KEM-768", "liboqs", "encaps", None): 1,
                                          ("ML-KEM-768", "liboqs", "decaps", None): 1}
    assert dict(found.denominator.rows) == {("X25519", "libcrypto", "keygen", None): 2,
                                            ("X25519", "libcrypto", "derive", None): 2}


def test_key_and_digest_sizes_bindings_and_the_row_asked_for() -> None:
    drift = [1.0, 1.8, 0.6, 1.2, 1.0, 1.4, 0.8, 1.1, 0.9, 1.0]
    rows = [_row("AES-128-XTS", "libcrypto", "encrypt", [1.0 * f for f in drift], 16384),
            _row("AES-256-XTS", "libcrypto", "encrypt", [1.4 * f for f in drift], 16384),
            _row("SHA-256", "libcrypto", "hash", [2.0 * f for f in drift], 16384),
            _row("SHA-512", "libcrypto", "hash", [4.2 * f for f in drift], 16384),
            _row("SHA-256", "cryptography", "hash", [3.0 * f for f in drift], 16384)]
    found = {(r.kind, r.numerator.label): r for r in ratios.run_ratios(_run(rows))}
    key = found[("key size", "AES-256-XTS [libcrypto]")]
    assert key.denominator.label == "AES-128-XTS [libcrypto]"
    assert key.per == "byte (encrypt @16384B)" and key.estimate == pytest.approx(1.4)
    assert found[("digest size", "SHA-512 [libcrypto]")].estimate == pytest.approx(2.1)
    binding = found[("binding", "cryptography")]
    assert binding.denominator.label == "libcrypto" and binding.estimate == pytest.approx(1.5)
    asked = {r.numerator.label: r for r in ratios.relative_to(_run(rows), "AES-128-XTS")}
    assert asked["AES-256-XTS [libcrypto]"].estimate == pytest.approx(1.4)
    assert "SHA-512 [libcrypto]" not in asked  # another operation: nothing to pair with


def test_an_authenticated_mode_against_xts_of_the_same_security_is_a_mode_ratio() -> None:
    """AES-256-GCM against AES-256-XTS (both 256 bits of security, XTS's key is 512 bits):
    what authenticating costs against disk encryption, through one implementation,
    operation and block size; never against another security level or implementation."""
    drift = [1.0, 1.7, 0.8, 1.2, 1.0, 1.5, 0.9, 1.1]
    rows = [_row("AES-256-XTS", "libcrypto", "encrypt", [1.0 * f for f in drift], 16384),
            _row("AES-256-GCM", "libcrypto", "encrypt", [1.8 * f for f in drift], 16384),
            _row("AES-256-GCM", "libcrypto", "encrypt", [1.6 * f for f in drift], 1024),
            _row("AES-128-GCM", "libcrypto", "encrypt", [1.5 * f for f in drift], 16384),
            _row("AES-256-GCM", "cryptography", "encrypt", [2.0 * f for f in drift], 16384)]
    found = [r for r in ratios.run_ratios(_run(rows)) if r.kind == "mode"]
    assert [(r.numerator.label, r.denominator.label) for r in found] == [
        ("AES-256-GCM [libcrypto]", "AES-256-XTS [libcrypto]")]
    (mode,) = found
    assert mode.estimate == pytest.approx(1.8) and mode.per == "byte (encrypt @16384B)"
    assert ratios.mission(ratios.run_ratios(_run(rows))).count(mode) == 1  # plain `ratios`


def test_rows_that_were_not_taken_in_cycles_give_no_ratio() -> None:
    rows = [_row("AES-128-XTS", "libcrypto", "encrypt", [1.0] * 8, 16384),
            _row("AES-256-XTS", "libcrypto", "encrypt", [1.4] * 8, 16384)]
    assert ratios.run_ratios(_run(rows, interleaved=False)) == []
    assert ratios.run_ratios(_run(rows))[0].estimate == pytest.approx(1.4)


def test_an_interrupted_cycle_pairs_only_the_cycles_both_rows_finished() -> None:
    rows = [_row("AES-128-XTS", "libcrypto", "encrypt", [1.0] * 9, 16384),
            _row("AES-256-XTS", "libcrypto", "encrypt", [1.4] * 8, 16384)]
    assert ratios.run_ratios(_run(rows))[0].pairs == 8


# --- real runs --------------------------------------------------------------------------------


def _speed(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pqbench", "speed", *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.process
def test_speed_prints_and_stores_the_ratios_of_real_interleaved_rows(tmp_path) -> None:
    db = str(tmp_path / "r.db")
    common = ("ml-kem-768", "x25519", "aes-128-xts", "aes-256-xts", "-i", "liboqs", "-i",
              "libcrypto", "-o", "keygen", "-o", "encaps", "-o", "decaps", "-o", "derive",
              "-o", "encrypt", "--bytes", "1024", "--seconds", "0.08", "--rounds", "8",
              "--db", db)
    done = _speed(*common, "--json", "--relative-to", "aes128xts")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["settings"]["time_base"] == "cpu" and doc["settings"]["interleaved"] is True
    for row in doc["results"]:
        assert row["time_base"] == "cpu" and len(row["wall_ns"]) == len(row["samples"]) == 8
    by_kind = {}
    for r in doc["ratios"]:
        by_kind.setdefault(r["kind"], []).append(r)
        assert r["pairs"] == 8 and r["ci_low"] <= r["estimate"] <= r["ci_high"]
        assert r["ci_level"] == pytest.approx(1 - 2 / 256)
        assert r["time_base"] == "cpu" and "Hodges-Lehmann" in r["method"]
    (exchange,) = by_kind["exchange"]
    assert {(p["algorithm"], p["implementation"], p["operation"], p["count"])
            for p in exchange["numerator"]["rows"]} == {
        ("ML-KEM-768", "liboqs", op, 1) for op in ("keygen", "encaps", "decaps")}
    assert {(p["algorithm"], p["implementation"], p["operation"], p["count"])
            for p in exchange["denominator"]["rows"]} == {
        ("X25519", "libcrypto", op, 2) for op in ("keygen", "derive")}
    (size,) = by_kind["key size"]
    assert (size["numerator"]["label"], size["denominator"]["label"], size["per"]) == (
        "AES-256-XTS [libcrypto]", "AES-128-XTS [libcrypto]", "byte (encrypt @1024B)")
    (asked,) = by_kind["relative"]
    assert asked["numerator"]["label"] == "AES-256-XTS [libcrypto]"
    # The document with its ratios is a run document `import` takes (and recomputes them).
    (tmp_path / "run.json").write_text(done.stdout, encoding="utf-8")
    imported = CliRunner().invoke(app, ["import", str(tmp_path / "run.json"), "--db",
                                        str(tmp_path / "other.db")])
    assert imported.exit_code == 0, imported.stderr

    text = _speed(*common)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert "what it costs, paired by cycle (99.2 % CI, 8 cycles, CPU time)" in lines
    (row,) = [line for line in lines if line.startswith("ML-KEM-768 [liboqs]")]
    # What the text run printed is the ratio it stored: read back from that run (the other
    # run in this database), not from the --json run above, whose rounds are other rounds.
    stored = json.loads(CliRunner().invoke(app, ["runs", "--json", "--db", db]).stdout)
    (text_run,) = [r["run_id"] for r in stored["runs"] if r["run_id"] != doc["run_id"]]
    read_back = CliRunner().invoke(app, ["ratios", text_run, "--json", "--db", db])
    assert read_back.exit_code == 0, read_back.stderr
    (its_exchange,) = [r for r in json.loads(read_back.stdout)["ratios"]
                       if r["kind"] == "exchange"]
    # The speed ratio (the inverse of the time ratio) with its interval beside it: "2.58x
    # faster [2.50–2.66]", "1.42x slower [1.41–1.43]", or an interval that straddles 1 by
    # its two ends ("[1.01x slower – 1.05x faster]").
    told = re.search(r"X25519 \[libcrypto\] +exchange +(same speed|[\d.]+x (?:faster|slower))"
                     r" \[(.+)\]$", row.rstrip())
    assert told is not None, row
    estimate = 1 / its_exchange["estimate"]
    assert _speed_factor(told.group(1)) == pytest.approx(estimate, rel=0.01), row
    low, high = 1 / its_exchange["ci_high"], 1 / its_exchange["ci_low"]
    ends = told.group(2)
    if " – " in ends:
        printed = [_speed_factor(end) for end in ends.split(" – ")]
    else:
        # Both ends on one side of 1 are printed as factors, slower ones inverted.
        printed = [float(end) for end in ends.split("–")]
        if high <= 1:
            printed = [1 / printed[1], 1 / printed[0]]
    assert printed == [pytest.approx(low, rel=0.01), pytest.approx(high, rel=0.01)], row


def _speed_factor(text: str) -> float:
    """A printed speed change as a speed ratio: "2.58x faster" -> 2.58, "1.42x slower" ->
    1 / 1.42, "1.00x" and "same speed" -> 1."""
    if text == "same speed":
        return 1.0
    factor, _, direction = text.partition("x")
    return 1 / float(factor) if direction.strip() == "slower" else float(factor)


@pytest.mark.process
def test_elapsed_measures_in_wall_time_and_keeps_the_cpu_time_beside(tmp_path) -> None:
    done = _speed("x25519", "-i", "libcrypto", "--seconds", "0.05", "--rounds", "3",
                  "--elapsed", "--json", "--db", str(tmp_path / "r.db"))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["settings"]["time_base"] == "wall"
    for row in doc["results"]:
        assert row["time_base"] == "wall" and len(row["cpu_ns"]) == 3
        # Wall time is at least the thread's CPU time in every round: one thread, and the
        # loop reads both clocks over the same window.
        for sample, cpu in zip(row["samples"], row["cpu_ns"], strict=True):
            assert sample["elapsed_ns"] + 100_000 >= cpu


def test_relative_to_must_name_an_algorithm_measured(tmp_path) -> None:
    result = CliRunner().invoke(app, ["speed", "x25519", "--relative-to", "sha256",
                                      "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 2
    assert "--relative-to sha256: not one of the algorithms measured (X25519)" in \
        " ".join(result.stderr.split())


@pytest.mark.process
def test_ratios_reads_a_stored_run_as_lines_json_and_csv(tmp_path) -> None:
    db = str(tmp_path / "r.db")
    runner = CliRunner()
    missing = runner.invoke(app, ["ratios", "--db", db])
    assert missing.exit_code == 1 and "no pqbench database at" in missing.stderr
    done = _speed("aes-128-ctr", "aes-256-ctr", "-i", "libcrypto", "-o", "encrypt",
                  "--bytes", "4096", "--seconds", "0.05", "--rounds", "10", "--db", db)
    assert done.returncode == 0, done.stderr
    as_csv = runner.invoke(app, ["ratios", "--csv", "--db", db])
    assert as_csv.exit_code == 0, as_csv.stderr
    # Tidy: one value a cell, each side's algorithm and implementation apart, the run id
    # on every line, units in the column names (pandas reads it as it is).
    import csv

    reader = csv.DictReader(io.StringIO(as_csv.stdout))
    assert reader.fieldnames == ["run_id", "kind", "per", "numerator_algorithm",
                                   "numerator_implementation", "numerator_operation",
                                   "denominator_algorithm", "denominator_implementation",
                                   "denominator_operation", "block_size_bytes", "speedup",
                                   "speedup_ci_low", "speedup_ci_high", "ci_level",
                                   "pairs", "time_base"]
    (line,) = list(reader)
    stored = json.loads(runner.invoke(app, ["runs", "--json", "--db", db]).stdout)
    assert line["run_id"] == stored["runs"][0]["run_id"]
    assert (line["kind"], line["numerator_algorithm"], line["numerator_implementation"],
            line["denominator_algorithm"], line["block_size_bytes"]) == (
        "key size", "AES-256-CTR", "libcrypto", "AES-128-CTR", "4096")
    low, estimate, high = (float(line[k]) for k in ("speedup_ci_low", "speedup",
                                                     "speedup_ci_high"))
    assert low <= estimate <= high and line["pairs"] == "10"
    # The speedup runs as "faster" reads: AES-256 against AES-128 is slower, below 1, the
    # inverse of the time ratio --json gives.
    (ratio,) = json.loads(runner.invoke(app, ["ratios", "--json", "--db", db]).stdout)[
        "ratios"]
    assert estimate == pytest.approx(1 / ratio["estimate"]) and estimate < 1
    assert (low, high) == (pytest.approx(1 / ratio["ci_high"]),
                           pytest.approx(1 / ratio["ci_low"]))
    as_json = json.loads(runner.invoke(app, ["ratios", "--json", "--relative-to",
                                             "aes256ctr", "--db", db]).stdout)
    assert [r["kind"] for r in as_json["ratios"]] == ["key size", "relative"]
    unknown = runner.invoke(app, ["ratios", "--relative-to", "sha256", "--db", db])
    assert unknown.exit_code == 2 and "has no rows of it" in unknown.stderr


def test_a_ratio_followed_across_runs_takes_each_run_as_one_unit() -> None:
    drift = [1.0, 1.8, 0.6, 1.2, 1.0, 1.4, 0.8, 1.1, 0.9, 1.0]

    def run(cost: float) -> Run:
        return _run([_row("AES-128-XTS", "libcrypto", "encrypt", drift, 16384),
                     _row("AES-256-XTS", "libcrypto", "encrypt",
                          [cost * f for f in drift], 16384)])

    before = [run(c) for c in (1.40, 1.41, 1.39, 1.38, 1.42)]
    after = [run(c) for c in (1.80, 1.79, 1.81, 1.78, 1.82)]
    (found,) = ratios.across(before, after)
    assert found.name == ("AES-256-XTS [libcrypto] against AES-128-XTS [libcrypto], per byte "
                          "(encrypt @16384B)")
    # Geometric means of the run estimates on each side.
    assert found.before == pytest.approx(math.exp(np.mean(np.log([1.40, 1.41, 1.39, 1.38,
                                                                   1.42]))))
    assert found.after == pytest.approx(math.exp(np.mean(np.log([1.80, 1.79, 1.81, 1.78,
                                                                  1.82]))))
    assert found.change == "rose" and found.outcome.units_before == 5
    (same,) = ratios.across(before, before)
    assert same.change != "rose" and same.change != "fell"


@pytest.mark.process
def test_compare_follows_each_runs_ratios_from_one_side_to_the_other(tmp_path) -> None:
    db = str(tmp_path / "r.db")
    for _ in range(2):
        done = _speed("aes-128-ctr", "aes-256-ctr", "-i", "libcrypto", "-o", "encrypt",
                      "--bytes", "4096", "--seconds", "0.05", "--rounds", "10", "--db", db)
        assert done.returncode == 0, done.stderr
    found = CliRunner().invoke(app, ["compare", "--json", "--db", db])
    assert found.exit_code == 0, found.stderr
    # The published schema of compare --json covers the ratios followed.
    from pqbench.data.record.comparison import ComparisonDocument

    assert len(ComparisonDocument.model_validate_json(found.stdout).ratios) == 1
    (followed,) = json.loads(found.stdout)["ratios"]
    assert followed["name"] == ("AES-256-CTR [libcrypto] against AES-128-CTR [libcrypto], per "
                                "byte (encrypt @4096B)")
    # One run a side: the levels are those runs' own estimates, and no verdict can be had.
    stored = [json.loads(CliRunner().invoke(app, ["ratios", run, "--json", "--db", db]).stdout)
              for run in _run_ids(db)]
    assert followed["before"] == pytest.approx(stored[0]["ratios"][0]["estimate"])
    assert followed["after"] == pytest.approx(stored[1]["ratios"][0]["estimate"])
    assert followed["verdict"] == "too few runs"
    assert (followed["runs_before"], followed["runs_after"]) == (1, 1)
    text = CliRunner().invoke(app, ["compare", "--db", db])
    assert "paired cost ratios, each run's estimate one unit:" in text.stdout


def _run_ids(db: str) -> list[str]:
    listed = json.loads(CliRunner().invoke(app, ["runs", "--json", "--all", "--db", db]).stdout)
    return sorted(r["run_id"] for r in listed["runs"])


@pytest.fixture(scope="module")
@starts_processes
def mission_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("mission") / "r.db")
    done = _speed("ml-kem-768", "ml-dsa-65", "x25519", "ecdh-p256", "ed25519", "ecdsa-p256",
                  "rsa2048", "-i", "liboqs", "-i", "libcrypto", "--seconds", "0.1",
                  "--rounds", "8", "--db", db)
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_ratios_is_a_compact_table_with_every_mission_pairing(mission_run: str,
                                                              columns: int) -> None:
    """Plain `ratios`: ML-KEM-768 against X25519 and ECDH P-256 per exchange, ML-DSA-65
    against ECDSA P-256, RSA-2048 and Ed25519 per signature, each one row of the table with
    its answer and interval whole ("2.58x faster [2.50–2.66]"), at 80 columns too, where an
    interval across 1, told by its two ends, goes on in the line below (`views.ratios`)."""
    from tests.helpers.terminal import read_table

    done = subprocess.run([sys.executable, "-m", "pqbench", "ratios", "--db", mission_run],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": str(columns)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= columns
    # "2.58x faster [2.50–2.66]", or an interval across 1 by its two ends ("1.05x faster
    # [1.03x slower – 1.13x faster]", a signature pair on a loaded machine).
    said = r"[\d.]+x(?: faster| slower)?|same speed"
    answer = re.compile(rf"({said}) \[(?:([\d.]+)–([\d.]+)|({said}) – ({said}))\]")
    found = {}
    for row in read_table(done.stdout, "run ", key="what"):
        names = tuple(row[column].split(" [")[0] for column in ("what", "against"))
        found[names] = answer.fullmatch(row["speed [CI]"])
    for pair in (("ML-KEM-768", "X25519"), ("ML-KEM-768", "ECDH-P-256"),
                 ("ML-DSA-65", "ECDSA-P-256"), ("ML-DSA-65", "RSA-2048"),
                 ("ML-DSA-65", "Ed25519")):
        told = found.get(pair)
        assert told is not None, (pair, found, done.stdout)
        ratio = _speed_factor(told.group(1))
        if told.group(2) is not None:  # both ends on the ratio's side of 1, as factors
            low, high = sorted(_speed_factor(f"{told.group(n)}x {told.group(1).split()[-1]}")
                               for n in (2, 3))
        else:
            low, high = _speed_factor(told.group(4)), _speed_factor(told.group(5))
            assert low <= 1 <= high, told.group(0)  # an end may print as "1.00x"
        assert low * 0.995 <= ratio <= high * 1.005, told.group(0)
    assert len(lines) < 30  # a compact table, not a card per ratio


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_a_bindings_mean_over_block_sizes_has_each_sizes_answer_beside_it(tmp_path,
                                                                          columns: int) -> None:
    """cryptography against libcrypto per byte: a geometric mean over block sizes can hide
    that the binding is slower at 16 B and faster at 16 KiB, so `speed` and `ratios` give
    the mean ("all") and, under it, the answer at every block size measured, each with its
    interval, at 80 and 120 columns alike."""
    from tests.helpers.terminal import read_table

    db = str(tmp_path / "r.db")
    env = {**os.environ, "COLUMNS": str(columns)}
    done = subprocess.run([sys.executable, "-m", "pqbench", "speed", "aes-128-gcm", "-i",
                           "libcrypto", "-i", "cryptography", "--seconds", "0.1", "--rounds",
                           "4", "--db", db], capture_output=True, text=True, timeout=600,
                          check=False, env=env)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run([sys.executable, "-m", "pqbench", "ratios", "--db", db],
                           capture_output=True, text=True, timeout=300, check=False, env=env)
    assert shown.returncode == 0, shown.stderr
    sizes = _block_sizes(db)
    assert len(sizes) > 1
    # "2.74x faster [2.72–2.77]", "1.02x faster [1.01x slower – 1.05x faster]"
    answer = re.compile(r"^(?:[\d.]+x (?:faster|slower)|same speed) \[[\d.]+(?:x(?: \w+)?)?"
                        r"(?:–| – )[\d.]+(?:x(?: \w+)?)?\]$")
    for text, title in ((done.stdout, "what it costs"), (shown.stdout, "run ")):
        assert max(len(line) for line in text.splitlines()) <= columns
        assert any(line.startswith(title) for line in text.splitlines()), text
        table = read_table(text, title)
        # One row every ratio is set against is said once, in the title ("each against
        # libcrypto"), and the column goes.
        once = "libcrypto" if re.search(r"each\s+against\s+libcrypto", text) else None
        mine = [row for row in table if row["what"] == "cryptography"
                and row.get("against", once) == "libcrypto" and row["per"].startswith("byte")]
        blocks = [row["block"] for row in mine]
        assert blocks == ["all", *(_size(s) for s in sizes)], (blocks, text)
        assert all(answer.match(row["speed [CI]"]) for row in mine), \
            [row["speed [CI]"] for row in mine]


def _block_sizes(db: str) -> list[int]:
    from pqbench.data.store import Store

    store = Store.open(db, create=False)
    try:
        return sorted({m.block_size for run in store.load_runs() for m in run.measurements
                       if m.block_size})
    finally:
        store.close()


def _size(size: int) -> str:
    from pqbench.views import numbers

    return numbers.size(size)


@pytest.mark.parametrize("columns", [80, 120])
def test_an_interval_across_one_wraps_in_its_cell_and_the_table_stays_a_table(
        columns: int) -> None:
    """"1.01x faster [1.01x slower – 1.02x faster]" (an interval that straddles 1, both
    ends in words) is wider than 80 columns leave: it wraps in its cell, where it made
    `ratios` and `speed` print every ratio as a five-line card."""
    from rich.console import Console

    from pqbench.data.record.results import RowKey
    from pqbench.views import console
    from pqbench.views import ratios as ratio_views
    from tests.helpers.terminal import read_table

    def binding(size: int, estimate: float, low: float, high: float) -> ratios.Ratio:
        sides = [ratios.Side(impl, tuple((RowKey("AES-128-GCM", impl, op, size), 1)
                                         for op in ("encrypt", "decrypt")))
                 for impl in ("cryptography", "libcrypto")]
        return ratios.Ratio("binding", sides[0], sides[1], "byte (geometric mean of 2)",
                            estimate, low, high, 0.875, 4, "cpu")

    found = [binding(16, 5.35, 5.28, 5.44), binding(1024, 0.99, 0.98, 1.01),
             binding(16384, 0.304, 0.303, 0.309)]
    buffer = io.StringIO()
    Console(file=buffer, width=columns, color_system=None).print(
        console.rich_table(ratio_views.table(found)))
    text = buffer.getvalue()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= columns
    rows = read_table(text, "what it costs")
    assert [row["block"] for row in rows] == ["16 B", "1 KiB", "16 KiB"], text
    assert [row["speed [CI]"] for row in rows] == [
        "5.35x slower [5.28–5.44]", "1.01x faster [1.01x slower – 1.02x faster]",
        "3.29x faster [3.24–3.30]"], text
    assert len(text.splitlines()) <= 3 + len(found) + 1, text  # one line a ratio, one wrap


def test_the_table_says_once_what_every_ratio_shares() -> None:
    """One implementation on every side is said in the title, not as "[libcrypto]" twice a
    line; one row every ratio is set against (--relative-to's) is said there too, and its
    column goes. Sides of two implementations keep their names whole."""
    from pqbench.data.record.results import RowKey
    from pqbench.views import ratios as ratio_views

    def ratio(what: str, against: str, impl: str, against_impl: str) -> ratios.Ratio:
        return ratios.Ratio("key size", *(ratios.Side(f"{name} [{i}]", (
            (RowKey(name, i, "encrypt", 16384), 1),)) for name, i in ((what, impl),
                                                                       (against, against_impl))),
            "byte (encrypt @16384B)", 1.3, 1.2, 1.4, 0.99, 10, "cpu")

    against_one = ratio_views.table([ratio("AES-256-XTS", "AES-128-XTS", "libcrypto",
                                           "libcrypto"),
                                     ratio("AES-256-GCM", "AES-128-XTS", "libcrypto",
                                           "libcrypto")])
    assert [c.title for c in against_one.columns][:2] == ["what", "file"]
    assert [row[0] for row in against_one.rows] == ["AES-256-XTS", "AES-256-GCM"]
    assert against_one.title == ("what it costs, paired by cycle, each against AES-128-XTS "
                                 "(99 % CI, 10 cycles, CPU time, all through libcrypto)")
    two = ratio_views.table([ratio("AES-256-XTS", "AES-128-XTS", "cryptography",
                                   "libcrypto"),
                             ratio("AES-256-GCM", "AES-256-XTS", "libcrypto", "libcrypto")])
    assert [c.title for c in two.columns][:2] == ["what", "against"]
    assert [row[:2] for row in two.rows] == [
        ("AES-256-XTS [cryptography]", "AES-128-XTS [libcrypto]"),
        ("AES-256-GCM [libcrypto]", "AES-256-XTS [libcrypto]")]
    assert two.title == "what it costs, paired by cycle (99 % CI, 10 cycles, CPU time)"
    # One ratio alone is set against its own row, not against one every line shares.
    alone = ratio_views.table([ratio("AES-256-XTS", "AES-128-XTS", "libcrypto", "libcrypto")])
    assert [c.title for c in alone.columns][:2] == ["what", "against"]
    assert alone.rows[0][:2] == ("AES-256-XTS", "AES-128-XTS")


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_relative_to_shows_each_row_against_it_once(mission_run: str, columns: int) -> None:
    """`ratios --relative-to rsa2048`: every line against RSA-2048, none twice (the
    mission's ML-KEM-768 against RSA-2048 used to come again among the asked ones), a
    table of a few lines at 80 and 120 columns, not hundreds."""
    from tests.helpers.terminal import tables

    done = subprocess.run([sys.executable, "-m", "pqbench", "ratios", "--relative-to",
                           "rsa2048", "--db", mission_run], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "COLUMNS": str(columns)})
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= columns
    # Every row against one: said once in the title, with no "against" column.
    (table,) = [t for t in tables(done.stdout) if "what it costs" in t.title]
    assert "each against RSA-2048 [libcrypto]" in table.title, done.stdout
    assert "against" not in table.names
    lines = [(row["what"], row["per"]) for row in table.rows]
    assert lines and len(set(lines)) == len(lines), lines
    assert {("ML-KEM-768 [liboqs]", "exchange"),
            ("ML-DSA-65 [liboqs]", "signature")} <= set(lines)
    assert len(done.stdout.splitlines()) < 40


def test_a_ratio_in_csv_is_a_speedup_named_for_its_direction() -> None:
    """The tidy line's speedup is the numerator's speed over the denominator's (above 1 it
    is faster, as "faster" reads; compare's runs the same way, after over before): the
    inverse of the time ratio, its interval the inverted ends, by column name."""
    from pqbench.data.record.results import RowKey

    def ratio(estimate: float, low: float, high: float) -> ratios.Ratio:
        return ratios.Ratio("exchange", ratios.Side("ML-KEM-768 [liboqs]", (
            (RowKey("ML-KEM-768", "liboqs", "encaps", None), 1),)), ratios.Side(
            "X25519 [libcrypto]", ((RowKey("X25519", "libcrypto", "derive", None), 1),)),
            "exchange", estimate, low, high, 0.99, 10, "cpu")

    line = dict(zip(ratios.ROW_COLUMNS, ratios.as_row(ratio(1.25, 1.2, 1.3), "r"),
                    strict=True))
    assert line["speedup"] == pytest.approx(0.8)  # 1.25x the time: 1.25x slower
    assert line["speedup_ci_low"] == pytest.approx(1 / 1.3)
    assert line["speedup_ci_high"] == pytest.approx(1 / 1.2)
    assert line["speedup_ci_low"] <= line["speedup"] <= line["speedup_ci_high"]
    single = dict(zip(ratios.ROW_COLUMNS, ratios.as_row(ratio(0.5, 0.0, math.inf), "r"),
                      strict=True))
    assert single["speedup"] == pytest.approx(2.0)
    assert (single["speedup_ci_low"], single["speedup_ci_high"]) == (None, None)

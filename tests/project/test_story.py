"""What a new user meets: commands run as real processes on real runs, their output parsed
at 80 and 120 columns. Each test pins one promise of `compare`, `history`, `report`,
`runs` and `files` that a user of openssl speed, hyperfine or pyperf takes for granted.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers import REPO, run_cli, starts_processes
from tests.helpers.runs import make_runs
from tests.helpers.terminal import read_table

QUICK = ("--seconds", "0.05", "--rounds", "2")


def _speed(db: Path, *args: str) -> str:
    """One real `pqbench speed` run; its run id, read from its JSON document."""
    done = run_cli("speed", *args, *QUICK, "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["run_id"])


@pytest.fixture(scope="module")
@starts_processes
def two_subjects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """`speed x25519`, `speed x25519 ed25519`, then `speed aes-256-gcm`: the newest run
    shares no row with any earlier one."""
    db = tmp_path_factory.mktemp("story") / "results.db"
    ids = [_speed(db, "x25519"), _speed(db, "x25519", "ed25519"),
           _speed(db, "aes-256-gcm", "--bytes", "1024")]
    return db, ids


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_compare_without_arguments_finds_two_runs_that_share_rows(
        two_subjects: tuple[Path, list[str]], columns: str) -> None:
    db, (first, second, newest) = two_subjects
    done = run_cli("compare", "--json", "--db", str(db), env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["before"]["runs"], document["after"]["runs"]) == ([first], [second])
    assert {row["algorithm"] for row in document["rows"]} == {"X25519"}
    told = " ".join(done.stderr.split())
    assert f"the newest run {newest} shares no row with an earlier run" in told
    assert f"comparing run {second} (X25519, Ed25519) with {first} (X25519)" in told


@pytest.fixture(scope="module")
def slowed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five runs labelled "old", then five "new" in which ML-KEM-768 runs 13.8 times slower
    (60,000 -> 4,348 encapsulations per second) and SHA-256 1.25 times faster."""
    db = tmp_path_factory.mktemp("slowed") / "results.db"
    store = Store.open(str(db))
    store.save_runs(make_runs("20260101-a", 5, seed=1, label="old", drift=0.01))
    store.save_runs(make_runs("20260102-b", 5, seed=2, label="new", start_day=2, drift=0.01,
                              factors={"SHA-256": 1.25, "ML-KEM-768": 1 / 13.8}))
    store.close()
    return db


def _line(text: str, *words: str) -> str:
    """The table's line of a row (the news above names rows as "ML-KEM-768 encaps [liboqs]")."""
    return next(line for line in text.splitlines()
                if all(w in line for w in words) and not re.search(r"\[[a-z-]+\]", line))


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_compare_says_how_many_times_slower_or_faster_and_keeps_both_levels(
        slowed: Path, columns: str) -> None:
    done = run_cli("compare", "--by", "label", "--db", str(slowed), env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    assert max(map(len, done.stdout.splitlines())) <= int(columns)
    table = {(row["algorithm"], row["operation"]): row
             for row in read_table(done.stdout, "old → new", key="algorithm")}
    change = table[("ML-KEM-768", "encaps")]["change [99 % CI]"]
    times = float(re.search(r"([\d.]+)x slower", change).group(1))  # type: ignore[union-attr]
    assert 13.0 < times < 14.6  # planted 13.8, 2 % noise per round
    # Its interval beside it at every width, never the first thing a narrow terminal
    # drops (it may wrap under the change, within its cell).
    interval = re.fullmatch(r"[\d.]+x slower \[([\d.]+)–([\d.]+)\]", change)
    assert interval is not None, change
    assert float(interval.group(1)) <= times <= float(interval.group(2))
    assert "0.07" not in done.stdout  # never the raw after/before ratio of a slowdown
    # before -> after stays at 80 columns: about 60.1 k -> 4.35 k operations per second
    levels = re.fullmatch(r"([\d.]+) → ([\d.]+) kops/s",
                          table[("ML-KEM-768", "encaps")]["before → after"])
    assert levels is not None
    assert float(levels.group(1)) == pytest.approx(60.0, rel=0.03)
    assert float(levels.group(2)) == pytest.approx(60.0 / 13.8, rel=0.03)
    assert re.match(r"1\.2\dx faster \[", table[("SHA-256", "hash @16384B")][
        "change [99 % CI]"])
    # The band beside the verdict, in one cell (wrapped in its column where room is short).
    assert table[("AES-256-XTS", "encrypt @16384B")]["change [99 % CI]"].startswith(
        "no change (within ±5 %) [")
    # The verdict is said once, in the change: no column repeats it.
    assert "verdict" not in table[("AES-256-XTS", "encrypt @16384B")]
    # No row takes more than three lines at either width (a cell on at most two, the
    # rare interval across 1 three at 80).
    body = done.stdout.split("─" * 20, 1)[1].splitlines()[1:]
    starts = [i for i, line in enumerate(body) if line[:1].strip()]
    assert max(b - a for a, b in itertools.pairwise(starts)) <= 3


@pytest.mark.process
def test_version_has_a_short_option() -> None:
    from pqbench import __version__

    for option in ("-V", "--version"):
        done = run_cli(option)
        assert done.returncode == 0 and done.stdout == f"pqbench {__version__}\n"


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_help_wraps_whole_sentences(columns: str) -> None:
    """A docstring's source line breaks are not the terminal's: no line of the help ends a
    sentence fragment to start the next one a word later."""
    done = run_cli("compare", "--help", env={"COLUMNS": columns})
    assert done.returncode == 0
    text = " ".join(line.strip(" │") for line in done.stdout.splitlines())
    assert "each row is judged against this machine's run-to-run spread of that row" in \
        " ".join(text.split())
    lines = [line.strip() for line in done.stdout.splitlines()]
    lone = [line for line in lines if line in ("several", "`pqbench ab`", "pqbench ab")]
    assert not lone


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """25 stored runs: more than `pqbench runs` shows by default."""
    db = tmp_path_factory.mktemp("many") / "results.db"
    store = Store.open(str(db))
    store.save_runs(make_runs("20260101-r", 25, seed=5, label="nightly"))
    store.close()
    return db


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_runs_shows_the_newest_first_and_counts_the_rest(many_runs: Path, columns: str
                                                          ) -> None:
    done = run_cli("runs", "--db", str(many_runs), env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    ids = re.findall(r"20260101-r\d+", done.stdout)
    assert ids == [f"20260101-r{i}" for i in range(24, 4, -1)]  # the newest 20, newest first
    # As `git log --oneline` keeps a commit's identity, each line keeps what the run is:
    # its id, its kind and the OS build it ran on (at 80 columns too).

    listed = read_table(done.stdout, "runs in", key="run id")
    assert {"run id", "kind", "OS build"} <= set(listed[0]), listed[0]
    assert all(row["kind"] == "speed" and row["OS build"] for row in listed)
    told = " ".join(done.stderr.split())
    assert "5 older run(s) not shown" in told and "--all" in told
    assert "nightly" in done.stdout and "ML-KEM-768" in done.stdout  # label, algorithms
    assert max(map(len, done.stdout.splitlines())) <= int(columns)
    done = run_cli("runs", "--last", "3", "--db", str(many_runs), env={"COLUMNS": columns})
    assert re.findall(r"20260101-r\d+", done.stdout) == [
        "20260101-r24", "20260101-r23", "20260101-r22"]
    done = run_cli("runs", "--all", "--db", str(many_runs), env={"COLUMNS": columns})
    assert len(re.findall(r"20260101-r\d+", done.stdout)) == 25 and not done.stderr.strip()


@pytest.mark.process
def test_runs_csv_lists_every_run_with_its_algorithms_one_value_a_cell(many_runs: Path
                                                                       ) -> None:
    import csv
    import io

    done = run_cli("runs", "--csv", "--db", str(many_runs))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert list(dict.fromkeys(r["run_id"] for r in rows)) == [
        f"20260101-r{i}" for i in range(25)]
    first = [r for r in rows if r["run_id"] == "20260101-r0"]
    assert [r["algorithm"] for r in first] == ["ML-KEM-768", "AES-256-XTS", "SHA-256"]
    assert all(r["rows"] == "4" and r["label"] == "nightly" for r in first)
    assert all(" " not in r["algorithm"] for r in rows)  # one algorithm a cell


@pytest.mark.process
def test_export_takes_the_newest_runs_or_all(many_runs: Path) -> None:
    done = run_cli("export", "--last", "2", "--db", str(many_runs))
    assert done.returncode == 0, done.stderr
    assert [r["run_id"] for r in json.loads(done.stdout)["runs"]] == [
        "20260101-r23", "20260101-r24"]
    done = run_cli("export", "--all", "--db", str(many_runs))
    assert len(json.loads(done.stdout)["runs"]) == 25
    for args in ((), ("20260101-r1", "--all"), ("--last", "2", "--all")):
        done = run_cli("export", *args, "--db", str(many_runs))
        assert done.returncode == 2 and "--last N or --all" in done.stderr
        assert "Traceback" not in done.stderr


FIELDS = ("os_build", "testbed", "hostname", "label")


@pytest.mark.process
@pytest.mark.parametrize("field", FIELDS)
def test_report_and_compare_take_the_same_by_fields(
        two_subjects: tuple[Path, list[str]], tmp_path: Path, field: str) -> None:
    """The README's `report --by os_build` (and testbed, hostname) said "unknown --by
    field" while `compare --by os_build` took it."""
    db, _ = two_subjects
    done = run_cli("report", "--by", field, "--out", str(tmp_path / "r"), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r" / "report.md").is_file()
    assert "unknown --by field" not in done.stderr
    compared = run_cli("compare", "--by", field, "--db", str(db))
    assert "unknown --by field" not in compared.stderr  # one group is not a field error
    assert compared.returncode in (0, 1) and "Traceback" not in compared.stderr
    if field == "label":  # no run has a label: said so, not as "the same label ()"
        assert "no run has a value for --by label" in " ".join(done.stderr.split())


@pytest.mark.process
def test_an_unknown_by_field_is_refused_alike_everywhere(
        two_subjects: tuple[Path, list[str]], tmp_path: Path) -> None:
    db, _ = two_subjects
    for command in (("report", "--out", str(tmp_path / "r")), ("compare",),
                    ("history", "X25519")):
        done = run_cli(*command, "--by", "os_biuld", "--db", str(db))
        assert done.returncode == 2, (command, done.stderr)
        assert "unknown --by field 'os_biuld'. Did you mean: os_build" in " ".join(
            done.stderr.split())


@pytest.mark.process
def test_history_keeps_masked_and_unmasked_runs_of_one_build_apart(tmp_path: Path) -> None:
    """Five runs with AES-NI hidden from OpenSSL and five without, all of one OS build:
    two points, not one whose "noise floor" is the mask's effect."""
    from pqbench.catalog.algorithms import capabilities
    from tests.helpers.runs import environment

    db = tmp_path / "masked.db"
    store = Store.open(str(db))
    hidden = environment(knobs__OPENSSL_ia32cap=capabilities.ia32cap_value(["aesni"]))
    store.save_runs(make_runs("20260101-u", 5, seed=1))
    store.save_runs(make_runs("20260101-m", 5, seed=2, start_day=2, env=hidden,
                              factors={"AES-256-XTS": 1 / 8}))
    store.close()
    for columns in ("80", "120"):
        done = run_cli("history", "AES-256-XTS", "--json", "--db", str(db),
                       env={"COLUMNS": columns})
        assert done.returncode == 0, done.stderr
        points = json.loads(done.stdout)["series"][0]["points"]
        assert [(p["build"], len(p["runs"])) for p in points] == [
            ("18E226", 5), ("18E226 (AES-NI hidden)", 5)]
        shown = run_cli("history", "AES-256-XTS", "--db", str(db), env={"COLUMNS": columns})
        assert "18E226 (AES-NI hidden)" in shown.stdout
        # compare names the capability, not the knob's raw value
        compared = run_cli("compare", "20260101-u4", "20260101-m0", "--db", str(db),
                           env={"COLUMNS": columns})
        news = compared.stdout.split("fingerprint differences")[0]
        assert "OpenSSL capability knobs: none → AES-NI hidden" in news
        assert "~0x2" not in news
    pooled = json.loads(run_cli("history", "AES-256-XTS", "--pool", "--json", "--db",
                                str(db)).stdout)["series"][0]["points"]
    assert [(p["build"], len(p["runs"])) for p in pooled] == [("18E226", 10)]


@pytest.mark.process
def test_default_ab_labels_name_their_session(tmp_path: Path) -> None:
    """Two `ab` sessions with default labels: four labels, and `compare --by label` takes
    the newest session's A then B, not both sessions' B sides pooled against A."""
    db = tmp_path / "ab.db"
    sessions = []
    for _ in range(2):
        done = run_cli("ab", "x25519", "-i", "cryptography", "--a", "here", "--b",
                       "env:PQBENCH_STORY=b", "--max-seconds", "2", "--json", "--db", str(db))
        assert done.returncode == 0, done.stderr
        sessions.append(json.loads(done.stdout)["session"]["runs"])
    stored = Store.open(str(db), create=False)
    labels = {run_id: stored.load_run(run_id).label for pair in sessions for run_id in pair}
    assert len(set(labels.values())) == 4
    first_a, first_b = (labels[i] for i in sessions[0])
    assert first_a.startswith("A: here, ") and first_b.startswith("B: env:PQBENCH_STORY=b, ")
    assert first_a.removeprefix("A: here, ") == first_b.removeprefix("B: env:PQBENCH_STORY=b, ")
    done = run_cli("compare", "--by", "label", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["before"]["runs"], document["after"]["runs"]) == (
        [sessions[1][0]], [sessions[1][1]])
    assert document["design"] == "pairs"


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_a_subset_against_a_full_run_leads_with_the_answer(tmp_path: Path, columns: str
                                                           ) -> None:
    """Rows nobody asked for are one summary line, and what every row shares (one run a
    side, judged against the machine's spread: here the default prior) is said once, not
    on every row."""
    from tests.helpers.runs import ROWS

    many = tuple((f"ALG-{i}", "liboqs", op, None, 1000.0 + i) for i in range(30)
                 for op in ("keygen", "sign", "verify"))
    db = tmp_path / "subset.db"
    store = Store.open(str(db))
    store.save_runs(make_runs("20260101-full", 1, seed=1, rows=ROWS + many))
    store.save_runs(make_runs("20260102-sub", 1, seed=2, start_day=2, rows=ROWS[:2]))
    store.close()
    done = run_cli("compare", "20260101-full0", "20260102-sub0", "--db", str(db),
                   env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert text.count("no reason") == 1
    assert ("92 row(s) of AES-256-XTS, SHA-256, ALG-0, ALG-1, ALG-2, ALG-3 and 26 more: not "
            "measured on 20260102-sub0, which stored no reason (not asked for there)") in text
    notes = " ".join(done.stderr.split())
    assert notes.count("had too few runs for the exact test") == 1  # said once
    assert notes.count("rest on the default prior") == 1
    # The answer (the compared rows) comes before the long lists would have.
    assert len(done.stdout.splitlines()) < 40


@pytest.mark.process
def test_compare_json_follows_its_published_schema(slowed: Path, tmp_path: Path) -> None:
    """docs/compare.schema.json is the schema of the models (regenerated by
    `python -m pqbench.data.record compare`), and real documents validate against the models,
    which refuse any field they do not name: runs as the unit, an ab session's pairs,
    one-sided rows, fingerprint differences and several comparisons at once."""
    from pqbench.data.record.comparison import ComparisonDocument, ComparisonsDocument, schema
    from tests.helpers.runs import ROWS, environment, make_ab_session

    published = REPO / "docs" / "compare.schema.json"
    assert json.loads(published.read_text()) == json.loads(json.dumps(schema())), (
        "regenerate: python -m pqbench.data.record compare > docs/compare.schema.json")
    db = tmp_path / "doc.db"
    store = Store.open(str(db))
    store.save_runs(make_runs("20260101-a", 3, seed=1, label="x"))
    store.save_runs(make_runs("20260102-b", 3, seed=2, label="y", start_day=2, rows=ROWS[1:],
                              env=environment(os_build="other")))
    store.save_runs(make_runs("20260103-c", 3, seed=3, label="z", start_day=3))
    store.save_runs(make_ab_session("s1", seed=4, factors={"SHA-256": 2.0}))
    store.close()
    documents = []
    for args in (("--by", "label", "x", "y"), ("s1-a", "s1-b"), ()):
        done = run_cli("compare", *args, "--json", "--db", str(db))
        assert done.returncode == 0, done.stderr
        documents.append(ComparisonDocument.model_validate_json(done.stdout))
    assert documents[0].only_before and documents[0].differences
    assert documents[1].design == "pairs" and documents[1].rows[0].pairs
    done = run_cli("compare", "--by", "label", "--all", "--json", "--db", str(db))
    several = ComparisonsDocument.model_validate_json(done.stdout)
    assert len(several.comparisons) >= 3
    done = run_cli("compare", "--by", "label", "--json", "--db", str(slowed))
    slow = ComparisonDocument.model_validate_json(done.stdout)
    assert {r.verdict for r in slow.rows} >= {"slower", "faster"}
    assert slow.news.changes and slow.news.changes[0].verdict == "slower"


def _csv(text: str) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.process
def test_compare_and_history_print_csv(slowed: Path) -> None:
    done = run_cli("compare", "--by", "label", "--csv", "--db", str(slowed))
    assert done.returncode == 0, done.stderr
    rows = {(r["algorithm"], r["operation"]): r for r in _csv(done.stdout)}
    encaps = rows[("ML-KEM-768", "encaps")]
    assert (encaps["before_name"], encaps["after_name"], encaps["verdict"]) == (
        "old", "new", "slower")
    assert float(encaps["before"]) / float(encaps["after"]) == pytest.approx(13.8, rel=0.05)
    # Named for its direction: after over before, above 1 faster; its interval holds it.
    assert float(encaps["speedup"]) == pytest.approx(float(encaps["after"])
                                                     / float(encaps["before"]))
    assert float(encaps["speedup_ci_low"]) <= float(encaps["speedup"]) <= float(
        encaps["speedup_ci_high"]) < 1
    assert "ratio" not in encaps and "ci_low" not in encaps
    done = run_cli("history", "ML-KEM-768", "-o", "encaps", "--by", "label", "--csv",
                   "--db", str(slowed))
    assert done.returncode == 0, done.stderr
    points = _csv(done.stdout)
    assert [(p["build"], p["runs"]) for p in points] == [("old", "5"), ("new", "5")]
    assert float(points[0]["level"]) == pytest.approx(60_000, rel=0.03)
    assert float(points[1]["step_speedup"]) == pytest.approx(1 / 13.8, rel=0.05)
    for command in (("compare", "--by", "label"), ("history", "ML-KEM-768")):
        done = run_cli(*command, "--csv", "--json", "--db", str(slowed))
        assert done.returncode == 2 and "choose one of" in done.stderr


@pytest.mark.process
def test_speed_csv_is_one_tidy_table_for_its_kind(tmp_path: Path) -> None:
    done = run_cli("speed", "x25519", "aes-256-gcm", "--bytes", "1024", *QUICK, "--csv",
                   "--db", str(tmp_path / "r.db"))
    assert done.returncode == 0, done.stderr
    rows = _csv(done.stdout)
    header = set(rows[0])
    assert {"run_id", "algorithm", "ops_per_sec", "bytes_per_sec", "public_key"} <= header
    assert not header & {"handshakes_per_sec", "group", "stack_bytes", "memory_method",
                         "digest", "cache_mode", "path"}  # no TLS, memory or file columns
    for column in header - {"run_id", "algorithm", "implementation", "operation",
                            "block_size", "unit", "ops_per_sec", "us_per_op",
                            "bytes_per_sec", "ci_low", "ci_high", "ci_unit", "ci_level", "cv",
                            "rounds",
                            "total_ops", "cycles_per_op", "cycles_per_byte", "public_key",
                            "secret_key", "ciphertext", "signature", "shared_secret",
                            "label"}:
        assert any(r[column] for r in rows), column  # no attribute column left empty
    # The run's facts on every row: when, on which OS build, under which label.
    assert {"started_at", "os_build", "label"} <= header
    assert all(r["started_at"] and r["os_build"] for r in rows)


@pytest.mark.process
def test_speed_json_gives_each_rows_interval_in_its_headline_unit(tmp_path: Path) -> None:
    """A cipher row is read in bytes/s (its `bytes_per_sec`), a public-key row in ops/s:
    the median's interval is in that unit, and named."""
    done = run_cli("speed", "x25519", "aes-256-gcm", "--bytes", "1024", "--seconds", "0.05",
                   "--rounds", "5", "--json", "--db", str(tmp_path / "r.db"))
    assert done.returncode == 0, done.stderr
    for row in json.loads(done.stdout)["results"]:
        headline = "bytes_per_sec" if row["block_size"] else "ops_per_sec"
        assert row["ci_unit"] == headline.replace("_per_sec", "/s")
        assert row["ci_low"] <= row[headline] <= row["ci_high"], row


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_list_names_every_algorithm_with_its_spellings(columns: str) -> None:
    from pqbench.catalog.algorithms import all_algorithms

    done = run_cli("list", "--json")
    assert done.returncode == 0, done.stderr
    listed = {a["algorithm"]: a for a in json.loads(done.stdout)["algorithms"]}
    assert set(listed) == {a.name for a in all_algorithms()}
    assert listed["AES-256-CBC"]["kind"] == "cipher"
    assert set(listed["AES-256-CBC"]["implementations"]) == {"libcrypto", "cryptography"}
    assert "rsa2048" in listed["RSA-2048"]["spellings"]
    assert listed["RSA-2048"]["on_request"] == ["keygen"]
    table = run_cli("list", env={"COLUMNS": columns}).stdout
    assert max(map(len, table.splitlines())) <= int(columns)
    # A table of algorithms per kind, each under its title ("kem algorithms ..."), then
    # the foreign implementations' table.
    names: list[str] = []
    kinds: list[str] = []
    kind: str | None = None
    for line in table.splitlines():
        title = re.match(r"(\S+) algorithms\b|foreign implementations", line)
        if title:
            kind = title.group(1)
            kinds += [kind] if kind else []
        elif kind and line[:1].strip() and not line.startswith(("─", "not shown", "[")) \
                and line.split()[0] != "algorithm":
            names.append(line.split()[0])
    assert sorted(kinds) == sorted({a["kind"] for a in listed.values()})
    # Every algorithm on a line of its own, in table order within its kind's table.
    assert names == [name for one in kinds for name, a in listed.items() if a["kind"] == one]
    assert "ecdhx25519" in table and "aes256cbc" in table
    done = run_cli("list", "cipher", "--json")
    assert {a["kind"] for a in json.loads(done.stdout)["algorithms"]} == {"cipher"}
    done = run_cli("speed", "xyz")
    assert done.returncode == 2 and "`pqbench list`" in done.stderr


@pytest.mark.process
def test_aes_256_cbc_is_measured_as_openssl_speed_spells_it(tmp_path: Path) -> None:
    """`openssl speed -evp aes-256-cbc`: both implementations, checked first; a block that
    is not whole 16-byte blocks is refused with its reason, never padded silently."""
    done = run_cli("speed", "aes-256-cbc", "--bytes", "1024", *QUICK, "--json",
                   "--db", str(tmp_path / "r.db"))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    rows = {(r["implementation"], r["operation"]) for r in document["results"]}
    assert rows == {(i, op) for i in ("libcrypto", "cryptography")
                    for op in ("encrypt", "decrypt")}
    assert all(r["block_size"] == 1024 and r["key_bits"] == 256
               for r in document["results"])
    done = run_cli("speed", "aes-256-cbc", "--bytes", "24", *QUICK, "--json",
                   "--db", str(tmp_path / "r.db"))
    problems = json.loads(done.stdout)["problems"]
    assert problems and all("16" in p["reason"] for p in problems), problems
    done = run_cli("verify", "aes-256-cbc")
    assert done.returncode == 0, done.stdout + done.stderr


def _rate(text: str) -> float:
    """"798 MB/s" -> 7.98e8."""
    value, unit = text.split()
    return float(value.replace(",", "")) * {"B/s": 1, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
                                            "TB/s": 1e12}[unit]


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_files_hash_answers_sha512_against_sha256_on_the_file(tmp_path: Path, columns: str
                                                              ) -> None:
    """`files hash FILE -a sha256 -a sha512 --runs 10`: both hashes measured (not the last
    -a alone), in alternation with the reads; SHA-512 against SHA-256 on that file as a
    paired ratio with its 99 % interval, and each hash against reading the file; both
    digests whole (users check them with sha256sum -c); the table's rates are the stored
    rows' (the median of the passes), and `ratios RUN` tells the same ratios again."""
    import hashlib
    import os

    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(3 * 2**20 + 5))  # several read buffers, not a whole one
    content = data.read_bytes()
    expected = {"SHA256": hashlib.sha256(content).hexdigest(),
                "SHA512": hashlib.sha512(content).hexdigest()}
    db = tmp_path / "f.db"
    done = run_cli("files", "hash", str(data), "-a", "sha256", "-a", "sha512", "--runs", "10",
                   "--warmup", "1", "--cache", "as-is", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    first, second = document["files"]
    assert (first["algorithm"], second["algorithm"]) == ("SHA-256", "SHA-512")
    assert [first["digest"], second["digest"]] == list(expected.values())
    assert first["runs"] == second["runs"] == 10
    answers = {r["name"]: r for r in document["ratios"]}
    larger = answers[f"SHA-512 [hashlib] against SHA-256 [hashlib], per byte of {data}"]
    assert larger["kind"] == "digest size" and larger["pairs"] == 10
    assert 0.99 <= larger["ci_level"] < 0.995  # the exact coverage 10 pairs reach
    assert 0 < larger["ci_low"] <= larger["estimate"] <= larger["ci_high"]
    assert {r["kind"] for r in document["ratios"]} == {"digest size", "reading"}
    stored = Store.open(str(db), create=False).load_run(document["run_id"])
    assert sorted(len(m.rounds) for m in stored.measurements) == [10, 10, 10]
    assert all(r.ops == 3 * 2**20 + 5 for m in stored.measurements for r in m.rounds)
    rates = {m.algorithm: m.rate for m in stored.measurements}
    assert first["hash_bytes_per_sec"] == rates["SHA-256"]
    assert second["hash_bytes_per_sec"] == rates["SHA-512"]
    assert first["read_bytes_per_sec"] == rates["read"]
    again = run_cli("ratios", document["run_id"], "--json", "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert {r["name"]: r["estimate"] for r in json.loads(again.stdout)["ratios"]} == \
        {name: r["estimate"] for name, r in answers.items()}

    shown = run_cli("files", "hash", str(data), "-a", "sha256", "-a", "sha512", "--runs",
                    "10", "--cache", "as-is", "--db", str(db), env={"COLUMNS": columns})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    for tag, digest in expected.items():  # whole, on a line of its own
        assert f"{tag} ({data}) = {digest}" in lines
    assert max(len(line) for line in lines if " = " not in line) <= int(columns)
    text = " ".join(shown.stdout.split())
    # "2.05x slower [1.98–2.13]", or an interval across 1 by its two ends ("[1.10x slower
    # – 1.27x faster]"), beside the ratio at every width.
    interval = r"\[(?:([\d.]+)–([\d.]+)|[\d.]+x (?:slower|faster)? ?– [\d.]+x ?(?:faster)?)\]"
    # The ratio in `speed_change`'s words: "same speed" where three digits cannot tell the
    # two apart (a CPU where both hashes run at one rate).
    said = r"(?:([\d.]+)x (?:faster|slower)|same speed) "
    told = re.search(r"SHA-512 against SHA-256: " + said + interval
                     + r" \(99 % CI, 10 pairs\)", text)
    assert told is not None, shown.stdout
    if told.group(1) is not None and told.group(2) is not None:
        assert float(told.group(2)) <= float(told.group(1)) <= float(told.group(3))
    for name in ("SHA-256", "SHA-512"):
        assert re.search(rf"hashing with {name} against reading it: " + said
                         + interval + r" \(99 % CI, 10 pairs\)", text), shown.stdout
    run_id = re.search(r"stored as run (\S+)", shown.stderr)
    assert run_id is not None
    table = Store.open(str(db), create=False).load_run(run_id.group(1))
    for m in table.measurements:
        if m.operation != "hash":
            continue
        (row,) = [line for line in lines if f" {m.algorithm} " in f" {line} "
                  and "/s" in line]
        shown_rate = _rate(re.findall(r"[\d.,]+ [kMGT]?B/s", row)[1])
        assert abs(shown_rate - m.rate) <= 0.005 * m.rate  # three digits of the median
    once = run_cli("files", "hash", str(data), "--runs", "1", "--cache", "as-is", "--json",
                   "--db", str(db))
    (single,) = json.loads(once.stdout)["files"]
    assert single["runs"] == 1 and json.loads(once.stdout)["ratios"] == []
    assert single["read_cv"] is None and single["digest"] == expected["SHA256"]
    # Without --runs: the passes the answers need, at least the 8 of a 99 % interval,
    # and both answers, SHA-512 against SHA-256 and each hash against reading the file.
    auto = run_cli("files", "hash", str(data), "-a", "sha256", "-a", "sha512", "--cache",
                   "as-is", "--json", "--db", str(db))
    assert auto.returncode == 0, auto.stderr
    document = json.loads(auto.stdout)
    assert all(8 <= row["runs"] <= 30 for row in document["files"])
    assert sorted(r["kind"] for r in document["ratios"]) == ["digest size", "reading",
                                                             "reading"]
    assert all(r["ci_level"] >= 0.99 for r in document["ratios"])


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_files_hash_shows_progress_and_compare_names_bytes(tmp_path: Path, columns: int
                                                           ) -> None:
    """On a terminal `files hash` says which pass of which file runs, and how far; two
    files runs compared read in bytes per second, never "ops/s"."""
    import os

    from tests.helpers.terminal import in_terminal

    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(2**20))
    db = tmp_path / "p.db"
    for _ in range(2):
        drawn = in_terminal("files", "hash", str(data), "-a", "sha256", "-a", "sha512",
                            "--runs", "2", "--cache", "as-is", columns=columns, db=db)
        progress = [line for line in drawn.splitlines() if re.search(r"\d+/6 ", line)]
        assert any(re.match(r"(SHA-256|SHA-512|read) of /", line) for line in progress), drawn
        assert max(len(line.rstrip()) for line in progress) <= columns
    compared = in_terminal("compare", columns=columns, db=db)
    rows = [line for line in compared.splitlines() if "SHA-512" in line and "→" in line]
    assert rows and all(re.search(r"[kMGT]?B/s", line) for line in rows), compared
    assert "ops/s" not in compared


@pytest.mark.process
def test_report_without_arguments_after_an_ab_session_reports_the_session(
        tmp_path: Path) -> None:
    """`pqbench ab ... && pqbench report`: both sides and the verdicts, told first; not the
    B side alone as if it were this machine's figure."""
    from markdown_it import MarkdownIt

    db = tmp_path / "ab.db"
    done = run_cli("ab", "x25519", "-i", "cryptography", "--a", "here", "--b",
                   "env:PQBENCH_STORY=b", "--label-a", "plain", "--label-b", "with env",
                   "--max-seconds", "2", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    a_id, b_id = json.loads(done.stdout)["session"]["runs"]
    done = run_cli("report", "--out", str(tmp_path / "r"), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert a_id in done.stderr.replace("\n", " ") and b_id in done.stderr.replace("\n", " ")
    tokens = MarkdownIt().enable("table").parse((tmp_path / "r" / "report.md").read_text())
    headings = [tokens[i + 1].content for i, t in enumerate(tokens)
                if t.type == "heading_open"]
    assert headings[0] == "pqbench report: plain → with env"
    assert headings[1] == "Comparison"  # the story first, the tables after it
    assert "plain → with env" in headings
    # The comparison's table: the row measured on both sides, with its verdict.
    rows, row = [], []
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append(t.content)
        elif t.type == "tr_close":
            rows.append(row)
    header = next(i for i, r in enumerate(rows)
                  if any(c == "change" or c.startswith(("change [", "change \\["))
                         for c in r))
    found = rows[header + 1]
    change = next(i for i, c in enumerate(rows[header]) if c.startswith("change"))
    # The change states the verdict: "1.80x slower [...]", "inconclusive: ...", "no change
    # (within ±5 %) [...]", "too few runs: ...".
    assert found[0] == "X25519" and re.match(
        r"(\*\*)?([\d.]+x (faster|slower)|no change|inconclusive:|too few runs:)",
        found[change]), found


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_env_is_grouped_and_says_each_field_once(columns: str) -> None:
    done = run_cli("env", "--all", env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    assert max(map(len, done.stdout.splitlines())) <= int(columns)
    lines = done.stdout.splitlines()
    for title in ("machine", "operating system", "libraries", "OpenSSL capability knobs",
                  "implementations", "pqbench"):
        assert any(line.strip() == title for line in lines), title
    keys = re.findall(r"^[│ ]*([a-z][\w.-]*[a-z0-9_])(?=[: │]{2}|: )", done.stdout, re.M)
    assert "cpu.flags" in keys and "cpu_flags" not in keys  # one copy of the CPU flags
    repeated = {k for k in keys if keys.count(k) > 1}
    assert not repeated
    fingerprint = json.loads(run_cli("env", "--json").stdout)
    assert fingerprint["cpu_flags"] == fingerprint["cpu"]["flags"]  # JSON keeps both
    assert [s["setting"] for s in fingerprint["tuning"]][:2] == ["CPU frequency governor",
                                                                 "turbo boost"]


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_env_says_what_to_tune_and_this_machine_in_a_screen(columns: str) -> None:
    """`env` is not a dump: what to tune (as `pyperf system show`), a setting a line with
    its value here and what to do, then this machine in a few lines."""
    done = run_cli("env", env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) <= 45
    assert max(map(len, done.stdout.splitlines())) <= int(columns)
    settings = {row["setting"]: row for row in read_table(done.stdout, "what to tune")}
    assert list(settings) == ["CPU frequency governor", "turbo boost", "isolated CPUs",
                              "system load", "ASLR", "hypervisor"]
    assert all(row["here"] and row["advice"] for row in settings.values())
    summary = done.stdout.split("this machine, as a run records it", 1)[1]
    assert "OS build" in summary and "liboqs" in summary and "implementations ready" in summary
    assert "env --all" in " ".join(done.stderr.split())


@pytest.mark.process
@pytest.mark.parametrize("command", ["compare", "history", "report", "runs", "export",
                                     "list", "files hash", "speed", "ratios", "show", "ab",
                                     "bisect", "memory", "tls", "verify", "calibrate"])
def test_options_show_words_not_python_types(command: str) -> None:
    """`--json` is a flag, `--by FIELD` takes a field, `PATH` is a path: not `<bool>`,
    `<str>` or `<list[str]>`, for `--help` itself too."""
    done = run_cli(*command.split(), "--help", env={"COLUMNS": "120"})
    assert done.returncode == 0
    options = [line for line in done.stdout.splitlines() if re.match(r"│ +(--|\*|[A-Z])", line)]
    assert any("--help" in line for line in options)
    assert not [line for line in options if re.search(r"<[a-z]+(\[[a-z]+\])?>", line)], options
    if command in ("compare", "report"):
        assert re.search(r"--by +FIELD", done.stdout) and re.search(r"--db +DB", done.stdout)


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five runs a side; the second side's system libcrypto is another OpenSSL (one
    version, held by two fingerprint fields) and its Python another executable."""
    from tests.helpers.runs import environment

    db = tmp_path_factory.mktemp("upgraded") / "results.db"
    store = Store.open(str(db))
    old = environment(label="old", python_executable="/usr/bin/python3.11")
    old["libraries"]["libcrypto"] = old["libraries"]["system_libcrypto"] = "OpenSSL 3.0.19"
    new = environment(label="new", python_executable="/opt/pqbench/ux-f21b13a1/.venv/bin/"
                      "python3.13-with-a-long-name")
    new["libraries"]["libcrypto"] = new["libraries"]["system_libcrypto"] = \
        "OpenSSL 3.5.9 29 Sep 2026"
    store.save_runs(make_runs("20260101-o", 5, seed=1, label="old", env=old))
    store.save_runs(make_runs("20260102-n", 5, seed=2, label="new", start_day=2, env=new))
    store.close()
    return db


@pytest.mark.process
@pytest.mark.parametrize("columns", ["80", "120"])
def test_compare_differences_name_a_version_once_and_keep_words_whole(
        upgraded: Path, columns: str) -> None:
    done = run_cli("compare", "--by", "label", "--db", str(upgraded),
                   env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    part = done.stdout[done.stdout.index("fingerprint differences"):]
    # The new OpenSSL once, its two fields on one line, not a line per field.
    assert part.count("OpenSSL 3.5.9 29 Sep 2026") == 1, part
    # Every word of every value whole on one line: a path is never cut mid-word.
    words = part.split()
    for word in ("/opt/pqbench/ux-f21b13a1/.venv/bin/python3.13-with-a-long-name",
                 "/usr/bin/python3.11", "libraries.system_libcrypto"):
        assert any(word in w for w in words), (word, part)
    assert all(len(line) <= int(columns) or " " not in line.strip()
               for line in part.splitlines())

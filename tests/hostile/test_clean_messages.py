"""Values that used to end in a traceback or a raw Python message: a clear message and a
non-zero exit status, at the option or the database that is wrong. The report's
"Reproduce with" line names the very file a run measured, control characters and all."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.store import Store
from tests.helpers import run_cli
from tests.helpers.markdown import parse
from tests.helpers.runs import make_run


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result.exit_code, result.stderr


@pytest.mark.parametrize("value", ["5e-324", "1e-9", "0.0009"])
def test_seconds_too_short_for_the_loop_are_refused_at_the_option(tmp_path: Path,
                                                                  value: str) -> None:
    """The native loops time rounds of whole nanoseconds: a shorter --seconds is a usage
    error, before the loop's own ValueError."""
    code, stderr = _invoke("speed", "ml-kem-768", "--seconds", value, "--db",
                           str(tmp_path / "x.db"))
    assert code == 2 and "--seconds" in stderr and "0.001" in stderr, stderr
    assert not (tmp_path / "x.db").exists()


def _damage(location: str, column: str, value: str) -> None:
    """`column` of run 20260101-a set to `value`, as a damaged file or a hand edit leaves it."""
    if location.startswith("postgresql"):
        import psycopg

        with psycopg.connect(location) as conn:
            conn.execute(f"UPDATE pqbench_runs SET {column} = %s::json "  # our own column
                         "WHERE run_id = '20260101-a'", (value,))
        return
    with sqlite3.connect(location) as conn:
        conn.execute(f"UPDATE pqbench_runs SET {column} = ? WHERE run_id = '20260101-a'",
                     (value,))


@pytest.mark.process
@pytest.mark.parametrize("backend, column, damage", [
    ("sqlite", "settings", "{not json"), ("sqlite", "environment", "{not json"),
    # PostgreSQL's json type holds only valid JSON: there the damage is not an object.
    ("postgresql", "settings", "[1, 2]"), ("postgresql", "environment", '"text"'),
])
def test_a_damaged_column_is_one_clear_message_in_every_reader(
        request: pytest.FixtureRequest, tmp_path: Path, backend: str, column: str,
        damage: str) -> None:
    """show, report, export and history said "holds a value pqbench cannot read
    (JSONDecodeError('Expecting property name...'))" where compare and ratios named the run:
    every reader now names the run and the column in one wording."""
    if backend == "sqlite":
        location = str(tmp_path / "runs.db")
    else:
        from tests.helpers.postgres import fresh_database

        location = fresh_database(request.getfixturevalue("postgres_base"))
    store = Store.open(location)
    store.save_runs([make_run("20260101-a", seed=1), make_run("20260102-b", seed=2)])
    store.close()
    _damage(location, column, damage)
    problem = "Expecting property name" if damage.startswith("{") else "not a JSON object"
    said = (f"error: the {column} of run 20260101-a cannot be read ({problem}")
    for args in (["show", "20260101-a"], ["compare"],
                 ["compare", "20260101-a", "20260102-b"], ["ratios", "20260101-a"],
                 ["history", "ML-KEM-768"], ["export", "--all", "-O", str(tmp_path / "e")],
                 ["report", "20260101-a", "--out", str(tmp_path / "r")]):
        done = run_cli(*args, "--db", location)
        assert done.returncode == 1, (args, done.stderr)
        assert said in done.stderr and "the database may be damaged" in done.stderr, \
            (args, done.stderr)
        assert "Traceback" not in done.stderr and "Error(" not in done.stderr, done.stderr


@pytest.mark.process
def test_report_by_a_field_whose_groups_share_no_row_says_so(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1))
    store.close()
    (tmp_path / "f.bin").write_bytes(b"x" * 4096)
    hashed = run_cli("files", "hash", str(tmp_path / "f.bin"), "--runs", "1", "--db", str(db))
    assert hashed.returncode == 0, hashed.stderr
    # The two runs are two machines' (the stored run's and this one's): mixed as asked.
    result = CliRunner().invoke(app, ["report", "--by", "kind", "--cross-machine", "--out",
                                      str(tmp_path / "r"), "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "the --by kind groups (files, speed) share no row to compare" in said, said
    assert "every run has the same" not in said


def test_report_to_a_path_under_a_file_names_the_file(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = Store.open(str(db))
    store.save_run(make_run("20260101-a", seed=1))
    store.close()
    for out in ("/dev/null", "/dev/null/x.md"):
        code, stderr = _invoke("report", "20260101-a", "--out", out, "--force",
                               "--db", str(db))
        assert code == 1 and "/dev/null is not a folder" in stderr, stderr
        assert "File exists" not in stderr and "Not a directory" not in stderr


@pytest.mark.process
def test_reproduce_with_names_a_file_whose_name_holds_control_characters(tmp_path: Path
                                                                         ) -> None:
    tricky = tmp_path / "a\x1bb\tc.bin"
    tricky.write_bytes(b"x" * 4096)
    (tmp_path / "abc.bin").write_bytes(b"y")  # what the line named with them dropped
    db = tmp_path / "runs.db"
    done = run_cli("files", "hash", str(tricky), "--runs", "1", "--db", str(db))
    assert done.returncode == 0, done.stderr
    (info,) = Store.open(str(db), create=False).list_runs()
    made = run_cli("report", info.run_id, "--out", str(tmp_path / "r"), "--db", str(db))
    assert made.returncode == 0, made.stderr
    blocks = [t.content for t in parse((tmp_path / "r" / "report.md").read_text())
              if t.type == "fence" and "pqbench" in t.content]
    (line,) = blocks
    # The line as a shell runs it, with `pqbench` replaced by a function that lists its
    # arguments: the file among them is the file measured.
    argv = subprocess.run(["bash", "-c", 'pqbench() { printf "%s\\0" "$@"; }\n' + line],
                          capture_output=True, check=True).stdout.split(b"\0")
    assert str(tricky).encode() in argv, argv


@pytest.mark.process
def test_an_empty_run_id_names_no_run(tmp_path: Path) -> None:
    """`show ''` listed every run as "ambiguous": every id starts with the empty text."""
    db = tmp_path / "runs.db"
    Store.open(str(db)).save_runs([make_run("20260101-a", seed=1), make_run("20260102-b", seed=2)])
    for args in (["show", ""], ["show", " "], ["export", "", "-O", str(tmp_path / "e.json")],
                 ["report", "", "--out", str(tmp_path / "r")], ["compare", "", "20260101-a"]):
        done = run_cli(*args, "--db", str(db))
        assert done.returncode == 2, (args, done.stderr)
        assert "a run id is empty" in done.stderr and "ambiguous" not in done.stderr, \
            (args, done.stderr)
        assert "Traceback" not in done.stderr


@pytest.mark.process
def test_files_hash_suggests_only_hashes(tmp_path: Path) -> None:
    """`files hash -a md5` suggested "Did you mean: ML-DSA-65?"."""
    file = tmp_path / "f.bin"
    file.write_bytes(b"x")
    done = run_cli("files", "hash", "-a", "md5", str(file), "--db", str(tmp_path / "f.db"))
    assert done.returncode == 2 and "unknown algorithm 'md5'" in done.stderr, done.stderr
    assert "ML-DSA" not in done.stderr and "Did you mean" not in done.stderr, done.stderr
    typo = run_cli("files", "hash", "-a", "sha265", str(file), "--db", str(tmp_path / "f.db"))
    assert "Did you mean: SHA-256" in typo.stderr, typo.stderr


@pytest.mark.process
def test_annotate_refuses_a_build_no_run_has_and_names_those_there_are(tmp_path: Path) -> None:
    """`annotate no-such-build x` said "noted for no-such-build" and exited 0: a note no
    history or report would ever show."""
    db = tmp_path / "runs.db"
    Store.open(str(db)).save_runs([make_run("20260101-a", seed=1, label="before"),
                                   make_run("20260102-b", seed=2, label="after")])
    refused = run_cli("annotate", "no-such-build", "x", "--db", str(db))
    assert refused.returncode == 2, refused.stderr
    assert "no stored run has the build 'no-such-build'" in refused.stderr, refused.stderr
    assert "the OS build is '18E226'; the labels are 'before', 'after'" in \
        " ".join(refused.stderr.split()), refused.stderr
    assert "noted" not in refused.stdout + refused.stderr
    taken = run_cli("annotate", "18E226", "AES-NI enabled", "--db", str(db))
    assert taken.returncode == 0 and "noted for 18E226" in taken.stderr + taken.stdout, \
        taken.stderr
    assert [note[:2] for note in Store.open(str(db), create=False).annotations()] == \
        [("18E226", "AES-NI enabled")]

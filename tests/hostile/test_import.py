"""Imports of hostile files: one schema refuses each cleanly, and nothing is half-stored.

Every hostile probe is here: a valid run followed by one with block_size 10**30, `kind:
null`, `problems: null`, `verifications: null`, `sizes.public_key: "abc"`, 100000 nested
`[`, a 5000-digit integer, NaN and infinity in the summary figures. A fuzz test mutates a
real export (the session's `small_run`) and requires a clean import or a clear error with
the database unchanged, byte for byte.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.record import transfer
from pqbench.data.record.models import json_schema
from pqbench.data.store import Store
from tests.helpers import REPO
from tests.helpers.runs import json_paths, make_run


@pytest.fixture
def base_db(tmp_path: Path) -> Path:
    """A database holding one run, so 'unchanged' means something."""
    db = tmp_path / "base.db"
    store = Store.open(str(db))
    store.save_run(make_run("20250101-base", seed=9))
    store.close()
    return db


def _bundle(*run_ids: str) -> dict[str, Any]:
    return json.loads(transfer.export([make_run(r, seed=i) for i, r in enumerate(run_ids)],
                                      "json"))


def _import(db: Path, *files: Path) -> Any:
    return CliRunner().invoke(app, ["import", *map(str, files), "--db", str(db)])


def _refused(db: Path, text: str, message: str, tmp_path: Path) -> None:
    before = db.read_bytes()
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = _import(db, bad)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    assert result.exit_code == 1, result.output
    assert message in " ".join(result.stderr.split()), result.stderr
    assert db.read_bytes() == before


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    *parents, leaf = path.split(".")
    target: Any = doc
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[int(leaf) if leaf.isdigit() else leaf] = value
    return doc


@pytest.mark.parametrize("path, value, message", [
    ("runs.1.results.0.block_size", 10**30, "run 2 (20260102-b): results[0].block_size"),
    ("runs.0.kind", None, "kind"),
    ("runs.0.problems", None, "problems"),
    ("runs.0.verifications", None, "verifications"),
    ("runs.0.results.0.sizes.public_key", "abc", "results[0].sizes.public_key"),
    ("runs.0.results.0.ops_per_sec", float("nan"), "ops_per_sec: Input should be a finite"),
    ("runs.0.results.0.ci_low", float("inf"), "ci_low: Input should be a finite"),
    ("runs.0.results.0.ci_high", float("-inf"), "ci_high"),
    ("runs.0.results.0.samples.0.ops", 2**63, "samples[0].ops"),
    ("runs.0.results.0.samples.0.cycles", -1, "samples[0].cycles"),
    ("runs.0.label", "a\x00b", "NUL"),
    ("runs.0.label", "x" * 1001, "label"),
    ("runs.0.environment.testbed", "t" * 65, "environment.testbed"),
    ("runs.0.environment.cpu_flags", "aes", "environment.cpu_flags"),
    ("runs.0.settings.seconds", "1", "settings.seconds"),
    ("runs.0.started_at", "yesterday", "started_at"),
    ("runs.0.results.0.key_bits", True, "key_bits"),
    ("runs.0.results.0.anything", json.loads("[" * 20 + "]" * 20), "nested deeper"),
    ("runs.0.run_id", "../../etc/passwd", "not a pqbench run id"),
    ("runs.0.surprise", 1, "surprise"),
], ids=lambda v: str(v)[:40])
def test_each_malformed_field_is_refused_and_nothing_is_stored(
        base_db: Path, tmp_path: Path, path: str, value: Any, message: str) -> None:
    doc = _set(_bundle("20260101-a", "20260102-b"), path, value)
    _refused(base_db, json.dumps(doc), message, tmp_path)


def test_a_lone_surrogate_is_refused(base_db: Path, tmp_path: Path) -> None:
    text = json.dumps(_bundle("20260101-a")).replace('"label": null', '"label": "\\ud800"', 1)
    _refused(base_db, text, "label: Input should be a valid string", tmp_path)


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"format": "pqbench-run", "format_version": 1, "run_id": ' + "9" * 5000 + "}",
     "integer string conversion"),
], ids=["deep nesting", "5000-digit integer"])
def test_parser_limits_are_clean_refusals(base_db: Path, tmp_path: Path, text: str,
                                          message: str) -> None:
    _refused(base_db, text, message, tmp_path)


def test_one_bad_file_of_several_stores_nothing(base_db: Path, tmp_path: Path) -> None:
    before = base_db.read_bytes()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_bundle("20260101-a")))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_set(_bundle("20260102-b"), "runs.0.kind", None)))
    result = _import(base_db, good, bad)
    assert result.exit_code == 1 and "bad.json" in result.stderr
    assert base_db.read_bytes() == before


def test_a_run_failing_in_the_store_takes_the_others_back(
        base_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """All runs of all files go in one transaction: a fault while writing the third run's
    result rows (after the run rows of all three and the result rows of two) leaves the
    first two unstored too."""
    from pqbench.data.store import bulk

    files = []
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(_bundle(f"20260101-{name}")))
        files.append(path)
    real = bulk._rows

    def failing(*args: Any, **kwargs: Any) -> Iterator[tuple[Any, ...]]:
        for row in real(*args, **kwargs):
            if row[0] == "20260101-c":
                raise OperationalError("INSERT", {}, Exception("disk I/O error (injected)"))
            yield row

    monkeypatch.setattr(bulk, "_rows", failing)
    result = _import(base_db, *files)
    assert result.exit_code == 1 and "disk I/O error" in result.stderr
    monkeypatch.undo()
    assert [r.run_id for r in Store.open(str(base_db)).list_runs()] == ["20250101-base"]


def test_version_1_files_of_the_old_writer_still_import(base_db: Path, tmp_path: Path) -> None:
    """Before this format was checked, a single round's undefined CV was written as NaN."""
    doc = _bundle("20260101-a")
    row = doc["runs"][0]["results"][0]
    row["samples"], row["cv"] = row["samples"][:1], float("nan")
    text = json.dumps(doc)
    assert '"cv": NaN' in text
    path = tmp_path / "old.json"
    path.write_text(text)
    result = _import(base_db, path)
    assert result.exit_code == 0, result.stderr
    run = Store.open(str(base_db)).load_run("20260101-a")
    assert len(run.measurements[0].rounds) == 1


def test_the_published_schema_is_what_the_models_generate() -> None:
    committed = json.loads((REPO / "docs" / "run-format.schema.json").read_text())
    assert committed == json_schema(), \
        "regenerate: python -m pqbench.data.record > docs/run-format.schema.json"


def test_the_schema_accepts_a_real_run_and_pqbench_reimports_its_own_export(small_run) -> None:
    from pqbench.data.record.models import RunDocument

    _, doc = small_run
    RunDocument.model_validate(doc)
    assert "NaN" not in json.dumps(doc) and "Infinity" not in json.dumps(doc)


# --- fuzzing ------------------------------------------------------------------------------

HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    st.sampled_from(["", "\x00", "\x1b[2J", "[/bold]", "<script>", "\ud800", "x" * 20_000]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                         max_size=2),
)


def _mutate(doc: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    leaf = path[-1]
    if action == "delete":
        del parent[leaf]
    elif action == "add" and isinstance(parent, dict):
        parent[f"{leaf}_extra"] = value
    else:
        parent[leaf] = value
    return doc


@pytest.fixture(scope="module")
def real_export(small_run, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db, doc = small_run
    store = Store.open(str(db), create=False)
    exported = json.loads(transfer.export([store.load_run(str(doc["run_id"]))], "json"))
    store.close()
    return exported


@pytest.mark.slow
@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_imports_end_cleanly_with_the_database_unchanged_on_error(
        real_export: dict[str, Any], base_db: Path, tmp_path: Path, data: st.DataObject) -> None:
    paths = json_paths(real_export, 3)
    path = data.draw(st.sampled_from(paths), label="path")
    action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
    value = data.draw(HOSTILE, label="value")
    mutated = _mutate(real_export, path, action if path else "replace", value)
    text = json.dumps(mutated)
    cut = data.draw(st.sampled_from([None, None, None, len(text) // 3]), label="truncate")
    db = tmp_path / "fuzz.db"
    shutil.copyfile(base_db, db)
    before = db.read_bytes()
    source = tmp_path / "fuzz.json"
    source.write_text(text if cut is None else text[:cut], errors="surrogatepass")
    result = _import(db, source)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        assert result.stderr.startswith("error:")
        assert db.read_bytes() == before
        return
    # Imported: the run must be usable by the commands that read it.
    for command in (["runs"], ["export", str(mutated["runs"][0]["run_id"])]):
        after = CliRunner().invoke(app, [*command, "--db", str(db)])
        assert after.exit_code == 0 and after.exception is None, (command, after.output)


def test_a_run_stored_with_other_contents_is_named_not_skipped_silently(
        location: str, tmp_path: Path) -> None:
    """Both backends: importing an export again skips its runs quietly; importing a run
    whose id is stored with other contents says so, names it, keeps the stored run, and
    exits 1, while the file's other runs are imported."""
    store = Store.open(location)
    store.save_run(make_run("20260101-a", seed=0))  # as _bundle makes it
    store.close()
    same = tmp_path / "same.json"
    same.write_text(json.dumps(_bundle("20260101-a")))
    again = CliRunner().invoke(app, ["import", str(same), "--db", location])
    assert again.exit_code == 0 and "1 already stored" in again.stderr, again.stderr
    changed = _set(_bundle("20260101-a", "20260102-b"), "runs.0.label", "edited elsewhere")
    other = tmp_path / "other.json"
    other.write_text(json.dumps(changed))
    result = CliRunner().invoke(app, ["import", str(other), "--db", location])
    assert result.exit_code == 1, result.output
    message = " ".join(result.stderr.split())
    assert "20260101-a" in message and "other contents" in message, message
    runs = {r.run_id: r for r in Store.open(location, create=False).load_runs()}
    assert sorted(runs) == ["20260101-a", "20260102-b"]
    assert runs["20260101-a"].label != "edited elsewhere"
    listed = CliRunner().invoke(app, ["import", str(other), "--json", "--db", location])
    assert json.loads(listed.stdout)["stored_with_other_contents"] == ["20260101-a"]

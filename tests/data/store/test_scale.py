"""The store at fleet scale (issue #16), on SQLite and a real PostgreSQL server: commands
ask for what they need (the statements sent name only the groups compared, and their
number does not grow with the database), bulk writes are all-or-nothing across write
batches, and the answers are the ones a whole load gives.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import create_engine, event, func, select, update
from typer.testing import CliRunner

from pqbench.app.compare import compare_groups
from pqbench.app.history import history_of_runs
from pqbench.cli import app
from pqbench.data.record import codec
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.data.record.rounds import LoopResult
from pqbench.data.record.runs import group_runs
from pqbench.data.store import RunFilter, Store, bulk, schema
from pqbench.platform.errors import StoreError
from tests.helpers import old_schemas
from tests.helpers.postgres import fresh_database
from tests.helpers.runs import environment, make_run, make_runs


def _history(builds: int, per_build: int = 5) -> list[Run]:
    """`builds` OS builds of `per_build` runs each; build 2 onwards is 30 % faster."""
    runs: list[Run] = []
    for b in range(builds):
        name = f"b{b:02d}"
        runs += make_runs(f"{name}-", per_build, seed=10 + b, label=name, start_day=b + 1,
                          factor=1.3 if b >= 2 else 1.0,
                          env=environment(label=name, os_build=name))
    return runs


class Statements:
    """Every statement sent to the database, with its parameters."""

    def __init__(self, store: Store) -> None:
        self.sent: list[tuple[str, Any]] = []
        event.listen(store.engine, "before_cursor_execute", self._record)

    def _record(self, _conn: Any, _cursor: Any, statement: str, parameters: Any,
                _context: Any, _executemany: bool) -> None:
        self.sent.append((statement, parameters))

    def reading(self, table: str) -> list[tuple[str, Any]]:
        return [(s, p) for s, p in self.sent
                if s.lstrip().upper().startswith("SELECT") and f"FROM {table}" in s]


def _values(parameters: Any) -> set[str]:
    found = parameters.values() if isinstance(parameters, dict) else parameters or ()
    flat: set[str] = set()
    for value in found:
        if isinstance(value, list | tuple):
            flat.update(map(str, value))
        else:
            flat.add(str(value))
    return flat


# --- query shapes ---------------------------------------------------------------------------


def _load_two_builds(location: str) -> tuple[list[Run], Statements]:
    store = Store.open(location)
    seen = Statements(store)
    loaded = store.load_runs(RunFilter(by="label", values=("b01", "b02")))
    return loaded, seen


@pytest.mark.process
def test_compare_of_two_builds_asks_only_for_their_rows(location: str) -> None:
    store = Store.open(location)
    store.save_runs(_history(3))
    loaded, seen = _load_two_builds(location)
    wanted = {r.run_id for r in loaded}
    assert wanted == {f"b0{b}-{i}" for b in (1, 2) for i in range(5)}
    # The run rows are chosen in SQL by the label column (then the fingerprints of those
    # runs read by their ids: one a distinct fingerprint) ...
    run_queries = seen.reading(schema.runs.name)
    assert run_queries and {"b01", "b02"} <= _values(run_queries[0][1])
    for _, parameters in run_queries[1:]:
        ids = {v for v in _values(parameters) if re.match(r"b\d\d-\d", v)}
        assert ids and ids <= wanted, ids - wanted
    # ... and the result rows (rounds and all) are asked for those runs alone.
    queries = seen.reading(schema.measurements.name)
    assert queries
    for _, parameters in queries:
        ids = {v for v in _values(parameters) if re.match(r"b\d\d-\d", v)}
        assert ids and ids <= wanted, ids - wanted
    # Every stored round of those runs, none of the others.
    assert sum(len(m.rounds) for r in loaded for m in r.measurements) == 10 * 4 * 9


def test_statements_do_not_grow_with_the_database(location: str) -> None:
    """compare of two builds and history of one row send as many statements whether the
    database holds three builds or nine."""
    counts = []
    for builds in (3, 9):
        place = location if builds == 3 else (
            location.replace(".db", "-9.db") if "://" not in location
            else fresh_database(location.rsplit("/", 1)[0]))
        store = Store.open(place)
        store.save_runs(_history(builds))
        seen = Statements(store)
        store.load_runs(RunFilter(by="label", values=("b01", "b02")))
        compare_count = len(seen.sent)
        seen.sent.clear()
        store.load_runs(RunFilter(algorithms=("ML-KEM-768",), implementation="liboqs",
                                  operation="encaps"), fingerprints=False)
        rows = seen.reading(schema.measurements.name)
        assert rows and all("ML-KEM-768" in _values(p) for _, p in rows)
        counts.append((compare_count, len(seen.sent)))
    assert counts[0] == counts[1]


def test_history_loads_one_row_of_every_run_without_fingerprints(location: str) -> None:
    store = Store.open(location)
    store.save_runs(_history(3))
    runs = store.load_runs(RunFilter(algorithms=("ML-KEM-768",), implementation="liboqs",
                                     operation="decaps"), fingerprints=False)
    assert len(runs) == 15
    assert {m.key for r in runs for m in r.measurements} == {
        ("ML-KEM-768", "liboqs", "decaps", None)}
    # Only the fields kept as columns: what grouping by them needs.
    assert dict(runs[0].environment) == {"os_build": "b00", "hostname": "mac",
                                         "testbed": "tb-1"}
    assert [r.label for r in runs] == [f"b0{b}" for b in range(3) for _ in range(5)]
    # The settings read as text, decoded when asked (codec.JsonObject), equal the stored.
    assert all(r.settings == {"rounds": 9} and dict(r.settings) == {"rounds": 9}
               for r in runs)


def test_a_history_leaves_problems_and_checks_unread(location: str) -> None:
    """`notes=False` (history draws rates only) reads neither list; by default both are
    read, kept to the algorithm and implementation asked for."""
    kept = (Problem("ML-KEM-768", "liboqs", "no rate", "no time", "keygen"),
            Verification("ML-KEM-768", "liboqs", ("kat",)))
    notes_made = {"problems": (kept[0], Problem("SHA-256", "python", "error", "x")),
                  "verifications": (kept[1], Verification("ML-KEM-768", "other", ("kat",)),
                                    Verification("AES-256-XTS", "cryptography", ("kat",)))}
    store = Store.open(location)
    store.save_runs([replace(run, **notes_made) for run in _history(3)])
    for notes in (True, False):
        seen = Statements(store)
        runs = store.load_runs(RunFilter(algorithms=("ML-KEM-768",), implementation="liboqs",
                                         operation="decaps", notes=notes), fingerprints=False)
        assert len(runs) == 15 and all(len(r.measurements) == 1 for r in runs)
        assert {(r.problems, r.verifications) for r in runs} == \
            {((kept[0],), (kept[1],)) if notes else ((), ())}
        read = " ".join(s for s, _ in seen.reading(schema.runs.name))
        assert all((f"{schema.runs.name}.{name}" in read) == notes
                   for name in schema.NOTE_COLUMNS), (notes, read)


def test_a_format_1_label_in_the_fingerprint_moves_to_its_column(location: str) -> None:
    """A run an older pqbench stored with its label in the fingerprint alone (format 1)
    gets it in the label column when the store is upgraded, so it is found by label in
    SQL and without fingerprints alike; a label the column had stays."""
    legacy = make_run("old-0", seed=1, label="legacy", env=environment(label="legacy"))
    kept = make_run("kept-0", seed=2, label="b01", env=environment(label="other"))
    bare = make_run("bare-0", seed=3, label=None, env=environment())  # no label anywhere
    Store.open(location).save_runs([legacy, kept, bare])
    engine = create_engine(old_schemas.url(location))
    with engine.begin() as conn:  # as the writer before the label had its column left it
        conn.execute(update(schema.runs).where(schema.runs.c.run_id == "old-0")
                     .values(label=None))
    engine.dispose()
    old_schemas.as_version(location, 2)
    store = Store.open(location)
    assert [r.run_id for r in store.load_runs(RunFilter(by="label", values=("legacy",)))] \
        == ["old-0"]
    labels = {r.run_id: r.label for r in store.load_runs(rows_too=False, fingerprints=False)}
    assert labels == {"old-0": "legacy", "kept-0": "b01", "bare-0": None}
    assert {r.run_id: r.label for r in store.load_runs(rows_too=False)} == labels


# --- results as a whole load gives them -----------------------------------------------------


def _with_ratios(document: dict, before: list, after: list) -> dict:
    """A comparison as `compare --json` prints it: with each run's ratios followed."""
    from pqbench.analysis import ratios

    return {**document, "ratios": [f.as_dict() for f in ratios.across(before, after)]}


def test_compare_and_history_answer_as_a_whole_load_does(location: str) -> None:
    store = Store.open(location)
    store.save_runs(_history(4))
    everything = store.load_runs()  # the whole history, as commands loaded it before
    runner = CliRunner()

    two = runner.invoke(app, ["compare", "--by", "label", "b01", "b02", "--json",
                              "--db", location])
    assert two.exit_code == 0, two.output
    groups = dict(group_runs(everything, "label"))
    expected = compare_groups([("b01", groups["b01"]), ("b02", groups["b02"])])
    assert json.loads(two.stdout) == json.loads(json.dumps(
        _with_ratios(expected[0].as_dict(), groups["b01"], groups["b02"]), default=str))

    every = runner.invoke(app, ["compare", "--by", "os_build", "--all", "--json",
                                "--db", location])
    assert every.exit_code == 0, every.output
    by_build = group_runs(everything, "os_build")
    expected = compare_groups(by_build)
    assert len(expected) == 3
    followed = [_with_ratios(c.as_dict(), before, after) for c, (_, before), (_, after)
                in zip(expected, by_build[:-1], by_build[1:], strict=True)]
    assert json.loads(every.stdout) == json.loads(json.dumps({"comparisons": followed},
                                                             default=str))

    newest = runner.invoke(app, ["compare", "--by", "os_build", "--json", "--db", location])
    assert newest.exit_code == 0, newest.output  # by default the newest two groups only
    assert json.loads(newest.stdout) == json.loads(json.dumps(followed[-1], default=str))

    for by in ("os_build", "libraries.cryptography"):  # a column, and a fingerprint path
        shown = runner.invoke(app, ["history", "ml-kem-768", "--by", by, "--json",
                                    "--db", location])
        assert shown.exit_code == 0, shown.output
        series = history_of_runs(everything, "ml-kem-768", by=by)
        assert json.loads(shown.stdout)["series"] == json.loads(json.dumps(
            [s.as_dict() for s in series], default=str))


def test_history_of_an_unmeasured_algorithm_names_the_measured_ones(location: str) -> None:
    store = Store.open(location)
    store.save_runs(_history(1))
    shown = CliRunner().invoke(app, ["history", "ML-DSA-65", "--db", location])
    assert shown.exit_code != 0
    assert "no stored run measured ML-DSA-65; measured: AES-256-XTS, ML-KEM-768, SHA-256" \
        in " ".join(shown.output.split())


# --- bulk writes ------------------------------------------------------------------------------


@pytest.mark.slow
def test_an_import_larger_than_a_statement_is_all_or_nothing(
        location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The broken row is in the last of several statements (SQLite), at the end of a COPY
    of many rows (PostgreSQL): nothing of any run is written."""
    monkeypatch.setattr(bulk, "ROWS_PER_STATEMENT", 50)
    many = [make_run(f"bulk-{i:04d}", seed=i, rounds=2) for i in range(405)]
    good = many[-1]
    broken = Measurement(algorithm=None, implementation="x", operation="y",  # type: ignore[arg-type]
                         rounds=(LoopResult(1, 1000, None),))
    many[-1] = Run(**{**good.__dict__, "measurements": (*good.measurements, broken)})
    store = Store.open(location)
    with pytest.raises(StoreError, match="nothing was written"):
        store.save_runs(many)
    with store.engine.connect() as conn:
        for table in (schema.runs, schema.measurements):
            assert conn.execute(select(func.count()).select_from(table)).scalar() == 0
    many[-1] = good
    assert store.save_runs(many) == [r.run_id for r in many]
    assert store.save_runs([*many[:3], make_run("fresh", seed=1)]) == ["fresh"]
    assert [codec.run_document(r) for r in store.load_runs(RunFilter(ids=(many[-2].run_id,)))] \
        == [codec.run_document(many[-2])]


@pytest.mark.process
def test_the_same_run_twice_in_one_import_is_stored_once(location: str) -> None:
    first = make_run("twice", seed=1)
    second = make_run("twice", seed=2)
    store = Store.open(location)
    assert store.save_runs([first, second]) == ["twice"]
    assert codec.run_document(store.load_run("twice")) == codec.run_document(first)

"""The fast import path (issue #16) agrees with the models it is derived from.

`record.validation` checks a file in one pass over its bytes and the store writes rows
straight from the validated documents (`codec.row_columns`). Both must give what the
slower, older path gives: the models' `model_dump(exclude_unset=True)` of every document
they accept, a refusal (the models' own message) for every one they refuse, and, in the
store, the same rows as `Store.save_runs` of the Runs built from the same documents, on
SQLite and PostgreSQL.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from sqlalchemy import select

from pqbench.data.record import codec, models, transfer, validation
from pqbench.data.record.format import BUNDLE_VERSION, FORMAT_VERSION
from pqbench.data.store import Store, bulk, schema
from pqbench.platform.errors import InputFileError
from tests.helpers.runs import json_paths, make_run


def _export(*run_ids: str) -> dict[str, Any]:
    return json.loads(transfer.export([make_run(r, seed=i) for i, r in enumerate(run_ids)],
                                      "json"))


def _by_models(text: str) -> list[dict[str, Any]]:
    """The documents as the models accept them (the reference path)."""
    data = json.loads(text)
    model = models.Bundle if data.get("format") == "pqbench-export" else models.RunDocument
    validated = model.model_validate(data)
    runs = validated.runs if isinstance(validated, models.Bundle) else [validated]
    return [run.model_dump(exclude_unset=True) for run in runs]


def _fast(text: str) -> list[dict[str, Any]] | None:
    found = validation.validate(text.encode("utf-8", "surrogatepass"))
    if found is None:
        return None
    return found["runs"] if found["format"] == "pqbench-export" else [found]


def _varied_rows(doc: dict[str, Any]) -> dict[str, Any]:
    """An export whose rows carry what the row columns treat specially."""
    doc = copy.deepcopy(doc)
    rows = doc["runs"][0]["results"]
    rows[0]["samples"][0]["cycles"] = 12_345  # cycles on some rounds only
    rows[0]["key_bits"] = 256  # a typed attribute
    rows[0]["vendor_note"] = {"flag": True, "zero": -0.0, "list": [1, "x"]}  # free JSON
    rows[1]["samples"] = [{"ops": 0, "elapsed_ns": 5}]  # no rate at all
    rows[2].update(unit="byte", block_size=1)  # format 1's file rows: bytes as 1-byte ops
    rows[3]["sizes"] = {"public_key": 1184, "ciphertext": 1088}
    doc["runs"][0]["problems"] = [{"algorithm": "X", "implementation": "y", "kind": "error",
                                   "reason": "tab\there, newline\nthere, back\\slash"}]
    doc["runs"][0]["verifications"] = [{"algorithm": "X", "implementation": "y",
                                        "checks": ["kat"]}]
    return doc


# --- the validator ------------------------------------------------------------------------


def test_every_model_field_has_its_mirror() -> None:
    """A field added to a model reaches the fast path too (or fails loudly there)."""
    def mirrored(model: type[BaseModel]) -> None:
        mirror = validation._mirror(model)
        assert set(mirror.__annotations__) == set(model.model_fields), model.__name__
        assert mirror.__required_keys__ == {n for n, f in model.model_fields.items()
                                            if f.is_required()}, model.__name__

    for model in (models.Bundle, models.RunDocument, models.ResultRow, models.Sample,
                  models.Fingerprint, models.Settings, models.Problem, models.Verification,
                  models.Platform, models.Cpu, models.OperatingSystem):
        mirrored(model)


def test_a_real_export_validates_to_what_the_models_dump(small_run) -> None:
    _, doc = small_run
    bundle = {"format": "pqbench-export", "format_version": 1, "runs": [doc, doc]}
    for text in (json.dumps(doc), json.dumps(bundle), json.dumps(_varied_rows(_export(
            "20260101-a", "20260102-b")))):
        fast = _fast(text)
        assert fast is not None
        assert fast == _by_models(text)


@pytest.mark.parametrize("change, why", [
    (lambda d: d["runs"][0].update(label="a\x00b"), "NUL escape"),
    (lambda d: d["runs"][0].update(label="\ud800"), "lone surrogate escape"),
    (lambda d: d["runs"][0].update(format_version=FORMAT_VERSION + 1), "newer run format"),
    (lambda d: d.update(format_version=BUNDLE_VERSION + 1), "newer bundle format"),
    (lambda d: d["runs"][0]["results"][0].update(samples=[]), "a row without samples"),
    (lambda d: d["runs"][0]["results"][0].update(stack_bytes=10, memory_method="x"),
     "a memory row with samples"),
    (lambda d: d["runs"][0]["results"][0].update(samples=[], stack_bytes=10),
     "a memory row without its method"),
    (lambda d: d["runs"][0]["results"][0].update(samples=[{"ops": 1, "elapsed_ns": 0}]),
     "a zero elapsed time"),
    (lambda d: d["runs"][0]["results"][0].update(cv=float("nan")), "NaN"),
    (lambda d: d["runs"][0]["results"][0].update(note="x" * 10_001), "long text in an extra"),
    (lambda d: d["runs"][0]["results"][0].update(note=json.loads("[" * 18 + "]" * 18)),
     "free JSON nested too deeply"),
    (lambda d: d["runs"][0]["environment"].update(extra={"n": 2**63}), "a count out of range"),
    (lambda d: d["runs"][0]["results"][0].update(unit="bit"), "an unknown unit"),
    (lambda d: d["runs"][0].update(surprise=1), "an unknown run field"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_what_the_models_refuse_or_must_word_is_left_to_them(change: Any, why: str) -> None:
    doc = _export("20260101-a")
    assert _fast(json.dumps(doc)) is not None  # the file as exported passes
    change(doc)
    text = json.dumps(doc)
    assert _fast(text) is None, why


def test_a_surrogate_pair_and_a_escaped_backslash_u_go_the_checked_way_and_import(
        tmp_path: Path) -> None:
    """An emoji written as `\\ud83d\\ude00` and the text `\\u0000` (a backslash, then
    u0000) are fine values the byte scan cannot tell apart: the models decide."""
    doc = _export("20260101-a")
    doc["runs"][0]["label"] = "smile \U0001f600"
    doc["runs"][0]["command"] = "pqbench speed --label '\\u0000'"
    path = tmp_path / "escapes.json"
    path.write_text(json.dumps(doc))  # ensure_ascii: the emoji as a surrogate pair
    assert _fast(path.read_text()) is None
    (run,) = transfer.read_documents([path])
    assert run["label"] == "smile \U0001f600"
    assert run["command"] == "pqbench speed --label '\\u0000'"


def test_format_1_nan_cv_still_imports_through_the_models(tmp_path: Path) -> None:
    doc = _export("20260101-a")
    row = doc["runs"][0]["results"][0]
    row["samples"], row["cv"] = row["samples"][:1], float("nan")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    (run,) = transfer.read_documents([path])
    assert run["results"][0]["cv"] is None


HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
    st.sampled_from(["", "\x00", "x" * 20_000, "2026-01-01", "op", "byte"]),
    st.lists(st.integers(min_value=0, max_value=10), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@pytest.mark.slow  # 300 generated documents through both readers: the whole suite's lane
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_fast_path_accepts_exactly_what_the_models_accept(data: st.DataObject) -> None:
    doc = _varied_rows(_export("20260101-a", "20260102-b"))
    path = data.draw(st.sampled_from(json_paths(doc, 2)[1:]), label="path")
    value = data.draw(HOSTILE, label="value")
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    if data.draw(st.booleans(), label="delete") and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    text = json.dumps(doc)
    fast = _fast(text)
    try:
        expected = _by_models(text)
    except ValidationError:
        assert fast is None
        return
    if fast is not None:  # None is allowed (the models then decide), a difference is not
        assert fast == expected


def test_a_refused_file_names_the_field_as_before(tmp_path: Path) -> None:
    doc = _export("20260101-a", "20260102-b")
    doc["runs"][1]["results"][0]["samples"][0]["elapsed_ns"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputFileError, match=r"run 2 \(20260102-b\): "
                                             r"results\[0\]\.samples\[0\]\.elapsed_ns"):
        transfer.read_documents([path])


# --- the store's rows -----------------------------------------------------------------------


def _table_rows(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the run tables, ids replaced by the run and row order they stand for."""
    with store.engine.connect() as conn:
        runs = [tuple(r) for r in conn.execute(select(schema.runs).order_by("run_id"))]
        measured = conn.execute(select(schema.measurements).order_by("id")).all()
        position = {row.id: index for index, row in enumerate(measured)}
        rows = [(position[r.id], *tuple(r)[1:]) for r in measured]
    return {"runs": runs, "measurements": rows}


@pytest.mark.process
def test_documents_are_stored_as_their_runs_are(location: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Several statements a table on SQLite (their size made small), one COPY on
    PostgreSQL: the rows written straight from the documents are the rows `save_runs`
    writes from the Runs made of them."""
    monkeypatch.setattr(bulk, "ROWS_PER_STATEMENT", 2)
    doc = _varied_rows(_export("20260101-a", "20260102-b", "20260103-c"))
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(doc))
    documents = transfer.read_documents([path])
    runs = [codec.run_from_document(d) for d in documents]
    second = location + "-runs" if "://" not in location else None
    by_documents = Store.open(location)
    assert by_documents.save_documents(documents) == ["20260101-a", "20260102-b",
                                                      "20260103-c"]
    if second is None:
        from tests.helpers.postgres import fresh_database

        second = fresh_database(location.rsplit("/", 1)[0])
    by_runs = Store.open(second)
    by_runs.save_runs(runs)
    stored, expected = _table_rows(by_documents), _table_rows(by_runs)
    assert stored == expected
    # What the special rows became, worked out by hand from _varied_rows:
    no_rate = stored["measurements"][1]
    assert no_rate[6] == 0.0 and math.isinf(no_rate[7])  # ops_per_sec 0, us_per_op inf
    assert stored["measurements"][2][5] is None  # a byte row's block size of 1 dropped
    assert stored["measurements"][2][11] == {"unit": "byte"}
    assert stored["measurements"][0][11]["vendor_note"] == {
        "flag": True, "zero": -0.0, "list": [1, "x"]}
    assert stored["measurements"][0][-1][:2] == [12_345, None]  # round_cycles
    at = [c.name for c in schema.runs.c].index("problems")
    problems = [p for run in stored["runs"] for p in run[at]]  # pqbench_runs.problems
    assert problems[0]["reason"] == "tab\there, newline\nthere, back\\slash"


@pytest.mark.process
def test_rows_made_for_either_backend_are_stored_as_the_documents_are(
        location: str, tmp_path: Path) -> None:
    """An import's readers make the round arrays in the form of the backend they expect
    (`with_made_rows`); made for the other one, they are rewritten as they are written:
    on each backend, rows made for either are the rows of the documents themselves."""
    doc = _varied_rows(_export("20260101-a", "20260102-b", "20260103-c"))
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(doc))
    documents = transfer.read_documents([path])
    stores = {}
    for name, rows in [("documents", documents),
                        ("for sqlite", bulk.with_made_rows(documents, postgresql=False)),
                        ("for postgresql", bulk.with_made_rows(documents, postgresql=True))]:
        if "://" in location:
            from tests.helpers.postgres import fresh_database

            where = fresh_database(location.rsplit("/", 1)[0])
        else:
            where = str(tmp_path / f"{name}.db")
        stores[name] = Store.open(where)
        assert stores[name].save_documents(rows) == [d["run_id"] for d in documents]
    expected = _table_rows(stores["documents"])
    assert _table_rows(stores["for sqlite"]) == expected
    assert _table_rows(stores["for postgresql"]) == expected


def test_a_round_array_goes_from_one_backends_form_to_the_others() -> None:
    arrays = [[], [7], [12_345, None, 0], [None], [10 ** 18, -1, 2 ** 63 - 1]]
    row = ("run", "ML-KEM-768", *(bulk._json_array(a) for a in arrays[2:]))
    literals = bulk._with_array_literals(row)
    assert literals == ("run", "ML-KEM-768", "{12345,NULL,0}", "{NULL}",
                        "{1000000000000000000,-1,9223372036854775807}")
    assert bulk._with_json_arrays(literals) == row
    # As a reader makes them for PostgreSQL, and SQLite's text exactly, back.
    for three in (arrays[:3], arrays[2:]):
        made = ("run", *(bulk._array_literal(a) for a in three))
        assert bulk._with_json_arrays(made) == ("run", *(bulk._json_array(a) for a in three))


@pytest.mark.process
def test_json_column_texts_are_json_dumps_of_each_value() -> None:
    """Values equal in Python but not in JSON (True and 1, 0.0 and -0.0) keep their own
    texts, however often they repeat."""
    texts = bulk._JsonTexts()
    values = [{"a": 1}, {"a": True}, {"a": 1.0}, {"x": 0.0}, {"x": -0.0}, {}, {"a": 1},
              {"l": [1, 2]}, {"a": "1"}, {"a": 1, "b": 2}, {"b": 2, "a": 1}]
    assert [texts.of(v) for v in values] == [json.dumps(v) for v in values]


def test_a_round_array_text_is_json_dumps_of_it() -> None:
    arrays = [[], [7], [12_345, None, 0], [None], [10 ** 18, -1, 2 ** 63 - 1]]
    assert [bulk._json_array(a) for a in arrays] == [
        json.dumps(a, separators=(",", ":")) for a in arrays]

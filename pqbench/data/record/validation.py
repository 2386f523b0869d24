"""The run format checked in one pass over the file's bytes, as imports of a fleet need.

`record.models` defines the format once, as pydantic models. Validating a file with them
builds a model object per result row and per round, and calls Python for every string
(`models._storable`): more time per result row than the store takes to write it.
This module derives from the same models a mirror made of TypedDicts, which pydantic-core
validates straight from the JSON bytes (jiter) into plain dicts, with every type,
bound and length constraint of the models and none of their Python-level checks on
strings and rows. Those are kept otherwise, for every document this path accepts:

- NUL and lone surrogates (`models._storable`): a JSON string can hold either only as a
  `\\u` escape (a raw NUL is a control character JSON refuses, and an encoded surrogate
  is not UTF-8), so a document whose bytes hold no `\\u0000` and no `\\uD800`-`\\uDFFF`
  escape has no such string anywhere; one that does goes the checked way.
- The row rules of `models.ResultRow` (samples, or a memory row's figures) are checked
  on the dicts after validation (`rows_are_whole`).

Anything this path does not accept whole (a bad value, a newer version, format 1's NaN
CV, an escape above) is not an error here: `record.transfer` then validates the decoded
document against the models themselves, as before, for the message a user reads. So the
models alone decide what is accepted and what each refusal says; this path only makes
the common case, a valid export, fast.
"""

from __future__ import annotations

import re
import types
from functools import cache
from typing import Annotated, Any, Literal, NotRequired, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from pqbench.data.record import models
from pqbench.data.record.format import BUNDLE_FORMAT, BUNDLE_VERSION, FORMAT_VERSION

#: Escapes that can make a string the store refuses (NUL, a UTF-16 surrogate half).
_UNSTORABLE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def validate(raw: bytes) -> dict[str, Any] | None:
    """The export (bundle or run document) in `raw` as plain dicts, as the models would
    accept and `model_dump(exclude_unset=True)` give it; None where this path cannot
    vouch for the document (then validate it against the models)."""
    if _UNSTORABLE_ESCAPE.search(raw):
        return None
    try:
        document: dict[str, Any] = _adapter().validate_json(raw)
    except (ValidationError, RecursionError):
        return None
    bundle = document["format"] == BUNDLE_FORMAT
    if bundle and document["format_version"] > BUNDLE_VERSION:
        return None
    runs = document["runs"] if bundle else [document]
    for run in runs:
        if run["format_version"] > FORMAT_VERSION or not rows_are_whole(run["results"]):
            return None
    return document


def rows_are_whole(rows: list[dict[str, Any]]) -> bool:
    """`models.ResultRow._samples_or_memory` over validated rows: a timed row has samples,
    a memory row (stack_bytes) none, and its memory_method."""
    for row in rows:
        memory = row.get("stack_bytes") is not None
        if memory == bool(row["samples"]) or (memory and row.get("memory_method") is None):
            return False
    return True


def warm() -> None:
    """Build the validator now (a process that forks others builds it once for all)."""
    _adapter()


@cache
def _adapter() -> TypeAdapter[Any]:
    """Bundle or run document, told apart by their `format` (a Literal in each)."""
    either: Any = Union[_mirror(models.Bundle), _mirror(models.RunDocument)]  # noqa: UP007
    return models.adapter(Annotated[either, Field(discriminator="format")])


_mirrors: dict[type[BaseModel], Any] = {}


def _mirror(model: type[BaseModel]) -> Any:
    """A TypedDict with the model's fields, types and constraints, and its config (strict,
    finite floats, extra fields refused or kept as the model's bounded JSON)."""
    if model in _mirrors:
        return _mirrors[model]
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        kept = [m for m in info.metadata if not _is_storable_check(m)]
        annotation = _substitute(info.annotation)
        if kept:
            annotation = Annotated[annotation, *kept]
        fields[name] = annotation if info.is_required() else NotRequired[annotation]
    config = model.model_config
    options: dict[str, Any] = {}
    if config.get("extra") == "allow":  # models._Open: its extras are bounded JSON
        options["extra_items"] = models.Json
    mirror = TypedDict(f"{model.__name__}Dict", fields, **options)  # type: ignore[misc]
    # What pydantic reads a TypedDict's config from: the model's strictness, finite
    # floats, and extra fields refused (models._Closed) or kept (models._Open).
    setattr(mirror, "__pydantic_config__", ConfigDict(  # noqa: B010
        **{key: config[key] for key in ("strict", "allow_inf_nan", "extra")  # type: ignore[typeddict-item]
           if key in config}))
    _mirrors[model] = mirror
    return mirror


def _is_storable_check(item: Any) -> bool:
    return isinstance(item, AfterValidator) and item.func is models._storable


def _substitute(annotation: Any) -> Any:
    """The annotation with each model replaced by its mirror and the string checks dropped."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _mirror(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        kept = [m for m in annotation.__metadata__ if not _is_storable_check(m)]
        inner = _substitute(args[0])
        return Annotated[inner, *kept] if kept else inner
    if origin in (Union, types.UnionType):
        return Union[tuple(_substitute(a) for a in args)]  # noqa: UP007
    if origin is list:
        return list[_substitute(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[_substitute(args[0]), _substitute(args[1])]  # type: ignore[misc]
    if origin is Literal or not args:
        return annotation
    raise TypeError(f"no mirror for the annotation {annotation!r}")  # a new kind of field



# --- answers of an `ab` worker ---------------------------------------------------------


def worker_row_problem(sizes: Any, attributes: Any, counter: Any,
                       samples: list[dict[str, Any]], cpu_ns: list[Any]) -> str | None:
    """What the run format refuses in a row an `ab` worker described (its sizes,
    attributes and cycle counter from `prepared`, its rounds from `round`), judged by the
    model that validates imports (`models.ResultRow`); None when it would be accepted. A
    worker is another program: a round of 2**80 operations or a NaN size, once stored,
    would make the export crash or the import refuse it."""
    row = {**(attributes if isinstance(attributes, dict) else {"attributes": attributes}),
           "algorithm": "row", "implementation": "worker", "operation": "answer",
           "sizes": sizes if sizes is not None else {}, "cycle_counter": counter,
           "samples": samples or [{"ops": 1, "elapsed_ns": 1}], "ab_cpu_ns": cpu_ns}
    try:
        models.built(models.ResultRow).model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"{models.field_path(first['loc'])}: {first['msg']}"
    except RecursionError:
        return "values nested too deeply"
    return None

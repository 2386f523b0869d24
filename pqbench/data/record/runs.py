"""Making a run, and naming a run's facts: the one constructor every run kind calls, and
the values `--by FIELD` groups and filters runs by.
"""

from __future__ import annotations

import difflib
import secrets
import sys
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from pqbench.data.record.fingerprint import Fingerprint
from pqbench.data.record.format import TEXT_CHARS
from pqbench.data.record.results import Measurement, Problem, Run, Verification
from pqbench.platform.errors import ComparisonError, UsageError
from pqbench.platform.untrusted import command_line

#: Fields that `--by` understands besides dotted paths into the fingerprint.
RUN_FIELDS = ("label", "run_id", "kind", "date")
#: The group of runs that lack the `--by` field.
NO_VALUE = "(none)"


def new_run_id(now: datetime | None = None) -> str:
    """Sortable and unique: UTC time of the start plus random bits."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def timestamp(moment: datetime) -> str:
    """A run's started_at / finished_at: ISO 8601 to the millisecond, with its offset.

    To the millisecond, not the second: runs are ordered by their start (`run_order`, and
    the store's queries), and two runs a script starts within one second would otherwise
    tie and fall back on their ids' random suffix, so that `compare` could take the later
    run for the earlier one. Runs stored to the second still sort among these by the
    text, before any of their own second (that second's "+" sorts before the "." of a
    fraction)."""
    return moment.isoformat(timespec="milliseconds")


def new_run(
    kind: str,
    started: datetime,
    *,
    settings: Mapping[str, Any],
    environment: Mapping[str, Any],
    measurements: Iterable[Measurement] = (),
    problems: Iterable[Problem] = (),
    verifications: Iterable[Verification] = (),
    status: str = "complete",
    label: str | None = None,
    command: str | None = None,
    run_id: str | None = None,
    finished: datetime | None = None,
) -> Run:
    """A run that finishes now: a fresh id from its start, the command line that made it
    (passwords redacted), its label on the run alone (never in the fingerprint). A run
    that was not interrupted yet measured nothing (its library missing, its only worker
    broken) is "failed", never "complete": its problems say why."""
    measurements = tuple(measurements)
    if status == "complete" and not measurements:
        status = "failed"
    return Run(
        run_id=run_id or new_run_id(started),
        started_at=timestamp(started),
        finished_at=timestamp(finished or datetime.now(UTC)),
        status=status,
        command=_bounded(command if command is not None else command_line(sys.argv[1:])),
        label=label,
        settings=dict(settings),
        environment=Fingerprint(environment),
        measurements=measurements,
        problems=tuple(problems),
        verifications=tuple(verifications),
        kind=kind,
    )


def _bounded(command: str) -> str:
    """A command the run format holds (`TEXT_CHARS`), cut with "…" when longer: a run
    whose export could not be imported again would be a run lost."""
    return command if len(command) <= TEXT_CHARS else command[:TEXT_CHARS - 1] + "…"


def field_value(run: Run, name: str) -> str | None:
    """A run's value for `--by NAME`: a run field or a dotted path into its fingerprint.

    Lists (CPU flags) become comma-joined text so they can name a group.
    """
    value: Any
    if name == "label":
        value = run.label
    elif name == "run_id":
        value = run.run_id
    elif name == "kind":
        value = run.kind
    elif name == "date":
        value = run.started_at[:10]
    else:
        value = run.environment.path(name)
        if isinstance(value, Mapping):
            raise ComparisonError(f"--by {name} names a group of fields; pick one of: "
                                  f"{', '.join(f'{name}.{k}' for k in value)}")
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def group_value(run: Run, name: str) -> str:
    """The group a run falls in with `--by NAME`: its value, or "(none)" without one."""
    value = field_value(run, name)
    return NO_VALUE if value is None else value


def _leaves(prefix: str, value: Any) -> Iterator[str]:
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from _leaves(f"{prefix}.{key}" if prefix else str(key), inner)
    elif prefix:
        yield prefix


def known_fields(runs: Iterable[Run]) -> list[str]:
    """What `--by` can group these runs by: the run fields, then every fingerprint field
    (dotted paths) some run records, in the order the fingerprint lists them."""
    found: dict[str, None] = dict.fromkeys(RUN_FIELDS)
    for run in runs:
        found.update(dict.fromkeys(_leaves("", run.environment.to_dict())))
    return list(found)


#: Fingerprint fields listed by name in the error; deeper ones are only suggested.
_LISTED_DEPTH = 2


def check_field(runs: Iterable[Run], name: str) -> None:
    """Refuse a `--by` field that no run records (a typo such as `lable`): a UsageError
    listing the fields there are and the closest ones. A group of fields (`libraries`)
    passes here and is refused by `field_value`, which names its members."""
    runs = list(runs)
    # No runs (a report's part for a kind nobody measured) record nothing to refuse.
    if not runs or name in RUN_FIELDS or any(run.environment.has(name) for run in runs):
        return
    known = known_fields(runs)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listed = [k for k in known if k.count(".") < _LISTED_DEPTH]
    raise UsageError(f"unknown --by field {name!r}.{hint} Known fields: "
                     f"{', '.join(listed)}; or a deeper dotted path into the fingerprint "
                     "(`pqbench env --json` shows it)")


def ab_side(run: Run) -> str | None:
    """"a" or "b" for a side of a `pqbench ab` session (`Run.session`), else None."""
    info = run.session
    return None if info is None else str(info["side"])


def run_order(run: Run) -> tuple[str, str, str]:
    """Oldest first; the two sides of an `ab` session (started together) A before B."""
    return (run.started_at, ab_side(run) or "", run.run_id)


def group_runs(runs: Iterable[Run], by: str, *, missing: bool = False
               ) -> list[tuple[str, list[Run]]]:
    """Runs grouped by a fingerprint field, groups ordered by their earliest run.

    Runs without a value for the field are left out: unlabelled runs are not one
    configuration, and comparing them as one would report their mix as a change. With
    `missing` they form a group named "(none)". A field no run records is a UsageError
    naming the known ones (`record.runs.check_field`).
    """
    runs = sorted(runs, key=run_order)
    check_field(runs, by)
    groups: dict[str, list[Run]] = {}
    for run in runs:
        value = field_value(run, by)
        if value is not None or missing:
            groups.setdefault(NO_VALUE if value is None else value, []).append(run)
    return list(groups.items())


def without_value(runs: Iterable[Run], by: str) -> list[Run]:
    """The runs `group_runs` leaves out by default: those without a value for `by`."""
    return [run for run in runs if field_value(run, by) is None]

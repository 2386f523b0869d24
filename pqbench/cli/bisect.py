"""`pqbench bisect`: which build of a series changed a row, by paired sessions between builds."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pqbench import interrupts
from pqbench.ab import sides
from pqbench.bisect.series import NAMING
from pqbench.cli import paired
from pqbench.cli.common import (
    DbOption,
    JsonOption,
    ThresholdOption,
    handles_errors,
    print_json,
)
from pqbench.cli.root import app
from pqbench.presentation import console, numbers
from pqbench.presentation.runs import operation as operation_name

if TYPE_CHECKING:
    from pqbench.bisect.search import ChangePoint, Result
    from pqbench.bisect.series import Series


@app.command()
@handles_errors
def bisect(
    algorithm: paired.Algorithms = None,
    series: Annotated[list[str] | None, typer.Option(
        "--series", help="The builds in order: a side (pip:PACKAGE==VERSION, userland:NAME, "
                         "cmd:PREFIX, env:NAME=VALUE, mask:NAMES; items joined by ' + ') "
                         "with brace lists, e.g. 'pip:cryptography=={42.0.8,43.0.3}', or "
                         "@FILE with one build per line; repeatable, in order.")] = None,
    operation: paired.Operations = None,
    implementation: paired.Implementations = None,
    block_bytes: paired.Bytes = None,
    max_seconds: Annotated[float, typer.Option(
        "--max-seconds", help="Time budget of each session (as `ab --max-seconds`).")
    ] = 120.0,
    round_seconds: Annotated[float, typer.Option(
        "--round", help="Seconds per round (each pair is one round of each build).")] = 0.05,
    threshold: ThresholdOption = "auto",
    every_pair: Annotated[bool, typer.Option(
        "--every-pair", help="Measure every neighbouring pair instead of bisecting "
                             "(N - 1 sessions; sees changes that are later undone).")] = False,
    cpu: paired.Cpu = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Find the builds of a series where each row changed speed: the two ends in one paired
    session, then bisection with paired sessions between builds, for every row whose ends
    differ beyond the band; each change point with its ratio, interval and the fingerprint
    differences that explain it. Every session is stored as two runs."""
    from pqbench.bisect import runner
    from pqbench.bisect import series as series_module
    from pqbench.store import Store

    chosen_series = series_module.parse(series or [])
    settings, band = paired.settings(algorithm, implementation, operation, block_bytes,
                                      max_seconds=max_seconds, round_seconds=round_seconds,
                                      threshold=threshold, cpu=cpu)
    store = Store.open(db)  # fail before measuring if the database is unusable
    command = shlex.join(["pqbench", *(sides.redact_argument(a) for a in sys.argv[1:])])
    plan = runner.Plan(chosen_series, settings, band, command)
    with console.status("starting") as show:
        measuring = runner.Runner(plan, store, show)
        result = measuring.exhaustive() if every_pair else measuring.bisect()
    if json_output:
        print_json(document(result, chosen_series, store.location))
    else:
        _show(result, chosen_series)
        sessions = len(result.sessions)
        console.note(f"{sessions} session{'s' if sessions != 1 else ''}, "
                     f"{numbers.count(len(measuring.stored))} runs stored in {store.location}")
    if result.status == "interrupted":
        console.error("interrupted; the sessions done so far were stored, the builds made "
                      "so far stay cached")
        raise typer.Exit(interrupts.exit_code())
    if result.ends is None:
        console.error("no two builds of the series could be measured (see above)")
        raise typer.Exit(1)
    if result.unusable:
        console.error(f"{len(result.unusable)} build(s) of the series were unusable (see above)")
        raise typer.Exit(1)


def _name(key: Any) -> str:
    return f"{key[0]} {operation_name(key[2], key[3])} [{key[1]}]"


def cause_text(point: ChangePoint) -> str:
    """The fingerprint differences the comparison ranks as causes of this row, strongest
    first; without one, what else differs between the two builds' fingerprints."""
    causes = [f"{c.field.rpartition('.')[2]} {c.before} → {c.after} ({c.strength})"
              for c in point.row.causes]
    if causes:
        return "; ".join(causes)
    other = [f"{d.field} {d.before} → {d.after}" for d in point.differences
             if d.field not in NAMING and d.note is None]
    return ("differs: " + "; ".join(other)) if other else "the fingerprints do not differ"


def _show(result: Result, chosen: Series) -> None:
    builds = chosen.builds
    for position, reason in sorted(result.unusable.items()):
        console.warning(f"build {position + 1} ({builds[position].spec}) is unusable: {reason}")
    lines = []
    first, last = result.ends or (0, len(builds) - 1)
    for row in result.rows:
        ends = row.ends
        if not row.searched:
            lines.append([_name(row.key), f"{builds[first].name} → {builds[last].name}",
                          numbers.ratio(ends.ratio), numbers.interval(ends.ci_low, ends.ci_high),
                          ends.verdict, f"the ends' verdict is {ends.verdict}: not searched"])
        for point in row.change_points:
            between = (f" ({len(point.skipped)} unusable between)" if point.skipped else "")
            lines.append([_name(row.key),
                          f"{builds[point.before].name} → {builds[point.after].name}{between}",
                          numbers.ratio(point.row.ratio),
                          numbers.interval(point.row.ci_low, point.row.ci_high),
                          point.row.verdict, cause_text(point)])
        for spread in row.spreads:
            lines.append([_name(row.key), f"{builds[spread.before].name} … "
                          f"{builds[spread.after].name}", "", "", "spread",
                          "no single step beyond the band: the change accumulates over "
                          "these builds"])
    if lines:
        console.stdout.print(console.rows_table(
            "where it changed", ["row", "builds", "ratio", "interval", "verdict", "cause"],
            lines))
    console.note("what bisection cannot see: a change undone between two builds that "
                 "agree, and steps smaller than the band (--every-pair measures each pair)")


def document(result: Result, chosen: Series, location: str) -> dict[str, Any]:
    """The JSON of `pqbench bisect --json`."""
    builds = chosen.builds

    def build(position: int) -> dict[str, Any]:
        return {"position": position, "build": builds[position].spec}

    return {
        "series": {"id": chosen.series_id, "builds": chosen.specs()},
        "status": result.status,
        "ends": [build(p) for p in result.ends] if result.ends else None,
        "unusable": [{**build(p), "reason": reason}
                     for p, reason in sorted(result.unusable.items())],
        "sessions": [{"before": build(s.before), "after": build(s.after),
                      "runs": list(s.run_ids), "seconds": round(s.seconds, 3),
                      "status": s.status} for s in result.sessions],
        "rows": [{"algorithm": r.key[0], "implementation": r.key[1], "operation": r.key[2],
                  "block_size": r.key[3], "ends": r.ends.as_dict(), "searched": r.searched,
                  "change_points": [{"before": build(c.before), "after": build(c.after),
                                     "unusable_between": [build(p) for p in c.skipped],
                                     "comparison": c.row.as_dict(),
                                     "differences": [d.as_dict() for d in c.differences]}
                                    for c in r.change_points],
                  "spread": [{"before": build(s.before), "after": build(s.after)}
                             for s in r.spreads]}
                 for r in result.rows],
        "store": location,
    }

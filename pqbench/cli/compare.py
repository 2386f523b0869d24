"""`pqbench compare`: did an OS build (or a library, or a mask) change the speed?"""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench import console
from pqbench.cli import app
from pqbench.cli.common import DbOption, JsonOption, finite_float, handles_errors, print_json
from pqbench.compare import RunComparison, compare_groups, compare_runs, group_runs
from pqbench.errors import ComparisonError, UsageError
from pqbench.results import Run
from pqbench.store import Store


@app.command()
@handles_errors
def compare(
    runs: Annotated[list[str] | None, typer.Argument(
        help="Two run ids (or unique prefixes): before, then after. With --by: the two "
             "group values to compare (default: every group against the next).")] = None,
    by: Annotated[str | None, typer.Option(
        help="Group the stored runs by a fingerprint field: label, os_build, "
             "libraries.cryptography, knobs.OPENSSL_ia32cap, date ...")] = None,
    threshold: Annotated[float, typer.Option(
        parser=finite_float(0, 10),
        help="Noise band: a verdict needs the whole 99% CI of the ratio beyond 1 ± this.")
    ] = 0.05,
    cross_machine: Annotated[bool, typer.Option(
        "--cross-machine", help="Allow runs from different testbeds (CPU model, flags, "
                                "architecture), with a warning.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown tables.")
    ] = False,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Compare runs row by row: before, after, ratio, 99% CI, p-value, verdict and causes."""
    if json_output and markdown:
        raise UsageError("choose one of --json and --markdown")
    if threshold < 0:
        raise UsageError("--threshold must not be negative")
    store = Store.open(db, create=False)
    if by is None:
        if not runs or len(runs) != 2:
            raise UsageError("give two runs (before, after) or --by FIELD")
        before, after = (store.load_run(r) for r in runs)
        results = [compare_runs([before], [after], threshold, cross_machine=cross_machine)]
    else:
        results = _by_groups(store, by, runs or [], threshold, cross_machine)
    if json_output:
        document = [r.as_dict() for r in results]
        print_json(document[0] if len(document) == 1 else {"comparisons": document})
    elif markdown:
        print(console.compare_markdown(results), end="")
    else:
        for result in results:
            console.show_comparison(result)


def _by_groups(store: Store, by: str, values: list[str], threshold: float,
               cross_machine: bool) -> list[RunComparison]:
    stored: list[Run] = [store.load_run(info.run_id) for info in store.list_runs()]
    if not stored:
        raise ComparisonError(f"no runs stored in {store.location}")
    groups = group_runs(stored, by)
    if values:
        if len(values) != 2:
            raise UsageError("with --by, give no values or exactly two (before, after)")
        found = dict(groups)
        missing = [v for v in values if v not in found]
        if missing:
            raise ComparisonError(f"no runs with {by} = {', '.join(map(repr, missing))}; "
                                  f"found: {', '.join(map(repr, found))}")
        groups = [(v, found[v]) for v in values]
    return compare_groups(groups, threshold, cross_machine=cross_machine)

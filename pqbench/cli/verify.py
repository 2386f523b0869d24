"""`pqbench verify`: check every implementation before trusting its timings."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from pqbench.catalog import algorithms
from pqbench.cli.common import JsonOption, handles_errors, print_json, provision
from pqbench.cli.root import app
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure.checks.verify import Outcome, pairs, tally, verify_all
from pqbench.views import console, numbers
from pqbench.views.tables import Column, Table


@app.command()
@handles_errors
def verify(
    algorithm: Annotated[list[str] | None, typer.Argument(
        help="Algorithms to check (default: every built-in public-key algorithm).")] = None,
    implementation: Annotated[list[str] | None, typer.Option(
        "--implementation", "-i", help="Only these implementations (repeatable).")] = None,
    every: Annotated[bool, typer.Option(
        "--all", "-v", "--verbose", help="Print every check, not only those that failed.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Run known-answer tests and round-trip/tamper checks of every implementation.

    Prints one summary line and the checks that failed; --all prints every check.
    """
    kems, sigs = liboqs_mechanisms()
    names = algorithm or [a.name for a in algorithms.all_algorithms()
                          if a.kind in ("kem", "signature", "key-agreement", "rsa")]
    chosen = algorithms.resolve(names, kems, sigs)
    impls = select(implementation)
    provision([impl for impl in impls if any(impl.in_scope(alg) for alg in chosen)])
    started = time.monotonic()
    with console.progress_bar(len(pairs(chosen, impls)), enabled=not json_output) as advance:
        outcomes = verify_all(chosen, impls, advance)
    elapsed = time.monotonic() - started
    failed = [o for o in outcomes if o.status == "failed"]
    if json_output:
        print_json({"results": [o.as_dict() for o in outcomes], "failed": len(failed)})
    else:
        shown = outcomes if every else failed
        if shown:
            console.print_table(Table(
                "verification" if every else "failed checks",
                (Column("algorithm"), Column("implementation", short="impl."),
                 Column("check", wrap=True), Column("status"),
                 Column("detail", priority=1, wrap=True)),
                tuple((o.algorithm, o.implementation, o.check, o.status, o.detail)
                      for o in shown),
                tuple("failed" if o.status == "failed" else None for o in shown)))
        console.stdout.print(console.safe(_summary(outcomes, elapsed, every)))
    if failed:
        console.error(f"{len(failed)} check(s) failed")
        raise typer.Exit(1)


def _summary(outcomes: list[Outcome], elapsed: float, every: bool) -> str:
    """"verify: 167 checks of 42 pairs in 7.1 s: 129 passed, 38 not offered, 0 failed"."""
    pairs_checked = len({(o.algorithm, o.implementation) for o in outcomes})
    counts = ", ".join(f"{n} {status}" for status, n in tally(outcomes).items())
    hint = "" if every else " (--all lists every check)"
    return (f"verify: {len(outcomes)} checks of {pairs_checked} pairs in "
            f"{numbers.number(elapsed, 2)} s: {counts}{hint}")

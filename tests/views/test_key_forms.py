"""The note under a run's table where rows of one operation take the public key in
different forms (a foreign worker's public_key_form), and the run shown with it."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from pqbench.analysis.figures import run_figures
from pqbench.data.record.results import Measurement
from pqbench.data.record.rounds import LoopResult
from pqbench.views import console, runs
from tests.helpers.runs import make_run


def _row(implementation: str, operation: str, form: str | None,
         algorithm: str = "ML-KEM-768") -> Measurement:
    return Measurement(algorithm=algorithm, implementation=implementation, operation=operation,
                       rounds=(LoopResult(100, 10**7),),
                       attributes={} if form is None else {"public_key_form": form})


def test_rows_of_one_operation_taking_the_key_in_two_forms_get_a_note() -> None:
    rows = [_row("go", "encaps", "encoded"), _row("java", "encaps", "encoded"),
            _row("aws-lc-rs", "encaps", "object"), _row("liboqs", "encaps", None),
            _row("go", "decaps", None), _row("aws-lc-rs", "decaps", None)]
    assert runs.key_form_notes(rows) == [
        "note: ML-KEM-768 encaps takes the public key decoded by each call in go, java; "
        "parsed once, outside the clock in aws-lc-rs (public_key_form): a ratio between "
        "them includes that decoding"]


def test_one_form_per_operation_says_nothing() -> None:
    rows = [_row("go", "encaps", "encoded"), _row("libcrux", "encaps", "encoded"),
            _row("aws-lc-rs", "verify", "object", "ML-DSA-65"),
            _row("go", "verify", "encoded", "Ed25519")]
    assert runs.key_form_notes(rows) == []


def test_the_run_shown_by_speed_and_show_carries_the_note() -> None:
    rows = (("ML-KEM-768", "go", "encaps", None, 40_000.0),
            ("ML-KEM-768", "aws-lc-rs", "encaps", None, 60_000.0))
    run = make_run("r1", seed=1, rows=rows)
    forms = {"go": "encoded", "aws-lc-rs": "object"}
    run = replace(run, measurements=tuple(
        replace(m, attributes={"public_key_form": forms[m.implementation]})
        for m in run.measurements))
    out = Console(record=True, width=200)
    console.show_run(run, run_figures(run), out)
    text = " ".join(out.export_text().split())
    assert ("ML-KEM-768 encaps takes the public key decoded by each call in go; parsed once, "
            "outside the clock in aws-lc-rs") in text

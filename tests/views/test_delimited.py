"""The one CSV writer: a text cell a spreadsheet would run as a formula is written with a
`'` before it (OWASP, CSV injection); numbers, and text that is only a number, stay as
they are."""

from __future__ import annotations

import csv
import io

import pytest

from pqbench.views.delimited import csv_text, formula_safe

HOSTILE = ['=HYPERLINK("http://e.vil","x")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
           "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1", "  =1+1", "-", "+", "=", "@"]


def _read(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("cell", HOSTILE)
def test_a_formula_is_written_as_text(cell: str) -> None:
    ((header,), (written,)) = _read(csv_text(["label"], [[cell]]))
    assert header == "label"
    assert written.startswith("'") and written.lstrip("' ").startswith(("=", "+", "-", "@")), \
        written


@pytest.mark.parametrize("cell", ["-0.5", "+3", "-1e-05", "1.25", ".5", " -2 "])
def test_text_that_is_only_a_number_stays_a_number(cell: str) -> None:
    assert formula_safe(cell) == cell


def test_number_cells_stay_numbers_and_harmless_text_stays_as_it_is() -> None:
    rows = _read(csv_text(["a", "b", "c", "d", "e", "f"],
                          [[-0.25, -3, "ML-KEM-768", "a-b", None, ["=x", "y"]]]))
    assert rows[1] == ["-0.25", "-3", "ML-KEM-768", "a-b", "", "'=x y"]
    assert float(rows[1][0]) == -0.25 and int(rows[1][1]) == -3


def test_a_header_is_pqbench_s_own_and_a_short_row_is_refused() -> None:
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        csv_text(["a", "b", "c"], [[1, 2]])

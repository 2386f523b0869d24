"""How a table reaches the terminal: where every cell is one line that fits, its lines are
made directly (`console._one_line_table`); they must be what rich draws, character for
character and escape for escape, in colour and without, at 80 and 120 columns and
unbounded. Elsewhere rich draws them."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console

from pqbench.app.show import speed_figures
from pqbench.views import console, runs
from pqbench.views import ratios as ratio_views
from pqbench.views.tables import Cell, Column, Table, key_values
from tests.helpers.runs import make_run

WIDTHS = (80, 120, console.UNBOUNDED)


def _printed(table: Table, width: int, color: bool) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=color, color_system="truecolor"
            if color else None, highlight=False, emoji=False).print(console.rich_table(table))
    return buffer.getvalue()


def _both(table: Table, width: int, color: bool, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[str, str, bool]:
    """(made directly where simple, drawn by rich alone, whether it was made directly)."""
    made: list[bool] = []
    direct: Callable[..., Any] = console._one_line_table

    def watched(*args: Any) -> Any:
        found = direct(*args)
        made.append(found is not None)
        return found

    with monkeypatch.context() as patched:
        patched.setattr(console, "_one_line_table", watched)
        fast = _printed(table, width, color)
    with monkeypatch.context() as patched:
        patched.setattr(console, "_one_line_table", lambda *args: None)
        slow = _printed(table, width, color)
    return fast, slow, any(made)


def _tables() -> dict[str, Table]:
    run = make_run("r1", seed=4)
    shown = speed_figures(run)
    return {
        "speed rows": runs.measurements_table(run, list(run.measurements)),
        "ratios": ratio_views.table(list(shown.ratios)),
        "tones and strong cells": Table(
            "verdicts [bold]kept[/bold]",
            (Column("row"), Column("ratio", "number"), Column("verdict"),
             Column("empty"), Column("why", wrap=True)),
            (("ML-KEM-768 keygen", Cell(1.25, strong=True), "slower", "", "a reason"),
             ("X25519 derive", 0.8, "faster", "", "another"),
             ("RSA-2048 sign", Cell(1.0, strong=True), "inconclusive", "x", "")),
            tones=("slower", "faster", None)),
        "names and values": key_values("machine", [("cpu", "AMD EPYC"), ("cores", 2)]),
    }


@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(_tables()))
def test_lines_made_directly_are_what_rich_draws(name: str, width: int, color: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    table = _tables()[name]
    fast, slow, direct = _both(table, width, color, monkeypatch)
    assert fast == slow
    assert ("\x1b[" in fast) == (color and table.show_header)  # a header is bold
    # The run's rows and the made-up table fit unbounded and at 120 columns.
    if width != 80 or name in ("ratios", "names and values"):
        assert direct, name


@pytest.mark.parametrize("width", WIDTHS)
def test_a_cell_that_wraps_or_a_header_of_two_lines_is_left_to_rich(
        width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    long = ("a reason long enough to wrap at eighty columns, " * 3).strip()
    wraps = Table("t", (Column("name"), Column("why", wrap=True)), (("a", long), ("b", "c")))
    tall = Table(None, (Column("n"), Column("a title that wraps at a narrow width",
                                             "count")), (("x", 1),))
    padded = Table(None, (Column("name"), Column("v")), ((" x", "y "),))
    for table, simple in ((wraps, width == console.UNBOUNDED), (tall, True),
                          (padded, False)):
        fast, slow, direct = _both(table, width, True, monkeypatch)
        assert fast == slow
        assert direct == simple, table
    narrow, slow, direct = _both(tall, 30, False, monkeypatch)
    assert narrow == slow and not direct and len(narrow.splitlines()[0]) <= 30


SPREAD = ("steps judged as compare judges runs; few runs against this machine's run-to-run "
          "spread of 0.9 % from 5 runs of this row, at 5.53 [5.43–5.63] GB/s, 14 df")


@pytest.mark.parametrize("width", range(20, len(SPREAD) + 2))
def test_prose_never_breaks_a_line_between_a_number_and_its_unit(width: int) -> None:
    """At every width: no line ends with a number whose unit starts the next line ("0.9"
    then "% from ..."), and the words and spaces are the text's own."""
    found = console.wrapped(SPREAD, width, hang="  ")
    for line, after in itertools.pairwise(found):
        unit = after.strip().split(" ")[0]
        assert not (unit in ("%", "GB/s", "df") and line.rstrip()[-1] in "0123456789]"), \
            (width, line, after)
    assert " ".join(part.strip() for part in found) == SPREAD
    assert all(len(line) <= width for line in found), (width, found)


def test_only_a_number_s_unit_is_kept_with_it() -> None:
    """Words that merely follow a number still wrap ("5 runs"), and a header wraps as
    prose does."""
    from pqbench.views import layout

    assert layout.wrap_prose("of 5 runs", 4) == ["of 5", "runs"]
    # A label's own private-use character is shown as it is, not taken for the glue.
    assert layout.wrap_prose("a\ue000b of 5 %", 8) == ["a\ue000b of", "5 %"]
    assert layout.wrap_prose("of 5 %", 4) == ["of", "5 %"]
    assert layout.header_lines("spread 0.9 %", 8) == ("spread", "0.9 %")


@pytest.mark.parametrize("width", [30, 40, 52])
def test_the_columns_left_out_are_named_on_lines_wrapped_as_notes_are(width: int) -> None:
    """"not shown at N columns: ..." wraps like every other note: no space at a line's end,
    continuations indented, the names whole; rich wrapping it left "terminal " then
    "shows them)" at the margin."""
    columns = tuple(Column(f"column {n}", priority=n) for n in range(8))
    table = Table("wide", columns, (tuple(f"value {n}" for n in range(8)),))
    printed = _printed(table, width, color=False).splitlines()
    start = next(i for i, line in enumerate(printed) if line.startswith("not shown at "))
    said = printed[start:]
    assert len(said) > 1, printed  # long enough to wrap at these widths
    assert all(line == line.rstrip() and len(line) <= width for line in said), said
    assert all(line.startswith("  ") for line in said[1:]), said
    joined = " ".join(line.strip() for line in said)
    assert joined.startswith(f"not shown at {width} columns: column ")
    assert joined.endswith(" (a wider terminal shows them)"), joined


def _prose_lines(printed: str, width: int) -> list[str]:
    """The printed lines, each checked: within the width, no space left at its end."""
    found = printed.splitlines()
    assert found and all(len(line) <= width and line == line.rstrip() for line in found), \
        found
    return found


def test_a_run_s_load_line_wraps_as_prose_under_its_table() -> None:
    """The "taken under load" line under a run's table wraps at spaces with its
    continuations indented (rich's own wrapping ended lines with a space)."""
    from dataclasses import replace

    from tests.helpers.runs import environment

    run = replace(make_run("r1", seed=4), environment=environment(
        run={"others_cpu": 0.784, "cpus": 2, "load_start": [6.53, 6.0, 5.0],
             "load_end": [6.57, 6.1, 5.0]}))
    buffer = io.StringIO()
    console.show_load(run, Console(file=buffer, width=50, highlight=False))
    found = _prose_lines(buffer.getvalue(), 50)
    assert found[0].startswith("taken under load: ") and len(found) > 1
    assert all(line.startswith("    ") for line in found[1:]), found


def test_progress_reported_by_the_rooms_below_wraps_as_notes_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's log line (a long command line) on stderr: wrapped at spaces, its
    continuations indented, nothing trailing."""
    import logging

    buffer = io.StringIO()
    monkeypatch.setattr(console, "stderr", Console(file=buffer, width=60, highlight=False))
    console.show_progress()
    logging.getLogger("pqbench.libraries.liboqs").info(
        "$ cmake -S /root/.cargo/registry/src/oqs-sys-0.11.0/liboqs -B /tmp/build -G Ninja "
        "-DCMAKE_BUILD_TYPE=Release")
    found = _prose_lines(buffer.getvalue(), 60)
    assert found[0].startswith("pqbench.libraries.liboqs: $ cmake") and len(found) > 1
    assert all(line.startswith("    ") for line in found[1:]), found
    assert " ".join(line.strip() for line in found).endswith("-DCMAKE_BUILD_TYPE=Release")


def test_show_heads_a_run_with_its_start_as_runs_lists_it() -> None:
    """In UTC to the second ("2026-01-02 03:04:05 UTC"), as `runs` and the report give a
    run's time; not the stored ISO text with its milliseconds and offset."""
    from dataclasses import replace

    run = replace(make_run("20260102T030405Z-abcdef", seed=1,
                           started_at="2026-01-02T04:04:05.123+01:00"), label="nightly")
    said = runs.run_header(run)
    assert said.startswith("run 20260102T030405Z-abcdef: speed, ")
    assert ", started 2026-01-02 03:04:05 UTC on " in said and said.endswith(", label nightly")


def test_a_table_drawn_as_records_wraps_its_title_as_prose() -> None:
    """Too narrow for columns, a table is drawn as records; its long title wraps at spaces
    with its continuations indented, nothing trailing (rich left "bmi2, " at a line's end
    and went on at the margin)."""
    table = Table("fingerprint differences: A: here, 2026-11-29 15:33:22 → B: mask:adx,bmi2, "
                  "2026-11-29 15:33:22",
                  (Column("field"), Column("before"), Column("after")),
                  (("knobs.OPENSSL_ia32cap", "", "~0x0:~0x80100:~0x0:~0x0:~0x0"),))
    found = _prose_lines(_printed(table, 40, color=False), 40)
    assert found[0].startswith("fingerprint differences:") and found[1].startswith("  ")
    assert " ".join(line.strip() for line in found[:3]).startswith(
        "fingerprint differences: A: here, 2026-11-29 15:33:22 → B: mask:adx,bmi2, "
        "2026-11-29 15:33:22")


@pytest.mark.parametrize(("knob", "said"), [
    (None, None),
    ("~0x200000000000000:~0x0", "AES-NI hidden"),
    ("~0x200000000000000:~0x20000000", "AES-NI, SHA-NI hidden"),
])
def test_a_run_with_a_capability_hidden_says_so_where_it_is_shown(
        knob: str | None, said: str | None) -> None:
    """`speed --mask aesni` (or OPENSSL_ia32cap set by hand): the table's heading and the
    report's first sentence say what was hidden, so its figures never read as the
    machine's own; a run with no knob set says nothing of it."""
    from dataclasses import replace

    from pqbench.views import report
    from tests.helpers.runs import environment

    run = replace(make_run("20260102T030405Z-abcdef", seed=1),
                  environment=environment(knobs__OPENSSL_ia32cap=knob))
    heading = runs.heading(run)
    titled = ratio_views.run_title(run)
    assert titled.startswith("run 20260102T030405Z-abcdef") and titled.endswith(
        ": what it costs, paired by cycle")
    assert ("hidden" in titled) == (said is not None) and (said or "") in titled
    intro = report.build([run]).markdown.split("\n\n")[1]
    assert intro.startswith("Run `20260102T030405Z-abcdef` on ")
    # Several runs: the run the result tables come from says it too.
    older = make_run("20260101T030405Z-fedcba", seed=2, started_at="2026-01-01T00:00:00+00:00")
    several = report.build([older, run]).markdown.split("\n\n")[1]
    if said is None:
        assert "hidden" not in heading and "hidden" not in intro + several
    else:
        assert heading.endswith(f", with {said}"), heading
        assert intro.endswith(f"UTC, with {said}."), intro
        assert f"from run `20260102T030405Z-abcdef` (with {said});" in several, several


@pytest.mark.parametrize("wraps", [False, True], ids=["one-line cells", "a wrapped cell"])
@pytest.mark.parametrize("width", range(40, 90, 3))
def test_a_table_title_never_breaks_between_a_number_and_its_unit(width: int, wraps: bool
                                                                  ) -> None:
    """Drawn directly or by rich (a cell that wraps), the title's lines keep "75 %"
    together ("the median's 75" then "% interval" read as two figures)."""
    title = ("pqbench run 20261129T153705Z-3c1495 (complete) on vm (Intel(R) Xeon(R) "
             "Processor, 2 cores): ciphers and hashes; ±CI: the median's 75 % interval, "
             "the widest of the row's 16 KiB blocks")
    detail = "a reason long enough to wrap " * 3 if wraps else "short"
    table = Table(title, (Column("algorithm"), Column("rate", "number"),
                          Column("detail", wrap=True)),
                  (("AES-256-GCM", 12.5, detail), ("AES-256-XTS", 3.25, "x")))
    printed = _printed(table, width, color=False).splitlines()
    said = printed[:next(i for i, line in enumerate(printed) if line.startswith("algorithm"))]
    for line, after in itertools.pairwise(said):
        assert not (line.rstrip()[-1:].isdigit() and after.startswith(("%", "KiB"))), said
    assert " ".join(said) == title


def test_a_memory_run_names_its_machine_and_says_one_call_as_one() -> None:
    """Its table's heading names the machine as every run's heading does; the method line
    says "One call" for --calls 1, never "Largest of 1 calls, each"."""
    from pqbench.views import memory

    run = make_run("20260102T030405Z-abcdef", seed=1)
    assert memory.table(run).title == (f"pqbench memory run 20260102T030405Z-abcdef "
                                       f"({run.status}) on {run.environment.machine_name}: "
                                       "one call per operation")
    settings = {"harness_stack_bytes": 40, "heap_counted": True}
    assert memory.method({**settings, "calls": 1}).startswith(
        "One call on valid inputs prepared afresh")
    assert memory.method({**settings, "calls": 5}).startswith(
        "Largest of 5 calls, each on valid inputs prepared afresh")
    assert "painted 8 MiB stack, less the harness's own 40 B" in memory.method(settings)


@pytest.mark.parametrize("width", range(13, 30))
def test_a_title_s_number_and_unit_fit_its_column_whole(width: int) -> None:
    """A block size's column ("16 KiB") over three-character cells is as wide as its title
    kept whole, as `header_lines` keeps it: at no width a header line wider than its
    column (the table is drawn as records where it cannot be)."""
    from pqbench.views import layout

    columns = (Column("alg"), Column("16 KiB", "number"), Column("16 B", "number"))
    cells = (("AES",), ("1.2",), ("3.4",))
    plan = layout.plan(columns, cells, width)
    if not plan.records:
        assert all(len(line) <= column for header, column in zip(plan.headers, plan.widths,
                                                                 strict=True)
                   for line in header), (width, plan)
    assert layout.plan(columns, cells, 80).headers[1:] == (("16 KiB",), ("16 B",))

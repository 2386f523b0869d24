"""Tables at the width of the terminal they are printed on: the layout rule on made-up
tables (widths worked out by hand), then every command that prints a table, run for real
at 80 columns, checked for cut values and long lines; the width taken from COLUMNS when
piped and from the terminal itself; progress with a time left."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from pqbench.data.store import Store
from pqbench.views import console, layout, tables
from pqbench.views.tables import Column, Table
from tests.helpers import starts_processes
from tests.helpers.runs import make_runs
from tests.helpers.terminal import in_terminal

# --- the layout rule ------------------------------------------------------------------------

COLUMNS = (Column("name"), Column("value", "number"), Column("spread", priority=1),
           Column("detail", priority=2, wrap=True), Column("extra", priority=3))
CELLS = (("ML-KEM-768", "X25519"), ("86,700", "26.5"), ("±1.2 %", "±10.4 %"),
         ("tampered ciphertext gives another secret", "ok"), ("x", "yy"))


def test_a_table_that_fits_is_drawn_at_its_natural_widths_in_the_one_style() -> None:
    plan = layout.plan(COLUMNS, CELLS, 200)
    # name 10, value 6, spread 7, detail 40, extra 5 ("extra" is wider than its cells),
    # two spaces between columns: the same style as at any narrower width.
    assert not plan.short and plan.widths == (10, 6, 7, 40, 5) and not plan.dropped
    assert plan.total() == 68 + 2 * 4 == 76


def test_narrower_wraps_prose_then_leaves_out_columns_by_priority() -> None:
    plan = layout.plan(COLUMNS, CELLS, 76)
    assert (plan.widths, plan.dropped) == ((10, 6, 7, 40, 5), ())
    # Prose wraps to what is left (but not below 24): 75 - (10+6+7+5) - 8 = 39.
    plan = layout.plan(COLUMNS, CELLS, 75)
    assert (plan.widths, plan.dropped) == ((10, 6, 7, 39, 5), ())
    # At 53 the detail is 17 wide: narrower than readable (10 at least, its longest word)
    # before any column is left out; at 46 it is 10.
    assert layout.plan(COLUMNS, CELLS, 53).widths == (10, 6, 7, 17, 5)
    assert layout.plan(COLUMNS, CELLS, 46).widths == (10, 6, 7, 10, 5)
    plan = layout.plan(COLUMNS, CELLS, 45)
    assert (plan.widths, plan.dropped) == ((10, 6, 7, 16), (4,))  # "extra" goes first
    plan = layout.plan(COLUMNS, CELLS, 30)
    assert (plan.kept, plan.dropped) == ((0, 1, 2), (3, 4))
    plan = layout.plan(COLUMNS, CELLS, 18)
    assert (plan.kept, plan.widths) == ((0, 1), (10, 6))  # priority 0 always stays
    plan = layout.plan(COLUMNS, CELLS, 17)
    assert plan.records  # names and numbers are never cut: one block per row instead


def test_a_column_put_back_keeps_the_titles_whole_that_were() -> None:
    """A column left out comes back where it fits, but not by breaking a title that was
    whole ("key" over "bits", "16" over "B" reads as another column): it stays left out,
    and named as such, until it fits with its title on one line."""
    columns = (Column("algorithm"), Column("key bits", "count", priority=2),
               Column("implementation details", priority=1))
    cells = (("ML-KEM-768",), ("256",), ("x" * 30,))
    for width in (16, 19):  # "key bits" would fit as "key" over "bits", 4 wide
        plan = layout.plan(columns, cells, width)
        assert (plan.kept, plan.dropped) == ((0,), (1, 2)), width
    plan = layout.plan(columns, cells, 20)  # 10 + 2 + 8: whole
    assert (plan.kept, plan.headers) == ((0, 1), (("algorithm",), ("key bits",)))


def test_the_cipher_table_keeps_the_key_bits_where_block_sizes_go() -> None:
    """At 80 columns the key bits stay beside the name (AES-256-XTS against AES-128-XTS is
    a key-size question) while block sizes beyond the three kept are left out."""
    from pqbench.data.record.results import Measurement
    from pqbench.data.record.rounds import LoopResult
    from pqbench.views import runs

    rows = [Measurement(name, "libcrypto", "encrypt", (LoopResult(1000, 10**6),) * 3,
                        block_size=size, attributes={"time_base": "cpu", "key_bits": bits,
                                                     "security_bits": bits // 2})
            for name, bits in (("AES-128-XTS", 256), ("AES-256-XTS", 512))
            for size in (16, 64, 256, 1024, 8192, 16384)]
    table = runs.throughput_table(rows)
    cells = [[texts[i] for texts in tables.texts(table)] for i in range(len(table.columns))]
    plan = layout.plan(table.columns, cells, 80)
    shown = [table.columns[i].title for i in plan.kept]
    assert shown[:4] == ["algorithm", "implementation", "operation", "key bits"], shown
    assert {"16 B", "1 KiB", "16 KiB"} <= set(shown)
    assert "8 KiB" in [table.columns[i].title for i in plan.dropped]
    assert "±CI (widest)" in shown


@pytest.mark.parametrize("width", [80, 120])
def test_history_keeps_each_level_s_interval_at_every_width(width: int) -> None:
    """A build's level never stands without its interval: one cell, the unit said once
    ("3.28 [3.20–3.35] GB/s"); a long build label wraps at a readable width (never to 10
    cells, four lines a row) and the run's time goes first."""
    from pqbench.analysis.history import HistoryStep, Point, Series
    from pqbench.views import comparisons

    label = "10.14.6 (18F132), with a long label"
    series = Series("SHA-256", "python", "hash", 16384, "bytes/s", (
        Point("10.14.5", "2026-01-02T00:00:00+00:00", ("a",) * 5, 45, 1.63e9, 1.60e9, 1.66e9),
        Point(label, "2026-01-03T00:00:00+00:00", ("b",) * 5, 45, 3.28e9, 3.20e9, 3.35e9)),
        (HistoryStep(1, label, 1.63e9, 3.28e9, 2.0, ci_low=1.94, ci_high=2.06),))
    table = comparisons.history_table(series)
    cells = [[texts[i] for texts in tables.texts(table)] for i in range(len(table.columns))]
    plan = layout.plan(table.columns, cells, width)
    shown = {table.columns[i].title: w for i, w in zip(plan.kept, plan.widths, strict=True)}
    assert shown["bytes/s [95 % CI]"] >= len("3.28 [3.20–3.35] GB/s"), plan
    assert [texts[4] for texts in tables.texts(table)] == ["1.63 [1.60–1.66] GB/s",
                                                          "3.28 [3.20–3.35] GB/s"]
    assert shown["build"] >= layout.READABLE_PROSE, plan


def test_a_group_goes_together_and_short_titles_are_used_where_room_is_short() -> None:
    columns = (Column("implementation", short="impl."), Column("before", priority=1,
                                                                group="levels"),
               Column("after", priority=1, group="levels"), Column("ratio", priority=1))
    cells = (("liboqs",), ("1.23 k",), ("1.30 k",), ("1.06x",))
    plan = layout.plan(columns, cells, 60)
    assert not plan.short and plan.headers[0] == ("implementation",)
    plan = layout.plan(columns, cells, 30)  # 6+6+6+5 = 23 + 6: the short title
    assert plan.short and plan.headers[0] == ("impl.",) and not plan.dropped
    plan = layout.plan(columns, cells, 22)  # "ratio" is the rightmost of equals...
    assert plan.dropped == (3,)
    # ...then before and after, together; with them gone, "ratio" fits again (6 + 2 + 5)
    # and is put back: a column is not left out for room that was freed later.
    plan = layout.plan(columns, cells, 21)
    assert plan.kept == (0, 3) and plan.dropped == (1, 2)
    plan = layout.plan(columns, cells, 12)
    assert plan.kept == (0,) and plan.dropped == (1, 2, 3)


def test_titles_wrap_at_spaces_and_unwrap_where_room_is_left() -> None:
    columns = (Column("heap peak B", "count"), Column("stack B", "count"))
    cells = (("864",), ("14,264",))
    plan = layout.plan(columns, cells, 16)  # 4 + 6 + 2, and 4 to spare: "stack B" unwraps
    assert plan.headers == (("heap", "peak", "B"), ("stack B",))
    assert plan.widths == (4, 7)
    assert layout.plan(columns, cells, 40).headers == (("heap peak B",), ("stack B",))


def _render(table: Table, width: int) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(console.rich_table(table))
    return buffer.getvalue()


def test_the_rich_adapter_draws_the_plan_and_names_what_it_left_out() -> None:
    columns = tuple(replace(c, kind="text", align=c.alignment) for c in COLUMNS)
    table = Table("runs", columns, tuple(zip(*CELLS, strict=True)))
    wide = _render(table, 120)
    assert wide.splitlines()[1].split() == ["name", "value", "spread", "detail", "extra"]
    assert "not shown" not in wide and "┃" not in wide and "│" not in wide
    narrow = _render(table, 45)
    lines = narrow.splitlines()
    assert max(map(len, lines)) <= 45 and "…" not in narrow
    assert lines[1].split() == ["name", "value", "spread", "detail"]
    assert "not shown at 45 columns: extra" in " ".join(narrow.split())
    assert "tampered" in narrow and "ciphertext" in narrow  # wrapped, not cut
    records = _render(table, 17)
    assert "ML-KEM-768\n  value: 86,700\n  spread: ±1.2 %\n" in records
    assert max(map(len, records.splitlines())) <= 17 and "…" not in records


def test_empty_and_missing_only_columns_are_left_out() -> None:
    table = Table(None, (Column("a"), Column("b/s", "rate", "bytes/s"), Column("c")),
                  (("x", None, "–"), ("y", None, "")))
    text = _render(table, 80)
    assert text.splitlines()[0].split() == ["a"]


#: A ratio table as `show` drew it (fresh-clone CI, 2026-11-29), its columns as they lined
#: up there: a row with an empty block cell under a row with every cell filled; then, made
#: up, an interval and a name that wrapped, whose second lines belong to their rows.
_LINES = [("what", "against", "per", "block", "speed [CI]"),
          ("ML-KEM-768 [cryptography]", "X25519 [cryptography]", "exchange", "",
           "1.15x slower [1.13–1.19]"),
          ("AES-256-GCM [libcrypto]", "AES-256-XTS [libcrypto]", "byte (decrypt)", "16 KiB",
           "1.99x slower [1.72–2.41]"),
          ("cryptography", "libcrypto", "operation (mean)", "", "1.15x slower [1.07–1.21]"),
          ("cryptography", "libcrypto", "byte (mean)", "all", "1.08x slower [1.21x slower –"),
          ("", "", "", "", "1.26x faster]"),
          ("ML-KEM-1024", "X25519 [libcrypto]", "exchange", "", "2.01x slower [1.90–2.12]"),
          ("[liboqs]", "", "", "", ""),
          ("58 more with --all", "", "", "", "")]


def _drawn(lines: list[tuple[str, ...]]) -> str:
    """The lines as a table: columns two blanks apart, the block column to the right."""
    def line(cells: tuple[str, ...]) -> str:
        return (f"{cells[0]:<25}  {cells[1]:<23}  {cells[2]:<16}  {cells[3]:>6}  "
                f"{cells[4]}").rstrip()

    body = [line(cells) for cells in lines]
    return "\n".join(["what it costs, paired by cycle (99.2 % CI, 8 cycles, CPU time)",
                      body[0], "─" * len(body[1]), *body[1:]]) + "\n"


def test_the_table_reader_starts_a_row_below_a_closed_bracket_and_keeps_wrapped_lines() -> None:
    """`tables` (what the terminal tests read drawn tables with) tells a row from a
    wrapped line by shape: a line that answers below an answer whose interval closed is a
    row of its own even where it fills fewer cells than the row above (an empty block); an
    interval's or a name's second line, and a note in the first column, stay with the row
    above."""
    from tests.helpers.terminal import tables

    (table,) = tables(_drawn(_LINES))
    assert [row["per"] for row in table.rows] == ["exchange", "byte (decrypt)",
                                                  "operation (mean)", "byte (mean)",
                                                  "exchange"]
    assert table.heights == (1, 1, 1, 2, 3)
    assert table.rows[3]["speed [CI]"] == "1.08x slower [1.21x slower – 1.26x faster]"
    assert table.rows[4]["what"] == "ML-KEM-1024 [liboqs] 58 more with --all"
    assert table.width == len(_drawn(_LINES).splitlines()[3])



def test_the_note_below_a_table_whose_last_answer_wrapped_is_not_a_row() -> None:
    """"58 more with --all" under a last row whose interval took a second line (a noisy
    run's, as a CI run drew it) stays with that row: it fills a cell the line above left
    blank, which elsewhere starts a row."""
    from tests.helpers.terminal import tables

    (table,) = tables(_drawn([*_LINES[:6], ("58 more with --all", "", "", "", "")]))
    assert table.heights == (1, 1, 1, 3)
    assert table.rows[-1]["speed [CI]"] == "1.08x slower [1.21x slower – 1.26x faster]"
    assert table.rows[-1]["what"] == "cryptography 58 more with --all"

# --- every command at 80 columns --------------------------------------------------------------


def _cli(*args: str, columns: int | None = 80, db: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PQBENCH_DB"] = str(db)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "pqbench", *args], capture_output=True,
                          text=True, timeout=300, check=False, env=env,
                          stdin=subprocess.DEVNULL)


def _fits(text: str, width: int) -> None:
    """Every line within the width, none cut ("…"), none ending in a space (prose wrapped
    by rich rather than as notes are: a space at the end, the rest at the margin)."""
    for line in text.splitlines():
        assert len(line) <= width, f"{len(line)} > {width}: {line!r}"
        assert line == line.rstrip(), f"a space at the end: {line!r}"
    assert "…" not in text, text


@pytest.fixture(scope="module")
def busy_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real runs of every kind, and synthetic groups with steps for compare and history."""
    db = tmp_path_factory.mktemp("terminal") / "t.db"
    store = Store.open(str(db))
    for day, (label, factor) in enumerate((("10.14.4", 1.0), ("10.14.5", 1.0),
                                           ("10.14.6 (18F132), with a long label", 2.0)), 1):
        for run in make_runs(f"2026010{day}-", 5, seed=day, label=label, start_day=day,
                             drift=0.01, factors={"SHA-256": factor}):
            store.save_run(run)
    store.close()
    return db


COMMANDS = {
    "speed": ("speed", "ml-kem-768", "x25519", "aes-256-gcm", "sha256", "--seconds", "0.05",
              "--rounds", "3"),
    "tls": ("tls", "-g", "X25519MLKEM768", "-c", "ML-DSA-44", "-i", "pyopenssl",
            "--seconds", "0.1"),
    "memory": ("memory", "ml-kem-768", "--calls", "1"),
    "ab": ("ab", "x25519", "-i", "cryptography", "--a", "here", "--b",
           "env:PQBENCH_AB_SIDE=b", "--max-seconds", "2"),
    "verify": ("verify", "ml-kem-768", "x25519", "--all"),
    "verify summary": ("verify", "ml-kem-768"),
    "runs": ("runs",),
    "compare": ("compare", "--by", "label", "10.14.5", "10.14.6 (18F132), with a long label"),
    "compare newest": ("compare",),
    "history": ("history", "SHA-256", "--by", "label"),
    "calibrate": ("calibrate", "x25519", "-i", "cryptography", "--runs", "2", "--seconds",
                  "0.02", "--rounds", "2"),
    "list": ("list",),
    "env": ("env",),
}


@pytest.fixture(scope="module")
@starts_processes
def measured_db(busy_db: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[Path, dict[str, str]]:
    """busy_db's runs and two measured: a speed run of public-key schemes and ciphers,
    and a `files hash` run of two hashes; with a file to hash again."""
    import shutil

    folder = tmp_path_factory.mktemp("measured")
    db = folder / "m.db"
    shutil.copy(busy_db, db)
    data = folder / "disk.img"
    data.write_bytes(os.urandom(2 << 20))
    ids = {"file": str(data)}
    for kind, args in (("speed", ("speed", "ml-kem-768", "x25519", "rsa2048", "aes-128-xts",
                                  "aes-256-xts", "aes-256-gcm", "-i", "cryptography", "-i",
                                  "libcrypto", "--seconds", "0.05", "--rounds", "8")),
                       ("files", ("files", "hash", str(data), "-a", "sha256", "-a",
                                  "sha512", "--cache", "as-is"))):
        done = _cli(*args, "--json", db=db)
        assert done.returncode == 0, done.stderr
        ids[kind] = json.loads(done.stdout)["run_id"]
    return db, ids


#: The commands of `COMMANDS` that store runs.
STORING = {"speed", "tls", "memory", "ab", "calibrate"}


#: Commands that read what `measured_db` holds ({speed}, {files}, {file}: its run ids and
#: the file it hashed).
READING = {
    "ratios": ("ratios", "{speed}"),
    "ratios --all": ("ratios", "{speed}", "--all"),
    "ratios --relative-to": ("ratios", "{speed}", "--relative-to", "aes-128-xts"),
    "ratios of a files run": ("ratios", "{files}"),
    "show": ("show", "{speed}"),
    "show a files run": ("show", "{files}"),
    "files hash": ("files", "hash", "{file}", "-a", "sha256", "-a", "sha512", "--cache",
                   "as-is", "--runs", "8"),
}


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("name", list(READING))
def test_every_table_of_a_stored_run_reads_at_both_widths(
        measured_db: tuple[Path, dict[str, str]], name: str, columns: int) -> None:
    """On a terminal of each width, as a user meets it: every table read back, no
    interval left out or cut, no row taller than it needs."""
    db, ids = measured_db
    drawn = in_terminal(*(arg.format(**ids) for arg in READING[name]), columns=columns,
                        db=db)
    # Progress lines are redrawn in place: a bar may shorten what it shows ("…").
    lines = [line for line in drawn.splitlines() if not re.search(r"━|╸|╺|^SHA\d+ \(", line)]
    assert max(len(line.rstrip()) for line in lines) <= columns, drawn
    assert "…" not in "\n".join(lines) and "Traceback" not in drawn
    _reads_well(drawn, columns, name)
    from tests.helpers.terminal import tables

    if name.startswith("ratios"):
        (table,) = [t for t in tables(drawn) if "what it costs" in t.title]
        answers = [row["speed [CI]"] for row in table.rows]
        worded = re.compile(r"([\d.]+x (faster|slower)|same speed) \[.+\]")
        assert [a for a in answers if not worded.fullmatch(a)] == [], drawn
        if name == "ratios":  # AES-256-GCM against AES-256-XTS: authentication's cost
            whats = {(row["what"].split(" [")[0], row["against"].split(" [")[0])
                     for row in table.rows}
            assert ("AES-256-GCM", "AES-256-XTS") in whats, whats
        if name == "ratios of a files run":
            assert {row["per"] for row in table.rows} == {"byte"}
            assert {row["file"] for row in table.rows} == {"disk.img"}
    if name == "ratios --relative-to":  # each row against AES-128-XTS of its own library
        (table,) = [t for t in tables(drawn) if "what it costs" in t.title]
        assert {row["against"].split(" [")[0] for row in table.rows} == {"AES-128-XTS"}


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_table_fits_and_cuts_nothing(busy_db: Path, name: str, columns: int,
                                           tmp_path: Path) -> None:
    db = busy_db
    if name in STORING:  # its runs in a copy: `runs` reads the same store, in any order
        import shutil

        db = Path(shutil.copy(busy_db, tmp_path / "t.db"))
    done = _cli(*COMMANDS[name], db=db, columns=columns)
    assert done.returncode == 0, done.stderr
    _fits(done.stdout, columns)
    _fits(done.stderr, columns)
    assert done.stdout.strip()
    _reads_well(done.stdout, columns, name)
    if name == "runs":
        listed = json.loads(_cli("runs", "--json", db=busy_db).stdout)["runs"]
        for run in listed:  # every id whole, on one line, to copy
            assert run["run_id"] in done.stdout
    if name == "speed":
        # Public-key rows, then the ciphers and hashes with block sizes as columns.
        assert "ML-KEM-768" in done.stdout and "liboqs-python" in done.stdout
        header = next(line for line in done.stdout.splitlines() if "16 B " in line)
        assert "1 KiB" in header and "16 KiB" in header
        assert "@16384B" not in done.stdout  # no long form on the terminal
    if name == "history":
        assert re.search(r"▲ [12]\.\d+x", done.stdout)  # the doubling, whole


#: The tallest a table's row may be: a cell on two lines, three where an interval across 1
#: says both its ends ("1.08x slower [1.21x slower – 1.26x faster]"); advice and reasons
#: (prose) take what they take at 80 columns.
ROW_LINES = {"env": 6, "runs": 4}

#: Tables whose rows keep to three lines at 80 columns and two at 120 (a check's long
#: reason, a toolchain, goes below the table as a note).
SHORT_ROWS = {"list", "verify"}

#: Columns that are an interval, or hold one: never the ones a table leaves out.
INTERVAL = re.compile(r"CI\]|±CI|\[CI|95 % CI")


def _reads_well(text: str, columns: int, name: str) -> None:
    """Every table drawn: no interval column left out, every interval whole in its cell,
    no row taller than `ROW_LINES` allows, and no column that says nothing (empty in every
    row)."""
    from tests.helpers.terminal import drawn_table, tables

    for said in " ".join(text.split()).split("not shown at ")[1:]:
        names = said.split(" (a wider terminal")[0]
        assert not INTERVAL.search(names), said
    drawn = tables(text)
    for table in drawn:
        assert table.rows, table
        for column in table.names:
            cells = [row[column] for row in table.rows]
            assert any(cells), (name, table.title, column)
            for cell in cells:
                assert cell.count("[") == cell.count("]"), (name, column, cell)
        heights = table.heights
        if name in SHORT_ROWS:  # a row starts at its name (a check's detail may be empty)
            heights = drawn_table(text, table.title[:20], key=table.names[0]).heights
        tallest = (3 if columns < 120 else 2) if name in SHORT_ROWS else ROW_LINES.get(name, 3)
        assert max(heights) <= tallest, (name, columns, table.title, heights)
        # A cell wraps only where the table takes the width: no column squeezed while
        # there is room beside it.
        assert max(table.heights) == 1 or table.width >= columns - 4, (
            name, columns, table.title, table.width, table.heights)


@pytest.mark.process
def test_the_speed_table_shows_block_sizes_as_columns_and_json_keeps_rows(
        tmp_path: Path) -> None:
    db = tmp_path / "bulk.db"
    done = _cli("speed", "aes-128-gcm", "sha256", "-i", "cryptography", "-i", "python",
                "--seconds", "0.03", "--rounds", "2", "--json", db=db)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["results"]
    assert len(rows) == 3 * 6  # AES encrypt and decrypt, SHA-256 hash; six block sizes each
    done = _cli("speed", "aes-128-gcm", "sha256", "-i", "cryptography", "-i", "python",
                "--seconds", "0.03", "--rounds", "2", columns=None, db=db)
    table = done.stdout
    lines = [line for line in table.splitlines() if "AES-128-GCM" in line or "SHA-256" in line]
    assert len(lines) == 3
    header = next(line for line in table.splitlines() if "16 KiB" in line)
    for size in ("16 B", "64 B", "256 B", "1 KiB", "8 KiB", "16 KiB"):
        assert size in header
    # One line per (algorithm, implementation, operation): its six rates in MB/s, as stored.
    run_id = re.search(r"stored as run (\S+)", done.stderr).group(1)  # type: ignore[union-attr]
    stored = Store.open(str(db), create=False).load_run(run_id)
    expected = {m.block_size: m.bytes_per_sec for m in stored.measurements
                if m.algorithm == "AES-128-GCM" and m.operation == "encrypt"}
    encrypt = next(line for line in lines if "encrypt" in line)
    figures = encrypt.replace("│", " ").split()[4:10]  # after the key bits
    for figure, size in zip(figures, sorted(expected), strict=True):
        assert float(figure.replace(",", "")) == pytest.approx(expected[size] / 1e6, rel=0.006)


@pytest.mark.process
def test_columns_is_honoured_when_piped_and_nothing_is_cut_without_it(busy_db: Path) -> None:
    narrow = _cli("runs", columns=100, db=busy_db).stdout
    _fits(narrow, 100)
    unbounded = _cli("runs", columns=None, db=busy_db).stdout
    assert "run id" in unbounded  # no terminal, no COLUMNS: every column
    for title in ("kind", "started (UTC)", "status", "OS build", "host", "rows"):
        assert title in unbounded
    assert max(map(len, unbounded.splitlines())) > 100


@pytest.mark.process
def test_the_real_terminal_width_is_used(busy_db: Path) -> None:
    """On a terminal 90 columns wide (a pseudo-terminal, COLUMNS unset)."""
    plain = _in_terminal("runs", "--all", columns=90, db=busy_db)  # other tests add runs
    lines = [line for line in plain.splitlines() if line.strip()]
    assert lines and max(len(line) for line in lines) <= 90
    for i in range(5):
        assert f"20260101-{i}" in plain  # every id whole
    # Laid out for 90 columns, not for no terminal: the long label wraps (or its column is
    # named as left out).
    label = "10.14.6 (18F132), with a long label"
    assert label not in plain or "not shown at 90 columns" in plain


# --- progress ----------------------------------------------------------------------------------


def test_progress_shows_what_runs_how_far_and_the_time_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    terminal = Console(file=buffer, force_terminal=True, width=100, color_system=None)
    with console.progress_bar(3, console=terminal) as advance:
        advance("ML-KEM-768 encaps [liboqs]")
        advance("ML-KEM-768 decaps [liboqs]")
    text = buffer.getvalue()
    assert "ML-KEM-768 decaps [liboqs]" in text
    assert "ETA" in text and ("-:--:--" in text or "0:00:0" in text)
    assert "2/3" in text or "1/3" in text
    silent = io.StringIO()
    with console.progress_bar(3, console=Console(file=silent)) as advance:
        advance("not a terminal")
    assert silent.getvalue() == ""  # no terminal, no bar


@pytest.mark.parametrize("width", [200, 60, 24, 12])
def test_hostile_cells_stay_literal_at_every_width(width: int) -> None:
    """Boxed, compact, wrapped or one block per row: every cell and title is still shown
    literally, escapes and bidirectional overrides removed, [markup] kept as text."""
    hostile = "[bold]x[/bold] \x1b]0;pwn\x07 \u202eevil"
    table = Table(f"title {hostile}", (Column("label", wrap=True), Column(f"h {hostile}"),
                                       Column("n", "count", priority=1)),
                  ((hostile, "[link=http://evil]y[/link]", 7),))
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=True).print(console.rich_table(table))
    text = buffer.getvalue()
    assert "\x1b]0;" not in text and "\x07" not in text and "\u202e" not in text
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "[bold]x[/bold]" in "".join(plain.split())
    assert "[link=http://evil]y[/link]" in "".join(plain.split())


def test_the_width_is_looked_up_when_printing_not_at_import(busy_db: Path) -> None:
    from typer.testing import CliRunner

    from pqbench.cli import app

    shown = {}
    for width in (60, 100):
        result = CliRunner().invoke(app, ["runs", "--db", str(busy_db)],
                                    env={"COLUMNS": str(width)})
        assert result.exit_code == 0, result.output
        _fits(result.stdout, width)
        shown[width] = result.stdout
    assert "not shown at 60 columns" in " ".join(shown[60].split())
    assert max(map(len, shown[100].splitlines())) > 60


def test_names_and_values_too_narrow_for_columns_are_name_value_lines() -> None:
    from pqbench.views.tables import key_values

    table = key_values("pqbench environment", [
        ("library_details.liboqs.library", "/root/.cache/pqbench/liboqs/lib/liboqs.so"),
        ("os_build", "debian-12/6.18.44-fc-v669"), ("label", None)])
    (line,) = [line for line in _render(table, 90).splitlines() if "os_build" in line]
    assert "debian-12/6.18.44-fc-v669" in line  # room enough: a table of two columns
    narrow = _render(table, 40)
    assert "os_build: debian-12/6.18.44-fc-v669\n" in narrow
    assert "label: –\n" in narrow  # as the table shows a missing value
    assert max(map(len, narrow.splitlines())) <= 40 and "…" not in narrow


def _in_terminal(*args: str, columns: int, db: Path) -> str:
    return in_terminal(*args, columns=columns, db=db)


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_ab_progress_shows_rows_time_and_budget(tmp_path: Path, columns: int) -> None:
    drawn = _in_terminal("ab", "x25519", "-i", "cryptography", "--a", "here", "--b",
                         "env:PQBENCH_AB_SIDE=b", "--max-seconds", "3", columns=columns,
                         db=tmp_path / "ab.db")
    lines = [line for line in drawn.splitlines() if "budget" in line]
    assert lines, drawn
    assert max(len(line.rstrip()) for line in lines) <= columns
    # What runs first is said whole, not cut to "starting the wo…".
    assert any("starting the workers " in line for line in lines), lines
    # The row of how many (X25519's keygen and derive), and the pairs taken of it so far.
    assert any(re.search(r"row [12] of 2 +\d:\d\d:\d\d of ~3\.00 s budget", line)
               for line in lines), lines
    assert any(re.search(r"row [12] of 2, \d+ pairs? +\d:\d\d:\d\d of ~3\.00 s budget",
                         line) for line in lines), lines


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_bisect_progress_shows_the_session_its_builds_and_what_runs(tmp_path: Path,
                                                                   columns: int) -> None:
    drawn = _in_terminal("bisect", "x25519", "-i", "cryptography", "-o", "derive", "--series",
                         "here", "--series", "env:PQBENCH_AB_SIDE=b", "--max-seconds", "3",
                         columns=columns, db=tmp_path / "bisect.db")
    assert max(len(line.rstrip()) for line in drawn.splitlines()) <= columns
    # The session of how many are done, the builds it compares and their positions.
    assert re.search(r"session 1 \(0 done\): builds here \.\. env:PQBENCH_AB_SIDE=b "
                     r"\(positions 1-2 of 2\)", drawn), drawn
    assert "1 session, 2 runs stored in" in " ".join(drawn.split())


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_report_shows_what_it_is_doing(busy_db: Path, tmp_path: Path, columns: int) -> None:
    drawn = _in_terminal("report", "--out", str(tmp_path / f"r{columns}"), columns=columns,
                         db=busy_db)
    assert "drawing" in drawn and "chart(s) and writing" in drawn
    assert "wrote" in drawn


@pytest.mark.process
def test_the_progress_bar_keeps_its_times_whole_at_80_columns(tmp_path: Path) -> None:
    drawn = _in_terminal("speed", "ml-kem-768", "aes-256-gcm", "--seconds", "0.05",
                         "--rounds", "2", "--bytes", "1024", columns=80, db=tmp_path / "s.db")
    bars = [line for line in drawn.splitlines() if "ETA" in line]
    assert bars
    for line in bars:
        assert len(line.rstrip()) <= 80
        assert re.search(r"\d+/\d+ +\d:\d\d:\d\d ETA", line), line  # elapsed never cut


def test_progress_the_rooms_below_log_is_shown_once_on_stderr_and_escaped(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A pip, userland or liboqs build reports through a "pqbench" logger; the console
    shows each message once (however often the handler is asked for), named by its room,
    with the control characters a package name could carry removed."""
    console.show_progress()
    console.show_progress()
    logging.getLogger("pqbench.provision").info("building cryptography==43.0.3\x1b[2J [b]x[/b]")
    err = capsys.readouterr().err
    assert err.count("pqbench.provision: building cryptography==43.0.3") == 1
    assert "\x1b" not in err and "[b]x[/b]" in err


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_a_wrapped_warning_keeps_its_lines_under_its_first_word(tmp_path: Path,
                                                                columns: int) -> None:
    """"warning: --multi 3 on 2 CPU(s): ..." wraps at spaces within the width, each further
    line indented under the message, not back at the margin."""
    workers = len(os.sched_getaffinity(0)) + 1
    done = _cli("speed", "x25519", "-i", "cryptography", "-o", "derive", "--multi",
                str(workers), "--seconds", "0.02", "--rounds", "2", columns=columns,
                db=tmp_path / "w.db")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("warning: --multi"))
    following = []
    for line in lines[first + 1:]:
        if not line.startswith(" "):
            break
        following.append(line)
    assert following, lines  # the warning is longer than the width
    assert all(line.startswith(" " * len("warning: ")) for line in following)
    assert max(len(line) for line in [lines[first], *following]) <= columns
    told = " ".join([lines[first], *following]).split()
    assert "one worker per CPU" in " ".join(told)


@pytest.mark.process
@pytest.mark.parametrize("columns", [80, 120])
def test_cipher_rows_carry_their_interval_and_cv_and_the_level_is_said_once(
        tmp_path: Path, columns: int) -> None:
    """A cipher table has the spread a public-key table has (±CI, CV), headed "±CI" on one
    line and the interval's true level said once in the title, never a "±97.9 %" header
    on a line of its own above "CI"."""
    from tests.helpers.terminal import read_table

    done = _cli("speed", "x25519", "aes-128-gcm", "-i", "cryptography", "--seconds", "0.03",
                "--rounds", "5", columns=columns, db=tmp_path / "ci.db")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert not re.search(r"^\s*±[\d.]+ %\s*$", text, re.M)  # no level-only header line
    public = read_table(text, "pqbench run", key="algorithm")
    assert all(re.fullmatch(r"±[\d.]+ %", row["±CI"]) for row in public), public
    title = next(line for line in text.splitlines() if line.startswith("ciphers and hashes")
                 or "±CI: the median's" in line)
    assert title
    assert "±CI: the median's 93.8 % interval" in " ".join(text.split())  # 5 rounds
    bulk = read_table(text, "ciphers and hashes", key="algorithm")

    def cell(row: dict[str, str], name: str) -> str:
        # The column's short header ("±CI") where room is short, else its whole one
        # ("±CI (widest)"): which one fits depends on how wide this run's figures are.
        (found,) = [value for header, value in row.items()
                    if header == name or header.startswith(f"{name} (")]
        return found

    assert bulk and all(re.fullmatch(r"±[\d.]+ %", cell(row, "±CI")) for row in bulk), bulk
    if columns >= 120:
        assert all(re.fullmatch(r"[\d.]+ %", cell(row, "CV")) for row in bulk), bulk

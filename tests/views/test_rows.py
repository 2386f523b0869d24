"""Rows that stay short: prose columns share the width so that the tallest row is as short
as the room allows, a column's cells too tall for a row go below the table as numbered
notes, and `list` and `verify`, drawn from their data at 80 and 120 columns, keep every
row to three lines and two, with every name, mark and status still on the screen."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.text import Text

from pqbench.app.listing import Foreign, Listed, Listing
from pqbench.catalog.algorithms import all_algorithms
from pqbench.libraries.implementations import all_implementations, on_request
from pqbench.libraries.implementations.stacks import StackImplementation
from pqbench.measure.checks.verify import Outcome
from pqbench.views import checks, layout, listing
from pqbench.views.tables import Column, Table
from tests.helpers.terminal import Drawn, drawn_table, notes_below, rendered

#: The tallest a row of `list` or `verify` may be, by the terminal's width.
BOUND = {80: 3, 120: 2}

LONG = ("the native timing loop has no known-answer entry point; checked instead: a round "
        "trip and tamper check in C (keygen, encaps/sign, decaps/verify, a flipped byte "
        "rejected) before every timing loop")
KAT = "1000/1000 vectors, NIST KAT kat_MLKEM_768.rsp (cryptography-vectors 50.0.2)"
EVERY = "liboqs, liboqs-python, cryptography, go, aws-lc-rs, libcrux, java, bouncycastle"


@pytest.mark.parametrize("text", [LONG, KAT, EVERY, "a  b   c", "x" * 45 + " y",
                                  "first line\nsecond, longer line", "", "µs/op → done"])
@pytest.mark.parametrize("width", [1, 5, 10, 19, 20, 24, 40, 90])
def test_lines_at_counts_the_lines_the_terminal_draws(text: str, width: int) -> None:
    drawn = Text(text).wrap(Console(width=200), width, overflow="fold")
    assert layout.lines_at(text, width) == len(drawn), (text, width, drawn)


def test_prose_columns_share_the_room_so_the_tallest_row_is_as_short_as_it_allows() -> None:
    """The room goes where the rows are tall: eight names over three lines beside the
    operations over two, not the operations whole and the names over seven lines."""
    columns = (Column("algorithm"), Column("operations", wrap=True),
               Column("implementations", wrap=True))
    cells = (("ML-KEM-768", "RSA-2048"),
             ("keygen encaps decaps", "sign verify encrypt decrypt (keygen)"),
             (EVERY, "libcrypto, cryptography"))
    plan = layout.plan(columns, cells, 60)
    # Three lines at most (the operations at 15, the names at 28: the narrowest that take
    # three), the 3 cells left over to the column that lacks least.
    assert plan.widths == (10, 18, 28) and layout.tallest_row(cells, plan) == 3, plan
    assert layout.lines_at(EVERY, 28) == 3 and layout.lines_at(EVERY, 27) == 4
    # 57 columns: just the room for three lines (15 + 28); one less, and rows take four.
    exact = layout.plan(columns, cells, 57)
    assert exact.widths == (10, 15, 28) and layout.tallest_row(cells, exact) == 3
    assert layout.tallest_row(cells, layout.plan(columns, cells, 56)) == 4
    # Room for each column's widest cell: every row on one line, no column wider.
    wide = layout.plan(columns, cells, 200)
    assert wide.widths == (10, 36, 79) and layout.tallest_row(cells, wide) == 1


def test_short_prose_wraps_where_that_keeps_the_rows_shorter() -> None:
    """Prose keeps a readable width while that costs no row a line; where wrapping short
    prose ("keygen sign verify") gives a long list the room to take a line less, it
    wraps."""
    columns = (Column("algorithm"), Column("operations", wrap=True),
               Column("implementations", wrap=True), Column("also spelled", wrap=True))
    cells = (("ML-DSA-44",), ("keygen sign verify",), (EVERY,), ("mldsa44, dilithium2",))
    plan = layout.plan(columns, cells, 80)
    assert layout.tallest_row(cells, plan) == 2, plan
    assert layout.tallest_row(cells, layout.plan(columns, cells, 160)) == 1


def test_cells_too_tall_for_a_row_go_below_as_numbered_notes() -> None:
    columns = (Column("check"), Column("status"), Column("detail", wrap=True, notes=True))
    other = ("cryptography's encapsulate() draws its own randomness and has no seeded form, "
             "so the KAT ciphertext cannot be reproduced; checked instead: decaps of the "
             "KAT ciphertexts")
    cells = (("KAT encaps", "round trip", "KAT keygen", "KAT", "KAT"),
             ("not offered", "passed", "passed", "not offered", "not offered"),
             (other, "", KAT, LONG, other))
    found = layout.noted(columns, cells, 60)
    # Numbered as the rows refer to them; a text met again keeps its number; what fits
    # in three lines stays on its row.
    assert found.notes == (other, LONG)
    assert found.cells[2] == ("[1]", "", KAT, "[2]", "[1]")
    assert layout.tallest_row(found.cells, found.plan) <= 3
    # Two lines at 120 columns: only the longest reason is too long for them.
    wider = layout.noted(columns, cells, 120)
    assert wider.cells[2] == (other, "", KAT, "[1]", other) and wider.notes == (LONG,)
    assert layout.noted(columns, cells, 300).notes == ()  # room for them on their rows
    assert layout.noted(columns, cells, 15).notes == ()  # records: nothing to gain
    text = rendered(checks_table(cells), 60)
    assert {other, LONG} <= set(notes_below(text).values())  # below, whole
    assert max(map(len, text.splitlines())) <= 60


def checks_table(cells: tuple[tuple[str, ...], ...]) -> Table:
    return checks.table([Outcome("ML-KEM-768", "cryptography", check, status, detail)
                         for check, status, detail in zip(*cells, strict=True)], True)


def test_a_note_moves_where_another_column_keeps_the_rows_tall() -> None:
    """A state of three lines beside a description of four: the states go below, and the
    description takes their room."""
    what = ("Go's standard library (crypto/mlkem, crypto/ecdh, crypto/ed25519, crypto/ecdsa) "
            "and a Go ML-DSA and ML-KEM-512")
    columns = (Column("implementation"), Column("what", wrap=True),
               Column("here", wrap=True, notes=True))
    here = "compiled on first use with rustc 1.95.0 (59807616e 2026-04-14)"
    cells = (("go", "aws-lc-rs"), (what, "the aws-lc-rs crate (AWS-LC)"), (here, here))
    assert layout.tallest_row(cells, layout.plan(columns, cells, 66)) == 4
    found = layout.noted(columns, cells, 66)
    assert found.notes == (here,) and found.cells[2] == ("[1]", "[1]")
    assert layout.tallest_row(found.cells, found.plan) == 3


# --- `list` and `verify` as drawn ---------------------------------------------------------


def _drawn(text: str, key: str) -> Drawn:
    """The one table in `text`: its title is the first line, a row starts where `key` is
    filled."""
    return drawn_table(text, text.splitlines()[0], key=key)


def _listing(compiled: bool) -> Listing:
    """Every algorithm with every implementation that claims it: the foreign ones compiled,
    or marked to be compiled on first use (the widest lists)."""
    own = [i for i in all_implementations()
           if not isinstance(i, StackImplementation) and not on_request(i)]
    stacks = [i for i in all_implementations() if isinstance(i, StackImplementation)]
    listed = []
    for alg in all_algorithms():
        ready = [i.name for i in own if i.in_scope(alg)
                 and any(i.offers(alg, op) is None for op in alg.operations)]
        foreign = [i.name for i in stacks if alg.name in i.stack.offers]
        listed.append(Listed(alg, tuple(ready + foreign * compiled),
                             () if compiled else tuple(foreign)))
    tools = {"Go": "go1.26.8", "Rust": "rustc 1.95.0 (59807616e 2026-04-14)",
             "Java": "25.0.3 (Eclipse Adoptium)"}
    return Listing(tuple(listed), tuple(
        Foreign(i.name, i.stack.language, i.stack.description,
                "built" if compiled else "buildable",
                "/cache" if compiled else f"compiled on first use with {tools[i.stack.language]}")
        for i in stacks), ())


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("width", list(BOUND))
def test_list_keeps_its_rows_short_with_every_name_and_mark(width: int, compiled: bool
                                                            ) -> None:
    found = _listing(compiled)
    kinds = {a.algorithm.kind for a in found.algorithms}
    drawn = {}
    for table in listing.tables(found):
        text = rendered(table, width)
        assert max(map(len, text.splitlines())) <= width and "not shown" not in text, text
        one = _drawn(text, "algorithm")
        assert max(one.heights) <= BOUND[width], (width, one.title, one.heights)
        assert one.names == ("algorithm", "operations", "implementations", "also spelled")
        kind = one.title.split()[0]
        drawn.update({row["algorithm"]: (kind, row) for row in one.rows})
    assert {kind for kind, _ in drawn.values()} == kinds  # each kind, said in its title
    for listed in found.algorithms:
        kind, row = drawn[listed.algorithm.name]
        assert kind == listed.algorithm.kind
        assert row["implementations"].split(", ") == [
            *listed.ready, *(f"{name}*" for name in listed.on_first_use)]
        assert row["also spelled"].split(", ") == list(listed.algorithm.aliases)
        assert row["operations"].split() == [
            *listed.algorithm.operations,
            *(f"({op})" for op in listed.algorithm.optional_operations)]
    text = rendered(listing.stacks_table(found), width)
    stacks = _drawn(text, "implementation")
    assert max(stacks.heights) <= BOUND[width], (width, stacks.heights)
    notes = notes_below(text)
    for foreign, row in zip(found.stacks, stacks.rows, strict=True):
        assert row["implementation"] == foreign.name and row["what"] == foreign.what
        assert notes.get(row["here"], row["here"]) == (
            "compiled" if compiled else foreign.detail)


#: Checks as `verify --all` reports them, their details among the longest it gives.
OUTCOMES = [
    Outcome("ML-KEM-768", "liboqs", "native check", "passed",
            "decapsulation returns the encapsulated secret"),
    Outcome("ML-KEM-768", "liboqs", "KAT", "not offered", LONG),
    Outcome("ML-KEM-768", "liboqs-python", "round trip", "passed"),
    Outcome("ML-KEM-768", "liboqs-python", "implicit rejection", "passed",
            "tampered ciphertext -> other secret"),
    *(Outcome("ML-KEM-768", "liboqs-python", f"KAT {op}", "passed", KAT)
      for op in ("keygen", "encaps", "decaps", "implicit rejection")),
    Outcome("ML-KEM-768", "libcrypto", "all", "not offered",
            "ML-KEM-768 needs OpenSSL >= 3.5; this libcrypto is OpenSSL 3.0.19"),
    Outcome("ML-DSA-65", "liboqs-python", "KAT keygen", "passed",
            "100/100 vectors, NIST KAT kat_MLDSA_65_det_pure.rsp (cryptography-vectors "
            "50.0.2)"),
    Outcome("ML-DSA-65", "cryptography", "KAT sign", "not offered",
            "cryptography signs hedged (FIPS 204 Algorithm 2 with fresh rnd) and offers no "
            "deterministic mode, so KAT signatures cannot be reproduced; checked instead: "
            "keygen from xi and verify of the KAT signatures"),
    Outcome("ECDSA-P-256", "cryptography", "tampered ciphertext rejected", "passed"),
    Outcome("Ed448", "cryptography", "KAT sign", "passed",
            "8/8 vectors, RFC 8032 7.4 (cryptography-vectors 50.0.2); 1 vector(s) not "
            "applicable: cryptography's Ed448 API takes no context string (RFC 8032 5.2 "
            "Ed448 ctx)"),
    Outcome("X25519", "cryptography", "KAT derive", "failed", "vector 3: wrong secret"),
]


@pytest.mark.parametrize("width", list(BOUND))
def test_verify_keeps_its_rows_short_with_every_check_status_and_detail(width: int) -> None:
    text = rendered(checks.table(OUTCOMES, True), width)
    assert max(map(len, text.splitlines())) <= width and "not shown" not in text, text
    table = _drawn(text, "algorithm")
    assert table.names == ("algorithm", "impl.", "check", "status", "detail"), table.names
    assert max(table.heights) <= BOUND[width], (width, table.heights)
    notes = notes_below(text)
    assert [(row["algorithm"], row["impl."], row["check"], row["status"],
             notes.get(row["detail"], row["detail"])) for row in table.rows] == [
        (o.algorithm, o.implementation, o.check, o.status, o.detail) for o in OUTCOMES]
    assert LONG in notes.values()  # too long for any row at these widths

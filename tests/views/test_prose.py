"""Lines of prose under a table: wrapped to the width, a digest line whole."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from pqbench.views import console


def _printed(texts: list[str], wrap: bool, width: int) -> list[str]:
    out = io.StringIO()
    console.lines(texts, wrap=wrap, console=Console(file=out, width=width, highlight=False))
    return out.getvalue().splitlines()


def test_a_path_wider_than_the_terminal_is_cut_where_the_line_ends() -> None:
    path = "/tmp/pytest-of-someone/pytest-1234/popen-gw1/" + "a_long_test_name_" * 3 + "/data.bin"
    sentence = (f"{path}: SHA-512 against SHA-256: 1.48x faster [3.08x slower – 4.33x faster]"
                " (99 % CI, 10 pairs)")
    for width in (60, 80, 120):
        shown = _printed([sentence], wrap=True, width=width)
        assert len(shown) > 1 and max(len(line) for line in shown) <= width, shown
        # Nothing lost or reordered: the lines hold the sentence's characters, in order.
        assert "".join("".join(line.split()) for line in shown) == "".join(sentence.split())


def test_a_digest_line_stays_whole_whatever_the_width() -> None:
    line = "SHA512 (/tmp/some/where/data.bin) = " + "ab" * 64
    assert _printed([line], wrap=False, width=80) == [line]


def test_a_note_naming_a_path_wider_than_the_terminal_keeps_to_the_width(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """bisect's last note names the store: a path longer than the terminal starts a line of
    its own and is cut where the line ends, its rest under the note's indentation."""
    path = "/tmp/pytest-of-someone/pytest-123/popen-gw1/test_bisect_progress_shows_the0/b.db"
    monkeypatch.setenv("COLUMNS", "80")
    console.note(f"1 session, 2 runs stored in {path}")
    console.error(f"no pqbench database at {path}x{path}")
    shown = capsys.readouterr().err.splitlines()
    assert max(len(line) for line in shown) <= 80, shown
    assert shown[:3] == ["1 session, 2 runs stored in", "  " + path[:78], "  " + path[78:]]
    assert shown[3] == "error: no pqbench database at"
    assert "".join(line.removeprefix("       ") for line in shown[4:]) == f"{path}x{path}"

"""Lines of prose under a table: wrapped to the width, a digest line whole."""

from __future__ import annotations

import io

from rich.console import Console

from pqbench.presentation import console


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

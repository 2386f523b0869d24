"""Markdown read back as a reader sees it (markdown-it, CommonMark with tables): headings
and tables as plain text, for tests of reports and `--markdown` output."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token


def parse(text: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(text)


def plain(inline: Token) -> str:
    """What an inline token shows: its text and code children, escapes resolved."""
    return "".join(child.content for child in inline.children or []
                   if child.type in ("text", "code_inline"))


def tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Each table as rows of cell texts (header row first)."""
    found: list[list[list[str]]] = []
    row: list[str] | None = None
    for i, token in enumerate(tokens):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open"):
            assert row is not None
            row.append(plain(tokens[i + 1]) if tokens[i + 1].type == "inline" else "")
        elif token.type == "tr_close":
            assert row is not None
            found[-1].append(row)
    return found


def headings(tokens: list[Token]) -> list[str]:
    return [plain(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]

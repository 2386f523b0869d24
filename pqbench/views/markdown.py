"""Markdown building blocks: GitHub-flavoured tables, headings, links, and number formats.

Pure functions from data to text. Everything that comes from a run (labels, OS builds,
library versions, reasons, commands) is untrusted: `text` makes it one line of literal
text by backslash-escaping every character that could start Markdown or HTML (CommonMark
§2.4 allows a backslash before any ASCII punctuation), so a label can neither open raw
HTML, an image, a link or emphasis, nor split a table row, nor end a heading. Nor can it
become one of GitHub's bare autolinks (GFM section 6.9): the colon of a scheme
(`https://`, `mailto:`) and the dot of `www.` are escaped; an e-mail address, which GitHub
links even when escaped, gets a word joiner (U+2060, invisible) before its `@`. Code spans
and blocks are fenced longer than any backtick run inside them. Strings this module builds
are `Markdown` and are not escaped again. Numbers come from `views.numbers`, the
formatter the terminal uses too.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from pqbench.platform.untrusted import printable
from pqbench.views import tables
from pqbench.views.numbers import (
    MISSING,
    byte_count,
    byte_rate,
    duration_us,
    number,
    ratio,
    si,
    size,
)
from pqbench.views.tables import Table, strong

#: Number formats are `views.numbers`', named here too so a report module needs one
#: import for its text and its figures.
__all__ = ["MISSING", "Markdown", "bold", "byte_count", "byte_rate", "code_block", "details",
           "duration_us", "escape", "heading", "image", "inline_code", "number", "ratio",
           "render", "si", "size", "table", "text"]

# Characters that open inline markup or HTML anywhere in a line (`#` and `$` too: a
# heading's closing sequence, and GitHub's math); and a list marker at the start, in case
# the text starts a line ("- x", "2. y"; `>`, `#` and `*` are escaped anywhere).
_SPECIAL = re.compile(r"([\\`*_\[\]<>&|#~$!])")
_LINE_START = re.compile(r"^(\d{0,9})((?<=\d)[.)]|(?<!\d)[-+])(?=\s|$)")
# Where GitHub would start a bare link: "scheme://", "mailto:", "xmpp:", "www.", and the
# "@" of anything shaped like an e-mail address.
_LINK_COLON = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=mailto)(:)|(?<=xmpp)(:)")
_WWW = re.compile(r"(?i)\b(www)\.")
_MAIL_AT = re.compile(r"(?<=[A-Za-z0-9.+_-])@(?=[A-Za-z0-9_-])")
WORD_JOINER = "\u2060"


class Markdown(str):
    """Text that already is Markdown, built here from escaped parts: not escaped again."""


def text(value: object) -> Markdown:
    """Untrusted text as one line of literal Markdown (see the module docstring)."""
    if isinstance(value, Markdown):
        return value
    line = _SPECIAL.sub(r"\\\1", " ".join(printable(value).split()))
    line = _LINK_COLON.sub(r"\\:", line)
    line = _MAIL_AT.sub(WORD_JOINER + "@", _WWW.sub(r"\1\\.", line))
    return Markdown(_LINE_START.sub(r"\1\\\2", line))


def escape(value: object) -> Markdown:
    """One table cell: literal text, no line breaks, pipes escaped (GFM table syntax)."""
    return text(value)


def bold(value: object) -> Markdown:
    return Markdown(f"**{text(value)}**")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]],
          align: Sequence[str] | None = None) -> Markdown:
    """A GFM pipe table; `align` holds "l" or "r" per column (left by default)."""
    if align is not None and len(align) != len(headers):
        raise ValueError("one alignment per column")
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row {row!r} has {len(row)} cells for {len(headers)} columns")
    marks = [("---:" if a == "r" else ":---") for a in (align or ["l"] * len(headers))]
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |",
             "| " + " | ".join(marks) + " |"]
    lines.extend("| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows)
    return Markdown("\n".join(lines))


def heading(level: int, title: object) -> Markdown:
    return Markdown(f"{'#' * level} {text(title)}")


def image(alt: object, relpath: str) -> Markdown:
    """An image of a chart pqbench wrote beside the report: a relative path, never a URL."""
    path = relpath.replace(chr(92), "/")
    if "://" in path or path.startswith("/") or not re.fullmatch(r"[A-Za-z0-9._/-]+", path):
        raise ValueError(f"chart paths are relative file names, not {path!r}")
    return Markdown(f"![{text(alt)}]({path})")


def code_block(content: object, language: str = "") -> Markdown:
    """A fenced block holding `content` verbatim: the fence is longer than any backtick
    run inside (CommonMark §4.5), so nothing in it can close the block early."""
    body = printable(content, keep_newlines=True)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markdown(f"{fence}{text(language)}\n{body}\n{fence}")


def details(summary: object, body: str) -> Markdown:
    """A block folded behind a one-line summary (HTML `<details>`, which GitHub renders).

    The summary is HTML, where Markdown is not read: it is escaped as HTML text. The body
    is Markdown already; the blank lines around it end the HTML block, so GitHub reads
    the tables inside as Markdown (CommonMark §4.6, HTML blocks of type 6). Python-Markdown
    (the docs site, MkDocs) reads Markdown inside a block of HTML only where it says
    `markdown="1"` (its md_in_html extension, on in mkdocs.yml); GitHub drops the
    attribute."""
    shown = html.escape(" ".join(printable(summary).split()), quote=False)
    return Markdown(f'<details markdown="1">\n<summary>{shown}</summary>\n\n{body}\n\n'
                    "</details>")


def inline_code(content: object) -> Markdown:
    """A code span around `content` (one line), fenced longer than its backtick runs."""
    body = " ".join(printable(content).split())
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return Markdown(f"{fence}{pad}{body}{pad}{fence}")


# --- tables as data (`views.tables`) ----------------------------------------------


def render(table: Table) -> Markdown:
    """A neutral table as a GFM pipe table: every cell through the one formatter and
    escaped; a strong cell in bold; columns no row fills left out. The title is not
    written: the caller gives the section its heading."""
    table = table.without_empty_columns()
    texts = [[bold(text) if strong(cell) else escape(text)
              for cell, text in zip(row, row_texts, strict=True)]
             for row, row_texts in zip(table.rows, tables.texts(table), strict=True)]
    marks = ["---:" if c.alignment == "right" else ":---" for c in table.columns]
    lines = ["| " + " | ".join(escape(c.title) for c in table.columns) + " |",
             "| " + " | ".join(marks) + " |"]
    lines.extend("| " + " | ".join(row) + " |" for row in texts)
    return Markdown("\n".join(lines))

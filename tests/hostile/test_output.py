"""Hostile labels, OS builds and reasons on the terminal and in Markdown: shown, never obeyed.

Terminal: no escape sequence reaches the output, rich markup in a label is shown as typed
(and never crashes `runs` or `compare`). Markdown: the report and `compare --markdown` are
parsed with markdown-it; no raw HTML, no remote image, no link, no emphasis comes from the
data, every code block holds exactly the command, and the hostile text reads as typed; and
GitHub's own renderer (cmark-gfm) makes no bare link of a URL or address in the data.
"""

from __future__ import annotations

import html
import io
import json
import re
import subprocess
from pathlib import Path

import cmarkgfm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.record import transfer
from pqbench.data.record.results import Problem
from pqbench.data.store import Store
from pqbench.platform.untrusted import printable
from pqbench.views import console
from pqbench.views import markdown as md
from tests.helpers.runs import environment, make_run

ESCAPES = "\x1b]0;TITLE\x07\x1b[2J\x9b31m\u202e"
MARKUP = "[link=http://evil]x[/link] [/bold] x"
MARKDOWN = "<script>alert(1)</script> ![](http://evil/x.png) ``` [a](http://evil) *b* |c| #"
HOSTILE = f"{MARKUP} {MARKDOWN} {ESCAPES}"
SHOWN_MARKUP = "[link=http://evil]x[/link] [/bold] x"


def _hostile_db(tmp_path: Path) -> Path:
    """Two runs with hostile labels, OS builds, host names, versions, reasons and commands."""
    db = tmp_path / "hostile.db"
    store = Store.open(str(db))
    for i, (run_id, label) in enumerate((("20260101-a", f"A {HOSTILE}"),
                                          ("20260102-b", f"B {HOSTILE}"))):
        env = environment(label=label, os_build=f"build {i} | {HOSTILE}",
                          hostname=f"host {HOSTILE}", cpu__model=f"CPU {HOSTILE}",
                          libraries__system_libcrypto=f"LibreSSL {HOSTILE}")
        run = make_run(run_id, seed=i, label=label, env=env, factor=1 + i,
                       started_at=f"2026-01-0{i + 1}T00:00:00+00:00")
        run = type(run)(**{**run.__dict__,
                           "command": f"pqbench speed --label '{HOSTILE} ````'",
                           "problems": (Problem("ML-KEM-768", "libcrypto", "not offered",
                                                f"reason {HOSTILE}"),)})
        assert store.save_run(run)
    store.close()
    return db


def _plain_terminal(output: str) -> None:
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in output, repr(output)


@pytest.mark.parametrize("command", [["runs"], ["compare", "--by", "label"],
                                     ["compare", "20260101-a", "20260102-b"],
                                     ["history", "ML-KEM-768"], ["history", "ML-KEM-768",
                                                                  "--by", "label"]])
def test_terminal_shows_hostile_text_literally(tmp_path: Path, command: list[str]) -> None:
    db = _hostile_db(tmp_path)
    result = CliRunner().invoke(app, [*command, "--db", str(db)])
    assert result.exit_code == 0 and result.exception is None, result.output
    _plain_terminal(result.output)
    flat = "".join(result.stdout.split())
    if command[0] == "history":
        assert "ML-KEM-768encaps[liboqs]" in flat  # the title keeps [liboqs]
    else:
        assert "".join(SHOWN_MARKUP.split()) in flat or "[/bold]" in flat


@pytest.mark.process
def test_a_closing_tag_label_from_the_command_line_never_breaks_runs(tmp_path: Path) -> None:
    db = tmp_path / "labels.db"
    for label in ("[/bold] x", f"{ESCAPES}[link=http://evil]x[/link]"):
        done = CliRunner().invoke(app, ["speed", "x25519", "-i", "cryptography", "-o", "derive",
                                        "--seconds", "0.02", "--rounds", "2", "--label", label,
                                        "--db", str(db)])
        assert done.exit_code == 0, done.output
    for command in (["runs"], ["compare", "--by", "label"]):
        result = CliRunner().invoke(app, [*command, "--db", str(db)])
        assert result.exit_code == 0 and result.exception is None, result.output
        _plain_terminal(result.output)
        assert "[/bold] x" in result.stdout
        assert "[link=http://evil]x[/link]" in "".join(result.stdout.split())


def test_progress_lines_keep_brackets_and_drop_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(console, "stderr", Console(file=buffer, force_terminal=True,
                                                   width=200, emoji=False))
    with console.progress_bar(2) as advance:
        advance(f"ML-KEM-768 encaps [liboqs] {ESCAPES}")
    text = buffer.getvalue()
    assert "[liboqs]" in text
    assert "\x1b]0;" not in text and "\x07" not in text


def test_messages_are_escaped_and_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    console.error(f"[/bold] {ESCAPES} postgresql://u:S3cretPW@h/db")
    console.warning("[red]x[/red]")
    console.note(":smile: [b]y[/b]")
    err = capsys.readouterr().err
    assert "[/bold]" in err and "[red]x[/red]" in err and ":smile: [b]y[/b]" in err
    assert "S3cretPW" not in err and "u:***@h" in err
    _plain_terminal(err)


# --- Markdown -----------------------------------------------------------------------------

PARSER = MarkdownIt("commonmark").enable("table")


def _inline_children(tokens: list[Token]) -> list[Token]:
    return [c for t in tokens if t.type == "inline" for c in t.children or []]


#: The only HTML a report holds: pqbench's own folds, whose one-line summary is plain text.
FOLD = re.compile(r'<details markdown="1">\n<summary>[^<>]*</summary>\n|</details>\n?')


def _check_inert(tokens: list[Token]) -> str:
    """No HTML but pqbench's folds, no link, no remote image; returns the text a reader
    sees."""
    children = _inline_children(tokens)
    for token in tokens:
        if token.type == "html_block":
            assert FOLD.fullmatch(token.content), token.content
    kinds = {t.type for t in tokens if t.type != "html_block"} | {c.type for c in children}
    assert not kinds & {"html_block", "html_inline", "link_open"}, kinds
    for child in children:
        if child.type == "image":
            assert "://" not in str(child.attrs["src"]), child.attrs
    return "\n".join(c.content for c in children if c.type in ("text", "code_inline"))


@pytest.mark.process
def test_report_escapes_everything_from_the_runs(tmp_path: Path) -> None:
    db = _hostile_db(tmp_path)
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["report", "--by", "label", "--db", str(db), "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    text = (out / "report.md").read_text("utf-8")
    tokens = PARSER.parse(text)
    shown = _check_inert(tokens)
    assert "<script>alert(1)</script>" in shown and "![](http://evil/x.png)" in shown
    assert "[/bold]" in shown and "|c|" in shown
    assert not any(c in text for c in ("\x1b", "\x07", "\x9b", "\u202e"))
    # Emphasis in the report comes from pqbench only (verdicts, "Run ..."), never from *b*.
    emphasised = _emphasis(tokens)
    assert all(e != "b" for e in emphasised), emphasised
    fences = [t for t in tokens if t.type == "fence"]
    # The command is shown in bash's $'...' quoting, its control characters as escapes
    # (dropped, the line would name another label): bash gives back every argument.
    assert fences and all(_argv(f.content) == ["speed", "--label", f"{HOSTILE} ````"]
                          for f in fences), [f.content for f in fences]
    # Every table row has as many cells as its header: no | in the data split a row.
    for start, token in enumerate(tokens):
        if token.type == "table_open":
            widths = _row_widths(tokens[start:])
            assert len(set(widths)) == 1, widths


def _argv(line: str) -> list[str]:
    """The arguments bash passes to `pqbench` when it runs `line`."""
    done = subprocess.run(["bash", "-c", 'pqbench() { printf "%s\\0" "$@"; }\n' + line],
                          capture_output=True, check=True)
    return done.stdout.decode().split("\0")[:-1]


def _emphasis(tokens: list[Token]) -> list[str]:
    found, inside = [], False
    for child in _inline_children(tokens):
        if child.type == "em_open":
            inside = True
        elif child.type == "em_close":
            inside = False
        elif inside and child.type == "text":
            found.append(child.content)
    return found


def _row_widths(tokens: list[Token]) -> list[int]:
    widths, count = [], 0
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            count += 1
        elif token.type == "tr_close":
            widths.append(count)
            count = 0
        elif token.type == "table_close":
            break
    return widths


def test_compare_markdown_escapes_os_builds_and_labels(tmp_path: Path) -> None:
    db = _hostile_db(tmp_path)
    result = CliRunner().invoke(app, ["compare", "20260101-a", "20260102-b", "--markdown",
                                      "--db", str(db)])
    assert result.exit_code == 0, result.output
    tokens = PARSER.parse(result.stdout)
    shown = _check_inert(tokens)
    assert "build 0 | " in shown and "build 1 | " in shown  # the | is text, not a column
    for start, token in enumerate(tokens):
        if token.type == "table_open":
            assert len(set(_row_widths(tokens[start:]))) == 1


def test_an_imported_hostile_run_reports_safely(tmp_path: Path) -> None:
    """The issue's route: the hostile run arrives by `pqbench import`."""
    source = _hostile_db(tmp_path)
    runs = [Store.open(str(source)).load_run(r) for r in ("20260101-a", "20260102-b")]
    path = tmp_path / "export.json"
    path.write_text(transfer.export(runs, "json"))
    target = tmp_path / "imported.db"
    assert CliRunner().invoke(app, ["import", str(path), "--db", str(target)]).exit_code == 0
    out = tmp_path / "imported-report"
    result = CliRunner().invoke(app, ["report", "20260101-a", "--db", str(target), "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    tokens = PARSER.parse((out / "report.md").read_text("utf-8"))
    assert "<script>" in _check_inert(tokens)
    assert json.loads(path.read_text())["runs"][0]["label"].startswith("A [link")


def test_the_news_of_a_comparison_shows_hostile_reasons_and_versions_literally(
        tmp_path: Path) -> None:
    """What changed leads compare and report: a row that appeared carries the other side's
    reason, a failure its message, the builds their versions, all from the runs."""
    db = tmp_path / "news.db"
    store = Store.open(str(db))
    shared = (("SHA-256", "python", "hash", 16384, 100_000.0),)
    new = (("ML-KEM-768", "libcrypto", "encaps", None, 16_000.0),)
    for i, rows in enumerate((shared, (*shared, *new))):
        env = environment(label=f"side {i}", libraries__system_libcrypto=f"v{i} {HOSTILE}")
        run = make_run(f"2026010{i + 1}-n", seed=i, label=f"side {i} {HOSTILE}", env=env,
                       rows=rows, started_at=f"2026-01-0{i + 1}T00:00:00+00:00")
        problem = (Problem("ML-KEM-768", "libcrypto", "not offered", f"needs {HOSTILE}") if i == 0
                   else Problem("X25519", "libcrypto", "failed verification", f"bad {HOSTILE}"))
        assert store.save_run(type(run)(**{**run.__dict__, "problems": (problem,)}))
    store.close()
    terminal = CliRunner().invoke(app, ["compare", "20260101-n", "20260102-n", "--db", str(db)])
    assert terminal.exit_code == 0 and terminal.exception is None, terminal.output
    _plain_terminal(terminal.output)
    flat = "".join(terminal.stdout.split())
    assert "whatchanged" in flat and "needs[link=http://evil]x[/link]" in flat
    assert "bad[link=http://evil]x[/link]" in flat
    markdown = CliRunner().invoke(app, ["compare", "20260101-n", "20260102-n", "--markdown",
                                        "--db", str(db)])
    assert markdown.exit_code == 0, markdown.output
    out = tmp_path / "news-report"
    report = CliRunner().invoke(app, ["report", "20260101-n", "20260102-n", "--db", str(db),
                                      "--out", str(out)])
    assert report.exit_code == 0, report.output
    for document in (markdown.stdout, (out / "report.md").read_text("utf-8")):
        tokens = PARSER.parse(document)
        shown = _check_inert(tokens)
        assert f"needs {SHOWN_MARKUP}" in shown and f"bad {SHOWN_MARKUP}" in shown
        assert f"v1 {SHOWN_MARKUP}" in shown  # the build's version, in the news
        assert "<script>alert(1)</script>" in shown and "![](http://evil/x.png)" in shown
        assert not any(c in document for c in ("\x1b", "\x07", "\x9b", "\u202e"))
        assert all(e != "b" for e in _emphasis(tokens))
        for start, token in enumerate(tokens):
            if token.type == "table_open":
                assert len(set(_row_widths(tokens[start:]))) == 1


# --- GitHub's own renderer: no bare autolink from the data ---------------------------------

BARE_LINKS = ["https://evil.example/login?next=/", "HTTP://EVIL.EXAMPLE", "ftp://evil.example/x",
              "see www.evil.example/path.", "mail ops@evil.example now", "mailto:ops@evil.example",
              "xmpp:ops@evil.example/res", "(https://evil.example)", "*www.evil.example*",
              "debian-13/https://mirror.example 6.12:00"]


def _github_html(markdown: str) -> str:
    """The HTML github.com shows for `markdown`: cmark-gfm with GitHub's extensions."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown)


def _visible(html_text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", html_text)).replace(md.WORD_JOINER, "").strip()


@pytest.mark.parametrize("value", BARE_LINKS)
def test_bare_urls_and_addresses_are_never_links_on_github(value: str) -> None:
    for markdown in (md.text(value), md.table(["label"], [[value]], ["l"])):
        rendered = _github_html(markdown)
        assert "<a " not in rendered, rendered
        assert value in _visible(rendered)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abw.:/@_*[]()<>!`#|&;\\- 0123456789")) |
               st.characters(exclude_categories=["Cs"]), max_size=60))
def test_any_text_renders_literally_and_inert_on_github(value: str) -> None:
    # Stored text is valid Unicode (record.models refuses lone surrogates at the door).
    rendered = _github_html(md.text(value))
    assert not re.search(r"<(a|img|script|em|strong|del|code|h\d|li|table)\b", rendered), rendered
    # A word joiner of the value's own is as invisible as the ones escaping inserts, which
    # `_visible` takes out: compared without either.
    expected = " ".join(printable(value).replace(md.WORD_JOINER, "").split())
    assert _visible(rendered) == expected

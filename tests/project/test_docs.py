"""The documentation site builds strictly (a broken link or anchor fails), covers every
command, and keeps every measured figure on one page with its date, machine, load and
command."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from markdown_it import MarkdownIt
from markdown_it.token import Token

from pqbench.cli import app
from tests.helpers import REPO

DOCS = REPO / "docs"
MEASUREMENTS = DOCS / "measurements.md"
#: The fields every measured figure states, in this order.
FIELDS = ("Date", "Machine", "Load", "Command")


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(root / "mkdocs.yml"), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.process
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(REPO, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    pages = {p.relative_to(tmp_path / "site").as_posix()
             for p in (tmp_path / "site").rglob("index.html")}
    assert {"index.html", "measurements/index.html", "architecture/index.html",
            "speed/index.html", "bisect/index.html"} <= pages
    assert (tmp_path / "site" / "run-format.schema.json").is_file()


@pytest.mark.process
@pytest.mark.parametrize("broken", ["[gone](no-such-page.md)", "[gone](speed.md#no-such-anchor)"],
                         ids=["page", "anchor"])
def test_a_broken_link_fails_the_build(tmp_path: Path, broken: str) -> None:
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    page = tmp_path / "docs" / "history.md"
    page.write_text(page.read_text() + f"\nSee {broken}.\n")
    done = _build(tmp_path, tmp_path / "site")
    target = broken.partition("(")[2].rstrip(")")
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert done.returncode == 1, done.stderr
    assert len(warnings) == 1 and "'history.md'" in warnings[0] and f"'{target}'" in warnings[0]


def _text(tokens: list[Token]) -> str:
    return "".join(t.content for t in tokens if t.type == "inline")


def _sections(path: Path) -> dict[str, list[Token]]:
    """Level-2 heading -> the tokens under it, from the parsed Markdown."""
    sections: dict[str, list[Token]] = {}
    tokens = MarkdownIt().parse(path.read_text("utf-8"))
    current: list[Token] | None = None
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            current = sections.setdefault(tokens[i + 1].content, [])
        elif current is not None:
            current.append(token)
    return sections


def test_every_measured_figure_says_date_machine_load_and_command() -> None:
    sections = _sections(MEASUREMENTS)
    figures = {title: body for title, body in sections.items() if title != "The development VM"}
    assert len(figures) >= 15
    for title, body in figures.items():
        items = []
        inside_list = 0
        for i, token in enumerate(body):
            if token.type == "bullet_list_open":
                inside_list += 1
            elif token.type == "bullet_list_close":
                inside_list -= 1
                break
            elif inside_list and token.type == "inline":
                items.append(body[i].content)
        fields = [item.partition(":**")[0].removeprefix("**") for item in items]
        values = [item.partition(":**")[2].strip() for item in items]
        assert tuple(fields[:4]) == FIELDS, (title, items)
        assert all(values[:4]), (title, items)


def test_dated_figures_live_on_the_measurements_page_only() -> None:
    dated = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
    found = [f"{p.name}: {m.group()}" for p in DOCS.glob("*.md") if p != MEASUREMENTS
             for m in dated.finditer(p.read_text("utf-8"))]
    assert not found, found
    assert dated.search(MEASUREMENTS.read_text("utf-8"))


#: The README is the front door: what pqbench is, the two commands, a few tasks each with
#: its output, links; everything else has its page in the site.
README_LINES = 300


def test_the_readme_is_the_front_door() -> None:
    """At most README_LINES lines; each task (a section between the two commands and the
    report) shows what pqbench printed in a console block; every link it makes leads to a
    file of the repository."""
    text = (REPO / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= README_LINES, len(text.splitlines())
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    titles = [s.partition("\n")[0] for s in sections]
    assert titles[0] == "Two commands" and "And the rest" in titles, titles
    tasks = [s for s in sections[1:] if not s.startswith(("A report", "And the rest",
                                                         "Documentation"))]
    assert len(tasks) >= 5, titles
    for task in tasks:
        assert "```console\n$ pqbench " in task, task.partition("\n")[0]
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) > 10
    missing = [link for link in links if not (REPO / link).is_file()]
    assert not missing, missing
    assert "pqbench publish" in text  # the site's walk-through


def test_every_command_has_its_documentation() -> None:
    """Each command of the command line is shown as `pqbench NAME` in a code block of the
    docs, and its group's page is in the site."""
    commands = {name for name, command in typer.main.get_command(app).commands.items()
                if not command.hidden}
    assert {"speed", "ab", "compare", "verify", "userland", "env", "runs"} <= commands
    code = "\n".join(t.content for p in DOCS.glob("*.md")
                     for t in MarkdownIt().parse(p.read_text("utf-8"))
                     if t.type in ("fence", "code_inline"))
    missing = sorted(name for name in commands if f"pqbench {name}" not in code)
    assert not missing, missing
    nav = (REPO / "mkdocs.yml").read_text("utf-8")
    for page in ("speed", "ab", "bisect", "compare", "history", "report", "tls", "memory",
                 "files", "verify", "userland", "env", "runs", "statistics", "os-builds",
                 "store", "security", "run-format", "architecture", "measurements"):
        assert f"{page}.md" in nav and (DOCS / f"{page}.md").is_file(), page


def _markdown_pages() -> list[Path]:
    """Every Markdown page the repository ships: the README, the site, the example reports
    and the notes beside the code."""
    pages = [REPO / "README.md", *DOCS.glob("*.md"), *(REPO / "reports").glob("*/*.md"),
             *(REPO / "pqbench").rglob("*.md")]
    return sorted(p for p in pages if "__pycache__" not in p.parts)


def _unclosed_fences(text: str) -> list[str]:
    """Each code block that swallowed what follows it: a fence line the block holds as its
    own text (a closing fence with words after it does not close: "``` Output is..."), or a
    block that runs to the end of the page."""
    lines = text.splitlines()
    found = []
    for token in MarkdownIt().parse(text):
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        opened = f"line {start + 1} ({lines[start].strip()[:40]})"
        held = [line for line in token.content.splitlines()
                if line.lstrip().startswith(token.markup)]
        closing = lines[end - 1].strip() if end - 1 > start else ""
        if held:
            found.append(f"{opened} holds {held[0].strip()[:40]!r}")
        elif not (closing.startswith(token.markup) and set(closing) == {token.markup[0]}):
            found.append(f"{opened} never closes")
    return found


def test_every_code_block_closes_where_it_is_meant_to() -> None:
    """A closing fence with text after it is not a closing fence: everything down to the
    next bare fence renders as code (docs/compare.md's gate section did, from its example
    down to the JSON fields). MkDocs builds such a page without a word."""
    pages = _markdown_pages()
    assert REPO / "docs" / "compare.md" in pages and len(pages) > 30
    broken = {str(p.relative_to(REPO)): found for p in pages
              if (found := _unclosed_fences(p.read_text("utf-8")))}
    assert broken == {}, broken


@pytest.mark.parametrize(("text", "expected"), [
    ("```sh\nx\n```\nprose\n", []),
    ("````md\n```sh\nx\n```\n````\n", []),
    ("```sh\nx\n``` Output is a table\nmore\n```\n",
     ["line 1 (```sh) holds '``` Output is a table'"]),
    ("text\n```sh\nx\n", ["line 2 (```sh) never closes"]),
    ("~~~\nx\n~~~\n", []),
])
def test_an_unclosed_fence_is_named_by_its_line(text: str, expected: list[str]) -> None:
    assert _unclosed_fences(text) == expected

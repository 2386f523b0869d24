"""The shape the architecture promises (the house in docs/architecture.md): rooms ranked
top to bottom whose imports point down the ranking only, type-only imports included; no
import circle between modules or rooms; no C file calling back into the file that calls it;
tests that share helpers through tests.helpers only; a root of at most eight modules, C
files of a few hundred lines, one number formatter, and commands that start without the
heavy libraries they do not use."""

from __future__ import annotations

import ast
import functools
import itertools
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.house import HOUSE, INNER, room, tier_of

PACKAGE = REPO / "pqbench"
TESTS = REPO / "tests"


def _module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


@functools.cache
def _nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of the source's syntax tree, parsed and walked once a session whichever
    check reads the source first (the checks read the nodes, never change them)."""
    return tuple(ast.walk(ast.parse(source)))


def _imports(nodes: Iterable[ast.AST]) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement: at module level, inside a function (lazy imports count) and
    under `if TYPE_CHECKING:` (a type the module needs is a dependency too, even if it is
    never loaded at run time)."""
    return [node for node in nodes if isinstance(node, ast.Import | ast.ImportFrom)]


def _targets(module: str, node: ast.Import | ast.ImportFrom,
             modules: Mapping[str, Path]) -> set[str]:
    """The modules of `modules` an import statement loads by name."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module if modules[module].name == "__init__.py" else \
                module.rpartition(".")[0]
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        # `from a import b` loads a.b where b is a module, else the module a.
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                 for alias in node.names]
    return {name for name in names if name in modules and name != module}


def _loaded_by_name(nodes: Iterable[ast.AST]) -> list[str]:
    """The modules a call loads by a literal name: `importlib.import_module("pqbench.x")`,
    `import_module("pqbench.x")` and `__import__("pqbench.x")` (a door through a string is a
    door too; a name computed at run time is not read)."""
    names = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else \
            func.id if isinstance(func, ast.Name) else ""
        if called in ("import_module", "__import__"):
            names.append(node.args[0].value)
    return names


def imports_of(module: str, source: str, modules: Mapping[str, Path] = MODULES) -> set[str]:
    nodes = _nodes(source)
    found = {t for node in _imports(nodes) for t in _targets(module, node, modules)}
    return found | {name for name in _loaded_by_name(nodes) if name in modules and name != module}


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(imports_of(module, path.read_text("utf-8")))
            for module, path in MODULES.items()}


def import_graph() -> dict[str, set[str]]:
    """module -> the modules it imports (read once per session; each caller gets a copy)."""
    return {module: set(targets) for module, targets in _graph().items()}


def room_graph(graph: Mapping[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """room -> room it imports -> the module imports that make the door ("a -> b")."""
    doors: dict[str, dict[str, list[str]]] = {room(m): {} for m in graph}
    for module, targets in graph.items():
        for target in targets:
            if room(module) != room(target):
                doors[room(module)].setdefault(room(target), []).append(f"{module} -> {target}")
    return doors


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every import circle: each strongly connected component of more than one node
    (Tarjan, CACM 1972 / SIAM J. Comput. 1, 1972), as one cycle through all of its nodes'
    first members, sorted, so that a report names each circle once."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = itertools.count()

    def visit(node: str) -> None:
        index[node] = low[node] = next(counter)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _path(graph: Mapping[str, Iterable[str]], members: list[str]) -> str:
    """One cycle through a component, shortest from its first member back to itself."""
    inside, start = set(members), members[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for other in sorted(graph.get(node, ())):
                if other == start:
                    return " -> ".join([*paths[node], start])
                if other in inside and other not in paths:
                    paths[other] = [*paths[node], other]
                    nxt.append(other)
        frontier = nxt
    return " <-> ".join(members)


def test_the_import_graph_is_read_whole() -> None:
    """The graph sees lazy imports, relative imports, `from package import module` and
    imports under `if TYPE_CHECKING:`."""
    graph = import_graph()
    assert "pqbench.cli" in graph["pqbench.__main__"]
    # a lazy import
    assert "pqbench.libraries.implementations.native" in graph["pqbench.libraries.implementations"]
    assert "pqbench.app.compare" in graph["pqbench.cli.compare"]  # inside the command
    assert len(graph) > 100
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from pqbench.analysis.stats import Step\n"
              "def f():\n    from . import codec\n")
    assert imports_of("pqbench.data.record.results", source) == {"pqbench.analysis.stats",
                                                              "pqbench.data.record.codec"}


def test_the_circle_finder_names_every_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "f"}, "f": set()}
    assert circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert _path(graph, ["a", "b", "c"]) == "a -> b -> c -> a"
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_between_modules() -> None:
    """No module imports (at load time, later from a function, or for its type hints) a
    module that imports it back, directly or around a longer circle."""
    graph = import_graph()
    found = [_path(graph, c) for c in circles(graph)]
    assert not found, "import circles:\n" + "\n".join(found)


def test_a_planted_circle_is_named() -> None:
    """verdict importing compare back, even lazily from a function, closes a circle through
    the modules compare reaches verdict by; the report names its shortest path."""
    graph = import_graph()
    graph["pqbench.analysis.verdict"] |= imports_of(
        "pqbench.analysis.verdict", "def judge():\n    from . import compare\n")
    assert [_path(graph, c) for c in circles(graph)] == [
        "pqbench.analysis.compare -> pqbench.analysis.verdict -> pqbench.analysis.compare"]


def test_no_import_circle_between_rooms() -> None:
    """Rooms form no circle either: when `a` imports from `b`, nothing in `b` imports from
    `a`, directly or through other rooms. Each circle is reported with its doors."""
    doors = room_graph(import_graph())
    graph = {r: set(targets) for r, targets in doors.items()}
    report = []
    for members in circles(graph):
        path = _path(graph, members)
        report.append(f"{path}  (rooms in the circle: {', '.join(members)})")
        hops = path.split(" -> ")
        report += [f"    {door}" for a, b in itertools.pairwise(hops)
                   for door in sorted(doors[a][b])]
    assert not report, "circles between rooms:\n" + "\n".join(report)


PACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py"}


def inner_room(module: str, packages: Iterable[str] = PACKAGES) -> str:
    """The room within its room a module lives in: the package below its room
    (`pqbench.measure.tls.grid` is in `tls`), or "" for a module loose in the room."""
    parts = module.split(".")
    if len(parts) > 3 or (len(parts) == 3 and ".".join(parts) in set(packages)):
        return parts[2]
    return ""


def _judge(door: str, here: str, there: str, house: tuple[tuple[str, ...], ...],
           where: str) -> str | None:
    tiers = tier_of(house)
    if here not in tiers or there not in tiers:
        unranked = ", ".join(r if r else repr(r) for r in (here, there) if r not in tiers)
        return f"{door}: {unranked} not ranked in {where}"
    if tiers[there] < tiers[here]:
        return f"{door}: {here or where} imports {there or where}, which is above it"
    if tiers[there] == tiers[here]:
        return f"{door}: {here or where} imports {there or where}, beside it in one tier"
    return None


def wrong_doors(graph: Mapping[str, Iterable[str]],
                house: tuple[tuple[str, ...], ...] = HOUSE,
                inner: Mapping[str, tuple[tuple[str, ...], ...]] = INNER) -> list[str]:
    """Every import that points up the house or sideways between two rooms of one tier, as
    "importer -> imported: why", between rooms and, within a room of `inner`, between its
    rooms; an import from or to a room the house does not rank is reported too, so that a
    new room is ranked before it is used."""
    packages = PACKAGES | {m for m in graph if m.count(".") == 2 and any(
        other.startswith(m + ".") for other in graph)}
    found = []
    for module, targets in graph.items():
        here = room(module)
        for target in sorted(targets):
            there = room(target)
            door = f"{module} -> {target}"
            if here != there:
                judged = _judge(door, here, there, house, "HOUSE")
            elif here in inner:
                a, b = inner_room(module, packages), inner_room(target, packages)
                judged = None if a == b else _judge(door, a, b, inner[here], here)
            else:
                judged = None
            if judged is not None:
                found.append(judged)
    return sorted(found)


def _door(report: str) -> str:
    return report.partition(":")[0]


def test_every_room_is_ranked_once() -> None:
    ranked = [r for tier in HOUSE for r in tier]
    assert len(ranked) == len(set(ranked)), ranked
    rooms = {room(m) for m in MODULES}
    assert not rooms - set(ranked), f"rooms missing from HOUSE: {sorted(rooms - set(ranked))}"
    for name, house in INNER.items():
        ranked = [r for tier in house for r in tier]
        assert len(ranked) == len(set(ranked)), (name, ranked)
        inside = {inner_room(m) for m in MODULES if room(m) == name}
        assert not inside - set(ranked), f"rooms of {name} not ranked: {inside - set(ranked)}"


def test_at_most_twelve_rooms() -> None:
    """The house has at most twelve rooms (packages) below the root, beside the entry
    points and the version; a newcomer finds each concept in one of them."""
    rooms = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert len(rooms) <= 12, rooms


def test_doors_open_one_way() -> None:
    """Every import of every module (at load time, inside a function, under
    `if TYPE_CHECKING:`) points down the house."""
    found = wrong_doors(import_graph())
    assert not found, "imports that point the wrong way:\n" + "\n".join(found)


def _planted(module: str, source: str) -> list[str]:
    """The wrong doors of the real graph with `source` added to `module` (which may be a
    module that does not exist yet)."""
    modules = {**MODULES, module: PACKAGE / "planted.py"}
    graph = {m: set(t) for m, t in import_graph().items()}
    graph.setdefault(module, set()).update(imports_of(module, source, modules))
    return wrong_doors(graph)


#: One planted import per kind of wrong door: a module, the source planted into it, and the
#: import the report must name. Load-time, lazy, relative and type-only imports all count.
PLANTED = [
    # the round type's room importing the loops
    ("pqbench.data.record.results", "from pqbench.timing.loop import run",
     "pqbench.data.record.results -> pqbench.timing.loop"),
    # a verdict reaching up into a measuring room, from inside a function
    ("pqbench.analysis.compare", "def f():\n    from pqbench.measure.memory.runner import run\n",
     "pqbench.analysis.compare -> pqbench.measure.memory.runner"),
    # analysis reading the speed suite's masks for a type hint only
    ("pqbench.analysis.explain",
     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
     "    from pqbench.measure.speed.suite import SpeedSettings\n",
     "pqbench.analysis.explain -> pqbench.measure.speed.suite"),
    # an implementation importing the checks that use it
    ("pqbench.libraries.implementations.base", "from pqbench.measure.checks import pair",
     "pqbench.libraries.implementations.base -> pqbench.measure.checks.pair"),
    # two rooms of one tier: the checks and the machine's fingerprint
    ("pqbench.measure.checks.kat", "import pqbench.measure.environment",
     "pqbench.measure.checks.kat -> pqbench.measure.environment"),
    # the statistics reading this machine's fingerprint where it is taken
    ("pqbench.analysis.explain", "from pqbench.measure import environment",
     "pqbench.analysis.explain -> pqbench.measure.environment"),
    # a use case rendering its answer, and the statistics reaching up for a decision
    ("pqbench.app.history", "from pqbench.views import console",
     "pqbench.app.history -> pqbench.views.console"),
    ("pqbench.analysis.history", "from pqbench.app import identity",
     "pqbench.analysis.history -> pqbench.app.identity"),
    # the store deciding which runs are one machine
    ("pqbench.data.store.selection", "from pqbench.app.identity import machine_of",
     "pqbench.data.store.selection -> pqbench.app.identity"),
    # within a room: the record importing the store that keeps it
    ("pqbench.data.record.runs", "from pqbench.data.store import queries",
     "pqbench.data.record.runs -> pqbench.data.store.queries"),
    # one measuring room importing another of its tier
    ("pqbench.measure.tls.grid", "from pqbench.measure.files import stream",
     "pqbench.measure.tls.grid -> pqbench.measure.files.stream"),
    # the domain rendering, and rendering reaching into the commands
    ("pqbench.sessions.bisect.search", "from pqbench.views import console",
     "pqbench.sessions.bisect.search -> pqbench.views.console"),
    ("pqbench.views.tables", "from pqbench.cli import common",
     "pqbench.views.tables -> pqbench.cli.common"),
    # a low room printing through the views, by a relative import
    ("pqbench.libraries.liboqs.compiling", "from ...views import console",
     "pqbench.libraries.liboqs.compiling -> pqbench.views.console"),
    # ab importing bisect, which drives it
    ("pqbench.sessions.sides", "from pqbench.sessions.bisect import runner",
     "pqbench.sessions.sides -> pqbench.sessions.bisect.runner"),
    # the foreign-language workers' room importing the adapters above it
    ("pqbench.libraries.stacks.client", "from pqbench.libraries.implementations import base",
     "pqbench.libraries.stacks.client -> pqbench.libraries.implementations.base"),
    # the store computing a statistic
    ("pqbench.data.store.queries", "from pqbench.analysis.stats import median",
     "pqbench.data.store.queries -> pqbench.analysis.stats"),
    # the same doors in every other spelling of an import: `import a.b`, `import a.b as c`,
    # a relative import two and three levels up, `from .. import room`, an import inside a
    # method, and a module loaded by its name as a string
    ("pqbench.data.record.codec", "import pqbench.timing.loop",
     "pqbench.data.record.codec -> pqbench.timing.loop"),
    ("pqbench.data.record.codec", "import pqbench.timing.multi as multi",
     "pqbench.data.record.codec -> pqbench.timing.multi"),
    ("pqbench.analysis.rows", "from ..measure.memory import runner",
     "pqbench.analysis.rows -> pqbench.measure.memory.runner"),
    ("pqbench.analysis.news.model", "from ...measure.speed.mask import build",
     "pqbench.analysis.news.model -> pqbench.measure.speed.mask"),
    ("pqbench.views.tables", "from .. import cli",
     "pqbench.views.tables -> pqbench.cli"),
    ("pqbench.libraries.implementations.native",
     "class Native:\n    def verify(self):\n        import pqbench.measure.checks.kat\n",
     "pqbench.libraries.implementations.native -> pqbench.measure.checks.kat"),
    ("pqbench.data.record.codec",
     "import importlib\ndef show():\n    importlib.import_module('pqbench.views.console')\n",
     "pqbench.data.record.codec -> pqbench.views.console"),
    ("pqbench.timing.loop", "__import__('pqbench.data.record.memory')\n"
     "from importlib import import_module\nimport_module('pqbench.measure.memory.runner')\n",
     "pqbench.timing.loop -> pqbench.measure.memory.runner"),
    # analysis using what a command computes: the domain work belongs below the commands
    ("pqbench.analysis.compare", "from pqbench.cli.compare import compare",
     "pqbench.analysis.compare -> pqbench.cli.compare"),
    # ab reaching up into bisect for the builds both use (they live in sides, below both)
    ("pqbench.sessions.ab.session", "from pqbench.sessions.bisect.series import parse",
     "pqbench.sessions.ab.session -> pqbench.sessions.bisect.series"),
    # capability tables are data: algorithms reading them back from the speed room
    ("pqbench.catalog.algorithms.capabilities", "from pqbench.measure.speed import mask",
     "pqbench.catalog.algorithms.capabilities -> pqbench.measure.speed.mask"),
]


@pytest.mark.parametrize(("module", "source", "door"), PLANTED, ids=[p[2] for p in PLANTED])
def test_a_planted_wrong_door_is_named(module: str, source: str, door: str) -> None:
    found = _planted(module, source)
    assert [_door(w) for w in found] == [door], found


def test_a_planted_import_of_an_unranked_room_is_named() -> None:
    found = _planted("pqbench.ghost.thing", "from pqbench.data.record import results")
    assert found == [
        "pqbench.ghost.thing -> pqbench.data.record.results: ghost not ranked in HOUSE"]


def test_a_planted_downward_import_is_allowed() -> None:
    assert _planted("pqbench.libraries.stacks.client",
                    "from pqbench.data.record import results") == []
    assert _planted("pqbench.cli.speed", "from pqbench.catalog.algorithms import base") == []


def test_the_door_check_sees_a_type_only_import() -> None:
    """A type hint from a room above counts: a record module importing a stats type under
    TYPE_CHECKING is reported."""
    graph = {"pqbench.data.record.results": imports_of(
        "pqbench.data.record.results",
        "if TYPE_CHECKING:\n    from pqbench.analysis.stats import Step\n")}
    assert [_door(w) for w in wrong_doors(graph)] == [
        "pqbench.data.record.results -> pqbench.analysis.stats"]


def prints(source: str) -> list[int]:
    """The lines of `source` that print: print(), sys.stdout.write, sys.stderr.write,
    typer's and click's echo and secho, and print handed on as a value (`log=print` prints
    from wherever `log` is called; `rich.print` is a print too)."""
    def stream_write(node: ast.AST) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "write"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr in ("stdout", "stderr")
                and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id == "sys")

    def echo(node: ast.AST) -> bool:
        called = node.func if isinstance(node, ast.Call) else None
        return (isinstance(called, ast.Attribute) and called.attr in ("echo", "secho")
                and isinstance(called.value, ast.Name) and called.value.id in ("typer", "click"))

    return sorted({node.lineno for node in _nodes(source)
                   if (isinstance(node, ast.Name) and node.id == "print")
                   or (isinstance(node, ast.Attribute) and node.attr == "print"
                       and isinstance(node.value, ast.Name) and node.value.id == "rich")
                   or (isinstance(node, ast.alias) and node.name == "print")
                   or stream_write(node) or echo(node)})


def printing_outside_views(sources: Mapping[str, str]) -> list[str]:
    """module -> source in, "module:line" out for every line that prints outside views/.
    A process entry (`pqbench/__main__.py`, a room's `__main__.py` such as `python -m
    pqbench.libraries.liboqs`) writes its answer itself."""
    return [f"{module}:{line}" for module, source in sorted(sources.items())
            if room(module) != "views" and not module.endswith("__main__")
            for line in prints(source)]


def test_only_views_print() -> None:
    """Output leaves through views (console.py): the commands render through it, and a room
    below reports progress through logging (shown by `console.show_progress`)."""
    printing = printing_outside_views(
        {module: path.read_text("utf-8") for module, path in MODULES.items()})
    assert not printing, "modules outside views that print:\n" + "\n".join(printing)


def store_readers(graph: Mapping[str, Iterable[str]], room_name: str) -> list[str]:
    """The imports by which a room reaches the store (`pqbench.data.store`)."""
    return sorted(f"{module} -> {target}" for module, targets in graph.items()
                  if room(module) == room_name for target in targets
                  if target == "pqbench.data.store" or target.startswith("pqbench.data.store."))


def test_analysis_reads_no_store() -> None:
    """The statistics work on what they are given: which runs a question needs, and reading
    them, is the application layer's (`app/`), not the analysis's (type hints included)."""
    found = store_readers(import_graph(), "analysis")
    assert not found, "analysis modules that reach the store:\n" + "\n".join(found)


def test_a_planted_store_read_in_the_analysis_is_named() -> None:
    graph = import_graph()
    graph["pqbench.analysis.noise"] |= imports_of(
        "pqbench.analysis.noise", "def learn():\n    from pqbench.data.store import selection\n")
    assert store_readers(graph, "analysis") == [
        "pqbench.analysis.noise -> pqbench.data.store.selection"]


def test_the_print_check_sees_print_and_stream_writes() -> None:
    source = ('import sys\nprint("x")\ndef f():\n    sys.stderr.write("y")\n'
              'log = print\nlogger.info("z")\nconsole.print("w")\ntyper.echo("v")\n'
              'click.secho("u")\nrich.print("t")\nfrom rich import print as show\n'
              'console.write("s")\n')
    assert prints(source) == [2, 4, 5, 8, 9, 10, 11]


#: Printing planted outside views: (module, source, what the report names).
PLANTED_PRINTS = [
    # a build reporting its progress with print() to stderr
    ("pqbench.libraries.liboqs.compiling",
     "import sys\ndef log_to_stderr(message):\n    print(message, file=sys.stderr)\n",
     ["pqbench.libraries.liboqs.compiling:3"]),
    # a userland setup writing to the stream itself
    ("pqbench.libraries.userland", "import sys\nsys.stdout.write('ready')\n",
     ["pqbench.libraries.userland:2"]),
    # the pip builds handing print on as their log
    ("pqbench.sessions.sides.pip", "def build(log=print):\n    log('building')\n",
     ["pqbench.sessions.sides.pip:1"]),
    # a verdict printed by the analysis that reaches it
    ("pqbench.analysis.verdict", "def judge():\n    print('faster')\n",
     ["pqbench.analysis.verdict:2"]),
    # a command printing its table itself instead of rendering it through views
    ("pqbench.cli.speed", "print('table')\n", ["pqbench.cli.speed:1"]),
    # the version echoed by typer rather than written through views
    ("pqbench.cli.root", "import typer\ntyper.echo('pqbench 1.0')\n", ["pqbench.cli.root:2"]),
    # views render; a process entry writes its answer
    ("pqbench.views.console", "print('table')\n", []),
    ("pqbench.__main__", "import sys\nsys.stderr.write('error: interrupted')\n", []),
    ("pqbench.libraries.liboqs.__main__", "print('/usr/lib/liboqs.so')\n", []),
]


@pytest.mark.parametrize(("module", "source", "named"), PLANTED_PRINTS,
                         ids=[p[0] for p in PLANTED_PRINTS])
def test_a_planted_print_outside_views_is_named(module: str, source: str,
                                                      named: list[str]) -> None:
    assert printing_outside_views({module: source}) == named


_DRAWING_ROOM = re.compile(r"(\S+)/|(\S+)\.py")


def drawn_house(text: str) -> tuple[tuple[tuple[str, ...], ...],
                                    dict[str, tuple[tuple[str, ...], ...]]]:
    """The tiers the first drawing of docs/architecture.md shows, and the tiers drawn
    indented under a room (its inner rooms): each line of the code block names its rooms
    first (`cli/`, `errors.py`; `*.py` for the modules loose in the room above), then says
    what they do."""
    block = text.split("```", 2)[1]
    tiers: list[tuple[str, ...]] = []
    inner: dict[str, list[tuple[str, ...]]] = {}
    for line in block.splitlines()[1:]:
        rooms = []
        for word in line.split():
            found = _DRAWING_ROOM.fullmatch(word)
            if not found:
                break
            name = found.group(1) or found.group(2)
            rooms.append({"__init__": "pqbench", "*": ""}.get(name, name))
        if not rooms:
            continue
        if line[:1].isspace() and tiers:
            inner.setdefault(tiers[-1][0], []).append(tuple(rooms))
        else:
            tiers.append(tuple(rooms))
    return tuple(tiers), {name: tuple(found) for name, found in inner.items()}


def test_the_drawing_in_the_docs_is_the_house() -> None:
    """docs/architecture.md draws the house this file enforces, tier by tier, and the rooms
    within each room in their order."""
    drawn, inner = drawn_house((REPO / "docs" / "architecture.md").read_text("utf-8"))
    assert [sorted(t) for t in drawn] == [sorted(t) for t in HOUSE]
    assert {name: [sorted(t) for t in tiers] for name, tiers in inner.items()} == \
        {name: [sorted(t) for t in tiers] for name, tiers in INNER.items()}


def test_the_drawing_reader_sees_inner_rooms() -> None:
    text = ("```\nhouse\ncli/   commands\nmeasure/   what is measured\n"
            "    speed/ tls/   two rooms\n    *.py   its own modules\nerrors.py  the floor\n```")
    assert drawn_house(text) == ((("cli",), ("measure",), ("errors",)),
                                 {"measure": (("speed", "tls"), ("",))})


# --- C files --------------------------------------------------------------------------------

_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_C_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
#: A function definition with external linkage: a line starting with its return type (not
#: `static`), the name, the parameters, then the opening brace.
_C_DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][^\n;{}()=#]*?\b(\w+)\s*\([^;{}]*\)\s*\{",
                           re.M)


def _c_text(path: Path) -> str:
    return _C_STRING.sub('""', _C_COMMENT.sub(" ", path.read_text("utf-8")))


def c_call_graph(directory: Path) -> dict[str, set[str]]:
    """file -> the files of the same extension (directory) whose functions it names: calls,
    and functions taken as pointers (an op handed to the timed loop)."""
    files = sorted(directory.glob("*.c"))
    defined = {name: f.name for f in files for name in _C_DEFINITION.findall(_c_text(f))}
    return {f.name: {defined[word] for word in set(re.findall(r"\b\w+\b", _c_text(f)))
                     if word in defined and defined[word] != f.name}
            for f in files}


def test_no_c_file_calls_back_into_the_file_that_calls_it() -> None:
    """Within one extension, calls point one way: module.c over the concerns, each concern
    over loop.c; a file never calls a function of a file that calls it."""
    report = []
    for directory in sorted({p.parent for p in PACKAGE.rglob("*.c")}):
        graph = c_call_graph(directory)
        report += [f"{directory.relative_to(PACKAGE)}: {_path(graph, c)}"
                   for c in circles(graph)]
    assert not report, "C files calling each other:\n" + "\n".join(report)


def test_the_c_call_graph_is_read() -> None:
    graph = c_call_graph(PACKAGE / "timing" / "csrc")
    assert {"pk.c", "loop.c", "oqs.c", "evp.c"} <= graph["module.c"]
    assert "pk_pq.c" in graph["pk.c"]  # pk_prepare hands ML-KEM and ML-DSA on
    assert graph["loop.c"] == set()


# --- tests ----------------------------------------------------------------------------------


def test_test_files_share_helpers_only_through_tests_helpers() -> None:
    """A test file never imports from another test file or from conftest.py: fixtures come
    from conftest by name, helpers from tests.helpers."""
    modules = {_module_name(p, TESTS.parent): p for p in TESTS.rglob("*.py")}
    wrong = sorted(f"{module} -> {target}" for module, path in modules.items()
                   for target in imports_of(module, path.read_text("utf-8"), modules)
                   if target.rpartition(".")[2].startswith("test_")
                   or target.rpartition(".")[2] == "conftest")
    assert {"tests.measure.tls.test_grid", "tests.project.test_architecture"} <= set(modules)
    assert len(modules) > 50
    assert not wrong, "\n".join(wrong)


#: Folders of tests/ that test no single room: attacks on several rooms at once, and checks
#: of the whole project (the house, the docs site, the wheel, a new user's story).
CROSS_CUTTING = {"hostile", "project"}
#: Folders of tests/ that hold no test file.
NOT_TESTS = {"helpers", "slow_worker"}
#: Test files allowed flat at the top of tests/: none (conftest.py serves every folder).
TOP_LEVEL: set[str] = set()


def test_test_files_are_grouped_the_way_the_package_is() -> None:
    """Each test file sits in the folder that mirrors the pqbench package it tests
    (tests/measure/tls/ for pqbench/measure/tls/, tests/analysis/ for pqbench/analysis/), or
    in a declared cross-cutting group; each folder is a package, so two folders may each
    hold a test_cli.py."""
    packages = {p.relative_to(PACKAGE).parts for p in PACKAGE.rglob("__init__.py")
                if p.parent != PACKAGE}
    packages = {tuple(parts[:-1]) for parts in packages}
    files = sorted(TESTS.rglob("test_*.py"))
    misplaced = [str(p.relative_to(TESTS)) for p in files
                 if (p.parent == TESTS and p.name not in TOP_LEVEL)
                 or (p.parent != TESTS
                     and p.parent.relative_to(TESTS).parts not in packages
                     and p.parent.relative_to(TESTS).parts[0] not in CROSS_CUTTING)]
    folders = {f for p in files for f in p.parents if TESTS in f.parents}
    not_packages = sorted(str(f.relative_to(TESTS)) for f in folders
                          if not (f / "__init__.py").is_file())
    assert {("measure", "tls"), ("data", "store"), ("analysis",), ("cli",)} <= packages
    assert len(files) > 50
    assert not misplaced, f"not in a package's folder or a declared group: {misplaced}"
    assert not not_packages, f"test folders without __init__.py: {not_packages}"
    rooms = {parts[0] for parts in packages}
    unknown = sorted(p.name for p in TESTS.iterdir() if p.is_dir() and p.name[0] not in "._"
                     and p.name not in rooms | CROSS_CUTTING | NOT_TESTS | {"__pycache__"})
    assert not unknown, f"folders of tests/ that name no room or group: {unknown}"


def test_at_most_eight_modules_loose_at_the_root() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(loose) <= 8, loose


def test_no_c_file_over_seven_hundred_lines() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text("utf-8").splitlines())
             for p in (*PACKAGE.rglob("*.c"), *PACKAGE.rglob("*.h"))}
    assert sizes
    assert max(sizes.values()) <= 700, sizes


#: A number format spec in an f-string (":.3g", ":,", ":.0%", ":g") or an SI prefix table.
_NUMBER_FORMAT = re.compile(r"\{[^{}]*:[+ ]?[,_]?(\.\d+)?[,_]?[egf%]?\}|:,\}")
_SI_TABLE = re.compile(r"\(1e[369], \"[kMG]\"\)|\bkB\b")


def _lines(paths: list[Path]) -> list[tuple[str, str]]:
    return [(f"{p.relative_to(PACKAGE)}:{n}", line.strip()) for p in paths
            if p != PACKAGE / "views" / "numbers.py"
            for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)]


def test_one_number_formatter() -> None:
    """Every figure a table, report or chart shows goes through `views.numbers`: the
    rooms that render hold no format spec of their own, and no SI table exists elsewhere.
    (Sentences the analysis writes, such as a verdict's reason, keep their own wording.)"""
    rendering = list((PACKAGE / "views").rglob("*.py"))
    specs = [f"{where}: {line}" for where, line in _lines(rendering)
             if _NUMBER_FORMAT.search(line.replace("{{", "").replace("}}", ""))]
    tables = [f"{where}: {line}" for where, line in _lines(list(PACKAGE.rglob("*.py")))
              if _SI_TABLE.search(line)]
    assert not specs and not tables, "\n".join(specs + tables)


def test_the_formatter_check_finds_a_format_spec() -> None:
    assert _NUMBER_FORMAT.search('f"{value:.3g}x"') and _NUMBER_FORMAT.search('f"{n:,} B"')
    assert _NUMBER_FORMAT.search('f"±{band * 100:g} %"')
    assert not _NUMBER_FORMAT.search('f"{name} [{impl}]"')
    assert _SI_TABLE.search('((1e6, "M"), (1e3, "k"))')


#: Runs pqbench's `python -m pqbench` entry in-process and writes the modules it loaded.
_PROBE = """
import json, runpy, sys
out, sys.argv = sys.argv[1], ["pqbench", *sys.argv[2:]]
try:
    runpy.run_module("pqbench", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else 1
with open(out, "w") as f:
    json.dump({"code": code, "modules": sorted(m.partition(".")[0] for m in sys.modules)}, f)
"""

#: Libraries a command that shows no figure must not load at start-up.
HEAVY = ("scipy", "numpy", "matplotlib")


def _loaded(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", _PROBE, str(out), *args], capture_output=True,
                          text=True, timeout=300, check=False)
    assert out.exists(), done.stderr
    found = json.loads(out.read_text())
    return found["code"], set(found["modules"])


@pytest.mark.process
@pytest.mark.parametrize("args", [("--help",), ("env",), ("runs",), ("speed", "--help")],
                         ids=" ".join)
def test_commands_without_figures_start_without_the_heavy_libraries(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    from pqbench.data.store import Store

    db = tmp_path / "results.db"
    Store.open(str(db)).close()
    code, modules = _loaded(tmp_path, *args, *(("--db", str(db)) if args == ("runs",) else ()))
    assert code == 0
    assert "pqbench" in modules and "typer" in modules
    # The command list needs no record and no database: not even the validation models
    # or SQLAlchemy load for it.
    heavy = {*HEAVY, *(("pydantic", "sqlalchemy") if args == ("--help",) else ())}
    assert not modules & heavy, sorted(modules & heavy)


@pytest.mark.process
def test_the_probe_sees_a_heavy_library_where_a_command_uses_it(tmp_path: Path) -> None:
    """A speed run of five rounds summarizes them with numpy (its trend check too,
    Spearman's rho in numpy) and stores them through SQLAlchemy: the probe must see both."""
    code, modules = _loaded(tmp_path, "speed", "sha256", "-i", "python", "--seconds", "0.02",
                            "--rounds", "5", "--db", str(tmp_path / "r.db"))
    assert code == 0
    assert {"numpy", "sqlalchemy"} <= modules


# --- thin commands --------------------------------------------------------------------------

#: The most lines a command's body may take after its signature and docstring: parse the
#: options, call one use case (`pqbench/app/`), render its answer through views.
COMMAND_LINES = 25

def command_bodies(module: str, source: str) -> dict[str, int]:
    """"module.function" -> the lines of its body after the docstring, for every function
    typer registers: decorated with `APP.command(...)` or `APP.callback(...)`."""
    found = {}
    for node in _nodes(source):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                and d.func.attr in ("command", "callback") for d in node.decorator_list):
            continue
        body = node.body
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        last = body[-1].end_lineno if body else None
        found[f"{module}.{node.name}"] = (last - body[0].lineno + 1) if last else 0
    return found


def test_command_bodies_fit_on_a_screen() -> None:
    """Every command parses, calls one use case and renders: its body (after the signature
    and the docstring) takes at most COMMAND_LINES lines, every one of them."""
    bodies = {name: lines for module, path in MODULES.items() if room(module) == "cli"
              for name, lines in command_bodies(module, path.read_text("utf-8")).items()}
    assert len(bodies) > 20, sorted(bodies)
    over = {name: lines for name, lines in bodies.items() if lines > COMMAND_LINES}
    assert not over, f"command bodies over {COMMAND_LINES} lines: {over}"


def test_a_planted_long_command_is_measured() -> None:
    """A docstring is not counted; blank lines and comments inside the body are."""
    body = "\n".join(f"    x{i} = {i}" for i in range(24))
    source = (f'@app.command()\n@handles_errors\ndef long(\n    a: int = 1,\n) -> None:\n'
              f'    """Help.\n\n    More help."""\n{body}\n\n    # why\n    return\n'
              f'def helper() -> None:\n{body}\n    y = 1\n    z = 2\n'
              f'@sub.callback()\ndef root() -> None:\n    """Only help."""\n')
    assert command_bodies("pqbench.cli.x", source) == {"pqbench.cli.x.long": 27,
                                                       "pqbench.cli.x.root": 0}

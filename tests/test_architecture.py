"""The shape the architecture promises (issue #11): no import circle, a root of at most eight
modules, C files of a few hundred lines, one number formatter, and commands that start
without the heavy libraries they do not use."""

from __future__ import annotations

import ast
import graphlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pqbench"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking_only(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` blocks never run: what they import is an annotation, not an
    import (with `from __future__ import annotations` nothing evaluates it)."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at module level or inside a function (lazy imports count),
    except those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not _type_checking_only(child))
    return found


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The pqbench modules an import statement loads by name."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module if MODULES[module].name == "__init__.py" else \
                module.rpartition(".")[0]
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        # `from a import b` loads a.b where b is a module, else the module a.
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                 for alias in node.names]
    return {name for name in names if name in MODULES and name != module}


def import_graph() -> dict[str, set[str]]:
    return {module: {t for node in _imports(ast.parse(path.read_text("utf-8")))
                     for t in _targets(module, node)}
            for module, path in MODULES.items()}


def test_the_import_graph_is_read_whole() -> None:
    """The graph sees lazy imports, relative imports and `from package import module`."""
    graph = import_graph()
    assert "pqbench.cli" in graph["pqbench.__main__"]
    assert "pqbench.implementations.native" in graph["pqbench.implementations"]  # lazy
    assert "pqbench.analysis.compare" in graph["pqbench.cli.compare"]
    assert len(graph) > 100


def test_no_import_circle() -> None:
    """No module imports, at load time or later from a function, a module that imports it
    back (the `kat` <-> `verify` circle of issue #11 and its like)."""
    try:
        order = tuple(graphlib.TopologicalSorter(import_graph()).static_order())
    except graphlib.CycleError as circle:
        pytest.fail(f"import circle: {' -> '.join(circle.args[1])}")
    assert len(order) == len(MODULES)


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
            if p != PACKAGE / "presentation" / "numbers.py"
            for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)]


def test_one_number_formatter() -> None:
    """Every figure a table, report or chart shows goes through `presentation.numbers`: the
    rooms that render hold no format spec of their own, and no SI table exists elsewhere.
    (Sentences the analysis writes, such as a verdict's reason, keep their own wording.)"""
    rendering = [*(PACKAGE / "presentation").rglob("*.py"), *(PACKAGE / "report").rglob("*.py")]
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


@pytest.mark.parametrize("args", [("--help",), ("env",), ("runs",), ("speed", "--help")],
                         ids=" ".join)
def test_commands_without_figures_start_without_the_heavy_libraries(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    from pqbench.store import Store

    db = tmp_path / "results.db"
    Store.open(str(db)).close()
    code, modules = _loaded(tmp_path, *args, *(("--db", str(db)) if args == ("runs",) else ()))
    assert code == 0
    assert "pqbench" in modules and "typer" in modules
    # The command list needs no record and no database: not even the validation models
    # or SQLAlchemy load for it.
    heavy = {*HEAVY, *(("pydantic", "sqlalchemy") if args == ("--help",) else ())}
    assert not modules & heavy, sorted(modules & heavy)


def test_the_probe_sees_a_heavy_library_where_a_command_uses_it(tmp_path: Path) -> None:
    """A speed run of five rounds summarizes them with numpy and checks them for a trend
    (Spearman's rho, scipy): the probe must see both."""
    code, modules = _loaded(tmp_path, "speed", "sha256", "-i", "python", "--seconds", "0.02",
                            "--rounds", "5", "--db", str(tmp_path / "r.db"))
    assert code == 0
    assert {"numpy", "scipy", "sqlalchemy"} <= modules

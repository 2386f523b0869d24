"""`python -m pqbench.userland`: build, inspect and enter another OS userland.

Progress goes to stderr; stdout carries only the answer. Commands:

  build NAME          build or reuse NAME, refresh its pqbench; print where it is
  status [NAME]       what is built, what is inside, which container engines run
  prefix NAME         the command that starts NAME's pqbench (append `worker`, `speed` ...)
  run NAME -- CMD...  run CMD inside NAME (with /proc, /dev, /sys and the caches mounted)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from pqbench.errors import PqbenchError, UsageError
from pqbench.userland import RECIPES, container_engines, ensure, find
from pqbench.userland.chroot import enter, entry_argv
from pqbench.userland.recipe import recipe, root_of


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pqbench.userland", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build or reuse a userland, refresh its pqbench")
    build.add_argument("name", choices=sorted(RECIPES))
    build.add_argument("--json", action="store_true", help="print the manifests as JSON")
    status = commands.add_parser("status", help="what is built and which engines run")
    status.add_argument("name", nargs="?", choices=sorted(RECIPES))
    status.add_argument("--json", action="store_true", help="print JSON")
    prefix = commands.add_parser("prefix", help="the command that starts a userland's pqbench")
    prefix.add_argument("name", choices=sorted(RECIPES))
    prefix.add_argument("--json", action="store_true", help="print the argv as a JSON list")
    run = commands.add_parser("run", help="run a command inside a built userland")
    run.add_argument("name", choices=sorted(RECIPES))
    run.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    enter_ = commands.add_parser("_enter")  # internal: the far side of `unshare --mount`
    enter_.add_argument("root", type=Path)
    enter_.add_argument("--cwd", default="/")
    enter_.add_argument("--host-namespace", required=True)
    enter_.add_argument("argv", nargs=argparse.REMAINDER)
    return parser


def _command(argv: list[str]) -> list[str]:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        raise UsageError("no command given: ... run NAME -- COMMAND [ARGS...]")
    return command


def _status(names: list[str]) -> dict[str, object]:
    userlands: dict[str, object] = {}
    for name in names:
        try:
            built = find(name)
            userlands[name] = {"root": str(built.root), "base": built.base,
                               "install": {k: v for k, v in built.install.items()
                                           if k != "files"}}
        except PqbenchError as exc:
            userlands[name] = {"root": str(root_of(recipe(name))), "built": False,
                               "reason": str(exc)}
    return {"userlands": userlands, "container_engines": container_engines() or
            "none installed"}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "_enter":
            enter(args.root, _command(args.argv), args.cwd, args.host_namespace)
        if args.command == "run":
            entry = entry_argv(find(args.name).root, _command(args.argv))
            os.execvp(entry[0], entry)
        if args.command == "build":
            built = ensure(args.name)
            print(json.dumps({"root": str(built.root), "base": built.base}, indent=2)
                  if args.json else built.root)
        elif args.command == "prefix":
            prefix = find(args.name).command_prefix()
            print(json.dumps(prefix) if args.json else shlex.join(prefix))
        elif args.command == "status":
            report = _status([args.name] if args.name else sorted(RECIPES))
            print(json.dumps(report, indent=2, default=str) if args.json
                  else _status_text(report))
    except PqbenchError as exc:
        print(f"pqbench.userland: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("pqbench.userland: interrupted", file=sys.stderr)
        return 130
    return 0


def _status_text(report: dict[str, object]) -> str:
    lines = []
    userlands = report["userlands"]
    assert isinstance(userlands, dict)
    for name, info in userlands.items():
        if info.get("built") is False:
            lines.append(f"{name}: not built ({info['root']})")
            continue
        base, install = info["base"], info["install"]
        lines.append(f"{name}: {info['root']}")
        lines.append(f"  base: {base.get('suite')} {base.get('arch')} from "
                     f"{base.get('mirror')}, built {base.get('built_at')} in "
                     f"{base.get('build_seconds')} s")
        lines.append(f"  pqbench: from {install.get('source')}, set up "
                     f"{install.get('installed_at')} in {install.get('install_seconds')} s")
    engines = report["container_engines"]
    if isinstance(engines, dict):
        lines.extend(f"container engine {k}: {v}" for k, v in engines.items())
    else:
        lines.append(f"container engines: {engines}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

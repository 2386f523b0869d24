"""`pqbench userland`: another OS userland on this machine, to measure the next OS release.

Thin commands over `pqbench.libraries.userland`: build (or reuse) a Debian 13 userland, see what is
built, print the command that starts its pqbench, or run a command inside. `pqbench ab
--b userland:NAME` then measures it against this system, paired.
"""

from __future__ import annotations

import shlex
import time
from typing import Annotated, Any

import typer

from pqbench.cli.common import JsonOption, handles_errors, print_json
from pqbench.cli.root import app
from pqbench.platform.errors import PqbenchError
from pqbench.views import console

userland_app = typer.Typer(
    name="userland", no_args_is_help=True, add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Build, inspect and enter another OS userland (Debian 13) with pqbench inside; "
         "`pqbench ab --b userland:NAME` measures it against this system.")
app.add_typer(userland_app)

NameArgument = Annotated[str, typer.Argument(
    help="The userland, e.g. debian-trixie (`pqbench userland status` lists them).",
    show_default=False)]


def _log(message: str) -> None:
    console.note(f"userland: {message}")


@userland_app.command("build")
@handles_errors
def build(name: NameArgument, json_output: JsonOption = False) -> None:
    """Build a userland or reuse it, and set up this checkout's pqbench inside.

    The first build runs debootstrap (a few minutes, network-bound); later ones reuse it
    and set pqbench up again only when this checkout changed. Needs root. Prints the
    userland's root directory (--json: its manifests and the command prefix).
    """
    from pqbench.libraries.userland import ensure

    started = time.monotonic()
    built = ensure(name, _log)
    seconds = time.monotonic() - started
    _log(f"{name} ready in {seconds:.2f} s; its pqbench: "
         f"{shlex.join(built.command_prefix())}")
    if json_output:
        print_json({"name": built.name, "root": str(built.root), "seconds": round(seconds, 2),
                    "prefix": built.command_prefix(), "base": built.base,
                    "install": _install_info(built.install)})
    else:
        console.write(f"{built.root}\n")


@userland_app.command("status")
@handles_errors
def status(name: Annotated[str | None, typer.Argument(
               help="One userland (default: every known one).", show_default=False)] = None,
           json_output: JsonOption = False) -> None:
    """Show what is built, whether its pqbench is this checkout's, and container engines."""
    from pqbench.libraries.userland import RECIPES, container_engines
    from pqbench.libraries.userland.recipe import recipe

    names = [recipe(name).name] if name else sorted(RECIPES)
    found = {n: _state(n) for n in names}
    engines = container_engines()
    if json_output:
        print_json({"userlands": found, "container_engines": engines or "none installed"})
        return
    rows = [(n, info["state"], info["root"], info.get("base_summary"),
             info.get("install_summary")) for n, info in found.items()]
    console.stdout.print(console.rows_table(
        "userlands", ("name", "state", "root", "base system", "pqbench inside"), rows))
    for engine, state in (engines or {"container engines": "none installed"}).items():
        console.stdout.print(console.safe(f"{engine}: {state}"))


def _state(name: str) -> dict[str, Any]:
    """One userland's status as plain data; `state` is built, stale or not built."""
    from pqbench.libraries.userland import find, is_current
    from pqbench.libraries.userland.recipe import recipe, root_of

    try:
        built = find(name)
    except PqbenchError as exc:
        return {"state": "not built", "root": str(root_of(recipe(name))), "reason": str(exc)}
    base, install = built.base, built.install
    current = is_current(built)
    return {
        "state": "built" if current else "built, pqbench inside older than this checkout",
        "root": str(built.root), "current": current, "prefix": built.command_prefix(),
        "base": base, "install": _install_info(install),
        "base_summary": f"{base.get('suite')} {base.get('arch')}, built "
                        f"{base.get('built_at')} in {base.get('build_seconds')} s",
        "install_summary": f"{built.install_dir}, set up {install.get('installed_at')} in "
                           f"{install.get('install_seconds')} s",
    }


def _install_info(install: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in install.items() if k != "files"}


@userland_app.command("prefix")
@handles_errors
def prefix(name: NameArgument, json_output: JsonOption = False) -> None:
    """Print the command that starts the userland's pqbench.

    Append pqbench arguments (`speed`, `env` ...); `pqbench ab --b userland:NAME` uses it.
    """
    from pqbench.libraries.userland import find

    argv = find(name).command_prefix()
    if json_output:
        print_json(argv)
    else:
        console.write(shlex.join(argv) + "\n")


@userland_app.command("run", context_settings={"ignore_unknown_options": True,
                                               "allow_interspersed_args": False})
@handles_errors
def run(name: NameArgument, command: Annotated[list[str] | None, typer.Argument(
            help="The command to run inside, after `--`.", show_default=False)] = None
        ) -> None:
    """Run a command inside a built userland (as root): pqbench userland run NAME -- CMD.

    /proc, /dev, /sys, the liboqs cache and the pip configuration are mounted in a private
    mount namespace for that command alone and vanish with it.
    """
    from pqbench.libraries.userland import exec_inside

    exec_inside(name, command or [])


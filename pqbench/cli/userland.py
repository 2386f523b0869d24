"""`pqbench userland`: another OS userland on this machine, to measure the next OS release.

Thin commands over `pqbench.libraries.userland`: build (or reuse) a Debian 13 userland, see what is
built, print the command that starts its pqbench, or run a command inside. `pqbench ab
--b userland:NAME` then measures it against this system, paired.
"""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from pqbench.app import userland as use_case
from pqbench.cli.common import JsonOption, handles_errors
from pqbench.cli.root import app
from pqbench.views import console, numbers

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
    found = use_case.build(name, _log)
    _log(f"{name} ready in {numbers.number(found.seconds, 2)} s; its pqbench: "
         f"{shlex.join(found.userland.command_prefix())}")
    if json_output:
        console.print_json(found.document())
    else:
        console.write(f"{found.userland.root}\n")


@userland_app.command("status")
@handles_errors
def status(name: Annotated[str | None, typer.Argument(
               help="One userland (default: every known one).", show_default=False)] = None,
           json_output: JsonOption = False) -> None:
    """Show what is built, whether its pqbench is this checkout's, and container engines."""
    found = use_case.status(name)
    if json_output:
        console.print_json(found)
        return
    rows = [(n, info["state"], info["root"], info.get("base_summary"),
             info.get("install_summary")) for n, info in found["userlands"].items()]
    console.stdout.print(console.rows_table(
        "userlands", ("name", "state", "root", "base system", "pqbench inside"), rows))
    engines = found["container_engines"]
    for engine, state in (engines if isinstance(engines, dict)
                          else {"container engines": engines}).items():
        console.stdout.print(console.safe(f"{engine}: {state}"))


@userland_app.command("prefix")
@handles_errors
def prefix(name: NameArgument, json_output: JsonOption = False) -> None:
    """Print the command that starts the userland's pqbench.

    Append pqbench arguments (`speed`, `env` ...); `pqbench ab --b userland:NAME` uses it.
    """
    from pqbench.libraries.userland import find

    argv = find(name).command_prefix()
    if json_output:
        console.print_json(argv)
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


"""The root command: the typer app every command module registers on, and the options that
apply before any command. Its own module, so that the command modules import it without
importing the package that imports them (no import circle)."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench import __version__

app = typer.Typer(
    name="pqbench",
    help="What post-quantum cryptography costs on this machine, and whether the last OS "
         "update changed it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Docstrings are wrapped at 90 in the source: markdown mode joins their lines into
    # paragraphs, so `--help` wraps sentences at the terminal width, not mid-sentence.
    rich_markup_mode="markdown",
    # Click passes these on to every subcommand's context: `pqbench speed -h` works too.
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(requested: bool) -> None:
    if requested:
        typer.echo(f"pqbench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", "-V", callback=_print_version, is_eager=True,
        metavar="",
        help="Print pqbench's version and exit.")] = False,
) -> None:
    """Options that apply before any command (--version)."""
    from pqbench.presentation import console

    console.show_progress()  # builds the command starts report through logging


"""The root command: the typer app every command module registers on, and the options that
apply before any command. Its own module, so that the command modules import it without
importing the package that imports them (no import circle)."""

from __future__ import annotations

from typing import Annotated

import typer
import typer.core

from pqbench import __version__


def _words_not_types() -> None:
    """`--help` says what an option takes in words (`--by FIELD`, `--db DB`, `PATH...`),
    never the Python type behind it: typer's rich help prints an argument's type and a
    flag's type beside the metavar (`PATH... <list[str]>`, `--help <bool>`), and offers no
    setting to leave them out, so its two display hooks are narrowed here, once."""
    argument = getattr(typer.core, "TyperArgument", None)
    option = getattr(typer.core, "TyperOption", None)
    if argument is not None and hasattr(argument, "display_type_rich"):
        argument.display_type_rich = lambda self, ctx: None
    if option is not None and hasattr(option, "display_type_rich"):
        shown = option.display_type_rich

        def _flag_without_type(self: typer.core.TyperOption, ctx: object) -> str | None:
            if getattr(self, "is_flag", False):
                return None
            found = shown(self, ctx)
            return _word(found) if found is not None else None

        option.display_type_rich = _flag_without_type


#: What an option without a metavar of its own takes, said as click says it.
_WORDS = {"int": "INTEGER", "float": "NUMBER", "str": "TEXT", "path": "PATH"}


def _word(shown: str) -> str:
    """typer's `<float>`, `<list[str]>`, `<int range>`, `<a|b>` in words: NUMBER, TEXT,
    INTEGER, a|b (a repeatable option says so in its help)."""
    if not (shown.startswith("<") and shown.endswith(">")):
        return shown
    inner = shown[1:-1].removesuffix(" range")
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    return _WORDS.get(inner, inner if "|" in inner else inner.upper())


_words_not_types()

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
        from pqbench.views import console

        console.write(f"pqbench {__version__}\n")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", "-V", callback=_print_version, is_eager=True,
        metavar="",
        help="Print pqbench's version and exit.")] = False,
) -> None:
    """Options that apply before any command (--version)."""
    from pqbench.views import console

    console.show_progress()  # builds the command starts report through logging


"""A Ctrl-C that lands after a command stored its run: the command says where the run is,
not only "interrupted" (five Ctrl-Cs in `speed` said "error: interrupted" although the run
was stored whole). Called directly, in this process: the signal is stood in for by the
KeyboardInterrupt its handler raises."""

from __future__ import annotations

import pytest
import typer

from pqbench.cli.common import handles_errors
from pqbench.platform import interrupts


def test_an_interruption_after_the_storing_says_what_was_stored(
        capsys: pytest.CaptureFixture[str]) -> None:
    @handles_errors
    def stores_then_is_interrupted() -> None:
        interrupts.note_kept("stored as run 20261128T000000Z-abcdef in runs.db")
        raise KeyboardInterrupt

    @handles_errors
    def is_interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(typer.Exit) as stopped:
        stores_then_is_interrupted()
    assert stopped.value.exit_code == 130
    assert "error: interrupted; stored as run 20261128T000000Z-abcdef in runs.db" in \
        capsys.readouterr().err
    with pytest.raises(typer.Exit):  # the next command has stored nothing yet
        is_interrupted()
    said = capsys.readouterr().err
    assert "error: interrupted" in said and "stored" not in said

"""Typed errors. Domain code raises these; only the CLI turns them into exit codes."""

from __future__ import annotations


class PqbenchError(Exception):
    """Base class: a problem the user can act on, with a message that says how."""

    exit_code = 1


class UsageError(PqbenchError):
    """The command line asked for something that does not exist."""

    exit_code = 2


class UnknownAlgorithmError(UsageError):
    """An algorithm name that no table knows; carries close matches."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown algorithm {name!r}.{hint} `pqbench list` shows every "
                         "algorithm and the names it answers to.")
        self.name = name
        self.suggestions = suggestions


class NotOfferedError(PqbenchError):
    """An implementation does not offer an algorithm or operation; the reason says why."""


class ImplementationUnavailable(PqbenchError):
    """A whole implementation cannot be used here (library missing, extension not built)."""


class VerificationError(PqbenchError):
    """An implementation gave a wrong answer; it must not be timed."""


class WorkerFailed(PqbenchError):
    """A foreign implementation's worker process died, hung, or broke its protocol: a
    problem for the rows it served, never a hang."""


class StoreError(PqbenchError):
    """The results database cannot be used; the file is left untouched."""


class InputFileError(PqbenchError):
    """A file named by the user cannot be read or measured."""


class ComparisonError(PqbenchError):
    """Runs cannot be compared: none found, no common rows, or different machines."""


class NothingStored(ComparisonError):
    """The store holds no run yet: not a failure of the command, so it is said as a note
    and the exit status is 0, as `pqbench runs` says it."""

    exit_code = 0


class UserlandError(PqbenchError):
    """Another OS userland cannot be built, refreshed or entered; the message says why."""

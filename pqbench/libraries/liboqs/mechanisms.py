"""Names liboqs knows but the loaded build left out, and the error that says how to get them.

pqbench's default build enables only the NIST standards and HQC, so `speed FrodoKEM-640-AES`
must not answer "unknown algorithm": liboqs lists every mechanism it has code for beside those
the build enabled (what liboqs-python's get_supported_* and get_enabled_* read).
"""

from __future__ import annotations

import difflib

from pqbench.catalog.algorithms.base import normalize
from pqbench.libraries.liboqs import import_oqs, loaded_install, locate
from pqbench.platform.errors import ImplementationUnavailable, UnknownAlgorithmError, UsageError

FULL_BUILD_COMMAND = "python -m pqbench.libraries.liboqs --all"


class MechanismNotBuilt(UsageError):
    """The loaded liboqs knows this mechanism but was built without it."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def not_built(name: str) -> MechanismNotBuilt | None:
    """The error for `name` if the loaded liboqs knows it but did not enable it, else None."""
    wanted = normalize(name)
    for mechanism in left_out():
        if normalize(mechanism) == wanted:
            return MechanismNotBuilt(mechanism, f"{mechanism} is a liboqs algorithm that "
                                                f"{_where()} was built without; {_how()}")
    return None


def explain_unknown(error: UnknownAlgorithmError) -> UsageError:
    """A name no table resolved: the not-built error when liboqs left it out; else `error`,
    naming left-out algorithms whose names are close (a typo of one of them)."""
    if exact := not_built(error.name):
        return exact
    names = {normalize(mechanism): mechanism for mechanism in left_out()}
    close = difflib.get_close_matches(normalize(error.name), list(names), n=3, cutoff=0.6)
    if not close:
        return error
    listed = ", ".join(names[key] for key in close)
    return UsageError(f"{error} liboqs has {listed}, which {_where()} was built without; "
                      f"{_how()}.")


def left_out() -> list[str]:
    """KEMs and signatures the loaded liboqs knows but was built without; [] if none loaded."""
    try:
        import_oqs()
    except ImplementationUnavailable:
        return []  # nothing loaded: the caller's own message stands
    install = loaded_install()
    return locate.left_out(install.library) if install else []


def _ours() -> bool:
    install = loaded_install()
    return install is not None and (install.prefix / locate.MANIFEST_NAME).is_file()


def _where() -> str:
    if _ours():
        return "pqbench's own liboqs build"
    install = loaded_install()
    origin = {locate.ORIGIN_HOME: "~/_oqs"}.get(install.origin, install.origin) if install else "?"
    return f"the liboqs pqbench loaded (from {origin})"


def _how() -> str:
    if _ours():
        return f"run `{FULL_BUILD_COMMAND}` to build every algorithm (several minutes, once)"
    return (f"rebuild that liboqs with it, or unset OQS_INSTALL_PATH and run "
            f"`{FULL_BUILD_COMMAND}` to build every algorithm into pqbench's cache")

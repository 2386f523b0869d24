"""The TLS implementations pqbench knows, by name, in the order tables show them (the one
order of every implementation: `libraries.implementations.ORDER`)."""

from __future__ import annotations

from collections.abc import Sequence

from pqbench.libraries.implementations import rank
from pqbench.measure.tls.base import TlsImplementation
from pqbench.platform.errors import UsageError


def all_implementations() -> list[TlsImplementation]:
    from pqbench.measure.tls.libssl import SystemLibssl
    from pqbench.measure.tls.pyopenssl import PyOpenSSL
    from pqbench.measure.tls.pythonssl import PythonSsl

    return sorted([PyOpenSSL(), PythonSsl(), SystemLibssl()], key=lambda i: rank(i.name))


def names() -> list[str]:
    return [i.name for i in all_implementations()]


def by_name(name: str) -> TlsImplementation:
    for implementation in all_implementations():
        if implementation.name == name:
            return implementation
    raise UsageError(f"unknown TLS implementation {name!r}; known: {', '.join(names())}")


def select(wanted: Sequence[str] | None) -> list[TlsImplementation]:
    """The implementations asked for (all by default), each once, in table order."""
    if not wanted:
        return all_implementations()
    return sorted((by_name(name) for name in dict.fromkeys(wanted)), key=lambda i: rank(i.name))

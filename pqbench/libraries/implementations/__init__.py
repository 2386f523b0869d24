"""The implementations pqbench can measure, in the order tables show them.

`liboqs` and `libcrypto` are native timing loops (no binding cost); `liboqs-python` and
`cryptography` are what a Python application sees. The difference is the binding's cost.
The foreign stacks (`go`, `aws-lc-rs`, `libcrux`, `java`, `bouncycastle`: workers in their
own languages, `implementations.stacks`) come last and only when named: each is built on
first use.
"""

from __future__ import annotations

from functools import cache

from pqbench.libraries.implementations.base import Implementation
from pqbench.libraries.stacks import registry
from pqbench.platform.errors import UsageError

#: The foreign implementations (workers in their own languages), in table order.
STACKS = registry.names()
#: The TLS libraries `pqbench tls` drives (`measure.tls`), in table order.
TLS = ("pyopenssl", "python-ssl", "libssl")
#: Every implementation pqbench measures, in the one order every table, chart and report
#: shows them: each native loop beside its binding, Python's own hashes, the foreign stacks
#: (measured only when named), then the TLS libraries. A name not here comes last (`rank`).
ORDER = ("liboqs", "liboqs-python", "libcrypto", "cryptography", "python", *STACKS, *TLS)
#: The implementations a speed row (`speed`, `ab`, `bisect`) may name: all but the TLS ones.
SPEED = tuple(name for name in ORDER if name not in TLS)

#: (binding, native loop under it): the binding's share of native speed is its cost
#: (`analysis.bindings`).
BINDINGS = (("liboqs-python", "liboqs"), ("cryptography", "libcrypto"))


@cache
def all_implementations() -> tuple[Implementation, ...]:
    """One instance of each implementation, native loops first in each pair."""
    from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation
    from pqbench.libraries.implementations.pyca import PycaImplementation
    from pqbench.libraries.implementations.python_hashes import PythonHashImplementation
    from pqbench.libraries.implementations.stacks import stack_implementations

    found: list[Implementation] = [LiboqsPythonImplementation(), PycaImplementation(),
                                   PythonHashImplementation()]
    try:
        from pqbench.libraries.implementations.native import native_implementations
    except ImportError:
        pass
    else:
        found.extend(native_implementations())
    found.extend(stack_implementations())
    return tuple(sorted(found, key=lambda impl: rank(impl.name)))


def on_request(impl: Implementation) -> bool:
    """Whether `impl` is measured only when named (a foreign stack: it is built on first
    use, so asking for everything never starts a build)."""
    from pqbench.libraries.implementations.stacks import StackImplementation

    return isinstance(impl, StackImplementation)


def liboqs_mechanisms() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(KEMs, signatures) the loaded liboqs enables, so any of them can be named; empty
    when liboqs is unavailable (its rows then say why)."""
    from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation

    for impl in all_implementations():
        if type(impl) is LiboqsPythonImplementation and not impl.unavailable_reason():
            return impl.enabled_kems(), impl.enabled_signatures()
    return (), ()


def rank(name: str) -> tuple[int, str]:
    """Where `name` stands in ORDER, the one sort key of implementations (a name ORDER does
    not hold comes after every one it does, by name)."""
    return (ORDER.index(name) if name in ORDER else len(ORDER), name)


def select(names: list[str] | None) -> tuple[Implementation, ...]:
    """The implementations named (when None, all but those measured on request only);
    unknown names are a usage error."""
    available = all_implementations()
    if not names:
        return tuple(impl for impl in available if not on_request(impl))
    known = {impl.name: impl for impl in available}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown implementation {', '.join(unknown)}; choose from "
                         f"{', '.join(known)}")
    return tuple(known[n] for n in names)

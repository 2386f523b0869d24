"""`pqbench list`: what can be measured here, the names it answers to, and the foreign
implementations: compiled, compiled on first use (or now, with --compile), or what is
missing for them. Nothing is compiled or started unless asked: a compiled worker says
what it offers in its manifest, one not yet compiled what its registry entry declares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pqbench.app.ending import Ending
from pqbench.catalog.algorithms import all_algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations import all_implementations, on_request
from pqbench.libraries.implementations.stacks import StackImplementation
from pqbench.libraries.stacks import compiling
from pqbench.libraries.stacks.running import Availability
from pqbench.platform.errors import ImplementationUnavailable, UsageError


@dataclass(frozen=True)
class Listed:
    """One algorithm: the implementations that offer it now, and the foreign ones that
    would be compiled on its first use."""

    algorithm: Algorithm
    ready: tuple[str, ...]
    on_first_use: tuple[str, ...]


@dataclass(frozen=True)
class Foreign:
    """One foreign implementation here: `built`, `buildable` (compiled on first use) or
    `missing`, and the detail (where it is, with which toolchain, or what is needed)."""

    name: str
    language: str
    what: str
    state: str
    detail: str


@dataclass(frozen=True)
class Compiled:
    """What --compile did for one foreign implementation."""

    name: str
    compiled: bool
    detail: str


@dataclass(frozen=True)
class Listing:
    algorithms: tuple[Listed, ...]
    stacks: tuple[Foreign, ...]
    #: Built-in implementations that cannot run here (`pqbench env` says why).
    unusable: tuple[str, ...]
    compiled: tuple[Compiled, ...] = ()

    @property
    def ending(self) -> Ending | None:
        failed = [c.name for c in self.compiled if not c.compiled]
        if failed:
            return Ending(f"could not compile {', '.join(failed)} (the table says why)", 1)
        return None


def stacks() -> list[StackImplementation]:
    return [impl for impl in all_implementations() if isinstance(impl, StackImplementation)]


def compile_ahead(log: Callable[[str], None] = compiling.progress) -> tuple[Compiled, ...]:
    """Compile now every foreign worker this machine can compile and has not: what a first
    use would do, ahead of it."""
    done = []
    for impl in stacks():
        if impl.process.availability().state != "buildable":
            continue
        try:
            built = compiling.compile_worker(compiling.plan(impl.stack, impl.process.pins), log)
        except ImplementationUnavailable as exc:
            done.append(Compiled(impl.name, False, str(exc)))
            continue
        done.append(Compiled(impl.name, True, str(built.plan.directory)))
    return tuple(done)


def listing(kind: str | None, compile_now: bool = False) -> Listing:
    """Every algorithm of `kind` (all when None) with who offers it here; UsageError for
    a kind that does not exist."""
    algorithms = [a for a in all_algorithms() if kind is None or a.kind == kind]
    if not algorithms:
        kinds = sorted({a.kind for a in all_algorithms()})
        raise UsageError(f"unknown kind {kind!r}; choose from {', '.join(kinds)}")
    compiled = compile_ahead() if compile_now else ()
    found = {impl.name: (impl, impl.process.availability()) for impl in stacks()}
    usable = [impl for impl in all_implementations()
              if not on_request(impl) and impl.unavailable_reason() is None]
    listed = []
    for alg in algorithms:
        ready = [impl.name for impl in usable if impl.in_scope(alg)
                 and any(impl.offers(alg, op) is None for op in alg.operations)]
        ready += [name for name, (_, there) in found.items() if _offers(there, alg)]
        later = tuple(name for name, (impl, there) in found.items()
                      if there.state == "buildable" and alg.name in impl.stack.offers)
        listed.append(Listed(alg, tuple(ready), later))
    foreign = tuple(Foreign(impl.name, impl.stack.language, impl.stack.description,
                            there.state, there.detail) for impl, there in found.values())
    unusable = tuple(impl.name for impl in all_implementations()
                     if not on_request(impl) and impl not in usable)
    return Listing(tuple(listed), foreign, unusable, compiled)


def _offers(there: Availability, alg: Algorithm) -> bool:
    """A compiled worker offers what its manifest's hello says."""
    return there.hello is not None and alg.name in there.hello.offers

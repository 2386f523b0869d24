"""The worker side of `pqbench ab`: serve the protocol on stdin/stdout until told to quit.

Started as `pqbench worker` by the controller, possibly through a command prefix in another
userland with another Python; it measures with its own libraries and reports its own
fingerprint. Each (algorithm, implementation) passes the same correctness checks as in
`pqbench speed` (`checks.pair.check_pair`) before any of its rows is prepared, and a row that
fails them is answered as a problem, never timed.
"""

from __future__ import annotations

import os
import platform
import signal
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, TextIO

from pqbench.sessions.ab import protocol

Row = tuple[str, str, str, int | None]


@dataclass
class _State:
    """What the worker remembers between requests."""

    tasks: dict[Row, Any] = field(default_factory=dict)
    checked: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    current: Any = None


def serve() -> int:
    """Answer requests until "quit" or the end of stdin; the exit status."""
    out = _protocol_stdout()
    # The controller stops the session; a Ctrl-C at the terminal is its to handle.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _send(out, _hello())
        state = _State()
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                message = protocol.decode(line)
            except protocol.ProtocolError as exc:
                _send(out, {"type": "error", "message": str(exc)})
                continue
            if message["type"] == "quit":
                return 0
            _send(out, _answer(message, state))
    except BrokenPipeError:
        return 0
    return 0


def _protocol_stdout() -> TextIO:
    """A private copy of stdout for the protocol; fd 1 then points at stderr, so whatever a
    library prints (C or Python) reaches the user's terminal, never the protocol."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def _send(out: TextIO, message: dict[str, Any]) -> None:
    out.write(protocol.encode(message))
    out.flush()


def _hello() -> dict[str, Any]:
    from pqbench.measure import environment

    try:
        version = metadata.version("pqbench")
    except metadata.PackageNotFoundError:
        version = None
    return {"type": "hello", "protocol": protocol.VERSION, "pqbench": version,
            "python": platform.python_version(), "pid": os.getpid(),
            "environment": environment.collect()}


def _answer(message: dict[str, Any], state: _State) -> dict[str, Any]:
    handlers = {"pin": _pin, "plan": _plan, "prepare": _prepare, "run": _run}
    handler = handlers.get(message["type"])
    if handler is None:
        return {"type": "error", "message": f"unknown request {message['type']!r}"}
    try:
        return handler(message, state)
    except protocol.ProtocolError as exc:
        return {"type": "error", "message": str(exc)}
    except Exception as exc:  # any failure is answered, so the controller never waits
        return {"type": "error", "message": f"{type(exc).__name__}: {exc}"}


def _pin(message: dict[str, Any], _state: _State) -> dict[str, Any]:
    cpu = message.get("cpu")
    setter = getattr(os, "sched_setaffinity", None)
    if not isinstance(cpu, int) or setter is None:
        return {"type": "pinned", "cpus": None, "error": "CPU affinity is not available here"}
    try:
        setter(0, {cpu})
    except OSError as exc:
        return {"type": "pinned", "cpus": None, "error": str(exc)}
    return {"type": "pinned", "cpus": sorted(os.sched_getaffinity(0))}


def _plan(message: dict[str, Any], state: _State) -> dict[str, Any]:
    from pqbench.catalog import algorithms
    from pqbench.libraries.implementations import all_implementations, liboqs_mechanisms, on_request
    from pqbench.measure.speed import suite
    from pqbench.platform.errors import UnknownAlgorithmError

    kems, sigs = liboqs_mechanisms()
    problems: list[dict[str, Any]] = []
    chosen = []
    for name in message.get("algorithms") or []:
        try:
            chosen += algorithms.resolve([str(name)], kems, sigs)
        except UnknownAlgorithmError:
            problems.append(_problem(str(name), "*", "not offered",
                                     f"this pqbench does not know {name}"))
    available = {impl.name: impl for impl in all_implementations()}
    wanted = message.get("implementations") or [
        name for name, impl in available.items() if not on_request(impl)]
    for name in wanted:
        if name not in available:
            problems.append(_problem("*", str(name), "unavailable",
                                     f"no implementation {name} in this pqbench"))
    settings = suite.SpeedSettings(
        operations=tuple(message.get("operations") or ()),
        block_sizes=tuple(message.get("block_sizes") or suite.BLOCK_SIZES))
    impls = [available[name] for name in wanted if name in available]
    tasks = suite.plan(chosen, impls, settings)
    state.tasks = {(t.algorithm.name, t.implementation.name, t.operation, t.block_size): t
                   for t in tasks}
    # A foreign implementation's worker starts now (built by the controller before the
    # session): its versions join this side's fingerprint through the plan's answer.
    libraries: dict[str, object] = {}
    details: dict[str, object] = {}
    for impl in dict.fromkeys(t.implementation for t in tasks):
        if on_request(impl):
            impl.provision()
            libraries.update(impl.versions())
            details.update(impl.details())
    return {"type": "plan", "rows": [list(row) for row in state.tasks], "problems": problems,
            "libraries": libraries, "library_details": details}


def _problem(algorithm: str, implementation: str, kind: str, reason: str,
             operation: str | None = None) -> dict[str, Any]:
    return {"type": "problem", "algorithm": algorithm, "implementation": implementation,
            "operation": operation, "kind": kind, "reason": reason}


def _prepare(message: dict[str, Any], state: _State) -> dict[str, Any]:
    from pqbench.catalog.algorithms.base import security_attributes
    from pqbench.measure.checks.pair import check_pair
    from pqbench.platform.errors import (
        ImplementationUnavailable,
        NotOfferedError,
        VerificationError,
        WorkerFailed,
    )

    row = protocol.row_of(message)
    task = state.tasks.get(row)
    if task is None:
        raise protocol.ProtocolError(f"row {list(row)} was not planned here")
    alg, impl, operation, block = task.algorithm, task.implementation, row[2], row[3]
    pair = (alg.name, impl.name)
    if pair not in state.checked:
        found = check_pair(alg, impl)
        state.checked[pair] = ({"checks": list(found.verification.checks)}
                               if found.problem is None else
                               _problem(*pair, found.problem.kind, found.problem.reason))
    checked = state.checked[pair]
    if checked.get("type") == "problem":
        return {**checked, "operation": operation}
    reason = impl.offers(alg, operation)
    if reason:
        return _problem(*pair, "not offered", reason, operation)
    state.current = None
    warmed: dict[str, Any] = {}
    try:
        prepared = impl.prepare(alg, operation, block)
        if prepared.warmup == "steady":
            # A JIT-compiled row settles over its first rounds: warm it here as `speed`
            # does, before the session's pairs begin (each side's worker alike).
            from pqbench.measure.speed import suite

            warmed = suite.warm_up(prepared, suite.SpeedSettings())
    except (NotOfferedError, VerificationError) as exc:
        kind = "not offered" if isinstance(exc, NotOfferedError) else "failed verification"
        return _problem(*pair, kind, str(exc), operation)
    except (WorkerFailed, ImplementationUnavailable) as exc:
        kind = "error" if isinstance(exc, WorkerFailed) else "unavailable"
        return _problem(*pair, kind, str(exc), operation)
    state.current = prepared
    return {"type": "prepared", "checks": checked["checks"], "sizes": dict(prepared.sizes),
            "attributes": {**security_attributes(alg), **prepared.attributes, **warmed},
            "counter": prepared.counter}


def _run(message: dict[str, Any], state: _State) -> dict[str, Any]:
    seconds = message.get("seconds")
    if not isinstance(seconds, int | float) or not 0 < seconds <= 600:
        raise protocol.ProtocolError(f"run needs 0 < seconds <= 600, not {seconds!r}")
    if state.current is None:
        raise protocol.ProtocolError("run before a successful prepare")
    # The CPU time this thread got during the round, beside the wall time the loop reads:
    # on a busy machine the worker is descheduled for part of a round, which the wall clock
    # counts and the thread's CPU clock does not (`openssl speed` counts CPU time too, unless
    # given -elapsed). Every loop runs in this thread (the native ones release the GIL but
    # not the thread), so the CPU clock sees all of its work.
    cpu_started = time.thread_time_ns()
    result = state.current.run(float(seconds))
    # The loop's own reading covers the window of its wall time; the one around the call
    # also counts the preparation before the loop.
    cpu_ns = result.cpu_ns if result.cpu_ns is not None else \
        time.thread_time_ns() - cpu_started
    return {"type": "round", "ops": result.ops, "elapsed_ns": result.elapsed_ns,
            "cycles": result.cycles, "cpu_ns": cpu_ns}


# `python -m pqbench.sessions.ab.worker`: a worker without the CLI's imports
if __name__ == "__main__":
    raise SystemExit(serve())

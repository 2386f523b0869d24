"""The measurement worker: a process started with pqbench's allocator interposer.

`python -m pqbench.measure.memory.worker` is started by `pqbench.measure.memory.runner` with the
interposer in LD_PRELOAD (and LD_BIND_NOW=1, so no call pays for the dynamic linker resolving a
symbol on first use). It answers one JSON request per line on stdin with one JSON line on
stdout; stdout carries nothing else. Its first line says whether the heap can be counted.

A request names an implementation (`liboqs`, `libcrypto`), an algorithm (canonical name,
with `liboqs_kind` for a mechanism only the loaded liboqs knows), an operation and the
number of calls; or, for pqbench's own tests, `{"test": NAME, "count": N, "bytes": B}`,
one of the operations of known memory use in csrc/memtest.c. Each reply is either
`{"ok": true, "memory": {...}, "sizes": {...}}` or `{"ok": false, "kind": ..., "reason":
...}` with the kinds of a run's problems. A call that crashes the process (a stack deeper
than the 8 MiB region hits its guard page) ends the worker; the parent records that and
starts another.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from typing import Any, TextIO

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations.base import Implementation
from pqbench.platform.errors import NotOfferedError
from pqbench.timing import native

#: RuntimeError messages of memory.c itself (not of an operation's correctness check).
MEASUREMENT_ERROR_PREFIX = "memory measurement"


def _algorithm(request: dict[str, Any]) -> Algorithm:
    name = str(request["algorithm"])
    kind = request.get("liboqs_kind")
    if kind:
        return algorithms.liboqs_algorithm(name, str(kind))
    return algorithms.by_name(name)


def _memory(found: native.CallMemory) -> dict[str, Any]:
    return dataclasses.asdict(found)


def handle(request: dict[str, Any], implementations: dict[str, Implementation]) -> dict[str, Any]:
    """One request -> one reply (never raises for a problem of the measured operation)."""
    calls = int(request.get("calls", 1))
    if "test" in request:
        memory = native.mem_test(str(request["test"]), int(request.get("count", 0)),
                                 int(request.get("bytes", 0)), calls)
        return {"ok": True, "memory": _memory(memory), "sizes": {}}
    impl = implementations.get(str(request["implementation"]))
    if impl is None or not hasattr(impl, "memory"):
        return {"ok": False, "kind": "not offered",
                "reason": "memory is measured through the native implementations only "
                          "(liboqs, libcrypto)"}
    reason = impl.unavailable_reason()
    if reason:
        return {"ok": False, "kind": "unavailable", "reason": reason}
    try:
        memory, sizes = impl.memory(_algorithm(request), str(request["operation"]), calls)
    except (NotOfferedError, ValueError, KeyError) as exc:
        return {"ok": False, "kind": "not offered", "reason": str(exc)}
    except RuntimeError as exc:
        kind = "error" if str(exc).startswith(MEASUREMENT_ERROR_PREFIX) else \
            "failed verification"
        return {"ok": False, "kind": kind, "reason": str(exc)}
    except OSError as exc:
        return {"ok": False, "kind": "error", "reason": str(exc)}
    return {"ok": True, "memory": _memory(memory), "sizes": dict(sizes)}


def hello() -> dict[str, Any]:
    """The first line: can this process measure, and count the heap?"""
    reason = native.unavailable_reason()
    return {"ready": True, "native": reason,
            "heap": reason is None and native.mem_heap_available()}


def serve(requests: TextIO, replies: TextIO) -> None:
    from pqbench.libraries.implementations.native import native_implementations

    # hashlib enumerates the system libcrypto's digests when it loads, which fills lookups
    # some later calls consult (their heap depends on it: benchmarks/memory_harness.c).
    # Every worker has done so before it measures, whatever else it imports.
    assert hashlib.algorithms_available
    implementations = {impl.name: impl for impl in native_implementations()}
    replies.write(json.dumps(hello()) + "\n")
    replies.flush()
    for line in requests:
        if not line.strip():
            continue
        replies.write(json.dumps(handle(json.loads(line), implementations)) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)

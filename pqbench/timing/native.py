"""Typed facade over the C extension `pqbench.timing._native`.

The extension runs the timing loop in C (see csrc/native.h), so a measurement carries no
Python binding cost per operation: it is what liboqs's own speed_kem/speed_sig and
`openssl speed` would report. It is optional: without a C compiler or the OpenSSL headers
the install still succeeds, `available()` is False and `unavailable_reason()` says why.

Every loop honours the contract in contract.py and returns a `LoopResult`; the memory
probes (csrc/memory.c) return a `CallMemory`. Errors keep the extension's types:
ValueError for an unknown name, operation or size, RuntimeError when the one correctness
check before the loop fails (nothing is timed then), OSError when liboqs cannot be loaded.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pqbench.data.record.rounds import LoopResult
from pqbench.platform.errors import ImplementationUnavailable

ABI = 3  # the extension's ABI this facade was written against

_NOT_BUILT = (
    "the native extension was not built: no C compiler or no OpenSSL headers when pqbench "
    "was installed; reinstall with gcc and libssl-dev"
)


def _load() -> tuple[ModuleType | None, str | None]:
    try:
        _native = importlib.import_module("pqbench.timing._native")
    except ModuleNotFoundError as exc:
        if exc.name != "pqbench.timing._native":
            return None, f"the native extension failed to load: {exc}"
        return None, _NOT_BUILT
    except ImportError as exc:  # built, but cannot load (e.g. a libcrypto symbol is missing)
        return None, f"the native extension failed to load: {exc}"
    if getattr(_native, "ABI", None) != ABI:
        found = getattr(_native, "ABI", None)
        return None, f"the native extension is stale (ABI {found}, expected {ABI}); rebuild it"
    return _native, None


_ext, _reason = _load()


def available() -> bool:
    """True when the native loops can run."""
    return _ext is not None


def unavailable_reason() -> str | None:
    """Why the native loops cannot run, or None when they can."""
    return _reason


def _module() -> ModuleType:
    if _ext is None:
        raise ImplementationUnavailable(_reason or _NOT_BUILT)
    return _ext


def _result(raw: tuple[int, int, int | None, int]) -> LoopResult:
    ops, elapsed_ns, cycles, cpu_ns = raw
    return LoopResult(ops=ops, elapsed_ns=elapsed_ns, cycles=cycles, cpu_ns=cpu_ns)


def counter_name() -> str | None:
    """The counter behind `LoopResult.cycles`: rdtsc reference cycles, cntvct_el0, or None."""
    name: str | None = _module().counter_name()
    return name


# --- liboqs --------------------------------------------------------------------------


def oqs_load(library: str | os.PathLike[str]) -> str:
    """Load liboqs from `library` (the file liboqs-python loaded); returns OQS_version()."""
    version: str = _module().oqs_load(os.fspath(library))
    return version


def oqs_kem(
    alg: str, op: str, seconds: float, *, pk_len: int, sk_len: int, ct_len: int, ss_len: int
) -> LoopResult:
    """Time liboqs KEM `op` ("keygen", "encaps", "decaps") for at least `seconds`."""
    return _result(_module().oqs_kem(alg, op, seconds, pk_len, sk_len, ct_len, ss_len))


def oqs_sig(
    alg: str,
    op: str,
    seconds: float,
    *,
    pk_len: int,
    sk_len: int,
    sig_len_max: int,
    msg_len: int = 32,
) -> LoopResult:
    """Time liboqs signature `op` ("keygen", "sign", "verify") for at least `seconds`."""
    return _result(_module().oqs_sig(alg, op, seconds, pk_len, sk_len, sig_len_max, msg_len))


# --- system libcrypto ----------------------------------------------------------------


def ssl_version() -> str:
    """OpenSSL_version(OPENSSL_VERSION) of the libcrypto the extension uses."""
    version: str = _module().ssl_version()
    return version


def ssl_library_path() -> str | None:
    """The libcrypto file the extension uses (as /usr/bin/openssl does), if known."""
    path: str | None = _module().ssl_library_path()
    return path


def ssl_offers(alg: str) -> str | None:
    """None if libcrypto offers public-key `alg`, else the reason it does not."""
    reason: str | None = _module().ssl_offers(alg)
    return reason


def ssl_pk(alg: str, op: str, seconds: float) -> LoopResult:
    """Time a libcrypto public-key `op` for `alg`, mirroring `openssl speed`'s loop."""
    return _result(_module().ssl_pk(alg, op, seconds))


def ssl_cipher(name: str, op: str, block_size: int, seconds: float) -> LoopResult:
    """Time one EVP update of `block_size` bytes per op, as `openssl speed -evp NAME`."""
    return _result(_module().ssl_cipher(name, op, block_size, seconds))


def ssl_digest(name: str, block_size: int, seconds: float) -> LoopResult:
    """Time one EVP_Digest of `block_size` bytes per op, as `openssl speed -evp NAME`."""
    return _result(_module().ssl_digest(name, block_size, seconds))


# --- memory per call (csrc/memory.c) ---------------------------------------------------

Span = tuple[int, int]


@dataclass(frozen=True)
class CallMemory:
    """What `calls` single calls of one prepared operation used, each measured on its own.

    Every figure is (smallest, largest) over the calls. Stack bytes are the high-water mark
    on pqbench's painted stack with the harness's own `harness_stack_bytes` subtracted;
    heap figures are None unless the process has pqbench's allocator interposer (the
    memory worker does): the peak of bytes requested and not yet freed, the bytes
    requested in all, and the number of allocating calls.
    """

    calls: int
    stack_bytes: Span
    harness_stack_bytes: int
    heap_bytes: Span | None
    heap_total_bytes: Span | None
    allocations: Span | None


def _span(pair: Any) -> Span:
    low, high = pair
    return int(low), int(high)


def _memory(raw: dict[str, Any]) -> CallMemory:
    counted = bool(raw["heap_counted"])
    return CallMemory(
        calls=int(raw["calls"]), stack_bytes=_span(raw["stack_bytes"]),
        harness_stack_bytes=int(raw["harness_stack_bytes"]),
        heap_bytes=_span(raw["heap_bytes"]) if counted else None,
        heap_total_bytes=_span(raw["heap_total_bytes"]) if counted else None,
        allocations=_span(raw["allocations"]) if counted else None,
    )


def mem_heap_available() -> bool:
    """True when this process has pqbench's allocator interposer (LD_PRELOAD)."""
    return bool(_module().mem_heap_available())


def mem_oqs_kem(alg: str, op: str, calls: int, *, pk_len: int, sk_len: int, ct_len: int,
                ss_len: int) -> CallMemory:
    """Memory of liboqs KEM `op` (keygen, encaps, decaps, decaps-reject), per call."""
    return _memory(_module().mem_oqs_kem(alg, op, calls, pk_len, sk_len, ct_len, ss_len))


def mem_oqs_sig(alg: str, op: str, calls: int, *, pk_len: int, sk_len: int, sig_len_max: int,
                msg_len: int = 32) -> CallMemory:
    """Memory of liboqs signature `op` (keygen, sign, verify), per call."""
    return _memory(_module().mem_oqs_sig(alg, op, calls, pk_len, sk_len, sig_len_max,
                                         msg_len))


def mem_ssl_pk(alg: str, op: str, calls: int) -> CallMemory:
    """Memory of a libcrypto public-key `op` prepared as `ssl_pk` prepares it, per call."""
    return _memory(_module().mem_ssl_pk(alg, op, calls))


def mem_test(name: str, count: int, size: int, calls: int = 1) -> CallMemory:
    """Memory of a test operation of known use (csrc/memtest.c), for pqbench's own tests."""
    return _memory(_module()._mem_test(name, count, size, calls))

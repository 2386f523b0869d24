"""The native timing loops as implementations: `liboqs` and the system `libcrypto`.

Both run the loop in C (pqbench/timing/csrc/), so their rows carry no binding cost:
`liboqs` calls the very library liboqs-python loaded, `libcrypto` is the OS's own OpenSSL
(the library the `openssl` command uses), reached through EVP. Each C loop checks its
operation once for correctness before the clock starts; the self-checks here run that
check through a minimal loop so a wrong answer stops the pair before it is timed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.algorithms.ciphers import size_problem
from pqbench.data.record.rounds import LoopResult
from pqbench.libraries.implementations.base import (
    Check,
    Implementation,
    TimedOperation,
    VectorCheck,
)
from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation
from pqbench.platform.errors import NotOfferedError, VerificationError
from pqbench.timing import native

#: Long enough for the C check plus at least one timed operation.
_CHECK_SECONDS = 1e-6


@dataclass
class NativeOperation(TimedOperation):
    """An operation whose whole loop runs in C; `loop(seconds)` honours the contract."""

    loop: Callable[[float], LoopResult]
    sizes: Mapping[str, int] = field(default_factory=dict)
    attributes: Mapping[str, object] = field(default_factory=dict)
    counter: str | None = None

    def run(self, seconds: float) -> LoopResult:
        return self.loop(seconds)


def _native_instead(checked: str) -> str:
    return ("the native timing loop has no known-answer entry point; checked instead: "
            + checked)


def _run_check(loop: Callable[[float], LoopResult], what: str) -> None:
    """Run the C correctness check (it precedes every loop) with a negligible loop."""
    try:
        loop(_CHECK_SECONDS)
    except RuntimeError as exc:
        raise VerificationError(f"{what}: {exc}") from exc
    except ValueError as exc:
        raise NotOfferedError(str(exc)) from exc


class NativeLiboqs(LiboqsPythonImplementation):
    """liboqs through the C loop, with every buffer allocated outside the clock.

    It shares everything but the timing with the liboqs-python implementation: the same
    loaded library (the C loop dlopens the very file liboqs-python loaded), the same list of
    enabled mechanisms and the same reasons for what it does not offer.
    """

    name = "liboqs"
    description = "liboqs called from a native C timing loop (as its own speed_kem/speed_sig)"

    def __init__(self) -> None:
        super().__init__()
        self._native_error: str | None = None
        self._loaded = False

    def unavailable_reason(self) -> str | None:
        reason = super().unavailable_reason()
        if reason or self._loaded or self._native_error:
            return reason or self._native_error
        from pqbench.libraries.liboqs import loaded_install

        install = loaded_install()
        if not native.available():
            self._native_error = native.unavailable_reason()
        elif install is None:
            self._native_error = "liboqs-python loaded no liboqs that pqbench can name"
        else:
            try:
                native.oqs_load(install.library)
                self._loaded = True
            except OSError as exc:
                self._native_error = f"the native loop cannot load {install.library}: {exc}"
        return self._native_error

    def vector_checks(self, alg: Algorithm) -> Mapping[str, VectorCheck | str]:
        return {}  # the loop runs in C: no known-answer entry point

    def without_vectors(self, alg: Algorithm) -> str:
        return _native_instead("a round trip and tamper check in C (keygen, encaps/sign, "
                               "decaps/verify, a flipped byte rejected) before every timing "
                               "loop")

    def versions(self) -> dict[str, object]:
        return {}  # the liboqs-python row reports the same library

    def details(self) -> dict[str, dict[str, object]]:
        return {}

    def _details(self, alg: Algorithm) -> dict[str, Any]:
        oqs = self._module()
        holder = (oqs.KeyEncapsulation if alg.kind == "kem" else oqs.Signature)(alg.liboqs_name)
        details: dict[str, Any] = holder.details
        holder.free()
        return details

    def _sizes(self, alg: Algorithm, operation: str) -> dict[str, int]:
        reason = self.offers(alg, MEMORY_ONLY_OPERATIONS.get(operation, operation))
        if reason:
            raise NotOfferedError(reason)
        d = self._details(alg)
        sizes = {"public_key": d["length_public_key"], "secret_key": d["length_secret_key"]}
        if alg.kind == "kem":
            sizes.update(ciphertext=d["length_ciphertext"],
                         shared_secret=d["length_shared_secret"])
        else:
            sizes.update(signature=d["length_signature"], message=32)
        return sizes

    def _loop(self, alg: Algorithm, operation: str) -> tuple[Callable[[float], LoopResult],
                                                             dict[str, int]]:
        sizes = self._sizes(alg, operation)
        name = str(alg.liboqs_name)
        if alg.kind == "kem":
            return (lambda s: native.oqs_kem(
                name, operation, s, pk_len=sizes["public_key"], sk_len=sizes["secret_key"],
                ct_len=sizes["ciphertext"], ss_len=sizes["shared_secret"])), sizes
        return (lambda s: native.oqs_sig(
            name, operation, s, pk_len=sizes["public_key"], sk_len=sizes["secret_key"],
            sig_len_max=sizes["signature"], msg_len=32)), sizes

    def memory(self, alg: Algorithm, operation: str,
               calls: int) -> tuple[native.CallMemory, dict[str, int]]:
        """Memory of `calls` single calls, prepared and checked as the loop prepares them."""
        sizes = self._sizes(alg, operation)
        name = str(alg.liboqs_name)
        if alg.kind == "kem":
            return native.mem_oqs_kem(
                name, operation, calls, pk_len=sizes["public_key"], sk_len=sizes["secret_key"],
                ct_len=sizes["ciphertext"], ss_len=sizes["shared_secret"]), sizes
        return native.mem_oqs_sig(
            name, operation, calls, pk_len=sizes["public_key"], sk_len=sizes["secret_key"],
            sig_len_max=sizes["signature"], msg_len=32), sizes

    def self_check(self, alg: Algorithm) -> list[Check]:
        checked = "decaps" if alg.kind == "kem" else "verify"
        loop, _ = self._loop(alg, checked)
        _run_check(loop, f"{alg.name} in liboqs")
        what = ("decapsulation returns the encapsulated secret" if alg.kind == "kem"
                else "signature verifies; a changed message is rejected")
        return [Check("native check", what)]

    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        loop, sizes = self._loop(alg, operation)
        return NativeOperation(loop, sizes, counter=native.counter_name())


#: Operations measured for memory only, and the operation whose support they follow:
#: decapsulation of the checked ciphertext with one bit changed (FIPS 203 implicit
#: rejection, section 6.3), a path of its own beside the valid decapsulation.
MEMORY_ONLY_OPERATIONS = {"decaps-reject": "decaps"}

#: pqbench's canonical names -> the names the C loop takes for public-key algorithms.
_PK_NAMES = {"ECDH-P-256": "P-256", "ECDH-P-384": "P-384", "ECDH-P-521": "P-521"}


class NativeLibcrypto(Implementation):
    """The operating system's own libcrypto through EVP, in `openssl speed`'s loops."""

    name = "libcrypto"
    description = "the system libcrypto (what the openssl command uses), native EVP loops"

    def unavailable_reason(self) -> str | None:
        return native.unavailable_reason()

    def without_vectors(self, alg: Algorithm) -> str:
        return _native_instead("a round trip and tamper check in C through the system "
                               "libcrypto's EVP API before every timing loop")

    def versions(self) -> dict[str, object]:
        if not native.available():
            return {}
        return {"libcrypto": native.ssl_version()}

    def details(self) -> dict[str, dict[str, object]]:
        if not native.available():
            return {}
        return {"libcrypto": {"version": native.ssl_version(),
                              "library": native.ssl_library_path()}}

    def offers(self, alg: Algorithm, operation: str) -> str | None:
        reason = self.unavailable_reason()
        if reason:
            return reason
        if operation not in alg.all_operations:
            return f"{alg.name} has no {operation!r} operation"
        if alg.kind in ("cipher", "hash"):
            if alg.param("evp") is None:
                return f"libcrypto has no EVP {alg.kind} for {alg.name}"
            if operation in ("seal", "open"):
                return "whole AEAD messages are measured through cryptography only"
            return None
        try:
            return native.ssl_offers(_PK_NAMES.get(alg.name, alg.name))
        except ValueError:  # a mechanism only liboqs knows (Falcon-512, HQC-128 ...)
            return f"pqbench's libcrypto loops do not cover {alg.name}"

    def _loop(self, alg: Algorithm, operation: str,
              block_size: int | None) -> Callable[[float], LoopResult]:
        reason = self.offers(alg, operation)
        if reason:
            raise NotOfferedError(reason)
        if alg.kind == "hash":
            evp, size = str(alg.param("evp")), block_size or 16384
            return lambda s: native.ssl_digest(evp, size, s)
        if alg.kind == "cipher":
            evp, size = str(alg.param("evp")), block_size or 16384
            problem = size_problem(alg, size)
            if problem:
                raise NotOfferedError(problem)
            return lambda s: native.ssl_cipher(evp, operation, size, s)
        name = _PK_NAMES.get(alg.name, alg.name)
        return lambda s: native.ssl_pk(name, operation, s)

    def memory(self, alg: Algorithm, operation: str,
               calls: int) -> tuple[native.CallMemory, dict[str, int]]:
        """Memory of `calls` single calls of a public-key operation, prepared as `ssl_pk`."""
        base = MEMORY_ONLY_OPERATIONS.get(operation, operation)
        if alg.kind in ("cipher", "hash"):
            raise NotOfferedError("memory is measured for public-key operations")
        reason = self.offers(alg, base)
        if reason:
            raise NotOfferedError(reason)
        return (native.mem_ssl_pk(_PK_NAMES.get(alg.name, alg.name), operation, calls),
                _sizes_like_cryptography(alg, base))

    def self_check(self, alg: Algorithm) -> list[Check]:
        checked = {"kem": "decaps", "signature": "verify", "key-agreement": "derive",
                   "rsa": "decrypt", "hash": "hash"}.get(alg.kind)
        if alg.kind == "cipher":
            checked = "unwrap" if "unwrap" in alg.all_operations else "decrypt"
        checked = checked if checked in alg.all_operations else alg.all_operations[0]
        size = 1024 if alg.kind in ("cipher", "hash") else None
        _run_check(self._loop(alg, checked, size), f"{alg.name} in libcrypto")
        return [Check("native check", f"{checked} checked in C before every loop")]

    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        loop = self._loop(alg, operation, block_size)
        attributes: dict[str, object] = {}
        if alg.kind in ("cipher", "hash"):
            from pqbench.catalog.algorithms.ciphers import security_attributes

            attributes = {**security_attributes(alg), "per_op": _per_op(alg, operation)}
        return NativeOperation(loop, _sizes_like_cryptography(alg, operation), attributes,
                               native.counter_name())


def _per_op(alg: Algorithm, operation: str) -> str:
    if alg.kind == "hash":
        return "one EVP_Digest of block_size bytes (init, update, final)"
    if operation in ("wrap", "unwrap"):
        return f"one RFC 3394 {operation} of block_size bytes"
    return "one EVP update of block_size bytes on one context (as openssl speed -evp)"


def _sizes_like_cryptography(alg: Algorithm, operation: str) -> dict[str, int]:
    """Wire sizes are properties of the algorithm and its encoding, not of the library:
    take them from the cryptography row of the same operation where it exists."""
    if alg.kind in ("cipher", "hash"):
        return {}
    pyca = _cryptography()
    if pyca.offers(alg, operation) is None:
        return dict(pyca.prepare(alg, operation).sizes)
    return {}


@cache
def _cryptography() -> Implementation:
    """The binding itself, not through the registry (which lists this module's loops too);
    one instance, so its RSA keys are made once."""
    from pqbench.libraries.implementations.pyca import PycaImplementation

    return PycaImplementation()


@cache
def native_implementations() -> tuple[Implementation, ...]:
    """Both native implementations; each says itself when it cannot run here."""
    return (NativeLiboqs(), NativeLibcrypto())

"""liboqs through liboqs-python (`liboqs-python` rows): what a Python application sees."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from types import ModuleType
from typing import Any

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations import liboqs_kat, schemes
from pqbench.libraries.implementations.base import (
    Check,
    Implementation,
    TimedOperation,
    VectorCheck,
)
from pqbench.platform.errors import ImplementationUnavailable, NotOfferedError


def _details_sizes(details: dict[str, Any]) -> dict[str, int]:
    names = {"length_public_key": "public_key", "length_secret_key": "secret_key"}
    return {ours: int(details[theirs]) for theirs, ours in names.items()}


class _OqsKem(schemes.KemScheme):
    """liboqs-python keeps the secret key inside its KeyEncapsulation object."""

    def __init__(self, oqs: ModuleType, name: str) -> None:
        self.oqs, self.name = oqs, name

    def keygen(self) -> tuple[Any, Any]:
        kem = self.oqs.KeyEncapsulation(self.name)
        return kem.generate_keypair(), kem

    def keygen_call(self) -> schemes.Call:
        return self.oqs.KeyEncapsulation(self.name).generate_keypair

    def encaps(self, public: Any) -> tuple[bytes, bytes]:
        ciphertext, shared = self.oqs.KeyEncapsulation(self.name).encap_secret(public)
        return bytes(ciphertext), bytes(shared)

    def encaps_call(self, public: Any) -> schemes.Call:
        return partial(self.oqs.KeyEncapsulation(self.name).encap_secret, public)

    def decaps(self, secret: Any, ciphertext: bytes) -> bytes:
        return bytes(secret.decap_secret(ciphertext))

    def decaps_call(self, secret: Any, ciphertext: bytes) -> schemes.Call:
        return partial(secret.decap_secret, ciphertext)

    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]:
        return _details_sizes(secret.details)


class _OqsSignature(schemes.SignatureScheme):
    def __init__(self, oqs: ModuleType, name: str) -> None:
        self.oqs, self.name = oqs, name

    def keygen(self) -> tuple[Any, Any]:
        signer = self.oqs.Signature(self.name)
        return signer.generate_keypair(), signer

    def keygen_call(self) -> schemes.Call:
        return self.oqs.Signature(self.name).generate_keypair

    def sign(self, secret: Any, message: bytes) -> bytes:
        return bytes(secret.sign(message))

    def sign_call(self, secret: Any, message: bytes) -> schemes.Call:
        return partial(secret.sign, message)

    def verify(self, public: Any, message: bytes, signature: bytes) -> bool:
        return bool(self.oqs.Signature(self.name).verify(message, signature, public))

    def verify_call(self, public: Any, message: bytes, signature: bytes) -> schemes.Call:
        return partial(self.oqs.Signature(self.name).verify, message, signature, public)

    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]:
        return _details_sizes(secret.details)


class LiboqsPythonImplementation(Implementation):
    name = "liboqs-python"
    description = "liboqs called through the liboqs-python ctypes binding"
    kinds = frozenset({"kem", "signature"})

    def in_scope(self, alg: Algorithm) -> bool:
        # liboqs is about post-quantum schemes: nobody expects Ed25519 or RSA from it.
        return alg.liboqs_name is not None

    def __init__(self) -> None:
        self._oqs: ModuleType | None = None
        self._error: str | None = None

    def _module(self) -> ModuleType:
        if self._oqs is None and self._error is None:
            from pqbench.libraries.liboqs import import_oqs

            try:
                self._oqs = import_oqs()
            except ImplementationUnavailable as exc:
                self._error = str(exc)
        if self._oqs is None:
            raise ImplementationUnavailable(self._error or "liboqs-python is unavailable")
        return self._oqs

    def unavailable_reason(self) -> str | None:
        try:
            self._module()
        except ImplementationUnavailable as exc:
            return str(exc)
        return None

    def enabled_kems(self) -> tuple[str, ...]:
        return tuple(self._module().get_enabled_kem_mechanisms()) if not self._error else ()

    def enabled_signatures(self) -> tuple[str, ...]:
        return tuple(self._module().get_enabled_sig_mechanisms()) if not self._error else ()

    def versions(self) -> dict[str, object]:
        if self.unavailable_reason():
            return {}
        oqs = self._module()
        return {"liboqs": oqs.oqs_version(), "liboqs-python": oqs.oqs_python_version()}

    def details(self) -> dict[str, dict[str, object]]:
        from pqbench.libraries.liboqs import loaded_install

        if self.unavailable_reason():
            return {}
        install = loaded_install()
        return {"liboqs": install.to_dict()} if install else {}

    def offers(self, alg: Algorithm, operation: str) -> str | None:
        reason = self.unavailable_reason()
        if reason:
            return reason
        if alg.liboqs_name is None:
            return f"liboqs does not implement {alg.name}"
        enabled = self.enabled_kems() if alg.kind == "kem" else self.enabled_signatures()
        if alg.liboqs_name not in enabled:
            return f"{alg.liboqs_name} is not enabled in the loaded liboqs"
        if operation not in alg.all_operations:
            return f"{alg.name} has no {operation!r} operation"
        return None

    def _scheme(self, alg: Algorithm, operation: str) -> Any:
        reason = self.offers(alg, operation)
        if reason:
            raise NotOfferedError(reason)
        oqs = self._module()
        name = str(alg.liboqs_name)
        return _OqsKem(oqs, name) if alg.kind == "kem" else _OqsSignature(oqs, name)

    def vector_checks(self, alg: Algorithm) -> Mapping[str, VectorCheck | str]:
        return liboqs_kat.vector_checks(alg)

    def self_check(self, alg: Algorithm) -> list[Check]:
        scheme = self._scheme(alg, alg.operations[0])
        if isinstance(scheme, _OqsKem):
            # FIPS 203 section 6.3 makes implicit rejection part of ML-KEM; other KEMs may
            # refuse a tampered ciphertext with an error instead.
            return schemes.check_kem(scheme, implicit_rejection=alg.family == "ML-KEM")
        return schemes.check_signature(scheme)

    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        scheme = self._scheme(alg, operation)
        if isinstance(scheme, _OqsKem):
            return schemes.prepare_kem(scheme, operation)
        return schemes.prepare_signature(scheme, operation)

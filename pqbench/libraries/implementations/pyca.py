"""pyca/cryptography with the OpenSSL it bundles (`cryptography` rows)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import cryptography
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.backends.openssl import backend
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations import pyca_kat, pyca_symmetric, schemes
from pqbench.libraries.implementations.base import (
    Check,
    Implementation,
    PythonOperation,
    TimedOperation,
    VectorCheck,
)
from pqbench.libraries.implementations.pyca_keys import CURVES, EDDSA, HASHES, MLDSA, MLKEM, XDH
from pqbench.platform.errors import NotOfferedError

_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)
_DER_PKCS8 = (serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
              serialization.NoEncryption())



class _MlKem(schemes.KemScheme):
    def __init__(self, key_class: Any) -> None:
        self.key_class = key_class

    def keygen(self) -> tuple[Any, Any]:
        secret = self.key_class.generate()
        return secret.public_key(), secret

    def keygen_call(self) -> schemes.Call:
        return self.key_class.generate

    def encaps(self, public: Any) -> tuple[bytes, bytes]:
        shared, ciphertext = public.encapsulate()
        return ciphertext, shared

    def encaps_call(self, public: Any) -> schemes.Call:
        return public.encapsulate

    def decaps(self, secret: Any, ciphertext: bytes) -> bytes:
        return bytes(secret.decapsulate(ciphertext))

    def decaps_call(self, secret: Any, ciphertext: bytes) -> schemes.Call:
        return partial(secret.decapsulate, ciphertext)

    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]:
        # cryptography keeps ML-KEM private keys in the 64-byte seed form (FIPS 203, 7.1).
        return {"public_key": len(public.public_bytes_raw()),
                "secret_key": len(secret.private_bytes_raw())}


class _Generated:
    """Key pairs from a zero-argument generator; `args` go to sign/verify or exchange."""

    def __init__(self, generate: schemes.Call, args: tuple[Any, ...] = ()) -> None:
        self.generate = generate
        self.args = args

    def keygen(self) -> tuple[Any, Any]:
        secret = self.generate()
        return secret.public_key(), secret  # type: ignore[attr-defined]

    def keygen_call(self) -> schemes.Call:
        return self.generate

    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]:
        return _key_sizes(public, secret)


class _Signer(_Generated, schemes.SignatureScheme):
    """ML-DSA, EdDSA, ECDSA and RSA PKCS#1 v1.5 behind one shape."""

    def sign(self, secret: Any, message: bytes) -> bytes:
        return bytes(secret.sign(message, *self.args))

    def sign_call(self, secret: Any, message: bytes) -> schemes.Call:
        return partial(secret.sign, message, *self.args)

    def verify(self, public: Any, message: bytes, signature: bytes) -> bool:
        try:
            public.verify(signature, message, *self.args)
        except InvalidSignature:
            return False
        return True

    def verify_call(self, public: Any, message: bytes, signature: bytes) -> schemes.Call:
        return partial(public.verify, signature, message, *self.args)


class _Agreement(_Generated, schemes.AgreementScheme):
    """X25519/X448 and ECDH behind one shape."""

    def derive(self, secret: Any, peer_public: Any) -> bytes:
        return bytes(secret.exchange(*self.args, peer_public))

    def derive_call(self, secret: Any, peer_public: Any) -> schemes.Call:
        return partial(secret.exchange, *self.args, peer_public)


class _RsaOaep(schemes.EncryptionScheme):
    """RSA key transport with OAEP-SHA256 (RFC 8017, 7.1), as new protocols would use."""

    pad = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)

    def encrypt(self, public: Any, message: bytes) -> bytes:
        return bytes(public.encrypt(message, self.pad))

    def encrypt_call(self, public: Any, message: bytes) -> schemes.Call:
        return partial(public.encrypt, message, self.pad)

    def decrypt(self, secret: Any, ciphertext: bytes) -> bytes:
        return bytes(secret.decrypt(ciphertext, self.pad))

    def decrypt_call(self, secret: Any, ciphertext: bytes) -> schemes.Call:
        return partial(secret.decrypt, ciphertext, self.pad)


def _key_sizes(public: Any, secret: Any) -> dict[str, int]:
    """Wire sizes: raw keys where a raw form exists, X9.62 points, DER for RSA."""
    if isinstance(public, ec.EllipticCurvePublicKey):
        pub = public.public_bytes(serialization.Encoding.X962,
                                  serialization.PublicFormat.UncompressedPoint)
        return {"public_key": len(pub), "secret_key": (public.curve.key_size + 7) // 8}
    if isinstance(public, rsa.RSAPublicKey):
        pub = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
        return {"public_key": len(pub), "secret_key": len(secret.private_bytes(*_DER_PKCS8))}
    if hasattr(public, "public_bytes_raw"):
        return {"public_key": len(public.public_bytes_raw()),
                "secret_key": len(secret.private_bytes_raw())}
    return {"public_key": len(public.public_bytes(*_RAW)),
            "secret_key": len(secret.private_bytes(*_DER_PKCS8))}


class PycaImplementation(Implementation):
    name = "cryptography"
    description = "pyca/cryptography and the OpenSSL it bundles"
    kinds = frozenset({"kem", "signature", "key-agreement", "rsa", "cipher"})

    def __init__(self) -> None:
        self._rsa_keys: dict[int, Any] = {}

    def versions(self) -> dict[str, object]:
        return {"cryptography": cryptography.__version__,
                "cryptography_openssl": backend.openssl_version_text()}

    def _scheme(self, alg: Algorithm) -> Any:
        name = alg.name
        if name in MLKEM:
            return _MlKem(MLKEM[name])
        if name in MLDSA:
            return _Signer(MLDSA[name][0].generate)
        if name in EDDSA:
            return _Signer(EDDSA[name][0].generate)
        if name in XDH:
            return _Agreement(XDH[name][0].generate)
        curve = alg.param("curve")
        if alg.family == "ECDSA":
            digest = HASHES[str(alg.param("hash"))]()
            return _Signer(partial(ec.generate_private_key, CURVES[str(curve)]()),
                           (ec.ECDSA(digest),))
        if alg.family == "ECDH":
            return _Agreement(partial(ec.generate_private_key, CURVES[str(curve)]()), (ec.ECDH(),))
        if alg.family == "RSA":
            bits = alg.int_param("modulus_bits")
            return _Signer(partial(rsa.generate_private_key, 65537, bits),
                           (padding.PKCS1v15(), hashes.SHA256()))
        return None

    def offers(self, alg: Algorithm, operation: str) -> str | None:
        if alg.kind == "cipher":
            return pyca_symmetric.offers(alg, operation)
        if alg.kind in ("kem", "signature", "key-agreement", "rsa") and self._scheme(alg) is None:
            if alg.family == "ML-KEM" and MLKEM:
                return f"cryptography {cryptography.__version__} exposes ML-KEM-768/1024 only"
            return f"cryptography {cryptography.__version__} does not expose {alg.name}"
        if alg.kind not in ("kem", "signature", "key-agreement", "rsa"):
            return f"{alg.kind} algorithms are measured by another module"
        if operation not in alg.all_operations:
            return f"{alg.name} has no {operation!r} operation"
        return None

    def vector_checks(self, alg: Algorithm) -> Mapping[str, VectorCheck | str]:
        return pyca_kat.vector_checks(alg)

    def _require(self, alg: Algorithm, operation: str) -> Any:
        reason = self.offers(alg, operation)
        if reason:
            raise NotOfferedError(reason)
        return self._scheme(alg)

    def _rsa_key(self, alg: Algorithm, scheme: _Signer) -> tuple[Any, Any]:
        # RSA key generation takes up to seconds: make one key per size and reuse it.
        bits = alg.int_param("modulus_bits")
        if bits not in self._rsa_keys:
            self._rsa_keys[bits] = scheme.keygen()
        return self._rsa_keys[bits]

    def self_check(self, alg: Algorithm) -> list[Check]:
        if alg.kind == "cipher":
            return pyca_symmetric.self_check(alg)
        scheme = self._require(alg, alg.all_operations[0])
        if isinstance(scheme, _MlKem):
            return schemes.check_kem(scheme)
        if isinstance(scheme, _Agreement):
            return schemes.check_agreement(scheme)
        if alg.family == "RSA":
            public, secret = self._rsa_key(alg, scheme)
            cached = _FixedKeys(scheme, public, secret)
            return schemes.check_signature(cached) + schemes.check_encryption(
                _RsaOaep(), public, secret)
        return schemes.check_signature(scheme)

    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        if alg.kind == "cipher":
            return pyca_symmetric.prepare(alg, operation, block_size)
        scheme = self._require(alg, operation)
        if isinstance(scheme, _MlKem):
            return schemes.prepare_kem(scheme, operation)
        if isinstance(scheme, _Agreement):
            return schemes.prepare_agreement(scheme, operation)
        if alg.family == "RSA":
            return self._prepare_rsa(alg, scheme, operation)
        return schemes.prepare_signature(scheme, operation)

    def _prepare_rsa(self, alg: Algorithm, scheme: _Signer, operation: str) -> TimedOperation:
        public, secret = self._rsa_key(alg, scheme)
        if operation in ("sign", "verify"):
            return schemes.prepare_signature(_FixedKeys(scheme, public, secret), operation)
        if operation == "keygen":
            return PythonOperation(scheme.keygen_call(), _key_sizes(public, secret))
        oaep = _RsaOaep()
        ciphertext = oaep.encrypt(public, schemes.MESSAGE)
        sizes = {**_key_sizes(public, secret), "ciphertext": len(ciphertext),
                 "message": len(schemes.MESSAGE)}
        call = (oaep.encrypt_call(public, schemes.MESSAGE) if operation == "encrypt"
                else oaep.decrypt_call(secret, ciphertext))
        return PythonOperation(call, sizes)


class _FixedKeys(schemes.SignatureScheme):
    """A signer whose keygen returns one cached key pair (RSA keys are slow to make)."""

    def __init__(self, inner: _Signer, public: Any, secret: Any) -> None:
        self.inner, self.public, self.secret = inner, public, secret

    def keygen(self) -> tuple[Any, Any]:
        return self.public, self.secret

    def keygen_call(self) -> schemes.Call:
        return self.inner.keygen_call()

    def sign(self, secret: Any, message: bytes) -> bytes:
        return self.inner.sign(secret, message)

    def sign_call(self, secret: Any, message: bytes) -> schemes.Call:
        return self.inner.sign_call(secret, message)

    def verify(self, public: Any, message: bytes, signature: bytes) -> bool:
        return self.inner.verify(public, message, signature)

    def verify_call(self, public: Any, message: bytes, signature: bytes) -> schemes.Call:
        return self.inner.verify_call(public, message, signature)

    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]:
        return self.inner.key_sizes(public, secret)

"""Scheme adapters: one shape per kind, so checks and set-up are written once.

An implementation maps an Algorithm to a scheme; the generic functions below then check it
(round trip, tamper rejection) and prepare each operation outside the clock. The timed
callables are bound methods or `functools.partial` objects, so the Python loop calls the
library directly with no adapter frame in between.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pqbench.libraries.implementations.base import Check, PythonOperation
from pqbench.platform.errors import NotOfferedError, VerificationError

#: Message signed in every signature benchmark (liboqs speed_sig and openssl speed sign
#: short messages too; the size is recorded with the result).
MESSAGE = bytes(range(32))

Call = Callable[[], object]


def _flip(data: bytes, index: int = 0) -> bytes:
    """The same bytes with one bit changed: the smallest possible tampering."""
    mutable = bytearray(data)
    mutable[index] ^= 0x01
    return bytes(mutable)


class KemScheme(ABC):
    """Key encapsulation: keygen, encaps(public), decaps(secret, ciphertext)."""

    @abstractmethod
    def keygen(self) -> tuple[Any, Any]: ...
    @abstractmethod
    def keygen_call(self) -> Call: ...
    @abstractmethod
    def encaps(self, public: Any) -> tuple[bytes, bytes]:
        """Returns (ciphertext, shared_secret)."""
    @abstractmethod
    def encaps_call(self, public: Any) -> Call: ...
    @abstractmethod
    def decaps(self, secret: Any, ciphertext: bytes) -> bytes: ...
    @abstractmethod
    def decaps_call(self, secret: Any, ciphertext: bytes) -> Call: ...
    @abstractmethod
    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]: ...


class SignatureScheme(ABC):
    """Signatures: keygen, sign(secret, message), verify(public, message, signature)."""

    @abstractmethod
    def keygen(self) -> tuple[Any, Any]: ...
    @abstractmethod
    def keygen_call(self) -> Call: ...
    @abstractmethod
    def sign(self, secret: Any, message: bytes) -> bytes: ...
    @abstractmethod
    def sign_call(self, secret: Any, message: bytes) -> Call: ...
    @abstractmethod
    def verify(self, public: Any, message: bytes, signature: bytes) -> bool: ...
    @abstractmethod
    def verify_call(self, public: Any, message: bytes, signature: bytes) -> Call: ...
    @abstractmethod
    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]: ...


class AgreementScheme(ABC):
    """Diffie-Hellman style key agreement: keygen, derive(secret, peer_public)."""

    @abstractmethod
    def keygen(self) -> tuple[Any, Any]: ...
    @abstractmethod
    def keygen_call(self) -> Call: ...
    @abstractmethod
    def derive(self, secret: Any, peer_public: Any) -> bytes: ...
    @abstractmethod
    def derive_call(self, secret: Any, peer_public: Any) -> Call: ...
    @abstractmethod
    def key_sizes(self, public: Any, secret: Any) -> dict[str, int]: ...


class EncryptionScheme(ABC):
    """Public-key encryption (RSA key transport): encrypt(public, m), decrypt(secret, c)."""

    @abstractmethod
    def encrypt(self, public: Any, message: bytes) -> bytes: ...
    @abstractmethod
    def encrypt_call(self, public: Any, message: bytes) -> Call: ...
    @abstractmethod
    def decrypt(self, secret: Any, ciphertext: bytes) -> bytes:
        """Raises on a ciphertext that does not decrypt."""
    @abstractmethod
    def decrypt_call(self, secret: Any, ciphertext: bytes) -> Call: ...


# --- checks: run before anything is timed ---------------------------------------------


def check_kem(scheme: KemScheme, *, implicit_rejection: bool = True) -> list[Check]:
    """Round trip, then rejection of a tampered ciphertext.

    ML-KEM must reject implicitly: decapsulating a tampered ciphertext returns a different
    secret and no error (FIPS 203, section 6.3). Other KEMs (``implicit_rejection=False``,
    e.g. liboqs 0.13's HQC, which computes the rejection key but also returns an error)
    pass when the tampered ciphertext either yields another secret or is refused.
    """
    public, secret = scheme.keygen()
    ciphertext, shared = scheme.encaps(public)
    if scheme.decaps(secret, ciphertext) != shared:
        raise VerificationError("decapsulation did not return the encapsulated secret")
    try:
        rejected = scheme.decaps(secret, _flip(ciphertext))
    except Exception as exc:
        if implicit_rejection:
            raise VerificationError(
                f"tampered ciphertext raised instead of implicit rejection: {exc}") from exc
        return [Check("round trip"), Check("tamper rejection", "tampered ciphertext refused")]
    if rejected == shared:
        raise VerificationError("a tampered ciphertext decapsulated to the real shared secret")
    name = "implicit rejection" if implicit_rejection else "tamper rejection"
    return [Check("round trip"), Check(name, "tampered ciphertext -> other secret")]


def check_signature(scheme: SignatureScheme) -> list[Check]:
    """Round trip; a tampered signature and a tampered message are both rejected."""
    public, secret = scheme.keygen()
    signature = scheme.sign(secret, MESSAGE)
    if not scheme.verify(public, MESSAGE, signature):
        raise VerificationError("a fresh signature did not verify")
    if scheme.verify(public, MESSAGE, _flip(signature, len(signature) // 2)):
        raise VerificationError("a tampered signature verified")
    if scheme.verify(public, _flip(MESSAGE), signature):
        raise VerificationError("a signature verified for a different message")
    return [Check("round trip"), Check("tampered signature rejected"),
            Check("tampered message rejected")]


def check_agreement(scheme: AgreementScheme) -> list[Check]:
    """Both sides of an exchange derive the same secret; a third party does not."""
    public_a, secret_a = scheme.keygen()
    public_b, secret_b = scheme.keygen()
    public_c, _ = scheme.keygen()
    shared = scheme.derive(secret_a, public_b)
    if shared != scheme.derive(secret_b, public_a):
        raise VerificationError("the two sides derived different secrets")
    if shared == scheme.derive(secret_a, public_c):
        raise VerificationError("a different peer gave the same secret")
    return [Check("both sides agree"), Check("other peer differs")]


def check_encryption(scheme: EncryptionScheme, public: Any, secret: Any) -> list[Check]:
    """decrypt(encrypt(m)) == m, and a tampered ciphertext does not decrypt to m."""
    ciphertext = scheme.encrypt(public, MESSAGE)
    if scheme.decrypt(secret, ciphertext) != MESSAGE:
        raise VerificationError("decryption did not return the message")
    try:
        tampered = scheme.decrypt(secret, _flip(ciphertext, len(ciphertext) - 1))
    except Exception:
        tampered = None
    if tampered == MESSAGE:
        raise VerificationError("a tampered ciphertext decrypted to the message")
    return [Check("encrypt/decrypt round trip"), Check("tampered ciphertext rejected")]


# --- preparation: everything but the operation happens here ----------------------------


def prepare_kem(scheme: KemScheme, operation: str) -> PythonOperation:
    public, secret = scheme.keygen()
    ciphertext, shared = scheme.encaps(public)
    sizes = scheme.key_sizes(public, secret)
    sizes.update(ciphertext=len(ciphertext), shared_secret=len(shared))
    calls = {
        "keygen": scheme.keygen_call,
        "encaps": lambda: scheme.encaps_call(public),
        "decaps": lambda: scheme.decaps_call(secret, ciphertext),
    }
    return PythonOperation(_pick(calls, operation)(), sizes)


def prepare_signature(scheme: SignatureScheme, operation: str) -> PythonOperation:
    public, secret = scheme.keygen()
    signature = scheme.sign(secret, MESSAGE)
    sizes = scheme.key_sizes(public, secret)
    sizes.update(signature=len(signature), message=len(MESSAGE))
    calls = {
        "keygen": scheme.keygen_call,
        "sign": lambda: scheme.sign_call(secret, MESSAGE),
        "verify": lambda: scheme.verify_call(public, MESSAGE, signature),
    }
    return PythonOperation(_pick(calls, operation)(), sizes)


def prepare_agreement(scheme: AgreementScheme, operation: str) -> PythonOperation:
    public, secret = scheme.keygen()
    peer_public, _ = scheme.keygen()
    sizes = scheme.key_sizes(public, secret)
    sizes["shared_secret"] = len(scheme.derive(secret, peer_public))
    calls = {
        "keygen": scheme.keygen_call,
        "derive": lambda: scheme.derive_call(secret, peer_public),
    }
    return PythonOperation(_pick(calls, operation)(), sizes)


def _pick(calls: dict[str, Callable[[], Call]], operation: str) -> Callable[[], Call]:
    try:
        return calls[operation]
    except KeyError:
        raise NotOfferedError(f"operation {operation!r} is not one of {sorted(calls)}") from None

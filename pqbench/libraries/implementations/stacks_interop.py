"""A foreign implementation's checks before timing: its own round trip and tamper checks,
then interoperability both ways with an independent implementation in this process.

Post-quantum schemes are set against liboqs (through liboqs-python), or cryptography where
liboqs is unavailable here; X25519, P-256 and Ed25519 against pyca/cryptography. Each
check says which partner answered. A wrong answer raises VerificationError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.libraries.implementations.base import Check
from pqbench.platform.errors import NotOfferedError, VerificationError

MESSAGE = bytes(range(32))
_RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw
_POINT = serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint


class Tested(Protocol):
    """The implementation under test, as its worker's correctness requests
    (`implementations.stacks.StackImplementation`)."""

    name: str

    def keygen(self, alg: Algorithm, seed: bytes | None = None) -> tuple[str, bytes]: ...
    def encaps(self, alg: Algorithm, public: bytes,
               random: bytes | None = None) -> tuple[bytes, bytes]: ...
    def decaps(self, alg: Algorithm, key: str, ciphertext: bytes) -> bytes: ...
    def sign(self, alg: Algorithm, key: str, message: bytes, context: bytes = b"",
             deterministic: bool = False) -> bytes: ...
    def verify(self, alg: Algorithm, public: bytes, message: bytes, signature: bytes,
               context: bytes = b"") -> bool: ...
    def derive(self, alg: Algorithm, key: str, peer: bytes) -> bytes: ...


def _flip(data: bytes, index: int = 0) -> bytes:
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise VerificationError(what)


@dataclass(frozen=True)
class Kem:
    """A partner's KEM: keygen -> (public, secret), encaps(public), decaps(secret, ct)."""

    name: str
    keygen: Callable[[], tuple[bytes, Any]]
    encaps: Callable[[bytes], tuple[bytes, bytes]]
    decaps: Callable[[Any, bytes], bytes]


@dataclass(frozen=True)
class Signer:
    """A partner's signature scheme over raw public keys."""

    name: str
    keygen: Callable[[], tuple[bytes, Any]]
    sign: Callable[[Any, bytes], bytes]
    verify: Callable[[bytes, bytes, bytes], bool]


def _liboqs_usable() -> bool:
    from pqbench.libraries.implementations.liboqs_python import LiboqsPythonImplementation

    return LiboqsPythonImplementation().unavailable_reason() is None


def _liboqs_kem(alg: Algorithm) -> Kem:
    from pqbench.libraries.liboqs import import_oqs

    oqs = import_oqs()

    def keygen() -> tuple[bytes, Any]:
        kem = oqs.KeyEncapsulation(alg.liboqs_name)
        return bytes(kem.generate_keypair()), kem

    def encaps(public: bytes) -> tuple[bytes, bytes]:
        ct, ss = oqs.KeyEncapsulation(alg.liboqs_name).encap_secret(public)
        return bytes(ct), bytes(ss)

    return Kem("liboqs", keygen, encaps, lambda kem, ct: bytes(kem.decap_secret(ct)))


def _pyca_kem(alg: Algorithm) -> Kem | None:
    from pqbench.libraries.implementations.pyca_keys import MLKEM

    private = MLKEM.get(alg.name)
    if private is None:
        return None

    def keygen() -> tuple[bytes, Any]:
        key = private.generate()
        return key.public_key().public_bytes_raw(), key

    def encaps(public: bytes) -> tuple[bytes, bytes]:
        shared, ct = type(private.generate().public_key()).from_public_bytes(
            public).encapsulate()
        return bytes(ct), bytes(shared)

    return Kem("cryptography", keygen, encaps, lambda key, ct: bytes(key.decapsulate(ct)))


def _liboqs_signer(alg: Algorithm) -> Signer:
    from pqbench.libraries.liboqs import import_oqs

    oqs = import_oqs()

    def keygen() -> tuple[bytes, Any]:
        signer = oqs.Signature(alg.liboqs_name)
        return bytes(signer.generate_keypair()), signer

    def verify(public: bytes, message: bytes, signature: bytes) -> bool:
        return bool(oqs.Signature(alg.liboqs_name).verify(message, signature, public))

    return Signer("liboqs", keygen, lambda s, m: bytes(s.sign(m)), verify)


def _verifies(call: Callable[[], object]) -> bool:
    try:
        call()
    except (InvalidSignature, ValueError):
        return False
    return True


def _pyca_signer(alg: Algorithm) -> Signer | None:
    from pqbench.libraries.implementations.pyca_keys import MLDSA

    if alg.name == "Ed25519":
        def keygen() -> tuple[bytes, Any]:
            key = ed25519.Ed25519PrivateKey.generate()
            return key.public_key().public_bytes(*_RAW), key

        return Signer("cryptography", keygen, lambda k, m: k.sign(m),
                      lambda p, m, s: _verifies(lambda: ed25519.Ed25519PublicKey
                                                .from_public_bytes(p).verify(s, m)))
    if alg.name == "ECDSA-P-256":
        def ec_keygen() -> tuple[bytes, Any]:
            key = ec.generate_private_key(ec.SECP256R1())
            return key.public_key().public_bytes(*_POINT), key

        def ec_verify(public: bytes, message: bytes, signature: bytes) -> bool:
            key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
            return _verifies(lambda: key.verify(signature, message, ec.ECDSA(hashes.SHA256())))

        return Signer("cryptography", ec_keygen,
                      lambda k, m: k.sign(m, ec.ECDSA(hashes.SHA256())), ec_verify)
    classes = MLDSA.get(alg.name)
    if classes is None:
        return None
    private, public_class = classes

    def dsa_keygen() -> tuple[bytes, Any]:
        key = private.generate()
        return key.public_key().public_bytes_raw(), key

    return Signer("cryptography", dsa_keygen, lambda k, m: k.sign(m),
                  lambda p, m, s: _verifies(lambda: public_class.from_public_bytes(p)
                                            .verify(s, m)))


def check(impl: Tested, alg: Algorithm) -> list[Check]:
    """Every check of `alg` through `impl`'s worker; VerificationError on a wrong answer,
    NotOfferedError when no partner here can check it."""
    if alg.kind == "kem":
        return _check_kem(impl, alg)
    if alg.kind == "signature":
        return _check_signature(impl, alg)
    if alg.kind == "key-agreement":
        return _check_agreement(impl, alg)
    raise NotOfferedError(f"{impl.name} workers serve KEMs, signatures and key agreement")


def _check_kem(impl: Tested, alg: Algorithm) -> list[Check]:
    key, public = impl.keygen(alg)
    ct, shared = impl.encaps(alg, public)
    _require(impl.decaps(alg, key, ct) == shared,
             f"{impl.name}: decapsulation did not return the encapsulated secret")
    rejected = impl.decaps(alg, key, _flip(ct))
    _require(rejected != shared and len(rejected) == len(shared),
             f"{impl.name}: a tampered ciphertext did not decapsulate to another secret "
             "(FIPS 203 implicit rejection)")
    checks = [Check("round trip"), Check("implicit rejection",
                                         "tampered ciphertext -> other secret")]
    partner = _liboqs_kem(alg) if alg.liboqs_name and _liboqs_usable() else _pyca_kem(alg)
    if partner is None:
        raise NotOfferedError(f"no implementation here can check {impl.name}'s {alg.name} "
                              "(liboqs is unavailable and cryptography lacks it)")
    # Ours -> theirs: the partner encapsulates to our key, we decapsulate.
    their_ct, their_ss = partner.encaps(public)
    _require(impl.decaps(alg, key, their_ct) == their_ss,
             f"{impl.name} decapsulated {partner.name}'s ciphertext to another secret")
    # Theirs -> ours: we encapsulate to the partner's key, it decapsulates.
    their_public, their_secret = partner.keygen()
    our_ct, our_ss = impl.encaps(alg, their_public)
    _require(partner.decaps(their_secret, our_ct) == our_ss,
             f"{partner.name} decapsulated {impl.name}'s ciphertext to another secret")
    _require(partner.decaps(their_secret, _flip(our_ct)) != our_ss,
             f"{partner.name} accepted a tampered ciphertext of {impl.name}")
    return [*checks, Check(f"interop with {partner.name}",
                           "each decapsulates the other's ciphertext to the same secret")]


def _check_signature(impl: Tested, alg: Algorithm) -> list[Check]:
    key, public = impl.keygen(alg)
    signature = impl.sign(alg, key, MESSAGE)
    _require(impl.verify(alg, public, MESSAGE, signature),
             f"{impl.name}: a fresh signature did not verify")
    _require(not impl.verify(alg, public, MESSAGE, _flip(signature, len(signature) // 2)),
             f"{impl.name}: a tampered signature verified")
    _require(not impl.verify(alg, public, _flip(MESSAGE), signature),
             f"{impl.name}: a signature verified for a different message")
    checks = [Check("round trip"), Check("tampered signature rejected"),
              Check("tampered message rejected")]
    partner = None
    if alg.liboqs_name and _liboqs_usable():
        partner = _liboqs_signer(alg)
    if partner is None:
        partner = _pyca_signer(alg)
    if partner is None:
        raise NotOfferedError(f"no implementation here can check {impl.name}'s {alg.name}")
    _require(partner.verify(public, MESSAGE, signature),
             f"{partner.name} rejected {impl.name}'s signature")
    _require(not partner.verify(public, MESSAGE, _flip(signature, len(signature) // 2)),
             f"{partner.name} accepted a tampered signature of {impl.name}")
    their_public, their_secret = partner.keygen()
    theirs = partner.sign(their_secret, MESSAGE)
    _require(impl.verify(alg, their_public, MESSAGE, theirs),
             f"{impl.name} rejected {partner.name}'s signature")
    _require(not impl.verify(alg, their_public, MESSAGE, _flip(theirs, len(theirs) // 2)),
             f"{impl.name} accepted a tampered signature of {partner.name}")
    return [*checks, Check(f"interop with {partner.name}",
                           "each verifies the other's signature and rejects it tampered")]


def _check_agreement(impl: Tested, alg: Algorithm) -> list[Check]:
    key_a, public_a = impl.keygen(alg)
    key_b, public_b = impl.keygen(alg)
    _, public_c = impl.keygen(alg)
    shared = impl.derive(alg, key_a, public_b)
    _require(shared == impl.derive(alg, key_b, public_a),
             f"{impl.name}: the two sides derived different secrets")
    _require(shared != impl.derive(alg, key_a, public_c),
             f"{impl.name}: a different peer gave the same secret")
    if alg.name == "X25519":
        theirs: Any = x25519.X25519PrivateKey.generate()
        their_public = theirs.public_key().public_bytes(*_RAW)
        peer = x25519.X25519PublicKey.from_public_bytes(public_a)
        expected = theirs.exchange(peer)
    elif alg.name == "ECDH-P-256":
        theirs = ec.generate_private_key(ec.SECP256R1())
        their_public = theirs.public_key().public_bytes(*_POINT)
        expected = theirs.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(
            ec.SECP256R1(), public_a))
    else:
        raise NotOfferedError(f"no implementation here can check {impl.name}'s {alg.name}")
    _require(impl.derive(alg, key_a, their_public) == expected,
             f"{impl.name} and cryptography derived different secrets")
    checks = [Check("both sides agree"), Check("other peer differs"),
              Check("interop with cryptography", "both derive the same secret")]
    if alg.name == "ECDH-P-256":
        # A point off the curve must be refused (SP 800-56A 5.6.2.3.4), and the worker
        # must live on to answer the next request.
        off_curve = public_b[:-1] + bytes([public_b[-1] ^ 0x01])
        try:
            refused = impl.derive(alg, key_a, off_curve) is None
        except (VerificationError, NotOfferedError):
            refused = True
        _require(refused, f"{impl.name} derived a secret with a point off the curve")
        _require(impl.derive(alg, key_a, public_b) == shared,
                 f"{impl.name} answered wrongly after refusing an invalid point")
        checks.append(Check("invalid point refused"))
    return checks

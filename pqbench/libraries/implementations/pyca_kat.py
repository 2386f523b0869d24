"""cryptography's known-answer checks: what its API can reproduce of each published vector.

`vector_checks(alg)` names each check for an algorithm and gives the per-vector function,
or the reason cryptography's API cannot express it (hedged ML-DSA signing has no
deterministic form, say). `checks.kat` loads the vectors and tallies the answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.vectors import Vector, hex_field, signature_of
from pqbench.libraries.implementations.base import VectorCheck
from pqbench.libraries.implementations.pyca_keys import CURVES, EDDSA, HASHES, MLDSA, MLKEM, XDH

# --- ML-KEM (FIPS 203) ------------------------------------------------------------------


def _mlkem_key(alg: Algorithm, v: Vector) -> Any:
    # FIPS 203 7.1: the 64-byte seed d||z determines the whole key pair.
    return MLKEM[alg.name].from_seed_bytes(hex_field(v, "d") + hex_field(v, "z"))


def _kem_keygen(alg: Algorithm, v: Vector) -> bool | str:
    return _mlkem_key(alg, v).public_key().public_bytes_raw() == hex_field(v, "pk")


def _decaps(ct: str, ss: str) -> VectorCheck:
    def check(alg: Algorithm, v: Vector) -> bool | str:
        return _mlkem_key(alg, v).decapsulate(hex_field(v, ct)) == hex_field(v, ss)
    return check


# --- ML-DSA (FIPS 204) ------------------------------------------------------------------


def _dsa_keygen(alg: Algorithm, v: Vector) -> bool | str:
    key = MLDSA[alg.name][0].from_seed_bytes(hex_field(v, "xi"))
    return key.public_key().public_bytes_raw() == hex_field(v, "pk")


def _dsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    public = MLDSA[alg.name][1].from_public_bytes(hex_field(v, "pk"))
    return _verifies(lambda: public.verify(signature_of(v), hex_field(v, "msg"),
                                           hex_field(v, "ctx")))


def _verifies(call: Callable[[], object]) -> bool:
    try:
        call()
    except InvalidSignature:
        return False
    return True


# --- classical schemes ------------------------------------------------------------------


def _xdh_derive(alg: Algorithm, v: Vector) -> bool | str:
    # RFC 7748 5: X25519/X448(scalar, u) -> u; 6.x key exchange is two of these each.
    private_class, public_class = XDH[alg.name]
    secret = private_class.from_private_bytes(hex_field(v, "INPUT_SCALAR"))
    return secret.exchange(public_class.from_public_bytes(hex_field(v, "INPUT_U"))) == \
        hex_field(v, "OUTPUT_U")


_NO_CONTEXT = "cryptography's Ed448 API takes no context string (RFC 8032 5.2 Ed448 ctx)"


def _eddsa_keygen(alg: Algorithm, v: Vector) -> bool | str:
    secret = EDDSA[alg.name][0].from_private_bytes(hex_field(v, "SECRET"))
    return secret.public_key().public_bytes_raw() == hex_field(v, "PUBLIC")


def _eddsa_sign(alg: Algorithm, v: Vector) -> bool | str:
    if v.get("CONTEXT"):
        return _NO_CONTEXT
    # RFC 8032 5.1.6/5.2.6: EdDSA signing is deterministic, so the signature must match.
    secret = EDDSA[alg.name][0].from_private_bytes(hex_field(v, "SECRET"))
    return secret.sign(hex_field(v, "MESSAGE")) == hex_field(v, "SIGNATURE")


def _eddsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    if v.get("CONTEXT"):
        return _NO_CONTEXT
    public = EDDSA[alg.name][1].from_public_bytes(hex_field(v, "PUBLIC"))
    return _verifies(lambda: public.verify(hex_field(v, "SIGNATURE"), hex_field(v, "MESSAGE")))


def _curve(alg: Algorithm) -> ec.EllipticCurve:
    return CURVES[str(alg.param("curve"))]()


def _expected_valid(v: Vector) -> bool:
    return v["Result"].startswith("P")


def _ecdh_derive(alg: Algorithm, v: Vector) -> bool | str:
    """SP 800-56A validity test: Z must match for P records; F records must not succeed.

    F records carry an off-curve public key, a changed private key or a changed Z; the
    implementation passes them by refusing the key or by computing something else.
    """
    curve = _curve(alg)
    try:
        peer = ec.EllipticCurvePublicNumbers(int(v["QsCAVSx"], 16), int(v["QsCAVSy"], 16),
                                             curve).public_key()
        own = ec.derive_private_key(int(v["dsIUT"], 16), curve)
        own_point = own.public_key().public_numbers()
        matches = (own_point.x == int(v["QsIUTx"], 16) and own_point.y == int(v["QsIUTy"], 16)
                   and own.exchange(ec.ECDH(), peer) == hex_field(v, "Z"))
    except ValueError:  # cryptography refuses points not on the curve
        matches = False
    return matches == _expected_valid(v)


def _ecdsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    """FIPS 186-3 SigVer: the verdict must equal the record's Result (P or F)."""
    try:
        public = ec.EllipticCurvePublicNumbers(int(v["Qx"], 16), int(v["Qy"], 16),
                                               _curve(alg)).public_key()
    except ValueError:
        return not _expected_valid(v)
    signature = encode_dss_signature(int(v["R"], 16), int(v["S"], 16))
    digest = HASHES[str(alg.param("hash"))]()
    accepted = _verifies(lambda: public.verify(signature, hex_field(v, "Msg"),
                                               ec.ECDSA(digest)))
    return accepted == _expected_valid(v)


def _rsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    # RFC 8017 8.2: PKCS#1 v1.5 signatures are deterministic, so verifying the published S
    # pins the exact encoding an implementation produces.
    public = rsa.RSAPublicNumbers(int(v["e"], 16), int(v["n"], 16)).public_key()
    return _verifies(lambda: public.verify(hex_field(v, "S"), hex_field(v, "Msg"),
                                           padding.PKCS1v15(), hashes.SHA256()))


#: family -> check name -> per-vector check, or the reason cryptography cannot take it.
CHECKS: dict[str, dict[str, VectorCheck | str]] = {
    "ML-KEM": {
        "KAT keygen": _kem_keygen,
        "KAT encaps": "cryptography's encapsulate() draws its own randomness and has no "
                      "seeded form, so the KAT ciphertext cannot be reproduced; checked "
                      "instead: decaps of the KAT ciphertexts",
        "KAT decaps": _decaps("ct", "ss"),
        "KAT implicit rejection": _decaps("ct_n", "ss_n"),
    },
    "ML-DSA": {
        "KAT keygen": _dsa_keygen,
        "KAT sign": "cryptography signs hedged (FIPS 204 Algorithm 2 with fresh rnd) and "
                    "offers no deterministic mode, so KAT signatures cannot be reproduced; "
                    "checked instead: keygen from xi and verify of the KAT signatures",
        "KAT verify": _dsa_verify,
    },
    "EdDSA": {"KAT keygen": _eddsa_keygen, "KAT sign": _eddsa_sign, "KAT verify": _eddsa_verify},
    "ECDSA": {
        "KAT sign": "pqbench signs with random k (FIPS 186-5 6.4.1), as it times; no "
                    "deterministic (RFC 6979) vectors are wired in. The SigVer vectors check "
                    "verification, including rejection of altered records",
        "KAT verify": _ecdsa_verify,
    },
    "RSA": {
        "KAT sign": "the NIST SigGen15 files publish n, e and S but not the private key",
        "KAT verify": _rsa_verify,
    },
}


def vector_checks(alg: Algorithm) -> dict[str, VectorCheck | str]:
    """The checks cryptography takes for `alg` (empty where pqbench has none)."""
    if alg.family == "ECDH":
        return {"KAT derive": _xdh_derive if alg.name in XDH else _ecdh_derive}
    return dict(CHECKS.get(alg.family, {}))

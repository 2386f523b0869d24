"""liboqs's known-answer checks through liboqs-python, with the randomness hook liboqs's own
KAT programs use (tests/kat_kem.c, kat_sig.c): OQS_randombytes returns the bytes a vector
prescribes, so encapsulation and deterministic signing reproduce the published outputs.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.vectors import Vector, hex_field, signature_of
from pqbench.libraries.implementations.base import VectorCheck

_RANDOMBYTES = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t)


class _Feed:
    """Hands liboqs the bytes a KAT prescribes; zeros (and `overrun`) if it asks for more."""

    def __init__(self, data: bytes) -> None:
        self.data, self.overrun = data, False

    def __call__(self, buffer: ctypes._Pointer[ctypes.c_uint8], length: int) -> None:
        chunk, self.data = self.data[:length], self.data[length:]
        if len(chunk) < length:
            self.overrun = True
            chunk = chunk.ljust(length, b"\0")
        ctypes.memmove(buffer, chunk, length)

    @property
    def used_exactly(self) -> bool:
        """Every prescribed byte was drawn, and not one more."""
        return not self.overrun and not self.data


@contextmanager
def _randomness(oqs: ModuleType, data: bytes) -> Iterator[_Feed]:
    """Make liboqs's OQS_randombytes return `data`, as liboqs's tests/kat_*.c do.

    Process-wide while it lasts, so it wraps a single call and puts the system RNG back.
    """
    feed = _Feed(data)
    callback = _RANDOMBYTES(feed)  # kept alive by this frame while liboqs may call it
    library = oqs.native()
    library.OQS_randombytes_custom_algorithm(callback)
    try:
        yield feed
    finally:
        library.OQS_randombytes_switch_algorithm(b"system")


def _oqs() -> ModuleType:
    from pqbench.libraries.liboqs import import_oqs

    return import_oqs()


# --- ML-KEM (FIPS 203) ------------------------------------------------------------------


def _kem_keygen(alg: Algorithm, v: Vector) -> bool | str:
    with _oqs().KeyEncapsulation(alg.liboqs_name) as kem:
        public = kem.generate_keypair_seed(hex_field(v, "d") + hex_field(v, "z"))
        return (bytes(public) == hex_field(v, "pk")
                and bytes(kem.export_secret_key()) == hex_field(v, "sk"))


def _kem_encaps(alg: Algorithm, v: Vector) -> bool | str:
    oqs = _oqs()
    with oqs.KeyEncapsulation(alg.liboqs_name) as kem, \
            _randomness(oqs, hex_field(v, "msg")) as feed:
        ciphertext, shared = kem.encap_secret(hex_field(v, "pk"))
    return (feed.used_exactly and bytes(ciphertext) == hex_field(v, "ct")
            and bytes(shared) == hex_field(v, "ss"))


def _decaps(ct: str, ss: str) -> VectorCheck:
    def check(alg: Algorithm, v: Vector) -> bool | str:
        with _oqs().KeyEncapsulation(alg.liboqs_name, secret_key=hex_field(v, "sk")) as kem:
            return bytes(kem.decap_secret(hex_field(v, ct))) == hex_field(v, ss)
    return check


# --- ML-DSA (FIPS 204) ------------------------------------------------------------------


def _dsa_sign(alg: Algorithm, v: Vector) -> bool | str:
    oqs = _oqs()
    # FIPS 204 Algorithm 2: deterministic signing is hedged signing with rnd = 0^32.
    with oqs.Signature(alg.liboqs_name, secret_key=hex_field(v, "sk")) as signer, \
            _randomness(oqs, bytes(32)) as feed:
        signature = signer.sign_with_ctx_str(hex_field(v, "msg"), hex_field(v, "ctx"))
    return feed.used_exactly and bytes(signature) == signature_of(v)


def _dsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    with _oqs().Signature(alg.liboqs_name) as verifier:
        return bool(verifier.verify_with_ctx_str(hex_field(v, "msg"), signature_of(v),
                                                 hex_field(v, "ctx"), hex_field(v, "pk")))


#: family -> check name -> per-vector check, or the reason liboqs cannot take it.
CHECKS: dict[str, dict[str, VectorCheck | str]] = {
    "ML-KEM": {
        "KAT keygen": _kem_keygen,
        "KAT encaps": _kem_encaps,
        "KAT decaps": _decaps("ct", "ss"),
        "KAT implicit rejection": _decaps("ct_n", "ss_n"),
    },
    "ML-DSA": {
        "KAT keygen": "liboqs 0.13 has no seeded ML-DSA key generation (no keypair_derand "
                      "for signatures); the KAT secret key is used for signing instead",
        "KAT sign": _dsa_sign,
        "KAT verify": _dsa_verify,
    },
}


def vector_checks(alg: Algorithm) -> dict[str, VectorCheck | str]:
    """The checks liboqs-python takes for `alg` (empty where pqbench has none)."""
    return dict(CHECKS.get(alg.family, {}))

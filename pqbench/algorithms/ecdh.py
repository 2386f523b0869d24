"""Classical key agreement: X25519/X448 (RFC 7748) and ECDH on the NIST curves (SP 800-56A)."""

from __future__ import annotations

from pqbench.algorithms.base import DEFAULT_OPERATIONS, Algorithm

_OPS = DEFAULT_OPERATIONS["key-agreement"]

_XDH = (
    Algorithm("X25519", "key-agreement", "ECDH", ("ecdhx25519", "curve25519"), _OPS,
              classical_bits=128, params=(("curve", "x25519"),)),
    Algorithm("X448", "key-agreement", "ECDH", ("ecdhx448", "curve448"), _OPS,
              classical_bits=224, params=(("curve", "x448"),)),
)
_NIST = tuple(
    Algorithm(
        f"ECDH-P-{bits}",
        "key-agreement",
        "ECDH",
        (f"ecdhp{bits}", f"p{bits}", f"secp{bits}r1") + (("prime256v1",) if bits == 256 else ()),
        _OPS,
        classical_bits=security,
        params=(("curve", f"secp{bits}r1"),),
    )
    for bits, security in ((256, 128), (384, 192), (521, 256))
)

ALGORITHMS = (*_XDH, *_NIST)

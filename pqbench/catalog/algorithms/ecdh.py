"""Classical key agreement: X25519/X448 (RFC 7748) and ECDH on the NIST curves (SP 800-56A)."""

from __future__ import annotations

from pqbench.catalog.algorithms.base import DEFAULT_OPERATIONS, Algorithm

_OPS = DEFAULT_OPERATIONS["key-agreement"]

# RFC 7748 section 5: X25519 keys and outputs are 32 bytes, X448's 56.
_XDH = (
    Algorithm("X25519", "key-agreement", "ECDH", ("ecdhx25519", "curve25519"), _OPS,
              classical_bits=128, params=(("curve", "x25519"),),
              standard_sizes=(("public_key", 32), ("shared_secret", 32))),
    Algorithm("X448", "key-agreement", "ECDH", ("ecdhx448", "curve448"), _OPS,
              classical_bits=224, params=(("curve", "x448"),),
              standard_sizes=(("public_key", 56), ("shared_secret", 56))),
)
# SEC 1 v2 section 2.3.3: an uncompressed point is 0x04 and two field elements (the form
# TLS 1.3 key shares use, RFC 8446 section 4.2.8.2); the shared secret is the x-coordinate.
_NIST = tuple(
    Algorithm(
        f"ECDH-P-{bits}",
        "key-agreement",
        "ECDH",
        (f"ecdhp{bits}", f"p{bits}", f"secp{bits}r1") + (("prime256v1",) if bits == 256 else ()),
        _OPS,
        classical_bits=security,
        params=(("curve", f"secp{bits}r1"),),
        standard_sizes=(("public_key", 1 + 2 * ((bits + 7) // 8)),
                        ("shared_secret", (bits + 7) // 8)),
    )
    for bits, security in ((256, 128), (384, 192), (521, 256))
)

ALGORITHMS = (*_XDH, *_NIST)

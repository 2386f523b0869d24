"""Classical signatures: ECDSA (FIPS 186-5) and EdDSA (RFC 8032)."""

from __future__ import annotations

from pqbench.catalog.algorithms.base import Algorithm

_OPS = ("sign", "verify")

ALGORITHMS = (
    Algorithm("ECDSA-P-256", "signature", "ECDSA", ("ecdsap256",), _OPS, ("keygen",),
              classical_bits=128, params=(("curve", "secp256r1"), ("hash", "SHA256"))),
    Algorithm("ECDSA-P-384", "signature", "ECDSA", ("ecdsap384",), _OPS, ("keygen",),
              classical_bits=192, params=(("curve", "secp384r1"), ("hash", "SHA384"))),
    # RFC 8032 sections 5.1.5-5.1.6 and 5.2.5-5.2.6: public keys of 32 and 57 bytes,
    # signatures of 64 and 114.
    Algorithm("Ed25519", "signature", "EdDSA", ("eddsa25519",), _OPS, ("keygen",),
              classical_bits=128, standard_sizes=(("public_key", 32), ("signature", 64))),
    Algorithm("Ed448", "signature", "EdDSA", ("eddsa448",), _OPS, ("keygen",),
              classical_bits=224, standard_sizes=(("public_key", 57), ("signature", 114))),
)

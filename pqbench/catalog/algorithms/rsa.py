"""RSA (RFC 8017) at the moduli TLS still deploys; keygen only on request."""

from __future__ import annotations

from pqbench.catalog.algorithms.base import DEFAULT_OPERATIONS, Algorithm

# SP 800-57 Part 1 Rev. 5, Table 2: classical security strength of RSA moduli.
ALGORITHMS = tuple(
    Algorithm(
        f"RSA-{bits}",
        "rsa",
        "RSA",
        (f"rsa{bits}",),
        DEFAULT_OPERATIONS["rsa"],
        optional_operations=("keygen",),
        classical_bits=security,
        params=(("modulus_bits", bits), ("public_exponent", 65537)),
    )
    for bits, security in ((2048, 112), (3072, 128), (4096, 152))
)

"""ML-KEM (FIPS 203): module-lattice key encapsulation."""

from __future__ import annotations

from pqbench.algorithms.base import DEFAULT_OPERATIONS, Algorithm

# FIPS 203 Table 2: parameter sets and their NIST security categories; Table 3: sizes
# (encapsulation key, decapsulation key, ciphertext, shared secret).
ALGORITHMS = tuple(
    Algorithm(
        name=f"ML-KEM-{n}",
        kind="kem",
        family="ML-KEM",
        aliases=(f"mlkem{n}", f"kyber{n}"),
        operations=DEFAULT_OPERATIONS["kem"],
        nist_level=level,
        liboqs_name=f"ML-KEM-{n}",
        standard_sizes=(("public_key", pk), ("secret_key", sk), ("ciphertext", ct),
                        ("shared_secret", 32)),
    )
    for n, level, pk, sk, ct in ((512, 1, 800, 1632, 768), (768, 3, 1184, 2400, 1088),
                                 (1024, 5, 1568, 3168, 1568))
)

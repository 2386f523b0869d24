"""ML-KEM (FIPS 203): module-lattice key encapsulation."""

from __future__ import annotations

from pqbench.catalog.algorithms.base import nist_pq

# FIPS 203 Table 2: parameter sets and their NIST security categories; Table 3: sizes
# (encapsulation key, decapsulation key, ciphertext, shared secret).
ALGORITHMS = tuple(
    nist_pq("ML-KEM", "kem", n, level, (f"mlkem{n}", f"kyber{n}"),
            (("public_key", pk), ("secret_key", sk), ("ciphertext", ct), ("shared_secret", 32)))
    for n, level, pk, sk, ct in ((512, 1, 800, 1632, 768), (768, 3, 1184, 2400, 1088),
                                 (1024, 5, 1568, 3168, 1568))
)

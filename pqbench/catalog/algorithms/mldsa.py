"""ML-DSA (FIPS 204): module-lattice digital signatures."""

from __future__ import annotations

from pqbench.catalog.algorithms.base import nist_pq

# FIPS 204 Table 1: parameter sets and their NIST security categories; Table 2: sizes
# (public key, private key, signature).
ALGORITHMS = tuple(
    nist_pq("ML-DSA", "signature", n, level, (f"mldsa{n}", f"dilithium{d}"),
            (("public_key", pk), ("secret_key", sk), ("signature", sig)))
    for n, d, level, pk, sk, sig in ((44, 2, 2, 1312, 2560, 2420), (65, 3, 3, 1952, 4032, 3309),
                                     (87, 5, 5, 2592, 4896, 4627))
)

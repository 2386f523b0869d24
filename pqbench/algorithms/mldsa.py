"""ML-DSA (FIPS 204): module-lattice digital signatures."""

from __future__ import annotations

from pqbench.algorithms.base import DEFAULT_OPERATIONS, Algorithm

# FIPS 204 Table 1: parameter sets and their NIST security categories.
ALGORITHMS = tuple(
    Algorithm(
        name=f"ML-DSA-{n}",
        kind="signature",
        family="ML-DSA",
        aliases=(f"mldsa{n}", f"dilithium{d}"),
        operations=DEFAULT_OPERATIONS["signature"],
        nist_level=level,
        liboqs_name=f"ML-DSA-{n}",
    )
    for n, d, level in ((44, 2, 2), (65, 3, 3), (87, 5, 5))
)

"""ML-KEM (FIPS 203): module-lattice key encapsulation."""

from __future__ import annotations

from pqbench.algorithms.base import DEFAULT_OPERATIONS, Algorithm

# FIPS 203 Table 2: parameter sets and their NIST security categories.
ALGORITHMS = tuple(
    Algorithm(
        name=f"ML-KEM-{n}",
        kind="kem",
        family="ML-KEM",
        aliases=(f"mlkem{n}", f"kyber{n}"),
        operations=DEFAULT_OPERATIONS["kem"],
        nist_level=level,
        liboqs_name=f"ML-KEM-{n}",
    )
    for n, level in ((512, 1), (768, 3), (1024, 5))
)

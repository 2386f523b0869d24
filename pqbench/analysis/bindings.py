"""What a binding costs: its rate as a share of the native loop under the same library.

`liboqs-python` runs liboqs as the `liboqs` C loop does, and `cryptography` OpenSSL as
the `libcrypto` loop does (`implementations.BINDINGS`); the share of native speed a
binding keeps is its cost. cryptography's wheels bundle their own OpenSSL, so where that
is not the system's, a share above 1 is the newer OpenSSL being faster, not a negative
cost (`bundled_openssl`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from pqbench.implementations import BINDINGS
from pqbench.record.fingerprint import Fingerprint
from pqbench.record.results import Measurement


def binding_shares(measurements: Iterable[Measurement]) -> list[tuple[str, str, float, int]]:
    """Per binding: the median over shared rows of binding ops/s / native ops/s, and how
    many rows it was taken over. (Median of ratios: one slow operation does not dominate.)"""
    index = {(m.algorithm, m.operation, m.block_size, m.implementation): m.ops_per_sec
             for m in measurements}
    shares = []
    for binding, native in BINDINGS:
        ratios = [index[(a, op, size, binding)] / rate
                  for (a, op, size, impl), rate in index.items()
                  if impl == native and rate > 0 and (a, op, size, binding) in index]
        if ratios:
            shares.append((binding, native, statistics.median(ratios), len(ratios)))
    return shares


def bundled_openssl(environment: Fingerprint) -> tuple[str, str] | None:
    """(cryptography's bundled OpenSSL, the system libcrypto) where the two differ."""
    bundled = environment.library("cryptography_openssl")
    system = environment.library("system_libcrypto")
    if bundled and system and bundled != system:
        return bundled, system
    return None

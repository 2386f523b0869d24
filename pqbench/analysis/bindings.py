"""Which OpenSSL a binding runs: what to know before reading a binding's cost.

`liboqs-python` runs liboqs as the `liboqs` C loop does, and `cryptography` OpenSSL as
the `libcrypto` loop does (`implementations.BINDINGS`; `analysis.ratios` gives each
binding's paired cost against its native loop). cryptography's wheels bundle their own
OpenSSL, so where that is not the system's, a ratio below 1 is the other OpenSSL being
faster, not a negative cost (`bundled_openssl`).
"""

from __future__ import annotations

from pqbench.data.record.fingerprint import Fingerprint


def bundled_openssl(environment: Fingerprint) -> tuple[str, str] | None:
    """(cryptography's bundled OpenSSL, the system libcrypto) where the two differ."""
    bundled = environment.library("cryptography_openssl")
    system = environment.library("system_libcrypto")
    if bundled and system and bundled != system:
        return bundled, system
    return None

"""What pqbench builds liboqs from, and the two ways it builds it (standard library only).

The default (`minimal`) build enables what pqbench's suites and the NIST standards need and
takes a fraction of the time of the full build (`python -m pqbench.libraries.liboqs --all`).
Each recipe's options hash names its cache directory, so the two never share one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from pqbench.libraries.liboqs.locate import cache_dir

CRATE = "oqs-sys"
CRATE_VERSION = "0.11.0+liboqs-0.13.0"
LIBOQS_VERSION = "0.13.0"
SOURCE = f"crates.io {CRATE} {CRATE_VERSION}"
COMPAT_SOURCE = Path(__file__).with_name("compat.c")

# Every build: runtime CPU dispatch so the cache is portable across x86-64 machines, OpenSSL
# for SHA-2/AES, static PIC so compat.c can be linked into the one shared library. HQC is on
# although liboqs 0.13 turns it off by default (an IND-CCA2 flaw in that HQC version, liboqs
# PR #2122): pqbench times it, it protects nothing with it, and NIST selected HQC in 2025.
COMMON_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
    "-DOQS_BUILD_ONLY_LIB=ON",
    "-DOQS_DIST_BUILD=ON",
    "-DOQS_USE_OPENSSL=ON",
    "-DOQS_ENABLE_KEM_HQC=ON",
)

# What the default build enables, in liboqs's OQS_MINIMAL_BUILD spelling (alg_support.cmake):
# the NIST standards and HQC. FIPS 203 ML-KEM and FIPS 204 ML-DSA (pqbench's suites, KATs and
# fidelity script); Falcon, the basis of FN-DSA (FIPS 206 draft); and the SPHINCS+ "simple"
# sets, which liboqs 0.13 names SPHINCS+-SHA2/SHAKE-* and which FIPS 205 standardised as
# SLH-DSA (liboqs 0.13 has no SLH-DSA identifiers). The signatures are liboqs's own
# OQS_ALGS_ENABLED=STD list. Everything else (FrodoKEM, Classic McEliece, BIKE, MAYO, CROSS,
# UOV, Kyber, Dilithium, sntrup761, LMS, XMSS) is built by `--all`.
MINIMAL_ALGORITHMS = (
    "KEM_ml_kem_512", "KEM_ml_kem_768", "KEM_ml_kem_1024",
    "KEM_hqc_128", "KEM_hqc_192", "KEM_hqc_256",
    "SIG_ml_dsa_44", "SIG_ml_dsa_65", "SIG_ml_dsa_87",
    "SIG_falcon_512", "SIG_falcon_1024", "SIG_falcon_padded_512", "SIG_falcon_padded_1024",
    *(
        f"SIG_sphincs_{hash_}_{level}{speed}_simple"
        for hash_ in ("sha2", "shake")
        for level in (128, 192, 256)
        for speed in ("f", "s")
    ),
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One way to build the pinned liboqs; its options name its cache directory."""

    algorithms: str  # "minimal" or "all", recorded in the manifest
    cmake_options: tuple[str, ...]

    def key(self) -> str:
        """Short hash of everything that shapes the build."""
        recipe = {
            "source": SOURCE,
            "cmake": self.cmake_options,
            "compat": hashlib.sha256(COMPAT_SOURCE.read_bytes()).hexdigest(),
        }
        return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]

    def directory(self) -> Path:
        """cache_root()/liboqs/<version>-<key>/"""
        return cache_dir() / f"{LIBOQS_VERSION}-{self.key()}"


MINIMAL = Recipe(
    "minimal", (*COMMON_OPTIONS, f"-DOQS_MINIMAL_BUILD={';'.join(MINIMAL_ALGORITHMS)}")
)
# Every algorithm liboqs offers, stateful signatures as liboqs-python's own installer enables
# them. A superset of MINIMAL, so a full build answers a minimal request too.
FULL = Recipe(
    "all",
    (
        *COMMON_OPTIONS,
        "-DOQS_ENABLE_SIG_STFL_LMS=ON",
        "-DOQS_ENABLE_SIG_STFL_XMSS=ON",
        "-DOQS_HAZARDOUS_EXPERIMENTAL_ENABLE_SIG_STFL_KEY_SIG_GEN=ON",
    ),
)


def reusable_for(wanted: Recipe) -> tuple[Recipe, ...]:
    """Finished builds that answer a request for `wanted`, preferred first.

    A full build answers every request and comes first, as locate.survey() also prefers the
    cache entry that enables the most; a minimal build answers only a minimal request.
    """
    return (FULL,) if wanted == FULL else (FULL, wanted)

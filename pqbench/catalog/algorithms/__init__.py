"""The algorithm registry: canonical names, aliases, and what `pqbench speed` runs by default.

Families are data modules; this module only indexes them and resolves user spellings,
including `openssl speed` ones (`rsa2048`, `ecdhx25519`, `mlkem768`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from pqbench.catalog.algorithms import ciphers, ecdh, hashes, mldsa, mlkem, rsa, signatures
from pqbench.catalog.algorithms.base import DEFAULT_OPERATIONS, Algorithm, normalize
from pqbench.platform.errors import UnknownAlgorithmError

__all__ = ["QUICK_SUITE", "Algorithm", "all_algorithms", "by_name", "liboqs_algorithm", "resolve"]

_FAMILIES = (mlkem, mldsa, ecdh, rsa, signatures, ciphers, hashes)

#: The headline suite `pqbench speed` runs with no argument (about a minute).
QUICK_SUITE = (
    "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024",
    "ML-DSA-44", "ML-DSA-65", "ML-DSA-87",
    "X25519", "ECDH-P-256", "RSA-2048", "RSA-3072", "Ed25519", "ECDSA-P-256",
)


def all_algorithms() -> tuple[Algorithm, ...]:
    """Every algorithm of the built-in table, in family order."""
    return tuple(alg for family in _FAMILIES for alg in family.ALGORITHMS)


def _index() -> dict[str, Algorithm]:
    index: dict[str, Algorithm] = {}
    for alg in all_algorithms():
        for spelling in (alg.name, *alg.aliases):
            index[normalize(spelling)] = alg
    return index


def by_name(name: str) -> Algorithm:
    """The built-in algorithm with this canonical name (exact)."""
    for alg in all_algorithms():
        if alg.name == name:
            return alg
    raise KeyError(name)


def liboqs_algorithm(liboqs_name: str, kind: str) -> Algorithm:
    """An algorithm known only to the loaded liboqs (SLH-DSA, Falcon, HQC ...), by its name."""
    if kind not in ("kem", "signature"):
        raise ValueError(f"liboqs mechanisms are KEMs or signatures, not {kind!r}")
    return Algorithm(
        name=liboqs_name,
        kind="kem" if kind == "kem" else "signature",
        family=liboqs_name.split("-")[0].split("_")[0],
        operations=DEFAULT_OPERATIONS[kind],
        liboqs_name=liboqs_name,
    )


def resolve(
    names: Iterable[str],
    liboqs_kems: Sequence[str] = (),
    liboqs_sigs: Sequence[str] = (),
    *,
    kind: str | None = None,
) -> list[Algorithm]:
    """Map user spellings to algorithms, in order, without duplicates.

    Names not in the table are looked up among the mechanisms the loaded liboqs enables.
    An unknown name raises UnknownAlgorithmError with the closest spellings, of `kind`
    alone where the command takes only one kind (`files hash` only hashes): a hash named
    wrong is never answered with a signature.
    """
    index = _index()
    extra = {normalize(n): liboqs_algorithm(n, "kem") for n in liboqs_kems}
    extra.update({normalize(n): liboqs_algorithm(n, "signature") for n in liboqs_sigs})
    resolved: list[Algorithm] = []
    for name in names:
        key = normalize(name)
        alg = index.get(key) or extra.get(key)
        if alg is None:
            raise UnknownAlgorithmError(name, suggest(name, liboqs_kems, liboqs_sigs,
                                                      kind=kind))
        if alg not in resolved:
            resolved.append(alg)
    return resolved


def suggest(name: str, *extra_names: Sequence[str], limit: int = 5,
            kind: str | None = None) -> list[str]:
    """Canonical names close to `name`, for a "did you mean" list; of `kind` alone when
    given (liboqs's names are KEMs and signatures, never a hash)."""
    candidates: dict[str, str] = {}
    for alg in all_algorithms():
        if kind is None or alg.kind == kind:
            for spelling in (alg.name, *alg.aliases):
                candidates.setdefault(normalize(spelling), alg.name)
    for names in extra_names if kind is None else ():
        for n in names:
            candidates.setdefault(normalize(n), n)
    close = difflib.get_close_matches(normalize(name), list(candidates), n=limit * 3, cutoff=0.5)
    seen: list[str] = []
    for key in close:
        if candidates[key] not in seen:
            seen.append(candidates[key])
    return seen[:limit]

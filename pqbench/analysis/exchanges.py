"""What one key exchange and one signature cost, from the per-operation rows of a run.

Costs are given per exchange, not only per operation, because that is what a protocol pays:

* KEM (FIPS 203): the client generates a key pair, the server encapsulates, the client
  decapsulates; the wire carries the public key and the ciphertext (as in TLS 1.3's
  ML-KEM key shares, draft-ietf-tls-ecdhe-mlkem).
* ECDH (RFC 7748, SP 800-56A): both sides generate an ephemeral key pair and derive; the wire
  carries two public keys.
* RSA key transport (RFC 8017 OAEP, as in TLS 1.2's RSA key exchange): the key pair is
  long-lived; the client encrypts, the server decrypts; the wire carries the public key and
  the ciphertext.
* Signatures: the signer signs, the verifier verifies; the wire carries the signature and
  the public key (as a certificate does). Key generation is excluded: keys are long-lived.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pqbench.catalog import algorithms
from pqbench.data.record.results import Measurement
from pqbench.libraries.implementations import rank

ROLES = ("exchange", "signature")
KEY_EXCHANGE = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X25519", "ECDH-P-256",
                "ECDH-P-384", "RSA-2048", "RSA-3072")
SIGNATURES = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "Ed25519", "ECDSA-P-256", "RSA-2048",
              "RSA-3072")
#: The classical scheme each role is set against.
BASELINE = {"exchange": "X25519", "signature": "Ed25519"}

Recipe = tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]
#: (role, kind) -> ((operation, times per exchange), ...), ((size on the wire, times), ...).
RECIPES: dict[tuple[str, str], Recipe] = {
    ("exchange", "kem"): ((("keygen", 1), ("encaps", 1), ("decaps", 1)),
                          (("public_key", 1), ("ciphertext", 1))),
    ("exchange", "key-agreement"): ((("keygen", 2), ("derive", 2)), (("public_key", 2),)),
    ("exchange", "rsa"): ((("encrypt", 1), ("decrypt", 1)),
                          (("public_key", 1), ("ciphertext", 1))),
    ("signature", "signature"): ((("sign", 1), ("verify", 1)),
                                 (("signature", 1), ("public_key", 1))),
    ("signature", "rsa"): ((("sign", 1), ("verify", 1)), (("signature", 1), ("public_key", 1))),
}

#: Where an implementation lacks the classical baseline (liboqs has no X25519), its
#: counterpart of the same kind stands in: native against native, binding against binding.
COUNTERPART = {"liboqs": "libcrypto", "libcrypto": "liboqs",
               "liboqs-python": "cryptography", "cryptography": "liboqs-python"}

#: (role, post-quantum schemes in order of preference, classical scheme) for a summary:
#: the NIST level 3 parameter set first, as TLS deployments pick it.
HEADLINE_PAIRS = (("exchange", ("ML-KEM-768", "ML-KEM-512", "ML-KEM-1024"), "X25519"),
                  ("signature", ("ML-DSA-65", "ML-DSA-44", "ML-DSA-87"), "Ed25519"))


@dataclass(frozen=True)
class Exchange:
    """One algorithm's cost per exchange (or per signature) through one implementation."""

    algorithm: str
    implementation: str
    security: str | None
    operations: tuple[tuple[str, int, Measurement], ...]
    wire_bytes: int | None

    @property
    def us(self) -> float:
        return sum(count * m.us_per_op for _, count, m in self.operations)

    @property
    def per_second(self) -> float:
        return 1e6 / self.us if self.us else float("inf")

    @property
    def cycles(self) -> float | None:
        cycles = [m.cycles_per_op for _, _, m in self.operations]
        if any(c is None for c in cycles):
            return None
        return sum(count * (m.cycles_per_op or 0.0) for _, count, m in self.operations)


def kind_of(name: str, rows: Sequence[Measurement] = ()) -> str | None:
    """The algorithm's kind from the table, else guessed from the operations measured."""
    try:
        return algorithms.by_name(name).kind
    except KeyError:
        pass
    ops = {m.operation for m in rows if m.algorithm == name}
    if {"encaps", "decaps"} <= ops:
        return "kem"
    if {"sign", "verify"} <= ops:
        return "signature"
    return None


def security(name: str) -> str | None:
    """"NIST level 3" or "128-bit classical"; None where the table does not say."""
    try:
        alg = algorithms.by_name(name)
    except KeyError:
        return None
    if alg.nist_level is not None:
        return f"NIST level {alg.nist_level}"
    if alg.classical_bits is not None:
        return f"{alg.classical_bits}-bit classical"
    return None


def exchange(role: str, name: str, implementation: str,
             rows: Sequence[Measurement]) -> Exchange | None:
    """The exchange cost, or None unless every operation it needs was measured."""
    recipe = RECIPES.get((role, kind_of(name, rows) or ""))
    if recipe is None:
        return None
    ops_needed, wire = recipe
    by_op = {m.operation: m for m in rows
             if m.algorithm == name and m.implementation == implementation
             and m.block_size is None}
    if any(op not in by_op for op, _ in ops_needed):
        return None
    sizes: dict[str, int] = {}
    for m in by_op.values():
        for key, value in m.sizes.items():
            sizes.setdefault(key, value)
    wire_bytes = (sum(count * sizes[key] for key, count in wire)
                  if all(key in sizes for key, _ in wire) else None)
    return Exchange(name, implementation, security(name),
                    tuple((op, count, by_op[op]) for op, count in ops_needed), wire_bytes)


def implementations_of(rows: Sequence[Measurement]) -> list[str]:
    return in_order(m.implementation for m in rows)


def in_order(names: Iterable[str]) -> list[str]:
    """Implementation names once each, in the order tables show them
    (`implementations.rank`)."""
    return sorted(set(names), key=rank)


def algorithms_for(role: str, rows: Sequence[Measurement]) -> list[str]:
    """The headline algorithms in their fixed order, then any other measured ones."""
    headline = KEY_EXCHANGE if role == "exchange" else SIGNATURES
    present = {m.algorithm for m in rows if m.block_size is None}
    kinds = ("kem", "key-agreement", "rsa") if role == "exchange" else ("signature", "rsa")
    others = sorted(a for a in present if a not in headline and kind_of(a, rows) in kinds)
    return [a for a in headline if a in present] + others


def operations_in(role: str) -> set[str]:
    """Every operation a role's recipes time, and keygen."""
    return {op for (r, _), (ops, _) in RECIPES.items() if r == role for op, _ in ops} | {
        "keygen"}


def exchanges(role: str, rows: Sequence[Measurement]) -> list[Exchange]:
    """Every (algorithm, implementation) whose whole exchange was measured."""
    found = []
    for name in algorithms_for(role, rows):
        for impl in implementations_of(rows):
            ex = exchange(role, name, impl, rows)
            if ex is not None:
                found.append(ex)
    return found


def fastest(found: Sequence[Exchange]) -> list[Exchange]:
    """The fastest implementation of each algorithm, in the order found."""
    best: dict[str, Exchange] = {}
    for ex in found:
        if ex.algorithm not in best or ex.us < best[ex.algorithm].us:
            best[ex.algorithm] = ex
    return [best[name] for name in dict.fromkeys(ex.algorithm for ex in found)]


def baseline_for(ex: Exchange, baselines: dict[str, Exchange],
                 any_implementation: bool) -> Exchange | None:
    """The classical exchange `ex` is set against: the fastest of all (for a table of the
    fastest), else its own implementation's, else its counterpart's."""
    if any_implementation:
        return min(baselines.values(), key=lambda b: b.us) if baselines else None
    return baselines.get(ex.implementation) or baselines.get(
        COUNTERPART.get(ex.implementation, ""))


def headline_pairs(rows: Sequence[Measurement]) -> list[tuple[str, Exchange, Exchange]]:
    """(role, post-quantum, classical) for the summary: the preferred PQ scheme measured
    and its classical counterpart, the fastest implementation of each."""
    public = [m for m in rows if m.block_size is None]
    pairs = []
    for role, pq_names, classical_name in HEADLINE_PAIRS:
        best = {ex.algorithm: ex for ex in fastest(exchanges(role, public))}
        pq_name = next((name for name in pq_names if name in best), None)
        if pq_name and classical_name in best:
            pairs.append((role, best[pq_name], best[classical_name]))
    return pairs

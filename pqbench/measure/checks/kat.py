"""Known-answer tests: each implementation against published vectors, as far as its API allows.

`known_answer_checks(alg, impl)` loads the vectors for `alg` (the full NIST/RFC files from
cryptography-vectors when installed, else the curated set in `pqbench.catalog.vectors`), runs every
vector through each check the implementation takes (`Implementation.vector_checks`: each library
answers for itself, in its own module), and returns one Outcome per check with the vector
count. `check_vector(alg, impl, vector)` runs one vector, so tests can feed it a copied,
corrupted vector and see it fail.

A check that an API cannot express is reported "not offered" with the reason; nothing is
compared that the implementation did not compute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.vectors import (
    Parser,
    Vector,
    VectorsUnavailable,
    cryptography_vectors_version,
    load_vectors,
    parse_colon_lines,
    parse_nist_rsp,
    parse_pqbench_json,
)
from pqbench.libraries.implementations.base import Implementation, VectorCheck
from pqbench.measure.checks.outcome import Outcome

# --- where the vectors come from -------------------------------------------------------

@dataclass(frozen=True)
class VectorSource:
    """One vector file and how to select this algorithm's records from it."""

    relpath: str
    parser: Parser
    label: str
    select: Callable[[list[Vector]], list[Vector]] = field(default=lambda vectors: vectors)


def _section(name: str) -> Callable[[list[Vector]], list[Vector]]:
    def select(vectors: list[Vector]) -> list[Vector]:
        chosen = [v for v in vectors if v.get("section") == name]
        for index, vector in enumerate(chosen):
            vector.setdefault("count", str(index))
        return chosen
    return select


def _rsa_sha256(bits: int) -> Callable[[list[Vector]], list[Vector]]:
    """SigGen15 states n and e once per modulus; carry them into each SHA-256 record."""
    def select(vectors: list[Vector]) -> list[Vector]:
        chosen: list[Vector] = []
        key: Vector = {}
        for vector in vectors:
            if vector.get("mod") != str(bits):
                continue
            if "n" in vector:
                key = {"n": vector["n"], "e": vector["e"]}
            elif vector.get("SHAAlg") == "SHA256":
                chosen.append({**key, **vector, "count": str(len(chosen))})
        return chosen
    return select


def _full_source(alg: Algorithm) -> VectorSource | None:
    """The complete published file in cryptography-vectors, where one exists."""
    name = alg.name
    family, _, size = name.rpartition("-")
    if alg.family == "ML-KEM":
        rel = f"asymmetric/MLKEM/kat_MLKEM_{size}.rsp"
        return VectorSource(rel, parse_nist_rsp, f"NIST KAT {rel.rsplit('/', 1)[1]}")
    if alg.family == "ML-DSA":
        rel = f"asymmetric/MLDSA/kat_MLDSA_{size}_det_pure.rsp"
        return VectorSource(rel, parse_nist_rsp, f"NIST KAT {rel.rsplit('/', 1)[1]}")
    if name == "Ed25519":
        return VectorSource("asymmetric/Ed25519/sign.input", parse_colon_lines,
                            "Ed25519 sign.input (RFC 8032 7.1 TEST 1-3 and 1021 more)")
    if name == "Ed448":
        return VectorSource("asymmetric/Ed448/rfc8032.txt", parse_nist_rsp, "RFC 8032 7.4")
    if alg.family == "ECDH" and name.startswith("ECDH-P-"):
        sections = {"256": "EC - SHA256", "384": "ED - SHA384", "521": "EE - SHA512"}
        return VectorSource(
            "asymmetric/ECDH/KASValidityTest_ECCStaticUnified_NOKC_ZZOnly_init.fax",
            parse_nist_rsp, f"NIST CAVS KAS ECC ZZOnly, section {sections[size]}",
            _section(sections[size]))
    if alg.family == "ECDSA":
        digest = f"SHA-{size}"
        return VectorSource("asymmetric/ECDSA/FIPS_186-3/SigVer.rsp", parse_nist_rsp,
                            f"NIST CAVS FIPS 186-3 SigVer, section P-{size},{digest}",
                            _section(f"P-{size},{digest}"))
    if family == "RSA":
        return VectorSource("asymmetric/RSA/FIPS_186-2/SigGen15_186-3.rsp", parse_nist_rsp,
                            f"NIST CAVS SigGen15_186-3, mod {size} with SHA-256",
                            _rsa_sha256(int(size)))
    # X25519/X448: cryptography-vectors holds RFC 7748 5.2 only; the curated file adds 6.x.
    return None


def _curated_source(alg: Algorithm) -> VectorSource:
    rel = f"{alg.name.lower()}.json"
    return VectorSource(rel, parse_pqbench_json, f"curated vectors/{rel}")


def load_for(alg: Algorithm) -> tuple[list[Vector], str]:
    """The vectors for `alg` and a phrase naming where they came from."""
    full = _full_source(alg)
    if full is not None:
        try:
            vectors = full.select(load_vectors(full.relpath, full.parser))
        except VectorsUnavailable:
            pass
        else:
            return vectors, f"{full.label} (cryptography-vectors {cryptography_vectors_version()})"
    curated = _curated_source(alg)
    vectors = curated.select(load_vectors(curated.relpath, curated.parser))
    if full is not None:
        return vectors, f"{curated.label} (subset; install cryptography-vectors for all)"
    return vectors, curated.label


# --- which checks an implementation takes ------------------------------------------------


def checks_for(alg: Algorithm, impl: Implementation) -> Mapping[str, VectorCheck | str]:
    """Check name -> per-vector check (or reason not offered); empty when there are none."""
    return impl.vector_checks(alg)


@dataclass(frozen=True)
class Verdict:
    """One check of one vector: matched True/False, or None when it does not apply."""

    matched: bool | None
    note: str = ""


def _run(check: VectorCheck, alg: Algorithm, vector: Vector) -> Verdict:
    try:
        answer = check(alg, vector)
    except Exception as exc:  # a library error on a KAT input is a wrong answer, not a crash
        return Verdict(False, f"{type(exc).__name__}: {exc}")
    if isinstance(answer, str):
        return Verdict(None, answer)
    return Verdict(bool(answer))


def check_vector(alg: Algorithm, impl: Implementation, vector: Vector) -> dict[str, Verdict]:
    """Every offered check of one vector, by check name."""
    return {name: _run(check, alg, vector)
            for name, check in checks_for(alg, impl).items() if callable(check)}


# --- one Outcome per check ----------------------------------------------------------------

def _vector_id(vector: Vector, index: int) -> str:
    return vector.get("count") or vector.get("COUNT") or str(index)


@dataclass
class _Tally:
    matched: int = 0
    failed: list[str] = field(default_factory=list)
    first_error: str = ""
    not_applicable: int = 0
    reason: str = ""

    def add(self, vector_id: str, verdict: Verdict) -> None:
        if verdict.matched is None:
            self.not_applicable += 1
            self.reason = verdict.note
        elif verdict.matched:
            self.matched += 1
        else:
            self.failed.append(vector_id)
            self.first_error = self.first_error or verdict.note

    def outcome(self, alg: Algorithm, impl: Implementation, check: str, source: str) -> Outcome:
        ran = self.matched + len(self.failed)
        skipped = (f"; {self.not_applicable} vector(s) not applicable: {self.reason}"
                   if self.not_applicable else "")
        if ran == 0:
            return Outcome(alg.name, impl.name, check, "not offered",
                           f"no vector applies{skipped}; {source}")
        if self.failed:
            shown = ", ".join(self.failed[:5]) + (" ..." if len(self.failed) > 5 else "")
            error = f" ({self.first_error})" if self.first_error else ""
            return Outcome(alg.name, impl.name, check, "failed",
                           f"vector count {self.failed[0]} mismatched{error}; "
                           f"{len(self.failed)}/{ran} failed (counts {shown}); {source}")
        return Outcome(alg.name, impl.name, check, "passed",
                       f"{self.matched}/{ran} vectors, {source}{skipped}")


def run_vectors(alg: Algorithm, impl: Implementation, vectors: list[Vector],
                source: str) -> list[Outcome]:
    """Run `vectors` through every check `impl` takes; one Outcome per check."""
    checks = checks_for(alg, impl)
    tallies = {name: _Tally() for name, check in checks.items() if callable(check)}
    for index, vector in enumerate(vectors):
        vector_id = _vector_id(vector, index)
        for name, verdict in check_vector(alg, impl, vector).items():
            tallies[name].add(vector_id, verdict)
    outcomes = []
    for name, check in checks.items():
        if callable(check):
            outcomes.append(tallies[name].outcome(alg, impl, name, source))
        else:
            outcomes.append(Outcome(alg.name, impl.name, name, "not offered", check))
    return outcomes


def known_answer_checks(alg: Algorithm, impl: Implementation) -> list[Outcome]:
    """Known-answer tests of `impl` for `alg`, one Outcome per check."""
    if not checks_for(alg, impl):
        return [Outcome(alg.name, impl.name, "KAT", "not offered", impl.without_vectors(alg))]
    try:
        vectors, source = load_for(alg)
    except VectorsUnavailable as exc:
        return [Outcome(alg.name, impl.name, "KAT", "unavailable", str(exc))]
    return run_vectors(alg, impl, vectors, source)

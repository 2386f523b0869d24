"""Known-answer tests: each implementation against published vectors, as far as its API allows.

`known_answer_checks(alg, impl)` loads the vectors for `alg` (the full NIST/RFC files from
cryptography-vectors when installed, else the curated `vectors/` set), runs every vector
through each check the implementation can take, and returns one Outcome per check with the
vector count. `check_vector(alg, impl, vector)` runs one vector, so tests can feed it a
copied, corrupted vector and see it fail.

A check that an API cannot express is reported "not offered" with the reason; nothing is
compared that the implementation did not compute.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import (
    ec,
    ed448,
    ed25519,
    mldsa,
    mlkem,
    padding,
    rsa,
    x448,
    x25519,
)
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from pqbench.algorithms.base import Algorithm
from pqbench.checks.vectors import (
    Parser,
    Vector,
    VectorsUnavailable,
    cryptography_vectors_version,
    load_vectors,
    parse_colon_lines,
    parse_nist_rsp,
    parse_pqbench_json,
)
from pqbench.checks.verify import Outcome
from pqbench.implementations.base import Implementation

#: A per-vector check answers True/False, or returns the reason it does not apply.
VectorCheck = Callable[[Algorithm, Vector], bool | str]

#: Native C loops: their self-check runs in C before every timing loop; no KAT entry point.
NATIVE = {
    "liboqs": "a round trip and tamper check in C (keygen, encaps/sign, decaps/verify, "
              "a flipped byte rejected) before every timing loop",
    "libcrypto": "a round trip and tamper check in C through the system libcrypto's EVP API "
                 "before every timing loop",
}


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


# --- liboqs randomness: the hook liboqs's own KAT programs use ---------------------------

_RANDOMBYTES = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t)


class _Feed:
    """Hands liboqs the bytes a KAT prescribes; zeros (and `overrun`) if it asks for more."""

    def __init__(self, data: bytes) -> None:
        self.data, self.overrun = data, False

    def __call__(self, buffer: ctypes._Pointer[ctypes.c_uint8], length: int) -> None:
        chunk, self.data = self.data[:length], self.data[length:]
        if len(chunk) < length:
            self.overrun = True
            chunk = chunk.ljust(length, b"\0")
        ctypes.memmove(buffer, chunk, length)


@contextmanager
def _liboqs_randomness(oqs: ModuleType, data: bytes) -> Iterator[_Feed]:
    """Make liboqs's OQS_randombytes return `data`, as liboqs's tests/kat_*.c do.

    Process-wide while it lasts, so it wraps a single call and puts the system RNG back.
    """
    feed = _Feed(data)
    callback = _RANDOMBYTES(feed)  # kept alive by this frame while liboqs may call it
    library = oqs.native()
    library.OQS_randombytes_custom_algorithm(callback)
    try:
        yield feed
    finally:
        library.OQS_randombytes_switch_algorithm(b"system")


def _oqs() -> ModuleType:
    from pqbench.liboqs import import_oqs

    return import_oqs()


def _hex(vector: Vector, key: str) -> bytes:
    return bytes.fromhex(vector[key])


# --- ML-KEM (FIPS 203) ------------------------------------------------------------------

def _oqs_kem_keygen(alg: Algorithm, v: Vector) -> bool | str:
    with _oqs().KeyEncapsulation(alg.liboqs_name) as kem:
        public = kem.generate_keypair_seed(_hex(v, "d") + _hex(v, "z"))
        return bytes(public) == _hex(v, "pk") and bytes(kem.export_secret_key()) == _hex(v, "sk")


def _oqs_kem_encaps(alg: Algorithm, v: Vector) -> bool | str:
    oqs = _oqs()
    with oqs.KeyEncapsulation(alg.liboqs_name) as kem, _liboqs_randomness(oqs, _hex(v, "msg")) \
            as feed:
        ciphertext, shared = kem.encap_secret(_hex(v, "pk"))
    return (not feed.overrun and not feed.data and bytes(ciphertext) == _hex(v, "ct")
            and bytes(shared) == _hex(v, "ss"))


def _oqs_decaps(ct: str, ss: str) -> VectorCheck:
    def check(alg: Algorithm, v: Vector) -> bool | str:
        with _oqs().KeyEncapsulation(alg.liboqs_name, secret_key=_hex(v, "sk")) as kem:
            return bytes(kem.decap_secret(_hex(v, ct))) == _hex(v, ss)
    return check


_PYCA_MLKEM: dict[str, Any] = {
    "ML-KEM-768": mlkem.MLKEM768PrivateKey, "ML-KEM-1024": mlkem.MLKEM1024PrivateKey}


def _pyca_mlkem_key(alg: Algorithm, v: Vector) -> Any:
    # FIPS 203 7.1: the 64-byte seed d||z determines the whole key pair.
    return _PYCA_MLKEM[alg.name].from_seed_bytes(_hex(v, "d") + _hex(v, "z"))


def _pyca_kem_keygen(alg: Algorithm, v: Vector) -> bool | str:
    return _pyca_mlkem_key(alg, v).public_key().public_bytes_raw() == _hex(v, "pk")


def _pyca_decaps(ct: str, ss: str) -> VectorCheck:
    def check(alg: Algorithm, v: Vector) -> bool | str:
        return _pyca_mlkem_key(alg, v).decapsulate(_hex(v, ct)) == _hex(v, ss)
    return check


# --- ML-DSA (FIPS 204) ------------------------------------------------------------------

def _signature(v: Vector) -> bytes:
    """The curated files store `sig`; the NIST files store sm = signature || message."""
    if "sig" in v:
        return _hex(v, "sig")
    return _hex(v, "sm")[: int(v["smlen"]) - int(v["mlen"])]


def _oqs_dsa_sign(alg: Algorithm, v: Vector) -> bool | str:
    oqs = _oqs()
    # FIPS 204 Algorithm 2: deterministic signing is hedged signing with rnd = 0^32.
    with oqs.Signature(alg.liboqs_name, secret_key=_hex(v, "sk")) as signer, \
            _liboqs_randomness(oqs, bytes(32)) as feed:
        signature = signer.sign_with_ctx_str(_hex(v, "msg"), _hex(v, "ctx"))
    return not feed.overrun and not feed.data and bytes(signature) == _signature(v)


def _oqs_dsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    with _oqs().Signature(alg.liboqs_name) as verifier:
        return bool(verifier.verify_with_ctx_str(_hex(v, "msg"), _signature(v), _hex(v, "ctx"),
                                                 _hex(v, "pk")))


_PYCA_MLDSA: dict[str, Any] = {
    "ML-DSA-44": mldsa.MLDSA44PrivateKey, "ML-DSA-65": mldsa.MLDSA65PrivateKey,
    "ML-DSA-87": mldsa.MLDSA87PrivateKey}


def _pyca_dsa_keygen(alg: Algorithm, v: Vector) -> bool | str:
    key = _PYCA_MLDSA[alg.name].from_seed_bytes(_hex(v, "xi"))
    return key.public_key().public_bytes_raw() == _hex(v, "pk")


_PYCA_MLDSA_PUBLIC: dict[str, Any] = {
    "ML-DSA-44": mldsa.MLDSA44PublicKey, "ML-DSA-65": mldsa.MLDSA65PublicKey,
    "ML-DSA-87": mldsa.MLDSA87PublicKey}


def _pyca_dsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    public = _PYCA_MLDSA_PUBLIC[alg.name].from_public_bytes(_hex(v, "pk"))
    return _verifies(lambda: public.verify(_signature(v), _hex(v, "msg"), _hex(v, "ctx")))


def _verifies(call: Callable[[], object]) -> bool:
    try:
        call()
    except InvalidSignature:
        return False
    return True


# --- classical schemes through cryptography ---------------------------------------------

_XDH: dict[str, Any] = {"X25519": (x25519.X25519PrivateKey, x25519.X25519PublicKey),
        "X448": (x448.X448PrivateKey, x448.X448PublicKey)}


def _xdh_derive(alg: Algorithm, v: Vector) -> bool | str:
    # RFC 7748 5: X25519/X448(scalar, u) -> u; 6.x key exchange is two of these each.
    private_class, public_class = _XDH[alg.name]
    secret = private_class.from_private_bytes(_hex(v, "INPUT_SCALAR"))
    return secret.exchange(public_class.from_public_bytes(_hex(v, "INPUT_U"))) == \
        _hex(v, "OUTPUT_U")


_EDDSA: dict[str, Any] = {"Ed25519": (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey),
          "Ed448": (ed448.Ed448PrivateKey, ed448.Ed448PublicKey)}
_NO_CONTEXT = "cryptography's Ed448 API takes no context string (RFC 8032 5.2 Ed448 ctx)"


def _eddsa_keygen(alg: Algorithm, v: Vector) -> bool | str:
    secret = _EDDSA[alg.name][0].from_private_bytes(_hex(v, "SECRET"))
    return secret.public_key().public_bytes_raw() == _hex(v, "PUBLIC")


def _eddsa_sign(alg: Algorithm, v: Vector) -> bool | str:
    if v.get("CONTEXT"):
        return _NO_CONTEXT
    # RFC 8032 5.1.6/5.2.6: EdDSA signing is deterministic, so the signature must match.
    secret = _EDDSA[alg.name][0].from_private_bytes(_hex(v, "SECRET"))
    return secret.sign(_hex(v, "MESSAGE")) == _hex(v, "SIGNATURE")


def _eddsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    if v.get("CONTEXT"):
        return _NO_CONTEXT
    public = _EDDSA[alg.name][1].from_public_bytes(_hex(v, "PUBLIC"))
    return _verifies(lambda: public.verify(_hex(v, "SIGNATURE"), _hex(v, "MESSAGE")))


_CURVES: dict[str, ec.EllipticCurve] = {
    "P-256": ec.SECP256R1(), "P-384": ec.SECP384R1(), "P-521": ec.SECP521R1()}


def _curve(alg: Algorithm) -> ec.EllipticCurve:
    return _CURVES[alg.name.split("-", 1)[1]]


def _expected_valid(v: Vector) -> bool:
    return v["Result"].startswith("P")


def _ecdh_derive(alg: Algorithm, v: Vector) -> bool | str:
    """SP 800-56A validity test: Z must match for P records; F records must not succeed.

    F records carry an off-curve public key, a changed private key or a changed Z; the
    implementation passes them by refusing the key or by computing something else.
    """
    curve = _curve(alg)
    try:
        peer = ec.EllipticCurvePublicNumbers(int(v["QsCAVSx"], 16), int(v["QsCAVSy"], 16),
                                             curve).public_key()
        own = ec.derive_private_key(int(v["dsIUT"], 16), curve)
        own_point = own.public_key().public_numbers()
        matches = (own_point.x == int(v["QsIUTx"], 16) and own_point.y == int(v["QsIUTy"], 16)
                   and own.exchange(ec.ECDH(), peer) == _hex(v, "Z"))
    except ValueError:  # cryptography refuses points not on the curve
        matches = False
    return matches == _expected_valid(v)


_ECDSA_HASH = {"P-256": hashes.SHA256, "P-384": hashes.SHA384}


def _ecdsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    """FIPS 186-3 SigVer: the verdict must equal the record's Result (P or F)."""
    curve_name = alg.name.split("-", 1)[1]
    try:
        public = ec.EllipticCurvePublicNumbers(int(v["Qx"], 16), int(v["Qy"], 16),
                                               _CURVES[curve_name]).public_key()
    except ValueError:
        return not _expected_valid(v)
    signature = encode_dss_signature(int(v["R"], 16), int(v["S"], 16))
    accepted = _verifies(lambda: public.verify(
        signature, _hex(v, "Msg"), ec.ECDSA(_ECDSA_HASH[curve_name]())))
    return accepted == _expected_valid(v)


def _rsa_verify(alg: Algorithm, v: Vector) -> bool | str:
    # RFC 8017 8.2: PKCS#1 v1.5 signatures are deterministic, so verifying the published S
    # pins the exact encoding an implementation produces.
    public = rsa.RSAPublicNumbers(int(v["e"], 16), int(v["n"], 16)).public_key()
    return _verifies(lambda: public.verify(_hex(v, "S"), _hex(v, "Msg"), padding.PKCS1v15(),
                                           hashes.SHA256()))


# --- which checks each implementation takes ----------------------------------------------

#: (implementation, family) -> check name -> per-vector check, or the reason it is not offered.
CHECKS: dict[tuple[str, str], dict[str, VectorCheck | str]] = {
    ("liboqs-python", "ML-KEM"): {
        "KAT keygen": _oqs_kem_keygen,
        "KAT encaps": _oqs_kem_encaps,
        "KAT decaps": _oqs_decaps("ct", "ss"),
        "KAT implicit rejection": _oqs_decaps("ct_n", "ss_n"),
    },
    ("cryptography", "ML-KEM"): {
        "KAT keygen": _pyca_kem_keygen,
        "KAT encaps": "cryptography's encapsulate() draws its own randomness and has no "
                      "seeded form, so the KAT ciphertext cannot be reproduced; checked "
                      "instead: decaps of the KAT ciphertexts",
        "KAT decaps": _pyca_decaps("ct", "ss"),
        "KAT implicit rejection": _pyca_decaps("ct_n", "ss_n"),
    },
    ("liboqs-python", "ML-DSA"): {
        "KAT keygen": "liboqs 0.13 has no seeded ML-DSA key generation (no keypair_derand "
                      "for signatures); the KAT secret key is used for signing instead",
        "KAT sign": _oqs_dsa_sign,
        "KAT verify": _oqs_dsa_verify,
    },
    ("cryptography", "ML-DSA"): {
        "KAT keygen": _pyca_dsa_keygen,
        "KAT sign": "cryptography signs hedged (FIPS 204 Algorithm 2 with fresh rnd) and "
                    "offers no deterministic mode, so KAT signatures cannot be reproduced; "
                    "checked instead: keygen from xi and verify of the KAT signatures",
        "KAT verify": _pyca_dsa_verify,
    },
    ("cryptography", "EdDSA"): {
        "KAT keygen": _eddsa_keygen, "KAT sign": _eddsa_sign, "KAT verify": _eddsa_verify,
    },
    ("cryptography", "ECDSA"): {
        "KAT sign": "pqbench signs with random k (FIPS 186-5 6.4.1), as it times; no "
                    "deterministic (RFC 6979) vectors are wired in. The SigVer vectors check "
                    "verification, including rejection of altered records",
        "KAT verify": _ecdsa_verify,
    },
    ("cryptography", "RSA"): {
        "KAT sign": "the NIST SigGen15 files publish n, e and S but not the private key",
        "KAT verify": _rsa_verify,
    },
}


def checks_for(alg: Algorithm, impl: Implementation) -> dict[str, VectorCheck | str]:
    """Check name -> per-vector check (or reason not offered); empty when there are none."""
    if impl.name == "cryptography" and alg.family == "ECDH":
        derive = _xdh_derive if alg.name in _XDH else _ecdh_derive
        return {"KAT derive": derive}
    return dict(CHECKS.get((impl.name, alg.family), {}))


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
    if impl.name in NATIVE:
        return [Outcome(alg.name, impl.name, "KAT", "not offered",
                        f"the native timing loop has no known-answer entry point; checked "
                        f"instead: {NATIVE[impl.name]}")]
    if not checks_for(alg, impl):
        return [Outcome(alg.name, impl.name, "KAT", "not offered",
                        f"pqbench has no known-answer vectors for {alg.name} "
                        f"through {impl.name}")]
    try:
        vectors, source = load_for(alg)
    except VectorsUnavailable as exc:
        return [Outcome(alg.name, impl.name, "KAT", "unavailable", str(exc))]
    return run_vectors(alg, impl, vectors, source)

"""Foreign implementations (Go, aws-lc-rs, libcrux, the JDK, BouncyCastle) as pqbench
implementations: each is a worker process (`pqbench.libraries.stacks`) that times its own loops.

What a row of them passes before it is timed, as the native rows do:

* its own round trip and tamper checks, run inside the worker;
* interoperability both ways with an independent implementation: liboqs (through
  liboqs-python; cryptography where liboqs is unavailable) for ML-KEM and ML-DSA, and
  pyca/cryptography for X25519, P-256 and Ed25519: a ciphertext one makes, the other
  decapsulates to the same secret; a signature one makes, the other verifies; a tampered
  one fails; both sides of a key agreement derive one secret;
* the NIST ACVP and RFC known answers (`checks.kat`) as far as the worker's features allow
  (seeded key generation, derandomized encapsulation, deterministic signing, importing an
  expanded key); a check the library's API cannot express is "not offered" with its reason.

A pair that fails any of them is never timed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.vectors import Vector, hex_field, signature_of
from pqbench.data.record.rounds import LoopResult
from pqbench.libraries.implementations.base import (
    Check,
    Implementation,
    TimedOperation,
    VectorCheck,
)
from pqbench.libraries.stacks import protocol, registry
from pqbench.libraries.stacks.client import RequestRefused, StackWorker
from pqbench.libraries.stacks.protocol import Hello
from pqbench.libraries.stacks.running import StackProcess
from pqbench.platform.errors import NotOfferedError, VerificationError, WorkerFailed

#: The message every interoperability check signs.
MESSAGE = bytes(range(32))


def _flip(data: bytes, index: int = 0) -> bytes:
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


@dataclass
class StackOperation(TimedOperation):
    """A row prepared inside a worker; each round is one `run` request."""

    worker: StackWorker
    row: str
    sizes: Mapping[str, int] = field(default_factory=dict)
    attributes: Mapping[str, object] = field(default_factory=dict)
    counter: str | None = None
    warmup: Literal["once", "steady"] = "steady"
    #: The row's last round, which the next may not repeat (`protocol.parse_round`).
    last: protocol.Round | None = None

    def run(self, seconds: float) -> LoopResult:
        started = time.monotonic_ns()
        reply = self.worker.request({"type": "run", "row": self.row, "seconds": seconds},
                                    ("round",), timeout=self.worker.round_timeout(seconds))
        waited = time.monotonic_ns() - started
        try:
            found = protocol.parse_round(reply, self.row, seconds, waited_ns=waited,
                                         cpus=os.cpu_count() or 1, previous=self.last)
        except protocol.ProtocolError as exc:
            # A round that cannot be true: the worker is not trusted with another.
            raise self.worker.fail(f"its round breaks the protocol: {exc}") from None
        self.last = found
        return LoopResult(found.ops, found.wall_ns, None, cpu_ns=found.thread_cpu_ns,
                          process_cpu_ns=found.process_cpu_ns)


class StackImplementation(Implementation):
    """One foreign implementation, served by its worker."""

    kinds = frozenset({"kem", "signature", "key-agreement"})
    multi_process = False

    def __init__(self, stack: registry.Stack, process: StackProcess | None = None) -> None:
        self.stack = stack
        self.name = stack.name
        self.description = f"{stack.description} ({stack.language} worker)"
        self.process = process or StackProcess(stack)
        self._rows = itertools.count(1)

    # --- availability -------------------------------------------------------------------

    def in_scope(self, alg: Algorithm) -> bool:
        return alg.name in registry.PROTOCOL_ALGORITHMS

    def unavailable_reason(self) -> str | None:
        """Why this implementation cannot run here, found without building anything (a
        missing toolchain, no sources) or kept from a build or worker that failed."""
        if self.process.unavailable is not None:
            return self.process.unavailable
        if self.process.worker is not None and self.process.worker.failure is not None:
            return self.process.worker.failure
        if self.process.hello is not None:
            return None
        found = self.process.availability()
        return found.detail if found.state == "missing" else None

    def provision(self) -> None:
        # A failure's reason is kept: unavailable_reason says it.
        with contextlib.suppress(Exception):
            self.process.ensure()

    def _hello(self) -> Hello:
        return self.process.ensure()

    def _worker(self) -> StackWorker:
        self._hello()
        assert self.process.worker is not None
        return self.process.worker

    def failure(self) -> str | None:
        worker = self.process.worker
        return worker.failure if worker is not None else None

    def offers(self, alg: Algorithm, operation: str) -> str | None:
        reason = self.unavailable_reason()
        if reason:
            return reason
        try:
            hello = self._hello()
        except Exception:
            return self.unavailable_reason() or f"{self.name} could not start"
        operations = hello.offers.get(alg.name)
        if operations is None:
            return f"{self.name} does not offer {alg.name}"
        if operation not in operations:
            return f"{self.name} offers {alg.name} {', '.join(operations)}, not {operation}"
        return None

    def features(self, alg: Algorithm) -> tuple[str, ...]:
        return self._hello().features.get(alg.name, ())

    # --- requests -----------------------------------------------------------------------

    def ask(self, message: dict[str, Any], *replies: str) -> dict[str, Any]:
        """One correctness request; an `error` reply is a VerificationError naming it."""
        try:
            return self._worker().request(message, replies)
        except RequestRefused as exc:
            raise VerificationError(f"{self.name} refused {message['type']}: {exc}") from None

    def keygen(self, alg: Algorithm, seed: bytes | None = None) -> tuple[str, bytes]:
        key, public = self.keygen_from(alg, seed)
        if public is None:
            raise VerificationError(f"{self.name} made a {alg.name} key without its public key")
        return key, public

    def keygen_from(self, alg: Algorithm, seed: bytes | None) -> tuple[str, bytes | None]:
        """A key and its public key, which an API that imports a bare private scalar may
        not derive (the JDK's P-256): then None."""
        message: dict[str, Any] = {"type": "keygen", "alg": alg.name}
        if seed is not None:
            message["seed"] = seed.hex()
        reply = self.ask(message, "key")
        public = protocol.hex_bytes(reply, "public") if reply.get("public") is not None \
            else None
        return protocol.text(reply.get("key"), "key"), public

    def import_secret(self, alg: Algorithm, secret: bytes) -> str:
        reply = self.ask({"type": "import", "alg": alg.name, "secret": secret.hex()}, "key")
        return protocol.text(reply.get("key"), "key")

    def encaps(self, alg: Algorithm, public: bytes,
               random: bytes | None = None) -> tuple[bytes, bytes]:
        message: dict[str, Any] = {"type": "encaps", "alg": alg.name, "public": public.hex()}
        if random is not None:
            message["random"] = random.hex()
        reply = self.ask(message, "encapsulated")
        return protocol.hex_bytes(reply, "ciphertext"), protocol.hex_bytes(reply,
                                                                            "shared_secret")

    def decaps(self, alg: Algorithm, key: str, ciphertext: bytes) -> bytes:
        reply = self.ask({"type": "decaps", "alg": alg.name, "key": key,
                          "ciphertext": ciphertext.hex()}, "decapsulated")
        return protocol.hex_bytes(reply, "shared_secret")

    def sign(self, alg: Algorithm, key: str, message: bytes, context: bytes = b"",
             deterministic: bool = False) -> bytes:
        request: dict[str, Any] = {"type": "sign", "alg": alg.name, "key": key,
                                   "message": message.hex()}
        if context:
            request["context"] = context.hex()
        if deterministic:
            request["deterministic"] = True
        return protocol.hex_bytes(self.ask(request, "signed"), "signature")

    def verify(self, alg: Algorithm, public: bytes, message: bytes, signature: bytes,
               context: bytes = b"") -> bool:
        request: dict[str, Any] = {"type": "verify", "alg": alg.name, "public": public.hex(),
                                   "message": message.hex(), "signature": signature.hex()}
        if context:
            request["context"] = context.hex()
        valid = self.ask(request, "verified").get("valid")
        if not isinstance(valid, bool):
            raise VerificationError(f"{self.name} answered verify without a true/false valid")
        return valid

    def derive(self, alg: Algorithm, key: str, peer: bytes) -> bytes:
        reply = self.ask({"type": "derive", "alg": alg.name, "key": key, "peer": peer.hex()},
                         "derived")
        return protocol.hex_bytes(reply, "shared_secret")

    # --- checks before timing -----------------------------------------------------------

    def self_check(self, alg: Algorithm) -> list[Check]:
        from pqbench.libraries.implementations import stacks_interop

        reason = self.offers(alg, alg.all_operations[0])
        if reason:
            raise NotOfferedError(reason)
        return stacks_interop.check(self, alg)

    def vector_checks(self, alg: Algorithm) -> Mapping[str, VectorCheck | str]:
        try:
            hello = self._hello()
        except Exception:
            return {}
        if alg.name not in hello.offers:
            return {}
        return known_answer_checks(self, alg, hello.features.get(alg.name, ()))

    def without_vectors(self, alg: Algorithm) -> str:
        return (f"pqbench has no known-answer vectors for {alg.name}; checked instead: "
                "interoperability with liboqs or cryptography")

    # --- timing -------------------------------------------------------------------------

    def prepare(self, alg: Algorithm, operation: str,
                block_size: int | None = None) -> TimedOperation:
        reason = self.offers(alg, operation)
        if reason:
            raise NotOfferedError(reason)
        hello = self._hello()
        worker = self._worker()
        row = f"r{next(self._rows)}"
        try:
            reply = worker.request({"type": "prepare", "row": row, "alg": alg.name,
                                    "operation": operation}, ("prepared",))
        except RequestRefused as exc:
            raise WorkerFailed(f"{self.name} could not prepare {alg.name} {operation}: "
                               f"{exc}") from None
        try:
            prepared = protocol.parse_prepared(reply, row)
        except protocol.ProtocolError as exc:
            raise worker.fail(f"its prepared reply breaks the protocol: {exc}") from None
        attributes: dict[str, object] = {
            **prepared.attributes, "runtime": hello.runtime,
            "library": hello.library_of.get(alg.name, self.name),
            "code_path": hello.code_paths.get(alg.name, "unknown")}
        operation_ = StackOperation(worker, row, dict(prepared.sizes), attributes)
        operation_.warmup_min_seconds = self.stack.recipe.warmup_min_seconds
        return operation_

    # --- fingerprint --------------------------------------------------------------------

    def versions(self) -> dict[str, object]:
        """The library versions the worker reports (once it runs), each under
        "implementation:library", and its runtime."""
        hello = self.process.hello
        if hello is None:
            return {}
        found: dict[str, object] = {f"{self.name}:runtime": hello.runtime}
        for library, version in hello.libraries.items():
            found[f"{self.name}:{library}"] = version
        return found

    def details(self) -> dict[str, dict[str, object]]:
        hello = self.process.hello
        if hello is None:
            return {}
        planned = self.process.planned
        found: dict[str, object] = {**hello.as_dict(), "pins": [p.spec for p in self.process.pins]}
        if planned is not None:
            found["build"] = str(planned.directory)
            found["toolchains"] = {n: t.version for n, t in planned.toolchains.items()}
        return {f"stack:{self.name}": found}


# --- known answers through the worker ---------------------------------------------------


def _applies(check: Callable[[], bool]) -> bool | str:
    """A check's answer; a problem the worker answers for this vector (a context its API
    lacks, say) is its reason, not a wrong answer."""
    try:
        return check()
    except NotOfferedError as exc:
        return str(exc)


def known_answer_checks(impl: StackImplementation, alg: Algorithm,
                        features: tuple[str, ...]) -> dict[str, VectorCheck | str]:
    """Check name -> per-vector check through the worker, or why its features cannot
    express it."""
    has = set(features)
    name = impl.name

    def lacks(feature: str, what: str) -> str:
        return f"{name} offers no {feature.replace('_', ' ')} for {alg.name}: {what}"

    if alg.family == "ML-KEM":
        def key_of(a: Algorithm, v: Vector) -> str:
            if "import_expanded" in has:
                return impl.import_secret(a, hex_field(v, "sk"))
            return impl.keygen(a, hex_field(v, "d") + hex_field(v, "z"))[0]

        def decaps(ct: str, ss: str) -> VectorCheck:
            return lambda a, v: _applies(
                lambda: impl.decaps(a, key_of(a, v), hex_field(v, ct)) == hex_field(v, ss))

        can_decaps = has & {"import_expanded", "seeded_keygen"}
        no_key = lacks("seeded_keygen", "the KAT secret key cannot be loaded (nor an "
                       "expanded key imported); decapsulation is checked by interoperability")
        return {
            "KAT keygen": (lambda a, v: _applies(
                lambda: impl.keygen(a, hex_field(v, "d") + hex_field(v, "z"))[1]
                == hex_field(v, "pk"))) if "seeded_keygen" in has else lacks(
                "seeded_keygen", "key generation is checked by interoperability"),
            "KAT encaps": (lambda a, v: _applies(
                lambda: impl.encaps(a, hex_field(v, "pk"), hex_field(v, "msg"))
                == (hex_field(v, "ct"), hex_field(v, "ss")))) if "derandomized_encaps" in has
            else lacks("derandomized_encaps", "the KAT ciphertext cannot be reproduced; "
                       "encapsulation is checked by interoperability"),
            "KAT decaps": decaps("ct", "ss") if can_decaps else no_key,
            "KAT implicit rejection": decaps("ct_n", "ss_n") if can_decaps else no_key,
        }
    if alg.family == "ML-DSA":
        def signing_key(a: Algorithm, v: Vector) -> str:
            if "import_expanded" in has:
                return impl.import_secret(a, hex_field(v, "sk"))
            return impl.keygen(a, hex_field(v, "xi"))[0]

        can_sign = "deterministic_sign" in has and has & {"import_expanded", "seeded_keygen"}
        return {
            "KAT keygen": (lambda a, v: _applies(
                lambda: impl.keygen(a, hex_field(v, "xi"))[1] == hex_field(v, "pk")))
            if "seeded_keygen" in has else lacks("seeded_keygen", "key generation is "
                                                 "checked by interoperability"),
            "KAT sign": (lambda a, v: _applies(
                lambda: impl.sign(a, signing_key(a, v), hex_field(v, "msg"),
                                  hex_field(v, "ctx"), deterministic=True)
                == signature_of(v))) if can_sign else lacks(
                "deterministic_sign", "signing is hedged only (or the KAT key cannot be "
                "loaded), so KAT signatures cannot be reproduced; checked instead: the KAT "
                "signatures verify"),
            "KAT verify": lambda a, v: _applies(
                lambda: impl.verify(a, hex_field(v, "pk"), hex_field(v, "msg"),
                                    signature_of(v), hex_field(v, "ctx"))),
        }
    if alg.name == "Ed25519":
        if "seeded_keygen" not in has:
            reason = lacks("seeded_keygen", "the RFC 8032 secret cannot be loaded")
            return {"KAT keygen": reason, "KAT sign": reason,
                    "KAT verify": lambda a, v: _applies(lambda: impl.verify(
                        a, hex_field(v, "PUBLIC"), hex_field(v, "MESSAGE"),
                        hex_field(v, "SIGNATURE")))}
        return {
            "KAT keygen": lambda a, v: _applies(
                lambda: impl.keygen(a, hex_field(v, "SECRET"))[1] == hex_field(v, "PUBLIC")),
            # RFC 8032 5.1.6: Ed25519 signing is deterministic, so the signature must match.
            "KAT sign": lambda a, v: _applies(lambda: impl.sign(
                a, impl.keygen(a, hex_field(v, "SECRET"))[0], hex_field(v, "MESSAGE"))
                == hex_field(v, "SIGNATURE")),
            "KAT verify": lambda a, v: _applies(lambda: impl.verify(
                a, hex_field(v, "PUBLIC"), hex_field(v, "MESSAGE"), hex_field(v, "SIGNATURE"))),
        }
    if alg.name == "X25519":
        if "seeded_keygen" not in has:
            return {"KAT derive": lacks("seeded_keygen", "the RFC 7748 scalar cannot be "
                                        "loaded; checked by interoperability instead")}
        # RFC 7748 5.2 and 6.1: X25519(scalar, u) -> u.
        return {"KAT derive": lambda a, v: _applies(lambda: impl.derive(
            a, impl.keygen(a, hex_field(v, "INPUT_SCALAR"))[0], hex_field(v, "INPUT_U"))
            == hex_field(v, "OUTPUT_U"))}
    if alg.name == "ECDH-P-256":
        if "seeded_keygen" not in has:
            return {"KAT derive": lacks("seeded_keygen", "the CAVS private scalar cannot be "
                                        "loaded; checked by interoperability instead")}
        return {"KAT derive": lambda a, v: _ecdh_record(impl, a, v)}
    if alg.name == "ECDSA-P-256":
        return {"KAT sign": "ECDSA signs with a random k (FIPS 186-5 6.4.1); the SigVer "
                            "vectors check verification, including rejection of altered "
                            "records",
                "KAT verify": lambda a, v: _ecdsa_record(impl, a, v)}
    return {}


def _point(x: str, y: str) -> bytes:
    """The uncompressed SEC 1 point 04||x||y of two hex coordinates (32 bytes each)."""
    return b"\x04" + int(x, 16).to_bytes(32, "big") + int(y, 16).to_bytes(32, "big")


def _expected_valid(v: Vector) -> bool:
    return v["Result"].startswith("P")


def _ecdh_record(impl: StackImplementation, alg: Algorithm, v: Vector) -> bool:
    """SP 800-56A validity test: Z must match for P records; F records (an off-curve
    public key, a changed private key or Z) must not succeed: refusing passes."""
    try:
        key, public = impl.keygen_from(alg, int(v["dsIUT"], 16).to_bytes(32, "big"))
        # An API that derives no public key from a bare scalar is checked on Z alone.
        matches = (public in (None, _point(v["QsIUTx"], v["QsIUTy"]))
                   and impl.derive(alg, key, _point(v["QsCAVSx"], v["QsCAVSy"]))
                   == hex_field(v, "Z"))
    except (VerificationError, NotOfferedError):
        matches = False
    return matches == _expected_valid(v)


def _ecdsa_record(impl: StackImplementation, alg: Algorithm, v: Vector) -> bool:
    """FIPS 186-3 SigVer: the verdict must equal the record's Result (P or F)."""
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    signature = encode_dss_signature(int(v["R"], 16), int(v["S"], 16))
    try:
        accepted = impl.verify(alg, _point(v["Qx"], v["Qy"]), hex_field(v, "Msg"), signature)
    except (VerificationError, NotOfferedError):
        accepted = False  # a public key off the curve, refused
    return accepted == _expected_valid(v)


def stack_implementations() -> tuple[StackImplementation, ...]:
    """One per registered stack, in the registry's order."""
    return tuple(StackImplementation(stack) for stack in registry.STACKS)

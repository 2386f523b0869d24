"""A stack worker as the worker tests drive it: a real process speaking the worker protocol
(docs/stacks.md) over pipes, with every read bounded by a deadline so a worker that stops
answering fails its test instead of hanging the suite; and the commands that start them: built by
pqbench's own builder, or (for the JVM worker on an older JDK) with the commands its README
gives.

Deliberately independent of pqbench's own protocol client: these tests check the workers
against the protocol as written, not against pqbench's reading of it.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pqbench.libraries.stacks import registry
from tests.helpers import REPO

STACKS = REPO / "pqbench" / "libraries" / "stacks"

#: How long a test waits for one reply before it fails (a generous ceiling, never a sleep:
#: the read returns as soon as the line arrives).
REPLY_DEADLINE = 120.0


class WorkerGone(AssertionError):
    """The worker closed its stdout or missed the deadline."""


class Worker:
    """One running worker process: `request` sends a line and returns the parsed reply."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env={**os.environ, **(env or {})}, bufsize=0)
        self._buffer = b""
        self.hello = self.reply()

    @property
    def implementation(self) -> str:
        """The implementation its hello names."""
        found = self.hello["implementation"]
        assert isinstance(found, str)
        return found

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def line(self, deadline: float = REPLY_DEADLINE) -> bytes | None:
        """The next stdout line without its newline; None once stdout is closed."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], deadline)
            if not ready:
                raise WorkerGone(f"no line within {deadline} s; stderr: {self.stderr()}")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                if self._buffer:
                    raise WorkerGone(f"stdout ended inside a line: {self._buffer[:200]!r}")
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def reply(self) -> dict[str, Any]:
        line = self.line()
        if line is None:
            raise WorkerGone(f"stdout closed; stderr: {self.stderr()}")
        parsed = json.loads(line)
        assert isinstance(parsed, dict), line[:200]
        return parsed

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        return self.reply()

    def expect(self, message: dict[str, Any], reply_type: str) -> dict[str, Any]:
        """The reply to `message`, which must be of `reply_type`."""
        reply = self.request(message)
        assert reply["type"] == reply_type, (message.get("type"), message.get("alg"), reply)
        return reply

    def keygen(self, alg: str, seed: bytes | None = None) -> tuple[str, bytes | None]:
        """A key pair: its handle and its public key (None where the library names none)."""
        request: dict[str, Any] = {"type": "keygen", "alg": alg}
        if seed is not None:
            request["seed"] = seed.hex()
        reply = self.expect(request, "key")
        return reply["key"], None if reply["public"] is None else bytes.fromhex(reply["public"])

    def key_pair(self, alg: str, seed: bytes | None = None) -> tuple[str, bytes]:
        """A key pair whose public key the worker must name."""
        key, public = self.keygen(alg, seed)
        assert public is not None, f"{alg} keygen named no public key"
        return key, public

    def sign(self, alg: str, key: str, message: bytes, **extra: Any) -> bytes:
        reply = self.expect({"type": "sign", "alg": alg, "key": key, "message": message.hex(),
                             **extra}, "signed")
        return bytes.fromhex(reply["signature"])

    def verify(self, alg: str, public: bytes, message: bytes, signature: bytes,
               **extra: Any) -> bool:
        reply = self.expect({"type": "verify", "alg": alg, "public": public.hex(),
                             "message": message.hex(), "signature": signature.hex(), **extra},
                            "verified")
        valid = reply["valid"]
        assert isinstance(valid, bool)
        return valid

    def encaps(self, alg: str, public: bytes, random: bytes | None = None
               ) -> tuple[bytes, bytes]:
        request: dict[str, Any] = {"type": "encaps", "alg": alg, "public": public.hex()}
        if random is not None:
            request["random"] = random.hex()
        reply = self.expect(request, "encapsulated")
        return bytes.fromhex(reply["ciphertext"]), bytes.fromhex(reply["shared_secret"])

    def decaps(self, alg: str, key: str, ciphertext: bytes) -> bytes:
        reply = self.expect({"type": "decaps", "alg": alg, "key": key,
                             "ciphertext": ciphertext.hex()}, "decapsulated")
        return bytes.fromhex(reply["shared_secret"])

    def derive(self, alg: str, key: str, peer: bytes) -> bytes:
        reply = self.expect({"type": "derive", "alg": alg, "key": key, "peer": peer.hex()},
                            "derived")
        return bytes.fromhex(reply["shared_secret"])

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-2000:]

    def close_stdin(self, deadline: float = REPLY_DEADLINE) -> int:
        """Close the worker's stdin and wait for it to exit: its exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=deadline)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=REPLY_DEADLINE)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


def built_worker(implementation: str) -> list[str]:
    """The command that starts `implementation`'s worker, built (once per machine, into the
    per-user cache) by pqbench's own builder, as `-i NAME` builds it."""
    from pqbench.libraries.stacks import compiling, registry

    built = compiling.compile_worker(compiling.plan(registry.by_name(implementation)),
                                     log=lambda line: None)
    return built.argv()


def with_jvm_options(argv: list[str], *options: str) -> list[str]:
    """A JVM worker's command with JVM `options` added after the java executable's own."""
    return [argv[0], *options, *argv[1:]]


#: The JVM's options for every worker (docs/stacks.md: a fixed heap, the serial collector),
#: as pqbench starts it.
JVM_OPTIONS = list(registry.JVM_OPTIONS)
JAVA_MAIN = "pqbench.stacks.Worker"


def jdk_homes() -> dict[int, Path]:
    """Every JDK in /usr/lib/jvm (and PQBENCH_JAVA_HOME), by feature release, from each one's
    `release` file; the newest home of each release wins."""
    candidates = sorted(Path("/usr/lib/jvm").glob("*"))
    if explicit := os.environ.get("PQBENCH_JAVA_HOME"):
        candidates.append(Path(explicit))
    found: dict[int, Path] = {}
    for home in candidates:
        release = home / "release"
        if not (release.is_file() and (home / "bin" / "javac").is_file()):
            continue
        match = re.search(r'^JAVA_VERSION="(\d+)', release.read_text(), re.MULTILINE)
        if match:
            found[int(match.group(1))] = home.resolve()
    return found


def newest_jdk(minimum: int) -> Path:
    homes = {release: home for release, home in jdk_homes().items() if release >= minimum}
    assert homes, f"a JDK {minimum} or newer must be installed under /usr/lib/jvm"
    return homes[max(homes)]


def build_jvm_worker(out_dir: Path, jdk: Path) -> Path:
    """The JVM worker built as pqbench/libraries/stacks/java/README.md says: BouncyCastle's jar
    fetched by Maven into out_dir/lib, both source trees compiled for Java 17 into out_dir/classes.
    Returns out_dir."""
    mvn = shutil.which("mvn")
    assert mvn is not None, "Maven (mvn) must be on PATH"
    java = STACKS / "java"
    env = {**os.environ, "JAVA_HOME": str(jdk)}
    fetched = subprocess.run([mvn, "-B", "-q", "-f", str(java / "pom.xml"),
                              "dependency:copy-dependencies", "-DincludeScope=runtime",
                              f"-DoutputDirectory={out_dir / 'lib'}"],
                             env=env, capture_output=True, text=True, timeout=900, check=False)
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    sources = sorted(str(p) for p in (java / "src").rglob("*.java"))
    listing = out_dir / "sources.txt"
    listing.write_text("\n".join(sources) + "\n")
    compiled = subprocess.run([str(jdk / "bin" / "javac"), "--release", "17", "-encoding", "UTF-8",
                               "-d", str(out_dir / "classes"), "-cp", f"{out_dir / 'lib'}/*",
                               f"@{listing}"],
                              capture_output=True, text=True, timeout=900, check=False)
    assert compiled.returncode == 0, compiled.stderr
    return out_dir


def jvm_worker_argv(built: Path, jdk: Path, implementation: str, *options: str) -> list[str]:
    """The command that starts the JVM worker, with JVM `options` after the fixed ones."""
    return [str(jdk / "bin" / "java"), *JVM_OPTIONS, *options, "-cp",
            f"{built / 'classes'}{os.pathsep}{built / 'lib'}/*", JAVA_MAIN,
            "--impl", implementation]


# --- what every worker's known answers are checked with -----------------------------------

def vectors(alg: str) -> list[dict[str, str]]:
    from pqbench.catalog.vectors import load_vectors, parse_pqbench_json

    return load_vectors(f"{alg.lower()}.json", parse_pqbench_json)


def flip(data: bytes, at: int = 0) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def problem(reply: dict[str, Any]) -> bool:
    """A `not_offered` problem with its reason: what a library lacks."""
    return reply["type"] == "problem" and reply["kind"] == "not_offered" and bool(
        reply["reason"])


def check_ml_kem_vectors(worker: Worker, alg: str, features: Sequence[str]) -> None:
    """FIPS 203 KAT as far as the API takes the inputs (`features`): keygen from d||z,
    encaps from m, decaps and the implicit rejection with each key it can load (from the
    seed, from the expanded dk), and a problem where it cannot import one."""
    for v in vectors(alg):
        pk = bytes.fromhex(v["pk"])
        handles = []
        imported = worker.request({"type": "import", "alg": alg, "secret": v["sk"]})
        if "import_expanded" in features:
            assert imported["type"] == "key" and imported["public"] == v["pk"], imported
            handles.append(imported["key"])
        else:
            assert problem(imported), imported
        if "seeded_keygen" in features:
            handle, public = worker.key_pair(alg, bytes.fromhex(v["d"] + v["z"]))
            assert public == pk
            handles.append(handle)
        if "derandomized_encaps" in features:
            assert worker.encaps(alg, pk, bytes.fromhex(v["msg"])) == (
                bytes.fromhex(v["ct"]), bytes.fromhex(v["ss"]))
        assert handles, "every worker loads the KAT key one way or the other"
        for handle in handles:
            for ct, ss in ((v["ct"], v["ss"]), (v["ct_n"], v["ss_n"])):  # ct_n: rejection
                assert worker.decaps(alg, handle, bytes.fromhex(ct)).hex() == ss


def check_ml_dsa_vectors(worker: Worker, alg: str, features: Sequence[str],
                         contexts: bool) -> None:
    """FIPS 204 pure KAT: keygen from xi; with the vector's context, the deterministic
    signature (with every key it loads) and its verification where the API takes a context
    (`contexts`), a problem where it does not; an expanded key imported where offered
    signs what the KAT public key verifies."""
    for v in vectors(alg):
        pk, msg, ctx, sig = (bytes.fromhex(v[k]) for k in ("pk", "msg", "ctx", "sig"))
        handle, public = worker.key_pair(alg, bytes.fromhex(v["xi"]))
        assert public == pk
        handles = [handle]
        imported = worker.request({"type": "import", "alg": alg, "secret": v["sk"]})
        if "import_expanded" in features:
            assert imported["type"] == "key" and imported["public"] in (None, pk.hex())
            handles.append(imported["key"])
        else:
            assert problem(imported), imported
        if "deterministic_sign" in features and contexts:
            for h in handles:
                assert worker.sign(alg, h, msg, context=ctx.hex(), deterministic=True) == sig
            assert worker.verify(alg, pk, msg, sig, context=ctx.hex())
            assert not worker.verify(alg, pk, msg, flip(sig, 100), context=ctx.hex())
            assert not worker.verify(alg, pk, msg, sig)  # the context left out
            continue
        # The vectors sign under a context: an API without contexts says not offered.
        asked = worker.request({"type": "sign", "alg": alg, "key": handle,
                                "message": msg.hex(), "context": ctx.hex(),
                                "deterministic": True})
        assert problem(asked), asked
        checked = worker.request({"type": "verify", "alg": alg, "public": pk.hex(),
                                  "message": msg.hex(), "context": ctx.hex(),
                                  "signature": sig.hex()})
        assert problem(checked), checked
        for h in handles:  # each key signs what the KAT public key verifies
            assert worker.verify(alg, pk, msg, worker.sign(alg, h, msg))


def check_x25519_vectors(worker: Worker) -> None:
    for v in vectors("X25519"):
        handle, public = worker.key_pair("X25519", bytes.fromhex(v["INPUT_SCALAR"]))
        assert worker.derive("X25519", handle, bytes.fromhex(v["INPUT_U"])).hex() == \
            v["OUTPUT_U"]
        if v["INPUT_U"] == "09" + "00" * 31:  # u = 9 is the base point: the public key
            assert public.hex() == v["OUTPUT_U"]

"""A stack worker in Python, for the protocol tests: real cryptography (pyca's X25519,
Ed25519 and ML-KEM-768), real timing loops, and modes that break the protocol on purpose.

    python fake_stack_worker.py [--impl NAME] [--mode MODE] [--fifo PATH]

Modes: `good`; `garbage-hello` (the first line is not JSON); `no-hello` (never greets);
`hang-run` (never answers a run); `exit-run` (says "fatal error: out of memory" on stderr
and exits during a run); `exit-later` (the same on its fifth run); `wrong-counts` (a round
with more operations than nanoseconds); `short-round` (a round shorter than asked);
`huge-line` (a 2 MiB reply to prepare); `wrong-row` (a round naming another row);
`wrong-answer` (decapsulates to the wrong secret); `block-later` (a row's runs after its
22nd write the worker's pid to the --fifo and never answer: past any warm-up (at most 20
rounds) and two timed rounds, so a test can interrupt a run at a known moment; opening the
fifo blocks until the test opens it to read); `short-rejection` (a tampered ciphertext of
its own decapsulates to a 16-byte secret); `twice` (every reply written twice);
`repeat-round` (a row's every round after its first is its first again);
`set:FIELD=VALUE[,FIELD=VALUE]` (every round's FIELD, one of ops, wall_ns,
thread_cpu_ns and process_cpu_ns, is VALUE). Unknown requests get an error; a closed stdin
or `quit` ends it with status 0.

`Worker.answer` serves one request without a process: `tests.helpers.stacks` drives pqbench's
client through it in the fast lane.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, mlkem, x25519

RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw
BLOCK_AFTER = 22
PRIVATE_RAW = (serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
               serialization.NoEncryption())


def hello(name: str) -> dict[str, Any]:
    return {"type": "hello", "protocol": 1, "implementation": name,
            "runtime": f"CPython {sys.version.split()[0]}",
            "libraries": {"cryptography": __import__("cryptography").__version__},
            "offers": {"ML-KEM-768": ["keygen", "encaps", "decaps"],
                       "X25519": ["keygen", "derive"],
                       "Ed25519": ["keygen", "sign", "verify"]},
            "features": {"ML-KEM-768": ["seeded_keygen"], "X25519": ["seeded_keygen"],
                         "Ed25519": ["seeded_keygen"]},
            "code_paths": {"ML-KEM-768": "unknown", "X25519": "unknown", "Ed25519": "unknown"},
            "library_of": {"ML-KEM-768": "cryptography", "X25519": "cryptography",
                           "Ed25519": "cryptography"},
            "pid": os.getpid()}


class Worker:
    def __init__(self, mode: str, fifo: str | None) -> None:
        self.mode = mode
        self.fifo = fifo
        self.keys: dict[str, Any] = {}
        self.rows: dict[str, Any] = {}
        self.per_row: dict[str, int] = {}
        #: The ciphertexts its own encaps made (`short-rejection` knows their tampering).
        self.made: set[bytes] = set()
        self.first_rounds: dict[str, dict[str, Any]] = {}

    def key(self, private: Any) -> dict[str, Any]:
        handle = f"k{len(self.keys) + 1}"
        self.keys[handle] = private
        public = private.public_key()
        raw = (public.public_bytes_raw() if hasattr(public, "public_bytes_raw")
               else public.public_bytes(*RAW))
        return {"type": "key", "key": handle, "public": raw.hex()}

    def answer(self, m: dict[str, Any]) -> dict[str, Any] | None:
        kind, alg = m.get("type"), m.get("alg")
        if kind == "keygen":
            seed = bytes.fromhex(m["seed"]) if "seed" in m else None
            if alg == "ML-KEM-768":
                return self.key(mlkem.MLKEM768PrivateKey.from_seed_bytes(seed) if seed
                                else mlkem.MLKEM768PrivateKey.generate())
            if alg == "X25519":
                return self.key(x25519.X25519PrivateKey.from_private_bytes(seed) if seed
                                else x25519.X25519PrivateKey.generate())
            if alg == "Ed25519":
                return self.key(ed25519.Ed25519PrivateKey.from_private_bytes(seed) if seed
                                else ed25519.Ed25519PrivateKey.generate())
        if kind == "encaps" and alg == "ML-KEM-768":
            if "random" in m:
                return {"type": "problem", "kind": "not_offered",
                        "reason": "no derandomized encapsulation"}
            public = mlkem.MLKEM768PublicKey.from_public_bytes(bytes.fromhex(m["public"]))
            shared, ct = public.encapsulate()
            self.made.add(ct)
            return {"type": "encapsulated", "ciphertext": ct.hex(), "shared_secret": shared.hex()}
        if kind == "decaps" and alg == "ML-KEM-768":
            ciphertext = bytes.fromhex(m["ciphertext"])
            shared = self.keys[m["key"]].decapsulate(ciphertext)
            if self.mode == "wrong-answer":
                shared = bytes(len(shared))
            if self.mode == "short-rejection" and bytes([ciphertext[0] ^ 1]) + ciphertext[1:] \
                    in self.made:
                shared = shared[:16]
            return {"type": "decapsulated", "shared_secret": shared.hex()}
        if kind == "derive" and alg == "X25519":
            peer = x25519.X25519PublicKey.from_public_bytes(bytes.fromhex(m["peer"]))
            return {"type": "derived",
                    "shared_secret": self.keys[m["key"]].exchange(peer).hex()}
        if kind == "sign" and alg == "Ed25519":
            return {"type": "signed",
                    "signature": self.keys[m["key"]].sign(bytes.fromhex(m["message"])).hex()}
        if kind == "verify" and alg == "Ed25519":
            public = ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(m["public"]))
            try:
                public.verify(bytes.fromhex(m["signature"]), bytes.fromhex(m["message"]))
            except (InvalidSignature, ValueError):
                return {"type": "verified", "valid": False}
            return {"type": "verified", "valid": True}
        if kind == "prepare":
            return self.prepare(m)
        if kind == "run":
            return self.run(m)
        return {"type": "error", "message": f"cannot serve {kind} {alg}"}

    def prepare(self, m: dict[str, Any]) -> dict[str, Any]:
        alg, op = m["alg"], m["operation"]
        if self.mode == "huge-line":
            return {"type": "prepared", "row": m["row"], "sizes": {}, "pad": "x" * (2 << 20)}
        if alg == "X25519" and op == "keygen":
            call = x25519.X25519PrivateKey.generate
            sizes = {"public_key": 32, "secret_key": 32}
        elif alg == "X25519" and op == "derive":
            mine, peer = x25519.X25519PrivateKey.generate(), x25519.X25519PrivateKey.generate()
            public = peer.public_key()
            call = lambda: mine.exchange(public)  # noqa: E731
            sizes = {"public_key": 32, "secret_key": 32, "shared_secret": 32}
        elif alg == "ML-KEM-768" and op in ("keygen", "encaps", "decaps"):
            key = mlkem.MLKEM768PrivateKey.generate()
            public = key.public_key()
            _, ct = public.encapsulate()
            call = {"keygen": mlkem.MLKEM768PrivateKey.generate, "encaps": public.encapsulate,
                    "decaps": lambda: key.decapsulate(ct)}[op]
            sizes = {"public_key": 1184, "secret_key": 64, "ciphertext": 1088,
                     "shared_secret": 32}
        elif alg == "Ed25519" and op in ("keygen", "sign", "verify"):
            key = ed25519.Ed25519PrivateKey.generate()
            messages = [os.urandom(32) for _ in range(64)]
            signatures = [key.sign(msg) for msg in messages]
            public = key.public_key()
            index = [0]

            def sign() -> None:
                index[0] = (index[0] + 1) % 64
                key.sign(messages[index[0]])

            def verify() -> None:
                index[0] = (index[0] + 1) % 64
                public.verify(signatures[index[0]], messages[index[0]])

            call = {"keygen": ed25519.Ed25519PrivateKey.generate, "sign": sign,
                    "verify": verify}[op]
            sizes = {"public_key": 32, "secret_key": 32, "signature": 64, "message": 32}
        else:
            return {"type": "problem", "kind": "not_offered", "reason": f"no {alg} {op}"}
        self.rows[m["row"]] = call
        attributes = {"key_form": "object"}
        if op == "sign":
            attributes.update(signing="deterministic", messages=64)
        return {"type": "prepared", "row": m["row"], "sizes": sizes, "attributes": attributes}

    def run(self, m: dict[str, Any]) -> dict[str, Any] | None:
        if self.mode == "hang-run":
            time.sleep(3600)
        self.runs = getattr(self, "runs", 0) + 1
        if self.mode == "exit-run" or (self.mode == "exit-later" and self.runs > 4):
            sys.stderr.write("fatal error: out of memory\n")
            sys.stderr.flush()
            os._exit(3)
        self.per_row[m["row"]] = self.per_row.get(m["row"], 0) + 1
        if self.mode == "block-later" and self.fifo and self.per_row[m["row"]] > BLOCK_AFTER:
            with open(self.fifo, "w") as told:  # blocks until the test opens it to read
                told.write(f"{os.getpid()}\n")
            time.sleep(3600)
        call = self.rows[m["row"]]
        budget = int(m["seconds"] * 1e9)
        ops, batch = 0, 1
        thread0, process0 = time.thread_time_ns(), time.process_time_ns()
        start = now = time.perf_counter_ns()
        while now - start < budget:
            batch_start = now
            for _ in range(batch):
                call()
            ops += batch
            now = time.perf_counter_ns()
            if now - batch_start < 500_000:
                batch *= 2
        wall = now - start
        thread, process = time.thread_time_ns() - thread0, time.process_time_ns() - process0
        if self.mode == "wrong-counts":
            ops = wall * 10
        if self.mode == "short-round":
            wall = budget // 2
        row = "another" if self.mode == "wrong-row" else m["row"]
        if self.mode == "repeat-round" and m["row"] in self.first_rounds:
            return self.first_rounds[m["row"]]
        found = {"type": "round", "row": row, "ops": ops, "wall_ns": wall,
                 "thread_cpu_ns": thread, "process_cpu_ns": max(process, thread)}
        if self.mode.startswith("set:"):
            for item in self.mode[4:].split(","):
                field, _, value = item.partition("=")
                found[field] = int(value)
        self.first_rounds.setdefault(m["row"], found)
        return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--impl", default="fake")
    parser.add_argument("--mode", default="good")
    parser.add_argument("--fifo")
    args = parser.parse_args()
    out = sys.stdout.buffer
    if args.mode == "no-hello":
        time.sleep(3600)
    if args.mode == "garbage-hello":
        out.write(b"Picked up JAVA_TOOL_OPTIONS: -Xmx1g\n")
        out.flush()
        time.sleep(3600)
    out.write((json.dumps(hello(args.impl)) + "\n").encode())
    out.flush()
    worker = Worker(args.mode, args.fifo)
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            reply: dict[str, Any] | None = {"type": "error", "message": "not JSON"}
        else:
            if message.get("type") == "quit":
                return 0
            try:
                reply = worker.answer(message)
            except Exception as exc:
                reply = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
        for _ in range(2 if args.mode == "twice" else 1):
            out.write((json.dumps(reply) + "\n").encode())
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

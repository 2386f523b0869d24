"""Synthetic runs for the compare, history, export-import (transfer) and store tests.

Rates are drawn from a seeded lognormal with 2 % noise per round, so each test knows the
true effect it planted; the fingerprints look like real ones (`environment.collect`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.rounds import LoopResult

#: (algorithm, implementation, operation, block size, ops/s)
ROWS: tuple[tuple[str, str, str, int | None, float], ...] = (
    ("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
    ("ML-KEM-768", "liboqs", "decaps", None, 50_000.0),
    ("AES-256-XTS", "cryptography", "encrypt", 16384, 550_000.0),
    ("SHA-256", "python", "hash", 16384, 100_000.0),
)
#: Two KEMs and a key agreement, every operation each: rows a speed run pairs into ratios
#: per exchange (post-quantum against classical) and against either KEM (--relative-to).
KEX_ROWS: tuple[tuple[str, str, str, int | None, float], ...] = (
    ("ML-KEM-768", "liboqs", "keygen", None, 20_000.0),
    ("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
    ("ML-KEM-768", "liboqs", "decaps", None, 50_000.0),
    ("ML-KEM-512", "liboqs", "keygen", None, 30_000.0),
    ("ML-KEM-512", "liboqs", "encaps", None, 90_000.0),
    ("ML-KEM-512", "liboqs", "decaps", None, 75_000.0),
    ("X25519", "libcrypto", "keygen", None, 40_000.0),
    ("X25519", "libcrypto", "derive", None, 30_000.0),
)


def environment(**changes: Any) -> dict[str, Any]:
    env: dict[str, Any] = {
        "os": {"system": "Darwin", "name": "macOS", "version": "10.14.4", "build": "18E226",
               "kernel": "18.5.0"},
        "os_build": "18E226",
        "arch": "x86_64",
        "cpu": {"model": "Intel(R) Core(TM) i7-8559U", "flags": ["aes", "avx2", "sha_ni"],
                "count": 8},
        "cpu_flags": ["aes", "avx2", "sha_ni"],
        "libraries": {"python": "3.11.7", "cryptography": "50.0.2",
                      "cryptography_openssl": "OpenSSL 4.0.3", "liboqs": "0.13.0",
                      "system_libcrypto": "LibreSSL 2.6.5"},
        "knobs": {"OPENSSL_ia32cap": None},
        "hostname": "mac",
        "testbed": "tb-1",
        "label": None,
        "mask": None,
    }
    for path, value in changes.items():
        target = env
        *parents, leaf = path.split("__")
        for part in parents:
            target = target[part]
        target[leaf] = value
    return env


def make_run(run_id: str, *, seed: int, label: str | None = None, factor: float = 1.0,
             factors: Mapping[str, float] | None = None, rounds: int = 9, noise: float = 0.02,
             started_at: str = "2026-01-01T00:00:00+00:00", env: dict[str, Any] | None = None,
             rows: tuple[tuple[str, str, str, int | None, float], ...] = ROWS) -> Run:
    """A run whose rates are `factor` (or `factors[algorithm]`) times the base rates."""
    rng = np.random.default_rng(seed)
    measurements = []
    for algorithm, implementation, operation, block, rate in rows:
        level = rate * (factors or {}).get(algorithm, factor)
        rounds_made = []
        for value in level * np.exp(rng.normal(0.0, noise, rounds)):
            ops = max(1, int(value * 0.05))
            rounds_made.append(LoopResult(ops, round(ops / value * 1e9), None))
        measurements.append(Measurement(
            algorithm=algorithm, implementation=implementation, operation=operation,
            rounds=tuple(rounds_made), block_size=block,
            attributes={"library": "hashlib"} if implementation == "python" else {}))
    return Run(run_id=run_id, started_at=started_at, finished_at=started_at,
               status="complete", command="pqbench speed", label=label,
               settings={"rounds": rounds}, environment=env or environment(label=label),
               measurements=tuple(measurements))


def make_runs(prefix: str, count: int, *, seed: int, drift: float = 0.0,
              label: str | None = None, start_day: int = 1, factor: float = 1.0,
              factors: Mapping[str, float] | None = None, env: dict[str, Any] | None = None,
              rows: tuple[tuple[str, str, str, int | None, float], ...] = ROWS) -> list[Run]:
    """`count` runs, each at its own lognormal machine state (sigma `drift`) times the
    planted factors: separate process invocations on a drifting machine."""
    rng = np.random.default_rng(seed)
    runs = []
    for i in range(count):
        state = float(np.exp(rng.normal(0.0, drift))) if drift else 1.0
        planted = {row[0]: state * (factors or {}).get(row[0], factor) for row in rows}
        runs.append(make_run(f"{prefix}{i}", seed=seed * 1000 + i, label=label,
                             factors=planted, env=env, rows=rows,
                             started_at=f"2026-01-{start_day:02d}T00:{i:02d}:00+00:00"))
    return runs


def make_ab_session(session: str, *, seed: int, pairs: int = 24, drift: float = 0.3,
                    factors: Mapping[str, float] | None = None, looks: int = 6,
                    env_a: dict[str, Any] | None = None,
                    env_b: dict[str, Any] | None = None, workers: int | None = None,
                    process: float = 0.0) -> tuple[Run, Run]:
    """The two runs a `pqbench ab` session stores: round i of A and round i of B share the
    machine state of pair i (lognormal, sigma `drift`); B is `factors` times A. With
    `workers`, pair i is taken by worker pair i mod `workers` (``ab_worker``), each worker
    process `process` (lognormal sigma) off by itself."""
    rng = np.random.default_rng(seed)
    sides: dict[str, list[Measurement]] = {"a": [], "b": []}
    taken = [i % workers for i in range(pairs)] if workers else None
    for algorithm, implementation, operation, block, rate in ROWS:
        states = np.exp(rng.normal(0.0, drift, pairs))
        for side, factor in (("a", 1.0), ("b", (factors or {}).get(algorithm, 1.0))):
            offsets = np.exp(rng.normal(0.0, process, workers or 1))
            own = offsets[np.asarray(taken)] if taken else 1.0
            values = rate * factor * states * own * np.exp(rng.normal(0.0, 0.01, pairs))
            rounds = tuple(LoopResult(max(1, int(v * 0.05)),
                                      round(max(1, int(v * 0.05)) / v * 1e9), None)
                           for v in values)
            sides[side].append(Measurement(
                algorithm=algorithm, implementation=implementation, operation=operation,
                rounds=rounds, block_size=block,
                attributes={"ab_seconds": 3.5, **({"library": "hashlib"}
                                                  if implementation == "python" else {}),
                            **({"ab_worker": taken} if taken else {})}))
    runs = []
    for side, env in (("a", env_a), ("b", env_b)):
        settings = {"ab": {"session": session, "side": side, "looks": list(range(looks)),
                           "alpha": 0.01}}
        runs.append(Run(run_id=f"{session}-{side}", started_at="2026-02-01T00:00:00+00:00",
                        finished_at="2026-02-01T00:05:00+00:00", status="complete",
                        command="pqbench ab", label=f"side {side}", settings=settings,
                        environment=env or environment(label=f"side {side}"),
                        measurements=tuple(sides[side])))
    return runs[0], runs[1]


def json_paths(value: Any, per_list: int, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON document (the root as ()), the first `per_list` items of each
    list: where a fuzz test mutates or replaces a value."""
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += json_paths(inner, per_list, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:per_list]):
            found += json_paths(inner, per_list, (*prefix, index))
    return found


#: A stand-in for `pqbench worker`: speaks the protocol (pqbench/sessions/ab/protocol.py) with the
#: answers the test chose. argv[1] is a JSON file: {"rows": [[a, i, o, block]],
#: "sizes": {...}, "round": {...fields of every round reply...}}.
_FAKE_WORKER = r'''
import json, sys
spec = json.load(open(sys.argv[1]))
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
send({"type": "hello", "protocol": 1, "pqbench": "fake", "python": "3", "pid": 1,
      "environment": {"hostname": "fake"}})
for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    if kind == "quit":
        break
    if kind == "pin":
        send({"type": "pinned", "cpus": [request["cpu"]]})
    elif kind == "plan":
        send({"type": "plan", "rows": spec["rows"], "problems": []})
    elif kind == "prepare":
        send({"type": "prepared", "checks": [], "sizes": spec.get("sizes", {}),
              "attributes": {}, "counter": None})
    elif kind == "run":
        reply = {"type": "round", "ops": 1000, "elapsed_ns": 1000000, "cycles": None,
                 "cpu_ns": 1000000}
        reply.update(spec.get("round", {}))
        sys.stdout.write(json.dumps(reply, allow_nan=True) + "\n")
        sys.stdout.flush()
'''


def fake_worker(where: Any, rows: list[list[Any]], sizes: dict[str, Any] | None = None,
                round_fields: dict[str, Any] | None = None) -> str:
    """A `cmd:` side that starts a fake worker answering with these rows, sizes and round
    fields (a worker is another program: the controller must judge what it says)."""
    import json
    import shlex
    import sys
    from pathlib import Path

    folder = Path(where)
    script, spec = folder / "fake_worker.py", folder / f"fake_{len(list(folder.iterdir()))}.json"
    script.write_text(_FAKE_WORKER)
    spec.write_text(json.dumps({"rows": rows, "sizes": sizes or {},
                                "round": round_fields or {}}))
    # The controller appends "worker"; the script ignores it.
    return "cmd:" + shlex.join([sys.executable, str(script), str(spec)])

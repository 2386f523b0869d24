"""Synthetic runs for the compare, history, exchange and store tests.

Rates are drawn from a seeded lognormal with 2 % noise per round, so each test knows the
true effect it planted; the fingerprints look like real ones (`environment.collect`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pqbench.results import Measurement, Run
from pqbench.timing.contract import LoopResult

#: (algorithm, implementation, operation, block size, ops/s)
ROWS: tuple[tuple[str, str, str, int | None, float], ...] = (
    ("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
    ("ML-KEM-768", "liboqs", "decaps", None, 50_000.0),
    ("AES-256-XTS", "cryptography", "encrypt", 16384, 550_000.0),
    ("SHA-256", "python", "hash", 16384, 100_000.0),
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

"""A synthetic fleet: machines, each with a series of OS builds, each build a few `speed`
runs taken in cycles (so their paired ratios exist), with steps planted where a test wants
them. What `pqbench publish`'s tests and benchmarks/publish_scale.py store.

Rates are seeded lognormal (`runs.make_run`: 2 % noise per round, a machine state per
run), so a test knows the effect it planted: `jumps` maps (machine, first build) to the
factors of the rows that change there, and `masked` sets an OpenSSL capability mask on
the runs of a build (a masked jump: AES rows slower, the knob named as the cause).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pqbench.data.record.results import Run
from tests.helpers.runs import environment, make_run

#: (algorithm, implementation, operation, block size, ops/s): an exchange and a signature
#: each way (post-quantum and classical), and a cipher that AES-NI speeds up.
FLEET_ROWS: tuple[tuple[str, str, str, int | None, float], ...] = (
    ("ML-KEM-768", "liboqs", "keygen", None, 40_000.0),
    ("ML-KEM-768", "liboqs", "encaps", None, 35_000.0),
    ("ML-KEM-768", "liboqs", "decaps", None, 30_000.0),
    ("X25519", "libcrypto", "keygen", None, 25_000.0),
    ("X25519", "libcrypto", "derive", None, 20_000.0),
    ("ML-DSA-65", "liboqs", "sign", None, 4_000.0),
    ("ML-DSA-65", "liboqs", "verify", None, 12_000.0),
    ("Ed25519", "libcrypto", "sign", None, 30_000.0),
    ("Ed25519", "libcrypto", "verify", None, 10_000.0),
    ("AES-256-GCM", "libcrypto", "encrypt", 16384, 250_000.0),
)
#: The OpenSSL capability mask that hides AES-NI (and the PCLMULQDQ GCM needs).
AESNI_MASK = "~0x200000200000000"


@dataclass(frozen=True)
class Fleet:
    """`machines` hosts x `builds` OS builds x `runs` runs a build."""

    machines: int = 3
    builds: int = 4
    runs: int = 3
    #: (machine index, first build index at the new level) -> row factors by algorithm.
    jumps: Mapping[tuple[int, int], Mapping[str, float]] = field(default_factory=dict)
    #: (machine index, build index) whose runs carry the AES-NI mask (AES 0.5x).
    masked: frozenset[tuple[int, int]] = frozenset()
    #: Host names, by machine index (default m00, m01 ...).
    hosts: Mapping[int, str] = field(default_factory=dict)
    #: OS build names, by (machine, build) (default debian-12/6.1.0-<build>).
    build_names: Mapping[tuple[int, int], str] = field(default_factory=dict)
    #: (machine, build) whose newest run was taken under load.
    loaded: frozenset[tuple[int, int]] = frozenset()
    rounds: int = 5
    seed: int = 7

    def host(self, machine: int) -> str:
        return self.hosts.get(machine, f"m{machine:02d}")

    def build_name(self, machine: int, build: int) -> str:
        return self.build_names.get((machine, build), f"debian-12/6.1.0-{build:03d}")

    def factors(self, machine: int, build: int) -> dict[str, float]:
        """The planted level of each algorithm at a build: every jump up to it, and the
        mask where it is set."""
        found = {row[0]: 1.0 for row in FLEET_ROWS}
        for (where, first), jump in self.jumps.items():
            if where == machine and build >= first:
                for name, factor in jump.items():
                    found[name] *= factor
        if (machine, build) in self.masked:
            found["AES-256-GCM"] *= 0.5
        return found

    def runs_of(self, machine: int, build: int, start: int = 0) -> Iterator[Run]:
        """The runs of one build of one machine (their ids name both)."""
        rng = np.random.default_rng([self.seed, machine, build])
        env = environment(hostname=self.host(machine), os_build=self.build_name(machine, build),
                          testbed=f"tb-{self.host(machine)}")
        env["cpu"]["model"] = f"Test CPU {machine % 4}"
        env["os"]["name"], env["os"]["version"] = "Debian GNU/Linux", "12"
        if (machine, build) in self.masked:
            env["knobs"] = {"OPENSSL_ia32cap": AESNI_MASK}
        for number in range(start, start + self.runs):
            one = copy.deepcopy(env)
            if (machine, build) in self.loaded and number == self.runs - 1:
                one["run"] = {"others_cpu": 0.6, "steal": 0.0, "cpus": 2}
            state = float(np.exp(rng.normal(0.0, 0.01)))
            minute = build * 60 + number
            day, rest = divmod(minute + machine * 7, 24 * 60)
            run = make_run(
                f"r{machine:02d}-{build:03d}-{number:02d}", seed=int(rng.integers(1 << 30)),
                factors={k: v * state for k, v in self.factors(machine, build).items()},
                rounds=self.rounds, env=one, rows=FLEET_ROWS,
                started_at=f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T"
                           f"{rest // 60:02d}:{rest % 60:02d}:00+00:00")
            yield _interleaved(run)

    def all_runs(self) -> Iterator[Run]:
        for machine in range(self.machines):
            for build in range(self.builds):
                yield from self.runs_of(machine, build)


def _interleaved(run: Run) -> Run:
    """The run as `speed` stores it: rounds taken in cycles (`settings.interleaved`), so
    round i of every row is paired."""
    from dataclasses import replace

    settings: dict[str, Any] = {**run.settings, "interleaved": True}
    return replace(run, settings=settings)

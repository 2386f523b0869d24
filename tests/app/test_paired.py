"""The settings of a paired session (`ab`, `bisect`), built and checked directly."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest

from pqbench.app import paired
from pqbench.measure.speed import suite
from pqbench.platform.errors import UsageError
from pqbench.sessions.ab.session import Settings


def _settings(algorithm: Sequence[str] = ("sha256",),
              implementation: Sequence[str] | None = None,
              operation: Sequence[str] | None = None,
              block_bytes: Sequence[int] | None = None, *,
              max_seconds: float = 5.0, round_seconds: float = 0.05,
              **rest: Any) -> Settings:
    return paired.settings(algorithm, implementation, operation, block_bytes,
                           max_seconds=max_seconds, round_seconds=round_seconds,
                           band=rest.pop("band", None), cpu=rest.pop("cpu", None), **rest)


@pytest.mark.parametrize(("changes", "message"), [
    ({"max_seconds": float("nan")}, "--max-seconds must be a finite positive number"),
    ({"max_seconds": 0.0}, "--max-seconds must be a finite positive number"),
    ({"round_seconds": 0.0}, "--round between 0 and 10 s"),
    ({"round_seconds": 10.5}, "--round between 0 and 10 s"),
    ({"worker_pairs": 2}, "--worker-pairs must be between 3 and 64"),
    ({"worker_pairs": 65}, "--worker-pairs must be between 3 and 64"),
    ({"block_bytes": [64, 0]}, "--bytes must be at least 1"),
    ({"implementation": ["liboqs", "nosuch"]}, "unknown implementation nosuch; choose from"),
    ({"cpu": 10_000}, "10000"),
])
def test_each_bad_option_is_a_usage_error_naming_it(changes: dict[str, Any],
                                                    message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        _settings(**changes)


def test_the_limits_themselves_are_accepted() -> None:
    low = _settings(worker_pairs=3, round_seconds=10.0, block_bytes=[1])
    high = _settings(worker_pairs=paired.MAX_WORKER_PAIRS)
    assert (low.worker_pairs, low.round_seconds, low.block_sizes) == (3, 10.0, (1,))
    assert high.worker_pairs == 64


def test_the_settings_carry_every_option_resolved() -> None:
    cpu = max(os.sched_getaffinity(0))
    chosen = _settings(algorithm=["mlkem768", "sha256"], implementation=["liboqs"],
                       operation=["encaps", "encaps", "decaps"], band=0.1, cpu=cpu,
                       label_a="old", label_b="new")
    assert chosen.algorithms == ("ML-KEM-768", "SHA-256")
    assert chosen.implementations == ("liboqs",)
    assert chosen.operations == ("encaps", "decaps")
    assert chosen.block_sizes == suite.BLOCK_SIZES
    assert (chosen.threshold, chosen.cpu, chosen.label_a, chosen.label_b) == (
        0.1, cpu, "old", "new")
    assert _settings().implementations is None
    assert _settings(block_bytes=[16384, 64, 64]).block_sizes == (64, 16384)  # each once

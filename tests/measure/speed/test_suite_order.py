"""The suite times its rows in cycles, each cycle in a fresh random order (the docs and
the run's method say "random order"): drift then hits every row alike, not always the
same row first. Real rows (Python's hashes, short rounds), the order read from the
progress callback, which the suite calls as each round starts."""

from __future__ import annotations

import random

import pytest

from pqbench.catalog import algorithms
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure.speed import suite

ROUNDS = 20

pytestmark = pytest.mark.slow  # it measures: 80 rounds of four real rows


def test_every_cycle_times_the_rows_in_the_seeded_random_order() -> None:
    kems, sigs = liboqs_mechanisms()
    chosen = algorithms.resolve(["sha256", "sha512", "sha3-256", "blake2b"], kems, sigs)
    settings = suite.SpeedSettings(seconds=0.002 * ROUNDS, rounds=ROUNDS, warmup=0.001,
                                   operations=("hash",), block_sizes=(64,))
    tasks = suite.plan(chosen, select(["python"]), settings)
    assert len(tasks) == 4
    started: list[suite.Task] = []
    recorder = suite.SuiteRecorder()
    suite.execute(tasks, settings, recorder, started.append, rng=random.Random(20261126))
    assert len(recorder.measurements) == 4 and not recorder.problems
    # First each row is checked and prepared, in plan order; then one round per row and
    # cycle, in an order drawn as the docs say: a shuffle per cycle from the rng given.
    assert started[:4] == tasks
    cycles = [started[4 + 4 * c: 8 + 4 * c] for c in range(ROUNDS)]
    assert len(started) == 4 + 4 * ROUNDS
    reference = random.Random(20261126)
    for cycle in cycles:
        order = list(range(4))
        reference.shuffle(order)
        assert cycle == [tasks[i] for i in order]
    assert len({tuple(t.algorithm.name for t in cycle) for cycle in cycles}) > 1

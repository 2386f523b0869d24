"""A cycles column in the time base of the row beside it: the counter (rdtsc reference
cycles) runs while the measuring thread waits for a core, a CPU-time row's µs do not, so
a stored row's cycles/op are scaled to the thread's share of each round. With a second
process sharing the measuring CPU, cycles per µs must then read as on a CPU of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.data.record.results import Measurement
from pqbench.data.record.rounds import LoopResult
from pqbench.timing import native
from tests.helpers import run_cli

SPIN = "import sys\nprint('spinning', flush=True)\nwhile True:\n    pass\n"


def _cycles_per_us(db: Path) -> tuple[float, float, float]:
    """Of a CPU-time row measured on CPU 0: its stored cycles per µs; the counter's own
    rate, raw cycles over wall µs of the same rounds (the median); and how many times its
    CPU time the rounds took in wall time (the median)."""
    done = run_cli("speed", "ml-kem-768", "-i", "liboqs", "-o", "keygen", "--seconds",
                   "0.6", "--rounds", "6", "--cpu", "0", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["results"]
    assert row["cycles_per_op"] is not None and row["us_per_op"] > 0
    pairs = list(zip(row["wall_ns"], row["samples"], strict=True))
    waits = sorted(w / s["elapsed_ns"] for w, s in pairs)
    rates = sorted(s["cycles"] / (w / 1000) for w, s in pairs)
    return (float(row["cycles_per_op"]) / float(row["us_per_op"]), rates[len(rates) // 2],
            waits[len(waits) // 2])


@pytest.mark.process
@pytest.mark.skipif(not native.available() or native.counter_name() is None,
                    reason="the native loops and a cycle counter are needed")
def test_cycles_per_us_do_not_grow_when_a_second_process_shares_the_cpu(
        tmp_path: Path) -> None:
    alone, alone_rate, _ = _cycles_per_us(tmp_path / "alone.db")
    spinner = subprocess.Popen([sys.executable, "-c", SPIN], stdout=subprocess.PIPE,
                               text=True, preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    try:
        assert spinner.stdout is not None and spinner.stdout.readline() == "spinning\n"
        shared, shared_rate, shared_wait = _cycles_per_us(tmp_path / "shared.db")
    finally:
        spinner.kill()
        spinner.wait()
    # The spinner took its share of CPU 0: the rounds waited for the core (on a machine
    # already busy they wait alone too, so the wait is not measured against the alone run)...
    assert shared_wait >= 1.5, shared_wait
    # ...which, unscaled, the cycle counter counts (cycles per µs of CPU time would grow
    # with the wait); scaled, they read the counter's own rate over wall time, alone or not.
    assert shared == pytest.approx(shared_rate, rel=0.25), (shared, shared_rate)
    assert alone == pytest.approx(alone_rate, rel=0.25), (alone, alone_rate)
    assert shared == pytest.approx(alone, rel=0.25), (alone, shared)


def test_a_cpu_time_rows_cycles_are_scaled_to_its_share_of_each_round() -> None:
    """Worked by hand: 1000 ops in 2 ms of CPU time over a 4 ms window counting 10^7
    cycles ran for 5 * 10^6 cycles, 5000 per op; a round without its wall time is left out
    (it cannot be placed in CPU time); a wall-time row is not scaled."""
    rounds = (LoopResult(1000, 2_000_000, 10_000_000), LoopResult(1000, 3_000_000, 9_000_000))
    cpu = Measurement("X25519", "libcrypto", "keygen", rounds,
                      attributes={"time_base": "cpu", "wall_ns": [4_000_000, 3_000_000]})
    assert cpu.cycles_per_op == pytest.approx((5000 + 9000) / 2)
    unknown = Measurement("X25519", "libcrypto", "keygen", rounds,
                          attributes={"time_base": "cpu"})
    assert unknown.cycles_per_op is None
    wall = Measurement("X25519", "libcrypto", "keygen", rounds)
    assert wall.cycles_per_op == pytest.approx((10_000 + 9000) / 2)

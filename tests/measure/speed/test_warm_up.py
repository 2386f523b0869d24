"""The warm-up's decision, called directly: rounds until two agree, and for an operation with
a least warm-up (a JVM's JIT) at least that much of the measuring thread's CPU time, also
when a busy machine gives the thread only a share of the wall time. The operation here
reports rounds as a loop would on such a machine: what is decided, not what is timed."""

from __future__ import annotations

from dataclasses import dataclass, field

from pqbench.data.record.rounds import LoopResult
from pqbench.libraries.implementations.base import TimedOperation
from pqbench.measure.speed import suite


@dataclass
class Shared(TimedOperation):
    """A loop that ran `seconds` of wall time, of which its thread was on a CPU for
    `share`; its rate per CPU second is `rates[i]` in round i (the last one after)."""

    share: float
    rates: list[float] = field(default_factory=lambda: [1e5])
    warmup_min_seconds: float = 0.0
    asked: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sizes = {}
        self.warmup = "steady"

    def run(self, seconds: float) -> LoopResult:
        self.asked.append(seconds)
        cpu = seconds * self.share
        rate = self.rates[min(len(self.asked) - 1, len(self.rates) - 1)]
        return LoopResult(max(int(cpu * rate), 1), int(seconds * 1e9), cpu_ns=int(cpu * 1e9))


SETTINGS = suite.SpeedSettings(seconds=1.0, rounds=10)


def test_the_least_warm_up_counts_cpu_time_on_a_busy_machine() -> None:
    """A thread on a CPU a fifth of the time: ten seconds of wall time would be two of
    running the code, so the warm-up goes on, in longer rounds, until ten of CPU time."""
    busy = Shared(share=0.2, warmup_min_seconds=10.0)
    found = suite.warm_up(busy, SETTINGS)
    assert found["warmup_settled"] is True
    assert found["warmup_cpu_ns"] >= 10e9
    assert sum(busy.asked) >= 10.0 / 0.2
    assert found["warmup_rounds"] == len(busy.asked) <= suite.WARMUP_MAX_ROUNDS
    assert max(busy.asked) > busy.asked[0]  # lengthened to fit the rounds left


def test_on_a_quiet_machine_the_least_warm_up_is_its_seconds() -> None:
    quiet = Shared(share=1.0, warmup_min_seconds=10.0)
    found = suite.warm_up(quiet, SETTINGS)
    assert found["warmup_settled"] is True
    assert 10e9 <= found["warmup_cpu_ns"] < 11.1e9
    assert quiet.asked == [1.0] * 10  # rounds of 2 * 10 s / 20


def test_without_a_least_warm_up_two_agreeing_rounds_end_it() -> None:
    steady = Shared(share=0.5)
    assert suite.warm_up(steady, SETTINGS) == {"warmup_rounds": 2, "warmup_settled": True,
                                               "warmup_cpu_ns": 2 * int(0.1e9 * 0.5)}
    jit = Shared(share=1.0, rates=[1e4, 3e4, 4e4, 4.1e4])  # settles once compiled
    assert suite.warm_up(jit, SETTINGS)["warmup_rounds"] == 4


def test_a_rate_that_never_settles_stops_at_the_most_rounds_and_says_so() -> None:
    wild = Shared(share=1.0, rates=[1e4, 2e4] * 20, warmup_min_seconds=1.0)
    found = suite.warm_up(wild, SETTINGS)
    assert found["warmup_settled"] is False
    assert found["warmup_rounds"] == suite.WARMUP_MAX_ROUNDS

"""The round: the one timing contract every loop honours, and what a stored row keeps.

A loop is given a duration, runs the operation until at least that much monotonic time has
passed, and reports how many operations it completed, the elapsed nanoseconds, the
cycle-counter delta where the CPU offers one, and the CPU time its thread got over the same
window. Callers never care which loop ran. A round thus has both clocks, and a stored row
names the one its rates are in (`TimeBase`). The loops (`timing/`) produce rounds and the
run format (`record/`) stores them, so the round lives here, below both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class LoopResult:
    """One timed round: `ops` operations in `elapsed_ns` nanoseconds."""

    ops: int
    elapsed_ns: int
    cycles: int | None = None  # counter ticks over the round, None if no counter
    #: The measuring thread's CPU time over the same window as `elapsed_ns`, where the loop
    #: read it (every pqbench loop does; a stored round keeps only its row's time base).
    cpu_ns: int | None = None
    #: The whole process's CPU time over the same window, where the loop read it (a
    #: foreign worker does: other threads of its runtime may work while it is timed).
    process_cpu_ns: int | None = None

    @property
    def ops_per_sec(self) -> float:
        return self.ops * 1e9 / self.elapsed_ns if self.elapsed_ns > 0 else 0.0

    @property
    def cycles_per_op(self) -> float | None:
        """Counter ticks per operation over the round's wall-clock window (a row's figure,
        in its own time base, is `cycles_per_op_in_base`)."""
        if self.cycles is None or self.ops == 0:
            return None
        return self.cycles / self.ops


#: The clock a row's rates are computed in.
TimeBase = Literal["cpu", "wall"]


def cycles_per_op_in_base(ops: Sequence[int], base_ns: Sequence[int],
                          cycles: Sequence[int | None], wall_ns: Sequence[int] | None,
                          base: str) -> list[float]:
    """Each round's cycles per operation in the row's time base.

    The cycle counter (rdtsc: reference cycles at a constant rate) runs on the wall clock,
    also while the thread waits for a core; a CPU-time row's µs do not count that wait. So
    on a CPU-time row each round's count is scaled by the thread's share of the window
    (its CPU time over the wall time, `wall_ns` kept beside the rounds): the cycles the
    thread ran for, which is what a quiet machine's counter reads and what published cycle
    counts (SUPERCOP, mlkem-native) are. A CPU-time round without its wall time cannot be
    placed in that base and is left out, as a round without a counter is."""
    if not len(ops) == len(base_ns) == len(cycles):
        raise ValueError("a row's rounds, times and cycle counts differ in number")
    if base != "cpu":
        return [counted * 1.0 / n for n, counted in zip(ops, cycles, strict=True)
                if counted is not None and n > 0]
    if wall_ns is None:
        return []
    # zip stops at the shorter of the rounds and wall_ns: a round without its wall time
    # is left out.
    return [counted * (share if (share := ns / wall) < 1.0 else 1.0) / n
            for n, ns, counted, wall in zip(ops, base_ns, cycles, wall_ns, strict=False)
            if counted is not None and n > 0 and wall > 0]


@dataclass(frozen=True)
class Timed:
    """A round as the loop reported it, and the CPU time the measuring thread got during
    it. On a busy machine a measurement is descheduled for part of a round: the wall clock
    counts that time and the thread's CPU clock does not (`openssl speed` counts CPU time
    unless given -elapsed; liboqs's speed tools read the wall clock)."""

    result: LoopResult
    cpu_ns: int

    @classmethod
    def of(cls, result: LoopResult, outside_cpu_ns: int) -> Timed:
        """The loop's own CPU time where it read one (the same window as its wall time),
        else the thread's CPU time read around the call."""
        return cls(result, max(result.cpu_ns if result.cpu_ns is not None
                               else outside_cpu_ns, 1))

    def in_base(self, base: TimeBase) -> LoopResult:
        """The round with its time in `base`: what a stored row's rounds hold."""
        if base == "wall":
            return LoopResult(self.result.ops, self.result.elapsed_ns, self.result.cycles)
        return LoopResult(self.result.ops, self.cpu_ns, self.result.cycles)


def other_clock(rounds: Sequence[Timed], base: TimeBase) -> dict[str, list[int]]:
    """The per-round times of the clock a row is not measured in, kept beside its rounds:
    `wall_ns` for a CPU-time row, `cpu_ns` for a wall-time row; and the process's CPU time
    per round where the loop read it (`process_cpu_ns`)."""
    found = ({"wall_ns": [t.result.elapsed_ns for t in rounds]} if base == "cpu"
             else {"cpu_ns": [t.cpu_ns for t in rounds]})
    process = [t.result.process_cpu_ns for t in rounds]
    if process and all(p is not None for p in process):
        found["process_cpu_ns"] = [int(p) for p in process if p is not None]
    return found


#: Where a process's CPU time exceeds its measuring thread's by more than this share of the
#: thread's over a row's rounds, other threads worked while it was timed (a JIT compiler,
#: a garbage collector, a runtime's helpers): the row is flagged (`helper_threads`), since
#: its thread-CPU rate then leaves out work the operation caused.
HELPER_MARGIN = 0.10


def helper_threads(rounds: Sequence[Timed]) -> bool | None:
    """Whether other threads of the process worked beyond HELPER_MARGIN while the row was
    timed; None when the loop did not read the process's clock."""
    process = [t.result.process_cpu_ns for t in rounds]
    if not rounds or any(p is None for p in process):
        return None
    thread = sum(t.cpu_ns for t in rounds)
    return sum(p for p in process if p is not None) > thread * (1 + HELPER_MARGIN)

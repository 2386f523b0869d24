//! The timing loop, with the same contract as pqbench's own loops (pqbench/timing/loop.py):
//! call the operation in batches, read the monotonic clock once per batch, double the batch
//! while a batch lasts under half a millisecond, stop once the wall time reaches the budget.

use std::hint::black_box;

/// A batch shorter than this doubles the next one.
const HALF_MILLISECOND_NS: u64 = 500_000;

/// One timed round, as the `round` reply carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    pub ops: u64,
    pub wall_ns: u64,
    pub thread_cpu_ns: u64,
    pub process_cpu_ns: u64,
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; the three clocks used here exist on Linux.
    let status = unsafe { libc::clock_gettime(clock, &mut now) };
    assert_eq!(status, 0, "clock_gettime({clock}) failed");
    (now.tv_sec as u64) * 1_000_000_000 + now.tv_nsec as u64
}

fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// Runs `operation` until at least `seconds` of monotonic time have passed, every result
/// through `black_box`. No warm-up: the controller decides warm-up.
pub fn run_round<F, R>(operation: &mut F, seconds: f64) -> Round
where
    F: FnMut() -> R,
{
    let budget_ns = ((seconds * 1e9) as u64).max(1);
    let mut ops: u64 = 0;
    let mut batch: u64 = 1;
    let process_start = process_cpu_ns();
    let thread_start = thread_cpu_ns();
    let start = monotonic_ns();
    let mut now = start;
    while now - start < budget_ns {
        let batch_start = now;
        for _ in 0..batch {
            black_box(operation());
        }
        ops += batch;
        now = monotonic_ns();
        if now - batch_start < HALF_MILLISECOND_NS {
            batch *= 2;
        }
    }
    let thread_end = thread_cpu_ns();
    let process_end = process_cpu_ns();
    Round {
        ops,
        wall_ns: now - start,
        thread_cpu_ns: thread_end - thread_start,
        process_cpu_ns: process_end - process_start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_at_least_the_budget_and_counts_every_call() {
        let mut calls: u64 = 0;
        let round = run_round(
            &mut || {
                calls += 1;
                calls
            },
            0.01,
        );
        assert_eq!(round.ops, calls);
        assert!(round.wall_ns >= 10_000_000);
        assert!(round.thread_cpu_ns <= round.process_cpu_ns);
    }
}

//! The driver every `pqbench-stack-reference` binary shares: its arguments, its round and
//! its output line. A library's reference only says how to make one operation of its crate.
//!
//! `pqbench-stack-reference ALG OPERATION SECONDS [ROUNDS]` prints one JSON line per round:
//! `{"alg", "operation", "ops", "wall_ns", "thread_cpu_ns"}`. Each round is the simplest
//! loop: one call per iteration, `Instant` read after every call, the result passed to
//! `black_box`.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::thread_cpu_ns;

fn round<R>(seconds: f64, mut op: impl FnMut() -> R) -> (u64, u64, u64) {
    let budget = Duration::from_secs_f64(seconds);
    let cpu = thread_cpu_ns();
    let start = Instant::now();
    let mut ops = 0u64;
    while start.elapsed() < budget {
        black_box(op());
        ops += 1;
    }
    let wall = start.elapsed().as_nanos() as u64;
    (ops, wall, thread_cpu_ns() - cpu)
}

/// Runs the reference binary of `library`: `operation(ALG, OPERATION)` makes the call to
/// time (its inputs made before it returns), or `None` if the crate has no such operation.
pub fn reference_main<R>(
    library: &str,
    operation: fn(&str, &str) -> Option<Box<dyn FnMut() -> R>>,
) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: pqbench-stack-reference ALG OPERATION SECONDS [ROUNDS]";
    let (Some(alg), Some(op), Some(seconds)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let seconds: f64 = match seconds.parse() {
        Ok(s) if s > 0.0 && s <= 600.0 => s,
        _ => {
            eprintln!("{usage}\nSECONDS must be a number above 0 and at most 600");
            return ExitCode::from(2);
        }
    };
    let rounds: u32 = match args.get(3).map(|r| r.parse()) {
        None => 1,
        Some(Ok(r)) if r > 0 => r,
        Some(_) => {
            eprintln!("{usage}\nROUNDS must be a positive integer");
            return ExitCode::from(2);
        }
    };
    let Some(mut operation) = operation(alg, op) else {
        eprintln!("{library} reference: no operation {op:?} of {alg:?}");
        return ExitCode::from(2);
    };
    for _ in 0..rounds {
        let (ops, wall, cpu) = round(seconds, &mut operation);
        let line = serde_json::json!({"alg": alg, "operation": op, "ops": ops,
                                      "wall_ns": wall, "thread_cpu_ns": cpu});
        println!("{line}");
    }
    ExitCode::SUCCESS
}

"""How close pqbench's foreign rows come to each library's own benchmark, paired in one run.

For `go` the reference is Go's own `go test -bench` (pqbench/stacks/go/reference: the
standard library's benchmark style over crypto/mlkem, crypto/ecdh and crypto/ed25519,
sharing no code with the worker), compiled once with the toolchain that built the worker.
For `aws-lc-rs` and `libcrux` it is `pqbench-stack-reference`, built beside the worker from
the same Cargo.lock: the crate's documented API in the plainest loop. For `java` and
`bouncycastle` it is the JVM reference built beside the worker (the provider's documented
API in the plainest loop), in a JVM of its own started as the worker's is, whose last round
counts after rounds worth the worker's least warm-up.

Both sides count CPU time, as `pqbench speed` does (on a shared machine the wall clock
counts the time others took): the worker's process CPU time per round (its rows' clock
includes every thread of its runtime, as the reference's does), and for Go's benchmark the
CPU time the test binary's process used, from the kernel's accounting of the child
(getrusage), for a fixed iteration count (`-test.benchtime Nx`, N sized to the seconds asked
from the previous pair), less the median CPU time of the same binary running no benchmark
(its start-up), over N + 1 operations (Go runs every benchmark once with N = 1 first). The
Rust reference reports its thread's CPU time per round itself. The JVM references report
their thread's CPU time, and the JVM worker's rows are read in their thread's CPU time too
(the JIT's and the collector's threads are left out on both sides).

Each case is checked (`checks.pair`) and prepared once, warmed up as `speed` warms it, then
worker and reference run in alternation (--pairs pairs of --seconds each, the order of
each pair by a coin flip), so a slow phase of a shared machine hits both. Each pair gives
one ratio, worker ops/s over reference ops/s; the table shows their Hodges-Lehmann
estimate with its signed-rank interval. The target: within 5 % of 1. A benchmark script,
not a test:

    python benchmarks/stacks_fidelity.py --impl go --seconds 0.5 --pairs 9
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

from pqbench.algorithms import resolve
from pqbench.analysis.ratios import paired
from pqbench.checks.pair import check_pair
from pqbench.implementations.stacks import StackImplementation
from pqbench.speed import suite
from pqbench.stacks import builds, registry

TARGET = 0.05
WORK_DIR = Path(__file__).resolve().parent / ".work"  # gitignored

#: implementation -> the (algorithm, operation) cases its reference times.
CASES = {
    "go": [("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"), ("ML-KEM-768", "decaps"),
           ("ML-KEM-1024", "encaps"), ("X25519", "keygen"), ("X25519", "derive"),
           ("ECDH-P-256", "derive"), ("Ed25519", "sign"), ("Ed25519", "verify")],
    "aws-lc-rs": [("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"),
                  ("ML-KEM-768", "decaps"), ("ML-DSA-65", "sign"), ("ML-DSA-65", "verify"),
                  ("X25519", "derive"), ("Ed25519", "sign"), ("Ed25519", "verify")],
    "libcrux": [("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"), ("ML-KEM-768", "decaps"),
                ("ML-DSA-65", "sign"), ("ML-DSA-65", "verify")],
    "java": [("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"), ("ML-KEM-768", "decaps"),
             ("ML-DSA-65", "sign"), ("ML-DSA-65", "verify"), ("X25519", "derive"),
             ("Ed25519", "sign")],
    "bouncycastle": [("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"),
                     ("ML-KEM-768", "decaps"), ("ML-DSA-65", "sign"), ("ML-DSA-65", "verify"),
                     ("X25519", "derive"), ("Ed25519", "sign")],
}
#: The JVM references' main classes (a plain loop over the provider's documented API).
JVM_REFERENCES = {"java": "pqbench.stacks.Reference", "bouncycastle": "pqbench.stacks.bc.Reference"}
#: A JVM reference runs in a fresh JVM: its JIT warms up over this many seconds of rounds
#: first, as the worker's rows do (`Recipe.warmup_min_seconds`), and its last round counts.
JVM_WARMUP_SECONDS = 3.0

Reference = Callable[[str, str, float], float]  # (alg, operation, seconds) -> ops/s


def _child_cpu_ns() -> int:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


def go_reference(built: builds.Built) -> Reference:
    """`go test -bench` of the reference package, compiled once into WORK_DIR, in CPU time
    (see the module's docstring)."""
    go = str(built.plan.toolchains["go"].tools["go"])
    binary = WORK_DIR / "go-reference.test"
    WORK_DIR.mkdir(exist_ok=True)
    subprocess.run([go, "test", "-c", "-o", str(binary), "./reference"], check=True,
                   cwd=registry.SOURCES / "go",
                   env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local",
                        "CGO_ENABLED": "0"})
    families = {"ML-KEM": "MLKEM", "X25519": "ECDH", "ECDH": "ECDH", "Ed25519": "Ed25519"}
    startups = []
    for _ in range(5):
        before = _child_cpu_ns()
        subprocess.run([str(binary), "-test.run", "^$", "-test.bench", "^$"],
                       capture_output=True, check=True)
        startups.append(_child_cpu_ns() - before)
    startup = sorted(startups)[2]
    rates: dict[tuple[str, str], float] = {}

    def run(alg: str, operation: str, seconds: float) -> float:
        family = next(v for k, v in families.items() if alg.startswith(k))
        name = f"Benchmark{family}/{alg}/{operation}"
        pattern = "/".join(f"^{re.escape(part)}$" for part in name.split("/"))
        count = max(int(rates.get((alg, operation), 1000.0) * seconds), 10)
        before = _child_cpu_ns()
        done = subprocess.run([str(binary), "-test.run", "^$", "-test.bench", pattern,
                               "-test.benchtime", f"{count}x", "-test.count", "1"],
                              capture_output=True, text=True, check=True)
        used = _child_cpu_ns() - before - startup
        if not re.search(rf"\s{count}\s+\d+(?:\.\d+)? ns/op", done.stdout):
            raise SystemExit(f"{name}: no run of {count} in:\n{done.stdout}")
        rate = (count + 1) * 1e9 / max(used, 1)
        rates[(alg, operation)] = rate
        return rate

    return run


def rust_reference(built: builds.Built) -> Reference:
    """`pqbench-stack-reference ALG OPERATION SECONDS 1`: one JSON line per round."""
    binary = built.plan.directory / registry.REFERENCE_BINARY

    def run(alg: str, operation: str, seconds: float) -> float:
        done = subprocess.run([str(binary), alg, operation, str(seconds), "1"],
                              capture_output=True, text=True, check=True)
        line = json.loads(done.stdout.strip().splitlines()[-1])
        return int(line["ops"]) * 1e9 / max(int(line["thread_cpu_ns"]), 1)

    return run


def jvm_reference(built: builds.Built, warmup: float = JVM_WARMUP_SECONDS) -> Reference:
    """The JVM reference in a JVM of its own per call, started as pqbench starts the
    worker; its last round, after rounds worth JVM_WARMUP_SECONDS, in thread CPU time."""
    java = str(built.plan.toolchains["jdk"].tools["java"])
    where = built.plan.directory
    classpath = f"{where / 'classes'}{os.pathsep}{where / 'lib'}/*"
    main = JVM_REFERENCES[built.plan.stack.name]

    def run(alg: str, operation: str, seconds: float) -> float:
        rounds = int(warmup / seconds) + 1
        done = subprocess.run([java, *registry.JVM_OPTIONS, "-cp", classpath, main, alg,
                               operation, str(seconds), str(rounds)],
                              capture_output=True, text=True, check=True)
        line = json.loads(done.stdout.strip().splitlines()[-1])
        return int(line["ops"]) * 1e9 / max(int(line["thread_cpu_ns"]), 1)

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impl", choices=sorted(CASES), default="go")
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--jvm-warmup", type=float, default=JVM_WARMUP_SECONDS,
                        help="seconds a JVM reference runs before its counted round")
    parser.add_argument("--only", default=None, help="only the cases of this algorithm")
    args = parser.parse_args()
    stack = registry.by_name(args.impl)
    impl = StackImplementation(stack)
    impl.process.ensure()
    assert impl.process.planned is not None
    built = builds.build(impl.process.planned, lambda _m: None)
    language = stack.recipe.language
    reference = (jvm_reference(built, args.jvm_warmup) if language == "java" else
                 {"go": go_reference, "rust": rust_reference}[language](built))
    rng = random.Random(args.seed)
    settings = suite.SpeedSettings(seconds=args.seconds * args.pairs, rounds=args.pairs)
    print(f"{args.impl}: worker rows against the library's own benchmark, CPU time, "
          f"{args.pairs} pairs of {args.seconds:g} s, load {os.getloadavg()[0]:.1f}")
    print("| row | worker ops/s | reference ops/s | worker / reference | interval | within 5 % |")
    print("|---|---:|---:|---:|---|---|")
    worst = 0.0
    for name, operation in CASES[args.impl]:
        if args.only and name != args.only:
            continue
        alg = resolve([name], (), ())[0]
        checked = check_pair(alg, impl)
        if checked.problem is not None:
            print(f"| {name} {operation} | {checked.problem.kind}: {checked.problem.reason} |")
            continue
        prepared = impl.prepare(alg, operation)
        suite.warm_up(prepared, settings)
        reference(name, operation, args.seconds / 4)  # sizes the reference's count
        reference(name, operation, args.seconds)
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.pairs):
            for side in rng.sample(("worker", "reference"), 2):
                if side == "worker":
                    result = prepared.run(args.seconds)
                    # The JVM references read their thread's clock: so does the worker's
                    # side there; elsewhere the worker's whole process (see above).
                    cpu = result.cpu_ns if language == "java" else result.process_cpu_ns
                    assert cpu is not None
                    ours.append(result.ops * 1e9 / max(cpu, 1))
                else:
                    theirs.append(reference(name, operation, args.seconds))
        # paired() takes costs: time per op, reference over worker = worker rate / reference.
        found = paired([1 / r for r in theirs], [1 / o for o in ours])
        assert found is not None
        estimate, low, high, level = found
        worst = max(worst, abs(estimate - 1))
        median_ours = sorted(ours)[len(ours) // 2]
        median_theirs = sorted(theirs)[len(theirs) // 2]
        print(f"| {name} {operation} | {median_ours:,.0f} | {median_theirs:,.0f} | "
              f"{estimate:.3f} | {low:.3f}–{high:.3f} ({level:.1%}) | "
              f"{'yes' if abs(estimate - 1) <= TARGET else 'no'} |")
    print(f"largest deviation: {worst:.1%} (target {TARGET:.0%})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

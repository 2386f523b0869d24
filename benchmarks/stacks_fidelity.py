"""How close pqbench's foreign rows come to each library's own benchmark, paired in one run.

For `go` the reference is Go's own `go test -bench` (pqbench/libraries/stacks/go/reference: the
standard library's benchmark style over crypto/mlkem, crypto/ecdh and crypto/ed25519,
sharing no code with the worker) and, for ML-DSA, filippo.io/mldsa's own benchmarks,
both compiled once with the toolchain that built the worker.
For `aws-lc-rs` and `libcrux` it is `pqbench-stack-reference`, built beside the worker from
the same Cargo.lock: the crate's documented API in the plainest loop. For `java` and
`bouncycastle` it is the JVM reference built beside the worker (the provider's documented
API in the plainest loop), in a JVM of its own started as the worker's is, serving rounds
on stdin and warmed as `speed` warms the worker's row (the recipe's least warm-up, then
until two rounds agree).

Both sides count CPU time, as `pqbench speed` does (on a shared machine the wall clock
counts the time others took): the worker's process CPU time per round (its rows' clock
includes every thread of its runtime, as the reference's does), and for Go's benchmark the
CPU time the test binary's process used, from the kernel's accounting of the child
(getrusage), for a fixed iteration count (`-test.benchtime Nx`, N sized to the seconds asked
from the previous pair; Go then runs N + 1 iterations, the first alone), less the median CPU
time of the same benchmark run for one iteration (start-up, set-up and the framework's
collections: about 5 ms more than start-up alone here, 1.5 % of a 0.3 s pair), over N
operations. Go runs on both sides with GOMAXPROCS=1 (unless it is set): with a second
processor idle, the collector's idle mark workers spend on it an amount of CPU that varies
with the machine's load (4,000 ML-DSA-65 keygens of the reference: 1.00-1.17 s of process
CPU time with two, 0.80-0.82 s with one), which process CPU time counts. The
Rust reference reports its thread's CPU time per round itself. The JVM references report
their thread's CPU time, and the JVM worker's rows are read in their thread's CPU time too
(the JIT's and the collector's threads are left out on both sides).

Each case is checked (`checks.pair`) and prepared once, warmed up as `speed` warms it, then
worker and reference run in alternation (--pairs pairs of --seconds each, the order of
each pair by a coin flip), so a slow phase of a shared machine hits both. A JVM's JIT
settles on a different rate in each process, so there each pair is a fresh worker JVM and a
fresh reference JVM, both warmed (`fresh_jvm_pairs`). Each pair gives one ratio, worker
ops/s over reference ops/s; the table shows their Hodges-Lehmann estimate with its
signed-rank interval. The target: within 5 % of 1. A benchmark script, not a test:

    python benchmarks/stacks_fidelity.py --impl go --seconds 0.5 --pairs 9
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

from pqbench.analysis.ratios import paired
from pqbench.catalog.algorithms import Algorithm, resolve
from pqbench.data.record.rounds import LoopResult
from pqbench.libraries.implementations.base import TimedOperation
from pqbench.libraries.implementations.stacks import StackImplementation
from pqbench.libraries.stacks import compiling, registry
from pqbench.measure.checks.pair import check_pair
from pqbench.measure.speed import suite

TARGET = 0.05
WORK_DIR = Path(__file__).resolve().parent / ".work"  # gitignored

#: The matrix every implementation is timed on (docs/stacks.md): each of its rows has a
#: reference in every implementation.
MATRIX = [("ML-KEM-768", "keygen"), ("ML-KEM-768", "encaps"), ("ML-KEM-768", "decaps"),
          ("ML-DSA-65", "keygen"), ("ML-DSA-65", "sign"), ("ML-DSA-65", "verify"),
          ("X25519", "keygen"), ("X25519", "derive"), ("Ed25519", "sign"),
          ("Ed25519", "verify")]
#: implementation -> the (algorithm, operation) cases its reference times.
CASES = {
    "go": [*MATRIX, ("ML-KEM-1024", "encaps"), ("ECDH-P-256", "derive")],
    "aws-lc-rs": MATRIX,
    "libcrux": MATRIX,
    "java": MATRIX,
    "bouncycastle": MATRIX,
}
#: The JVM references' main classes (a plain loop over the provider's documented API).
JVM_REFERENCES = {"java": "pqbench.stacks.Reference", "bouncycastle": "pqbench.stacks.bc.Reference"}

Reference = Callable[[str, str, float], float]  # (alg, operation, seconds) -> ops/s


def _child_cpu_ns() -> int:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


#: Go's ML-DSA is filippo.io/mldsa, which ships benchmarks of its own: its signing
#: (deterministic, over messages chosen to have the average rejection count: hedged
#: signing's expected count) and its verification of a public key decoded by each call
#: ("Whole", as the worker's verify). Its BenchmarkKeygen makes the private key alone, 8-9 %
#: less work than a keygen row, which also derives and encodes the public key: keygen is
#: the reference package's, which does both.
GO_MLDSA = {"keygen": ("./reference", "BenchmarkMLDSA/{alg}/keygen"),
            "sign": ("filippo.io/mldsa", "BenchmarkSign/{alg}"),
            "verify": ("filippo.io/mldsa", "BenchmarkVerify/{alg}/Whole")}


def go_reference(built: compiling.Built) -> Reference:
    """`go test -bench` of the reference package (and of filippo.io/mldsa's own tests for
    ML-DSA), compiled once into WORK_DIR, in CPU time (see the module's docstring)."""
    go = str(built.plan.toolchains["go"].tools["go"])
    WORK_DIR.mkdir(exist_ok=True)
    binaries: dict[str, Path] = {}
    for package, file in (("./reference", "go-reference.test"),
                          ("filippo.io/mldsa", "go-mldsa.test")):
        binaries[package] = binary = WORK_DIR / file
        subprocess.run([go, "test", "-c", "-o", str(binary), package], check=True,
                       cwd=registry.SOURCES / "go",
                       env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local",
                            "CGO_ENABLED": "0"})
    families = {"ML-KEM": "MLKEM", "X25519": "ECDH", "ECDH": "ECDH", "Ed25519": "Ed25519"}
    rates: dict[tuple[str, str], float] = {}
    fixed: dict[tuple[str, str], int] = {}

    def cpu_of(package: str, name: str, count: int) -> int:
        """The CPU time of one process running the benchmark `name` for `count`
        iterations (`-test.benchtime COUNTx`)."""
        pattern = "/".join(f"^{re.escape(part)}$" for part in name.split("/"))
        before = _child_cpu_ns()
        done = subprocess.run([str(binaries[package]), "-test.run", "^$", "-test.bench",
                               pattern, "-test.benchtime", f"{count}x", "-test.count", "1"],
                              capture_output=True, text=True, check=True)
        if not re.search(rf"\s{count}\s+\d+(?:\.\d+)? ns/op", done.stdout):
            raise SystemExit(f"{name}: no run of {count} in:\n{done.stdout}")
        return _child_cpu_ns() - before

    def run(alg: str, operation: str, seconds: float) -> float:
        if alg.startswith("ML-DSA"):
            package, name = GO_MLDSA[operation]
            name = name.format(alg=alg)
        else:
            family = next(v for k, v in families.items() if alg.startswith(k))
            package, name = "./reference", f"Benchmark{family}/{alg}/{operation}"
        if (alg, operation) not in fixed:
            # What a process spends besides the timed iterations (start-up, the benchmark's
            # set-up, the framework's collections): the median of five one-iteration runs.
            fixed[(alg, operation)] = sorted(cpu_of(package, name, 1) for _ in range(5))[2]
        count = max(int(rates.get((alg, operation), 1000.0) * seconds), 10)
        spent = cpu_of(package, name, count)
        # The next count from the whole process's rate: never above the true rate, so a
        # short first run whose time the fixed part swamps cannot inflate it.
        rates[(alg, operation)] = count * 1e9 / spent
        if spent <= 2 * fixed[(alg, operation)]:
            return rates[(alg, operation)]  # a sizing run (main discards it)
        return count * 1e9 / (spent - fixed[(alg, operation)])

    return run


def rust_reference(built: compiling.Built) -> Reference:
    """`pqbench-stack-reference ALG OPERATION SECONDS 2`: one JSON line per round; the
    second counts: a fresh process's first round is a cold one (X25519 and ML-DSA-65 keygen
    of aws-lc-rs ran 20-25 % slow in it), where the worker's row has been warmed."""
    binary = built.plan.directory / registry.REFERENCE_BINARY

    def run(alg: str, operation: str, seconds: float) -> float:
        done = subprocess.run([str(binary), alg, operation, str(seconds), "2"],
                              capture_output=True, text=True, check=True)
        line = json.loads(done.stdout.strip().splitlines()[-1])
        return int(line["ops"]) * 1e9 / max(int(line["thread_cpu_ns"]), 1)

    return run


class _ServedRound(TimedOperation):
    """One round of a JVM reference serving rounds on stdin, in the loop contract, so
    `suite.warm_up` warms it exactly as it warms the worker's row."""

    warmup = "steady"

    def __init__(self, process: subprocess.Popen[str], least_warmup: float) -> None:
        self.process = process
        self.sizes: dict[str, int] = {}
        self.warmup_min_seconds = least_warmup

    def run(self, seconds: float) -> LoopResult:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{seconds!r}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the JVM reference stopped: {self.process.wait()}")
        found = json.loads(line)
        return LoopResult(int(found["ops"]), int(found["wall_ns"]),
                          cpu_ns=int(found["thread_cpu_ns"]))


class JvmReference:
    """The JVM reference, one JVM per row started as pqbench starts the worker and serving
    rounds on stdin (`Reference ALG OPERATION SECONDS -`): warmed once as the worker's row is
    (`suite.warm_up`: at least the recipe's least warm-up, then until two rounds agree), then
    one round per call, in its thread's CPU time. Both sides are then long-lived JVMs whose
    JIT has seen the same warm-up, where a fresh JVM per call (warmed for a few seconds of
    wall time on a busy machine) had compiled less than the worker had."""

    def __init__(self, built: compiling.Built, settings: suite.SpeedSettings) -> None:
        self.java = str(built.plan.toolchains["jdk"].tools["java"])
        where = built.plan.directory
        self.classpath = f"{where / 'classes'}{os.pathsep}{where / 'lib'}/*"
        self.main = JVM_REFERENCES[built.plan.stack.name]
        self.least_warmup = built.plan.stack.recipe.warmup_min_seconds
        self.settings = settings
        self.row: tuple[str, str] | None = None
        self.served: _ServedRound | None = None

    def __call__(self, alg: str, operation: str, seconds: float) -> float:
        if self.row != (alg, operation) or self.served is None:
            self.close()
            process = subprocess.Popen(
                [self.java, *registry.JVM_OPTIONS, "-cp", self.classpath, self.main, alg,
                 operation, str(seconds), "-"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self.row, self.served = (alg, operation), _ServedRound(process, self.least_warmup)
            suite.warm_up(self.served, self.settings)
        result = self.served.run(seconds)
        assert result.cpu_ns is not None
        return result.ops * 1e9 / max(result.cpu_ns, 1)

    def close(self) -> None:
        if self.served is not None:
            process = self.served.process
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=60)
            self.served = None


def one_process_pairs(impl: StackImplementation, alg: Algorithm, operation: str,
                      reference: Reference, settings: suite.SpeedSettings, seconds: float,
                      pairs: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """Go and Rust: one worker, warmed as `speed` warms it, its rounds alternated with
    reference processes; the worker's process CPU time (see the module's docstring)."""
    prepared = impl.prepare(alg, operation)
    suite.warm_up(prepared, settings)
    reference(alg.name, operation, seconds / 4)  # sizes the reference's count
    reference(alg.name, operation, seconds)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(pairs):
        one_pair(functools.partial(_rate, prepared, seconds, "process_cpu_ns"),
                 functools.partial(reference, alg.name, operation, seconds), rng, ours, theirs)
    return ours, theirs


def _rate(prepared: TimedOperation, seconds: float, clock: str) -> float:
    """One worker round's operations per second of the named CPU clock."""
    result = prepared.run(seconds)
    ns = getattr(result, clock)
    assert ns is not None
    return float(result.ops * 1e9 / max(ns, 1))


def one_pair(worker: Callable[[], float], reference: Callable[[], float],
             rng: random.Random, ours: list[float], theirs: list[float]) -> None:
    """One round of each side, in random order."""
    for side in rng.sample(("worker", "reference"), 2):
        if side == "worker":
            ours.append(worker())
        else:
            theirs.append(reference())


def fresh_jvm_pairs(impl: StackImplementation, alg: Algorithm, operation: str,
                    built: compiling.Built, settings: suite.SpeedSettings, seconds: float,
                    pairs: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """The JVM: each pair is a fresh worker JVM (checked and warmed as `speed` checks and
    warms it) and a fresh reference JVM (warmed alike), one round of each in random order,
    in their thread's CPU time. A JVM's JIT settles on a different rate in each process (a
    row's steady rate varied by up to 14 % between four workers here, each steady within
    1-2 %), so one process on each side compares two draws; pairs of processes compare the
    two distributions."""
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(pairs):
        impl.process.close()
        checked = check_pair(alg, impl)
        if checked.problem is not None:
            raise SystemExit(f"{alg.name} [{impl.name}]: {checked.problem.reason}")
        prepared = impl.prepare(alg, operation)
        suite.warm_up(prepared, settings)
        reference = JvmReference(built, settings)
        reference(alg.name, operation, seconds)  # starts and warms it
        one_pair(functools.partial(_rate, prepared, seconds, "cpu_ns"),
                 functools.partial(reference, alg.name, operation, seconds), rng, ours, theirs)
        reference.close()
    return ours, theirs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--impl", choices=sorted(CASES), default="go")
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--only", default=None, help="only the cases of this algorithm")
    args = parser.parse_args()
    offered = sorted({name for name, _ in CASES[args.impl]})
    if args.only and args.only not in offered:
        parser.error(f"--only {args.only!r}: {args.impl} has no case of it here "
                     f"(cases: {', '.join(offered)})")
    stack = registry.by_name(args.impl)
    if stack.recipe.language == "go":
        os.environ.setdefault("GOMAXPROCS", "1")  # see the module's docstring
    impl = StackImplementation(stack)
    impl.process.ensure()
    assert impl.process.planned is not None
    built = compiling.compile_worker(impl.process.planned, lambda _m: None)
    language = stack.recipe.language
    rng = random.Random(args.seed)
    settings = suite.SpeedSettings(seconds=args.seconds * args.pairs, rounds=args.pairs)
    reference = None if language == "java" else \
        {"go": go_reference, "rust": rust_reference}[language](built)
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
        if reference is None:
            ours, theirs = fresh_jvm_pairs(impl, alg, operation, built, settings,
                                           args.seconds, args.pairs, rng)
        else:
            ours, theirs = one_process_pairs(impl, alg, operation, reference, settings,
                                             args.seconds, args.pairs, rng)
        # paired() takes costs: time per op, reference over worker = worker rate / reference.
        found = paired([1 / r for r in theirs], [1 / o for o in ours])
        assert found is not None
        estimate, low, high, level = found
        worst = max(worst, abs(estimate - 1))
        median_ours = sorted(ours)[len(ours) // 2]
        median_theirs = sorted(theirs)[len(theirs) // 2]
        print(f"| {name} {operation} | {median_ours:,.0f} | {median_theirs:,.0f} | "
              f"{estimate:.3f} | {low:.3f}–{high:.3f} ({level:.1%}) | "
              f"{'yes' if abs(estimate - 1) <= TARGET else 'no'} |", flush=True)
    print(f"largest deviation: {worst:.1%} (target {TARGET:.0%})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""How close pqbench's native loops come to the reference tools' own numbers.

For liboqs the references are liboqs's tests/speed_kem and tests/speed_sig, built here from
the same liboqs source pqbench builds (crates.io oqs-sys 0.11.0+liboqs-0.13.0) and linked
against the same installed library pqbench loads. For libcrypto the reference is
`openssl speed -mr -seconds N` of the system's /usr/bin/openssl. Both sides are pinned to
one CPU, and both count the same clock (`--time-base`): in CPU time (the default, as
`pqbench speed` and `openssl speed` count: pqbench's loops are read with the thread's CPU
clock, openssl runs without -elapsed) or in wall time (`-elapsed`). liboqs's speed tools
read only the wall clock, so their cases always compare wall time with wall time.

Reference and pqbench run in alternation (A, B, A, B, ...: --pairs pairs of equal
duration), so a slow phase of a shared machine hits both; each pair gives one ratio
pqbench_ops_per_s / reference_ops_per_s and the table shows the median of those ratios.
The target is a ratio >= 0.97 for every operation. A benchmark script, not a test:

    python benchmarks/fidelity.py --seconds 1 --pairs 5
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.data.record.rounds import LoopResult
from pqbench.timing import native

TARGET_RATIO = 0.97
WORK_DIR = Path(__file__).resolve().parent / ".work"  # gitignored
LIBOQS_SOURCE_GLOB = "~/.cargo/registry/src/*/oqs-sys-0.11.0+liboqs-0.13.0/liboqs"

# The parameter sets and their FIPS 203/204 sizes, from pqbench's algorithm table.
PQ_SETS = [a for a in algorithms.all_algorithms() if a.family in ("ML-KEM", "ML-DSA")]
SPEED_SIG_MESSAGE_LEN = 50  # speed_sig.c signs a 50-byte random message

# openssl speed name -> (pqbench algorithm, {operation: the -mr result tag})
OPENSSL_CASES = {
    "rsa2048": ("RSA-2048", {"sign": "R1", "verify": "R2"}),
    "ecdhp256": ("P-256", {"derive": "R7"}),
    "ecdhx25519": ("X25519", {"derive": "R7"}),
    "ed25519": ("Ed25519", {"sign": "R8", "verify": "R9"}),
}

OpsPerSecond = dict[str, float]


@dataclass(frozen=True)
class Case:
    """One reference run (covering several operations) and the matching pqbench loops."""

    reference_tool: str
    algorithm: str
    operations: tuple[str, ...]
    run_reference: Callable[[int], OpsPerSecond]
    run_pqbench: Callable[[int, str], float]


@dataclass(frozen=True)
class Row:
    reference_tool: str
    algorithm: str
    operation: str
    reference: list[float]
    pqbench: list[float]

    @property
    def ratios(self) -> list[float]:
        return [p / r for p, r in zip(self.pqbench, self.reference, strict=True)]


# --- liboqs reference: build speed_kem / speed_sig ----------------------------------------


def liboqs_library(explicit: str | None) -> Path:
    """The liboqs shared library pqbench uses (or --liboqs: a file or an install prefix)."""
    if explicit:
        path = Path(explicit).expanduser().resolve()
        if path.is_dir():
            path = path / "lib" / "liboqs.so"
        return path.resolve()
    try:
        from pqbench.libraries.liboqs import find_installed
    except ImportError as exc:
        sys.exit(f"cannot locate liboqs ({exc}); pass --liboqs PATH")
    install = find_installed()
    if install is None:
        sys.exit("no liboqs installed for pqbench: run `make setup` or pass --liboqs PATH")
    return Path(install.library).resolve()


def liboqs_source(explicit: str | None) -> Path:
    """liboqs's source tree with tests/speed_kem.c (the one pqbench builds liboqs from)."""
    if explicit:
        return Path(explicit).expanduser()
    found = sorted(glob.glob(os.path.expanduser(LIBOQS_SOURCE_GLOB)))
    if not found:
        sys.exit(
            "liboqs source not found under ~/.cargo/registry; `cargo fetch` a manifest that "
            'depends on oqs-sys = "=0.11.0", or pass --liboqs-src'
        )
    return Path(found[-1])


def build_speed_tools(library: Path, source: Path, work: Path) -> dict[str, Path]:
    """Compile tests/speed_kem.c and speed_sig.c against `library` into `work`."""
    include = library.parent.parent / "include"
    tests = source / "tests"
    if not (include / "oqs" / "oqs.h").exists():
        sys.exit(f"no liboqs headers at {include}/oqs beside {library}")
    key = hashlib.sha256(f"{library}\n{source}".encode()).hexdigest()[:12]
    out = work / f"speed-{key}"
    out.mkdir(parents=True, exist_ok=True)
    tools = {}
    for name in ("speed_kem", "speed_sig"):
        binary = out / name
        inputs = [tests / f"{name}.c", tests / "ds_benchmark.h", tests / "system_info.c", library]
        if not binary.exists() or binary.stat().st_mtime < max(p.stat().st_mtime for p in inputs):
            command = [
                os.environ.get("CC", "cc"),
                "-O3",
                "-std=gnu11",
                f"-I{include}",
                f"-I{tests}",
                str(tests / f"{name}.c"),
                "-o",
                str(binary),
                str(library),
                f"-Wl,-rpath,{library.parent}",
                "-lcrypto",
                "-lm",
            ]
            print(f"building {name}: {' '.join(command)}", file=sys.stderr)
            subprocess.run(command, check=True)
        tools[name] = binary
    return tools


_DS_ROW = re.compile(r"^(\w+)\s*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|")


def run_liboqs_speed(binary: Path, algorithm: str, seconds: int) -> OpsPerSecond:
    """Run speed_kem/speed_sig for one algorithm; ops/s = 1e6 / mean time per op (us)."""
    done = subprocess.run(
        [str(binary), "--duration", str(seconds), algorithm],
        capture_output=True,
        text=True,
        check=True,
    )
    result: OpsPerSecond = {}
    for line in done.stdout.splitlines():
        match = _DS_ROW.match(line.strip())
        if match:
            operation = "keygen" if match[1] == "keypair" else match[1]
            result[operation] = 1e6 / float(match[4])
    return result


def rate(loop: Callable[[], LoopResult], base: str) -> float:
    """A loop's operations per second in `base`: its own wall clock, or the CPU time the
    thread got while it ran (what `pqbench speed` records, `Timed.in_base`)."""
    started = time.thread_time_ns()
    result = loop()
    cpu_ns = time.thread_time_ns() - started
    return result.ops_per_sec if base == "wall" else result.ops * 1e9 / cpu_ns


def native_loop(alg: Algorithm) -> Callable[[int, str], float]:
    """pqbench's native liboqs loop for one parameter set, with the standard's sizes, in
    wall time (liboqs's speed tools read the wall clock only)."""
    pk, sk = alg.size("public_key"), alg.size("secret_key")

    def run(seconds: int, op: str) -> float:
        if alg.kind == "kem":
            return native.oqs_kem(alg.name, op, seconds, pk_len=pk, sk_len=sk,
                                  ct_len=alg.size("ciphertext"),
                                  ss_len=alg.size("shared_secret")).ops_per_sec
        return native.oqs_sig(alg.name, op, seconds, pk_len=pk, sk_len=sk,
                              sig_len_max=alg.size("signature"),
                              msg_len=SPEED_SIG_MESSAGE_LEN).ops_per_sec

    return run


def speed_tool(binary: Path, alg: str) -> Callable[[int], OpsPerSecond]:
    return lambda seconds: run_liboqs_speed(binary, alg, seconds)


def liboqs_cases(tools: dict[str, Path]) -> list[Case]:
    cases = []
    for alg in PQ_SETS:
        tool = "speed_kem" if alg.kind == "kem" else "speed_sig"
        cases.append(Case(f"liboqs {tool}", alg.name, alg.operations,
                          speed_tool(tools[tool], alg.name), native_loop(alg)))
    return cases


# --- libcrypto reference: openssl speed -----------------------------------------------------


def run_openssl_speed(openssl: str, name: str, seconds: int, base: str) -> OpsPerSecond:
    """`openssl speed -mr`: '+R1:count:bits:secs' (RSA, ECDH) or '+R8:count:bits:name:secs';
    the seconds are CPU time, or wall time with -elapsed."""
    _, tags = OPENSSL_CASES[name]
    done = subprocess.run(
        [openssl, "speed", "-mr", *(["-elapsed"] if base == "wall" else []), "-seconds",
         str(seconds), name],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, float] = {}
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("+R"):
            fields = line[1:].split(":")
            found[fields[0]] = int(fields[1]) / float(fields[-1])
    return {op: found[tag] for op, tag in tags.items()}


def openssl_tool(openssl: str, name: str, base: str) -> Callable[[int], OpsPerSecond]:
    return lambda seconds: run_openssl_speed(openssl, name, seconds, base)


def libcrypto_loop(alg: str, base: str) -> Callable[[int, str], float]:
    return lambda seconds, op: rate(lambda: native.ssl_pk(alg, op, seconds), base)


def openssl_cases(openssl: str, base: str) -> list[Case]:
    tool = "openssl speed" + (" -elapsed" if base == "wall" else " (CPU time)")
    return [
        Case(tool, alg, tuple(tags), openssl_tool(openssl, name, base),
             libcrypto_loop(alg, base))
        for name, (alg, tags) in OPENSSL_CASES.items()
    ]


# --- alternation and the table ------------------------------------------------------------


def measure(case: Case, seconds: int, pairs: int) -> list[Row]:
    """`pairs` x (reference run, then pqbench run) of equal duration."""
    reference: dict[str, list[float]] = {op: [] for op in case.operations}
    pqbench: dict[str, list[float]] = {op: [] for op in case.operations}
    for pair in range(pairs):
        print(f"  {case.algorithm}: pair {pair + 1}/{pairs}", file=sys.stderr)
        ref = case.run_reference(seconds)
        for op in case.operations:
            reference[op].append(ref[op])
        for op in case.operations:
            pqbench[op].append(case.run_pqbench(seconds, op))
    return [
        Row(case.reference_tool, case.algorithm, op, reference[op], pqbench[op])
        for op in case.operations
    ]


def markdown(rows: list[Row], pairs: int) -> str:
    lines = [
        "| Reference | Algorithm | Operation | reference ops/s | pqbench ops/s "
        f"| ratio (median of {pairs}) | ratio min–max | ≥ {TARGET_RATIO} |",
        "|---|---|---|---:|---:|---:|---:|:---:|",
    ]
    for row in rows:
        ratio = statistics.median(row.ratios)
        lines.append(
            f"| {row.reference_tool} | {row.algorithm} | {row.operation} "
            f"| {statistics.median(row.reference):,.0f} | {statistics.median(row.pqbench):,.0f} "
            f"| {ratio:.3f} | {min(row.ratios):.3f}–{max(row.ratios):.3f} "
            f"| {'yes' if ratio >= TARGET_RATIO else 'NO'} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=1, help="duration of each run (whole s)")
    parser.add_argument("--pairs", type=int, default=5, help="alternating pairs (>= 5)")
    parser.add_argument("--only", choices=("liboqs", "openssl"), help="one reference only")
    parser.add_argument("--liboqs", help="liboqs library or prefix (default: pqbench's)")
    parser.add_argument("--liboqs-src", help="liboqs source tree with tests/speed_kem.c")
    parser.add_argument("--openssl", default="/usr/bin/openssl", help="openssl binary")
    parser.add_argument("--time-base", choices=("cpu", "wall"), default="cpu",
                        help="the clock both sides of the openssl cases count")
    parser.add_argument("--work-dir", type=Path, default=WORK_DIR, help="build directory")
    parser.add_argument(
        "--cpu",
        type=int,
        default=max(os.sched_getaffinity(0)),
        help="pin both sides to this CPU (-1: no pinning)",
    )
    args = parser.parse_args(argv)
    if args.seconds < 1 or args.pairs < 1:
        parser.error("--seconds and --pairs must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not native.available():
        sys.exit(f"native loops unavailable: {native.unavailable_reason()}")
    if args.cpu >= 0:  # the reference tools inherit it: both sides run on one core
        os.sched_setaffinity(0, {args.cpu})
    cases: list[Case] = []
    header = [
        f"- seconds per run: {args.seconds}, pairs: {args.pairs}, "
        f"CPU: {args.cpu if args.cpu >= 0 else 'any'}, counter: {native.counter_name()}"
    ]
    if args.only in (None, "liboqs"):
        library = liboqs_library(args.liboqs)
        tools = build_speed_tools(library, liboqs_source(args.liboqs_src), args.work_dir)
        header.append(f"- liboqs {native.oqs_load(library)}: {library}")
        cases += liboqs_cases(tools)
    if args.only in (None, "openssl"):
        openssl = shutil.which(args.openssl) or args.openssl
        version = subprocess.run([openssl, "version"], capture_output=True, text=True).stdout
        header.append(f"- reference {openssl}: {version.strip()}")
        header.append(f"- pqbench libcrypto: {native.ssl_version()} ({native.ssl_library_path()})")
        cases += openssl_cases(openssl, args.time_base)
    rows = [row for case in cases for row in measure(case, args.seconds, args.pairs)]
    print("\n".join(header))
    print()
    print(markdown(rows, args.pairs))
    return 0 if all(statistics.median(r.ratios) >= TARGET_RATIO for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

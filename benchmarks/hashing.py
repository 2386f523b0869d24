"""How pqbench's hashing compares with the reference tools, in one run (not a test).

Prints three ratios against their targets, each as the median of interleaved
pairs (A, B, A, B ...) so a neighbour's load hits both sides alike:

1. in-memory SHA-256 at 16 KiB (the native libcrypto loop when built, else hashlib) versus
   `openssl speed -elapsed -evp sha256 -bytes 16384` (wall time, as ours): target >= 0.97;
2. `pqbench files hash` of a page-cached 1 GiB file versus that in-memory figure: >= 0.95;
3. `--jobs N` over N such files versus one file (aggregate hash bytes/s): >= 0.85 x N;

4. the hash pass `files hash` uses by default against a plain hashlib loop over the same
   page-cached file (1 MiB readinto, then update), and the other pass (a reader thread
   beside the hasher, or reading and hashing in turn) against the same loop: each a paired
   time ratio over --pairs pairs, the order within a pair alternating, with its interval
   (Hodges-Lehmann, Tukey's signed-rank interval, as every pqbench ratio), with the file
   page-cached and with its cache dropped before every pass: the default should be the
   faster one on this kind of machine (target: its ratio's interval at or below 1.02);

and, for context, sha256sum, `openssl dgst -sha256` and hashlib.file_digest on the same
cached file. Scratch files live in a temporary directory that is removed afterwards.

    .venv/bin/python benchmarks/hashing.py [--seconds 2] [--size-mib 1024] [--pairs 3]
        [--passes-only --pass-pairs 10]
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from pqbench.analysis import ratios
from pqbench.libraries.implementations.digests import new_hasher
from pqbench.measure.files import cache, hashing, stream
from pqbench.timing import native
from pqbench.views import numbers


def openssl_speed(seconds: float) -> float:
    # -elapsed: speed divides by CPU user time unless told to use wall time, as we do; on a
    # shared machine user time flatters it.
    out = subprocess.run(["openssl", "speed", "-elapsed", "-evp", "sha256", "-bytes", "16384",
                          "-seconds", str(max(1, round(seconds)))],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"^sha256\s+([\d.]+)k", out, re.MULTILINE)
    if not match:
        raise RuntimeError(f"cannot parse openssl speed output:\n{out}")
    return float(match.group(1)) * 1000


def in_memory(seconds: float) -> tuple[float, str]:
    """SHA-256 at 16 KiB per op, bytes/s, and which loop gave it."""
    if native.available():
        r = native.ssl_digest("SHA256", 16384, seconds)
        return r.ops_per_sec * 16384, "native libcrypto loop"
    data = os.urandom(16384)
    ops, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            hashlib.sha256(data).digest()
        ops += 100
    return ops * 16384 / (time.perf_counter() - start), "hashlib"


def paired(a: Callable[[], float], b: Callable[[], float], pairs: int) -> tuple[float, float,
                                                                               float]:
    """Median of a/b over interleaved pairs, and the medians of a and b."""
    ratios, xs, ys = [], [], []
    for _ in range(pairs):
        x, y = a(), b()
        xs.append(x)
        ys.append(y)
        ratios.append(x / y)
    return statistics.median(ratios), statistics.median(xs), statistics.median(ys)


def make_file(path: str, size: int) -> None:
    block = os.urandom(1 << 20)
    with open(path, "wb") as out:
        for _ in range(size >> 20):
            out.write(block)


def timed_command(argv: list[str], size: int) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True)
    return size / (time.perf_counter() - start)


def file_digest_rate(path: str, size: int) -> float:
    start = time.perf_counter()
    with open(path, "rb") as handle:
        hashlib.file_digest(handle, "sha256")
    return size / (time.perf_counter() - start)


def warm_hash_rate(path: str) -> float:
    outcome = hashing.hash_file(path, "SHA-256", "warm")
    assert isinstance(outcome, hashing.FileHash), outcome
    return outcome.hashed.bytes_per_sec


def jobs_rate(paths: list[str], jobs: int) -> float:
    rate = hashing.aggregate_hash_rate(hashing.hash_files(paths, "SHA-256", "warm", jobs))
    assert rate is not None
    return rate


def _drop(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        cache.drop(fd)
    finally:
        os.close(fd)


def plain_loop_seconds(path: str, cold: bool) -> float:
    """The reference: what a user would write, one thread, 1 MiB chunks."""
    if cold:
        _drop(path)
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    digest = hashlib.sha256()
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as handle:
        while n := handle.readinto(buffer):
            digest.update(view[:n])
    return time.perf_counter() - start


def pass_seconds(path: str, overlapped: bool, cold: bool) -> float:
    fd = os.open(path, os.O_RDONLY)
    try:
        if cold:
            cache.drop(fd)
        run = stream.hash_pass if overlapped else stream.hash_pass_in_turn
        return run(fd, new_hasher("SHA-256")).elapsed_ns / 1e9
    finally:
        os.close(fd)


def passes_against_the_loop(path: str, pairs: int, cold: bool = False) -> None:
    """Each of the two hash passes against the plain loop, paired: in pair i the three run
    in an order rotated by i, so each goes first, second and third alike. `cold`: the
    file's page cache dropped before every pass, else read into it first."""
    if not cold:
        hashing.hash_file(path, "SHA-256", "warm")  # into the page cache
    runners: dict[str, Callable[[], float]] = {
        "overlapped": lambda: pass_seconds(path, True, cold),
        "in turn": lambda: pass_seconds(path, False, cold),
        "loop": lambda: plain_loop_seconds(path, cold)}
    names = list(runners)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(pairs):
        for name in names[i % 3:] + names[:i % 3]:
            times[name].append(runners[name]())
    size = os.path.getsize(path)
    default = default_pass()
    for name in ("overlapped", "in turn"):
        found = ratios.paired(times[name], times["loop"])
        assert found is not None
        print(f"   {name:10} pass {gb(size / statistics.median(times[name]))} vs plain loop "
              f"{gb(size / statistics.median(times['loop']))}: {said(found, pairs)}"
              + ("  <- the default here" if name == default else ""))
    found = ratios.paired(times["overlapped"], times["in turn"])
    assert found is not None
    print(f"   overlapped against in turn: {said(found, pairs)}; "
          f"load {os.getloadavg()[0]:.2f}")


def default_pass() -> str:
    """The pass `files hash` runs when not told otherwise, read from `hash_file` itself."""
    overlap = inspect.signature(hashing.hash_file).parameters["overlap"].default
    return "overlapped" if overlap else "in turn"


def said(found: tuple[float, float, float, float], pairs: int) -> str:
    """A paired time ratio as the measurements table gives it, then in pqbench's words:
    "time ratio 0.974 [0.885-1.084] (87.5 % CI, 4 pairs): 1.03x faster [1.08x slower –
    1.13x faster]"."""
    estimate, low, high, level = found
    return (f"time ratio {estimate:.3f} [{low:.3f}-{high:.3f}] ({numbers.share(level)} CI, "
            f"{pairs} pairs): {numbers.time_change(estimate, low, high)}")


def gb(rate: float) -> str:
    return f"{rate / 1e9:.3f} GB/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--pass-pairs", type=int, default=10)
    parser.add_argument("--passes-only", action="store_true",
                        help="only 4.: the two hash passes against the plain loop")
    parser.add_argument("--cold", action="store_true",
                        help="4. with the page cache dropped before every pass")
    args = parser.parse_args()
    size = args.size_mib << 20
    if args.passes_only:
        scratch = tempfile.mkdtemp(prefix="pqbench-hashing-")
        try:
            path = os.path.join(scratch, "file.bin")
            make_file(path, size)
            print(f"4. {'cold' if args.cold else 'warm'} {args.size_mib} MiB SHA-256, time "
                  "against a plain hashlib loop:")
            passes_against_the_loop(path, args.pass_pairs, args.cold)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    cores = os.cpu_count() or 1
    _, source = in_memory(0.1)

    ratio, ours, theirs = paired(lambda: in_memory(args.seconds)[0],
                                 lambda: openssl_speed(args.seconds), args.pairs)
    print(f"1. in-memory SHA-256 @16 KiB ({source}) {gb(ours)} vs openssl speed "
          f"{gb(theirs)}: ratio {ratio:.3f} (target >= 0.97)")

    scratch = tempfile.mkdtemp(prefix="pqbench-hashing-")
    try:
        paths = [os.path.join(scratch, f"file{i}.bin") for i in range(cores)]
        for path in paths:
            make_file(path, size)
        ratio, ours, theirs = paired(lambda: warm_hash_rate(paths[0]),
                                     lambda: in_memory(args.seconds)[0], args.pairs)
        print(f"2. files hash of a cached {args.size_mib} MiB file {gb(ours)} vs in-memory "
              f"{gb(theirs)}: ratio {ratio:.3f} (target >= 0.95)")

        ratio, many, one = paired(lambda: jobs_rate(paths, cores),
                                  lambda: jobs_rate(paths[:1], 1), args.pairs)
        print(f"3. --jobs {cores} over {cores} files {gb(many)} vs one file {gb(one)}: "
              f"scaling {ratio:.2f} = {ratio / cores:.2f} x N (target >= 0.85 x N)")

        for cold in (False, True):
            print(f"4. {'cold' if cold else 'warm'} {args.size_mib} MiB SHA-256, time "
                  "against a plain hashlib loop:")
            passes_against_the_loop(paths[0], args.pass_pairs, cold)

        print("context, same cached file:")
        for name, rate in (
                ("sha256sum", timed_command(["sha256sum", paths[0]], size)),
                ("openssl dgst -sha256", timed_command(["openssl", "dgst", "-sha256",
                                                        paths[0]], size)),
                ("hashlib.file_digest", file_digest_rate(paths[0], size))):
            print(f"   {name:22} {gb(rate)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

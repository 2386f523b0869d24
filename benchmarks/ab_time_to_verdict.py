"""How long `pqbench ab` needs for a verdict on this machine, against separate runs.

Three questions (issue #9), each asked `--repeat` times so a shared machine's phases show
as a range rather than as one lucky figure:

1. the masked AES-NI jump: `ab aes-256-xts --a mask:aesni --b here` (16 KiB blocks, both
   XTS rows): seconds of measurement until both rows are decided. Target < 60 s. Skipped
   on a CPU without AES-NI, where the mask changes nothing;
2. an A/A session over the headline rows (ML-KEM-768, ML-DSA-65, RSA-2048, X25519 in
   every implementation, as the README's headline table): seconds until it ends, and
   whether it ends clean (every row "no change", none faster or slower). Target < 180 s;
3. precision: the 99 % interval of an A/A row's ratio after 30 s on that row
   (`--threshold 0`, so the row never stops early). Target within ±2 %. Both the plain
   99 % signed-rank interval and the wider one `ab` judges by (99.8 %, the per-look level)
   are shown.

Against it, the old way: separate `pqbench speed` runs, the two configurations
interleaved (A B A B ...), compared with `pqbench compare --by label` after each new pair
of runs from 5 a side on (the fewest an exact test over runs can use at alpha 0.01), until
the rows are decided or `--max-runs` a side. Seconds are wall time of the speed runs.

A benchmark script, not a test (it asserts no timing):

    python benchmarks/ab_time_to_verdict.py [--repeat 3] [--skip-separate]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pqbench import signedrank
from pqbench.store import Store

HEADLINE = ("ml-kem-768", "ml-dsa-65", "rsa2048", "x25519")
AES = ("aes-256-xts", "-o", "encrypt", "--bytes", "16384", "-i", "libcrypto", "-i",
       "cryptography")
#: Separate runs use the quick suite's settings (0.5 s per operation in 5 rounds).
QUICK = ("--seconds", "0.5", "--rounds", "5")
PRECISION_ROWS = (("sha256", "-o", "hash", "--bytes", "16384", "-i", "libcrypto"),
                  ("ml-kem-768", "-o", "encaps", "-i", "liboqs"),
                  ("x25519", "-o", "derive", "-i", "libcrypto"))


def pqbench(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pqbench", *args, "--db", str(db)],
                          capture_output=True, text=True, check=False)


def ab(db: Path, *args: str) -> dict[str, Any]:
    done = pqbench("ab", *args, "--json", db=db)
    if done.returncode != 0:
        raise SystemExit(f"pqbench ab failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout)


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} (range {min(values):.1f}-{max(values):.1f})"


# --- 1 and 2: time to a verdict with ab --------------------------------------------------


def ab_aes(db: Path) -> tuple[float, list[str]]:
    document = ab(db, *AES, "--a", "mask:aesni", "--b", "here", "--max-seconds", "60")
    return (sum(r["seconds"] or 0.0 for r in document["rows"]),
            [f"{r['implementation']} {r['verdict']} x{r['ratio']:.1f} ({r['pairs']} pairs)"
             for r in document["rows"]])


def ab_a_a(db: Path) -> tuple[float, dict[str, int]]:
    document = ab(db, *HEADLINE, "--a", "here", "--b", "here", "--max-seconds", "180")
    counts: dict[str, int] = {}
    for row in document["rows"]:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    return sum(r["seconds"] or 0.0 for r in document["rows"]), counts


# --- 3: precision after 30 s on a row -----------------------------------------------------


def precision(db: Path, row: tuple[str, ...]) -> tuple[str, float, float, int]:
    """(row, plain 99 % half-width, the session's per-look half-width, pairs)."""
    document = ab(db, *row, "--a", "here", "--b", "here", "--threshold", "0",
                  "--max-seconds", "30")
    (result,) = document["rows"]
    store = Store.open(str(db), create=False)
    run_a, run_b = (store.load_run(run_id) for run_id in document["session"]["runs"])
    (m_a,), (m_b,) = run_a.measurements, run_b.measurements
    plain = signedrank.compare_pairs([r.ops_per_sec for r in m_a.rounds],
                                     [r.ops_per_sec for r in m_b.rounds], alpha=0.01)
    name = f"{result['algorithm']} {result['operation']} [{result['implementation']}]"
    return (name, half_width(plain.ratio, plain.ci_low, plain.ci_high),
            half_width(result["ratio"], result["ci_low"], result["ci_high"]), result["pairs"])


def half_width(ratio: float, low: float | None, high: float | None) -> float:
    if not low or not high:
        return float("inf")
    return max(ratio / low, high / ratio) - 1


# --- the old way: separate, interleaved runs --------------------------------------------


def separate_runs(db: Path, rows: tuple[str, ...], mask_a: bool, max_runs: int,
                  speed_args: tuple[str, ...] = ()) -> tuple[float, int, dict[str, int]]:
    """Interleaved speed runs until compare decides every row; (seconds, runs a side,
    verdict counts at the end)."""
    spent, counts = 0.0, {}
    for index in range(1, max_runs + 1):
        for label, extra in (("A", ("--mask", "aesni") if mask_a else ()), ("B", ())):
            started = time.monotonic()
            done = pqbench("speed", *rows, *speed_args, *extra, "--label", label, db=db)
            spent += time.monotonic() - started
            if done.returncode != 0:
                raise SystemExit(f"pqbench speed failed:\n{done.stderr}")
        if index < 5:
            continue
        done = pqbench("compare", "--by", "label", "A", "B", "--json", db=db)
        document = json.loads(done.stdout)
        counts = {}
        for row in document["rows"]:
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        undecided = sum(n for v, n in counts.items() if v in ("inconclusive", "too few runs"))
        if not undecided and (mask_a or not (counts.get("faster") or counts.get("slower"))):
            return spent, index, counts
    return spent, max_runs, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-runs", type=int, default=8,
                        help="separate runs a side at most before giving up")
    parser.add_argument("--skip-separate", action="store_true",
                        help="skip the (slow) separate-runs comparison")
    options = parser.parse_args()
    has_aes = "aes" in cpu_flags()
    print(f"load average at start: {os.getloadavg()}; CPUs: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "ab.db"
        aes_seconds, aa_seconds, clean = [], [], 0
        for _ in range(options.repeat):
            if has_aes:
                seconds, verdicts = ab_aes(db)
                aes_seconds.append(seconds)
                print(f"ab AES-NI jump: {seconds:.1f} s of measurement: {'; '.join(verdicts)}")
            seconds, counts = ab_a_a(db)
            aa_seconds.append(seconds)
            clean += counts.get("no change", 0) == sum(counts.values())
            print(f"ab A/A headline rows: {seconds:.1f} s; verdicts {counts}")
        precise = [precision(db, row) for row in PRECISION_ROWS for _ in range(options.repeat)]
        for name, plain, per_look, pairs in precise:
            print(f"precision after 30 s, {name}: 99 % CI ±{plain:.2%} "
                  f"(per-look 99.8 % CI ±{per_look:.2%}), {pairs} pairs")
        separate: list[str] = []
        if not options.skip_separate:
            if has_aes:
                seconds, runs, counts = separate_runs(Path(scratch) / "aes.db", AES, True,
                                                      options.max_runs, QUICK)
                separate.append(f"AES-NI jump: {seconds:.0f} s, {runs} runs a side, {counts}")
            seconds, runs, counts = separate_runs(Path(scratch) / "aa.db", HEADLINE, False,
                                                  options.max_runs, QUICK)
            separate.append(f"A/A headline: {seconds:.0f} s, {runs} runs a side, {counts}")
    print()
    print("| question | ab | target |")
    print("|---|---|---|")
    if has_aes:
        print(f"| masked AES-NI jump decided (s of measurement) | {spread(aes_seconds)} | < 60 |")
    print(f"| A/A headline rows ended (s of measurement) | {spread(aa_seconds)}; clean in "
          f"{clean} of {options.repeat} | < 180, clean |")
    for name in dict.fromkeys(n for n, *_ in precise):
        plains = [p * 100 for n, p, _, _ in precise if n == name]
        looks = [p * 100 for n, _, p, _ in precise if n == name]
        print(f"| 99 % CI half-width after 30 s, {name} (%) | {spread(plains)} "
              f"(per-look: {spread(looks)}) | ±2 |")
    for line in separate:
        print(f"separate interleaved runs, {line}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""How long `pqbench ab` needs for a verdict on this machine, against separate runs.

Three questions, each asked `--repeat` times so a shared machine's phases show
as a range rather than as one lucky figure:

1. the masked AES-NI jump: `ab aes-256-xts --a mask:aesni --b here` (16 KiB blocks, both
   XTS rows): seconds of measurement until both rows are decided. Target < 60 s. Skipped
   on a CPU without AES-NI, where the mask changes nothing;
2. an A/A session over the headline rows (ML-KEM-768, ML-DSA-65, RSA-2048, X25519 in
   every implementation, as the README's headline table): seconds until it ends, and
   whether it ends clean (no row faster or slower; the verdicts are listed). Target
   < 180 s;
3. precision: the 99 % interval of an A/A row's ratio after 30 s on that row, from a
   session with one look at the end (nothing stops it early), repeated with fresh workers
   at least three times: the spread of the A/A ratios across sessions shows how much two
   worker processes differ by themselves (memory layout and the like); a session's
   interval, over its worker pairs, has to cover that spread. Target within ±2 %;
4. honest A/A intervals: `--sessions` (20) A/A sessions of `ab sha-256 ml-kem-768 x25519
   aes-256-gcm -o hash -o encaps -o derive -o encrypt --bytes 16384 -i libcrypto -i liboqs
   --a here --b here --max-seconds 30` (four rows, ML-KEM-768 encapsulation by liboqs
   among them): how many of the 4 x 20 intervals exclude 1.0 (target: at most 2 of 80),
   which rows, and the intervals' half-widths.

Against it, the old way: separate `pqbench speed` runs, the two configurations
interleaved (A B A B ...), compared with `pqbench compare --by label` after each new pair
of runs from 5 a side on (the fewest an exact test over runs can use at alpha 0.01), until
the rows are decided or `--max-runs` a side. Seconds are wall time of the speed runs.

A benchmark script, not a test (it asserts no timing):

    python benchmarks/ab_time_to_verdict.py [--repeat 3] [--sessions 20] [--skip-separate]
        [--only ab|aes|precision|separate|intervals]
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

HEADLINE = ("ml-kem-768", "ml-dsa-65", "rsa2048", "x25519")
AES = ("aes-256-xts", "-o", "encrypt", "--bytes", "16384", "-i", "libcrypto", "-i",
       "cryptography")
#: Separate runs use the quick suite's settings (0.5 s per operation in 5 rounds).
QUICK = ("--seconds", "0.5", "--rounds", "5")
#: The A/A sessions whose intervals are counted (question 4).
INTERVAL_ROWS = ("sha-256", "ml-kem-768", "x25519", "aes-256-gcm", "-o", "hash", "-o",
                 "encaps", "-o", "derive", "-o", "encrypt", "--bytes", "16384", "-i",
                 "libcrypto", "-i", "liboqs", "--a", "here", "--b", "here", "--max-seconds",
                 "30")
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


def spread(values: list[float], digits: int = 1) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return (f"{statistics.median(values):.{digits}f} (range {min(values):.{digits}f} to "
            f"{max(values):.{digits}f})")


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


def precision(db: Path, row: tuple[str, ...]) -> tuple[str, float, float]:
    """(row, 99 % CI half-width, A/A ratio) of one fresh A/A session of 30 s on the row.

    The session runs in this process with a single look at the end (so nothing stops the
    row early and the interval is the plain 99 % one) and fresh workers each time; the
    ratios of repeated sessions show how much two worker processes differ by themselves.
    """
    from pqbench.analysis import compare
    from pqbench.catalog import algorithms
    from pqbench.measure.speed import suite
    from pqbench.sessions import sides
    from pqbench.sessions.ab import sequential, session

    name, *options = row
    operation = options[options.index("-o") + 1]
    implementation = options[options.index("-i") + 1]
    block = int(options[options.index("--bytes") + 1]) if "--bytes" in options else None
    settings = session.Settings(
        algorithms=(algorithms.resolve([name])[0].name,), implementations=(implementation,),
        operations=(operation,), block_sizes=(block,) if block else suite.BLOCK_SIZES,
        max_seconds=30.0, threshold=0.0,
        looks=sequential.Looks(counts=(1_000_000,), alpha=0.01))
    here = sides.parse(["here"], "a")
    outcome = session.Session(here, here, settings, "benchmarks/ab_time_to_verdict.py").run()
    result = compare.compare_runs([outcome.run_a], [outcome.run_b], 0.0)
    (found,) = result.rows
    label = (f"{found.algorithm} {found.operation} [{found.implementation}] "
             f"({found.pairs} pairs)")
    return label, half_width(found.ratio, found.ci_low, found.ci_high), found.ratio


def half_width(ratio: float, low: float, high: float) -> float:
    if not (low > 0 and high < float("inf")):
        return float("inf")
    return max(ratio / low, high / ratio) - 1


# --- 4: do A/A intervals cover 1.0? ---------------------------------------------------


def interval_table(db: Path, sessions: int) -> list[str]:
    """Count the A/A intervals that exclude 1.0 over `sessions` sessions of four rows."""
    excluded: list[str] = []
    widths: dict[str, list[float]] = {}
    seconds, total = [], 0
    for index in range(sessions):
        started = time.monotonic()
        document = ab(db, *INTERVAL_ROWS)
        seconds.append(time.monotonic() - started)
        for row in document["rows"]:
            total += 1
            name = f"{row['algorithm']} {row['operation']} [{row['implementation']}]"
            low, high = row["ci_low"] or 0.0, row["ci_high"] or float("inf")
            widths.setdefault(name, []).append(half_width(row["ratio"], low, high) * 100)
            if not low <= 1.0 <= high:
                excluded.append(f"session {index + 1}: {name} {row['ratio']:.4f} "
                                f"({low:.4f}-{high:.4f})")
            print(f"session {index + 1}: {name}: {row['verdict']}, {row['ratio']:.4f} "
                  f"({low:.4f}-{high:.4f}, {row['ci_level']:.2%}), {row['pairs']} pairs",
                  flush=True)
    lines = [f"| A/A intervals excluding 1.0 | {len(excluded)} of {total} "
             f"({'; '.join(excluded) or 'none'}) | at most 2 of 80 |",
             f"| wall seconds per A/A session | {spread(seconds)} | |"]
    lines += [f"| half-width of the interval, {name} (%) | {spread(values, 2)} | |"
              for name, values in widths.items()]
    return lines


# --- the old way: separate, interleaved runs --------------------------------------------


def separate_runs(db: Path, rows: tuple[str, ...], mask_a: bool, max_runs: int,
                  speed_args: tuple[str, ...] = ()) -> tuple[float, int, dict[str, int]]:
    """Interleaved speed runs until compare decides every row; (seconds, runs a side,
    verdict counts at the end)."""
    spent, counts = 0.0, dict[str, int]()
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
    parser.add_argument("--sessions", type=int, default=20,
                        help="A/A sessions whose intervals are counted")
    parser.add_argument("--only", choices=("ab", "aes", "precision", "separate",
                                           "intervals"),
                        help="ask one part only (aes: question 1 alone)")
    options = parser.parse_args()
    parts = ({options.only} if options.only else
             {"ab", "precision", "separate", "intervals"})
    if options.skip_separate:
        parts.discard("separate")
    has_aes = "aes" in cpu_flags()
    print(f"load average at start: {os.getloadavg()}; CPUs: {os.cpu_count()}", flush=True)
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        if "ab" in parts or "aes" in parts:
            lines += time_to_verdict(Path(scratch) / "ab.db", options.repeat, has_aes,
                                     headline="ab" in parts)
        if "intervals" in parts:
            lines += interval_table(Path(scratch) / "intervals.db", options.sessions)
        if "precision" in parts:
            lines += precision_table(Path(scratch) / "precision.db", max(options.repeat, 3))
        if "separate" in parts:
            if has_aes:
                seconds, runs, counts = separate_runs(Path(scratch) / "aes.db", AES, True,
                                                      options.max_runs, QUICK)
                lines.append(f"separate interleaved runs, AES-NI jump: {seconds:.0f} s, "
                             f"{runs} runs a side, {counts}")
            seconds, runs, counts = separate_runs(Path(scratch) / "aa.db", HEADLINE, False,
                                                  options.max_runs, QUICK)
            lines.append(f"separate interleaved runs, A/A headline: {seconds:.0f} s, {runs} "
                         f"runs a side, {counts}")
    print()
    print("\n".join(lines))
    print(f"load average at end: {os.getloadavg()}")


def time_to_verdict(db: Path, repeat: int, has_aes: bool, headline: bool = True
                    ) -> list[str]:
    aes_seconds, aa_seconds, clean = [], [], 0
    for _ in range(repeat):
        if has_aes:
            started = time.monotonic()
            seconds, verdicts = ab_aes(db)
            aes_seconds.append(seconds)
            print(f"ab AES-NI jump: {seconds:.1f} s of measurement "
                  f"({time.monotonic() - started:.1f} s wall, workers' start included): "
                  f"{'; '.join(verdicts)}", flush=True)
        if not headline:
            continue
        seconds, counts = ab_a_a(db)
        aa_seconds.append(seconds)
        clean += not (counts.get("faster") or counts.get("slower"))
        print(f"ab A/A headline rows: {seconds:.1f} s; verdicts {counts}")
    lines = ["| question | ab | target |", "|---|---|---|"]
    if has_aes:
        lines.append(f"| masked AES-NI jump decided (s of measurement) | {spread(aes_seconds)} "
                     "| < 60 |")
    if headline:
        lines.append(f"| A/A headline rows ended (s of measurement) | {spread(aa_seconds)}; "
                     f"no faster or slower in {clean} of {repeat} | < 180, clean |")
    return lines


def precision_table(db: Path, repeat: int) -> list[str]:
    precise = [(row[0], *precision(db, row)) for row in PRECISION_ROWS for _ in range(repeat)]
    for _, name, width, ratio in precise:
        print(f"precision after 30 s, {name}: 99 % CI ±{width:.2%}, A/A ratio {ratio:.4f}",
              flush=True)
    lines = []
    for row in dict.fromkeys(r for r, *_ in precise):
        widths = [w * 100 for r, _, w, _ in precise if r == row]
        ratios = [(q - 1) * 100 for r, _, _, q in precise if r == row]
        lines.append(f"| 99 % CI half-width after 30 s, {row} (%) | {spread(widths, 2)}; "
                     f"A/A ratio - 1 across sessions: {spread(ratios, 2)} % | ±2 |")
    return lines


if __name__ == "__main__":
    main()

"""Do a run's paired ratios hold from one run to the next on a machine whose cores are busy?

Six (`--runs`) independent `pqbench speed` processes of AES-128-XTS, AES-256-XTS,
ML-KEM-768 and X25519 (liboqs and libcrypto, 16 KiB blocks, 0.5 s per row), each while
`--busy` busy loops (default 2: every core of a 2-core machine) run beside it. Per run, two
of the ratios `speed` prints with their 99 % intervals:

* AES-256-XTS against AES-128-XTS per byte (encrypt @16 KiB, libcrypto);
* ML-KEM-768 [liboqs] against X25519 [libcrypto] per exchange.

Targets: in at least 5 of the 6 runs each interval covers the median of the six estimates,
and the six estimates lie within ±5 % of that median. Beside them, from the same runs, the
way each answer was taken before: the ratio of the two rows' median wall-time costs
(`wall_ns`), unpaired and without an interval; and the paired estimate in wall time, which
shows what the choice of CPU time as `speed`'s default time base buys.

A benchmark script, not a test (it asserts no timing):

    python benchmarks/paired_ratios.py [--runs 6] [--busy 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

COMMAND = ("speed", "aes-128-xts", "aes-256-xts", "ml-kem-768", "x25519", "-i", "liboqs",
           "-i", "libcrypto", "--bytes", "16384", "--seconds", "0.5", "--json")
AES = ("AES-256-XTS [libcrypto]", "AES-128-XTS [libcrypto]", "byte (encrypt @16384B)")
KEM = ("ML-KEM-768 [liboqs]", "X25519 [libcrypto]", "exchange")


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """Processes that spin until killed, one per core asked for."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(count)]


def find(document: dict[str, Any], wanted: tuple[str, str, str]) -> dict[str, Any]:
    numerator, denominator, per = wanted
    for ratio in document["ratios"]:
        if (ratio["numerator"]["label"], ratio["denominator"]["label"], ratio["per"]) == \
                (numerator, denominator, per):
            return dict(ratio)
    raise SystemExit(f"run {document['run_id']} has no ratio {wanted}")


def _wall_costs(document: dict[str, Any], side: dict[str, Any]) -> list[float]:
    """Per cycle, the side's cost in wall time (seconds per unit)."""
    rows = {(r["algorithm"], r["implementation"], r["operation"], r["block_size"]): r
            for r in document["results"]}
    parts = [(rows[(p["algorithm"], p["implementation"], p["operation"], p["block_size"])],
              p["count"]) for p in side["rows"]]
    cycles = min(len(row["samples"]) for row, _ in parts)
    return [sum(count * row["wall_ns"][c] / 1e9 / row["samples"][c]["ops"]
                for row, count in parts) for c in range(cycles)]


def unpaired(document: dict[str, Any], wanted: tuple[str, str, str]) -> float:
    """The old answer: time ratio from each side's median wall-time cost."""
    ratio = find(document, wanted)
    return (statistics.median(_wall_costs(document, ratio["numerator"]))
            / statistics.median(_wall_costs(document, ratio["denominator"])))


def paired_wall(document: dict[str, Any], wanted: tuple[str, str, str]) -> float:
    """The same pairs in the other time base: the paired estimate from wall-clock costs."""
    from pqbench.analysis.ratios import paired

    ratio = find(document, wanted)
    found = paired(_wall_costs(document, ratio["numerator"]),
                   _wall_costs(document, ratio["denominator"]))
    assert found is not None
    return found[0]


def _deviation(values: list[float]) -> float:
    middle = statistics.median(values)
    return max(abs(v / middle - 1) for v in values)


def summary(name: str, found: list[dict[str, Any]], old: list[float], wall: list[float]
            ) -> dict[str, Any]:
    estimates = [r["estimate"] for r in found]
    middle = statistics.median(estimates)
    covering = sum(1 for r in found if r["ci_low"] is not None and r["ci_high"] is not None
                   and r["ci_low"] <= middle <= r["ci_high"])
    spread = max(abs(e / middle - 1) for e in estimates)
    return {"ratio": name, "estimates": estimates,
            "intervals": [(r["ci_low"], r["ci_high"], r["ci_level"]) for r in found],
            "median": middle, "covering_median": covering, "runs": len(found),
            "max_deviation": spread,
            "target_met": covering >= len(found) - 1 and spread <= 0.05,
            "unpaired_wall": old, "unpaired_max_deviation": _deviation(old),
            "paired_wall": wall, "paired_wall_max_deviation": _deviation(wall)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--busy", type=int, default=2, help="busy loops beside each run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    documents = []
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "paired.db"
        for index in range(args.runs):
            loops = busy_loops(args.busy)
            try:
                done = subprocess.run([sys.executable, "-m", "pqbench", *COMMAND, "--db",
                                       str(db)], capture_output=True, text=True, check=False)
            finally:
                for loop in loops:
                    loop.kill()
                    loop.wait()
            loads.append(os.getloadavg()[0])
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            documents.append(json.loads(done.stdout))
            print(f"run {index + 1}/{args.runs} done, load {loads[-1]:.1f}", file=sys.stderr)
    results = [summary(" / ".join(wanted[:2]) + f" per {wanted[2]}",
                       [find(d, wanted) for d in documents],
                       [unpaired(d, wanted) for d in documents],
                       [paired_wall(d, wanted) for d in documents]) for wanted in (AES, KEM)]
    if args.json:
        print(json.dumps({"busy_loops": args.busy, "loads": loads, "results": results},
                         indent=2))
        return 0
    print(f"{args.runs} runs, {args.busy} busy loops beside each; 1-min load after each: "
          + ", ".join(f"{load:.1f}" for load in loads))
    for r in results:
        print(f"\n{r['ratio']}")
        for estimate, (low, high, level) in zip(r["estimates"], r["intervals"], strict=True):
            print(f"  {estimate:.4f}  ({level * 100:.1f} % CI {low:.4f}-{high:.4f})")
        print(f"  median {r['median']:.4f}; {r['covering_median']}/{r['runs']} intervals "
              f"cover it; estimates within ±{r['max_deviation'] * 100:.1f} % of it "
              f"(target: >= {r['runs'] - 1} and ±5 %: {'met' if r['target_met'] else 'NOT met'})")
        print("  unpaired wall-time ratio of medians (the old answer): "
              + ", ".join(f"{v:.3f}" for v in r["unpaired_wall"])
              + f" (±{r['unpaired_max_deviation'] * 100:.1f} %)")
        print("  paired, in wall time instead of CPU time: "
              + ", ".join(f"{v:.3f}" for v in r["paired_wall"])
              + f" (±{r['paired_wall_max_deviation'] * 100:.1f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

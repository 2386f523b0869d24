"""Sessions and seconds `pqbench bisect` needs to place the change points of a series,
against measuring every neighbouring pair (`--every-pair`, N - 1 sessions).

The default series is twelve pyca/cryptography releases, one per major version 39 to 50
(their wheels bundle OpenSSL 3.0 to 4.0), and the row AES-256-GCM encryption of 16 KiB
through `cryptography`. The builds are made first (``pip:`` provisioning, cached), so
both ways are timed on cached builds; then the two ways alternate, `--repeat` times each,
so a shared machine's phases hit both. Each attempt reports its sessions, its seconds of
wall time, its change points, and whether the two ways found the same ones.

Named bisect_series.py, not bisect.py: a script's directory comes first on sys.path, and a
bisect.py there would shadow the standard library's `bisect` for every script beside it.

A benchmark script, not a test (it asserts no timing):

    python benchmarks/bisect_series.py [--repeat 2] [--series SPEC ...] [--max-seconds 60]
        [--json]
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

RELEASES = ("39.0.2", "40.0.2", "41.0.7", "42.0.8", "43.0.3", "44.0.3", "45.0.7", "46.0.7",
            "47.0.0", "48.0.1", "49.0.0", "50.0.2")
SERIES = "pip:cryptography=={" + ",".join(RELEASES) + "}"
ROW = ("aes-256-gcm", "-o", "encrypt", "-i", "cryptography", "--bytes", "16384")


def _pqbench(*args: str) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pqbench", *args, "--json"],
                          capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1) or not done.stdout.strip():
        sys.exit(f"pqbench {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout), seconds


def _points(document: dict[str, Any]) -> list[str]:
    """Each change point as builds and verdict (what two attempts must agree on)."""
    return sorted(f"{c['before']['build']} -> {c['after']['build']}: "
                  f"{c['comparison']['verdict']}"
                  for row in document["rows"] for c in row["change_points"])


def _ratios(document: dict[str, Any]) -> list[float]:
    return [round(c["comparison"]["ratio"], 3)
            for row in document["rows"] for c in row["change_points"]]


def _attempt(way: str, series: list[str], max_seconds: str, db: str) -> dict[str, Any]:
    extra = ("--every-pair",) if way == "every pair" else ()
    args = [arg for spec in series for arg in ("--series", spec)]
    document, seconds = _pqbench("bisect", *ROW, *args, "--max-seconds", max_seconds,
                                 "--db", db, *extra)
    return {"way": way, "sessions": len(document["sessions"]), "seconds": round(seconds, 1),
            "session_seconds": round(sum(s["seconds"] for s in document["sessions"]), 1),
            "change_points": _points(document), "ratios": _ratios(document),
            "unusable": document["unusable"]}


def _provision(series: list[str]) -> None:
    """Make (or find cached) every pip: build of the series."""
    from pqbench.sessions.bisect.series import parse
    from pqbench.sessions.sides import pip as provision

    for build in parse(series).builds:
        for item in build.items:
            if item.startswith("pip:"):
                provision.ensure_pip(provision.parse_pip(item[4:]), print)


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--series", action="append", help=f"default: {SERIES}")
    parser.add_argument("--max-seconds", default="60")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    series = options.series or [SERIES]
    attempts = []
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bisect.db")
        _provision(series)  # so that neither way timed pays for the installs
        for _ in range(options.repeat):
            for way in ("bisect", "every pair"):
                found = _attempt(way, series, options.max_seconds, db)
                found["load"] = _load()
                attempts.append(found)
                if not options.json:
                    print(f"{way:>10}: {found['sessions']:>3} sessions, "
                          f"{found['seconds']:>6} s (load {found['load']}); "
                          f"{len(found['change_points'])} change points, ratios "
                          f"{found['ratios']}", flush=True)
    same = len({tuple(a["change_points"]) for a in attempts}) == 1
    summary = {way: {"sessions": [a["sessions"] for a in attempts if a["way"] == way],
                     "median_seconds": statistics.median(
                         a["seconds"] for a in attempts if a["way"] == way)}
               for way in ("bisect", "every pair")}
    if options.json:
        print(json.dumps({"series": series, "row": list(ROW), "attempts": attempts,
                          "summary": summary, "same_change_points": same}, indent=2))
        return
    print("change points:" if same else "change points (the attempts disagree):")
    for attempt in attempts if not same else attempts[:1]:
        for point in attempt["change_points"]:
            print(f"  {point}")
    for way, figures in summary.items():
        print(f"{way}: sessions {figures['sessions']}, median {figures['median_seconds']} s")


if __name__ == "__main__":
    main()

"""How long the Rust workers take to compile from an empty cache: the old layout against the
new, in alternation, on this machine.

The old layout is the Rust sources of a git revision (--old) compiled as pqbench compiled
them then: `cargo build --release --locked` in each crate with a target folder of its own.
The new is this checkout's, compiled by pqbench itself (`compiling.compile_worker`, into an
empty PQBENCH_CACHE_DIR): one target folder for both workers, only the features used, the
release profile a user's own `cargo build --release` gets. Each repeat compiles both
workers both ways from nothing, the order of the two layouts by a coin flip, so a busy
phase of a shared machine hits both; cargo's download cache (~/.cargo/registry) is shared
and warm, as on any machine that compiled a crate before.

Each compile is a child process and is measured by its wall time and by the CPU time of
it and everything it started (the kernel's accounting of the child, `os.wait4`): on a
machine others load, wall time is mostly their share, CPU time is the work. The table
gives each repeat's figures, the new layout over the old per repeat, and with two repeats
or more the Hodges-Lehmann estimate of that ratio with its signed-rank interval. A
benchmark script, not a test:

    python benchmarks/stacks_build.py --old 79f2ecc --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pqbench.analysis.ratios import paired

REPO = Path(__file__).resolve().parent.parent
RUST = "pqbench/libraries/stacks/rust"
IMPLEMENTATIONS = ("aws-lc-rs", "libcrux")


@dataclass(frozen=True)
class Compiled:
    wall: float
    cpu: float


def _child(argv: list[str], cwd: Path, env: dict[str, str]) -> Compiled:
    """Run `argv` and measure it: wall time, and user plus system CPU time of it and of
    every process it waited for."""
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{errors.decode(errors='replace')[-3000:]}")
    return Compiled(wall, usage.ru_utime + usage.ru_stime)


def old_layout(revision: str, work: Path) -> Compiled:
    """The Rust sources of `revision`, each crate compiled with a target folder of its own."""
    sources = work / "old-sources"
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, RUST],
                             capture_output=True, check=True).stdout
    sources.mkdir()
    subprocess.run(["tar", "-x", "-C", str(sources)], input=archive, check=True)
    total = Compiled(0.0, 0.0)
    for name in IMPLEMENTATIONS:
        env = {**os.environ, "CARGO_TARGET_DIR": str(work / "old-target" / name),
               "AWS_LC_SYS_USE_SYSTEM": "0"}
        done = _child(["cargo", "build", "--release", "--locked"],
                      sources / RUST / name, env)
        total = Compiled(total.wall + done.wall, total.cpu + done.cpu)
    return total


_NEW = """
import sys
from pqbench.libraries.stacks import compiling, registry
for name in sys.argv[1:]:
    compiling.compile_worker(compiling.plan(registry.by_name(name)), lambda line: None)
"""


def new_layout(work: Path) -> Compiled:
    """This checkout's workers, compiled by pqbench into an empty cache."""
    env = {**os.environ, "PQBENCH_CACHE_DIR": str(work / "new-cache")}
    return _child([sys.executable, "-c", _NEW, *IMPLEMENTATIONS], REPO, env)


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the git revision of the old layout")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="one JSON document")
    args = parser.parse_args()
    coin = random.Random(args.seed)
    rows = []
    for repeat in range(args.repeats):
        found: dict[str, Compiled] = {}
        load_before = _load()
        for layout in coin.sample(["old", "new"], 2):
            with tempfile.TemporaryDirectory(prefix=f"stacks-build-{layout}-") as folder:
                work = Path(folder)
                found[layout] = (old_layout(args.old, work) if layout == "old"
                                 else new_layout(work))
                shutil.rmtree(work, ignore_errors=True)
        rows.append({"repeat": repeat + 1, "load": f"{load_before} -> {_load()}",
                     **{f"{layout}_{what}": round(getattr(found[layout], what), 1)
                        for layout in ("old", "new") for what in ("wall", "cpu")}})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    summary = {}
    for what in ("wall", "cpu"):
        estimate = paired([r[f"new_{what}"] for r in rows], [r[f"old_{what}"] for r in rows])
        if estimate is not None:
            ratio, low, high, level = estimate
            summary[what] = {"new_over_old": round(ratio, 3), "ci_low": round(low, 3),
                             "ci_high": round(high, 3), "level": round(level, 3)}
    document = {"old": args.old, "repeats": rows, "summary": summary}
    if args.json:
        print(json.dumps(document, indent=2))
        return
    print("repeat  load (1, 5, 15 min: before -> after)        old wall  new wall  "
          "old CPU  new CPU  new/old wall  new/old CPU")
    for r in rows:
        print(f"{r['repeat']:>6}  {r['load']:<42}  {r['old_wall']:>8}  {r['new_wall']:>8}  "
              f"{r['old_cpu']:>7}  {r['new_cpu']:>7}  {r['new_wall'] / r['old_wall']:>12.3f}  "
              f"{r['new_cpu'] / r['old_cpu']:>11.3f}")
    for what, s in summary.items():
        interval = (f"[{s['ci_low']}, {s['ci_high']}] ({s['level']:.0%})" if s["level"] > 0
                    else "(one repeat bounds nothing)")
        print(f"{what}: new/old {s['new_over_old']} {interval}")


if __name__ == "__main__":
    main()

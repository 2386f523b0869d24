"""benchmarks/hashing.py measures both hash passes `files hash` could run (a reader thread
beside the hasher, or reading and hashing in turn in one thread) against a plain hashlib
loop, paired, and names the one `files hash` runs by default: the script a default is
chosen by must run, say both, and tell the truth about the default."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys

import pytest

from pqbench.measure.files import hashing
from tests.helpers import REPO

pytestmark = pytest.mark.process

SCRIPT = REPO / "benchmarks" / "hashing.py"
#: "time ratio 0.974 [0.885-1.084] (87.5 % CI, 4 pairs): 1.03x faster [...]"
RATIO = (r"time ratio ([\d.]+) \[([\d.]+)-([\d.]+)\] \(([\d.]+) % CI, (\d+) pairs\): "
         r"(?:[\d.]+x faster|[\d.]+x slower|same speed) \[[^\]]+\]")
PASS = re.compile(r"^ +(overlapped|in turn) +pass ([\d.]+) GB/s vs plain loop ([\d.]+) GB/s: "
                  rf"{RATIO}(  <- the default here)?$")


@pytest.mark.parametrize("cold", [False, True], ids=["page-cached", "cache-dropped"])
def test_the_hashing_benchmark_pairs_both_passes_and_names_the_default(cold: bool) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--passes-only", "--pass-pairs", "4",
                           "--size-mib", "4", *(["--cold"] if cold else [])],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"4. {'cold' if cold else 'warm'} 4 MiB SHA-256, time against a plain " \
                       "hashlib loop:", lines
    passes = {m.group(1): m for line in lines if (m := PASS.match(line))}
    assert set(passes) == {"overlapped", "in turn"}, done.stdout
    for found in passes.values():
        estimate, low, high, level, pairs = (float(g) for g in found.groups()[3:8])
        assert low <= estimate <= high and 0 < level < 100 and pairs == 4, found.group(0)
        assert float(found.group(2)) > 0 and float(found.group(3)) > 0
    named = [name for name, m in passes.items() if m.group(9)]
    default = inspect.signature(hashing.hash_file).parameters["overlap"].default
    assert named == ["overlapped" if default else "in turn"], done.stdout
    between = next(line for line in lines if line.lstrip().startswith("overlapped against"))
    assert re.search(RATIO, between), between
    assert re.search(r"load [\d.]+$", between), between

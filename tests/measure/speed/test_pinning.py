"""`speed --cpu N` pins the measuring process to one CPU for the rounds, and gives it its
CPUs back after: measured in-process (a library user, a test), the caller and every
process it starts later would otherwise run on that one CPU (a Go program then sees
GOMAXPROCS=1)."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import invoke


@pytest.mark.process
def test_speed_on_one_cpu_gives_the_process_its_cpus_back(tmp_path) -> None:
    before = os.sched_getaffinity(0)
    # On a process allowed one CPU, pinning changes nothing and this holds trivially; the
    # suite's machines have two, where the pin narrows the set and must be undone.
    cpu = max(before)
    done = invoke("speed", "x25519", "-i", "cryptography", "-o", "derive", "--seconds",
                  "0.01", "--rounds", "2", "--cpu", str(cpu), "--json",
                  "--db", str(tmp_path / "p.db"))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["results"]
    assert row["cpu"] == cpu  # it was pinned for the rounds...
    assert os.sched_getaffinity(0) == before  # ...and is not any more

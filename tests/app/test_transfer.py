"""`pqbench export`'s checks and whole-or-nothing write, and `import`'s ending, directly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pqbench.app import transfer
from pqbench.platform.errors import InputFileError, StoreError, UsageError


@pytest.mark.parametrize(("runs", "last", "every"), [
    (None, None, False), (["r1"], 2, False), (["r1"], None, True), (None, 3, True)])
def test_exactly_one_choice_of_runs(runs: list[str] | None, last: int | None,
                                    every: bool) -> None:
    with pytest.raises(UsageError, match="name the runs to export, or give --last N or --all"):
        transfer.check("json", None, False, runs, last, every)


def test_each_single_choice_and_format_is_accepted() -> None:
    for fmt in ("json", "pytest-benchmark"):
        transfer.check(fmt, None, False, ["r1"], None, False)
    transfer.check("json", None, False, None, 1, False)
    transfer.check("json", None, False, None, None, True)
    with pytest.raises(UsageError, match="unknown --format 'csv'; choose from json, "
                                         "pytest-benchmark"):
        transfer.check("csv", None, False, ["r1"], None, False)


def test_an_existing_export_is_replaced_only_with_force(tmp_path: Path) -> None:
    earlier = tmp_path / "runs.json"
    earlier.write_text("the only copy")
    with pytest.raises(InputFileError, match="already exists; pass --force"):
        transfer.check("json", earlier, False, ["r1"], None, False)
    transfer.check("json", earlier, True, ["r1"], None, False)
    transfer.check("json", tmp_path / "new.json", False, ["r1"], None, False)


def test_only_a_regular_file_is_ever_replaced(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    for output in (link, tmp_path, Path(os.devnull)):
        with pytest.raises(InputFileError, match="is not a regular file"):
            transfer.check("json", output, True, ["r1"], None, False)


def test_the_write_is_whole_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    transfer.write_whole(out, "{}\n")
    assert out.read_text() == "{}\n"
    with pytest.raises(InputFileError, match="cannot write"):
        transfer.write_whole(tmp_path / "missing" / "runs.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.json"]  # nothing half-left


def test_runs_stored_otherwise_end_the_import_naming_five() -> None:
    clean = transfer.Imported("db", ["a"], ["b"], [])
    assert clean.ending is None
    assert clean.document() == {"database": "db", "imported": ["a"], "already_stored": ["b"],
                                "stored_with_other_contents": []}
    refused = transfer.Imported("db", [], [f"r{i}" for i in range(7)], [f"r{i}" for i in range(7)])
    ending = refused.ending
    assert ending is not None and ending.status == StoreError.exit_code == 1
    assert ending.message.startswith("7 run(s) of the files were not imported")
    assert "(r0, r1, r2, r3, r4 ...)" in ending.message
    two = transfer.Imported("db", [], ["r0", "r1"], ["r0", "r1"]).ending
    assert two is not None and "(r0, r1);" in two.message


def test_files_are_read_in_other_processes_only_when_several_large_and_a_cpu_idle() -> None:
    big = transfer.PARALLEL_BYTES
    assert transfer.readers([], cpus=2, load=0) == 0
    assert transfer.readers([10 * big], cpus=2, load=0) == 0  # one file: nothing to share
    assert transfer.readers([big // 4] * 3, cpus=2, load=0) == 0  # small: processes cost more
    assert transfer.readers([big // 2] * 2, cpus=1, load=0) == 0  # one CPU: nothing to gain
    assert transfer.readers([big // 2] * 2, cpus=2, load=0) == 2
    assert transfer.readers([big] * 5, cpus=2, load=1.0) == 3  # one more than the CPUs
    assert transfer.readers([big] * 5, cpus=2, load=1.01) == 0  # no CPU idle
    assert transfer.readers([big] * 3, cpus=8, load=6.5) == 3


def test_a_cpu_is_idle_by_what_other_processes_take_now_not_the_load_average() -> None:
    """An import asks /proc/stat whether a CPU is idle: the 1-minute load average trails,
    and counts an import that just ended as a busy CPU for the next."""
    from pqbench.measure.environment.load import Snapshot

    def at(seconds: float, busy: int, idle: int, own: int | None, load: float) -> Snapshot:
        return Snapshot(seconds, (load, load, load),
                        {"user": busy, "nice": 0, "system": 0, "idle": idle, "iowait": 0,
                         "irq": 0, "softirq": 0, "steal": 0}, own)

    # 200 ticks on two CPUs: 150 busy, 10 of them this process's: 1.4 CPUs busy elsewhere.
    start, end = at(0.0, 1000, 5000, 100, 1.9), at(0.1, 1150, 5050, 110, 1.9)
    assert transfer.busy_cpus(start, end, 2) == pytest.approx(1.4)
    # Quiet now, after a minute of work: the load average says busy, the CPUs are idle.
    quiet = at(0.1, 1002, 5198, 100, 1.9)
    assert transfer.busy_cpus(start, quiet, 2) == pytest.approx(0.02)
    assert transfer.readers([transfer.PARALLEL_BYTES] * 5, 2,
                            transfer.busy_cpus(start, quiet, 2)) == 3
    # Without /proc: the load average, else nothing known.
    blind = Snapshot(0.1, (0.7, 0.5, 0.4), None, None)
    assert transfer.busy_cpus(start, blind, 2) == 0.7
    assert transfer.busy_cpus(start, Snapshot(0.1, None, None, None), 2) == 0.0
    # On this machine, now: a share of its CPUs, read from /proc where Linux has it.
    cpus = os.cpu_count() or 1
    assert 0.0 <= transfer._busy_now(cpus) <= cpus


class _Clock:
    """`time` for `_busy_now`: its monotonic clock moved by hand, its sleeps noted."""

    def __init__(self) -> None:
        self.now, self.slept = 100.0, list[float]()

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


@pytest.mark.parametrize(("took", "sleeps"), [(0.0, 0.1), (0.04, 0.06), (0.1, 0.0),
                                              (0.3, 0.0)])
def test_the_import_loads_while_it_watches_and_waits_out_the_window_only(
        monkeypatch: pytest.MonkeyPatch, took: float, sleeps: float) -> None:
    """What the readers need is loaded during the watch (`meanwhile`, once); the watch
    then lasts the rest of IDLE_WINDOW, and no longer when loading took longer."""
    clock = _Clock()
    monkeypatch.setattr(transfer, "time", clock)
    done = []

    def meanwhile() -> None:
        done.append(True)
        clock.now += took

    # The figure itself is the machine's (with the clock stopped, the snapshots come a
    # moment apart and /proc may tell nothing: then the load average, which CI's own
    # work can lift above the CPUs); what is tested is the watch's length.
    assert transfer._busy_now(2, meanwhile) >= 0.0
    assert done == [True]
    assert clock.slept == [pytest.approx(sleeps)]


@pytest.mark.parametrize(("db", "expected"), [
    ("postgresql://fleet@db.example/pqbench", True), ("postgres://db/pqbench", True),
    ("host=db.example dbname=pqbench", True), ("/tmp/runs.db", False),
    ("sqlite:///tmp/runs.db", False), ("", False)])
def test_the_readers_make_rows_for_the_backend_the_location_names(
        db: str, expected: bool) -> None:
    """Its guess decides only which form the readers make (an empty --db is refused when
    the store opens, not here)."""
    assert transfer._to_postgresql(db) is expected

"""Where the fourth mutation sample found the paired ratios thin: a single pair's interval,
a files cycle cut short, and the tidy CSV's interval columns read by their names (the
speedup's ends, each the inverse of the time ratio's other end). Expected
values are worked out here, never taken from the code under test."""

from __future__ import annotations

import csv
import io
import math

import pytest

from pqbench.analysis.ratios import ROW_COLUMNS, Ratio, Side, as_row, file_ratios, paired
from pqbench.data.record.results import Measurement, RowKey, Run
from pqbench.data.record.rounds import LoopResult
from pqbench.views.ratios import csv_text


def test_a_single_pair_backs_no_interval() -> None:
    """One pair: the estimate is its ratio, the interval 0 to infinity at level 0 (a
    zero-width interval at the pair would claim a certainty one pair cannot give)."""
    assert paired([2.0], [1.0]) == (2.0, 0.0, math.inf, 0.0)
    # Two pairs back a finite interval around the Hodges-Lehmann estimate: the median of
    # the log ratios' Walsh averages (ln 2, (ln 2 + ln 2.2) / 2, ln 2.2), sqrt(2 x 2.2).
    estimate, low, high, level = paired([2.0, 2.2], [1.0, 1.0]) or (0, 0, 0, 0)
    assert estimate == pytest.approx(math.sqrt(4.4))
    assert 0 < low <= estimate <= high < math.inf and level > 0


def _file_row(operation: str, algorithm: str, passes: int) -> Measurement:
    """A `files hash` row: `passes` passes over a 1 MB file, each 1 ms."""
    return Measurement(algorithm, "os" if operation == "read" else "hashlib", operation,
                       tuple(LoopResult(1_000_000, 1_000_000, None) for _ in range(passes)),
                       block_size=1, unit="byte",
                       attributes={"path": "/data/f.bin", "size": 1_000_000})


def _files_run(*rows: Measurement) -> Run:
    return Run(run_id="files-1", started_at="2026-11-28T00:00:00+00:00",
               finished_at="2026-11-28T00:00:01+00:00", status="interrupted",
               command="pqbench files hash", label=None, settings={}, environment={},
               measurements=rows, kind="files")


def test_a_cycle_cut_short_pairs_only_the_cycles_both_rows_finished() -> None:
    """The read row finished 2 passes, the hash row 1 (Ctrl-C between them): one finished
    cycle, which backs no ratio; two finished cycles back one."""
    cut = _files_run(_file_row("read", "read", 2), _file_row("hash", "SHA-256", 1))
    assert file_ratios(cut) == []
    whole = _files_run(_file_row("read", "read", 2), _file_row("hash", "SHA-256", 2))
    (ratio,) = file_ratios(whole)
    assert (ratio.kind, ratio.pairs) == ("reading", 2)


def test_the_tidy_csv_puts_each_end_of_the_interval_in_its_own_column() -> None:
    side = Side("ML-KEM-768 [liboqs]", ((RowKey("ML-KEM-768", "liboqs", "encaps", None), 1),))
    other = Side("X25519 [libcrypto]", ((RowKey("X25519", "libcrypto", "derive", None), 1),))
    ratio = Ratio("exchange", side, other, "exchange", 1.0, 0.9, 1.1, 0.99, 10, "cpu")
    (row,) = csv.DictReader(io.StringIO(csv_text([as_row(ratio, "run-1")])))
    assert list(row) == list(ROW_COLUMNS)
    # The speedup is the inverse of the time ratio, so its low end is the inverse of the
    # time ratio's high end: 1/1.1 <= 1/1.0 <= 1/0.9, by column name.
    low, speedup, high = (float(row[name]) for name in ("speedup_ci_low", "speedup",
                                                        "speedup_ci_high"))
    assert low <= speedup <= high
    assert (low, speedup, high) == pytest.approx((1 / 1.1, 1.0, 1 / 0.9))

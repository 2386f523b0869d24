"""The report's TLS section: rates of the post-quantum handshake beside the classical one,
never a ratio of two rows whose rounds were taken one after the other (no pairing backs it)."""

from __future__ import annotations

import re

from pqbench.data.record.results import Measurement
from pqbench.data.record.rounds import LoopResult
from pqbench.views.report import tls


def _row(cell: str, per_second: float) -> Measurement:
    rounds = tuple(LoopResult(ops=int(per_second), elapsed_ns=1_000_000_000 + i * 1_000_000)
                   for i in range(5))
    return Measurement(cell, "libssl", "full", rounds, attributes={
        "transport": "memory", "group": cell.split(" + ")[0], "certificate": "x",
        "server_bytes": 4000 if "MLKEM" in cell else 1200, "client_bytes": 300,
        "round_trips": 1, "server_segments": 1})


def test_the_summary_gives_both_rates_and_claims_no_ratio() -> None:
    rows = [_row(tls.BASELINE, 2000.0), _row(tls.HEADLINE[0], 1500.0)]
    (line,) = tls.summary(rows)
    assert line.startswith("- A full TLS 1.3 handshake with X25519MLKEM768 + ML-DSA-65 ran "
                           "at 1.50 k handshakes/s, with X25519 + ECDSA-P-256 at 2.00 k "
                           "(libssl in one process; the rows were timed one after the other, "
                           "not paired, so no ratio is claimed)")
    assert not re.search(r"\d(\.\d+)?x (slower|faster)", line), line
    assert "4,000 bytes instead of 1,200" in line


def test_the_table_has_no_ratio_column() -> None:
    rows = [_row(tls.BASELINE, 2000.0), _row(tls.HEADLINE[0], 1500.0)]
    table = tls._table(rows)
    assert "against" not in table.splitlines()[0]
    assert not re.search(r"\d(\.\d+)?x (slower|faster)", table), table

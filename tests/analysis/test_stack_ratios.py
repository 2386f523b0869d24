"""A foreign implementation's rows in a run's ratios and in the report's implementation
gap: its own post-quantum/classical ratio, and its gap to liboqs (libcrypto for a classical
scheme), paired by cycle. Rates are synthetic with known factors, so the expected ratios
come from the factors, not from the code."""

from __future__ import annotations

from dataclasses import replace

from markdown_it import MarkdownIt

from pqbench.analysis import ratios
from pqbench.data.record.results import Run
from pqbench.views.report import publickey
from tests.helpers.runs import make_run

#: liboqs's ML-KEM-768 and libcrypto's X25519 at these rates; go at a quarter (ML-KEM) and
#: at half (X25519) of them.
RATES = {("ML-KEM-768", "keygen"): 90_000.0, ("ML-KEM-768", "encaps"): 88_000.0,
         ("ML-KEM-768", "decaps"): 74_000.0, ("X25519", "keygen"): 40_000.0,
         ("X25519", "derive"): 42_000.0}
SLOWER = {"ML-KEM-768": 4.0, "X25519": 2.0}


def _run() -> Run:
    rows = []
    for (alg, op), rate in RATES.items():
        native = "liboqs" if alg.startswith("ML-KEM") else "libcrypto"
        rows += [(alg, native, op, None, rate), (alg, "go", op, None, rate / SLOWER[alg])]
    run = make_run("stacks", seed=3, rounds=12, noise=0.01, rows=tuple(rows))
    return replace(run, settings={**run.settings, "interleaved": True})


def _exchange_cost(alg: str, slower: float) -> float:
    """Seconds per exchange from the synthetic rates (KEM: keygen + encaps + decaps;
    ECDH: two keygens and two derives)."""
    recipe = ({"keygen": 1, "encaps": 1, "decaps": 1} if alg.startswith("ML-KEM")
              else {"keygen": 2, "derive": 2})
    return sum(count * slower / RATES[(alg, op)] for op, count in recipe.items())


def test_a_stack_gets_its_own_ratio_and_its_gap_to_the_reference() -> None:
    found = ratios.by_name(ratios.run_ratios(_run()))
    gap = found["ML-KEM-768 [go] against ML-KEM-768 [liboqs], per exchange"]
    assert gap.kind == "implementation" and gap.pairs == 12
    assert gap.ci_low <= 4.0 <= gap.ci_high and abs(gap.estimate / 4.0 - 1) < 0.02
    classical = found["X25519 [go] against X25519 [libcrypto], per exchange"]
    assert abs(classical.estimate / 2.0 - 1) < 0.02
    own = found["ML-KEM-768 [go] against X25519 [go], per exchange"]
    expected = _exchange_cost("ML-KEM-768", 4.0) / _exchange_cost("X25519", 2.0)
    assert own.ci_low <= expected <= own.ci_high


def test_the_headline_shows_native_then_each_stack_then_its_gap() -> None:
    names = [r.name for r in ratios.headline(ratios.run_ratios(_run()))]
    assert names[:3] == ["ML-KEM-768 [liboqs] against X25519 [libcrypto], per exchange",
                         "ML-KEM-768 [go] against X25519 [go], per exchange",
                         "ML-KEM-768 [go] against ML-KEM-768 [liboqs], per exchange"]


def test_the_report_gap_table_pairs_each_stack_row_with_its_reference() -> None:
    run = _run()
    section = publickey.gap(run.measurements, run.environment, ratios.cycles_of(run))
    assert section is not None
    tokens = MarkdownIt().enable("table").parse(section.markdown)
    cells = [t.content for t in tokens if t.type == "inline"]
    assert "go time / reference" in cells
    header = cells.index("go time / reference")
    width = header + 1 - cells.index("algorithm")
    rows = [cells[i:i + width] for i in range(header + 1, len(cells) - width + 1, width)]
    by_row = {(r[0], r[1]): r[-1] for r in rows}

    def estimate(cell: str) -> float:
        return float(cell.split("x", 1)[0])

    assert abs(estimate(by_row[("ML-KEM-768", "encaps")]) / 4.0 - 1) < 0.03
    assert by_row[("ML-KEM-768", "encaps")].endswith("(liboqs)")
    assert abs(estimate(by_row[("X25519", "derive")]) / 2.0 - 1) < 0.03
    assert by_row[("X25519", "derive")].endswith("(libcrypto)")


def test_the_report_lead_has_a_line_for_each_stack_in_speeds_words() -> None:
    """The report's lead: ML-KEM-768 against X25519 through liboqs and libcrypto, then
    through go (its own against its own), each with both times and the paired answer in
    the words `speed` uses, as `speed`'s headline has them."""
    from pqbench.analysis.figures import run_figures

    run = _run()
    lead = publickey.summary(run, run_figures(run))
    exchanges = [line for line in lead if line.startswith("- A key exchange with")]
    assert [line.split(" takes ")[0] for line in exchanges] == [
        "- A key exchange with ML-KEM-768 (liboqs)", "- A key exchange with ML-KEM-768 (go)"]
    go = exchanges[1]
    assert "X25519 (go)" in go and " per exchange (paired over 12 cycles" in go, go
    expected = _exchange_cost("ML-KEM-768", 4.0) / _exchange_cost("X25519", 2.0)
    words = "faster" if expected < 1 else "slower"
    assert f"x {words} [" in go, go

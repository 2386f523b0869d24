"""`pqbench report` on real stored runs: the Markdown parses, tables are well formed, every
linked chart exists and opens, and the text carries the figures the data holds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it.token import Token
from matplotlib import image as mpimg
from typer.testing import CliRunner

from pqbench.cli import app
from pqbench.data.store import Store
from pqbench.views import markdown as md
from pqbench.views import report
from tests.helpers import markdown, starts_processes

QUICK = ["--seconds", "0.05", "--rounds", "5"]
VERDICTS = {"faster", "slower", "no change", "inconclusive", "too few runs"}


def _speed(db: Path, *args: str) -> str:
    """A real `pqbench speed` in a subprocess, as a user runs it (--mask re-executes it)."""
    done = subprocess.run([sys.executable, "-m", "pqbench", "speed", *args, *QUICK, "--json",
                           "--db", str(db)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["run_id"])


@pytest.fixture(scope="module")
@starts_processes
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Three real runs: unmasked, masked (AES-NI and SHA-NI hidden from OpenSSL), unmasked."""
    db = tmp_path_factory.mktemp("report") / "results.db"
    algorithms = ["ML-KEM-512", "ML-DSA-44", "X25519", "Ed25519", "AES-128-GCM", "SHA-256"]
    ids = [_speed(db, *algorithms, "--bytes", "1024", "--label", "unmasked")]
    ids.append(_speed(db, *algorithms, "--bytes", "1024", "--label", "masked",
                      "--mask", "aesni,shani"))
    ids.append(_speed(db, "ML-KEM-512", "X25519", "--label", "unmasked again"))
    return db, ids


def _cpu_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text()
    return {flag for line in text.splitlines() if line.startswith("flags")
            for flag in line.split(":", 1)[1].split()}


def _report(db: Path, out: Path, *args: str) -> tuple[Path, list[Token]]:
    result = CliRunner().invoke(app, ["report", *args, "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    path = out / "report.md"
    return path, markdown.parse(path.read_text("utf-8"))


def _images(tokens: list[Token]) -> list[str]:
    return [str(child.attrs["src"]) for t in tokens if t.type == "inline"
            for child in t.children or [] if child.type == "image"]


def _check_structure(path: Path, tokens: list[Token]) -> list[list[list[str]]]:
    tables = markdown.tables(tokens)
    assert tables
    for rows in tables:
        assert len(rows) >= 2  # a header and at least one body row
        assert {len(r) for r in rows} == {len(rows[0])}
    images = _images(tokens)
    assert images
    for src in images:
        assert not Path(src).is_absolute() and "://" not in src
        chart = path.parent / src
        pixels = mpimg.imread(chart)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100
        assert chart.stat().st_size < 150_000
    return tables


def _verdict(change: str) -> str:
    """The verdict a change cell states: "slower" for "1.80x slower [1.7–1.9]", the words
    before the colon for "inconclusive: 1.02x faster [...]", "no change" for "no change
    (within ±5 %) [...]"."""
    if change.startswith("no change"):
        return "no change"
    if ":" in change:
        return change.split(":", 1)[0]
    return change.split(" ")[1]


def _table_with(tables: list[list[list[str]]], *header: str) -> list[list[str]]:
    for rows in tables:
        if all(h in rows[0] for h in header):
            return rows
    raise AssertionError(f"no table with columns {header}")


@pytest.mark.process
def test_single_run_report_parses_and_shows_the_headline(stored, tmp_path: Path) -> None:
    db, ids = stored
    path, tokens = _report(db, tmp_path / "single", ids[0])
    tables = _check_structure(path, tokens)
    headings = markdown.headings(tokens)
    for wanted in ("Post-quantum against classical", "Key exchange", "Signatures",
                   "Implementation gap", "Symmetric ciphers and hashes", "Environment",
                   "How this was measured", "All measurements"):
        assert wanted in headings
    assert "Comparison" not in headings
    # Bytes on the wire from FIPS 203/204 and RFC 7748/8032: the report computes them.
    exchange = _table_with(tables, "algorithm", "implementation", "bytes on the wire")
    wire = {row[0]: row[exchange[0].index("bytes on the wire")] for row in exchange[1:]}
    assert wire["ML-KEM-512"] == "1,568 B" and wire["X25519"] == "64 B"
    signatures = _table_with(tables, "algorithm", "implementation", "signature + public key")
    sig = {row[0]: row[signatures[0].index("signature + public key")]
           for row in signatures[1:]}
    assert sig["ML-DSA-44"] == f"{2420 + 1312:,} B" and sig["Ed25519"] == "96 B"
    bulk = _table_with(tables, "quantum security bits", "1 KiB")
    assert {row[0] for row in bulk[1:]} == {"AES-128-GCM", "SHA-256"}
    # The table the terminal prints too: MB/s by block size, one line per operation.
    run = Store.open(str(db), create=False).load_run(ids[0])
    stored = {(m.algorithm, m.implementation, m.operation): m.bytes_per_sec
              for m in run.measurements if m.block_size == 1024}
    size = bulk[0].index("1 KiB")
    for row in bulk[1:]:
        assert float(row[size].replace(",", "")) == pytest.approx(
            stored[(row[0], row[1], row[2])] / 1e6, rel=0.006)
    bullets = [tokens[i + 2].content for i, t in enumerate(tokens) if t.type == "list_item_open"]
    assert any(b.startswith("A key exchange with ML-KEM-512") and "1,568 B on the wire" in b
               for b in bullets)
    fences = [t.content for t in tokens if t.type == "fence"]
    assert any(f.startswith("pqbench speed ML-KEM-512") for f in fences)


@pytest.mark.slow
def test_report_is_deterministic(stored, tmp_path: Path) -> None:
    db, ids = stored
    first, _ = _report(db, tmp_path / "a", ids[0], ids[1])
    second, _ = _report(db, tmp_path / "b", ids[0], ids[1])
    assert first.read_bytes() == second.read_bytes()
    for chart in first.parent.glob("*.png"):
        assert chart.read_bytes() == (second.parent / chart.name).read_bytes()


@pytest.mark.process
def test_masked_unmasked_pair_has_verdicts_causes_and_a_ratio_chart(stored,
                                                                   tmp_path: Path) -> None:
    db, ids = stored
    path, tokens = _report(db, tmp_path / "pair", ids[0], ids[1])
    tables = _check_structure(path, tokens)
    assert "Comparison" in markdown.headings(tokens)
    assert "unmasked → masked" in markdown.headings(tokens)
    rows = _table_with(tables, "before → after")
    # The change says the verdict ("1.80x slower [...]", "inconclusive: ...", "no change
    # (within ±5 %) [...]"): no column repeats it.
    assert "verdict" not in rows[0]
    change = rows[0].index(next(t for t in rows[0] if t.startswith("change")))
    # One run a side: each row judged against the machine's run-to-run spread, with its
    # interval; the AES rows only move where the CPU has AES-NI for the mask to hide.
    # (cryptography's bundled OpenSSL takes a VAES path for AES-GCM, which the mask leaves.)
    implementation = rows[0].index(next(t for t in rows[0] if t.startswith("impl")))
    found = {(r[0], r[implementation]): _verdict(r[change].strip("*")) for r in rows[1:]}
    assert "too few runs" not in found.values()
    assert any("CI" in title for title in rows[0])  # the change with its interval
    aes = {v for (name, impl), v in found.items()
           if name.startswith("AES") and impl == "libcrypto"}
    assert aes == ({"slower"} if "aes" in _cpu_flags() else aes - {"faster", "slower"})
    assert "run-to-run spread" in path.read_text("utf-8")
    differences = _table_with(tables, "fingerprint field", "unmasked", "masked")
    assert any("OPENSSL_ia32cap" in row[0] for row in differences[1:])
    assert "compare-1.png" in _images(tokens)


@pytest.mark.slow
def test_by_label_adds_history(stored, tmp_path: Path) -> None:
    db, _ = stored
    path, tokens = _report(db, tmp_path / "history", "--by", "label")
    _check_structure(path, tokens)
    headings = markdown.headings(tokens)
    assert "History by label" in headings
    assert any(src.startswith("history-") for src in _images(tokens))


def test_default_output_goes_under_reports(stored, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    db, ids = stored
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["report", ids[0], "--db", str(db)])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "reports" / ids[0] / "report.md").is_file()


def test_build_is_pure_and_chart_names_are_unique(stored) -> None:
    db, ids = stored
    store = Store.open(str(db), create=False)
    runs = [store.load_run(i) for i in ids]
    built = report.build(runs, report.comparison_sections(runs, None))
    assert built == report.build(runs, report.comparison_sections(runs, None))
    names = [c.filename for c in built.charts]
    assert len(names) == len(set(names))


def test_cells_with_pipes_keep_the_column_count() -> None:
    text = md.table(["library", "version"], [["openssl", "3.0 | patched"], ["a\nb", "-"]])
    rows = markdown.tables(markdown.parse(text))[0]
    assert [len(r) for r in rows] == [2, 2, 2]
    assert rows[1][1] == "3.0 | patched"


@pytest.mark.parametrize(("value", "text"), [
    (123456.0, "123,000"), (0.012345, "0.0123"), (1.0, "1.00"), (None, md.MISSING),
    (float("nan"), md.MISSING), (0.99996, "1.00"), (99.96, "100")])
def test_numbers_have_three_significant_digits(value: float | None, text: str) -> None:
    assert md.number(value) == text


def test_si_prefixes() -> None:
    assert md.si(1_234_000.0, "B/s") == "1.23 MB/s"
    assert md.si(999.96) == "1.00 k"
    assert md.duration_us(1520.0) == "1.52 ms"


@pytest.mark.process
def test_files_run_has_its_table_and_throughput_chart(tmp_path: Path) -> None:
    db = tmp_path / "files.db"
    paths = []
    for name, size in (("small.bin", 256 * 1024), ("large.bin", 2 * 1024 * 1024)):
        path = tmp_path / name
        path.write_bytes(bytes(range(256)) * (size // 256))
        paths.append(str(path))
    done = subprocess.run([sys.executable, "-m", "pqbench", "files", "hash", *paths,
                           "--cache", "warm", "--db", str(db)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    path, tokens = _report(db, tmp_path / "files-report")
    tables = _check_structure(path, tokens)
    assert "File benchmarks" in markdown.headings(tokens)
    rows = _table_with(tables, "file", "size", "MB/s")
    assert {r[0] for r in rows[1:]} == {"small.bin", "large.bin"}
    assert "files-throughput.png" in _images(tokens)


def _fold_after(tokens: list[Token], heading: str) -> list[str]:
    """The token types from the heading to the next one, for checking what is folded."""
    start = next(i for i, t in enumerate(tokens)
                 if t.type == "heading_open" and markdown.plain(tokens[i + 1]) == heading)
    end = next((i for i in range(start + 3, len(tokens)) if tokens[i].type == "heading_open"),
               len(tokens))
    return [t.content if t.type == "html_block" else t.type for t in tokens[start + 3:end]]


@pytest.mark.slow
def test_environment_and_all_measurements_are_folded(stored, tmp_path: Path) -> None:
    db, ids = stored
    path, tokens = _report(db, tmp_path / "folded", ids[0])
    for heading, summary in (("Environment", "OS, CPU, flags and library versions of the run"),
                             ("All measurements", None)):
        kinds = _fold_after(tokens, heading)
        opening = next(k for k in kinds if k.startswith('<details markdown="1">'))
        closing = kinds.index("</details>\n")
        assert kinds.index(opening) < kinds.index("table_open") < closing, kinds
        assert summary is None or f"<summary>{summary}</summary>" in opening
    rows = len(Store.open(str(db), create=False).load_run(ids[0]).measurements)
    assert f"<summary>{rows} rows</summary>" in path.read_text("utf-8")


def test_a_fold_summary_is_html_text() -> None:
    folded = md.details("<b>1 & 2</b>", "| a |\n| --- |\n| 1 |")
    tokens = markdown.parse(folded)
    assert tokens[0].content == ('<details markdown="1">\n'
                                 "<summary>&lt;b&gt;1 &amp; 2&lt;/b&gt;</summary>\n")
    assert [t.type for t in tokens[1:3]] == ["table_open", "thead_open"]


def _stepped_history() -> list:
    """Nine SHA-256 block sizes over three labels, three runs each, twice as fast in the
    third: more series than a chart's colours tell apart."""
    from tests.helpers.runs import make_runs

    rows = tuple(("SHA-256", "python", "hash", 2 ** k, 2e6 / k) for k in range(4, 13))
    runs = []
    for day, (label, factor) in enumerate((("b1", 1.0), ("b2", 1.0), ("b3", 2.0)), 1):
        runs += make_runs(f"{label}-", 3, seed=day, label=label, start_day=day,
                          factor=factor, rows=rows, drift=0.1)
    return runs


def test_history_charts_draw_intervals_and_say_what_they_leave_out(tmp_path: Path) -> None:
    from pqbench.app.history import history_of_runs
    from pqbench.views.report import charts, comparison

    runs = _stepped_history()
    section = comparison.history_section(runs, "label", {})
    assert section is not None
    (chart,) = section.charts
    assert isinstance(chart, charts.History) and len(chart.series) == 7
    # Each drawn series carries its points' intervals, in bytes/s as its line.
    series = {f"hash {md.size(s.block_size)} [python]": s
              for s in (one.series for one in history_of_runs(runs, "SHA-256", by="label"))}
    hidden = [name for name in series if name not in dict(chart.series)]
    assert len(hidden) == 2
    assert chart.footnote == ("2 of 9 series not drawn (more than the colours tell apart): "
                              + ", ".join(hidden))
    assert ("SHA-256: 7 of 9 series drawn (the largest steps first); not drawn: "
            + md.text(", ".join(hidden))) in section.markdown
    for (name, values), bands in zip(chart.series, chart.intervals, strict=True):
        points = series[name].points
        assert values == tuple(p.median for p in points)
        assert bands == tuple((p.ci_low, p.ci_high) for p in points)
        assert all(low < value < high for value, (low, high) in  # type: ignore[misc]
                   zip(values, bands, strict=True))
    assert chart.unit == "B/s"


def _tinted_pixels(path: Path, colour: str, alpha: float) -> int:
    """Pixels within a few levels of `colour` at `alpha` over white (a shaded band)."""
    import numpy as np

    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    tint = 255 - alpha * (255 - rgb)
    pixels = mpimg.imread(path)[..., :3] * 255
    return int((np.abs(pixels - tint).max(axis=-1) <= 4).sum())


def test_history_bands_are_drawn_and_ticks_carry_si_units(tmp_path: Path) -> None:
    from dataclasses import replace

    from pqbench.views.report import charts, comparison

    section = comparison.history_section(_stepped_history(), "label", {})
    assert section is not None
    (chart,) = section.charts
    assert isinstance(chart, charts.History)
    with_bands = charts.render(chart, tmp_path)
    bare = tmp_path / "bare"
    bare.mkdir()
    without = charts.render(replace(chart, intervals=()), bare)
    first = charts.LINE_COLOURS[0]
    assert _tinted_pixels(with_bands, first, 0.18) > 200
    assert _tinted_pixels(without, first, 0.18) == 0
    # Tick labels by EngFormatter: decimal prefixes with the unit, as the tables print.
    figure = charts._history(chart)
    figure.canvas.draw()  # type: ignore[attr-defined]
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels() if t.get_text()]
    assert labels and all(label.endswith(("kB/s", "MB/s", "GB/s")) for label in labels), labels


def test_one_block_size_is_charted_as_bars_by_implementation(stored) -> None:
    """At a single block size a line chart has only dots that nothing tells apart; the
    chart is then bars: one group per algorithm, one bar per implementation."""
    db, ids = stored
    run = Store.open(str(db), create=False).load_run(ids[0])  # measured at --bytes 1024
    built = report.build([run])
    charts = {c.filename: c for c in built.charts}
    cipher, hashes = charts["cipher-throughput-1.png"], charts["hash-throughput-1.png"]
    assert isinstance(cipher, report.charts.GroupedBars)
    assert cipher.title.startswith("Cipher encryption throughput at 1 KiB")
    expected = {m.implementation: m.bytes_per_sec for m in run.measurements
                if m.algorithm == "AES-128-GCM" and m.operation == "encrypt"}
    assert cipher.labels == ("AES-128-GCM",)
    assert {name: values[0] for name, values in cipher.series} == pytest.approx(expected)
    assert [name for name, _ in cipher.series] == ["libcrypto", "cryptography"]
    assert cipher.unit == "B/s"  # bytes/s, ticks and labels by SI prefix ("4.52GB/s")
    assert isinstance(hashes, report.charts.GroupedBars) and hashes.labels == ("SHA-256",)


@pytest.mark.process
def test_report_by_label_works_on_a_store_that_also_holds_a_bisection(tmp_path: Path) -> None:
    """Two labelled speed runs of one row, and a bisection's sessions of another row in the
    same store: `report --by label` compares the groups that share rows (the two speed
    runs; the bisection's builds with each other) and names those it cannot, where it used
    to stop with "the runs have no row in common"."""
    from tests.helpers import run_cli

    db = tmp_path / "mixed.db"
    for label in ("one", "two"):
        done = run_cli("speed", "aes-128-gcm", "-i", "libcrypto", "--bytes", "1024",
                       "--seconds", "0.05", "--rounds", "3", "--label", label, "--db", str(db))
        assert done.returncode == 0, done.stderr
    done = run_cli("bisect", "x25519", "-i", "cryptography", "-o", "derive", "--series",
                   "here", "--series", "env:PQBENCH_STORY=b", "--max-seconds", "2", "--db",
                   str(db))
    assert done.returncode == 0, done.stderr
    _, tokens = _report(db, tmp_path / "r", "--by", "label")
    headings = markdown.headings(tokens)
    assert "one → two" in headings, headings
    assert "Where it changed" in headings
    compared = [h for h in headings if "→" in h]
    # No comparison across the two series: each side of each heading is of one series.
    bisection = {"here", "env:PQBENCH_STORY=b"}
    for heading in compared:
        before, after = heading.split(" → ")
        assert (before in bisection) == (after in bisection), heading


def _bullets(tokens: list[Token]) -> list[str]:
    """Every list item's text, as a reader sees it."""
    found, inside = [], False
    for token in tokens:
        if token.type == "list_item_open":
            inside = True
        elif token.type == "inline" and inside:
            found.append(markdown.plain(token))
            inside = False
    return found


@pytest.mark.process
def test_the_lead_the_tables_and_speed_give_one_answer(tmp_path: Path) -> None:
    """ML-KEM-768 against X25519: the report's lead, its "Fastest measured" table, its
    "through liboqs" table and `pqbench ratios` (what `speed` printed) name the same µs,
    the same pairing (liboqs against libcrypto) and the same words for the ratio, with
    its interval, where the lead and the fastest table used to differ (a sum of medians
    against a median of sums; "0.294x the time" against "0.323x (vs cryptography)")."""
    import re

    from tests.helpers import run_cli

    db = tmp_path / "one.db"
    done = run_cli("speed", "ml-kem-768", "x25519", "-i", "liboqs", "-i", "libcrypto", "-i",
                   "cryptography", "--seconds", "0.1", "--rounds", "8", "--db", str(db))
    assert done.returncode == 0, done.stderr
    _, tokens = _report(db, tmp_path / "r")
    lead = next(b for b in _bullets(tokens) if b.startswith("A key exchange with ML-KEM-768"))
    told = re.search(r"ML-KEM-768 \(liboqs\) takes ([\d.]+) µs \[([\d.]+)–([\d.]+)\], X25519 "
                     r"\(libcrypto\) ([\d.]+) µs \[[\d.]+–[\d.]+\]: ([\d.]+x (?:faster|slower) "
                     r"\[[\d.]+–[\d.]+\]) per exchange", lead)
    assert told is not None, lead
    us, answer = told.group(1), told.group(5)
    tables = markdown.tables(tokens)
    fastest = next(t for t in tables if "implementation" in t[0] and "exchanges/s" in t[0])
    row = next(r for r in fastest[1:] if r[0] == "ML-KEM-768")
    header = fastest[0]
    cost = row[next(i for i, h in enumerate(header) if h.startswith("µs per exchange"))]
    against = row[next(i for i, h in enumerate(header) if h.startswith("against X25519"))]
    assert cost.startswith(f"{us} [") and row[1] == "liboqs"
    assert against == f"{answer} (vs libcrypto)", (against, answer)
    printed = run_cli("ratios", "--db", str(db), env={"COLUMNS": "200"})
    line = next(x for x in printed.stdout.splitlines()
                if x.startswith("ML-KEM-768 [liboqs]") and "X25519 [libcrypto]" in x)
    assert line.rstrip().endswith(answer), (line, answer)


@pytest.mark.process
def test_a_session_report_shows_both_sides_on_charts_from_zero(tmp_path: Path) -> None:
    """After `ab` (AES-NI hidden on side A): the lead gives each side its figures, the
    exchange and cipher tables a line per side, the charts a bar per side on an axis that
    starts at zero; no "– (vs libcrypto)" where a side's rows are not paired."""
    from pqbench.views.report import build
    from pqbench.views.report.charts import GroupedBars, _grouped_bars
    from tests.helpers import run_cli

    db = tmp_path / "ab.db"
    done = run_cli("ab", "ml-kem-768", "x25519", "aes-128-gcm", "-i", "liboqs", "-i",
                   "libcrypto", "--bytes", "16384",
                   "--a", "mask:aesni", "--b", "here", "--label-a", "hidden",
                   "--label-b", "plain", "--max-seconds", "8", "--round", "0.01",
                   "--worker-pairs", "3", "--db", str(db))
    assert done.returncode == 0, done.stderr
    path, tokens = _report(db, tmp_path / "r")
    text = path.read_text("utf-8")
    assert "– (vs" not in text
    bullets = _bullets(tokens)
    assert "A: hidden:" in bullets and "B: plain:" in bullets, bullets
    tables = markdown.tables(tokens)
    for title in ("exchanges/s", "16 KiB", "liboqs (ops/s)"):
        table = next(t for t in tables if any(h.startswith(title) for h in t[0]))
        assert table[0][0] == "side"
        assert {r[0] for r in table[1:]} == {"A: hidden", "B: plain"}, table
    # Every row of both runs, each side folded under its name; the comparison told once
    # (no history of two points repeating it).
    runs = Store.open(str(db), create=False).load_runs()
    every = [t for t in tables if t[0][:3] == ["algorithm", "implementation", "operation"]
             and "rounds" in t[0]]
    assert sorted(len(t) - 1 for t in every) == sorted(len(r.measurements) for r in runs)
    summaries = [t.content for t in tokens if t.type == "html_block" and "<summary>" in t.content]
    assert any("A: hidden:" in x for x in summaries) and any("B: plain:" in x
                                                            for x in summaries), summaries
    headings = [t.content for i, t in enumerate(tokens) if i and tokens[i - 1].type ==
                "heading_open"]
    assert not any(h.startswith("History") for h in headings), headings
    assert headings.count("All measurements") == 1, headings
    # A side has no paired ratios of its own: no "What it costs, paired" holding only a
    # note; an unsteady row is named with its side.
    assert "What it costs, paired" not in headings, headings
    unsteady = [b for b in _bullets(tokens) if "is over 10 %" in b or "trend" in b]
    assert all(b.startswith(("A: hidden: ", "B: plain: ")) for b in unsteady), unsteady
    charts = [c for c in build(runs).charts if isinstance(c, GroupedBars)]
    assert charts
    spans = 0
    for chart in charts:
        names = [name for name, _ in chart.series]
        assert any(n.endswith("A: hidden") for n in names) and \
            any(n.endswith("B: plain") for n in names), names
        # A bar's length is its value: a linear axis from zero, each bar with its interval.
        axis = _grouped_bars(chart).axes[0]
        assert axis.get_xscale() == "linear" and axis.get_xlim()[0] == 0, chart.title
        drawn = [(value, span) for (_, values), spans in zip(chart.series, chart.errors,
                                                             strict=True)
                 for value, span in zip(values, spans, strict=True) if value]
        assert drawn and all(span[0] <= value <= span[1] for value, span in drawn
                             if span is not None), chart.title
        spans += sum(span is not None for _, span in drawn)
    # A bar has its interval wherever its row has one (two rounds or more; under load a
    # row may get one): the exchange chart's rows and the cipher chart's encrypt rows.
    expected = [m for r in runs for m in r.measurements if len(m.samples) >= 2
                and (m.block_size is None or m.operation == "encrypt")]
    assert expected and spans == len(expected), (spans, len(expected))


def test_each_side_of_a_session_leads_with_an_implementation_both_sides_measured() -> None:
    """Debian 13's OpenSSL offers ML-KEM-768 where Debian 12's does not: side B's lead line
    told of libcrypto's ML-KEM-768 and side A's of liboqs's, two stories for one question.
    Each side's line now names the implementation both sides measured."""
    from dataclasses import replace

    from pqbench.data.record.results import Measurement
    from pqbench.data.record.rounds import LoopResult
    from tests.helpers.runs import make_ab_session

    def row(algorithm: str, implementation: str, operation: str, rate: float) -> Measurement:
        rounds = tuple(LoopResult(int(rate * k), round(1e9 * k), None)
                       for k in (0.050, 0.051, 0.049, 0.052, 0.048, 0.050))
        return Measurement(algorithm=algorithm, implementation=implementation,
                           operation=operation, rounds=rounds, block_size=None)

    both = [row("ML-KEM-768", "liboqs", op, 80_000.0) for op in ("keygen", "encaps", "decaps")]
    both += [row("X25519", "libcrypto", op, 40_000.0) for op in ("keygen", "derive")]
    newer = [row("ML-KEM-768", "libcrypto", op, 30_000.0)
             for op in ("keygen", "encaps", "decaps")]
    a, b = make_ab_session("os", seed=3)
    a = replace(a, label="Debian 12", measurements=tuple(both))
    b = replace(b, label="Debian 13", measurements=tuple(both + newer))
    tokens = markdown.parse(report.build([a, b]).markdown)
    leads = [line for line in _bullets(tokens) if line.startswith("A key exchange with")]
    assert len(leads) == 2, _bullets(tokens)
    assert all(line.startswith("A key exchange with ML-KEM-768 (liboqs) takes ")
               for line in leads), leads
    # Every interval the line shows has its level said (the baseline's too, where the
    # post-quantum time has none of its own).
    for line in leads:
        if "[" in line.partition(" on the wire")[0]:
            intervals = re.findall(r"µs \[[\d.]+–[\d.]+\]( \([\d.]+ % CI\))?", line)
            assert intervals, line
            assert all(intervals) or (re.search(r"times: [\d.]+ % CI", line)
                                      and not any(intervals)), line


def test_a_history_chart_marks_each_step_with_its_interval() -> None:
    """The chart's mark of a step says it as every ratio is said: faster or slower with
    its interval ("hash 16 KiB [python]: 2.00x faster [1.94–2.06]")."""
    from pqbench.analysis.history import HistoryStep, Point, Series
    from pqbench.views.report import comparison

    series = Series("SHA-256", "python", "hash", 16384, "bytes/s", (
        Point("b1", "2026-01-01T00:00:00+00:00", ("a",), 9, 1.6e9, 1.5e9, 1.7e9),
        Point("b2", "2026-01-02T00:00:00+00:00", ("b",), 9, 3.2e9, 3.1e9, 3.3e9)),
        (HistoryStep(1, "b2", 1.6e9, 3.2e9, 2.0, ci_low=1.94, ci_high=2.06),))
    chart = comparison._history_chart("SHA-256", [series], ["b1", "b2"], "label", "h.png")
    assert [text for _, _, text in chart.steps] == [
        "hash 16 KiB [python]: 2.00x faster [1.94–2.06]"]

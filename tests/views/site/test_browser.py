"""The published site rendered in a real headless Chromium (tests.helpers.browser), the DOM
read after the scripts ran: charts for every machine, the regressions page with a planted
masked jump and no A/A row, hostile labels inert, no request beyond the site's folder,
and the filters reached and worked with the keyboard. A dialog (a hostile label's
`alert(1)` run) fails a test at once; every browser call has a deadline.

The screenshot on docs/publish.md is taken here, of this fleet, and refreshed in the
checkout when the rendering changes (see docs/publish.md, "The screenshot").
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pqbench.app.publish import site_of
from pqbench.data.store import Store
from pqbench.views import site as publish_site
from tests.helpers import REPO, starts_processes
from tests.helpers.browser import Browser
from tests.helpers.fleet import Fleet

pytestmark = pytest.mark.process

HOSTILE = "</script><img src=x onerror=alert(1)>"
#: m00: ML-KEM 20 % slower from build 3. m01: AES-NI masked from build 5 (a masked jump),
#: its host named with a label that would run a script if it were not escaped. m02: six
#: builds of one speed (A/A), an annotation that tries the same; newest run under load.
FLEET = Fleet(machines=3, builds=6, runs=3, jumps={(0, 3): {"ML-KEM-768": 0.8}},
              masked=frozenset({(1, 5)}), loaded=frozenset({(2, 5)}),
              hosts={1: f"edge-{HOSTILE}"})
SCREENSHOT = REPO / "docs" / "images" / "publish-row.png"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = Store.open(str(tmp_path_factory.mktemp("fleet") / "fleet.db"))
    store.save_runs(list(FLEET.all_runs()))
    store.annotate("debian-12/6.1.0-002", f"kernel 6.1.0-002 {HOSTILE}")
    folder = tmp_path_factory.mktemp("published") / "site"
    publish_site.write(site_of(store), folder)
    return folder


@pytest.fixture(scope="module")
@starts_processes
def browser() -> Iterator[Browser]:
    with Browser(timeout=60) as found:
        yield found


def _rows(browser: Browser, selector: str = "main table tbody tr") -> list[str]:
    return list(browser.evaluate(
        f"[...document.querySelectorAll({json.dumps(selector)})]"
        ".filter((r) => !r.hidden).map((r) => r.textContent)"))


def test_every_row_page_draws_a_chart_for_every_machine(browser: Browser, out: Path) -> None:
    pages = sorted(out.glob("row-*.html"))
    assert len(pages) == 10
    for page in pages:
        browser.open(page)
        drawn = browser.evaluate("""[...document.querySelectorAll("section[data-machine]")]
            .map((s) => [s.querySelector("h2").textContent,
                         s.querySelectorAll(".chart .main-svg .scatterlayer .trace").length,
                         s.querySelectorAll(".chart .xtick text").length])""")
        assert [name.split(" (")[0] for name, _, _ in drawn] == ["m02", f"edge-{HOSTILE}",
                                                                 "m00"], page.name
        for _, traces, ticks in drawn:
            assert traces >= 2 and ticks == 6  # the shaded interval, the line; every build
        assert browser.evaluate("document.body.dataset.ready") == "yes"
    assert not browser.errors and not browser.dialogs


def test_hover_names_the_runs_build_value_and_interval(browser: Browser, out: Path) -> None:
    browser.open(next(out.glob("row-ml-kem-768-liboqs-encaps-*.html")))
    text = browser.evaluate("""(() => {
        const chart = document.querySelector("section[data-machine] .chart");
        Plotly.Fx.hover(chart, [{curveNumber: 1, pointNumber: 2}], "xy");
        return chart.querySelector(".hoverlayer").textContent;
    })()""")
    assert "build: debian-12/6.1.0-002" in text and "95 % interval:" in text
    assert "r02-002-00" in text and "ops/s" in text
    assert f"note: kernel 6.1.0-002 {HOSTILE}" in text


def test_the_regressions_page_lists_the_masked_jump_and_no_a_a_row(browser: Browser,
                                                                    out: Path) -> None:
    browser.open(out / "regressions.html")
    rows = _rows(browser, "main table:first-of-type tbody tr")
    masked = [r for r in rows if "AES-256-GCM" in r]
    assert len(masked) == 1
    assert f"edge-{HOSTILE}" in masked[0] and "slower" in masked[0]
    assert "knobs.OPENSSL_ia32cap" in masked[0] and "debian-12/6.1.0-005" in masked[0]
    assert len([r for r in rows if "ML-KEM-768" in r and r.startswith("2026")]) == 3
    assert not [r for r in rows if "m02 (" in r]  # the A/A machine: no step, no row
    assert len(rows) == 4
    assert rows[0] == masked[0]  # newest first
    # Then every machine's steps gathered by build: one machine each, of the three.
    gathered = _rows(browser, "#by-build + p + table tbody tr")
    assert len(gathered) == 4 and all("slower1 of 3" in r for r in gathered)
    assert [r.startswith("debian-12/6.1.0-003ML-KEM-768") for r in gathered] == [
        True, True, True, False]  # the builds in the order they were first measured
    assert gathered[3].startswith("debian-12/6.1.0-005AES-256-GCM") and "2.00x slower" in \
        gathered[3] and gathered[3].endswith(f"edge-{HOSTILE} (Test CPU 1, 8 cores)")


def test_hostile_labels_stay_inert_text(browser: Browser, out: Path) -> None:
    shown = set()
    for page in sorted(out.glob("*.html")):
        browser.open(page)
        assert browser.evaluate("document.querySelectorAll('img').length") == 0, page.name
        if browser.evaluate(f"document.body.textContent.includes({json.dumps(HOSTILE)})"):
            shown.add(page.name)
    assert not browser.dialogs and not browser.errors
    # As text on every page that names the machine or the annotated build: the index, the
    # regressions, every row's page, and that machine's comparison (not the others').
    assert {"index.html", "regressions.html"} | {p.name for p in out.glob("row-*")} <= shown
    assert len([name for name in shown if name.startswith("compare-")]) == 1


def test_no_request_leaves_the_site_s_folder(browser: Browser, out: Path) -> None:
    browser.requests.clear()
    for page in sorted(out.glob("*.html")):
        browser.open(page)
    folder = out.resolve().as_uri() + "/"
    assert browser.requests and all(url.startswith(folder) for url in browser.requests), \
        [url for url in browser.requests if not url.startswith(folder)]
    assert {u.rsplit("/", 1)[1] for u in browser.requests} >= {"plotly.min.js", "site.js",
                                                             "site.css"}


def _tab_to(browser: Browser, element_id: str, most: int = 12) -> int:
    """Tab from the top of the page until `element_id` has the focus; how many presses."""
    browser.evaluate("document.activeElement && document.activeElement.blur()")
    for presses in range(1, most + 1):
        browser.press("Tab", 9)
        if browser.evaluate("document.activeElement.id") == element_id:
            return presses
    raise AssertionError(f"{most} presses of Tab never reached #{element_id}: "
                         f"{browser.evaluate('document.activeElement.outerHTML')[:200]}")


def test_the_keyboard_reaches_and_works_the_filters(browser: Browser, out: Path) -> None:
    browser.open(out / "index.html")
    # After the skip link, the navigation and the machines table's links.
    assert _tab_to(browser, "filter-algorithm", most=40) > 3
    every = len(_rows(browser, "tr[data-algorithm]"))
    browser.press("ArrowDown", 40)  # the first algorithm
    assert browser.evaluate("document.activeElement.value") == "AES-256-GCM"
    _tab_to(browser, "filters-show", most=8)
    browser.press("Enter", 13)
    assert _rows(browser, "tr[data-algorithm]") == [
        r for r in _rows(browser, "tr[data-algorithm]") if r.startswith("AES-256-GCM")]
    assert 0 < len(_rows(browser, "tr[data-algorithm]")) < every
    assert "1 row shown" in browser.evaluate(
        "document.getElementById('filter-status').textContent")
    browser.open(next(out.glob("row-aes-256-gcm-*.html")))
    assert _tab_to(browser, "filter-machine") <= 7  # the filters come first on a row's page
    browser.press("ArrowDown", 40)  # the first machine: the newest run's, m02
    shown = browser.evaluate("""[...document.querySelectorAll("section[data-machine]")]
        .filter((s) => !s.hidden).map((s) => s.querySelector("h2").textContent)""")
    assert len(shown) == 1 and shown[0].startswith("m02 (")


def test_the_screenshot_on_the_docs_page(browser: Browser, out: Path, tmp_path: Path
                                         ) -> None:
    browser.open(next(out.glob("row-aes-256-gcm-*.html")))
    # The machine whose AES-NI a newer build masks: its step, interval and cause.
    browser.evaluate("""(() => {
        const select = document.getElementById("filter-machine");
        select.value = document.querySelectorAll("section[data-machine]")[1].dataset.machine;
        select.dispatchEvent(new Event("change"));
        window.scrollTo(0, 0);
    })()""")
    taken = browser.screenshot(tmp_path / "publish-row.png")
    data = taken.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000
    SCREENSHOT.parent.mkdir(exist_ok=True)
    if not SCREENSHOT.exists() or SCREENSHOT.read_bytes() != data:
        shutil.copyfile(taken, SCREENSHOT)
    assert "images/publish-row.png" in (REPO / "docs" / "publish.md").read_text("utf-8")

"""The site's pages as text, parsed (not string-matched): every label escaped for where it
goes, nothing loaded from outside the folder, a table for every chart, and a second
publish rewriting only what changed. In-process; the browser tests read the same pages
rendered (test_browser.py)."""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pqbench.app.publish import site_of
from pqbench.data.store import Store
from pqbench.platform.errors import UsageError
from pqbench.views import site as publish_site
from pqbench.views.site import charts, pages
from tests.helpers.fleet import Fleet

HOSTILE = "</script><img src=x onerror=alert(1)>"
#: A host name that also tries to leave a double-quoted attribute (the charts' labels).
HOST = f'h" onfocus="alert(2) {HOSTILE}'
#: A host, an OS build and an annotation that try to leave their context.
FLEET = Fleet(machines=2, builds=3, runs=2, hosts={1: HOST},
              build_names={(1, 2): f'bad"build\' {HOSTILE}'},
              jumps={(1, 2): {"AES-256-GCM": 0.5}})


class Page(HTMLParser):
    """A page's elements (tag, attributes), text, and script blocks' contents."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)
        else:
            self.text.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == name]

    def data(self, block: str) -> object:
        return json.loads(next(body for attrs, body in self.scripts if attrs.get("id") == block))


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, dict[str, bytes]]:
    store = Store.open(str(tmp_path_factory.mktemp("fleet") / "fleet.db"))
    store.save_runs(list(FLEET.all_runs()))
    store.annotate("debian-12/6.1.0-001", f"<b>note</b> & {HOSTILE}")
    found = site_of(store)
    return found, publish_site.files(found)


def _pages(files: dict[str, bytes]) -> dict[str, Page]:
    return {name: Page(data.decode()) for name, data in files.items() if name.endswith(".html")}


def test_every_page_is_one_of_the_site_s_and_loads_nothing_from_outside(
        published: tuple[object, dict[str, bytes]]) -> None:
    _site, files = published
    parsed = _pages(files)
    assert {"index.html", "regressions.html"} <= set(parsed)
    assert len([n for n in parsed if n.startswith("row-")]) == 10
    assert len([n for n in parsed if n.startswith("compare-")]) == 2
    for name, page in parsed.items():
        (policy,) = [m["content"] for m in page.tags("meta")
                     if m.get("http-equiv") == "Content-Security-Policy"]
        assert policy == pages.POLICY and "connect-src 'none'" in policy
        assert "default-src 'none'" in policy and "script-src 'self';" in policy
        for attrs in [*page.tags("script"), *page.tags("link"), *page.tags("img"),
                      *page.tags("a")]:
            for where in ("src", "href"):
                target = attrs.get(where)
                if target is None:
                    continue
                assert "://" not in target and not target.startswith("//"), (name, target)
                if not target.startswith("#"):
                    assert target.split("#")[0] in files, (name, target)
        # No inline script: every <script> is a file of the site or a JSON data block.
        for attrs, body in page.scripts:
            assert attrs.get("src") in files or (attrs.get("type") == "application/json"
                                                 and body), name


def test_hostile_labels_stay_text_in_html_attributes_and_json(
        published: tuple[object, dict[str, bytes]]) -> None:
    _, files = published
    parsed = _pages(files)
    seen_in_text = seen_in_json = 0
    for name, page in parsed.items():
        assert not page.tags("img"), name
        assert all(not any(k.startswith("on") for k in attrs) for _, attrs in page.elements)
        seen_in_text += sum(HOSTILE in t for t in page.text)
        for attrs, body in page.scripts:
            if attrs.get("type") == "application/json":
                assert "</" not in body and "<" not in body
                # In the charts, as plotly text: entity-escaped before it became JSON.
                seen_in_json += charts.text(HOSTILE) in json.dumps(json.loads(body),
                                                                   ensure_ascii=False)
    assert seen_in_text >= 3 and seen_in_json >= 1
    index = parsed["index.html"]
    assert any(f"{HOST} (Test CPU 1, 8 cores)" == t for t in index.text)
    labelled = [a["aria-label"] for page in parsed.values() for a in page.tags("div")
                if HOST in (a.get("aria-label") or "")]
    assert len(labelled) == 10  # the chart of that machine on each row's page, whole
    select = [a for a in index.tags("option") if HOSTILE in (a.get("value") or "")]
    assert not select  # machines are chosen by key, not by their name


def test_script_json_cannot_end_its_block() -> None:
    value = {"a": "</script><!-- & \u2028", "b": [1.5, None]}
    text = pages.script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_plotly_text_is_entity_escaped() -> None:
    assert charts.text("<b>x</b> & \x1b[31m") == "&lt;b&gt;x&lt;/b&gt; &amp; [31m"


def test_every_chart_has_its_table_and_its_machine(
        published: tuple[object, dict[str, bytes]]) -> None:
    _site, files = published
    for name, page in _pages(files).items():
        if not name.startswith("row-"):
            continue
        drawn = page.data("pqbench-charts")
        assert isinstance(drawn, list) and len(drawn) == 2
        sections = [a for a in page.tags("section") if a.get("data-machine")]
        assert [f"chart-{s['data-machine']}" for s in sections] == [c["id"] for c in drawn]
        assert len(page.tags("table")) == len(drawn)
        for chart in drawn:
            band, level = chart["traces"][:2]
            assert band["fill"] == "toself" and len(band["y"]) == 2 * len(level["y"])
            assert all(low <= mid <= high for low, mid, high in zip(
                band["y"][len(level["y"]):][::-1], level["y"], band["y"][:len(level["y"])],
                strict=True))


def test_a_step_is_marked_with_its_interval_and_causes(
        published: tuple[object, dict[str, bytes]]) -> None:
    _, files = published
    name = next(n for n in files if n.startswith("row-aes-256-gcm"))
    drawn = Page(files[name].decode()).data("pqbench-charts")
    stepped = [c for c in drawn if c["layout"]["shapes"]]
    assert len(stepped) == 1
    (label,) = stepped[0]["layout"]["annotations"]
    assert label["text"].startswith("▼ 2.00x slower [") or "x slower [" in label["text"]
    marker = next(t for t in stepped[0]["traces"] if t["name"].startswith("step"))
    assert "causes: os_build" in marker["customdata"][0]
    assert marker["marker"]["symbol"] == "triangle-down"


def test_build_names_on_the_axis_are_the_chart_s_own(
        published: tuple[object, dict[str, bytes]]) -> None:
    _, files = published
    name = next(n for n in files if n.startswith("row-aes-256-gcm"))
    for chart in Page(files[name].decode()).data("pqbench-charts"):
        ticks = chart["layout"]["xaxis"]["ticktext"]
        assert len(set(ticks)) == len(ticks) == 3 and ticks[0] == "debian-12/6.1.0-000"


def test_a_second_write_rewrites_only_what_changed(
        published: tuple[object, dict[str, bytes]], tmp_path: Path) -> None:
    site, files = published
    out = tmp_path / "site"
    first = publish_site.write(site, out)
    assert sorted(first.written) == sorted(files) and not first.unchanged
    stamps = {n: (out / n).stat().st_mtime_ns for n in files}
    (out / "row-gone.html").write_text("a page an earlier publish wrote")
    state = json.loads((out / publish_site.STATE).read_text())
    state["pages"].append("row-gone.html")
    (out / publish_site.STATE).write_text(json.dumps(state))
    (out / "notes.txt").write_text("the user's own file")
    second = publish_site.write(site, out)
    assert second.written == () and sorted(second.unchanged) == sorted(files)
    assert second.removed == ("row-gone.html",) and (out / "notes.txt").exists()
    assert {n: (out / n).stat().st_mtime_ns for n in files} == stamps
    assert oct((out / "index.html").stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    assert set(publish_site.known_parts(out)) == {p.machine.key for p in site.parts}


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_folder_publish_did_not_write_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(UsageError, match="did not write"):
        publish_site.check_folder(tmp_path)
    with pytest.raises(UsageError, match="is a file"):
        publish_site.check_folder(tmp_path / "mine.txt")
    publish_site.check_folder(tmp_path / "new")
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_a_damaged_state_recomputes_rather_than_fails(tmp_path: Path) -> None:
    (tmp_path / publish_site.STATE).write_text("{not json")
    assert publish_site.known_parts(tmp_path) == {}
    (tmp_path / publish_site.STATE).write_text(json.dumps(
        {"format": publish_site.STATE_FORMAT, "parts": {"k": {"format": 1}}}))
    assert publish_site.known_parts(tmp_path) == {}


def test_a_machine_s_sections_are_rendered_again_only_when_it_or_the_rendering_changed(
        published: tuple[object, dict[str, bytes]], tmp_path: Path) -> None:
    site, _ = published
    out = tmp_path / "site"
    publish_site.write(site, out)
    state = json.loads((out / publish_site.STATE).read_text())
    assert set(state["fragments"]) == {p.digest for p in site.parts}
    # A marker in one kept section shows that the next publish reuses it as it was.
    digest = site.parts[0].digest
    row = next(iter(state["fragments"][digest]))
    state["fragments"][digest][row][0] += "<p>kept-section</p>"
    (out / publish_site.STATE).write_text(json.dumps(state))
    publish_site.write(site, out)
    assert sum("kept-section" in p.read_text() for p in out.glob("row-*.html")) == 1
    # Another rendering (pqbench's pages changed), or another part: rendered again.
    for change in ("rendering", "digest"):
        state = json.loads((out / publish_site.STATE).read_text())
        state["fragments"][digest][row][0] += "<p>kept-section</p>"
        if change == "rendering":
            state["rendering"] = "another"
        else:
            state["fragments"]["another part"] = state["fragments"].pop(digest)
        (out / publish_site.STATE).write_text(json.dumps(state))
        publish_site.write(site, out)
        assert not any("kept-section" in p.read_text() for p in out.glob("row-*.html"))
        assert set(json.loads((out / publish_site.STATE).read_text())["fragments"]) == {
            p.digest for p in site.parts}


def test_a_ratio_is_worded_as_every_other_ratio_pqbench_shows() -> None:
    """The fleet's post-quantum against classical cell: faster or slower with its interval,
    as `speed` and `ratios` say it, never a bare time ratio ("0.294x the time")."""
    from pqbench.app.publish import RatioLine
    from pqbench.views.site import pages

    faster = RatioLine("ML-KEM-768 against X25519", "exchange", 0.294, 0.288, 0.302, 0.99,
                       10, "r")
    assert pages._ratio_cell(faster) == "3.40x faster [3.31–3.47] (99 % CI)"
    slower = RatioLine("ML-DSA-65 against Ed25519", "signature", 1.25, 1.2, 1.3, 0.99, 10, "r")
    assert pages._ratio_cell(slower) == "1.25x slower [1.20–1.30] (99 % CI)"


def test_the_regressions_page_gathers_the_machines_steps_by_build(tmp_path: Path) -> None:
    fleet = Fleet(machines=3, builds=3, runs=2, hosts={2: HOST},
                  jumps={(0, 2): {"AES-256-GCM": 0.5}, (2, 2): {"AES-256-GCM": 0.5}})
    store = Store.open(str(tmp_path / "fleet.db"))
    store.save_runs(list(fleet.all_runs()))
    found = site_of(store)
    (step,) = found.fleet
    assert (step.build, step.algorithm, step.verdict, step.measured) == (
        fleet.build_name(0, 2), "AES-256-GCM", "slower", 3)
    assert sorted(found.fleet[0].hosts) == sorted(["m00", HOST])
    page = Page(publish_site.files(found)["regressions.html"].decode())
    assert {"id": "by-build"} in page.tags("h2")
    text = " ".join(" ".join(page.text).split())
    assert f"{fleet.build_name(0, 2)} AES-256-GCM" in text and "2 of 3" in text
    assert "x slower" in text.split("2 of 3", 1)[1]
    assert HOST in text  # the hostile host is text of the page, not markup
    assert not [a for a in page.tags("img")]


def test_one_machine_s_site_has_no_steps_by_build(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "one.db"))
    store.save_runs(list(Fleet(machines=1, builds=3, runs=2,
                               jumps={(0, 2): {"AES-256-GCM": 0.5}}).all_runs()))
    found = site_of(store)
    assert len(found.regressions) == 1 and found.fleet == ()
    assert 'id="by-build"' not in publish_site.files(found)["regressions.html"].decode()


def test_a_step_of_many_machines_names_ten_and_counts_the_rest() -> None:
    from pqbench.app.history import FleetStep
    from pqbench.app.publish import Site

    step = FleetStep("ML-KEM-768", "liboqs", "encaps", None, "debian-12/b1", "slower",
                     tuple(f"fleet-{i:03d} (CPU, 8 cores)" for i in range(500)), 500, 0.88,
                     0.9, tuple(f"fleet-{i:03d}" for i in range(500)))
    page = Page(pages.regressions_page(Site((), (), (), fleet=(step,))))
    text = " ".join(" ".join(page.text).split())
    assert "500 of 500" in text and "1.11x–1.14x slower" in text
    assert "fleet-009 (CPU, 8 cores) and 490 more" in text and "fleet-010" not in text

"""The Markdown report's own charts and folds, as a reader of the docs site sees them: every
build named distinctly on the history's axis, shading drawn wherever the legend promises
it (and the promise only then), folded tables rendered as tables by the docs site's
Markdown. The charts are drawn and their pixels read; the Markdown is rendered by
Python-Markdown with mkdocs.yml's own extensions."""

from __future__ import annotations

import re

import markdown
import numpy as np
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg

from pqbench.views import markdown as md
from pqbench.views.report import charts
from tests.helpers import REPO

#: Three builds of one OS build: one plain, two split off by what sets them apart
#: (`history.by_build`); cut at their end, the two split ones read the same.
BUILDS = ("debian-12/6.18.44-fc-v657", "debian-12/6.18.44-fc-v657 (AES-NI hidden)",
          "debian-12/6.18.44-fc-v657 (cryptography 42.0.8)")


def _chart(intervals: bool = True) -> charts.History:
    """Two series: one at every build, one measured at the middle build only (a lone
    point, whose interval a band through neighbours would never show)."""
    return charts.History(
        "h.png", "AES-256-GCM by os_build", "throughput", BUILDS,
        (("encrypt [libcrypto]", (4.0e9, 2.0e9, 4.1e9)), ("decrypt [libcrypto]",
                                                          (None, 3.0e9, None))),
        intervals=(((3.8e9, 4.2e9), (1.9e9, 2.1e9), (3.9e9, 4.3e9)),
                   (None, (2.6e9, 3.4e9), None)) if intervals else (),
        unit="B/s")


def _drawn(chart: charts.History) -> tuple[object, np.ndarray]:
    figure = charts._history(chart)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return figure, np.asarray(canvas.buffer_rgba())[..., :3].astype(float)


def _tinted(pixels: np.ndarray, figure: object, x: float, y: float, colour: str) -> bool:
    """Whether the pixel at data (x, y) is `colour` shaded at the band's alpha over white."""
    ax = figure.axes[0]  # type: ignore[attr-defined]
    px, py = ax.transData.transform((x, y))
    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    expected = 255 - charts.BAND_ALPHA * (255 - rgb)
    pixel = pixels[pixels.shape[0] - round(float(py)), round(float(px))]
    return bool(np.abs(pixel - expected).max() <= 6)


def test_every_build_on_the_history_axis_has_a_distinct_legible_name() -> None:
    figure, _ = _drawn(_chart())
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]  # type: ignore[attr-defined]
    assert len(set(labels)) == 3, labels
    assert labels[0] == BUILDS[0]
    assert labels[1].endswith("hidden)") and labels[2].endswith("42.0.8)")
    assert all(len(label) <= 28 and label.startswith("debian-12/6.1") for label in labels)


def test_shading_is_drawn_wherever_the_legend_promises_it() -> None:
    figure, pixels = _drawn(_chart())
    first, second = charts.LINE_COLOURS[0], charts.LINE_COLOURS[1]
    # Halfway between two points (off the grid lines), between the line and the band's
    # top edge (each straight on the log axis: 4.0e9 -> 2.0e9 is 2.83e9 at 0.5, the top
    # 4.2e9 -> 2.1e9 is 2.97e9).
    assert _tinted(pixels, figure, 0.5, 2.91e9, first)
    assert _tinted(pixels, figure, 1.5, 2.98e9, first)
    # The lone point of the second series: a box, not nothing.
    assert _tinted(pixels, figure, 1.1, 3.2e9, second)
    assert not _tinted(pixels, figure, 0.5, 2.5e9, first)  # below the band
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]  # type: ignore[attr-defined]
    assert "shaded: each point's 95 % CI" in legend


def test_no_shading_no_promise() -> None:
    figure, pixels = _drawn(_chart(intervals=False))
    legend = figure.axes[0].get_legend()  # type: ignore[attr-defined]
    assert not [t for t in legend.get_texts() if "shaded" in t.get_text()]
    assert legend.get_title().get_text() == ""
    assert not _tinted(pixels, figure, 0.0, 4.12e9, charts.LINE_COLOURS[0])


def test_a_folded_table_renders_as_a_table_in_the_docs_site() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text("utf-8"))
    extensions = [e if isinstance(e, str) else next(iter(e)) for e in
                  config["markdown_extensions"]]
    folded = md.details("All measurements: 2 rows",
                        md.table(["row", "rate"], [["ML-KEM-768 encaps", "35.0 kops/s"],
                                                   ["<b>x</b>", "1"]], ["l", "r"]))
    page = markdown.markdown(f"# Report\n\n{folded}\n\nAfter.", extensions=extensions)
    inside = page[page.index("<details"):page.index("</details>")]
    assert "<summary>All measurements: 2 rows</summary>" in inside
    assert "<table>" in inside
    assert re.search(r"<td[^>]*>ML-KEM-768 encaps</td>", inside), inside
    assert "| row |" not in page and "<b>x</b>" not in page
    assert 'markdown="1"' not in page  # the attribute is read, not shown

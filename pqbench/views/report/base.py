"""What a report section is: Markdown text plus the charts it links to."""

from __future__ import annotations

from dataclasses import dataclass

from pqbench.views.report.charts import Chart


@dataclass(frozen=True)
class Section:
    """A block of Markdown and the charts its image links point at (relative file names);
    ``bullets`` are what the section adds to the summary at the top of the report."""

    markdown: str
    charts: tuple[Chart, ...] = ()
    bullets: tuple[str, ...] = ()

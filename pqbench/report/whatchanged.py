"""The news of a comparison (`pqbench.news`) in Markdown: bullets that lead a comparison,
and one summary bullet per comparison for the top of a report.

Every line comes from `pqbench.news.text` as plain text and is escaped here with
`markdown.text`, so labels, versions and reasons from the runs stay literal.
"""

from __future__ import annotations

from pqbench.news import News
from pqbench.news.text import Formats, items, story
from pqbench.report import markdown as md


def _rate(value: float, unit: str) -> str:
    return md.byte_rate(value) if unit == "bytes/s" else md.si(value, "ops/s")


FORMATS = Formats(rate=_rate, ratio=md.ratio)


def markdown(news: News) -> md.Markdown:
    """A bullet per kind of news, its lines nested beneath (GFM nested lists)."""
    lines = [f"**What changed** from {md.text(news.before_name)} to "
             f"{md.text(news.after_name)}:", ""]
    for item in items(news, FORMATS):
        lines.append(f"- **{md.text(item.heading)}**")
        lines += [f"  - {md.text(line)}" for line in item.lines]
    return md.Markdown("\n".join(lines))


def summary_bullet(news: News) -> md.Markdown:
    """A bullet telling this step of the story, its points nested (see `text.story`)."""
    headline, points = story(news, FORMATS)
    lines = [f"- **{md.text(news.before_name)} → {md.text(news.after_name)}**: "
             f"{md.text(headline)}"]
    lines += [f"  - {md.text(point)}" for point in points]
    return md.Markdown("\n".join(lines))

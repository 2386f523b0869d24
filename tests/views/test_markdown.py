"""The Markdown adapter's blocks, parsed back as a reader's renderer parses them
(markdown-it, CommonMark): what goes in is exactly what comes out."""

from __future__ import annotations

import pytest

from pqbench.views import markdown as md
from tests.helpers.markdown import parse


@pytest.mark.parametrize("content", [
    "x\n````\n# h",  # a fence of four backticks at a line's start, then a heading
    "```\n``````",
    "plain",
    "`inline` and ```` in the middle",
])
def test_a_code_block_is_one_fence_holding_its_content(content: str) -> None:
    tokens = parse(md.code_block(content, "sh"))
    assert [t.type for t in tokens] == ["fence"], [t.type for t in tokens]
    assert tokens[0].content == content + "\n"
    assert tokens[0].info == "sh"

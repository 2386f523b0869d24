"""What every chart shares, the report's PNGs (`views.report.charts`) and the site's
interactive charts (`views.site`): the palette and which points name an axis.

Colours follow the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal Design"),
distinguishable under the common colour-vision deficiencies; a chart also tells its
series apart by line style or marker, so it reads in grey too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442",
             "#000000")

#: For lines: the palette without its yellow, which is too faint as a thin line on white.
LINE_COLOURS = tuple(c for c in OKABE_ITO if c != "#F0E442")

#: A step's direction: colour and marker both say it (vermillion ▼ slower, bluish green
#: ▲ faster), so neither colour alone nor shape alone carries it.
STEP_STYLE = {"slower": ("#D55E00", "triangle-down", "▼"),
              "faster": ("#009E73", "triangle-up", "▲")}

#: Characters an axis label keeps before it is cut (a build name at 30 degrees).
AXIS_CHARACTERS = 28

#: Tick labels a history's x axis holds legibly (a 9-inch chart, labels at 30 degrees).
HISTORY_TICKS = 16


def tick_indexes(count: int, steps: Sequence[int], most: int = HISTORY_TICKS) -> list[int]:
    """The points whose names label the x axis: all of them up to `most`; beyond, the
    first, the last and each step's first point, and every k-th point between them
    (k = ceil(count / most)) farther than k/2 from those, so no two labels collide."""
    if count <= most:
        return list(range(count))
    every = math.ceil(count / most)
    kept = {0, count - 1, *(i for i in steps if 0 <= i < count)}
    regular = {i for i in range(0, count, every)
               if all(abs(i - k) * 2 > every for k in kept if k != i)}
    return sorted(kept | regular)


def cut_middle(name: str, width: int) -> str:
    """`name` in at most `width` characters, cut in its middle: its start and the end that
    sets two builds apart both stay ("debian-12/6.1…(cryptography 42.0.8)")."""
    if len(name) <= width:
        return name
    keep = max(width - 1, 2)
    return name[: keep // 2] + "…" + name[len(name) - (keep - keep // 2):]


def axis_labels(names: Sequence[str], width: int = AXIS_CHARACTERS) -> list[str]:
    """The names as axis labels, distinct names always distinct labels: each cut in its
    middle to `width` characters (`cut_middle`); where two would then read alike, each
    long name keeps its start, its end, and the characters where it differs from the name
    most like it ("debian-12/…fc-v657-with…suffix"); where even that fails, whole."""
    distinct = set(names)
    shown = [cut_middle(n, width) for n in names]
    if len(set(shown)) == len(distinct):
        return shown
    shown = [n if len(n) <= width else _telling(n, [o for o in distinct if o != n], width)
             for n in names]
    return shown if len(set(shown)) == len(distinct) else list(names)


def _telling(name: str, others: Sequence[str], width: int) -> str:
    """`name` cut to its start, its end and where it differs from the most alike of
    `others` (with three characters either side of that)."""
    if not others:
        return cut_middle(name, width)
    start = max(_shared(name, o) for o in others)
    end = max(_shared(name[::-1], o[::-1]) for o in others)
    low = max(start - 3, 0)
    high = min(max(len(name) - end, start + 1) + 3, len(name))
    room = max((width - (high - low)) // 2, 6)
    head, tail = name[:min(room, low)], name[max(high, len(name) - room):]
    return (head + ("…" if len(head) < low else "") + name[low:high]
            + ("…" if high < len(name) - len(tail) else "") + tail)


def _shared(a: str, b: str) -> int:
    """How many characters `a` and `b` begin with alike."""
    return sum(1 for _ in itertools.takewhile(lambda pair: pair[0] == pair[1],
                                              zip(a, b, strict=False)))

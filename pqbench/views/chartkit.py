"""What every chart shares, the report's PNGs (`views.report.charts`) and the site's
interactive charts (`views.site`): the palette and which points name an axis.

Colours follow the Okabe–Ito palette (Okabe & Ito 2008, "Color Universal Design"),
distinguishable under the common colour-vision deficiencies; a chart also tells its
series apart by line style or marker, so it reads in grey too.
"""

from __future__ import annotations

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

"""Every number pqbench shows, formatted in one place (as pyperf's `_formatter`).

Three significant digits by default, which is as much as a benchmark's spread supports;
thousands separated, never in exponent notation; decimal SI prefixes (k = 10^3, as
`openssl speed` prints kB/s). A value is rounded before its prefix is chosen, so 999,600
B/s is "1.00 MB/s", never "1e+03 kB/s" or "1,000 kB/s". A missing or undefined value
(None, NaN, infinity) is `MISSING` everywhere: the terminal, Markdown and charts agree.

The terminal and the report call the same functions; only escaping differs by medium
(`views.console`, `views.markdown`).
"""

from __future__ import annotations

import math

#: What a table shows for "not measured" or "not applicable".
MISSING = "–"

_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _round_significant(value: float, digits: int) -> float:
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def number(value: float | None, digits: int = 3, *, trim: bool = False) -> str:
    """`digits` significant digits, thousands separated, never in exponent notation:
    123456 -> "123,000", 0.012345 -> "0.0123", 0.99996 -> "1.00". `trim` drops trailing
    zeros after the point ("2" rather than "2.00", for chart ticks)."""
    if not finite(value):
        return MISSING
    assert value is not None
    if value == 0:
        return "0"
    rounded = _round_significant(value, digits)
    # 0.99996 rounds up to 1.00: the magnitude of the rounded value sets the decimals.
    magnitude = math.floor(math.log10(abs(rounded or value)))
    text = f"{rounded:,.{max(digits - 1 - magnitude, 0)}f}"
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def si(value: float | None, unit: str = "", digits: int = 3, *, compact: bool = False,
       trim: bool = False) -> str:
    """A value with a decimal SI prefix: "1.23 MB/s", "45.6 k", below 1000 "999 B/s".

    `compact` leaves out the space ("1.23k", for chart labels); `trim` drops trailing
    zeros ("2k", for axis ticks).
    """
    if not finite(value):
        return MISSING
    assert value is not None
    space = "" if compact else " "
    for factor, prefix in _PREFIXES:
        if abs(_round_significant(value / factor, digits)) >= 1:
            return f"{number(value / factor, digits, trim=trim)}{space}{prefix}{unit}"
    return f"{number(value, digits, trim=trim)}{space}{unit}".rstrip()


def byte_rate(bytes_per_sec: float | None) -> str:
    """Throughput in decimal units (MB/s = 10^6 bytes/s, as `openssl speed` prints kB/s)."""
    return si(bytes_per_sec, "B/s")


def rate(value: float | None, unit: str) -> str:
    """A rate in its unit: "bytes/s" as "1.23 GB/s", anything else as "45.6 k ops/s"."""
    return byte_rate(value) if unit == "bytes/s" else si(value, unit)


def levels(before: float | None, after: float | None, unit: str) -> str:
    """Two rates of one row, the unit said once where both share it: "60.1 → 4.34
    kops/s", "1.65 → 3.25 GB/s"; "850 MB/s → 1.65 GB/s" where the prefixes differ."""
    first, second = rate(before, unit), rate(after, unit)
    head, _, shared = first.partition(" ")
    if shared and second.endswith(" " + shared):
        return f"{head} → {second}"
    return f"{first} → {second}"


def level_interval(value: float | None, low: float | None, high: float | None,
                   unit: str) -> str:
    """A rate with its interval, the unit said once where all three share it: "42.3
    [42.0–42.5] kops/s"; "998 MB/s [990 MB/s – 1.01 GB/s]" where the prefixes differ."""
    texts = [rate(v, unit) for v in (value, low, high)]
    heads = [t.partition(" ") for t in texts]
    if all(part[2] == heads[0][2] and part[2] for part in heads):
        return f"{heads[0][0]} [{heads[1][0]}–{heads[2][0]}] {heads[0][2]}"
    return f"{texts[0]} [{texts[1]} – {texts[2]}]"


def duration_us(value: float | None) -> str:
    """Microseconds, in ms or s where that reads better: "12.3 µs", "1.52 ms"."""
    if not finite(value):
        return MISSING
    assert value is not None
    if value >= 1e6:
        return f"{number(value / 1e6)} s"
    if value >= 1e3:
        return f"{number(value / 1e3)} ms"
    return f"{number(value)} µs"


def byte_count(n: int | None) -> str:
    """An exact count of bytes: "1,088 B"."""
    return MISSING if n is None else f"{n:,} B"


def count(n: int | None) -> str:
    """An exact count: "12,345"."""
    return MISSING if n is None else f"{n:,}"


_BINARY = ((2**50, "PiB"), (2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def size(n: float | None) -> str:
    """A block or file size: binary units where it is a whole number of them ("16 KiB",
    the `openssl speed` blocks), else decimal ("2.10 MB")."""
    if not finite(n):
        return MISSING
    assert n is not None
    for factor, unit in _BINARY:
        if n >= factor and n % factor == 0:
            return f"{int(n) // factor:,} {unit}"
    return si(n, "B", trim=n < 1000)


def ratio(value: float | None) -> str:
    """A ratio of two speeds or sizes: "2.41x", "0.873x", "1x"."""
    return MISSING if not finite(value) else f"{number(value, trim=True)}x"


def speed_change(value: float | None) -> str:
    """A speed ratio (after / before) in the words pyperf and hyperfine print: 2.0 ->
    "2.00x faster", 0.0725 -> "13.8x slower" (the inverse, never "0.0725x"), and "same
    speed" where three significant digits cannot tell the two apart."""
    if not finite(value) or value is None or value <= 0:
        return MISSING
    factor = number(value if value >= 1 else 1 / value)
    if factor == "1.00":
        return "same speed"
    return f"{factor}x {'faster' if value > 1 else 'slower'}"


def speed_change_range(low: float, high: float) -> str:
    """The smallest and largest of several speed ratios (several machines' estimates, not
    an interval) in the words of `speed_change`: "1.11x–1.14x slower", "1.10x faster"
    where the two read alike, "1.05x slower – 1.02x faster" where they lie either side."""
    least, most = speed_change(low), speed_change(high)
    if least == most:
        return least
    if (low >= 1 or high <= 1) and "same speed" not in (least, most):
        word = "faster" if low >= 1 else "slower"
        near, far = (least, most) if low >= 1 else (most, least)
        return f"{near.removesuffix(' ' + word)}–{far}"
    return f"{least} – {most}"


def change_beside_interval(value: float | None, low: float | None, high: float | None
                           ) -> str:
    """A speed ratio with its interval beside it, in one cell that a narrow terminal keeps
    whole: "2.58x faster [2.50–2.66]", "1.42x slower [1.41–1.43]"; an interval that
    straddles 1 by its two ends ("1.02x faster [1.01x slower – 1.05x faster]"); the ratio
    alone, then "[no interval]", where none backs it."""
    moved = speed_change(value)
    if moved == MISSING:
        return MISSING
    return f"{moved} {bracket(low, high)}"


def bracket(low: float | None, high: float | None, *, directed: bool = False) -> str:
    """A speed ratio's interval in the words of `speed_change`, in brackets: "[2.50–2.66]"
    (faster), "[1.41–1.43]" (slower: the factors), "[1.01x slower – 1.05x faster]".
    `directed` where no "faster" or "slower" stands before it ("no change (within ±5 %)
    [1.01–1.05x faster]"): the factors alone would not say which way they lie. An end
    beyond `FACTOR_SHOWN` reads "over 1,000" (a t interval on one degree of freedom can
    reach 10^30, which as digits tells nothing more)."""
    if not (finite(low) and finite(high)) or low is None or high is None or low <= 0:
        return "[no interval]"
    if low >= 1:
        return f"[{_span(low, high)}{'x faster' if directed else ''}]"
    if high <= 1:
        return f"[{_span(1 / high, 1 / low)}{'x slower' if directed else ''}]"
    return f"[{_end(low)} – {_end(high)}]"


#: The largest factor an interval's end is told in digits.
FACTOR_SHOWN = 1000.0


def _factor(value: float) -> str:
    return number(value) if value <= FACTOR_SHOWN else f"over {number(FACTOR_SHOWN)}"


def _span(low: float, high: float) -> str:
    """Two factors of one side: "2.50–2.66", "2.50 – over 1,000"."""
    dash = "–" if high <= FACTOR_SHOWN else " – "
    return f"{_factor(low)}{dash}{_factor(high)}"


def _end(value: float) -> str:
    """An end of an interval that straddles 1: "1.01x slower", "1.05x faster", "1.00x"."""
    factor = _factor(value if value >= 1 else 1 / value)
    return f"{factor}x" if factor == "1.00" else \
        f"{factor}x {'faster' if value > 1 else 'slower'}"


def time_change(value: float | None, low: float | None, high: float | None) -> str:
    """A time ratio (this one's time over that one's: 0.294 takes 0.294x the time) in the
    words of every other ratio pqbench prints, with its interval: "3.40x faster
    [3.31–3.47]"; the speed ratio is the inverse, its interval the inverted ends."""
    if not finite(value) or value is None or value <= 0:
        return MISSING
    return change_beside_interval(1 / value, inverse(high), inverse(low))


def time_speed(value: float | None) -> str:
    """A time ratio in speed words, without an interval: 1.15 -> "1.15x slower" (it takes
    1.15x the time), 0.248 -> "4.03x faster"."""
    return speed_change(inverse(value))


def inverse(value: float | None) -> float | None:
    return 1 / value if finite(value) and value is not None and value > 0 else None


def no_change(band: float | None) -> str:
    """The verdict "no change" with its band: "no change (within ±5 %)"."""
    return "no change" if not finite(band) else f"no change (within ±{share(band)})"


def interval(low: float | None, high: float | None) -> str:
    """A confidence interval of a ratio or a level: "0.981–1.02"."""
    if not (finite(low) and finite(high)):
        return MISSING
    return f"{number(low)}–{number(high)}"


def percent(value: float | None, digits: int = 1, *, signed: bool = False) -> str:
    """A fraction as a percentage: 0.123 -> "12.3 %" ("+12.3 %" when `signed`)."""
    if not finite(value):
        return MISSING
    assert value is not None
    return f"{value * 100:{'+' if signed else ''}.{digits}f} %"


def share(value: float | None) -> str:
    """A fraction as a percentage to three significant digits, trailing zeros dropped:
    0.05 -> "5 %", 0.025 -> "2.5 %", 0.99 -> "99 %" (bands, confidence levels)."""
    if not finite(value):
        return MISSING
    assert value is not None
    return f"{number(value * 100, trim=True)} %"


def plus_minus(value: float | None, digits: int = 1) -> str:
    """A half-width as a percentage: 0.012 -> "±1.2 %"."""
    return MISSING if not finite(value) else f"±{percent(value, digits)}"


def p_value(value: float | None) -> str:
    """A p-value: two significant digits, "< 0.001" below that."""
    if not finite(value):
        return MISSING
    assert value is not None
    return "< 0.001" if value < 0.001 else f"{value:.2g}"

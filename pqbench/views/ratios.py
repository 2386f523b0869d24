"""A run's paired cost ratios (`analysis.ratios`) as lines and as a table, for the terminal
and the report alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.analysis.explain import configuration
from pqbench.views import delimited, numbers
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:  # the analysis loads numpy; showing a ratio does not need it
    from pqbench.analysis.ratios import Across, Ratio
    from pqbench.data.record.results import Run

#: How a time base is named wherever a figure in it is shown.
TIME_BASES = {"cpu": "CPU time", "wall": "wall time", "mixed": "mixed time bases"}


def level(value: float) -> str:
    """A confidence level as it truly is: "99 % CI", "93.8 % CI"."""
    return f"{numbers.share(value)} CI"


def answer(r: Ratio) -> str:
    """A cost ratio in the words every pqbench ratio uses, its interval beside it: "3.40x
    faster [3.37–3.47]" (the numerator against the denominator)."""
    return numbers.time_change(r.estimate, r.ci_low, r.ci_high)


#: How a `files hash` ratio's `per` starts: "byte of PATH".
FILE_PER = "byte of "


def per_text(r: Ratio) -> str:
    """Per what the ratio counts, short: "exchange", "byte (encrypt)", "byte (mean)",
    "operation (mean)", "byte" (a file's: the file has a column of its own); the block
    size is `block_text`'s."""
    if r.per.startswith(FILE_PER):
        return "byte"
    side = r.numerator
    if r.kind == "binding":
        unit = "operation" if side.rows[0][0].block_size is None else "byte"
        if len(side.rows) == 1:
            key = side.rows[0][0]
            return f"{unit} ({key.algorithm} {key.operation})"
        return f"{unit} (mean)"
    if r.kind in ("key size", "digest size", "mode", "relative") and side.block_size and \
            side.operation:
        return f"byte ({side.operation})"
    return r.per


def block_text(r: Ratio) -> str:
    """The block size a ratio is at ("16 KiB"), "all" for a binding's mean over every size,
    empty where blocks do not apply."""
    side = r.numerator
    if side.block_size:
        return numbers.size(side.block_size)
    if any(key.block_size for key, _ in side.rows):
        return "all"
    return ""


def file_names(ratios: Sequence[Ratio]) -> dict[str, str]:
    """Each file of `files hash` ratios by the shortest name that tells it from the others:
    its base name ("disk.img"), the path where two files share one."""
    paths = list(dict.fromkeys(r.per.removeprefix(FILE_PER) for r in ratios
                               if r.per.startswith(FILE_PER)))
    bases = [path.rsplit("/", 1)[-1] or path for path in paths]
    return {path: base if bases.count(base) == 1 else path
            for path, base in zip(paths, bases, strict=True)}


def base_name(r: Ratio) -> str:
    return TIME_BASES.get(r.time_base, r.time_base)


def line(r: Ratio) -> str:
    """"ML-KEM-768 [liboqs] against X25519 [libcrypto], per exchange: 3.40x faster
    [3.37–3.47] (99 % CI, 10 cycles, CPU time)"."""
    block = block_text(r)
    at = f" @{block}" if block and block != "all" else ""
    return (f"{r.numerator.label} against {r.denominator.label}, per {per_text(r)}{at}: "
            f"{answer(r)} "
            f"({level(r.ci_level)}, {r.pairs} cycles, {base_name(r)})")


def lines(ratios: Sequence[Ratio]) -> list[str]:
    return [line(r) for r in ratios]


def run_title(run: Run) -> str:
    """`ratios`' title for one run: its id, and what a knob hid in it ("(with AES-NI
    hidden)"), since its ratios are then not the machine's own."""
    configured = configuration(run.environment)
    return (f"run {run.run_id}" + (f" (with {configured})" if configured else "")
            + ": what it costs, paired by cycle")


def table(ratios: Sequence[Ratio], title: str = "what it costs, paired by cycle") -> Table:
    """One line per ratio, compact enough for 80 columns: what against what, per what, and
    the answer with its interval beside it (never left out). What every ratio shares (the
    interval's true level, the cycles, the time base, one implementation on every side,
    one row every ratio is set against) is said once, in the title; a column where they
    differ."""
    levels = {numbers.share(r.ci_level) for r in ratios}
    counts = {r.pairs for r in ratios}
    bases = {base_name(r) for r in ratios}
    shared = [f"{levels.pop()} CI" if len(levels) == 1 else "",
              f"{counts.pop()} cycles" if len(counts) == 1 else "",
              bases.pop() if len(bases) == 1 else ""]
    impls = {label.rpartition(" [")[2] for r in ratios
             for label in (r.numerator.label, r.denominator.label)}
    impl = impls.pop().rstrip("]") if len(impls) == 1 and " [" in ratios[0].numerator.label \
        else None
    against = {r.denominator.label for r in ratios}
    common = against.pop() if len(against) == 1 and len(ratios) > 1 else None

    def name(label: str) -> str:
        return label.rpartition(" [")[0] if impl is not None else label

    parts = [part for part in shared if part]
    if impl is not None:
        parts.append(f"all through {impl}")
    said = ", ".join(parts)
    heading = title + (f", each against {name(common)}" if common is not None else "")
    files = file_names(ratios)
    columns = (Column("what", wrap=True),
               *(() if common is not None else (Column("against", wrap=True),)),
               Column("file", wrap=True), Column("per", wrap=True),
               Column("block", align="right"),
               # An interval that straddles 1 says both ends in words ("1.01x faster
               # [1.01x slower – 1.02x faster]"): it wraps at 80 columns rather than
               # turning the table into cards; the usual one stays whole.
               Column("speed [CI]", align="right", wrap=True, min_width=24),
               Column("CI level", align="right", priority=1),
               Column("cycles", "count", priority=2), Column("time base", priority=3))
    rows = tuple((name(r.numerator.label),
                  *(() if common is not None else (name(r.denominator.label),)),
                  files.get(r.per.removeprefix(FILE_PER)), per_text(r), block_text(r),
                  answer(r),
                  None if shared[0] else numbers.share(r.ci_level),
                  None if shared[1] else r.pairs, None if shared[2] else base_name(r))
                 for r in ratios)
    return Table(f"{heading} ({said})" if said else heading, columns, rows)


#: What one exchange is for each kind of scheme (`analysis.exchanges.RECIPES`), in words.
EXCHANGE_WORDS = {
    "kem": "keygen + encaps + decaps",
    "key-agreement": "2 keygen + 2 derive, one of each per side",
    "rsa": "encrypt + decrypt: key transport, as TLS 1.2's RSA key exchange, under a "
           "long-lived key pair"}


def exchange_note(ratios: Sequence[Ratio]) -> str | None:
    """What "per exchange" counts for each scheme the exchange ratios set against each
    other ("an exchange is ML-KEM-768 keygen + encaps + decaps; RSA-2048 encrypt + decrypt:
    key transport ..."): an RSA "exchange" is not a key agreement."""
    from pqbench.analysis.exchanges import kind_of

    names = dict.fromkeys(name for r in ratios if r.kind == "exchange"
                          for name in (r.numerator.algorithm, r.denominator.algorithm) if name)
    said = [f"{name} {EXCHANGE_WORDS[kind]}" for name in names
            if (kind := kind_of(name)) in EXCHANGE_WORDS]
    return f"an exchange is {'; '.join(said)}" if said else None


def notes(ratios: Sequence[Ratio]) -> list[str]:
    """What a reader of the table needs to read it right: what an exchange is for each
    kind of scheme, and what "mean of N" is."""
    found = [text] if (text := exchange_note(ratios)) else []
    if any(r.kind == "binding" and len(r.numerator.rows) > 1 for r in ratios):
        found.append("mean: the geometric mean of the per-operation ratios (--json: which); "
                     "a binding's answer at each block size stands beside its mean over them")
    return found


def csv_text(rows: Sequence[Sequence[object]]) -> str:
    """Ratios as tidy CSV (`analysis.ratios.ROW_COLUMNS`, one value a cell)."""
    from pqbench.analysis.ratios import ROW_COLUMNS

    return delimited.csv_text(ROW_COLUMNS, rows)


def followed_change(a: Across) -> str:
    """How the numerator's speed against the denominator moved from one side to the other,
    in the words of `compare`'s change (the outcome compares time ratios, after over
    before: its inverse is the relative speed): "relatively 1.05x faster [1.02–1.08]",
    "inconclusive: relatively 1.01x faster [1.03x slower – 1.05x faster]", "too few runs:
    relatively 1.01x faster [no interval]", "no change (within ±5 %) [...]"."""
    o = a.outcome
    low, high = numbers.inverse(o.ci_high), numbers.inverse(o.ci_low)
    if o.verdict == "no change":
        return f"{numbers.no_change(o.threshold)} {numbers.bracket(low, high, directed=True)}"
    moved = "relatively " + numbers.change_beside_interval(numbers.inverse(o.ratio), low, high)
    return moved if o.changed else f"{o.verdict}: {moved}"


def followed_lines(found: Sequence[Across]) -> list[str]:
    """"ML-KEM-768 [liboqs] against X25519 [libcrypto], per exchange: 3.70x faster → 3.23x
    faster; relatively 1.15x slower [1.10–1.20] (99 % CI, 5 and 5 runs)": each side's
    answer as `speed` words it, then how it moved."""
    return [f"{a.name}: {numbers.time_speed(a.before)} → {numbers.time_speed(a.after)}; "
            f"{followed_change(a)} ({level(a.outcome.ci_level)}, "
            f"{a.outcome.units_before} and {a.outcome.units_after} runs)" for a in found]

"""What it costs in memory: one call's peak stack, peak heap and allocations, beside its
time and the bytes it puts on (or takes off) the wire; and memory compared between runs.

The figures are `pqbench memory` runs' (see pqbench/measure/memory); the time is the newest speed
run's µs/op of the same (algorithm, implementation, operation), where it was measured.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from pqbench.analysis import memory as memory_compare
from pqbench.data.record.memory import MemoryFigure, figures
from pqbench.data.record.results import Measurement, Run
from pqbench.views import comparisons, numbers
from pqbench.views import markdown as md
from pqbench.views.report.base import Section
from pqbench.views.report.comparison import groups_for

#: The bytes on the wire an operation produces or consumes.
_WIRE = {"keygen": "public_key", "encaps": "ciphertext", "decaps": "ciphertext",
         "decaps-reject": "ciphertext", "sign": "signature", "verify": "signature",
         "encrypt": "ciphertext", "decrypt": "ciphertext", "derive": "public_key"}
#: A thread stack common in embedded systems and kernels (FreeRTOS tasks and Zephyr
#: threads are configured smaller still; Linux kernel stacks are 16 KiB on x86-64).
EMBEDDED_STACK = 64 * 1024


def _wire(fig: MemoryFigure) -> int | None:
    key = _WIRE.get(fig.operation)
    return fig.sizes.get(key) if key else None


def _figure_text(fig: MemoryFigure, metric: str) -> str:
    span = fig.span(metric)
    if span is None:
        return md.MISSING
    return comparisons.span(span)


def _bullets(found: Sequence[MemoryFigure]) -> list[str]:
    over = [f for f in found if f.stack_bytes > EMBEDDED_STACK]
    lines = []
    if found:
        deepest = max(found, key=lambda f: f.stack_bytes)
        lines.append(f"- The deepest stack: {_name(deepest)}, "
                     f"{numbers.count(deepest.stack_bytes)} bytes.")
    if over:
        names = ", ".join(f"{_name(f)} ({numbers.byte_count(f.stack_bytes)})" for f in over)
        lines.append(f"- More than a {numbers.size(EMBEDDED_STACK)} thread stack: {names}.")
    return lines


def _name(fig: MemoryFigure) -> str:
    """`ML-DSA-87 sign (liboqs)`, escaped: names may come from an imported file."""
    return md.text(f"{fig.algorithm} {fig.operation} ({fig.implementation})")


def section(memory_run: Run | None, speed_rows: Sequence[Measurement]) -> Section | None:
    """The memory table of the newest memory run, with µs/op from the speed rows."""
    if memory_run is None:
        return None
    found = figures([memory_run])
    if not found:
        return None
    times = {(m.algorithm, m.implementation, m.operation): m.us_per_op
             for m in speed_rows if m.block_size is None and m.rounds}
    # Settings may come from an imported file: shown as literal text.
    calls = md.text(memory_run.settings.get("calls"))
    harness = md.text(memory_run.settings.get("harness_stack_bytes"))
    timed = any(f.key in times for f in found)
    headers = ["algorithm", "implementation", "operation", "stack B", "heap peak B",
               "allocations", *(["µs/op"] if timed else []), "wire"]
    rows = [[f.algorithm, f.implementation, f.operation, _figure_text(f, "stack_bytes"),
             _figure_text(f, "heap_bytes"), _figure_text(f, "allocations"),
             *([md.duration_us(times.get(f.key))] if timed else []), md.byte_count(_wire(f))]
            for f in found]
    heap = ("heap: the most bytes the call had requested and not yet freed, counted by an "
            "LD_PRELOAD allocator interposer on the measuring thread"
            if memory_run.settings.get("heap_counted")
            else f"heap not counted ({md.text(memory_run.settings.get('heap'))})")
    time = (" Time: µs per operation from the speed run of this report, where it measured "
            "the same row." if timed else "")
    parts = [
        md.heading(2, "What it costs in memory"),
        f"One call of each operation, on inputs prepared and checked as for timing (decaps "
        f"of a valid ciphertext; decaps-reject of one with a bit changed, FIPS 203 implicit "
        f"rejection), from run {md.inline_code(memory_run.run_id)}. A figure is the largest "
        f"of {calls} calls; a range means the calls differed. Stack: the high-water mark on "
        f"a painted stack, less the harness's own {harness} bytes; {heap}.{time} Wire: the "
        "bytes the operation sends or receives (public key, ciphertext or signature).",
        "\n".join(_bullets(found)),
        md.table(headers, rows, ["l", "l", "l", "r", "r", "r", *(["r"] if timed else []), "r"]),
    ]
    return Section("\n\n".join(parts))


def comparison_sections(runs: Sequence[Run], by: str | None) -> list[Section]:
    """Memory runs, each group against the next: every figure that changed or varies."""
    memory_runs = [r for r in runs if r.kind == "memory"]
    groups = groups_for(memory_runs, by)
    if len(groups) < 2:
        return []
    parts = [md.heading(2, "Memory compared"),
             f"Method: {memory_compare.METHOD}. Ratios are largest after / largest before."]
    for (before_name, before), (after_name, after) in itertools.pairwise(groups):
        changes = memory_compare.compare_memory(before, after)
        shown = [c for c in changes if c.verdict != "same"]
        parts.append(md.heading(3, f"{before_name} → {after_name}"))
        counts = {v: sum(1 for c in changes if c.verdict == v) for v in memory_compare.VERDICTS}
        parts.append(f"{len(changes)} figures compared: "
                     + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + ".")
        if shown:
            parts.append(md.render(comparisons.memory_table(shown)))
    return [Section("\n\n".join(parts))]

"""Where and how the figures were measured: environment, method, what was not measured."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from pqbench.data.record.results import Run
from pqbench.platform.untrusted import printable
from pqbench.views import markdown as md
from pqbench.views import numbers
from pqbench.views import runs as views
from pqbench.views.report.base import Section

#: Environments side by side up to this many runs; beyond it one row per run.
_WIDE_LIMIT = 4


def _text(value: Any) -> str:
    if value in (None, "", [], {}):
        return md.MISSING
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def _fields(runs: Sequence[Run]) -> list[tuple[str, Any]]:
    """(row title, function of a run) for the environment table."""
    libraries = sorted({key for run in runs for key in run.environment.libraries})
    fields: list[tuple[str, Any]] = [
        ("run", lambda r: r.run_id),
        ("label", lambda r: r.label),
        ("started (UTC)", lambda r: views.utc_time(r.started_at)),
        ("status", lambda r: r.status),
        ("OS", lambda r: r.environment.os_name),
        ("OS build", lambda r: r.environment.os_build),
        ("kernel build", lambda r: r.environment.kernel_build),
        ("architecture", lambda r: r.environment.arch),
        ("CPU", lambda r: r.environment.cpu_model),
        ("CPUs", lambda r: r.environment.cpu_count),
        ("crypto CPU flags", lambda r: r.environment.cpu_flags),
        ("capability knobs", lambda r: ", ".join(r.environment.knobs_set) or "none"),
        ("testbed", lambda r: r.environment.testbed),
    ]
    if any(r.environment.libc for r in runs):  # older runs did not record it
        fields.insert(7, ("C library", lambda r: r.environment.libc))
    if any(r.environment.machine_state for r in runs):  # older runs did not record it
        fields.insert(4, ("machine load", _machine_load))
    fields += [(f"{lib}", lambda r, lib=lib: r.environment.library(lib)) for lib in libraries]
    if any(r.environment.tls for r in runs):
        fields.append(("TLS libraries", _tls_libraries))
    return fields


def _machine_load(run: Run) -> str | None:
    """Others' share of the cores, steal and load averages over the run, in one cell."""
    env = run.environment
    state = env.machine_state
    if not state:
        return None
    parts = [f"others {numbers.share(env.others_cpu)}"]
    if env.steal is not None:
        parts.append(f"steal {numbers.share(env.steal)}")
    start, end = state.get("loadavg_start"), state.get("loadavg_end")
    if isinstance(start, list) and isinstance(end, list) and start and end:
        parts.append(f"load {numbers.number(start[0])} → {numbers.number(end[0])}")
    return ", ".join(parts) + (" (under load)" if views.load_note(run) else "")


def _tls_libraries(run: Run) -> str | None:
    """`pqbench tls` runs: each TLS implementation and the library behind it."""
    return "; ".join(f"{name}: {info.get('library') or info.get('unavailable')}"
                     for name, info in run.environment.tls.items()
                     if isinstance(info, Mapping)) or None


def environment(runs: Sequence[Run]) -> Section:
    """A compact table: one column per run, or one row per run in a long history; folded
    (it is for the reader who checks, not the one who skims)."""
    fields = _fields(runs)
    if len(runs) <= _WIDE_LIMIT:
        headers = ["", *(f"run {i + 1}" for i in range(len(runs)))] if len(runs) > 1 \
            else ["", "value"]
        rows = [[title, *(_text(get(run)) for run in runs)] for title, get in fields]
        table = md.table(headers, rows)
    else:
        wanted = ("run", "label", "started (UTC)", "OS build", "crypto CPU flags",
                  "capability knobs", "system_libcrypto", "liboqs", "cryptography")
        chosen = [(t, g) for t, g in fields if t in wanted]
        table = md.table([t for t, _ in chosen],
                         [[_text(g(run)) for _, g in chosen] for run in runs])
    summary = (f"OS, CPU, flags and library versions of the {len(runs)} runs"
               if len(runs) > 1 else "OS, CPU, flags and library versions of the run")
    return Section("\n\n".join([md.heading(2, "Environment"), md.details(summary, table)]))


def _seconds(value: Any) -> str:
    """A setting in seconds as the user gave it: "0.25 s", "1 s"."""
    return f"{numbers.number(float(value), trim=True)} s"


def _settings_line(run: Run) -> str:
    s = run.settings
    seconds, rounds = s.get("seconds"), s.get("rounds")
    pieces = []
    if seconds is not None and rounds:
        pieces.append(f"{_seconds(seconds)} per operation split over {rounds} "
                      f"rounds of {_seconds(float(seconds) / int(rounds))}")
    session = s.get("ab")
    if isinstance(session, Mapping):
        pinned = (f", both workers pinned to CPU {session.get('cpu')}" if session.get("pinned")
                  else ", workers not pinned")
        pieces.append(f"side {str(session.get('side', '?')).upper()} "
                      f"({session.get('spec')}) of paired `ab` session {session.get('session')} "
                      f"against {session.get('other_spec')}: rounds of "
                      f"{_seconds(session.get('round_seconds') or 0)}, A and B in random "
                      f"order within each pair{pinned}, compared in CPU time")
    if s.get("warmup") is not None:
        pieces.append(f"{_seconds(s['warmup'])} untimed warm-up")
    if s.get("block_sizes") and any(m.block_size for m in run.measurements):
        pieces.append("block sizes " + ", ".join(str(b) for b in s["block_sizes"]) + " B")
    if run.kind == "tls":
        pieces += [f"{key} {', '.join(map(str, value)) if isinstance(value, list) else value}"
                   for key, value in sorted(s.items())
                   if key in ("transports", "operations", "mtu", "initial_window",
                              "intermediates") and value is not None]
    if run.kind == "files":
        pieces += [f"{key} {value}" for key, value in sorted(s.items())
                   if key in ("algorithm", "jobs", "cache") and value is not None]
    if run.kind == "memory":
        pieces.append(f"{s.get('calls')} calls per operation, each measured on its own; "
                      f"heap {'counted' if s.get('heap_counted') else 'not counted'}")
    return "; ".join(pieces) if pieces else "settings not recorded"


_SPEED_METHOD = (
    "Each (algorithm, implementation) pair passed its correctness checks (round trip, tamper "
    "and known-answer checks) before it was timed; keys, messages and buffers were made "
    "before the clock started. Each operation was warmed up, then timed for several rounds, "
    "taken in cycles: every cycle ran one round of every row, in a fresh random order, so "
    "any two rows are paired by cycle. Each round is timed in the measuring thread's CPU "
    "time (as `openssl speed` counts; `--elapsed` for the wall clock): the table titles name "
    "the time base. Figures are the median over rounds; the spread is a distribution-free "
    "confidence interval for the median from order statistics (Hollander, Wolfe & Chicken, "
    "§3.6), at the level its column names. A ratio of two rows is paired: the "
    "Hodges–Lehmann estimate of the per-cycle log cost ratios with Tukey's signed-rank "
    "interval, at 99 % where the cycles allow. `liboqs` and `libcrypto` rows come from "
    "pqbench's C loop (the loop of liboqs's speed_kem and `openssl speed`, with rdtsc "
    "reference cycles on x86-64); `liboqs-python` and `cryptography` rows from the Python "
    "loop, which reads the clock once per batch of about a millisecond. Comparisons take the "
    "run as the unit (Kalibera & Jones 2013): one estimate per run (the median of its "
    "rounds), levels as geometric means of run estimates, a two-level bootstrap interval and "
    "an exact Mann–Whitney U test over runs; the two sides of a `pqbench ab` session are "
    "compared pair by pair (Hodges–Lehmann estimate, Wilcoxon signed-rank test and "
    "interval).")
_FILES_METHOD = (
    "A file row is one pass over the file: its bytes divided by the pass's wall time, with "
    "reading overlapped with hashing; the cache mode and the share of pages resident when "
    "the pass started are recorded with each row.")


_TLS_METHOD = (
    "A TLS row is one (group + certificate, library, transport, operation): rounds of real "
    "TLS 1.3 handshakes, each client connection verifying the server's chain and name. "
    "Before a row was timed, one recorded handshake was parsed (ServerHello key share, "
    "CertificateVerify scheme, certificate chain) and compared with the cell asked for. "
    "Rates are handshakes per second, median over rounds; the CPU split is each side's "
    "thread CPU time per handshake.")


def method(runs: Sequence[Run]) -> Section:
    parts: list[str] = [md.heading(2, "How this was measured")]
    if any(r.kind == "speed" for r in runs):
        parts.append(_SPEED_METHOD)
    if any(r.kind == "files" for r in runs):
        parts.append(_FILES_METHOD)
    if any(r.kind == "tls" for r in runs):
        parts.append(_TLS_METHOD)
    for run in runs:
        measured = len(run.measurements)
        checks = sum(len(v.checks) for v in run.verifications)
        passed = f", {checks} checks passed" if checks else ""
        parts += [f"**Run {md.inline_code(run.run_id)}** ({md.text(run.kind)}, "
                  f"{md.text(run.status)}, {measured} measurements{passed}): "
                  f"{md.text(_settings_line(run))}. "
                  + ("Reproduce with:" if _one_invocation(run.command) else
                     "Its stored command is not one pqbench invocation (an imported run: "
                     "unverified), so it is not shown as one to run.")]
        if _one_invocation(run.command):
            shown, shell = _runnable(run.command)
            parts.append(md.code_block(shown, shell))
        loaded = views.load_note(run)
        if loaded is not None:
            parts.append(f"**Run {md.inline_code(run.run_id)} was {md.text(loaded)}.**")
    return Section("\n\n".join(parts))


def _runnable(command: str) -> tuple[str, str]:
    """A stored command (one invocation, `_one_invocation`) as it may be shown and pasted,
    and its shell. A word holding a control character (a tab or an escape in a file name)
    is written in bash's $'...' quoting (\\xNN, \\uNNNN in a UTF-8 locale): shown as it is, the
    character would be dropped and the line would name another file."""
    words = shlex.split(command)
    if all(printable(word) == word for word in words):
        return command, "sh"
    return " ".join(shlex.quote(word) if printable(word) == word else _ansi_c(word)
                    for word in words), "bash"


def _ansi_c(word: str) -> str:
    def escaped(char: str) -> str:
        if char in "\\'":
            return "\\" + char
        if printable(char) == char:
            return char
        code = ord(char)  # above 0x7f, bash's \\xNN would be a byte, not the character
        return (f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code <= 0xFFFF
                else f"\\U{code:08x}")

    return "$'" + "".join(escaped(char) for char in word) + "'"


def _one_invocation(command: str) -> bool:
    """Whether a stored command is one pqbench invocation as pqbench writes it
    (`untrusted.command_line`: shell-quoted words, the first `pqbench`), so that pasting
    it runs pqbench and nothing else. An imported run's command is whatever its file
    said: a second line, a `;` or a `$(...)` outside quotes would run something else."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and words[0] == "pqbench" and shlex.join(words) == command


def not_measured(runs: Sequence[Run]) -> Section | None:
    """What every run skipped and why, each side of a comparison included (Debian 12's
    "needs OpenSSL 3.5" beside Debian 13's failures), with the runs it happened in."""
    if not any(run.problems for run in runs):
        return None
    return Section("\n\n".join([
        md.heading(2, "Not measured"),
        "Pairs pqbench skipped, and why (support is asked of each implementation, not "
        "assumed).",
        md.render(views.problems_by_run_table(runs))]))


def measurements(run: Run, other: tuple[str, Run] | None = None, name: str | None = None
                 ) -> Section | None:
    """Every row of the run with its spread, for readers who want the detail; with `other`
    (an `ab` session's other side, named) and `name` (this side's), both sides, each
    folded under its name."""
    if not run.measurements:
        return None
    sides = [(name, run), *([other] if other is not None else [])]
    ids = " and ".join(md.inline_code(r.run_id) + (f" ({md.text(n)})" if n else "")
                       for n, r in sides)
    folded = [md.details((f"{md.text(n)}: " if n else "") + f"{len(r.measurements)} rows",
                         md.render(views.measurements_table(r)))
              for n, r in sides if r.measurements]
    return Section("\n\n".join([
        md.heading(2, "All measurements"),
        f"Every row of run{'s' if len(sides) > 1 else ''} {ids}: median operations per "
        "second over the rounds, the half-width of its confidence interval (at the level "
        "the row's CI level names) and the coefficient of variation across rounds.",
        *folded]))

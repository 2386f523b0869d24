"""One run as tables and lines: every measurement, what was not measured, what a binding
costs, and the rows too unsteady to trust. Defined once for the terminal and the report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pqbench.analysis.exchanges import implementations_of
from pqbench.analysis.explain import configuration
from pqbench.data.record.fingerprint import LOAD_THRESHOLD, STEAL_THRESHOLD, taken_under_load
from pqbench.data.record.results import Measurement, Problem, Run
from pqbench.views import numbers
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:
    from pqbench.analysis.figures import RunFigures

#: Sizes a public-key row shows, by their short names.
_SIZES = {"public_key": "pk", "secret_key": "sk", "ciphertext": "ct", "signature": "sig",
          "shared_secret": "ss"}
#: What a cipher or hash key buys, by short names.
_BITS = (("key_bits", "key"), ("security_bits", "sec"), ("quantum_security_bits", "PQ"))


def _facts(m: Measurement) -> str:
    """A row's sizes ("pk 1184 sk 2400 ...") and its key and security bits ("key 256 sec
    256 PQ 128"; a post-quantum scheme's from its NIST category: "sec 192 PQ 96")."""
    sizes = " ".join(f"{_SIZES[k]} {v}" for k, v in m.sizes.items() if k in _SIZES)
    bits = " ".join(f"{short} {m.attributes[k]}" for k, short in _BITS
                    if m.attributes.get(k) is not None)
    return "; ".join(part for part in (sizes, bits) if part)


def operation(name: str, block_size: int | None) -> str:
    """An operation and the block it processes: "decaps", "encrypt @16384B"."""
    return f"{name} @{block_size}B" if block_size else name


def spread(m: Measurement) -> tuple[float | None, float | None]:
    """Half-width of the median's interval (`interval_level`) as a fraction of it, and the
    CV."""
    if len(m.samples) < 2:
        return None, None
    s = m.summary
    if not s.median:
        return None, None
    return (s.ci_high - s.ci_low) / 2 / s.median, s.cv


def row_level(m: Measurement) -> float | None:
    """The true level of a row's median interval (None under two rounds)."""
    return m.summary.ci_level if len(m.samples) >= 2 else None


def levels_said(rows: Sequence[Measurement]) -> str | None:
    """"±CI: the median's 97.9 % interval" where every row's interval has that level; None
    where rows differ (rounds differ), and each row then states its own."""
    levels = {numbers.share(level) for m in rows if (level := row_level(m)) is not None}
    if len(levels) == 1:
        return f"±CI: the median's {levels.pop()} interval"
    return None if levels else ""


def interval_level(rows: Sequence[Measurement]) -> str:
    """The true level of the rows' median intervals ("95.7 %"), the lowest where rounds
    differ: a distribution-free interval of a median has the coverage its order statistics
    give, not a round 95 %."""
    levels = [m.summary.ci_level for m in rows if len(m.samples) >= 2]
    return numbers.share(min(levels)) if levels else "95 %"


def time_base(rows: Sequence[Measurement]) -> str:
    """The clock of the rows' rates, as a table header says it: "CPU time", "wall time"."""
    bases = {m.time_base for m in rows}
    return {"cpu": "CPU time", "wall": "wall time"}[bases.pop()] if len(bases) == 1 \
        else "CPU or wall time per row (JSON: time_base)"


def measurements_table(run: Run, rows: Sequence[Measurement] | None = None) -> Table:
    """Every row of a run (or `rows` of it): rate, time per op, spread, cycles, rounds and
    sizes; the long form, one line per block size. The title names the time base."""
    chosen = list(run.measurements if rows is None else rows)
    said = levels_said(chosen)
    columns = (Column("algorithm"), Column("implementation", short="impl."),
               Column("operation"), Column("ops/s", "si"), Column("µs/op", "number"),
               Column("bytes/s", "rate", "bytes/s"),
               Column("±CI", "plus_minus", priority=1),
               Column("CI level", align="right", priority=2),
               Column("CV", "percent", priority=2), Column("cycles/op", "si", priority=2),
               Column("rounds", "count", priority=3),
               Column("sizes (bytes) / key, security bits", priority=3, short="sizes"))
    found = []
    for m in chosen:
        half, cv = spread(m)
        per_op = m.unit == "op" and bool(m.rounds)
        found.append((m.algorithm, m.implementation, operation(m.operation, m.block_size),
                      m.ops_per_sec if per_op else None, m.us_per_op if per_op else None,
                      m.bytes_per_sec, half, None if said is not None
                      else numbers.share(row_level(m)), cv, m.cycles_per_op, len(m.rounds),
                      _facts(m)))
    return Table(f"{heading(run)}, {time_base(chosen)}" + (f"; {said}" if said else ""),
                 columns, tuple(found))


def heading(run: Run, what: str = "") -> str:
    """A run's table heading: "pqbench run ID (complete) on m01 (AMD EPYC 9B14, 2 cores,
    Google Compute Engine)", the machine named so that two outputs of two hosts never read
    as one machine's change, and what an OpenSSL capability knob or `--mask` hid (", with
    AES-NI hidden"): a masked run's figures never read as the machine's own."""
    configured = configuration(run.environment)
    return (f"pqbench {what + ' ' if what else ''}run {run.run_id} ({run.status}) on "
            f"{run.environment.machine_name}" + (f", with {configured}" if configured else ""))


def throughput_table(rows: Sequence[Measurement], title: str | None = None,
                     sides: Sequence[tuple[str | None, Sequence[Measurement]]] = ()
                     ) -> Table:
    """Ciphers and hashes as `openssl speed` prints them: one line per (algorithm,
    implementation, operation), its key bits, one column per block size, in MB/s (10^6
    bytes/s), then the security bits. Where room is short the smallest, the largest and
    the block nearest 1 KiB stay, and the key bits (a key-size question needs them). The
    terminal and the report draw this one table. With `sides` (an `ab` session's two
    runs), each line once per side, the sides of a line together."""
    sided = [(name, list(mine)) for name, mine in sides] or [(None, list(rows))]
    every = [m for _, mine in sided for m in mine]
    sizes = sorted({m.block_size for m in every if m.block_size})
    kept = {sizes[0], sizes[-1], min(sizes, key=lambda s: abs(s - 1024))} if sizes else set()
    order = implementations_of(every)
    names = [name for name, _ in sided]
    lines: dict[tuple[str, str, str, int], dict[int, Measurement]] = {}
    for position, (_, mine) in enumerate(sided):
        for m in mine:
            if m.block_size:
                lines.setdefault((m.algorithm, m.implementation, m.operation, position),
                                 {})[m.block_size] = m
    ordered = sorted(lines, key=lambda k: (k[0], order.index(k[1]), k[2], k[3]))
    said = levels_said(every)
    two = len(sided) > 1
    # The key bits beside the name, the last of the optional columns to go: a key-size
    # question (AES-256-XTS against AES-128-XTS) needs them more than a sixth block size.
    columns = (*((Column("side", wrap=True),) if two else ()),
               Column("algorithm"), Column("implementation", short="impl."),
               Column("operation"), Column("key bits", "count", priority=1),
               *(Column(numbers.size(s), "number", priority=0 if s in kept else 1)
                 for s in sizes),
               Column("±CI (widest)", "plus_minus", short="±CI"),
               Column("CI level", align="right", priority=2),
               Column("CV (largest)", "percent", priority=1, short="CV"),
               Column("security bits", "count", priority=2, short="sec. bits"),
               Column("quantum security bits", "count", priority=2, short="PQ bits"))
    body = []
    for key in ordered:
        alg, impl, op, position = key
        by_size = lines[key]
        first = next(iter(by_size.values()))
        rates = [by_size[s].bytes_per_sec if s in by_size else None for s in sizes]
        spreads = [spread(m) for m in by_size.values()]
        halves = [h for h, _ in spreads if h is not None]
        cvs = [cv for _, cv in spreads if cv is not None]
        levels = [lv for m in by_size.values() if (lv := row_level(m)) is not None]
        body.append((*((names[position],) if two else ()), alg, impl, op,
                     first.attributes.get("key_bits"),
                     *(None if r is None else r / 1e6 for r in rates),
                     max(halves, default=None),
                     None if said is not None or not levels else numbers.share(min(levels)),
                     max(cvs, default=None),
                     *(first.attributes.get(k) for k, _ in _BITS[1:])))
    heading = title or (f"ciphers and hashes: MB/s (10^6 bytes/s) of {time_base(every)} by "
                        "block size")
    return Table(heading + (f"; {said}, the widest of the row's block sizes" if said else ""),
                 columns, tuple(body))


_PROBLEM_COLUMNS = (Column("algorithm"), Column("implementation", short="impl."),
                    Column("operation"), Column("why", wrap=True))


def _problem_key(p: Problem) -> tuple[str, str, str, str]:
    return (p.algorithm, p.implementation, p.operation or "all", f"{p.kind}: {p.reason}")


def problems_table(problems: Iterable[Problem]) -> Table:
    """What was not measured and why; the same problem on several runs is listed once."""
    return Table("not measured", _PROBLEM_COLUMNS, tuple(dict.fromkeys(map(_problem_key,
                                                                           problems))))


def problems_by_run_table(runs: Sequence[Run]) -> Table:
    """What every run skipped and why, each problem once; with several runs, the runs it
    happened in ("every run", or their labels)."""
    where: dict[tuple[str, str, str, str], list[str]] = {}
    for run in runs:
        for p in run.problems:
            names = where.setdefault(_problem_key(p), [])
            if run_name(run) not in names:
                names.append(run_name(run))
    everyone = set(map(run_name, runs))
    if len(everyone) < 2:
        return Table("not measured", _PROBLEM_COLUMNS, tuple(where))
    return Table("not measured", (*_PROBLEM_COLUMNS, Column("in", wrap=True)), tuple(
        (*key, "every run" if set(names) == everyone else ", ".join(names))
        for key, names in where.items()))


def run_name(run: Run) -> str:
    """A run as a reader knows it: its label, else its id."""
    return run.label or run.run_id


def binding_notes(figures: RunFigures) -> list[str]:
    """What a reader must know before reading cryptography against libcrypto: where
    cryptography bundles another OpenSSL than the system's, the ratio is that difference
    too (`analysis.ratios` gives the binding's paired ratio)."""
    if figures.bundled is None:
        return []
    bundled, system = figures.bundled
    return [f"note: cryptography bundles {bundled}, libcrypto is {system}: "
            "cryptography against libcrypto measures both the binding and that difference"]


#: How a row's operation holds the public or peer key it takes (`public_key_form`).
_PUBLIC_KEY_FORMS = {"encoded": "decoded by each call", "object": "parsed once, outside the clock"}


def key_form_notes(rows: Sequence[Measurement]) -> list[str]:
    """One note per operation whose rows take the public key in different forms (a
    foreign worker's `public_key_form`): a ratio between such rows includes decoding the
    key on one side only."""
    forms: dict[tuple[str, str], dict[str, list[str]]] = {}
    for m in rows:
        form = m.attributes.get("public_key_form")
        if isinstance(form, str):
            by_form = forms.setdefault((m.algorithm, m.operation), {})
            by_form.setdefault(form, []).append(m.implementation)
    notes = []
    for (algorithm, op), by_form in forms.items():
        if len(by_form) < 2:
            continue
        said = "; ".join(f"{_PUBLIC_KEY_FORMS.get(form, form)} in {', '.join(names)}"
                         for form, names in sorted(by_form.items()))
        notes.append(f"note: {algorithm} {op} takes the public key {said} "
                     "(public_key_form): a ratio between them includes that decoding")
    return notes


def load_note(run: Run) -> str | None:
    """One line for a run taken while other work ran (`record.fingerprint.taken_under_load`):
    how much of the machine others took, the hypervisor's steal, the load averages; None
    for a quiet run or one recorded before pqbench kept its load."""
    env = run.environment
    if not taken_under_load(env):
        return None
    state = env.machine_state
    parts = []
    if env.others_cpu is not None:
        cores = f" of {state['cpus']} cores" if isinstance(state.get("cpus"), int) else ""
        parts.append(f"other processes took {numbers.share(env.others_cpu)}{cores}")
    if env.steal is not None and env.steal >= STEAL_THRESHOLD:
        parts.append(f"the hypervisor stole {numbers.share(env.steal)}")
    start, end = state.get("loadavg_start"), state.get("loadavg_end")
    if isinstance(start, list) and isinstance(end, list) and start and end:
        parts.append(f"load {numbers.number(start[0])} → {numbers.number(end[0])}")
    return (f"taken under load: {', '.join(parts)} (flagged from "
            f"{numbers.share(LOAD_THRESHOLD)} of the machine or {numbers.share(STEAL_THRESHOLD)}"
            " stolen); its figures may be slower than on a quiet machine")


def unstable_rows(figures: RunFigures) -> list[str]:
    """One line per row whose spread or trend makes its figure shaky (`stability`)."""
    return [f"{u.key.algorithm} {operation(u.key.operation, u.key.block_size)} "
            f"[{u.key.implementation}]: " + "; ".join(u.problems) for u in figures.unsteady]


def tls_table(run: Run) -> Table:
    """A `pqbench tls` run: one line per (cell, library, transport, operation)."""
    from pqbench.measure.tls.runs import LOOPBACK_SUFFIX

    rows = []
    for m in run.measurements:
        a = m.attributes
        half, _cv = spread(m)
        rows.append((a.get("group"), a.get("certificate"),
                     m.implementation.removesuffix(LOOPBACK_SUFFIX), a.get("transport"),
                     m.operation, m.ops_per_sec, half, a.get("client_cpu_us"),
                     a.get("server_cpu_us"), a.get("client_bytes"), a.get("server_bytes"),
                     m.sizes.get("certificate_chain"),
                     f"{a.get('round_trips')} ({a.get('server_segments')})"))
    return Table(f"{heading(run, 'tls')}: TLS 1.3 handshakes, "
                 f"{time_base(run.measurements)}",
                 (Column("group"), Column("certificate", short="cert."), Column("impl."),
                  Column("transport"), Column("op"), Column("hs/s", "number"),
                  Column(f"±CI ({interval_level(run.measurements)})", "plus_minus",
                         priority=1),
                  Column("client µs", "number", priority=3),
                  Column("server µs", "number", priority=3),
                  Column("client B", "count", priority=2),
                  Column("server B", "count", priority=2),
                  Column("chain B", "count", priority=4),
                  Column("RTT (segs)", align="right", priority=4)), tuple(rows))


#: `pqbench runs --csv`: one line per stored run and algorithm it measured (tidy: one
#: value a cell), oldest first; a run's own facts repeat on each of its lines.
RUNS_CSV = ("run_id", "kind", "started_at", "status", "label", "os_build", "hostname",
            "rows", "algorithm")


def runs_csv_rows(info: Any, algorithms: Sequence[str]) -> list[tuple[Any, ...]]:
    facts = (info.run_id, info.kind, info.started_at, info.status, info.label, info.os_build,
             info.hostname, info.measurements)
    return [(*facts, name) for name in algorithms] or [(*facts, None)]


def runs_table(listed: Sequence[Any], location: str,
               algorithms: dict[str, list[str]] | None = None, older: int = 0) -> Table:
    """`pqbench runs`: one line per stored run (`store.RunInfo`) in the order given (the
    newest first), with its label and the algorithms it measured, so that two runs of one
    kind can be told apart; `older` runs are not listed. The run id (which users copy)
    always shows whole; its start is in it, so the start column goes first where room is
    short."""
    algorithms = algorithms or {}
    title = f"runs in {location}" + (f", newest {len(listed)} ({older} older)" if older
                                     else "")
    return Table(title,
                 (Column("run id"), Column("kind", priority=1),
                  Column("started (UTC)", priority=2), Column("status", priority=3),
                  Column("label", wrap=True), Column("algorithms", wrap=True, priority=2),
                  Column("OS build", priority=1),
                  Column("host", priority=4), Column("rows", "count", priority=3)),
                 tuple((r.run_id, r.kind, utc_time(r.started_at), r.status, r.label,
                        _names(algorithms.get(r.run_id, [])), r.os_build, r.hostname,
                        r.measurements) for r in listed))


def _names(algorithms: Sequence[str], shown: int = 4) -> str | None:
    """"X25519, ML-KEM-768", "SHA-256, ... (9 more)"."""
    if not algorithms:
        return None
    more = len(algorithms) - shown
    return ", ".join(algorithms[:shown]) + (f" (+{more} more)" if more > 0 else "")


def run_header(run: Run) -> str:
    """`show`'s first line: the run, its kind and status, when (in UTC, as `runs` lists it)
    and where it ran, and its label."""
    return (f"run {run.run_id}: {run.kind}, {run.status}, started "
            f"{utc_time(run.started_at)} UTC on {run.environment.machine_name}"
            + (f", label {run.label}" if run.label else ""))


def utc_time(stamp: str) -> str:
    """An ISO 8601 time as "2026-11-22 19:38:26" in UTC (as it is stored, when it has no
    offset or cannot be read)."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return stamp
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")

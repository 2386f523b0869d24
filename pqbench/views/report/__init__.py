"""Runs -> a Markdown report with PNG charts beside it (`pqbench report`).

Building is pure (data -> text and chart descriptions); `write` is the only I/O. The same
runs give the same bytes: nothing in the report comes from the clock or the machine that
renders it, only from the stored data.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pqbench.analysis import ratios
from pqbench.analysis.explain import configuration
from pqbench.analysis.figures import RunFigures, run_figures
from pqbench.analysis.noise import NoiseModel
from pqbench.app.report import Build, Inputs
from pqbench.data.record.results import Measurement, Run
from pqbench.data.record.runs import run_order
from pqbench.platform import interrupts
from pqbench.platform.errors import InputFileError
from pqbench.views import markdown as md
from pqbench.views import numbers
from pqbench.views.report import bulk, comparison, context, memory, publickey, series, tls
from pqbench.views.report.base import Section
from pqbench.views.report.charts import Chart, render
from pqbench.views.runs import utc_time

__all__ = ["Report", "Section", "build", "comparison_sections", "default_path", "of_inputs",
           "write"]

REPORT_NAME = "report.md"


@dataclass(frozen=True)
class Report:
    markdown: str
    charts: tuple[Chart, ...]


def ordered(runs: Sequence[Run]) -> list[Run]:
    """Oldest first, as a history reads."""
    return sorted(runs, key=run_order)


def _newest(runs: Sequence[Run], kind: str) -> Run | None:
    of_kind = [r for r in ordered(runs) if r.kind == kind]
    return of_kind[-1] if of_kind else None


def _title(runs: Sequence[Run], fleet: tuple[int, str] | None = None) -> str:
    if fleet is not None:
        return f"pqbench report: {numbers.count(fleet[0])} runs by {fleet[1]}"
    if len(runs) == 1:
        run = runs[0]
        return f"pqbench report: {run.label or run.run_id}"
    if _one_session(runs):
        a, b = ordered(runs)
        return f"pqbench report: {a.label or a.run_id} → {b.label or b.run_id}"
    return f"pqbench report: {len(runs)} runs"


def _one_session(runs: Sequence[Run]) -> bool:
    """Whether `runs` are exactly the two sides of one `pqbench ab` session."""
    from pqbench.analysis import pairing

    return len(runs) == 2 and pairing.session_pairs(*([r] for r in ordered(runs))) is not None


def _hidden(run: Run) -> str:
    """" (with AES-NI hidden)" where a knob or --mask hid a capability from the run, as
    Markdown; else nothing: a masked run's figures never read as the machine's."""
    said = configuration(run.environment)
    return f" (with {md.text(said)})" if said else ""


def _shown_runs(shown: Sequence[Run]) -> str:
    """The runs the result tables come from, each with what a knob hid in it."""
    return ", ".join(md.inline_code(r.run_id) + _hidden(r) for r in shown)


def _introduction(runs: Sequence[Run], shown: Sequence[Run],
                  fleet: tuple[int, str] | None = None) -> str:
    env = runs[-1].environment
    machine = md.text(f"{env.cpu_model or 'an unknown CPU'} ({env.arch or '?'}), "
                      f"{env.os_build or 'unknown OS build'}")
    if fleet is not None:
        return (f"{numbers.count(fleet[0])} runs grouped by {md.inline_code(fleet[1])}, the "
                f"newest on {machine}. The result tables, the environment and the method are from "
                f"run {_shown_runs(shown)}; the comparisons and the history cover the groups "
                "they name.")
    if len(runs) == 1:
        configured = configuration(runs[0].environment)
        return (f"Run {md.inline_code(runs[0].run_id)} on {machine}, started "
                f"{md.text(utc_time(runs[0].started_at))} UTC"
                + (f", with {md.text(configured)}." if configured else "."))
    if _one_session(runs):
        a, b = ordered(runs)
        return (f"The two sides of one `pqbench ab` session on {machine}: A "
                f"({md.text(a.label or a.run_id)}, run {md.inline_code(a.run_id)}) against B "
                f"({md.text(b.label or b.run_id)}, run {md.inline_code(b.run_id)}), measured "
                "in alternation and compared pair by pair; the comparison below gives each "
                "row's verdict, and the result tables after it a line for each side.")
    return (f"{len(runs)} runs, the newest on {machine}. The result tables are from run "
            f"{_shown_runs(shown)}; the comparison covers all of them.")


def build(runs: Sequence[Run], comparison: Sequence[Section] = (),
          fleet: tuple[int, str] | None = None) -> Report:
    """The report for `runs`; `comparison` sections go after the headline results.

    `fleet` (runs stored, the --by field): `runs` are only the newest of each kind, and
    the comparison sections (`report.fleet`) cover that many runs in their groups."""
    if not runs:
        raise ValueError("a report needs at least one run")
    runs = ordered(runs)
    speed_run = _newest(runs, "speed")
    files_run = _newest(runs, "files")
    tls_run = _newest(runs, "tls")
    memory_run = _newest(runs, "memory")
    shown = [r for r in (speed_run, files_run, tls_run, memory_run) if r is not None]
    tls_rows = list(tls_run.measurements) if tls_run else []
    speed_rows = list(speed_run.measurements) if speed_run else []
    cycles = ratios.cycles_of(speed_run) if speed_run else 0
    figures = run_figures(speed_run) if speed_run else None
    # A session's report is its comparison, told first; then both sides, line by line.
    session = _one_session(runs)
    sides: list[publickey.ReportSide] = (
        [(_side_name(r), list(r.measurements), ratios.cycles_of(r)) for r in ordered(runs)]
        if session else [(None, speed_rows, cycles)])
    sections: list[Section | None] = [
        *(comparison if session else ()),
        publickey.headline(sides, ""),
        (publickey.unsteady_section([(_side_name(r), run_figures(r)) for r in runs])
         if session else publickey.ratios_section(figures)),
        publickey.gap(speed_rows, speed_run.environment if speed_run else None, cycles,
                      sides if session else ()),
        memory.section(memory_run, speed_rows),
        bulk.symmetric([(name, rows) for name, rows, _ in sides], ""),
        bulk.files(list(files_run.measurements) if files_run else [], ""),
        tls.section(tls_rows, tls_run.settings if tls_run else {}),
        *(() if session else comparison),
        series.section(runs),
        context.environment(runs),
        context.not_measured(runs),
        context.method(runs),
        *((context.measurements(runs[0], (_side_name(runs[1]), runs[1]),
                                _side_name(runs[0])),) if session else
          (context.measurements(r) for r in shown if r.kind == "speed")),
    ]
    present = [s for s in sections if s is not None]
    sided = [(r, run_figures(r), _side_name(r)) for r in ordered(runs)] if session else []
    text = "\n\n".join([md.heading(1, _title(runs, fleet)), _introduction(runs, shown, fleet),
                        *_summary(present, tls_rows, speed_run, figures, sided),
                        *(s.markdown for s in present)]) + "\n"
    charts = tuple(c for s in present for c in s.charts)
    names = [c.filename for c in charts]
    if len(set(names)) != len(names):
        raise ValueError(f"two charts share a file name: {names}")
    return Report(text, charts)


def _side_name(run: Run) -> str:
    """An `ab` side as the report names it: "A: masked aesni,shani"."""
    from pqbench.analysis import pairing

    found = pairing.ab_session(run) or {}
    side = str(found.get("side", "")).upper()
    name = run.label or run.run_id
    return f"{side}: {name}" if side and not name.startswith(f"{side}:") else name


def _summary(sections: Sequence[Section], tls_rows: Sequence[Measurement],
             newest: Run | None, figures: RunFigures | None,
             sided: Sequence[tuple[Run, RunFigures, str]] = ()) -> list[str]:
    """The bullets at the top: the story across the groups first (one bullet per
    comparison: what changed, what appeared, what moved and why), then the headline
    figures of the newest run, named as such when there is a story before it, or of each
    side of an `ab` session."""
    story = [bullet for s in sections for bullet in s.bullets]
    if sided:
        # Each side's line tells of an implementation both sides measured.
        among = set.intersection(*({(m.algorithm, m.implementation) for m in run.measurements}
                                   for run, _, _ in sided))
        headline = [line for run, found, name in sided
                    for line in publickey.summary(run, found, name, among)]
    else:
        headline = publickey.summary(newest, figures)
    headline += tls.summary(tls_rows)
    blocks = ["\n".join(story)] if story else []
    if headline:
        if sided:
            blocks.append("On each side of the session:")
        elif story and newest is not None:
            blocks.append(f"In the newest run, {md.text(newest.label or newest.run_id)}"
                          f"{_hidden(newest)}:")
        blocks.append("\n".join(headline))
    return blocks


def comparison_sections(runs: Sequence[Run], by: str | None, threshold: float | None = None,
                        cross_machine: bool = False,
                        annotations: Mapping[str, Sequence[str]] | None = None,
                        model: NoiseModel | None = None) -> list[Section]:
    """Compare table, ratio charts and history for two or more runs or groups; ``model``
    is the machine's noise model."""
    return [*comparison.sections(runs, by, threshold, cross_machine, annotations, model),
            *memory.comparison_sections(runs, by)]


def builds_section(builds: Sequence[Build], by: str) -> Section | None:
    """Every build a `--by` report names, each with its newest speed run's headline paired
    ratios and their intervals: the result tables further down are the newest run's only,
    and this says which build that is."""
    from pqbench.views import ratios as ratio_views

    if len(builds) < 2:
        return None
    lines = []
    for build in builds:
        newest = build.newest
        said = "; ".join(ratio_views.line(r) for r in run_figures(newest).headline) \
            if newest is not None else ""
        where = (f"newest speed run {md.inline_code(newest.run_id)}" if newest is not None
                 else "no speed run")
        lines.append(f"- {md.text(build.name)} ({numbers.count(build.runs)} run(s), {where})"
                     + (f": {md.text(said)}" if said else ""))
    last = builds[-1]
    return Section("\n\n".join([
        md.heading(2, f"Each {by}"),
        f"The builds this report names, oldest first, each with the headline paired ratios of "
        f"its newest speed run (intervals at the level shown). The result tables below are "
        f"from the newest run, of {md.text(last.name)}.", "\n".join(lines)]))


def of_inputs(found: Inputs, threshold: float | None, cross_machine: bool = False
              ) -> tuple[Report, list[str]]:
    """The report of what `app.report.inputs` chose, and the warnings to tell the user: a
    report over many groups (`found.fleet`) follows the history's steps; otherwise every
    run is held and each group is compared with the next."""
    from pqbench.data.record.runs import group_runs
    from pqbench.views.report import fleet

    by = found.by
    if found.fleet is not None and by is not None:
        many = found.fleet
        sections = fleet.sections(many.headers, by, many.rates, many.whole, threshold,
                                  cross_machine, found.annotations, found.model)
        where = series.section(many.bisected) if many.bisected else None
        sections += [where] if where is not None else []
        sections += memory.comparison_sections(many.memory, by) if many.memory else []
        named = builds_section(found.builds, by)
        return build(found.runs, [*([named] if named else []), *sections],
                     fleet=(len(many.headers), by)), []
    comparison = comparison_sections(found.runs, by, threshold, cross_machine,
                                     found.annotations, found.model)
    warnings = []
    if by and not comparison:
        values = sorted({name for name, _ in group_runs(found.runs, by)})
        warnings.append(
            f"every run has the same --by {by} ({values[0]}); the report has no comparison"
            if len(values) == 1 else
            f"the --by {by} groups ({', '.join(values)}) share no row to compare (each kind "
            "of run measures other things); the report has no comparison" if values else
            f"no run has a value for --by {by}; the report has no comparison")
    named = builds_section(found.builds, by) if by else None
    return build(found.runs, [*([named] if named else []), *comparison]), warnings


def write(report: Report, path: Path, overwrite: bool = False) -> list[Path]:
    """Write the Markdown to `path` and the charts beside it; returns every file written.

    An existing report is replaced only with `overwrite` (a report may have been edited
    by hand), and only a regular file is ever replaced (never a device, a FIFO or a
    symlink such as /proc/self/fd/1); every file is checked before the first one is
    written. The report is made whole in a temporary folder beside it, then moved into
    place, charts first and the Markdown last, with Ctrl-C and SIGTERM held back: an
    interruption or a full disk leaves the previous report (or none), never a Markdown
    file that links charts not there or a file of 0 bytes.
    """
    targets = [path, *(path.parent / chart.filename for chart in report.charts)]
    folder = next((p for p in (path.parent, *path.parent.parents) if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise InputFileError(f"cannot write the report to {path}: {folder} is not a "
                             "folder; give --out a .md file or a folder")
    for target in targets:
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise InputFileError(f"{target} is not a regular file; pqbench replaces only "
                                 "regular files: choose another --out")
    if not overwrite:
        existing = [str(t) for t in targets if t.exists()]
        if existing:
            raise InputFileError(f"{existing[0]} already exists; pass --force to replace "
                                 "the report, or choose another --out")
    staging: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".pqbench-report-", dir=path.parent))
        (staging / path.name).write_text(report.markdown, encoding="utf-8")
        for chart in report.charts:
            render(chart, staging)
        with interrupts.deferred():
            for chart, target in zip(report.charts, targets[1:], strict=True):
                os.replace(staging / chart.filename, target)
            os.replace(staging / path.name, path)
        return targets
    except OSError as exc:
        where = exc.filename or path
        raise InputFileError(f"cannot write the report to {where}: "
                             f"{exc.strerror or exc}") from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "report"


def default_path(runs: Sequence[Run], by: str | None, base: Path) -> Path:
    """reports/<run id>/, reports/<first>-vs-<last>/ or reports/by-<field>/ under `base`."""
    runs = ordered(runs)
    if by:
        name = f"by-{by}"
    elif len(runs) == 1:
        name = runs[0].run_id
    else:
        name = f"{runs[0].run_id}-vs-{runs[-1].run_id}"
    return base / "reports" / _slug(name) / REPORT_NAME


def resolve_out(out: Path | None, runs: Sequence[Run], by: str | None, cwd: Path) -> Path:
    """`--out` as a .md file, or a directory that gets report.md; else the default."""
    if out is None:
        return default_path(runs, by, cwd)
    return out if out.suffix.lower() == ".md" else out / REPORT_NAME

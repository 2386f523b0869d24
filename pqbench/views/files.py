"""A `files hash` run as a table and lines: each file's read and hash rates as stored (the
median of the passes, and their CV), its digests in the tag format `sha256sum --tag`
prints, its paired ratios (`analysis.ratios.file_ratios`) worded per file, and the rows too
unsteady to trust. Defined once for `files hash` and `show`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pqbench.catalog import algorithms
from pqbench.data.record.fingerprint import taken_under_load
from pqbench.data.record.results import Measurement, Run
from pqbench.views import numbers
from pqbench.views.ratios import answer, level
from pqbench.views.runs import heading
from pqbench.views.tables import Column, Table

if TYPE_CHECKING:  # the analysis loads numpy; showing a ratio does not need it
    from pqbench.analysis.ratios import Ratio


def _path(m: Measurement) -> str:
    return str(m.attributes.get("path", ""))


def _cv(m: Measurement) -> float | None:
    return m.summary.cv if len(m.samples) > 1 else None


#: Whether the file was in the page cache as its passes read it (mincore); None where the
#: OS would not say (a file the user neither owns nor may write).
CACHED = {True: "yes", False: "no", None: "unknown"}


def _cached(m: Measurement) -> str:
    value = m.attributes.get("cached")
    return CACHED.get(value, "unknown") if isinstance(value, bool | None) else "unknown"


def hash_table(run: Run) -> Table:
    """One line per file and hash: the file's read rate beside the hash's rate, each the
    median of its passes (what the stored row holds) with its CV."""
    rows = [m for m in run.measurements if m.unit == "byte" and m.rounds]
    reads = {_path(m): m for m in rows if m.operation == "read"}
    passes = max((len(m.rounds) for m in rows), default=1)
    columns = (Column("path", wrap=True), Column("hash"), Column("size", "si", "B", priority=2),
               Column("read", "rate", "bytes/s"), Column("read CV", "percent", priority=3),
               Column("read + hash", "rate", "bytes/s"),
               Column("hash CV", "percent", priority=3), Column("cached", priority=4),
               Column("flags", wrap=True, priority=1))
    found = []
    for m in rows:
        if m.operation != "hash":
            continue
        read = reads.get(_path(m))
        flags = m.attributes.get("flags") or []
        found.append((_path(m), m.algorithm, m.attributes.get("size"),
                      read.rate if read else None, _cv(read) if read else None, m.rate,
                      _cv(m), _cached(m), "; ".join(map(str, flags))))
    settings = run.settings
    how = f"median of {passes} passes" if passes > 1 else "one pass"
    return Table(f"{heading(run, 'files hash')} (cache {settings.get('cache', 'as found')}, "
                 f"{how}, wall time)", columns, tuple(found))


#: What the hash rate is, said under the table: a hash pass reads the file as it hashes.
HASH_RATE = ("read + hash: each hash pass reads the file and hashes it, so its rate includes "
             "the reading; \"hashing with ... against reading it\" below is what the hash adds")


def _name(m: Measurement) -> str:
    return f"{_path(m)} {m.algorithm if m.operation == 'hash' else 'read'}"


def unsteady_lines(run: Run) -> list[str]:
    """One line per row whose passes spread or trend too much to trust its rate
    (`analysis.stability`, as `speed` warns): "disk.img SHA-256: CV 24.7 % is over 10 %"."""
    from pqbench.analysis import stability

    return [f"{_name(m)}: " + "; ".join(found) for m in run.measurements
            if m.unit == "byte" and (found := stability.problems(m.samples))]


def what_helps(run: Run) -> str:
    """What steadies a files run: a quiet machine first where others took its time."""
    quiet = ("a quiet machine (other work ran during this one: its passes share the disk "
             "and the CPUs, in wall time), " if taken_under_load(run.environment) else "")
    warm = ("" if run.settings.get("cache") == "warm"
            else ", or --cache warm to leave the disk out of the figures")
    return f"{quiet}more passes (--runs){warm}"


def digest_lines(run: Run) -> list[str]:
    """"SHA256 (disk.img) = 1acb…": the tag format of `sha256sum --tag`, which
    `sha256sum -c` checks; a digest is never wrapped or cut."""
    lines = []
    for m in run.measurements:
        digest = m.attributes.get("digest")
        if m.operation == "hash" and digest:
            try:
                tag = algorithms.by_name(m.algorithm).param("evp") or m.algorithm
            except KeyError:
                tag = m.algorithm
            lines.append(f"{tag} ({_path(m)}) = {digest}")
    return lines


def file_name(r: Ratio) -> str:
    """The file a ratio of a `files hash` run is about: its path (the run stores it with
    each row; `Ratio.per` is "byte of PATH")."""
    return r.per.removeprefix("byte of ")


def _side(r: Ratio) -> str:
    """A side of a file ratio as the sentence names it: "SHA-512", "reading it"."""
    return r.numerator.label.split(" [")[0]


def ratio_line(r: Ratio) -> str:
    """"disk.img: SHA-512 against SHA-256: 1.83x slower [1.53–2.59] (99 % CI, 10 pairs)";
    "disk.img: hashing with SHA-256 against reading it: 7.65x slower [...] (...)": in the
    words of every other pqbench ratio."""
    path = file_name(r)
    what = f"hashing with {_side(r)}" if r.kind == "reading" else _side(r)
    against = ("reading it" if r.kind == "reading"
               else r.denominator.label.split(" [")[0])
    interval = level(r.ci_level) if r.ci_level > 0 else "too few pairs for an interval"
    return (f"{path}: {what} against {against}: {answer(r)} ({interval}, {r.pairs} pairs)")


def ratio_lines(ratios: Sequence[Ratio]) -> list[str]:
    """The hash-against-hash answers first (the question asked with two -a), then each
    hash against reading the file."""
    ordered = sorted(ratios, key=lambda r: r.kind == "reading")
    return [ratio_line(r) for r in ordered]


def corpus_table(sizes: Sequence[int], summary: Sequence[tuple[str, str, int, float]]
                 ) -> Table:
    """`pqbench files corpus`: each step's bytes and aggregate throughput, in phase order."""
    return Table(f"pqbench files corpus: {len(sizes)} files, {numbers.si(sum(sizes), 'B')}",
                 (Column("operation"), Column("algorithm"), Column("bytes", "si", "B"),
                  Column("throughput", "rate", "bytes/s")), tuple(summary))

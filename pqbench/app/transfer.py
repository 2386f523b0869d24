"""`pqbench export` and `pqbench import`: which runs leave, where they are written (whole or
not at all, never over an earlier export by accident), and which runs of the files are
stored, skipped or refused."""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pqbench.app.ending import Ending
from pqbench.platform.errors import InputFileError, StoreError, UsageError

if TYPE_CHECKING:
    from pqbench.data.store import Store
    from pqbench.measure.environment.load import Snapshot

#: How many of the refused runs' ids the message names.
SHOWN = 5


def check(fmt: str, output: Path | None, force: bool, runs: Sequence[str] | None,
          last: int | None, every: bool) -> None:
    """Everything an export asks checked before the database is read: the format; the
    output, since an earlier export (perhaps the only copy of runs from another machine)
    is never replaced by accident, and even with --force only a regular file is (never
    /dev/null as root, or a link to /proc/self/fd/1); and exactly one choice of runs."""
    from pqbench.data.record import transfer

    if fmt not in transfer.FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; choose from {', '.join(transfer.FORMATS)}")
    if output is not None and (output.is_symlink()
                               or (output.exists() and not output.is_file())):
        raise InputFileError(f"{output} is not a regular file; pqbench replaces only "
                             "regular files: choose another --output")
    if output is not None and not force and output.exists():
        raise InputFileError(f"{output} already exists; pass --force to replace it, or "
                             "choose another --output")
    if sum([bool(runs), last is not None, every]) != 1:
        raise UsageError("name the runs to export, or give --last N or --all (one of them)")


def export(store: Store, runs: Sequence[str] | None, last: int | None, every: bool,
           fmt: str) -> tuple[str, int]:
    """The text of the runs named, else of the `last` newest or of `every` one, in `fmt`
    (`check`ed); and how many runs it holds."""
    # The validation models (pydantic) load here, not when `pqbench --help` starts.
    from pqbench.data.record import transfer
    from pqbench.data.store import RunFilter
    from pqbench.data.store.selection import newest_ids

    ids = list(runs or newest_ids(store, None if every else last))
    if not ids:
        raise UsageError(f"no runs stored in {store.location}; nothing to export")
    loaded = store.load_runs(RunFilter(ids=tuple(ids)))
    return transfer.export(loaded, fmt), len(loaded)


def write_whole(output: Path, text: str) -> None:
    """Write `text` to `output` whole or not at all: a temporary file beside it, renamed
    into place, so a full disk or an interruption never leaves half an export."""
    temporary = None
    try:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=output.parent or ".",
                                         prefix=f".{output.name}.", delete=False) as file:
            temporary = Path(file.name)
            file.write(text)
        os.replace(temporary, output)
    except OSError as exc:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        raise InputFileError(f"cannot write {output}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class Imported:
    """Where the runs went, which were stored, which were there already, and which were
    refused: stored already with other contents (the stored run is kept as it is)."""

    location: str
    stored: list[str]
    skipped: list[str]
    differing: list[str]

    def document(self) -> dict[str, Any]:
        return {"database": self.location, "imported": self.stored,
                "already_stored": self.skipped, "stored_with_other_contents": self.differing}

    @property
    def ending(self) -> Ending | None:
        if not self.differing:
            return None
        shown = ", ".join(self.differing[:SHOWN]) + (" ..." if len(self.differing) > SHOWN
                                                      else "")
        return Ending(f"{len(self.differing)} run(s) of the files were not imported: a run "
                      f"with the same id but other contents is stored ({shown}); the stored "
                      "run was kept as it is (import the file into another database to "
                      "compare them)", StoreError.exit_code)


def import_files(files: Sequence[Path], db: str | None) -> Imported:
    """Every file validated before anything is committed, and all runs of all files
    written in one transaction, straight from the validated documents: their rows made
    in other processes where there are several files, each file's written as it comes
    while the next are made (`_made_elsewhere`); else read here, then written."""
    from pqbench.data.record import transfer
    from pqbench.data.store import Store

    made = _made_elsewhere(files, postgresql=_to_postgresql(db))
    if made is not None:
        with contextlib.closing(made):  # the readers stop, however this ends
            store = Store.open(db)
            try:
                return _imported(store, store.save_batches(made), made.ids,
                                 lambda: transfer.read_documents(list(files)))
            except _NotVouched:  # nothing was written: read them here, say why as always
                store.discard_if_unused()
                store.close()
    documents = transfer.read_documents(list(files))
    store = Store.open(db)
    return _imported(store, store.save_documents(documents),
                     [doc["run_id"] for doc in documents], lambda: documents)


def _imported(store: Store, stored: list[str], ids: list[str],
              documents: Callable[[], list[dict[str, Any]]]) -> Imported:
    """The import of runs `ids` of which `stored` were written; the `documents` (read
    again where their rows were made elsewhere) of those skipped decide which of them
    differ from the run stored."""
    written = set(stored)
    skipped = [run_id for run_id in ids if run_id not in written]
    kept = set(skipped)
    differing = store.stored_otherwise([doc for doc in documents() if doc["run_id"] in kept]
                                       ) if kept else []
    return Imported(store.location, stored, skipped, differing)


class _NotVouched(Exception):
    """A file the other processes could not vouch for, a run id in two files, or the
    processes could not run: the import reads its files itself (`import_files`)."""


#: Below this many bytes in all, an import's files are read in its own process: starting
#: others costs more than they save (a run of the quick suite takes about 100 kilobytes).
PARALLEL_BYTES = 4 * 1024 * 1024


def readers(sizes: Sequence[int], cpus: int, load: float) -> int:
    """How many processes validate an import's files of `sizes` bytes and make their rows
    on `cpus` CPUs of which other work keeps `load` busy (`busy_cpus`); 0: none, the
    importing process reads them. Only where a CPU is idle: processes sharing busy CPUs
    with other work took more CPU time in all, and the import was no faster, often slower.
    One more than the CPUs, so five files on two CPUs take two and a half files' time, not
    three (two, two, then one alone); each process holds one file's runs at a time."""
    if len(sizes) < 2 or cpus < 2 or sum(sizes) < PARALLEL_BYTES or cpus - load < 1:
        return 0
    return min(len(sizes), cpus + 1)


def _to_postgresql(db: str | None) -> bool:
    """Whether the import most likely stores into PostgreSQL (its readers make the round
    arrays in that backend's form; a wrong guess only costs their rewriting)."""
    from pqbench.data.store.location import is_postgresql, resolve_location

    try:
        return is_postgresql(resolve_location(db))
    except UsageError:  # an empty --db: opening the store says so
        return False


def _made_elsewhere(files: Sequence[Path], postgresql: bool = False) -> _Made | None:
    """The runs of several files, each file validated and its rows made
    (`bulk.with_made_rows`) in another process (`readers`), started now; None where they
    are few or small, no CPU is idle, or the processes cannot start: the files are then
    read here, one after another, and a bad one named as always
    (`transfer.read_documents`). A file's rows cost about as much to make as to validate,
    and either costs more than writing them."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity else os.cpu_count() or 1
    try:
        sizes = [path.stat().st_size for path in files]
    except OSError:  # a file that is not there: read_documents says so
        return None
    # Whether other processes would pay at all before watching the machine for them;
    # while it watches, this process loads what they need (`_ready`), as it would anyway.
    workers = readers(sizes, cpus, 0.0) and readers(sizes, cpus, _busy_now(cpus, _ready))
    if not workers:
        return None
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_ignore_interrupts)
    try:
        # Submitted, the processes fork now: before this process opens the store, so
        # none of them holds a copy of its connection.
        return _Made(pool, pool.map(functools.partial(_made_here, postgresql=postgresql),
                                    files))
    except (BrokenProcessPool, OSError):
        pool.shutdown(cancel_futures=True)
        return None


def _ready() -> None:
    """Once in the importing process, not in every reader (they are forked): the
    validator, and the modules that make the rows, which it loads anyway to write them."""
    from pqbench.data.record import validation
    from pqbench.data.store import bulk  # noqa: F401  (with SQLAlchemy)

    validation.warm()


class _Made:
    """The runs of `_made_elsewhere`'s files, a file at a time in the order given, as
    their readers hand them over, their run ids kept in `ids`; _NotVouched where a file
    is not vouched for, a run id comes again (a file given twice, a run in two exports:
    `read_documents` decides) or the readers stopped. `close` stops the readers, whether
    or not the files were taken."""

    def __init__(self, pool: ProcessPoolExecutor,
                 batches: Iterator[list[dict[str, Any]] | None]) -> None:
        self._pool, self._batches = pool, batches
        self.ids: list[str] = []

    def __iter__(self) -> Iterator[list[dict[str, Any]]]:
        seen: set[str] = set()
        try:
            for documents in self._batches:
                if documents is None:
                    raise _NotVouched
                for doc in documents:
                    if doc["run_id"] in seen:
                        raise _NotVouched
                    seen.add(doc["run_id"])
                    self.ids.append(doc["run_id"])
                yield documents
        except (BrokenProcessPool, OSError):
            raise _NotVouched from None

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


#: How long an import watches the machine to see whether a CPU is idle.
IDLE_WINDOW = 0.1


def _busy_now(cpus: int, meanwhile: Callable[[], None] = lambda: None) -> float:
    """How many CPUs other work keeps busy now (`busy_cpus` over `IDLE_WINDOW`, or as
    long as `meanwhile` takes: this process does it as it watches, and its own CPU time
    is not counted as others')."""
    from pqbench.measure.environment import load

    start, began = load.snapshot(), time.monotonic()
    meanwhile()
    time.sleep(max(0.0, IDLE_WINDOW - (time.monotonic() - began)))
    return busy_cpus(start, load.snapshot(), cpus)


def busy_cpus(start: Snapshot, end: Snapshot, cpus: int) -> float:
    """How many of `cpus` CPUs other processes kept busy between two snapshots
    (`measure.environment.load`: /proc/stat's busy time less this process's own); where
    /proc told nothing, the 1-minute load average at the end (0 where that is unknown
    too). Not the load average first: it trails by a minute, so an import that just ended
    (a fleet's batches imported back to back) counted as a busy CPU for the next."""
    from pqbench.measure.environment import load

    others = load.state(start, end, cpus)["others_cpu"]
    if others is not None:
        return float(others) * cpus
    return end.loadavg[0] if end.loadavg else 0.0


def _made_here(path: Path, postgresql: bool = False) -> list[dict[str, Any]] | None:
    """In a process of `_made_elsewhere`: one file's run documents with their rows made
    (for a PostgreSQL store where `postgresql`)."""
    from pqbench.data.record import transfer
    from pqbench.data.store import bulk

    documents = transfer.vouched_documents(path)
    return None if documents is None else bulk.with_made_rows(documents, postgresql)


def _ignore_interrupts() -> None:
    """Ctrl-C is the importing process's to handle; it stops the others (`shutdown`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

"""What every command shares: the --db option and turning errors into exit codes."""

from __future__ import annotations

import functools
import gc
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from pqbench.data.record.format import LABEL_CHARS
from pqbench.data.store import ENV_VAR
from pqbench.platform import interrupts
from pqbench.platform.errors import NothingStored, PqbenchError, StoreError, UsageError
from pqbench.platform.untrusted import printable
from pqbench.views import console, delimited

if TYPE_CHECKING:
    from pqbench.app.ending import Ending
    from pqbench.data.record.results import Run
    from pqbench.data.store import Store
    from pqbench.libraries.implementations.base import Implementation

F = TypeVar("F", bound=Callable[..., Any])

DbOption = Annotated[
    str | None,
    typer.Option("--db", envvar=ENV_VAR, show_envvar=True,
                 metavar="DB",
                 help="Results database: a file path or postgresql://... URL "
                      "(default: a per-user file, see `pqbench env`)."),
]
JsonOption = Annotated[bool, typer.Option("--json", metavar="",
    help="Print one JSON document on stdout.")]
def exit_for(run: Run, stored_what: str, failed_what: str, *,
             workers_fail: bool = False) -> None:
    """A measuring command's exit status once its run is shown: 130 or 143 when it was
    interrupted (saying what was kept), 1 when it measured nothing (stored as failed,
    saying why), 1 when a pair failed its checks (or, with `workers_fail`, when a worker
    process died, hung or broke its protocol), else 0."""
    from pqbench.app.ending import nothing_measured

    if run.status == "interrupted":
        console.error(f"interrupted; the {len(run.measurements)} completed {stored_what} were "
                      f"stored as run {run.run_id}")
        raise typer.Exit(interrupts.exit_code())
    end(nothing_measured(run))
    if any(p.kind == "failed verification" for p in run.problems):
        console.error(f"{failed_what} failed its checks and was not timed (see above)")
        raise typer.Exit(1)
    if workers_fail and any(p.kind == "error" for p in run.problems):
        console.error("a worker process failed; its rows say how (see above)")
        raise typer.Exit(1)


def end(ending: Ending | None) -> None:
    """Say how a use case ended, and exit with its status; nothing when it ended well."""
    if ending is not None:
        console.error(ending.message)
        raise typer.Exit(ending.status)


def one_output(**chosen: bool) -> None:
    """At most one output format: `one_output(json=json_output, csv=csv_output)`."""
    if sum(chosen.values()) > 1:
        names = [f"--{name}" for name in chosen]
        raise UsageError(f"choose one of {', '.join(names[:-1])} and {names[-1]}")


#: The algorithms a measuring command runs (`speed`, `calibrate`, `ab`, `bisect`).
AlgorithmsArgument = Annotated[list[str] | None, typer.Argument(
    metavar="ALGORITHM...",
    help="Algorithms by name (ml-kem-768, mlkem768, rsa2048, ecdhx25519, ed25519, or any "
         "liboqs name). None: the quick headline suite.")]
#: The implementations those commands' rows are narrowed to.
ImplementationsOption = Annotated[list[str] | None, typer.Option(
    "--implementation", "-i", metavar="IMPL", help="Only these implementations (repeatable).")]

#: The algorithm whose row every other row's paired cost ratio is taken against.
RelativeToOption = Annotated[str | None, typer.Option(
    "--relative-to", metavar="ALGORITHM",
    help="Every row's paired cost ratio to this algorithm's row of the same operation, "
         "with its interval.")]

CsvOption = Annotated[bool, typer.Option(
    "--csv", metavar="",
        help="Print CSV on stdout: a header line, then one line per row, raw values.")]


def finite_float(low: float, high: float, *, low_open: bool = False
                 ) -> Callable[[str], float]:
    """A typer `parser` for a float in a range that refuses NaN and infinity (a plain
    range check lets NaN through: every comparison with NaN is false)."""

    def parse(value: str) -> float:
        shown = repr(printable(value))
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{shown} is not a number") from None
        above = number > low if low_open else number >= low
        if not math.isfinite(number) or not above or number > high:
            raise typer.BadParameter(f"{shown} is not a finite number "
                                     f"{'>' if low_open else '>='} {low:g} and <= {high:g}")
        return number

    return parse


def check_text(value: str | None, what: str = "--label") -> str | None:
    """A label or note the store can hold: bounded, valid Unicode (argv bytes that are not
    UTF-8 arrive as lone surrogates, which neither database accepts)."""
    if value is None:
        return None
    if len(value) > LABEL_CHARS:
        raise typer.BadParameter(f"{what} is longer than {LABEL_CHARS} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise typer.BadParameter(f"{what} is not valid UTF-8 text") from None
    return value


def _label(value: str | None) -> str | None:
    return check_text(value)


LabelOption = Annotated[str | None, typer.Option(
    metavar="TEXT",
    help=f"Free label stored with the run (up to {LABEL_CHARS} characters).",
    callback=_label)]


def handles_errors(command: F) -> F:
    """Map PqbenchError to a clear message and its exit code; Ctrl-C to 130 and SIGTERM
    (treated like Ctrl-C, see `pqbench.platform.interrupts`) to 143. Only the first signal
    interrupts (`interrupts.first_only`): a command that keeps what finished stores it
    however often the user presses Ctrl-C after, and exits with the first one's status."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        interrupts.install()
        try:
            with interrupts.first_only():
                return command(*args, **kwargs)
        except NothingStored as exc:
            console.note(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except PqbenchError as exc:
            console.error(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt as exc:
            word = "terminated" if isinstance(exc, interrupts.Terminated) else "interrupted"
            kept = interrupts.kept()  # a signal after the storing: what was stored, and where
            console.error(f"{word}; {kept}" if kept else word)
            raise typer.Exit(interrupts.exit_code(exc)) from None

    return wrapper  # type: ignore[return-value]


def provision(impls: Sequence[Implementation]) -> None:
    """Make what the implementations need before their first row (its progress on stderr,
    through logging): a foreign worker is built here once per machine, then started and
    greeted. A failure is kept by the implementation and becomes its rows' problem."""
    for impl in impls:
        impl.provision()


def store_and_print(store: Store, run: Run, show: Callable[[Run, Store], None], *,
                    json_output: bool, csv_output: bool = False) -> None:
    """Store a run just measured (`store_or_keep`), then print it: its document for --json,
    its rows for --csv, else `show` it."""
    from pqbench.data.record import codec

    store_or_keep(store, [run], codec.run_document(run) if json_output else None)
    if json_output:
        print_json(codec.run_document(run))
    elif csv_output:
        console.write(delimited.run_csv(run))
    else:
        show(run, store)


def store_or_keep(store: Store, runs: Sequence[Run], json_document: Any = None) -> None:
    """Store `runs` in one transaction, with Ctrl-C and SIGTERM held back until it ends.

    A database that refuses them (locked by another writer, full, read-only) must not
    cost the measurement: the runs go to a recovery file `pqbench import` accepts
    (`store.recovery`), `json_document` (what --json would have printed) is printed
    anyway, and the StoreError raised says where the runs are."""
    from pqbench.data.store import recovery

    ids = " and ".join(run.run_id for run in runs)
    with interrupts.deferred():  # a signal held here lands as the block ends: say what was kept
        try:
            store.save_runs(runs)
            interrupts.note_kept(f"stored as run{'s' * (len(runs) > 1)} {ids} in "
                                 f"{store.location}")
            return
        except StoreError as exc:
            problem = str(exc)
        kept = recovery.keep(runs)
        where = (f"the measurement was kept in {printable(str(kept))}: `pqbench import` that "
                 "file to store it") if kept is not None else ""
        interrupts.note_kept(where)
    if json_document is not None:
        print_json(json_document)
    if kept is None:
        raise StoreError(f"{problem}; the measurement could not be kept in a file either "
                         "(no writable folder)")
    raise StoreError(f"{problem}; {where}")


def print_json(document: Any) -> None:
    console.print_json(document)


#: Comparing runs measured on different testbeds is refused unless asked for.
CrossMachineOption = Annotated[bool, typer.Option(
    "--cross-machine", metavar="",
    help="Pool the runs of different machines (host name, CPU model, core count, "
         "hypervisor), with a warning; by default a machine's runs are judged against its "
         "own only.")]

ThresholdOption = Annotated[str, typer.Option(
    metavar="BAND",
    help="Noise band: a verdict needs the whole CI of the ratio beyond 1 ± this (a fraction, "
         "e.g. 0.05), or 'auto': max(0.05, each row's noise floor measured from replicate "
         "runs).")]

#: Exit status of `compare --fail-on` when a row got the named verdict (1 and 2 are errors).
FAIL_ON_EXIT = 3
FAIL_ON = {"slower": ("slower",), "faster": ("faster",), "any": ("faster", "slower"),
           "undecided": ("inconclusive", "too few runs")}


def parse_threshold(text: str) -> float | None:
    """'auto' -> None (each row's band is max(5 %, its noise floor)); else a finite
    fraction from 0 to 10 (NaN and infinity refused, as `finite_float` does)."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--threshold takes 'auto' or a fraction such as 0.05, not "
                         f"{printable(text)!r}") from None
    if not math.isfinite(value) or not 0 <= value <= 10:
        raise UsageError("--threshold must be 'auto' or a finite number >= 0 and <= 10")
    return value


@contextmanager
def many_records() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a command reads or writes many runs.

    Every collection of the oldest generation walks every live object, and building the
    records of thousands of runs (several objects per result row and round) sets off
    many: they took three quarters of an import's time. Records hold no
    reference cycles, so nothing waits for a collection; reference counting frees them.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

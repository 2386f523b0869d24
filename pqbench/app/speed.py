"""`pqbench speed`: what is measured, the run it makes, and what it answers.

The rows are timed by `measure.speed` (verified first, then rounds in cycles); what is
decided here is checked without measuring anything: the settings the options make, which
rows are measured and what is said about them before, and what the run answers once
stored (its figures, the ratios --relative-to asks for, the rows worth a second look).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm, normalize
from pqbench.libraries.implementations import liboqs_mechanisms, select
from pqbench.measure import environment
from pqbench.measure.speed import mask as capmask
from pqbench.measure.speed import suite
from pqbench.platform.errors import UnknownAlgorithmError, UsageError
from pqbench.timing import multi

if TYPE_CHECKING:
    from pqbench.analysis.figures import RunFigures
    from pqbench.analysis.ratios import Ratio
    from pqbench.data.record.results import Run
    from pqbench.libraries.implementations.base import Implementation

QUICK_SECONDS = 0.5
#: Rounds are cycles of the paired ratios: 10 reach a 99 % signed-rank interval (8 is the
#: least that can), 5 at most 93.75 %.
QUICK_ROUNDS = 10
DEFAULT_ROUNDS = 10
#: An hour per operation is more than any figure needs; beyond it a typo runs for days.
MAX_SECONDS = 3600.0
#: The native loops time rounds of whole nanoseconds: with MAX_ROUNDS rounds, a
#: millisecond still gives each round a microsecond.
MIN_SECONDS = 0.001
#: Rounds are samples: a thousand pins a median far beyond what drift between runs allows.
MAX_ROUNDS = 1000
#: The native loops' largest block (64 MiB, one buffer per operation and direction).
MAX_BLOCK_BYTES = 64 << 20
MAX_PROCESSES = 1024


def masked(text: str | None) -> tuple[capmask.Mask | None, int | None]:
    """The capability mask --mask names, and the exit status of the child that measured
    with it: OpenSSL reads the mask when it initialises, so a process that does not start
    with it runs the command again in a child that does (None: this process measures)."""
    if text is None:
        return None, None
    mask = capmask.build(text)
    return mask, capmask.relaunch(mask)


def settings(algorithm: Sequence[str] | None, seconds: float | None, rounds: int | None,
             operation: Sequence[str] | None, block_bytes: Sequence[int] | None,
             label: str | None, processes: int, cpu: str | None, elapsed: bool,
             extra: dict[str, Any] | None = None,
             implementations: Sequence[str] | None = None) -> suite.SpeedSettings:
    """How each row is timed: the quick suite (no algorithm named) is shorter by default;
    an operation or a block size named twice is measured once, the sizes in ascending
    order; `extra` joins the run's settings as it is (a calibration run's mark). The
    implementations named (-i) are kept: a gate fails where one of them measured nothing."""
    quick = not algorithm
    return suite.SpeedSettings(
        seconds=seconds if seconds is not None else (QUICK_SECONDS if quick else 1.0),
        rounds=rounds if rounds is not None else (QUICK_ROUNDS if quick else DEFAULT_ROUNDS),
        operations=tuple(dict.fromkeys(operation or ())),
        block_sizes=tuple(sorted(set(block_bytes))) if block_bytes else suite.BLOCK_SIZES,
        label=label,
        processes=processes,
        cpus=multi.parse_cpus(cpu) if cpu is not None else (),
        time_base="wall" if elapsed else "cpu",
        extra={**(extra or {}), **({"implementations": list(dict.fromkeys(implementations))}
                                   if implementations else {})},
    )


@dataclass(frozen=True)
class Plan:
    """The rows to measure, how, and what is said of them before measuring."""

    tasks: list[suite.Task]
    settings: suite.SpeedSettings
    #: The algorithm --relative-to names, as measured.
    reference: str | None = None
    mask: capmask.Mask | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def implementations(self) -> list[Implementation]:
        """The implementations measured, each once, in the order first planned."""
        return list(dict.fromkeys(task.implementation for task in self.tasks))

    @property
    def steps(self) -> int:
        """One step to check and prepare each row, then one per round of it."""
        return len(self.tasks) * (1 + self.settings.rounds)


def plan(algorithm: Sequence[str] | None, implementation: Sequence[str] | None,
         relative_to: str | None, chosen_settings: suite.SpeedSettings,
         mask: capmask.Mask | None = None) -> Plan:
    """One task per algorithm, implementation and operation (the quick suite when no
    algorithm is named); a usage error names what asks for nothing measurable."""
    kems, sigs = liboqs_mechanisms()
    try:
        chosen = algorithms.resolve(list(algorithm or algorithms.QUICK_SUITE), kems, sigs)
    except UnknownAlgorithmError as exc:
        from pqbench.libraries.liboqs.mechanisms import explain_unknown

        raise explain_unknown(exc) from None  # liboqs knows it, this build left it out
    reference = reference_of(relative_to, chosen)
    notes = check_operations(chosen_settings.operations, chosen)
    warnings = oversubscribed(chosen_settings.processes, multi.usable_cpus())
    impls = select(list(implementation) if implementation else None)
    tasks = suite.plan(chosen, impls, chosen_settings)
    if not tasks:
        raise UsageError(f"nothing to measure: {', '.join(i.name for i in impls)} "
                         f"{'does' if len(impls) == 1 else 'do'} not cover "
                         f"{', '.join(a.name for a in chosen)}")
    return Plan(tasks, chosen_settings, reference, mask, notes, warnings)


def reference_of(name: str | None, chosen: Sequence[Algorithm]) -> str | None:
    """The algorithm --relative-to names, which must be one of those measured."""
    if name is None:
        return None
    key = normalize(name)
    for alg in chosen:
        if key in {normalize(alg.name), *map(normalize, alg.aliases)}:
            return alg.name
    raise UsageError(f"--relative-to {name}: not one of the algorithms measured "
                     f"({', '.join(a.name for a in chosen)})")


def check_operations(wanted: Sequence[str], chosen: Sequence[Algorithm]) -> list[str]:
    """`-o NAME` that no chosen algorithm has: the operation is the problem, not the
    algorithm, and the message says which operations the algorithms have (and which
    algorithms have NAME, when it is another family's); those only some have are noted
    once, naming the algorithms that lack each (not measured for it): the note returned."""
    lacking_any: dict[str, list[str]] = {}
    for operation in wanted:
        lacking = [alg for alg in chosen if operation not in alg.all_operations]
        if len(lacking) < len(chosen):
            if lacking:
                lacking_any[operation] = [alg.name for alg in lacking]
            continue
        offered = "; ".join(f"{alg.name} has {', '.join(alg.all_operations)}"
                            for alg in chosen)
        owners = [alg.name for alg in algorithms.all_algorithms()
                  if operation in alg.all_operations]
        where = (f"; {operation!r} is an operation of {', '.join(owners[:3])}"
                 f"{' ...' if len(owners) > 3 else ''}" if owners else "")
        names = ", ".join(alg.name for alg in chosen)
        raise UsageError(f"{names} {'has' if len(chosen) == 1 else 'have'} no operation "
                         f"{operation!r} (-o): {offered}{where}")
    if not lacking_any:
        return []
    return ["-o: each algorithm is measured for the operations it has; " + "; ".join(
        f"no {op} in {', '.join(names)}" for op, names in lacking_any.items())]


def oversubscribed(processes: int, cpus: int) -> list[str]:
    """More --multi workers than CPUs measure the scheduler's sharing: the warning."""
    if processes <= cpus:
        return []
    return [f"--multi {processes} on {cpus} CPU(s): the workers take turns on the CPUs, so "
            "the aggregate shows the scheduler's sharing, not more throughput; use at most "
            "one worker per CPU"]


def measure(chosen: Plan, advance: Callable[[suite.Task], None]) -> Run:
    """This machine's fingerprint (with the mask, if any), then every row checked, warmed
    up and timed in cycles; Ctrl-C or SIGTERM keeps the rows finished, marked interrupted."""
    env = environment.collect(extra={
        "mask": chosen.mask.fingerprint() if chosen.mask else None})
    return suite.run_suite(chosen.tasks, chosen.settings, env, advance)


@dataclass(frozen=True)
class Answer:
    """What a stored speed run answers: its figures (the ratios, the headline few, the
    unsteady rows), the ratios --relative-to asked for, and the rows worth a second look."""

    run: Run
    figures: RunFigures
    asked: list[Ratio]
    second_looks: list[str]

    def document(self) -> dict[str, Any]:
        """The run as --json prints it, with every ratio."""
        from pqbench.data.record import codec

        return {**codec.run_document(self.run), "ratios": [
            r.as_dict() for r in (*self.figures.ratios, *self.asked)]}


def answer(run: Run, reference: str | None) -> Answer:
    """The figures of a run just stored, worked out once before anything is shown."""
    from pqbench.analysis import ratios
    from pqbench.analysis.figures import run_figures

    looks = second_looks(run)
    figures = run_figures(run)
    asked = ratios.relative_to(run, reference) if reference else []
    return Answer(run, figures, asked, looks)


def second_looks(run: Run) -> list[str]:
    """Foreign rows whose process's other threads worked while they were timed, and those
    whose warm-up never settled: their rates deserve a second look."""
    helped = [f"{m.algorithm} {m.operation} [{m.implementation}]" for m in run.measurements
              if m.attributes.get("helper_threads")]
    unsettled = [f"{m.algorithm} {m.operation} [{m.implementation}]"
                 for m in run.measurements if m.attributes.get("warmup_settled") is False]
    return [*([f"other threads of the worker's process (a JIT, a collector) used over 10 % "
               f"more CPU than the timed thread: {', '.join(helped)}"] if helped else []),
            *([f"no two warm-up rounds agreed within 5 % (20 tried): {', '.join(unsettled)}"]
              if unsettled else [])]

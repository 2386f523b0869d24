"""A speed run's derived figures, worked out once, before anything shows them.

What `speed` prints under its table, what its --json adds and what the report's summary and
"What it costs, paired" show are the same figures: every paired cost ratio (`ratios`), the
headline few of them, the rows too unsteady to trust (`stability`), and the OpenSSL that
cryptography bundles where it is not the system's (`bindings`). The terminal, the JSON and
the report lay these out; none of them computes one.
"""

from __future__ import annotations

from dataclasses import dataclass

from pqbench.analysis import ratios
from pqbench.analysis.bindings import bundled_openssl
from pqbench.analysis.ratios import Ratio
from pqbench.record.results import RowKey, Run


@dataclass(frozen=True)
class Unsteady:
    """A row whose spread or trend makes its figure shaky, and why (`stability.problems`)."""

    key: RowKey
    problems: tuple[str, ...]


@dataclass(frozen=True)
class RunFigures:
    """Everything a speed run tells beyond its rows."""

    ratios: tuple[Ratio, ...]
    #: Those the mission asks for (`ratios.mission`): what `speed` and `ratios` show.
    mission: tuple[Ratio, ...]
    #: The few `ratios.headline` picks from them: the report's lead.
    headline: tuple[Ratio, ...]
    unsteady: tuple[Unsteady, ...]
    #: (cryptography's bundled OpenSSL, the system's) where they differ and cryptography
    #: was measured: its ratio against libcrypto then holds that difference too.
    bundled: tuple[str, str] | None


def run_figures(run: Run) -> RunFigures:
    """The figures of `run`, each worked out once."""
    from pqbench.analysis import stability  # scipy, only once a run is worked out

    every = tuple(ratios.run_ratios(run))
    unsteady = tuple(Unsteady(m.key, tuple(problems)) for m in run.measurements
                     if (problems := stability.problems(m.samples)))
    measured = any(m.implementation == "cryptography" for m in run.measurements)
    return RunFigures(every, tuple(ratios.mission(every)), tuple(ratios.headline(every)),
                      unsteady,
                      bundled_openssl(run.environment) if measured else None)

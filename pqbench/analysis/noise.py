"""This machine's run-to-run spread: what one run of a build says about the build.

One run cannot tell a build's effect from the machine's drift between runs, unless the
drift is known. Every store that holds two runs of one build, runs of one build under two
labels (an A/A pair), calibration runs (`pqbench calibrate`) or an `ab` session has
measured it. Per machine (runs of other machines say nothing about this one; which runs are
one machine, one build and one group of replicates is decided by the caller,
`app.noise`) and per row (algorithm, implementation, operation, block size) the model pools:

* **replicated runs**: per row, the ln run estimates (`run_estimate`: the median of a run's
  ln rates) of each group of replicates (runs of one build, `app.noise.replicate_groups`),
  each group centred on its own mean, so a real change between builds does not count as
  noise: s^2 = SS / (N - k), N - k degrees of freedom (the pooled within-group variance of
  a one-way layout);
* **`ab` sessions**: per row, the worker pairs' estimates e_j of ln(B / A) (each the
  Hodges-Lehmann estimate of its round pairs, `signedrank.compare_worker_pairs`). Each e_j
  is one process of B minus one of A, so var(e) / 2 estimates the variance of one process's
  level about its build's level, with J - 1 degrees of freedom per session. Worker pairs
  run side by side on one pinned CPU within minutes: they miss the drift between runs taken
  hours apart, so this variance is multiplied by `SESSION_INFLATION` (measured: the median
  ratio of the two on this kind of machine; docs: statistics), counts only where the row
  has no replicated runs of its own, and for at most `SESSION_DF` degrees of freedom.

Where a row has few degrees of freedom of its own it borrows from its **family** (rows of
one kind of algorithm and one implementation: ciphers in libcrypto, KEMs in liboqs), then
from every row of its **kind**, as a prior with at most `BORROWED_DF` degrees of freedom:
s^2 = (SS_row + d0 s_family^2) / (df_row + d0) with df_row + d0 degrees of freedom, the
moderated variance of Smyth, "Linear models and empirical Bayes methods for assessing
differential expression in microarray experiments", Stat. Appl. Genet. Mol. Biol. 3, 2004.
With nothing stored, the documented conservative prior `PRIOR` (measured on a loaded
shared VM; docs: statistics) with `PRIOR_DF` degrees of freedom: a prior for rates in CPU
time, so rows timed in wall time never rest on it (`NoiseModel.spread_for`). Every spread
says where it came from (`Spread.describe`).

Runs the caller leaves out (taken under load, say) are counted in the model, by reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from pqbench.analysis import pairing, signedrank
from pqbench.data.record.results import RowKey, Run

#: The conservative prior: one run's ln estimate about its build's level, as a standard
#: deviation, measured over single runs of the quick suite on a shared 2-core VM under load
#: (docs: statistics and measurements).
PRIOR = 0.10
#: The degrees of freedom the prior counts as (a t quantile of 4.60 at 99 %).
PRIOR_DF = 4
#: The most degrees of freedom a row borrows from its family or kind.
BORROWED_DF = 10
#: A spread that rests on nothing but the row's own runs needs this many degrees of freedom:
#: from two runs (one) the interval's t factor is 63.7 at 99 %, which drew intervals out to
#: 10^30 from the very two runs compared.
OWN_ONLY_DF = 3
#: How much more run-to-run variance than worker-pair variance a machine like this shows
#: (the median over 28 rows of the quick suite; the rows ranged from 0.7 to 21).
SESSION_INFLATION = 6.5
#: The most degrees of freedom a row's sessions count for: their mapping to a run's
#: spread is known on average, not row by row, so they are always moderated.
SESSION_DF = 5

Source = Literal["row", "sessions", "prior"]


@dataclass
class Evidence:
    """Sums over groups of one build: squared deviations about each group's mean, the
    degrees of freedom they carry, the runs and groups they came from."""

    squares: float = 0.0
    freedom: int = 0
    runs: int = 0
    groups: int = 0
    calibration: int = 0

    def add(self, estimates: Sequence[float], calibration: int = 0) -> None:
        values = np.asarray(estimates, dtype=np.float64)
        if values.size < 2:
            return
        self.squares += float(np.sum((values - values.mean()) ** 2))
        self.freedom += values.size - 1
        self.runs += values.size
        self.groups += 1
        self.calibration += calibration

    def merge(self, other: Evidence) -> None:
        self.squares += other.squares
        self.freedom += other.freedom
        self.runs += other.runs
        self.groups += other.groups
        self.calibration += other.calibration

    @property
    def variance(self) -> float | None:
        return self.squares / self.freedom if self.freedom > 0 else None


@dataclass(frozen=True)
class Spread:
    """One row's run-to-run spread: the standard deviation ``sd`` of one run's ln estimate
    about its build's level, its degrees of freedom, and where it came from: ``source``
    ("row": its own replicated runs; "sessions": its `ab` sessions' worker pairs; "prior":
    nothing of its own), the ``runs`` and ``groups`` (builds) or ``sessions`` of its own,
    and what it borrowed (``borrowed``: "its family (cipher, libcrypto: 3 other rows, 15
    runs)", "the default prior"), with ``borrowed_df`` degrees of freedom."""

    sd: float
    freedom: int
    source: Source
    runs: int = 0
    groups: int = 0
    sessions: int = 0
    borrowed: str | None = None
    borrowed_df: int = 0
    calibration: int = 0

    @property
    def percent(self) -> float:
        """The spread as a fraction: exp(sd) - 1."""
        return math.expm1(self.sd)

    def _size(self) -> str:
        """The spread as a percentage, written as every table writes one ("8.6 %")."""
        return f"{self.percent * 100:.1f} %"

    def describe(self) -> str:
        """Where the spread came from, in words a verdict's reason ends with."""
        size = self._size()
        if self.source == "prior" and self.borrowed is None:
            return (f"the default prior of {size} for this machine's run-to-run spread "
                    "(nothing replicated is stored for this row): `pqbench calibrate` "
                    "sharpens it")
        parts = []
        if self.source == "row":
            groups = f"{self.groups} group{'s' if self.groups != 1 else ''} of one build"
            calibrated = f", {self.calibration} of them calibration" if self.calibration else ""
            parts.append(f"{self.runs} runs of this row ({groups}{calibrated})")
        elif self.source == "sessions":
            plural = "s" if self.sessions != 1 else ""
            parts.append(f"the worker pairs of {self.sessions} ab session{plural} of this row "
                         f"(times {SESSION_INFLATION:g} in variance: pairs taken side by side "
                         "miss the drift between runs)")
        if self.borrowed is not None:
            parts.append(self.borrowed)
        # Calibration runs already stored are what the advice would ask for: after them,
        # only more of them (or of the row's family) would sharpen the prior's share.
        tail = ": `pqbench calibrate` sharpens it" if self.borrowed == "the default prior" \
            and not self.calibration else ""
        return (f"this machine's run-to-run spread of {size} from {' and '.join(parts)}, "
                f"{self.freedom} df{tail}")

    def short(self) -> str:
        """The spread in a few words, for a verdict's reason ("this machine's run-to-run
        spread of 1.0 % (5 runs, family; 14 df)"); `describe` says it in full."""
        size = self._size()
        if self.source == "prior" and self.borrowed is None:
            return f"the default prior of {size} (`pqbench calibrate` sharpens it)"
        own = {"row": f"{self.runs} runs", "sessions": f"{self.sessions} ab sessions",
               "prior": ""}[self.source]
        lent = None if self.borrowed is None else (
            "prior" if self.borrowed == "the default prior"
            else self.borrowed.split(" (")[0].removeprefix("its "))
        return (f"this machine's run-to-run spread of {size} "
                f"({', '.join(p for p in (own, lent) if p)}; {self.freedom} df)")

    def as_dict(self) -> dict[str, object]:
        return {"sd": self.sd, "percent": self.percent, "freedom": self.freedom,
                "source": self.source, "runs": self.runs, "groups": self.groups,
                "sessions": self.sessions, "calibration": self.calibration,
                "borrowed": self.borrowed, "borrowed_df": self.borrowed_df,
                "description": self.describe()}


def family_of(key: RowKey) -> tuple[str, str]:
    """(kind of algorithm, implementation): rows whose runs vary alike on one machine."""
    return (kind_of(key[0]), key[1])


def kind_of(algorithm: str) -> str:
    """The algorithm's kind (cipher, hash, kem ...), "other" for names outside the table."""
    from pqbench.catalog.algorithms import by_name

    try:
        return by_name(algorithm).kind
    except KeyError:
        return "other"


@dataclass
class NoiseModel:
    """Per row of one machine, the replicated-run and session evidence; `spread` answers."""

    machine: str | None = None
    rows: dict[RowKey, Evidence] = field(default_factory=dict)
    sessions: dict[RowKey, Evidence] = field(default_factory=dict)
    session_count: dict[RowKey, int] = field(default_factory=dict)
    #: Runs left out (taken under load, say) and why.
    left_out: dict[str, int] = field(default_factory=dict)

    def add_runs(self, key: RowKey, estimates: Sequence[float], calibration: int = 0) -> None:
        """One build's ln run estimates of one row."""
        self.rows.setdefault(key, Evidence()).add(estimates, calibration)

    def add_session(self, key: RowKey, worker_estimates: Sequence[float]) -> None:
        """One `ab` session's worker-pair estimates of ln(B / A) for one row."""
        values = np.asarray(worker_estimates, dtype=np.float64)
        if values.size < 2:
            return
        found = self.sessions.setdefault(key, Evidence())
        # var(e) / 2 is one process's variance; inflated to a run's, as the docstring says.
        found.squares += float(np.sum((values - values.mean()) ** 2)) / 2 * SESSION_INFLATION
        found.freedom += values.size - 1
        found.groups += 1
        self.session_count[key] = self.session_count.get(key, 0) + 1

    def stands_alone(self, key: RowKey) -> bool:
        """Whether the row's spread rests on its own replicated runs alone: at least
        `BORROWED_DF` degrees of freedom that show a spread. What its family, kind or
        sessions hold then never counts (`spread` returns before it reads them), so a
        model of this row alone gives it the spread the model of every row gives."""
        own = self.rows.get(key)
        return own is not None and own.freedom >= BORROWED_DF and not _shows_no_spread(own)

    def _own_sessions(self, key: RowKey) -> Evidence | None:
        """The row's session evidence, worth at most `SESSION_DF` degrees of freedom."""
        found = self.sessions.get(key)
        if found is None or found.freedom <= SESSION_DF:
            return found
        return Evidence(found.squares / found.freedom * SESSION_DF, SESSION_DF, found.runs,
                        found.groups)

    def _pooled(self, keys: Iterable[RowKey]) -> Evidence:
        total = Evidence()
        for key in keys:
            total.merge(self.rows.get(key) or self.sessions.get(key) or Evidence())
        return total

    def spread(self, key: RowKey) -> Spread:
        """The row's spread: its own replicated runs (else its sessions' worker pairs),
        moderated by its family's, else its kind's, else the default prior, where it has
        fewer than `BORROWED_DF` degrees of freedom; the prior alone without any."""
        found = self._spread(key, prior=True)
        assert found is not None  # with the prior there is always one
        return found

    def spread_for(self, key: RowKey, wall_time: bool) -> Spread | None:
        """The spread a verdict on runs of the row may rest on. In CPU time, `spread`. In
        wall time (`timed_in_wall_time`: TLS handshakes, file reads and hashes, `speed
        --elapsed`) never the default prior, which was measured over CPU-time rates, where
        the scheduler's share of a busy machine does not count: a wall-time rate on the
        same machine spreads far more. Such a row rests on its own replicated runs or
        sessions and on what it borrows from its family or kind, else on nothing (None:
        the exact test's answer, too few runs, stands)."""
        return self._spread(key, prior=not wall_time)

    def _spread(self, key: RowKey, prior: bool) -> Spread | None:
        own = self.rows.get(key)
        source: Source = "row"
        sessions = 0
        if own is None or own.freedom == 0:
            own = self._own_sessions(key)
            source = "sessions"
            sessions = self.session_count.get(key, 0)
        if own is None or own.freedom == 0 or _shows_no_spread(own):
            # Runs that agree to the last digit show no spread, not a spread of zero: they
            # cannot back an interval of zero width (a timer's resolution, a stored copy).
            own, source = Evidence(), "prior"
        if self.stands_alone(key):  # sessions count for at most SESSION_DF: never alone
            return Spread(math.sqrt(own.squares / own.freedom), own.freedom, source,
                          own.runs, own.groups, sessions, calibration=own.calibration)
        said, found = self._borrowed(key)
        if found is not None and _shows_no_spread(found):  # as above
            said, found = "", None
        if found is None and not prior:
            if own.freedom < OWN_ONLY_DF:
                return None
            return Spread(math.sqrt(own.squares / own.freedom), own.freedom, source,
                          own.runs, own.groups, sessions, calibration=own.calibration)
        if found is None:
            if own.freedom == 0:
                return Spread(PRIOR, PRIOR_DF, "prior")
            said, d0, variance = "the default prior", PRIOR_DF, PRIOR ** 2
        else:
            d0, variance = min(found.freedom, BORROWED_DF), found.squares / found.freedom
        pooled = (own.squares + d0 * variance) / (own.freedom + d0)
        return Spread(math.sqrt(pooled), own.freedom + d0, source, own.runs, own.groups,
                      sessions, said, d0, own.calibration)

    def _borrowed(self, key: RowKey) -> tuple[str, Evidence | None]:
        """What the row borrows: the evidence of its family, the row itself left out (at
        least two degrees of freedom), else of its kind; None without either."""
        family = family_of(key)
        keys = (set(self.rows) | set(self.sessions)) - {key}
        members = [k for k in keys if family_of(k) == family]
        pooled = self._pooled(members)
        if pooled.freedom >= 2:
            return (f"its family ({family[0]}, {family[1]}: {_rows(len(members))}, "
                    f"{pooled.runs} runs)"), pooled
        kin = [k for k in keys if kind_of(k[0]) == family[0]]
        pooled = self._pooled(kin)
        if pooled.freedom >= 2:
            return f"its kind ({family[0]}: {_rows(len(kin))}, {pooled.runs} runs)", pooled
        return "", None


def _shows_no_spread(evidence: Evidence) -> bool:
    return evidence.squares <= evidence.freedom * signedrank.NO_SPREAD ** 2


def _rows(count: int) -> str:
    return f"{count} other row{'s' if count != 1 else ''}"


#: A row key's ln estimates (`record.estimates`: the median of a run's ln per-round rates)
#: by each of the runs named that has one, in their order (`store.rates.RowEstimates.of_runs`).
EstimatesOf = Callable[[RowKey, Sequence[str]], Sequence[float]]


@dataclass(frozen=True)
class Replicates:
    """Runs whose differences are noise alone: the caller's decision (`app.noise`), as run
    ids, with how many of them are calibration runs."""

    runs: tuple[str, ...]
    calibration: int = 0


def timed_in_wall_time(run: Run) -> bool:
    """Whether a run's rates are in wall time by what it records: a TLS handshake (two
    threads or two processes) and a file read or hash always are, a `speed` run says so
    in its settings (`--elapsed`). A run that records no time base is not known to be."""
    if run.kind in ("tls", "files"):
        return True
    return isinstance(run.settings, Mapping) and run.settings.get("time_base") == "wall"


def calibration_of(run: Run) -> Mapping[str, Any] | None:
    """The `pqbench calibrate` series a run belongs to (its settings["calibration"])."""
    found = run.settings.get("calibration") if isinstance(run.settings, Mapping) else None
    return found if isinstance(found, Mapping) else None


def learn(groups: Iterable[Replicates], keys: Iterable[RowKey], estimates: EstimatesOf, *,
          sessions: Sequence[tuple[Run, Run]] = (), left_out: Mapping[str, int] | None = None,
          machine: str | None = None) -> NoiseModel:
    """The model of one machine: per row, the ln run estimates of each group of replicates
    (read by `estimates`), and its `ab` sessions (whole runs: the worker pairs are
    attributes of their rows). `left_out` counts the runs the caller left out, by reason."""
    model = NoiseModel(machine=machine, left_out=dict(left_out or {}))
    wanted = list(keys)
    for group in groups:
        for key in wanted:
            model.add_runs(key, estimates(key, group.runs), group.calibration)
    for key, row in pairing.paired_rows(sessions).items():
        if row.workers is None:
            continue
        per_worker: dict[tuple[int, int], list[float]] = {}
        for b, a, worker in zip(row.before, row.after, row.workers, strict=True):
            if a > 0 and b > 0:
                per_worker.setdefault(worker, []).append(math.log(a) - math.log(b))
        # One session's worker pairs at a time: their estimates centre on its own shift.
        by_session: dict[int, list[float]] = {}
        for (session, _), values in per_worker.items():
            by_session.setdefault(session, []).append(
                signedrank.hodges_lehmann(np.asarray(values)))
        for found in by_session.values():
            model.add_session(key, found)
    return model


def smallest_call(spread: Spread, n: int, m: int, alpha: float = 0.01) -> float:
    """The smallest change (a fraction: 0.15 is 15 %) that n runs against m can call
    faster or slower against `spread`: the band, max(5 %, exp(s) - 1), plus the interval's
    half-width, t(1 - alpha/2, df) s sqrt(1/n + 1/m), in log units."""
    from scipy import special

    band = max(0.05, spread.percent)
    half = float(special.stdtrit(spread.freedom, 1 - alpha / 2)) * spread.sd * math.sqrt(
        1 / n + 1 / m)
    return math.expm1(math.log1p(band) + half)

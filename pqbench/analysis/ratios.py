"""What one row costs against another of the same run, pair by pair, with its interval.

`speed` takes its rounds in cycles: every cycle runs one round of every row in a fresh
random order (`measure.suite.execute`), so round i of any two rows was taken within the same
cycle, moments apart. A ratio of two rows is then a paired comparison: per cycle the log of
the cost ratio, d_i = ln(cost_numerator,i) - ln(cost_denominator,i), in which the machine's
drift, shared by both rounds of the cycle, cancels. The cycles, not the rounds, are the
independent units. As in `ab` (`signedrank`, Hollander, Wolfe & Chicken, *Nonparametric
Statistical Methods*, 3rd ed., sections 3.1-3.3):

* estimate: exp of the Hodges-Lehmann estimate, the median of the Walsh averages of d;
* interval: Tukey's distribution-free interval [W_(k), W_(M+1-k)] of the ordered Walsh
  averages at the level asked (99 %), or, with too few cycles to reach it, the widest
  finite one, whose true level is what `ci_level` then says (5 cycles reach 93.75 %).

A cost is time per unit: per operation for one row; per exchange or per signature for a
protocol's sum of operations (`analysis.exchanges`: a KEM's keygen + encaps + decaps against
an ECDH's two keygens and two derives); per byte for ciphers and hashes at one block size;
the geometric mean of the per-operation ratios over every operation two implementations
share, for a binding against its native library. Every ratio is numerator cost over
denominator cost: above 1 the numerator takes longer.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pqbench.analysis import exchanges, verdict, walsh
from pqbench.catalog import algorithms
from pqbench.data.record.results import Measurement, RowKey, Run
from pqbench.data.record.summary import summarize
from pqbench.libraries.implementations import BINDINGS, STACKS

#: Level of every interval when the cycles allow it.
LEVEL = 0.99

Kind = Literal["exchange", "signature", "key size", "digest size", "mode", "binding", "relative",
               "reading", "implementation"]

METHOD = ("cycles pair the rows (one round of each per cycle, random order): Hodges-Lehmann "
          "estimate of the per-cycle ln cost ratios with Tukey's signed-rank interval")

#: Per cycle, a side's cost (time per unit), from the rows it is made of.
Cost = Callable[[int], float | None]


@dataclass(frozen=True)
class Side:
    """One side of a ratio: what it is called and the rows (with counts) it is made of."""

    label: str
    rows: tuple[tuple[RowKey, int], ...]

    def _shared(self, field: str) -> Any:
        values = {getattr(key, field) for key, _ in self.rows}
        return values.pop() if len(values) == 1 else None

    @property
    def algorithm(self) -> str | None:
        """The algorithm every row of the side has; None for a binding's many."""
        return self._shared("algorithm")

    @property
    def implementation(self) -> str | None:
        return self._shared("implementation")

    @property
    def operation(self) -> str | None:
        """The operation of a one-row side; None for an exchange's or a mean's several."""
        return self.rows[0][0].operation if len(self.rows) == 1 else None

    @property
    def block_size(self) -> int | None:
        return self._shared("block_size")

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "rows": [
            {**k._asdict(), "count": count} for k, count in self.rows]}


@dataclass(frozen=True)
class Ratio:
    """numerator cost / denominator cost over the cycles both were measured in."""

    kind: Kind
    numerator: Side
    denominator: Side
    #: What one unit of cost is: "exchange", "signature", "byte", "operation".
    per: str
    estimate: float
    ci_low: float
    ci_high: float
    ci_level: float
    pairs: int
    time_base: str

    @property
    def name(self) -> str:
        return f"{self.numerator.label} against {self.denominator.label}, per {self.per}"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "per": self.per,
                "numerator": self.numerator.as_dict(),
                "denominator": self.denominator.as_dict(), "estimate": self.estimate,
                "ci_low": _finite(self.ci_low), "ci_high": _finite(self.ci_high),
                "ci_level": self.ci_level, "pairs": self.pairs, "method": METHOD,
                "time_base": self.time_base}


#: The columns of `Ratio.as_row`, one value a cell: what tidy data tools (pandas) read.
#: `speedup` runs the way every pqbench CSV's does, the way "faster" reads: the numerator's
#: speed over the denominator's, above 1 the numerator is faster (`compare`'s is after
#: over before).
ROW_COLUMNS = ("run_id", "kind", "per", "numerator_algorithm", "numerator_implementation",
               "numerator_operation", "denominator_algorithm", "denominator_implementation",
               "denominator_operation", "block_size_bytes", "speedup", "speedup_ci_low",
               "speedup_ci_high", "ci_level", "pairs", "time_base")


def as_row(r: Ratio, run_id: str) -> tuple[Any, ...]:
    """A ratio as one tidy line (`ROW_COLUMNS`): each side's algorithm, implementation and
    operation in cells of their own (empty where a side has several), the speedup
    (denominator's time over the numerator's: above 1 the numerator is faster, as
    "2.70x faster" reads) and its interval, the inverse of the time ratio's ends."""
    return (run_id, r.kind, r.per, r.numerator.algorithm, r.numerator.implementation,
            r.numerator.operation, r.denominator.algorithm, r.denominator.implementation,
            r.denominator.operation, r.numerator.block_size, _speedup(r.estimate),
            _speedup(r.ci_high), _speedup(r.ci_low), r.ci_level, r.pairs, r.time_base)


def _speedup(time_ratio: float) -> float | None:
    """A time ratio's inverse, None where it is not a finite positive number (a single
    pair's interval, 0 to infinity, bounds nothing)."""
    return 1 / time_ratio if math.isfinite(time_ratio) and time_ratio > 0 else None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def paired(numerator: Sequence[float], denominator: Sequence[float], level: float = LEVEL
           ) -> tuple[float, float, float, float] | None:
    """(estimate, low, high, true level) of numerator/denominator over paired costs; None
    without a single pair, or with a cost that is not a finite positive number. With too
    few pairs for `level`, the widest finite interval. Plain Python (`walsh`): a run's
    paired rounds are a few dozen, and `show` or `speed` then starts without numpy."""
    if len(numerator) != len(denominator) or not numerator:
        return None
    try:
        d = [math.log(n) - math.log(c) for n, c in zip(numerator, denominator, strict=True)]
    except ValueError:  # the log of 0 or of a negative cost
        return None
    if not all(math.isfinite(x) for x in d):
        return None
    shift, low, high, coverage = walsh.shift_interval(d, 1.0 - level, widest=True)
    if coverage <= 0:  # a single pair bounds nothing
        return math.exp(shift), 0.0, math.inf, 0.0
    return math.exp(shift), math.exp(low), math.exp(high), coverage


def _round_cost(m: Measurement, cycle: int) -> float | None:
    """Seconds per operation of the row's round `cycle`, in the row's time base."""
    if cycle >= len(m.rounds):
        return None
    r = m.rounds[cycle]
    return r.elapsed_ns / 1e9 / r.ops if r.ops > 0 and r.elapsed_ns > 0 else None


def _cost(parts: Sequence[tuple[Measurement, float]]) -> Cost:
    """Per cycle: the sum of each part's cost times its weight (None if one is missing)."""
    def at(cycle: int) -> float | None:
        total = 0.0
        for m, weight in parts:
            cost = _round_cost(m, cycle)
            if cost is None:
                return None
            total += weight * cost
        return total
    return at


def _geometric(pairs: Sequence[tuple[Measurement, Measurement]]) -> tuple[Cost, Cost]:
    """Per cycle, the geometric mean over `pairs` of each side's cost: the ratio of the two
    is the geometric mean of the per-operation ratios (none of them dominates)."""
    def side(index: int) -> Cost:
        def at(cycle: int) -> float | None:
            logs = []
            for pair in pairs:
                cost = _round_cost(pair[index], cycle)
                if cost is None:
                    return None
                logs.append(math.log(cost))
            return math.exp(sum(logs) / len(logs))
        return at
    return side(0), side(1)


def _ratio(kind: Kind, per: str, numerator: Side, denominator: Side, costs: tuple[Cost, Cost],
           cycles: int, base: str) -> Ratio | None:
    found = [(n, d) for n, d in (tuple(cost(c) for cost in costs) for c in range(cycles))
             if n is not None and d is not None]
    result = paired([n for n, _ in found], [d for _, d in found])
    if result is None:
        return None
    estimate, low, high, level = result
    return Ratio(kind, numerator, denominator, per, estimate, low, high, level, len(found),
                 base)


def _label(m: Measurement | exchanges.Exchange) -> str:
    return f"{m.algorithm} [{m.implementation}]"


def _exchange_side(ex: exchanges.Exchange) -> Side:
    return Side(_label(ex), tuple((m.key, count) for _, count, m in ex.operations))


def _exchange_ratios(rows: Sequence[Measurement], cycles: int, base: str) -> list[Ratio]:
    """Every post-quantum exchange (signature) against every classical one of its role
    (ML-KEM-768 against X25519, ECDH P-256 and RSA-2048 key transport; ML-DSA-65 against
    Ed25519, ECDSA P-256 and RSA-2048), each classical scheme through the same
    implementation where it was measured there, else through its counterpart (native
    against native, binding against binding)."""
    found = []
    public = [m for m in rows if m.block_size is None]
    for role in exchanges.ROLES:
        every = exchanges.exchanges(role, public)
        pq = [ex for ex in every if _post_quantum(ex.algorithm)]
        classical = [ex for ex in every if not _post_quantum(ex.algorithm)]
        names = list(dict.fromkeys(ex.algorithm for ex in classical))
        for ex in pq:
            for name in names:
                of_name = {c.implementation: c for c in classical if c.algorithm == name}
                other = of_name.get(ex.implementation) or of_name.get(
                    exchanges.COUNTERPART.get(ex.implementation, ""))
                if other is None:
                    continue
                ratio = _ratio(_role_kind(role), role, _exchange_side(ex),
                               _exchange_side(other),
                               (_cost([(m, c) for _, c, m in ex.operations]),
                                _cost([(m, c) for _, c, m in other.operations])),
                               cycles, base)
                if ratio is not None:
                    found.append(ratio)
    return found


#: What a foreign implementation's exchange is set against, first measured wins: the native
#: loops (no binding cost), then the bindings.
REFERENCES = ("liboqs", "libcrypto", "liboqs-python", "cryptography")


def _gap_ratios(rows: Sequence[Measurement], cycles: int, base: str) -> list[Ratio]:
    """Each foreign implementation's exchange (signature) against the same algorithm's
    through the first reference measured (ML-KEM-768 [go] against ML-KEM-768 [liboqs]):
    the implementation gap, paired by cycle."""
    found = []
    public = [m for m in rows if m.block_size is None]
    for role in exchanges.ROLES:
        every = exchanges.exchanges(role, public)
        for ex in every:
            if ex.implementation not in STACKS:
                continue
            same = {o.implementation: o for o in every if o.algorithm == ex.algorithm}
            reference = next((same[r] for r in REFERENCES if r in same), None)
            if reference is None:
                continue
            ratio = _ratio("implementation", role, _exchange_side(ex),
                           _exchange_side(reference),
                           (_cost([(m, c) for _, c, m in ex.operations]),
                            _cost([(m, c) for _, c, m in reference.operations])),
                           cycles, base)
            if ratio is not None:
                found.append(ratio)
    return found


def _role_kind(role: str) -> Kind:
    return "exchange" if role == "exchange" else "signature"


def exchange_ratio(role: str, ex: exchanges.Exchange, other: exchanges.Exchange,
                   cycles: int) -> Ratio | None:
    """One exchange (signature) against another, paired by cycle; None unpaired."""
    if not cycles:
        return None
    return _ratio(_role_kind(role), role, _exchange_side(ex), _exchange_side(other),
                  (_cost([(m, c) for _, c, m in ex.operations]),
                   _cost([(m, c) for _, c, m in other.operations])), cycles,
                  _base(m for _, _, m in (*ex.operations, *other.operations)))


def exchange_cost(ex: exchanges.Exchange, cycles: int
                  ) -> tuple[float, float, float, float] | None:
    """Microseconds per exchange (signature) as (median, low, high, level) over the cycles:
    per cycle the sum of its operations' costs, so the interval is that of the sum, with
    the true level of the median's distribution-free interval (`record.summary`)."""
    cost = _cost([(m, c) for _, c, m in ex.operations])
    found = [c * 1e6 for c in (cost(i) for i in range(cycles)) if c is not None]
    if len(found) < 2:
        return None
    s = summarize(found)
    return s.median, s.ci_low, s.ci_high, s.ci_level


def row_ratio(m: Measurement, other: Measurement, cycles: int,
              kind: Kind = "relative") -> Ratio | None:
    """One row's cost against another's, paired by cycle; None unpaired."""
    if not cycles:
        return None
    return _ratio(kind, _per(m), _row_side(m), _row_side(other),
                  (_cost([(m, 1.0)]), _cost([(other, 1.0)])), cycles, _base((m, other)))


def _post_quantum(name: str) -> bool:
    try:
        return algorithms.by_name(name).nist_level is not None
    except KeyError:  # a liboqs mechanism pqbench's tables do not list
        return True


def _size_pairs(rows: Sequence[Measurement]) -> list[tuple[Kind, Measurement, Measurement]]:
    """Ciphers of one family and mode with different key lengths (AES-256-XTS's 512-bit key
    against AES-128-XTS's 256-bit one; the 512-bit AES-256-CTR cascade against AES-256-CTR),
    and hashes of one family with different digest lengths (SHA-512 against SHA-256), each
    through one implementation, operation and block size: larger against smaller."""
    def group(m: Measurement) -> tuple[str, ...] | None:
        try:
            alg = algorithms.by_name(m.algorithm)
        except KeyError:
            return None
        if alg.kind == "cipher":
            return ("cipher", alg.family, str(alg.param("mode")).split("-")[0])
        if alg.kind == "hash" and alg.param("security_bits"):
            return ("hash", alg.family)
        return None

    def size(m: Measurement) -> int:
        alg = algorithms.by_name(m.algorithm)
        value = alg.param("key_bits" if alg.kind == "cipher" else "digest_bits")
        return value if isinstance(value, int) else 0

    by_slot: dict[tuple[Any, ...], list[Measurement]] = {}
    for m in rows:
        found = group(m)
        if found is not None and m.block_size:
            by_slot.setdefault((*found, m.implementation, m.operation, m.block_size),
                               []).append(m)
    pairs: list[tuple[Kind, Measurement, Measurement]] = []
    for slot, members in by_slot.items():
        ordered = sorted(members, key=size)
        for smaller, larger in itertools.pairwise(ordered):
            if size(larger) > size(smaller):
                pairs.append(("key size" if slot[0] == "cipher" else "digest size",
                              larger, smaller))
    return pairs


def _mode_pairs(rows: Sequence[Measurement]) -> list[tuple[Measurement, Measurement]]:
    """Each authenticated mode against XTS of its family at the same security (AES-256-GCM
    against AES-256-XTS, whose 512-bit key buys the same 256 bits): what authenticated
    encryption costs against disk encryption, which authenticates nothing, through one
    implementation, operation and block size."""
    def slot(m: Measurement, aead: bool) -> tuple[Any, ...] | None:
        try:
            alg = algorithms.by_name(m.algorithm)
        except KeyError:
            return None
        wanted = bool(alg.param("aead")) if aead else alg.param("mode") == "XTS"
        if alg.kind != "cipher" or not m.block_size or not wanted:
            return None
        return (alg.family, alg.param("security_bits"), m.implementation, m.operation,
                m.block_size)

    disk = {key: m for m in rows if (key := slot(m, aead=False)) is not None}
    return [(m, disk[key]) for m in rows
            if (key := slot(m, aead=True)) is not None and key in disk]


def _row_side(m: Measurement) -> Side:
    return Side(_label(m), ((m.key, 1),))


def _per(m: Measurement) -> str:
    """Per what a row's cost is counted: "byte (encrypt @16384B)", "encaps"."""
    return f"byte ({m.operation} @{m.block_size}B)" if m.block_size else m.operation


def _binding_ratios(rows: Sequence[Measurement], cycles: int, base: str) -> list[Ratio]:
    """Each binding against its native library: over the public-key operations both
    measured, and over the cipher and hash operations, at every block size together and at
    each block size alone (a geometric mean over sizes can hide that the binding is faster
    at one size and slower at another, so each size's answer stands beside it)."""
    index = {m.key: m for m in rows}
    found = []
    for binding, native in BINDINGS:
        pairs = [(m, index[m.key._replace(implementation=native)])
                 for m in rows if m.implementation == binding
                 and m.key._replace(implementation=native) in index]
        public = [p for p in pairs if p[0].block_size is None]
        bulk = [p for p in pairs if p[0].block_size is not None]
        sizes = sorted({b.block_size or 0 for b, _ in bulk})
        groups = [(public, f"operation (geometric mean of {len(public)})")]
        if len(sizes) > 1:
            groups.append((bulk, f"byte (geometric mean of {len(bulk)} at {len(sizes)} "
                                 "block sizes)"))
        for size in sizes:
            at = [p for p in bulk if p[0].block_size == size]
            groups.append((at, f"byte @{size}B (geometric mean of {len(at)})"
                          if len(at) > 1 else f"byte @{size}B ({at[0][0].algorithm} "
                                              f"{at[0][0].operation})"))
        for group, per in groups:
            if not group:
                continue
            ratio = _ratio("binding", per,
                           Side(binding, tuple((b.key, 1) for b, _ in group)),
                           Side(native, tuple((n.key, 1) for _, n in group)),
                           _geometric(group), cycles, base)
            if ratio is not None:
                found.append(ratio)
    return found


def cycles_of(run: Run) -> int:
    """How many cycles paired the rows of a run: 0 unless its rounds were interleaved."""
    if not run.settings.get("interleaved"):
        return 0
    return max((len(m.rounds) for m in run.measurements), default=0)


def _timed(run: Run) -> list[Measurement]:
    return [m for m in run.measurements if m.unit == "op" and m.rounds]


def run_ratios(run: Run) -> list[Ratio]:
    """Every headline ratio the run's rows allow: per exchange and per signature (post-quantum
    against classical), per byte (larger keys and digests against smaller), per binding.
    Empty for a run whose rounds were not taken in cycles (no pairs to compare). A `files
    hash` run's are per file (`file_ratios`)."""
    if run.kind == "files":
        return file_ratios(run)
    cycles = cycles_of(run)
    rows = _timed(run)
    if not cycles or not rows:
        return []
    base = _base(rows)
    found = _exchange_ratios(rows, cycles, base)
    pairs = [*_size_pairs(rows), *(("mode", *pair) for pair in _mode_pairs(rows))]
    for kind, larger, smaller in pairs:
        ratio = _ratio(kind, _per(larger), _row_side(larger), _row_side(smaller),
                       (_cost([(larger, 1.0)]), _cost([(smaller, 1.0)])), cycles, base)
        if ratio is not None:
            found.append(ratio)
    return found + _binding_ratios(rows, cycles, base) + _gap_ratios(rows, cycles, base)


def file_ratios(run: Run) -> list[Ratio]:
    """A `files hash` run's ratios, per file: hashing it against reading it (each hash
    pass with the read pass of its cycle), and each further hash against the first one
    asked for (SHA-512 against SHA-256: both passes of a cycle over the same file), per
    byte, in wall time. Empty with fewer than two passes per file (one pair bounds
    nothing)."""
    by_path: dict[str, list[Measurement]] = {}
    for m in run.measurements:
        if m.unit == "byte" and m.operation in ("read", "hash") and m.rounds:
            by_path.setdefault(str(m.attributes.get("path")), []).append(m)
    found: list[Ratio] = []
    for path, rows in by_path.items():
        reads = [m for m in rows if m.operation == "read"]
        hashes = [m for m in rows if m.operation == "hash"]
        cycles = min(len(m.rounds) for m in rows)
        if cycles < 2:
            continue
        per = f"byte of {path}"
        base = _base(rows)
        for m in hashes:
            for read in reads[:1]:
                ratio = _ratio("reading", per, _row_side(m), _row_side(read),
                               (_cost([(m, 1.0)]), _cost([(read, 1.0)])), cycles, base)
                if ratio is not None:
                    found.append(ratio)
        for m in hashes[1:]:
            first = hashes[0]
            kind: Kind = "digest size" if _digest_bits(m) > _digest_bits(first) and \
                _family(m) == _family(first) else "relative"
            ratio = _ratio(kind, per, _row_side(m), _row_side(first),
                           (_cost([(m, 1.0)]), _cost([(first, 1.0)])), cycles, base)
            if ratio is not None:
                found.append(ratio)
    return found


def _digest_bits(m: Measurement) -> int:
    try:
        bits = algorithms.by_name(m.algorithm).param("digest_bits")
    except KeyError:
        return 0
    return bits if isinstance(bits, int) else 0


def _family(m: Measurement) -> str | None:
    try:
        return algorithms.by_name(m.algorithm).family
    except KeyError:
        return None


def relative_to(run: Run, reference: str) -> list[Ratio]:
    """Every row's cost against the reference algorithm's row of the same operation and
    block size (through the same implementation where the reference has it, else the
    reference's first), and per exchange or signature where the roles allow."""
    cycles = cycles_of(run)
    rows = _timed(run)
    if not cycles:
        return []
    base = _base(rows)
    refs = [m for m in rows if m.algorithm == reference]
    found: list[Ratio] = []
    for m in rows:
        if m.algorithm == reference:
            continue
        same = [r for r in refs if (r.operation, r.block_size) == (m.operation, m.block_size)]
        ref = next((r for r in same if r.implementation == m.implementation), None) or \
            (same[0] if same else None)
        if ref is None:
            continue
        ratio = _ratio("relative", _per(m), _row_side(m), _row_side(ref),
                       (_cost([(m, 1.0)]), _cost([(ref, 1.0)])), cycles, base)
        if ratio is not None:
            found.append(ratio)
    public = [m for m in rows if m.block_size is None]
    for role in exchanges.ROLES:
        every = exchanges.exchanges(role, public)
        refs_ex = [ex for ex in every if ex.algorithm == reference]
        for ex in every:
            if ex.algorithm == reference or not refs_ex:
                continue
            ref_ex = next((r for r in refs_ex if r.implementation == ex.implementation),
                          refs_ex[0])
            ratio = _ratio("relative", role, _exchange_side(ex), _exchange_side(ref_ex),
                           (_cost([(m, c) for _, c, m in ex.operations]),
                            _cost([(m, c) for _, c, m in ref_ex.operations])), cycles, base)
            if ratio is not None:
                found.append(ratio)
    return found


def _base(rows: Iterable[Measurement]) -> str:
    bases = {m.time_base for m in rows}
    return bases.pop() if len(bases) == 1 else "mixed"


def mission(ratios: Sequence[Ratio]) -> list[Ratio]:
    """The ratios the mission asks for, in this order: per exchange and per signature the
    preferred post-quantum scheme (NIST level 3 first, as TLS deployments pick it) against
    every classical scheme measured (ML-KEM-768 against X25519 and ECDH P-256; ML-DSA-65
    against Ed25519, ECDSA P-256 and RSA-2048), through native implementations where
    measured, then through each foreign implementation measured (its own post-quantum
    against its own classical: what that stack pays), then each foreign implementation's
    gap to the reference; each key-size and digest-size ratio at the largest block
    measured; each binding, with its answer at each block size beside the mean over
    them."""
    chosen: list[Ratio] = []
    for role, preferred, _ in exchanges.HEADLINE_PAIRS:
        of_role = [r for r in ratios if r.kind == role]
        for name in preferred:
            mine = [r for r in of_role if r.numerator.rows[0][0].algorithm == name]
            if not mine:
                continue
            impl = min(mine, key=_native_first).numerator.rows[0][0].implementation
            chosen += [r for r in mine if r.numerator.rows[0][0].implementation == impl]
            chosen += [r for r in mine if r.numerator.rows[0][0].implementation != impl
                       and _within_stack(r)]
            chosen += [r for r in ratios if r.kind == "implementation" and r.per == role
                       and r.numerator.rows[0][0].algorithm == name]
            break
    largest: dict[tuple[str, str, str], Ratio] = {}
    for r in ratios:
        if r.kind in ("key size", "digest size", "mode"):
            key = r.numerator.rows[0][0]
            slot = (r.numerator.label, r.denominator.label, key.operation)
            block = key.block_size or 0
            if slot not in largest or block > (largest[slot].numerator.rows[0][0].block_size or 0):
                largest[slot] = r
    chosen += list(largest.values())
    chosen += [r for r in ratios if r.kind == "binding"]
    return chosen


def _within_stack(r: Ratio) -> bool:
    """A foreign implementation's ratio of two of its own rows."""
    impl = r.numerator.rows[0][0].implementation
    return impl in STACKS and impl == r.denominator.rows[0][0].implementation


def headline(ratios: Sequence[Ratio]) -> list[Ratio]:
    """`mission` with each role set against its baseline alone (X25519, Ed25519) where it
    was measured: the report's lead, one line a question."""
    chosen = mission(ratios)

    def against_baseline(r: Ratio) -> bool:
        return r.denominator.rows[0][0].algorithm == exchanges.BASELINE.get(r.kind)

    roles = {r.kind for r in chosen if against_baseline(r)}
    return [r for r in chosen if r.kind not in roles or against_baseline(r)]


def _native_first(r: Ratio) -> tuple[int, str]:
    natives = ("liboqs", "libcrypto")
    impl = r.numerator.rows[0][0].implementation
    return (0 if impl in natives else 1, impl)


def by_name(ratios: Iterable[Ratio]) -> Mapping[str, Ratio]:
    return {r.name: r for r in ratios}


@dataclass(frozen=True)
class Across:
    """One paired ratio followed from one group of runs to another: each run's estimate is
    one unit (its cycles are within-run detail), compared as `compare` compares runs."""

    name: str
    before: float
    after: float
    outcome: verdict.Outcome

    @property
    def change(self) -> str:
        """"rose" or "fell" where the ratio changed beyond the band, else the verdict."""
        if self.outcome.verdict == verdict.FASTER:
            return "rose"
        if self.outcome.verdict == verdict.SLOWER:
            return "fell"
        return self.outcome.verdict

    def as_dict(self) -> dict[str, Any]:
        return {**self.outcome.as_dict(), "name": self.name, "change": self.change,
                "runs_before": self.outcome.units_before,
                "runs_after": self.outcome.units_after}


def across(before: Sequence[Run], after: Sequence[Run], threshold: float | None = None,
           alpha: float = 0.01) -> list[Across]:
    """Every ratio both groups' runs have, from the estimate of each run: levels as
    geometric means of run estimates, the run-level interval and exact test of
    `replicates.compare_replicates` (Kalibera & Jones 2013: the run is the unit)."""
    from pqbench.analysis import replicates

    def estimates(runs: Sequence[Run]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for run in runs:
            for r in run_ratios(run):
                found.setdefault(r.name, []).append(r.estimate)
        return found

    side_before, side_after = estimates(before), estimates(after)
    changes = []
    for name, values in side_before.items():
        others = side_after.get(name)
        if not others:
            continue
        # A ratio is not a rate, but the run-level comparison of positive values is the
        # same: the outcome's ratio is after / before of the geometric means.
        outcome = replicates.compare_replicates([[v] for v in values], [[v] for v in others],
                                          threshold=threshold, alpha=alpha)
        changes.append(Across(name, outcome.before, outcome.after, outcome))
    return changes

"""The run format as typed models: what `--json` prints, `export` writes and `import` accepts.

One schema for the whole document (pydantic v2, strict: "123" is not the number 123), with
every number bounded to what the store can hold (BigInteger counts, Integer block sizes,
finite floats) and every string and list to a sane size, so a document that validates can
be stored in SQLite and PostgreSQL and rendered without surprises. Unknown fields are
refused where the format is closed (run, sample, problem, verification) and kept, as
bounded JSON, where it is open (a result row's attributes, settings, the fingerprint).

docs/run-format.schema.json is the JSON Schema generated from these models
(`python -m pqbench.data.record > docs/run-format.schema.json`).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    TypeAdapter,
    model_validator,
)

from pqbench.data.record.format import (
    LABEL_CHARS,
    MAX_COUNT,
    MAX_DEPTH,
    MAX_INT32,
    MAX_ITEMS,
    NAME_CHARS,
    TEXT_CHARS,
)
from pqbench.platform import interrupts

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$"


def _storable(value: str) -> str:
    """Text both stores accept: PostgreSQL refuses NUL, and UTF-8 has no lone surrogates."""
    if "\x00" in value:
        raise ValueError("text may not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text is not valid Unicode (lone surrogate)") from None
    return value


def _bounded_json(value: Any, depth: int = 0) -> Any:
    """Free-form JSON (attributes, fingerprint details): bounded like the typed fields."""
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        if len(value) > TEXT_CHARS:
            raise ValueError(f"text longer than {TEXT_CHARS} characters")
        _storable(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -MAX_COUNT <= value <= MAX_COUNT:
            raise ValueError("integer out of the 64-bit range the store holds")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite")
    elif isinstance(value, list | dict):
        if len(value) > MAX_ITEMS:
            raise ValueError(f"more than {MAX_ITEMS} items")
        for key in value if isinstance(value, dict) else ():
            _bounded_json(key, depth + 1)
        for item in value.values() if isinstance(value, dict) else value:
            _bounded_json(item, depth + 1)
    return value


Json = Annotated[JsonValue, AfterValidator(_bounded_json)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=NAME_CHARS),
                 AfterValidator(_storable)]
Key = Annotated[str, StringConstraints(max_length=NAME_CHARS), AfterValidator(_storable)]
Label = Annotated[str, StringConstraints(max_length=LABEL_CHARS), AfterValidator(_storable)]
Text = Annotated[str, StringConstraints(max_length=TEXT_CHARS), AfterValidator(_storable)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
BlockSize = Annotated[int, Field(ge=1, le=MAX_INT32)]
Bits = Annotated[int, Field(ge=0, le=65_536)]


def _timestamp(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("not an ISO 8601 date and time") from None
    return value


def _run_id(value: str) -> str:
    if not re.match(RUN_ID_PATTERN, value):
        raise ValueError(f"{value[:80]!r} is not a pqbench run id (letters, digits and "
                         "._:- up to 64 characters)")
    return value


#: Run ids name report directories and are typed by users: a safe alphabet, String(64).
RunId = Annotated[str, AfterValidator(_run_id), Field(json_schema_extra={
    "pattern": RUN_ID_PATTERN})]

#: started_at / finished_at: ISO 8601, as the store's String(40) columns hold them.
Timestamp = Annotated[str, StringConstraints(max_length=40), AfterValidator(_timestamp)]


def _items(limit: int = MAX_ITEMS) -> Any:
    """An optional list of at most `limit` items."""
    return Field(default=None, max_length=limit)


class _Closed(BaseModel):
    """A record whose fields are all known: anything else is refused."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid", defer_build=True)


class _Open(BaseModel):
    """A record with known fields plus free-form ones, kept as bounded JSON."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="allow", defer_build=True)
    __pydantic_extra__: dict[str, Json] = Field(init=False)


# --- measurements -------------------------------------------------------------------------


class Sample(_Closed):
    """One timed round: `ops` operations (bytes for file rows) in `elapsed_ns` ns."""

    ops: Count
    elapsed_ns: Annotated[int, Field(ge=1, le=MAX_COUNT)]
    cycles: Count | None = None


class _Row(_Open):
    """The row's key, its unit and its samples: what every result row has."""

    algorithm: Name
    implementation: Name
    operation: Name
    block_size: BlockSize | None = None
    #: What a sample's `ops` counts: operations, or bytes (file rows). Absent: operations.
    unit: Literal["op", "byte"] | None = None
    sizes: dict[Key, Count] = Field(default_factory=dict, max_length=64)
    cycle_counter: Text | None = None
    #: Every timed row has samples; a memory row (`pqbench memory`) has none.
    samples: list[Sample] = Field(max_length=MAX_ITEMS)


class _Summary(_Open):
    """Figures derived from the samples: recomputed when a run is loaded, checked here so
    that no file carries NaN or infinity."""

    ops_per_sec: NonNegative | None = None
    us_per_op: NonNegative | None = None
    bytes_per_sec: NonNegative | None = None
    #: The median's interval, in `ci_unit`: bytes/s for a row that moves bytes (a
    #: cipher's or hash's block, a file), as its headline `bytes_per_sec`; else ops/s.
    ci_low: NonNegative | None = None
    ci_high: NonNegative | None = None
    ci_unit: Literal["ops/s", "bytes/s"] | None = None
    ci_level: Fraction | None = None
    cv: NonNegative | None = None
    rounds: Count | None = None
    total_ops: Count | None = None
    cycles_per_op: NonNegative | None = None
    cycles_per_byte: NonNegative | None = None


class SpeedFacts(_Open):
    """`pqbench speed` rows: what a cipher's key buys, what one op is, how it was run."""

    key_bits: Bits | None = None
    security_bits: Bits | None = None
    quantum_security_bits: Bits | None = None
    per_op: Text | None = None
    #: The library behind a row where the implementation has several (python: hashlib ...).
    library: Name | None = None
    processes: Annotated[int, Field(ge=1, le=4096)] | None = None
    per_process_ops_per_sec: list[NonNegative] | None = _items(4096)
    cpus: list[Count] | None = _items(4096)
    cpu: Count | None = None
    #: The clock the row's rounds count (`elapsed_ns`) and its rates are in, and the other
    #: clock's time per round beside them.
    time_base: Literal["cpu", "wall"] | None = None
    wall_ns: list[Count] | None = _items()
    cpu_ns: list[Count] | None = _items()
    #: A foreign worker's rows (docs/stacks.md): the process's CPU time per round beside
    #: the thread's, and whether other threads (a JIT, a collector) worked beyond the
    #: margin while it was timed; how its speed settled before the timed rounds, in how
    #: much CPU time; the runtime, the CPU code path its library chose, how it signs, how
    #: it holds the key.
    process_cpu_ns: list[Count] | None = _items()
    helper_threads: bool | None = None
    warmup_rounds: Count | None = None
    warmup_settled: bool | None = None
    #: The measuring thread's CPU time over the warm-up, which its least time counts.
    warmup_cpu_ns: Count | None = None
    runtime: Text | None = None
    code_path: Text | None = None
    signing: Literal["hedged", "deterministic", "randomized"] | None = None
    key_form: Literal["seed", "expanded", "object"] | None = None
    public_key_form: Literal["object", "encoded"] | None = None
    messages: Count | None = None
    randomness: Text | None = None


class FileFacts(_Open):
    """`pqbench files` rows (unit "byte"): the file and what was in memory."""

    path: Text | None = None
    size: Count | None = None
    cache_mode: Name | None = None
    flags: list[Text] | None = _items(64)
    resident: Fraction | None = None
    digest: Text | None = None
    cached: bool | None = None


class TlsFacts(_Open):
    """`pqbench tls` rows (pqbench/measure/tls/runs.py): the cell, the bytes and the CPU."""

    group: Name | None = None
    certificate: Name | None = None
    transport: Name | None = None
    tls_library: Text | None = None
    signature_scheme: Name | None = None
    handshakes_per_sec: NonNegative | None = None
    client_bytes: Count | None = None
    server_bytes: Count | None = None
    certificates: Count | None = None
    round_trips: Count | None = None
    client_segments: Count | None = None
    server_segments: Count | None = None
    mtu: Count | None = None
    initial_window: Count | None = None
    client_cpu_us: NonNegative | None = None
    server_cpu_us: NonNegative | None = None
    client_cpu_ns: list[Count] | None = _items()
    server_cpu_ns: list[Count] | None = _items()


class MemoryFacts(_Open):
    """`pqbench memory` rows (pqbench/data/record/memory.py): counts, as the store keeps them."""

    stack_bytes: Count | None = None
    heap_bytes: Count | None = None
    allocations: Count | None = None
    memory_method: Text | None = None
    memory_calls: Annotated[int, Field(ge=1, le=MAX_ITEMS)] | None = None
    memory_range: dict[Key, Annotated[list[Count], Field(min_length=2, max_length=2)]] | None \
        = Field(default=None, max_length=16)


class AbFacts(_Open):
    """Rows of a `pqbench ab` session (pqbench/sessions/ab/session.py): the pairs and how it
    ended."""

    ab_seconds: NonNegative | None = None
    ab_order: Text | None = None
    ab_stopped: Text | None = None
    ab_looks: Count | None = None
    ab_cpu_ns: list[Count | None] | None = _items()
    ab_worker: list[Count] | None = _items()


class ResultRow(AbFacts, MemoryFacts, TlsFacts, FileFacts, SpeedFacts, _Summary, _Row):
    """One measurement: its key and samples, the summary derived from them, sizes, and the
    facts of its run kind (each group above). Other extra fields are kept as bounded JSON;
    every field besides the key, samples and summary is one of the row's attributes.
    """

    @model_validator(mode="after")
    def _samples_or_memory(self) -> ResultRow:
        """A timed row needs its samples; a memory row has its figures instead."""
        if self.stack_bytes is None and not self.samples:
            raise ValueError("a result needs at least one sample")
        if self.stack_bytes is not None and self.samples:
            raise ValueError("a memory row (with stack_bytes) carries no samples")
        if self.stack_bytes is not None and self.memory_method is None:
            raise ValueError("a memory row needs its memory_method")
        return self

    @model_validator(mode="before")
    @classmethod
    def _undefined_cv(cls, data: Any) -> Any:
        """pqbench before format checks wrote a single round's undefined CV as NaN."""
        if isinstance(data, dict) and isinstance(data.get("cv"), float) \
                and math.isnan(data["cv"]) and isinstance(data.get("samples"), list) \
                and len(data["samples"]) < 2:
            return {**data, "cv": None}
        return data


#: The fields of a row that are not attributes: its key and samples, and the summary.
ROW_FIELDS = frozenset(_Row.model_fields)
SUMMARY_FIELDS = frozenset(_Summary.model_fields)


class Problem(_Closed):
    """Something not measured, and why."""

    algorithm: Name
    implementation: Name
    operation: Name | None = None
    kind: Annotated[str, StringConstraints(min_length=1, max_length=32),
                    AfterValidator(_storable)]
    reason: Text


class Verification(_Closed):
    """The checks an (algorithm, implementation) passed before it was timed."""

    algorithm: Name
    implementation: Name
    checks: list[Name] = Field(max_length=1_000)


# --- settings and fingerprint --------------------------------------------------------------


class Settings(_Open):
    """How a run measured: speed settings or file-benchmark settings (extra keys kept)."""

    seconds: NonNegative | None = None
    rounds: Annotated[int, Field(ge=1, le=MAX_ITEMS)] | None = None
    warmup: NonNegative | None = None
    operations: list[Name] | None = _items(1_000)
    block_sizes: list[BlockSize] | None = _items(1_000)
    processes: Annotated[int, Field(ge=1, le=4096)] | None = None
    cpus: list[Count] | None = _items(4096)
    algorithm: Name | None = None
    jobs: Annotated[int, Field(ge=1, le=4096)] | None = None
    cache: Name | None = None
    label: Label | None = None
    aggregate_hash_bytes_per_sec: NonNegative | None = None
    total: Count | None = None
    files: Count | None = None
    seed: Annotated[int, Field(ge=-MAX_COUNT, le=MAX_COUNT)] | None = None
    removed: bool | None = None
    xts: Text | None = None


class OperatingSystem(_Open):
    system: Text | None = None
    name: Text | None = None
    version: Text | None = None
    distribution: Text | None = None
    kernel: Text | None = None
    kernel_build: Text | None = None
    build: Text | None = None


class Cpu(_Open):
    model: Text | None = None
    flags: list[Name] = Field(default_factory=list, max_length=1_000)
    count: Annotated[int, Field(ge=0, le=1 << 20)] | None = None


class Platform(_Open):
    """What explains an OS-level change besides the libraries (environment.platform_state)."""

    userland: Text | None = None
    kernel: Text | None = None
    libc: Text | None = None
    virtualization: dict[Key, Json] = Field(default_factory=dict, max_length=100)
    cpufreq: dict[Key, Text | None] = Field(default_factory=dict, max_length=100)
    smt: dict[Key, Text | None] = Field(default_factory=dict, max_length=100)
    microcode: Text | None = None
    mitigations: dict[Key, Text] = Field(default_factory=dict, max_length=1_000)


class MachineState(_Open):
    """The machine over the run's window (environment.load; format version 2): how long it
    was, the cores, the load averages (1, 5, 15 min) at its start and end, the share of all
    cores other processes took and the share a hypervisor stole, 0 to 1 (null: unknown)."""

    seconds: NonNegative | None = None
    cpus: Annotated[int, Field(ge=0, le=1 << 20)] | None = None
    loadavg_start: Annotated[list[NonNegative], Field(min_length=3, max_length=3)] | None \
        = None
    loadavg_end: Annotated[list[NonNegative], Field(min_length=3, max_length=3)] | None = None
    others_cpu: Fraction | None = None
    steal: Fraction | None = None


#: A GNU build-id (an ELF note of 8 to 64 bytes, commonly 20) and a SHA-256, as hex.
BUILD_ID_PATTERN = r"^[0-9a-f]{16,128}$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"


class Binary(_Open):
    """A shared object the measuring process loaded (environment.binaries; format version
    2): where, how large, which build (its build-id, else its content's SHA-256), the
    distribution package and version that own the file, the version string it answers."""

    path: Text | None = None
    size: Count | None = None
    build_id: Annotated[str, StringConstraints(pattern=BUILD_ID_PATTERN)] | None = None
    sha256: Annotated[str, StringConstraints(pattern=SHA256_PATTERN)] | None = None
    package: Name | None = None
    package_version: Text | None = None
    version: Text | None = None


class OpenSSLCapabilities(_Open):
    """The CPU capabilities one loaded OpenSSL uses (environment.openssl; format version 2):
    its vector as OpenSSL prints it, the capabilities set in it (the names `--mask` takes),
    and where the vector was read."""

    vector: Text | None = None
    enabled: list[Name] | None = _items(1_000)
    source: Text | None = None


class Fingerprint(_Open):
    """The environment a run measured in; the fields compare, history and reports read."""

    os: OperatingSystem | None = None
    os_build: Text | None = None
    arch: Name | None = None
    cpu: Cpu | None = None
    cpu_flags: list[Name] = Field(default_factory=list, max_length=1_000)
    libraries: dict[Key, Text | None] = Field(default_factory=dict, max_length=1_000)
    library_details: dict[Key, Json] = Field(default_factory=dict, max_length=1_000)
    knobs: dict[Key, Text | None] = Field(default_factory=dict, max_length=100)
    hostname: Text | None = None
    python_executable: Text | None = None
    # The store's testbed column is String(64).
    testbed: Annotated[str, StringConstraints(max_length=64), AfterValidator(_storable)] \
        | None = None
    label: Label | None = None
    mask: dict[Key, Json] | None = None
    storage: list[dict[Key, Json]] | None = _items(1_000)
    platform: Platform | None = None
    run: MachineState | None = None
    binaries: dict[Key, Binary] | None = Field(default=None, max_length=1_000)
    openssl_capabilities: dict[Key, OpenSSLCapabilities] | None = Field(default=None,
                                                                        max_length=100)


# --- documents ---------------------------------------------------------------------------


class RunDocument(_Closed):
    """One run: `pqbench speed --json`, one entry of an export."""

    format: Literal["pqbench-run"]
    format_version: Annotated[int, Field(ge=1, le=MAX_INT32)]
    run_id: RunId
    kind: Literal["speed", "files", "tls", "memory"] = "speed"
    status: Literal["complete", "interrupted", "failed"]
    started_at: Timestamp
    finished_at: Timestamp
    command: Text
    label: Label | None = None
    settings: Settings = Field(default_factory=Settings)
    environment: Fingerprint
    verifications: list[Verification] = Field(default_factory=list, max_length=MAX_ITEMS)
    results: list[ResultRow] = Field(max_length=MAX_ITEMS)
    problems: list[Problem] = Field(default_factory=list, max_length=MAX_ITEMS)
    #: What `speed --json` derived from the rows: the paired cost ratios between them
    #: (`analysis.ratios`). Read and ignored on import: they are recomputed from the rows.
    ratios: list[dict[Key, Json]] | None = _items()


class Bundle(_Closed):
    """`pqbench export --format json`: several run documents in one file."""

    format: Literal["pqbench-export"]
    format_version: Annotated[int, Field(ge=1, le=MAX_INT32)]
    exported_at: Timestamp | None = None
    runs: list[RunDocument] = Field(min_length=1, max_length=10_000)


_Model = TypeVar("_Model", bound=BaseModel)
_built = [False]


def built(model: type[_Model]) -> type[_Model]:
    """`model`, with every model of the run format built, Ctrl-C and SIGTERM held back
    while they are.

    The models build their validators on first use (`defer_build`, so that a command that
    validates nothing does not pay for them), and pydantic-core builds them in Rust, which
    reports an exception raised by the Python it calls meanwhile as a SchemaError: a signal
    landing there lost its KeyboardInterrupt, and `ab` ended with a traceback instead of
    keeping its finished pairs. All are built at once (about 60 ms, once per process): a
    model that validation makes on the way (a run's default `Settings`) would otherwise be
    built in the middle of it. Held back meanwhile (`interrupts.deferred`), a signal is
    delivered as the build ends, where pqbench handles it."""
    if not _built[0]:
        with interrupts.deferred():
            for each in list(globals().values()):
                if isinstance(each, type) and issubclass(each, BaseModel) \
                        and each.__module__ == __name__ and not each.__pydantic_complete__:
                    each.model_rebuild()
        _built[0] = True
    return model


def adapter(kind: Any) -> TypeAdapter[Any]:
    """A TypeAdapter of `kind`, its validator built as `built` builds the models'."""
    with interrupts.deferred():
        return TypeAdapter(kind)


def schema_of(kind: Any) -> dict[str, Any]:
    """The JSON Schema of `kind`, made with Ctrl-C and SIGTERM held back (`built`): pydantic
    builds the validators of the types it meets on the way."""
    with interrupts.deferred():
        return TypeAdapter(kind).json_schema()


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of the run format: an export bundle or one run document."""
    schema = schema_of(Bundle | RunDocument)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "pqbench run format (export bundle or run document)", **schema}


def field_path(loc: tuple[int | str, ...]) -> str:
    """A validation error's location as `results[3].samples[0].elapsed_ns`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not _TYPE_TAG.match(part):
            text += f".{part[:60]}" if text else part[:60]
    return text or "document"


# Union members and validator wrappers pydantic adds to an error's location.
_TYPE_TAG = re.compile(r"^(str|int|float|bool|list|dict|none|function-\w+\[.*\]|"
                       r"(?:constrained-)?\w+\[.*\])$")

"""The stack worker protocol, version 1 (docs/stacks.md): messages and their checks.

One JSON object per line on the worker's stdin (requests) and stdout (replies). Nothing a
worker sends is trusted: a hello and a round are checked field by field here, text is
bounded and stripped of control characters before it can reach a table or the store, and
anything else is a `ProtocolError` naming what was wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from pqbench.libraries.stacks import jvm
from pqbench.platform.untrusted import printable

VERSION = 1

#: The longest line either side writes, in bytes with its newline.
MAX_LINE = 1 << 20
#: Longest text kept from a worker (a library name, a version, a reason).
MAX_TEXT = 300
#: At most this many entries in any map a hello carries.
MAX_ENTRIES = 256

#: Every operation the protocol names, per kind of algorithm.
OPERATIONS = {"kem": ("keygen", "encaps", "decaps"), "signature": ("keygen", "sign", "verify"),
              "key-agreement": ("keygen", "derive")}
FEATURES = frozenset({"seeded_keygen", "derandomized_encaps", "deterministic_sign",
                      "import_expanded"})
#: Attributes a worker may report for a prepared row, and the values each may take.
ATTRIBUTES: dict[str, frozenset[str] | type] = {
    "signing": frozenset({"hedged", "deterministic", "randomized"}),
    "key_form": frozenset({"seed", "expanded", "object"}),
    #: How the public or peer key is held while timed: parsed once outside the clock, or
    #: decoded by each call (as crypto/mlkem's own benchmarks and liboqs do).
    "public_key_form": frozenset({"object", "encoded"}),
    "messages": int,
    #: Where the operation's randomness comes from ("AWS-LC DRBG", "getrandom per
    #: operation"): a cost some libraries pay per call and others amortise.
    "randomness": str,
}
SIZES = frozenset({"public_key", "secret_key", "ciphertext", "shared_secret", "signature",
                   "message"})


class ProtocolError(Exception):
    """A line that is not a message of this protocol, or a message that breaks it."""


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as one UTF-8 line (JSON escapes every newline inside strings)."""
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def read_line(stream: IO[bytes]) -> bytes:
    """The next line (b"" at the end), read with a bounded buffer: a line longer than
    MAX_LINE is a ProtocolError and is never held whole."""
    line = stream.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE or (len(line) == MAX_LINE and not line.endswith(b"\n")):
        raise ProtocolError(f"a line longer than {MAX_LINE} bytes: {excerpt(line[:40])}")
    return line


def decode(line: bytes) -> dict[str, Any]:
    """A message from a line; ProtocolError when it is not one."""
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ProtocolError(f"not a JSON line: {excerpt(line)}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError(f"not a protocol message (no type): {excerpt(line)}")
    return message


def excerpt(line: bytes | str, width: int = 80) -> str:
    text = line.decode("utf-8", "backslashreplace") if isinstance(line, bytes) else line
    text = jvm.shown_line(text.strip())
    return repr(printable(text if len(text) <= width else text[:width] + "..."))


def text(value: object, what: str) -> str:
    """A short string from a worker, made printable; ProtocolError if it is not one."""
    if not isinstance(value, str) or not value.strip():
        raise ProtocolError(f"{what} must be a non-empty string, not {excerpt(str(value))}")
    if len(value) > MAX_TEXT:
        raise ProtocolError(f"{what} is longer than {MAX_TEXT} characters")
    return printable(value)


def count(value: object, what: str, low: int = 0) -> int:
    """A JSON integer of at least `low` (a bool is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ProtocolError(f"{what} must be an integer >= {low}, not {excerpt(str(value))}")
    return value


def hex_bytes(message: Mapping[str, Any], key: str) -> bytes:
    """A byte string field (hex, either case)."""
    value = message.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"{message.get('type')} reply has no {key} hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ProtocolError(f"{message.get('type')} reply's {key} is not hex: "
                            f"{excerpt(value)}") from None


def _text_map(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or len(value) > MAX_ENTRIES:
        raise ProtocolError(f"hello's {what} must be an object of at most {MAX_ENTRIES} "
                            "entries")
    return {text(k, f"a key of {what}"): text(v, f"{what}[{k!r}]") for k, v in value.items()}


def _list_map(value: object, what: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict) or len(value) > MAX_ENTRIES:
        raise ProtocolError(f"hello's {what} must be an object of at most {MAX_ENTRIES} "
                            "entries")
    found = {}
    for key, items in value.items():
        if not isinstance(items, list) or len(items) > 32:
            raise ProtocolError(f"hello's {what}[{excerpt(str(key))}] must be a list")
        found[text(key, f"a key of {what}")] = tuple(text(i, what) for i in items)
    return found


@dataclass(frozen=True)
class Hello:
    """What a worker says about itself before anything else."""

    implementation: str
    runtime: str
    libraries: Mapping[str, str]
    offers: Mapping[str, tuple[str, ...]]
    features: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    code_paths: Mapping[str, str] = field(default_factory=dict)
    library_of: Mapping[str, str] = field(default_factory=dict)
    pid: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The hello as stored in a build's manifest and the run's fingerprint."""
        return {"implementation": self.implementation, "runtime": self.runtime,
                "libraries": dict(self.libraries),
                "offers": {k: list(v) for k, v in self.offers.items()},
                "features": {k: list(v) for k, v in self.features.items()},
                "code_paths": dict(self.code_paths), "library_of": dict(self.library_of)}


def parse_hello(message: Mapping[str, Any], expected: str) -> Hello:
    """A Hello from the first message, which must name protocol 1 and `expected`."""
    if message.get("type") != "hello":
        raise ProtocolError(f"the first line must be a hello, not {excerpt(str(message))}")
    if message.get("protocol") != VERSION:
        raise ProtocolError(f"the worker speaks protocol {excerpt(str(message.get('protocol')))}"
                            f", pqbench {VERSION}")
    name = text(message.get("implementation"), "implementation")
    if name != expected:
        raise ProtocolError(f"the worker says it is {name!r}, pqbench started {expected!r}")
    offers = _list_map(message.get("offers"), "offers")
    for alg, operations in offers.items():
        unknown = [op for op in operations if op not in _all_operations()]
        if unknown:
            raise ProtocolError(f"hello offers unknown operations for {alg}: {unknown}")
    features = _list_map(message.get("features", {}), "features")
    for alg, named in features.items():
        unknown = [f for f in named if f not in FEATURES]
        if unknown:
            raise ProtocolError(f"hello names unknown features for {alg}: {unknown}")
    pid = message.get("pid")
    return Hello(
        implementation=name,
        runtime=text(message.get("runtime"), "runtime"),
        libraries=_libraries(message.get("libraries")),
        offers=offers,
        features=features,
        code_paths=_text_map(message.get("code_paths", {}), "code_paths"),
        library_of=_text_map(message.get("library_of", {}), "library_of"),
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None)


#: The entry of a JVM worker's libraries that holds its JVM options.
JVM_OPTIONS = "jvm options"


def _libraries(value: object) -> dict[str, str]:
    """The hello's libraries, with a JVM's options as `jvm.shown_options` keeps them: never
    the values a user's JAVA_TOOL_OPTIONS or _JAVA_OPTIONS carried."""
    found = _text_map(value, "libraries")
    if JVM_OPTIONS in found:
        found[JVM_OPTIONS] = jvm.shown_options(found[JVM_OPTIONS])
    return found


def _all_operations() -> frozenset[str]:
    return frozenset(op for ops in OPERATIONS.values() for op in ops)


@dataclass(frozen=True)
class Prepared:
    """A row the worker prepared: its sizes and the facts stored with it."""

    sizes: Mapping[str, int]
    attributes: Mapping[str, object]


def parse_prepared(message: Mapping[str, Any], row: str) -> Prepared:
    if message.get("row") != row:
        raise ProtocolError(f"prepared names row {excerpt(str(message.get('row')))}, "
                            f"not {row!r}")
    sizes = message.get("sizes")
    attributes = message.get("attributes", {})
    if not isinstance(sizes, dict) or not isinstance(attributes, dict):
        raise ProtocolError("prepared needs sizes and attributes objects")
    kept_sizes = {key: count(value, f"size {key}", 1) for key, value in sizes.items()
                  if key in SIZES}
    kept: dict[str, object] = {}
    for key, value in attributes.items():
        allowed = ATTRIBUTES.get(key)
        if allowed is int:
            kept[key] = count(value, f"attribute {key}", 1)
        elif allowed is str:
            kept[key] = text(value, f"attribute {key}")
        elif isinstance(allowed, frozenset):
            if value not in allowed:
                raise ProtocolError(f"attribute {key} must be one of {sorted(allowed)}, "
                                    f"not {excerpt(str(value))}")
            kept[key] = value
    return Prepared(kept_sizes, kept)


@dataclass(frozen=True)
class Round:
    """One timed round as the worker measured it."""

    ops: int
    wall_ns: int
    thread_cpu_ns: int
    process_cpu_ns: int


#: Clocks read a few instructions apart disagree by this much at most (ns), plus a share.
_CLOCK_SLACK_NS = 2_000_000
_CLOCK_SLACK_SHARE = 0.02
#: No clock reads more: a signed 64-bit count of nanoseconds (292 years), the most either
#: store, an export and an import hold.
MAX_NS = (1 << 63) - 1
#: The clocks of a round, as the protocol names them.
CLOCKS = ("wall_ns", "thread_cpu_ns", "process_cpu_ns")


def _slack(ns: int) -> int:
    return _CLOCK_SLACK_NS + int(ns * _CLOCK_SLACK_SHARE)


def parse_round(message: Mapping[str, Any], row: str, seconds: float,
                waited_ns: int | None = None, cpus: int = 1,
                previous: Round | None = None) -> Round:
    """A round that could be true, or a ProtocolError saying why it cannot.

    One rule for every clock (`CLOCKS`): it counts at least one nanosecond per operation
    (no operation is faster than that, in wall or in CPU time), and no more than could
    have passed: the `waited_ns` pqbench itself waited for the reply, where it measured it
    (a process's CPU time at most that on each of its `cpus`), and never more than
    MAX_NS. Besides: the row asked for, at least one operation, at least the seconds
    asked, one thread's CPU time within the wall time and within the process's, and not
    the `previous` round of the row again to the nanosecond on every clock (a worker
    that repeats its replies is out of step with its requests)."""
    if message.get("row") != row:
        raise ProtocolError(f"round names row {excerpt(str(message.get('row')))}, "
                            f"not {row!r}")
    found = Round(count(message.get("ops"), "ops", 1),
                  *(count(message.get(clock), clock, 0) for clock in CLOCKS))
    ceilings = {clock: MAX_NS for clock in CLOCKS}
    if waited_ns is not None:
        ceilings["wall_ns"] = ceilings["thread_cpu_ns"] = min(
            MAX_NS, waited_ns + _slack(waited_ns))
        ceilings["process_cpu_ns"] = min(MAX_NS, max(cpus, 1) * waited_ns + _slack(waited_ns))
    for clock in CLOCKS:
        ns = getattr(found, clock)
        if ns > ceilings[clock]:
            waited = ("any clock's range" if waited_ns is None or ceilings[clock] == MAX_NS
                      else f"the {waited_ns / 1e9:.3g} s pqbench waited for it")
            raise ProtocolError(f"{clock} of {ns} ns is more than {waited}")
        if found.ops > ns:
            raise ProtocolError(f"{found.ops} operations in {ns} ns of {clock}: faster "
                                "than one per nanosecond")
    if found.wall_ns < int(seconds * 1e9) - 1000:
        raise ProtocolError(f"a round of {found.wall_ns} ns, shorter than the {seconds:g} s "
                            "asked")
    if found.thread_cpu_ns > found.wall_ns + _slack(found.wall_ns):
        raise ProtocolError(f"thread CPU time {found.thread_cpu_ns} ns exceeds the wall "
                            f"time {found.wall_ns} ns")
    if found.thread_cpu_ns > found.process_cpu_ns + _slack(found.process_cpu_ns):
        raise ProtocolError(f"thread CPU time {found.thread_cpu_ns} ns exceeds the process's "
                            f"{found.process_cpu_ns} ns")
    if found == previous:
        raise ProtocolError("the same round as the row's last one, to the nanosecond on "
                            "every clock: a reply repeated")
    return found

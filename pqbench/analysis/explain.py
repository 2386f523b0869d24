"""Explain a jump: what differs between two fingerprints, and what plausibly touches a row.

A cause is ranked by how directly it reaches the row's code path:

* strong: a CPU capability the row's algorithm dispatches on changed, either on the CPU
  (`cpu_flags`), as asked of OpenSSL (`knobs.OPENSSL_ia32cap`/`OPENSSL_armcap`) or as the
  loaded OpenSSL uses it (`openssl_capabilities`, its effective vector) for an
  implementation that runs on OpenSSL; e.g. an AES row and hidden AES-NI.
* likely: the library that implements the row changed (liboqs for liboqs rows, the
  cryptography package or its bundled OpenSSL for cryptography rows, the system libcrypto
  for libcrypto rows), by its version or, under the same version string, as another
  binary: a loaded library whose build-id (or content hash) differs is another build of
  it, as a distribution's security update or a rebuild with other options is, and is
  ranked as a version change is.
* weak: everything else that can move every row a little: OS build, kernel, Python, host.

A cause must be able to act: hiding a capability the CPU does not have changes
nothing, so a mask or OPENSSL_ia32cap bit for a missing capability is no cause, and the
differences list says so ("hides shani; this CPU has no SHA-NI: no effect expected"); the
same for a CPU flag that no compared row's code uses. liboqs built with OQS_USE_OPENSSL
takes SHA-2, AES and its random bytes from the system libcrypto, so a change of that
library is a likely cause for liboqs rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pqbench.catalog.algorithms import capabilities
from pqbench.catalog.algorithms.capabilities import ARM_CRYPTO_FLAGS, X86_CRYPTO_FLAGS
from pqbench.data.record.fingerprint import (
    BINARY_USERS,
    INERT_FIELDS,
    INERT_PARTS,
    KNOB_FIELDS,
    LIBRARY_FIELDS,
    SYSTEM_LIBCRYPTO_FIELDS,
    Fingerprint,
    binary_identity,
)

STRENGTHS = ("strong", "likely", "weak")

#: Fingerprint fields that never explain anything (`record.fingerprint.INERT_FIELDS`).
IGNORED = INERT_FIELDS

#: Implementations (or the library a row says it used) that run on an OpenSSL libcrypto,
#: so OPENSSL_*cap reaches them. Python's hashlib links the system libcrypto.
OPENSSL_BASED = {"cryptography", "libcrypto", "hashlib", "openssl"}

#: liboqs rows: liboqs reaches OpenSSL for randomness and SHA-2 when built with it.
LIBOQS_ON_OPENSSL = {"liboqs", "liboqs-python"}

#: Library fields per implementation (`record.fingerprint.LIBRARY_FIELDS`).
LIBRARIES = LIBRARY_FIELDS

#: Fields that say the system libcrypto changed; liboqs built with OQS_USE_OPENSSL uses it.
SYSTEM_LIBCRYPTO = (*SYSTEM_LIBCRYPTO_FIELDS, "binaries.libcrypto")

#: Which OpenSSL each `openssl_capabilities` entry is, by the rows that run on it.
CAPABILITY_USERS = {"libcrypto": BINARY_USERS["libcrypto"],
                    "cryptography": BINARY_USERS["cryptography"]}

#: How people name the capabilities in prose ("this CPU has no SHA-NI").
COMMON_NAMES = {"aesni": "AES-NI", "shani": "SHA-NI", "pclmulqdq": "PCLMULQDQ",
                "ssse3": "SSSE3", "avx": "AVX", "avx2": "AVX2", "avx512": "AVX-512",
                "bmi2": "BMI2", "adx": "ADX", "vaes": "VAES", "vpclmulqdq": "VPCLMULQDQ"}

#: Algorithm name prefixes (upper case, without "-") and the capabilities their fast paths use.
CAPABILITIES_USED: tuple[tuple[tuple[str, ...], frozenset[str]], ...] = (
    (("AES",), frozenset({"aesni", "vaes", "vpclmulqdq", "pclmulqdq", "avx512", "avx", "aes",
                          "pmull"})),
    (("SHA1", "SHA256", "SHA224", "HMACSHA256", "HMACSHA1"),
     frozenset({"shani", "avx2", "avx", "ssse3", "sha1", "sha256"})),
    (("SHA512", "SHA384", "HMACSHA512"), frozenset({"avx2", "avx", "ssse3", "sha512"})),
    (("SHA3", "SHAKE"), frozenset({"avx512", "avx2", "sha3"})),
    (("CHACHA", "POLY1305"), frozenset({"avx512", "avx2", "avx", "ssse3", "neon"})),
    (("GHASH", "GMAC"), frozenset({"pclmulqdq", "vpclmulqdq", "avx", "pmull"})),
    (("RSA", "DH"), frozenset({"adx", "bmi2", "avx512", "avx2"})),
    (("EC", "P256", "P384", "P521", "X25519", "X448", "ED25519", "ED448", "SECP"),
     frozenset({"adx", "bmi2", "avx2"})),
    (("MLKEM", "MLDSA", "KYBER", "DILITHIUM", "SLHDSA", "SPHINCS", "FALCON", "HQC"),
     frozenset({"avx2", "avx512", "aesni", "neon"})),
)


@dataclass(frozen=True)
class Difference:
    """A fingerprint field whose values differ; a side lists several values if its runs did.

    ``note`` says when the difference cannot act here ("no effect expected").
    """

    field: str
    before: Any
    after: Any
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after,
                "note": self.note}


@dataclass(frozen=True)
class Context:
    """What the compared runs say about where a difference can act.

    ``cpu_flags``: the crypto flags of the CPUs the runs ran on (None: unknown, so every
    capability may act). ``liboqs_openssl``: whether liboqs was built with OQS_USE_OPENSSL
    (None: unknown, assumed as pqbench builds it).
    """

    cpu_flags: frozenset[str] | None = None
    liboqs_openssl: bool | None = None

    def lacks(self, capability: str) -> bool:
        """True when the CPU is known not to have this capability (so hiding it is moot).

        Capabilities whose flag the fingerprint does not record (ssse3, avx) are never
        known to be missing.
        """
        if self.cpu_flags is None:
            return False
        for table in (capabilities.X86, capabilities.ARM):
            cap = table.get(capability)
            if cap is not None and cap.cpu_flag in (*X86_CRYPTO_FLAGS, *ARM_CRYPTO_FLAGS):
                return cap.cpu_flag not in self.cpu_flags
        return False


def context_of(fingerprints: Iterable[Mapping[str, Any]]) -> Context:
    """The Context of a set of runs: the union of their CPU flags (a capability any of the
    CPUs has may act) and whether their liboqs used OpenSSL."""
    flags: set[str] = set()
    known = False
    openssl: bool | None = None
    for env in map(Fingerprint, fingerprints):
        listed = env.cpu_flags
        if listed is not None:
            flags.update(listed)
            known = True
        uses = env.liboqs_uses_openssl
        if uses is not None:
            openssl = bool(openssl) or uses
    return Context(frozenset(flags) if known else None, openssl)


@dataclass(frozen=True)
class Cause:
    """A difference that plausibly explains a row, how strongly, and why.

    ``why`` speaks of this row ("... uses it for AES-256-XTS"); ``general`` says the same
    of every row it applies to, so causes shared by many rows can be told once (`news`).
    """

    field: str
    before: Any
    after: Any
    strength: str
    why: str
    general: str = ""

    @property
    def shared_why(self) -> str:
        """The row-independent explanation: ``general`` where the why names the row."""
        return self.general or self.why

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after,
                "strength": self.strength, "why": self.why}


def flatten(fingerprint: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted paths to leaf values; lists stay whole (a set of CPU flags is one value)."""
    flat: dict[str, Any] = {}
    for key, value in fingerprint.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


def _distinct(values: Iterable[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(json.dumps(value, sort_keys=True, default=str), value)
    return list(seen.values())


def _ignored(path: str) -> bool:
    """Fields that never explain: the inert ones, the machine's state over a run, and
    the parts read whole below (a binary by its identity; an OpenSSL's capabilities by
    the set it uses, not by how its vector is spelled or where it was read)."""
    return path in IGNORED or path.split(".", 1)[0] in (*INERT_PARTS, "binaries") \
        or (path.startswith("openssl_capabilities.")
            and not path.endswith(".enabled"))


def differences(before: Sequence[Mapping[str, Any]],
                after: Sequence[Mapping[str, Any]]) -> list[Difference]:
    """Fields whose set of values differs between the two groups of fingerprints, and each
    loaded binary whose identity differs (`binary_differences`)."""
    flat_before = [flatten(f) for f in before]
    flat_after = [flatten(f) for f in after]
    paths: dict[str, None] = {}
    for flat in (*flat_before, *flat_after):
        paths.update(dict.fromkeys(flat))
    found: list[Difference] = []
    for path in paths:
        if _ignored(path):
            continue
        old = _distinct(f.get(path) for f in flat_before)
        new = _distinct(f.get(path) for f in flat_after)
        if path.startswith("openssl_capabilities.") and (old == [None] or new == [None]):
            continue  # unknown on a side (a run before pqbench read it): not a change
        if _keys(old) != _keys(new):
            found.append(Difference(path, old[0] if len(old) == 1 else old,
                                    new[0] if len(new) == 1 else new))
    return found + binary_differences(before, after)


def binary_differences(before: Sequence[Mapping[str, Any]],
                       after: Sequence[Mapping[str, Any]]) -> list[Difference]:
    """Each loaded binary (`binaries.<role>`) that is another build on the other side: its
    identity (build-id, else content hash) differs and is known on both sides (a run
    recorded before pqbench kept identities tells nothing). The values are the binaries'
    entries (path, size, identity, package, version), one per side or a list of them."""
    sides = [[Fingerprint(f).binaries for f in group] for group in (before, after)]
    roles: dict[str, None] = {}
    for side in sides:
        for found in side:
            roles.update(dict.fromkeys(found))
    differing = []
    for role in roles:
        entries = [_distinct_by_identity(found.get(role) for found in side) for side in sides]
        if not all(entries) or any(binary_identity(e) is None for e in (*entries[0],
                                                                          *entries[1])):
            continue
        if {binary_identity(e) for e in entries[0]} != {binary_identity(e) for e in entries[1]}:
            old, new = entries
            differing.append(Difference(f"binaries.{role}", old[0] if len(old) == 1 else old,
                                        new[0] if len(new) == 1 else new))
    return differing


def _distinct_by_identity(entries: Iterable[Any]) -> list[dict[str, Any]]:
    found: dict[str | None, dict[str, Any]] = {}
    for entry in entries:
        if isinstance(entry, Mapping):
            found.setdefault(binary_identity(entry), dict(entry))
    return list(found.values())


def short_identity(entry: Mapping[str, Any]) -> str:
    """"build-id 30563306a0d3…": enough hex to tell two builds apart in a sentence."""
    known = binary_identity(entry) or "unknown"
    kind, _, digest = known.partition(" ")
    return f"{kind} {digest[:12]}…" if len(digest) > 12 else known


def binary_text(entry: Mapping[str, Any]) -> str:
    """A loaded binary on one line: its whole identity, package, version, size and path."""
    parts = [binary_identity(entry) or "identity unknown", _package(entry)]
    if entry.get("version"):
        parts.append(str(entry["version"]))
    if entry.get("size"):
        parts.append(f"{entry['size']} bytes")
    if entry.get("path"):
        parts.append(str(entry["path"]))
    return "; ".join(parts)


def _package(entry: Mapping[str, Any]) -> str:
    package = entry.get("package")
    if not package:
        return "no package"
    version = entry.get("package_version")
    return f"{package} {version}" if version else str(package)


def binary_change(before: Any, after: Any) -> str:
    """A binary's change in words: "same version string, another binary (build-id
    30563306a0d3… → 1a2b3c4d5e6f…, libssl3 3.0.19-1~deb12u1 → 3.0.19-1~deb12u2)"; the
    version change instead where the version strings differ, and the paths and sizes where
    they differ too."""
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return "another binary on one side or both (several builds among the runs)"
    old_version, new_version = before.get("version"), after.get("version")
    if old_version and new_version and old_version == new_version:
        head = "same version string, another binary"
    elif old_version and new_version:
        head = f"{old_version} → {new_version}, another binary"
    else:
        head = "another binary"
    old_id, new_id = short_identity(before), short_identity(after)
    kind = old_id.split(" ")[0]
    if new_id.split(" ")[0] == kind:  # "build-id 3056… → 1a2b…": the kind said once
        new_id = new_id.removeprefix(f"{kind} ")
    parts = [f"{old_id} → {new_id}"]
    if _package(before) != _package(after):
        if before.get("package") and before.get("package") == after.get("package"):
            parts.append(f"{before['package']} {before.get('package_version')} → "
                         f"{after.get('package_version')}")
        else:
            parts.append(f"{_package(before)} → {_package(after)}")
    if before.get("size") != after.get("size") and before.get("size") and after.get("size"):
        parts.append(f"{before['size']} → {after['size']} bytes")
    if before.get("path") != after.get("path"):
        parts.append(path_change(str(before.get("path")), str(after.get("path"))))
    return f"{head} ({', '.join(parts)})"


#: A run of folders both paths share is elided ("…") from this many characters on.
ELIDED_RUN = 16


def path_change(before: str, after: str) -> str:
    """Two paths with the folders they share elided where that run is long, so the part
    that differs shows: "…/cryptography-39.0.2/…/_rust.abi3.so → …/cryptography-40.0.0/…/
    _rust.abi3.so" (a pip build's 110-character path told whole, twice, hid it)."""
    old, new = before.split("/"), after.split("/")
    lead = 0
    while lead < min(len(old), len(new)) - 1 and old[lead] == new[lead]:
        lead += 1
    tail = 0
    while (tail < min(len(old), len(new)) - lead - 1
           and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
        tail += 1

    def told(parts: list[str]) -> str:
        shared_lead, middle = parts[:lead], parts[lead:len(parts) - tail]
        shared_tail = parts[len(parts) - tail:]
        text = "/".join(middle)
        text = ("…/" if len("/".join(shared_lead)) >= ELIDED_RUN else
                "/".join(shared_lead) + "/" if shared_lead else "") + text
        if shared_tail:
            folders, name = shared_tail[:-1], shared_tail[-1]
            text += ("/…/" if len("/".join(folders)) >= ELIDED_RUN else
                     "/" + "".join(f"{f}/" for f in folders)) + name
        return text

    return f"{told(old)} → {told(new)}"


def _keys(values: list[Any]) -> set[str]:
    return {json.dumps(v, sort_keys=True, default=str) for v in values}


def capabilities_used(algorithm: str) -> frozenset[str]:
    """Capabilities the fast paths of an algorithm use (empty when none is known)."""
    name = algorithm.upper().replace("-", "").replace("_", "")
    for prefixes, caps in CAPABILITIES_USED:
        if name.startswith(prefixes):
            return caps
    return frozenset()


def causes_for(algorithm: str, implementation: str, found: Sequence[Difference],
               *, library: str | None = None, context: Context | None = None,
               operation: str | None = None) -> list[Cause]:
    """The differences that plausibly explain a change in this row, strongest first.

    ``library`` is what the row says the implementation used (the python implementation
    names hashlib, blake3 ...); it decides whether OpenSSL's capability knobs reach the row.
    ``context`` says which capabilities the CPU has: hiding one it lacks is no cause.
    ``operation`` (when known) says whether a liboqs row draws random bytes from OpenSSL.
    """
    context = context or Context()
    used = capabilities_used(algorithm)
    openssl = implementation in OPENSSL_BASED or library in OPENSSL_BASED
    causes: list[Cause] = []
    for diff in found:
        cause = (_capability_cause(diff, algorithm, library or implementation, used, openssl,
                                   context, operation)
                 or _effective_capability_cause(diff, algorithm, implementation, library, used,
                                                context)
                 or _libcrypto_under_liboqs(diff, implementation, context)
                 or _binary_cause(diff, implementation, library)
                 or _python_under_loop(diff, implementation)
                 or _library_cause(diff, implementation)
                 or (_library_cause(diff, library) if library else None)
                 or _weak_cause(diff))
        if cause is not None:
            causes.append(cause)
    causes.sort(key=lambda c: STRENGTHS.index(c.strength))
    return causes


def _values(side: Any) -> list[Any]:
    return side if isinstance(side, list) and side and isinstance(side[0], list) else [side]


def _capability_cause(diff: Difference, algorithm: str, implementation: str,
                      used: frozenset[str], openssl: bool, context: Context,
                      operation: str | None = None) -> Cause | None:
    if diff.field in KNOB_FIELDS:
        var = diff.field.split(".", 1)[1]
        if implementation in LIBOQS_ON_OPENSSL:
            return _liboqs_on_openssl(diff, var, context, operation)
        if not openssl:
            return None
        hidden_before = _hidden(var, diff.before)
        hidden_after = _hidden(var, diff.after)
        changed = {c for c in (hidden_before ^ hidden_after) & used if not context.lacks(c)}
        if not changed:
            return None
        parts = []
        if changed & hidden_before:
            parts.append(f"hides {', '.join(sorted(changed & hidden_before))} before")
        if changed & hidden_after:
            parts.append(f"hides {', '.join(sorted(changed & hidden_after))} after")
        pronoun = "it" if len(changed) == 1 else "them"
        hides = f"{var} {' and '.join(parts)}"
        why = f"{hides}; {implementation}'s OpenSSL uses {pronoun} for {algorithm}"
        general = f"{hides}; the rows' OpenSSL uses {pronoun}"
        return Cause(diff.field, diff.before, diff.after, "strong", why, general)
    if diff.field == "cpu_flags":
        flags = {capabilities.capability_of_flag(f) or f for f in _flag_change(diff)} & used
        if not flags:
            return None
        named = ", ".join(sorted(flags))
        return Cause(diff.field, diff.before, diff.after, "strong",
                     f"CPU capability {named} differs; {algorithm} code paths dispatch on it",
                     f"CPU capability {named} differs; the rows' code paths dispatch on it")
    return None


def _flag_change(diff: Difference) -> set[str]:
    old = {f for v in _values(diff.before) for f in (v or [])}
    new = {f for v in _values(diff.after) for f in (v or [])}
    return old ^ new


#: liboqs operations that draw random bytes (from OpenSSL's DRBG under OQS_USE_OPENSSL).
RANDOMIZED = frozenset({"keygen", "encaps", "sign"})


def _liboqs_on_openssl(diff: Difference, var: str, context: Context,
                       operation: str | None) -> Cause | None:
    """liboqs built with OQS_USE_OPENSSL (as pqbench builds it) draws its randomness from
    OpenSSL's AES CTR-DRBG and hashes SHA-2 there: hidden AES-NI reaches the operations
    that draw random bytes (keygen, encaps, sign), hidden SHA-NI those that hash with
    SHA-2, never the core arithmetic: a paired session with both hidden moves keygen and
    encaps, which draw random bytes, and leaves decaps alone (docs: measurements). Hence
    *likely* for an operation that draws random bytes, *weak* where only SHA-2 could be
    involved or the operation is unknown."""
    if context.liboqs_openssl is False:
        return None
    hidden = {c for c in _hidden(var, diff.before) ^ _hidden(var, diff.after)
              if not context.lacks(c)}
    drbg = hidden & {"aesni", "aes"}
    sha2 = hidden & {"shani", "sha256"}
    if operation in RANDOMIZED and drbg:
        differs = f"{var} differs in {', '.join(sorted(hidden))}; liboqs built with OQS_USE_OPENSSL"
        return Cause(diff.field, diff.before, diff.after, "likely",
                     f"{differs} draws the random bytes of {operation} from OpenSSL's AES "
                     "CTR-DRBG",
                     f"{differs} draws the random bytes of keygen, encaps and sign from "
                     "OpenSSL's AES CTR-DRBG")
    if not (sha2 or (drbg and operation is None)):
        return None
    return Cause(diff.field, diff.before, diff.after, "weak",
                 f"{var} differs in {', '.join(sorted(hidden))}; liboqs built with "
                 "OQS_USE_OPENSSL takes its random bytes (AES CTR-DRBG) and SHA-2 from "
                 "OpenSSL")


#: Implementations timed in a Python loop, each call through the interpreter (ctypes for
#: liboqs-python, PyO3 for cryptography, C calls for hashlib and friends).
PYTHON_LOOP = {"liboqs-python", "cryptography", "python"}


def _python_under_loop(diff: Difference, implementation: str) -> Cause | None:
    """Another Python changes what each call of a Python-loop row costs (the binding's
    share: liboqs-python keeps about 85-95 % of native speed here), so it is a likely
    cause for those rows and a weak one for the native loops."""
    if diff.field != "libraries.python" or implementation not in PYTHON_LOOP:
        return None
    return Cause(diff.field, diff.before, diff.after, "likely",
                 f"{implementation} rows are timed in a Python loop: every call goes through "
                 "the interpreter, whose version sets the binding's cost",
                 "these rows are timed in a Python loop: every call goes through the "
                 "interpreter, whose version sets the binding's cost")


def _libcrypto_under_liboqs(diff: Difference, implementation: str,
                            context: Context) -> Cause | None:
    """A new system libcrypto (another version, or another binary of the same version)
    reaches liboqs rows through OQS_USE_OPENSSL."""
    if implementation not in LIBOQS_ON_OPENSSL or diff.field not in SYSTEM_LIBCRYPTO \
            or context.liboqs_openssl is False:
        return None
    which = (f"libcrypto: {binary_change(diff.before, diff.after)}; "
             if diff.field == "binaries.libcrypto" else "")
    return Cause(diff.field, diff.before, diff.after, "likely",
                 f"{which}liboqs built with OQS_USE_OPENSSL takes SHA-2, AES and its random "
                 "bytes from the system libcrypto")


#: Implementations timed in pqbench's own C loops (`timing/csrc`).
NATIVE_LOOPS = frozenset({"libcrypto", "liboqs"})

#: Loaded binaries that sit under every row a little, and why each is only a weak cause.
_WEAK_BINARIES = {
    "libc": "the C library (memcpy, malloc) sits under every implementation",
    "python": "the interpreter runs the harness around every row",
    "pqbench-native": "pqbench's own timing loops call the row's library",
}


def _binary_cause(diff: Difference, implementation: str, library: str | None) -> Cause | None:
    """Another binary of a loaded library: likely for the rows that run its code (as a
    new version of it would be), weak for the libraries under every row."""
    if not diff.field.startswith("binaries."):
        return None
    role = diff.field.removeprefix("binaries.")
    change = f"{role}: {binary_change(diff.before, diff.after)}"
    users = BINARY_USERS.get(role, frozenset())
    if implementation in users or (library is not None and library in users):
        return Cause(diff.field, diff.before, diff.after, "likely",
                     f"{change}; {implementation} rows run its code",
                     f"{change}; the rows run its code")
    if role == "python" and implementation in PYTHON_LOOP:
        return Cause(diff.field, diff.before, diff.after, "likely",
                     f"{change}; {implementation} rows are timed in a Python loop",
                     f"{change}; the rows are timed in a Python loop")
    if role == "pqbench-native" and implementation not in NATIVE_LOOPS:
        return None
    if role in _WEAK_BINARIES:
        return Cause(diff.field, diff.before, diff.after, "weak",
                     f"{change}; {_WEAK_BINARIES[role]}")
    return None


def _effective_capability_cause(diff: Difference, algorithm: str, implementation: str,
                                library: str | None, used: frozenset[str],
                                context: Context) -> Cause | None:
    """The capabilities an OpenSSL actually uses differ (its effective vector: a mask, a
    knob, another build of it such as one without assembly, another CPU): strong for the
    rows that run on that OpenSSL and dispatch on a capability that differs."""
    if not (diff.field.startswith("openssl_capabilities.") and diff.field.endswith(".enabled")):
        return None
    which = diff.field.split(".")[1]
    if implementation not in CAPABILITY_USERS.get(which, ()) \
            and library not in CAPABILITY_USERS.get(which, ()):
        return None
    if not isinstance(diff.before, list) or not isinstance(diff.after, list) \
            or any(isinstance(v, list) for v in (*diff.before, *diff.after)):
        return None  # unknown on a side, or several vectors among a side's runs
    old, new = set(map(str, diff.before)), set(map(str, diff.after))
    lost = {c for c in (old - new) & used if not context.lacks(c)}
    gained = {c for c in (new - old) & used if not context.lacks(c)}
    if not lost and not gained:
        return None
    parts = ([f"{', '.join(sorted(lost))} no longer used"] if lost else []) \
        + ([f"{', '.join(sorted(gained))} used now"] if gained else [])
    said = f"{which}'s OpenSSL uses other CPU capabilities ({'; '.join(parts)})"
    return Cause(diff.field, diff.before, diff.after, "strong",
                 f"{said}; {algorithm} dispatches on them",
                 f"{said}; the rows dispatch on them")


#: How the capability names of `algorithms.capabilities` read to a person ("aesni" is "AES-NI").
CAPABILITY_NAMES = {
    "pclmulqdq": "PCLMULQDQ", "ssse3": "SSSE3", "aesni": "AES-NI", "avx": "AVX",
    "avx2": "AVX2", "bmi2": "BMI2", "avx512": "AVX-512", "adx": "ADX", "shani": "SHA-NI",
    "vaes": "VAES", "vpclmulqdq": "VPCLMULQDQ", "neon": "NEON", "aes": "ARMv8 AES",
    "sha1": "ARMv8 SHA-1", "sha256": "ARMv8 SHA-256", "pmull": "PMULL",
    "sha512": "ARMv8 SHA-512", "sha3": "ARMv8 SHA-3",
}


def knob_text(var: str, value: Any) -> str | None:
    """An OpenSSL capability knob in words: "AES-NI hidden", "AES-NI, SHA-NI hidden"; None
    when unset; the raw value when it hides nothing pqbench knows."""
    if value is None or value == "":
        return None
    hidden = sorted(CAPABILITY_NAMES.get(c, c) for c in _hidden(var, value))
    return f"{', '.join(hidden)} hidden" if hidden else f"{var}={value}"


def configuration(fingerprint: Any) -> str | None:
    """What a run's OpenSSL capability knobs change, in words ("AES-NI hidden"), or None
    for a run with none set: runs that differ here differ by design."""
    knobs = fingerprint.path("knobs") if hasattr(fingerprint, "path") else None
    if not isinstance(knobs, Mapping):
        return None
    said = [text for var, value in sorted(knobs.items())
            if (text := knob_text(var, value)) is not None]
    return "; ".join(said) or None


def _hidden(var: str, side: Any) -> frozenset[str]:
    values = side if isinstance(side, list) else [side]
    hidden: frozenset[str] = frozenset()
    for value in values:
        hidden |= capabilities.hidden_capabilities(var, value)
    return hidden


def _library_cause(diff: Difference, implementation: str) -> Cause | None:
    fields = LIBRARIES.get(implementation, ())
    named = diff.field.startswith("libraries.") and implementation in diff.field
    if diff.field in fields or named:
        return Cause(diff.field, diff.before, diff.after, "likely",
                     f"the library behind {implementation} changed")
    return None


_WEAK_PREFIXES = ("os", "os_build", "arch", "cpu.", "libraries.python", "hostname", "platform.")

#: Why each part of the platform fingerprint is only a weak cause for any one row.
_PLATFORM_WHY = (
    ("platform.mitigations.", "kernel CPU-vulnerability mitigations act mostly at system "
     "calls and context switches, which a timed loop hardly makes; a few (SSBD, STIBP) can "
     "also slow user code a little"),
    ("platform.microcode", "microcode can change what some instructions cost (the GDS fix "
     "slowed AVX gathers), rarely what crypto loops use"),
    ("platform.cpufreq.", "the frequency policy (driver, governor, boost) moves every row "
     "by about the same factor, not one row alone"),
    ("platform.smt.", "SMT changes what a sibling thread takes from the core; it moves "
     "every row, most under load"),
    ("platform.virtualization.", "the hypervisor adds the same small cost to every row"),
    ("platform.libc", "the C library (memcpy, malloc) sits under every implementation"),
    ("platform.userland", "another OS release rebuilds every library with another compiler"),
    ("platform.kernel", "the kernel's scheduler, timers and mitigations reach every row"),
)


def _weak_cause(diff: Difference) -> Cause | None:
    if not diff.field.startswith(_WEAK_PREFIXES):
        return None
    why = next((text for prefix, text in _PLATFORM_WHY if diff.field.startswith(prefix)),
               "affects every row a little (scheduler, mitigations, compiler, clocks)")
    return Cause(diff.field, diff.before, diff.after, "weak", why)


# --- notes on differences that cannot act ----------------------------------------------


def annotate(found: Sequence[Difference], context: Context,
             algorithms: Iterable[str]) -> list[Difference]:
    """The differences with a note where they cannot act on this CPU or on these rows.

    A capability mask or knob that hides something this CPU lacks: "hides shani; this CPU
    has no SHA-NI: no effect expected". A CPU flag difference no compared row's code uses:
    "no compared row uses vaes: no effect expected".
    """
    used: frozenset[str] = frozenset().union(*(capabilities_used(a) for a in algorithms))
    noted: list[Difference] = []
    for diff in found:
        hidden = _hidden_by(diff)
        note = None
        if hidden is not None:
            note = _mask_note(hidden, context)
        elif diff.field == "cpu_flags":
            unused = sorted({capabilities.capability_of_flag(f) or f for f in _flag_change(diff)}
                            - used)
            if unused and len(unused) == len(_flag_change(diff)):
                note = f"no compared row uses {', '.join(unused)}: no effect expected"
        noted.append(replace(diff, note=note) if note else diff)
    return noted


def _hidden_by(diff: Difference) -> frozenset[str] | None:
    """Capabilities hidden on one side and not the other, for knob and mask fields."""
    if diff.field in KNOB_FIELDS:
        var = diff.field.split(".", 1)[1]
        return frozenset(_hidden(var, diff.before) ^ _hidden(var, diff.after))
    if diff.field == "mask.names":
        def names(side: Any) -> set[str]:
            values = side if isinstance(side, list) else [side]
            return {str(n) for v in values for n in (v if isinstance(v, list) else [v]) if n}
        return frozenset(names(diff.before) ^ names(diff.after))
    return None


def _mask_note(hidden: frozenset[str], context: Context) -> str | None:
    lacking = sorted(c for c in hidden if context.lacks(c))
    if not lacking:
        return None
    missing = ", ".join(COMMON_NAMES.get(c, c) for c in lacking)
    if len(lacking) == len(hidden):
        return (f"hides {', '.join(sorted(hidden))}; this CPU has no {missing}: "
                "no effect expected")
    return (f"hides {', '.join(sorted(hidden))}; this CPU has no {missing}: no effect "
            f"expected from {', '.join(lacking)}")

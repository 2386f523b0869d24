"""Known-answer vectors: one helper to find and load a file, one parser per file format.

`load_vectors(relpath, parser)` looks for `relpath` in this package's own files (the small
curated set, in the project's JSON format, shipped as package data so that an installed
wheel verifies what a checkout verifies) and then in the installed
`cryptography_vectors` package (pyca's copy of the NIST and RFC files, PyPI
`cryptography-vectors`). Parsers turn text into a list of vectors: each vector is a dict of
field name to the string found in the file. Hex stays hex here; the checks decode what they
use, so a vector prints and diffs as it appears in its source.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pqbench.platform.errors import PqbenchError

__all__ = [
    "CURATED_DIR",
    "Vector",
    "VectorsUnavailable",
    "find_vector_file",
    "hex_field",
    "load_vectors",
    "parse_colon_lines",
    "parse_nist_rsp",
    "parse_pqbench_json",
    "signature_of",
]

#: One known-answer vector: field name -> value as written in the file (hex for bytes).
Vector = dict[str, str]
Parser = Callable[[str], list[Vector]]

#: The curated set: this package's JSON files (README.md beside them gives every value's
#: source). A wheel installs them as files on disk, as pip and pipx do.
CURATED_DIR = Path(__file__).resolve().parent

#: The version of the project's own vector format; parse_pqbench_json refuses others.
PQBENCH_FORMAT = "pqbench-vectors/1"

_INSTALL_HINT = "pip install cryptography-vectors  (or: pip install -e '.[test]')"


def hex_field(vector: Vector, key: str) -> bytes:
    """A byte field of a vector, decoded where it is used."""
    return bytes.fromhex(vector[key])


def signature_of(vector: Vector) -> bytes:
    """The curated files store `sig`; the NIST files store sm = signature || message."""
    if "sig" in vector:
        return hex_field(vector, "sig")
    return hex_field(vector, "sm")[: int(vector["smlen"]) - int(vector["mlen"])]


class VectorsUnavailable(PqbenchError):
    """A vector file is in neither the curated set nor an installed cryptography-vectors."""


def _cryptography_vectors_dir() -> Path | None:
    try:
        import cryptography_vectors
    except ImportError:
        return None
    return Path(cryptography_vectors.__file__).resolve().parent


def cryptography_vectors_version() -> str | None:
    """The installed cryptography-vectors version, None when it is not installed."""
    try:
        import cryptography_vectors
    except ImportError:
        return None
    return str(cryptography_vectors.__version__)


def find_vector_file(relpath: str) -> Path:
    """The file `relpath` in the curated set, else in cryptography-vectors."""
    curated = CURATED_DIR / relpath
    if curated.is_file():
        return curated
    package = _cryptography_vectors_dir()
    if package is None:
        raise VectorsUnavailable(
            f"vector file {relpath!r} is not in {CURATED_DIR} and cryptography-vectors is "
            f"not installed; run `{_INSTALL_HINT}`")
    installed = package / relpath
    if not installed.is_file():
        raise VectorsUnavailable(
            f"vector file {relpath!r} is in neither {CURATED_DIR} nor the installed "
            f"cryptography-vectors {cryptography_vectors_version()} ({package})")
    return installed


@cache
def _parsed(path: Path, parser: Parser) -> tuple[Vector, ...]:
    # The NIST ML-KEM files are 8-16 MB; every implementation reads the same parse.
    return tuple(parser(path.read_text(encoding="utf-8")))


def load_vectors(relpath: str, parser: Parser) -> list[Vector]:
    """Every vector of one file, parsed by `parser`; callers get their own copies to change."""
    return [dict(vector) for vector in _parsed(find_vector_file(relpath), parser)]


def parse_nist_rsp(text: str) -> list[Vector]:
    """NIST CAVP/ACVP response files (.rsp, .fax, .txt): `key = value` records.

    A record ends at a blank line, or when a `count` line or an already-seen key starts the
    next one (the ML-KEM/ML-DSA KAT files have no blank lines between records). A bracketed
    line starts a group: `[mod = 2048]` adds `mod: 2048` to the records that follow, and
    `[P-256,SHA-256]` adds `section: P-256,SHA-256`. Records that set a group's parameters
    once (RSA `n`/`e`) come out as records of their own; the caller carries them forward.
    """
    vectors: list[Vector] = []
    group: Vector = {}
    record: Vector = {}

    def close() -> None:
        nonlocal record
        if record:
            vectors.append({**group, **record})
            record = {}

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            close()
            continue
        if line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            close()
            inner = line[1:-1].strip()
            key, sep, value = inner.partition("=")
            group = {key.strip(): value.strip()} if sep else {"section": inner}
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"not a `key = value` line: {line[:60]!r}")
        key = key.strip()
        if key.lower() == "count" or key in record:
            close()
        record[key] = value.strip()
    close()
    return vectors


def parse_colon_lines(text: str) -> list[Vector]:
    """The Ed25519 `sign.input` format (SUPERCOP, as in RFC 8032 section 7.1's origin).

    One vector a line, `sk||pk:pk:message:signature||message:`, all hex. Returned with the
    field names of the NIST-style EdDSA files: SECRET (32-byte seed), PUBLIC, MESSAGE,
    SIGNATURE, and `count` (the 0-based line number).
    """
    vectors: list[Vector] = []
    for number, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        fields = line.split(":")
        if len(fields) != 5:
            raise ValueError(f"line {number}: expected 4 colon-terminated fields")
        secret_public, public, message, signed, _ = fields
        vectors.append({
            "count": str(number),
            "SECRET": secret_public[:64],
            "PUBLIC": public,
            "MESSAGE": message,
            # sign.input stores the signed message: the 64-byte signature, then the message.
            "SIGNATURE": signed[:128],
        })
    return vectors


def parse_pqbench_json(text: str) -> list[Vector]:
    """The project's own format (README.md in this package): JSON with string values only.

        {"format": "pqbench-vectors/1", "algorithm": "ML-KEM-768",
         "source": "...", "vectors": [{"count": "0", "origin": "...", "d": "..."}]}

    Each vector's `origin` names the file and record it was copied from.
    """
    document = json.loads(text)
    if document.get("format") != PQBENCH_FORMAT:
        raise ValueError(f"expected format {PQBENCH_FORMAT!r}, got {document.get('format')!r}")
    vectors: list[Vector] = []
    for index, item in enumerate(document["vectors"]):
        if not all(isinstance(v, str) for v in item.values()):
            raise ValueError(f"vector {index}: every value must be a string (hex for bytes)")
        vectors.append(dict(item))
    return vectors

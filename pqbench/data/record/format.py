"""The run format's names, version and bounds: what every edge of the record agrees on.

Plain constants, so that the command line can bound a label without loading the
validation models (`record.models`), and the store, the codec and the models share one
set of limits.
"""

from __future__ import annotations

RUN_FORMAT = "pqbench-run"
BUNDLE_FORMAT = "pqbench-export"
#: The version `--json` and `export` write; every older one is read too. History:
#:
#: 1. the run, its rows with their samples, problems, checks and fingerprint
#:    (`record.codec` reads its older spellings).
#: 2. three typed parts of the fingerprint: `run` (the machine's load over the run),
#:    `binaries` (the identity of each library the process loaded) and
#:    `openssl_capabilities` (what each loaded OpenSSL uses). No field changed its
#:    meaning: a version 1 document lacks these parts, and reads as a run whose load and
#:    binaries are unknown.
FORMAT_VERSION = 2
BUNDLE_VERSION = 1

#: The store's BigInteger columns (samples' ops, elapsed_ns, cycles).
MAX_COUNT = 2**63 - 1
#: The store's Integer columns (block_size).
MAX_INT32 = 2**31 - 1
#: Names: algorithms, implementations, operations, fingerprint keys.
NAME_CHARS = 200
#: Free text a user types: labels.
LABEL_CHARS = 1_000
#: Longer text: commands, reasons, paths, library build strings.
TEXT_CHARS = 10_000
#: Items in any one list or object, and the depth of free-form JSON values.
MAX_ITEMS = 100_000
MAX_DEPTH = 16

#: What a result row's samples count: operations, or bytes (file rows: a whole file's
#: bytes over one pass's time).
UNITS = ("op", "byte")

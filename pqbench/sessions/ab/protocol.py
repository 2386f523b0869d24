"""The worker protocol: one JSON object per line on the worker's stdin and stdout.

Version 1. Every message is an object with a ``type``. The worker speaks first:

    worker -> {"type": "hello", "protocol": 1, "pqbench": "0.1.0", "python": "3.13.1",
               "pid": 4242, "environment": {...its own fingerprint...}}

then answers each request with exactly one message:

    {"type": "pin", "cpu": 1}                        -> {"type": "pinned", "cpus": [1]}
    {"type": "plan", "algorithms": [...], "implementations": [...] | null,
     "operations": [...], "block_sizes": [...]}      -> {"type": "plan", "rows": [[a, i, o, b]],
                                                         "problems": [...]}
    {"type": "prepare", "row": [a, i, o, b]}         -> {"type": "prepared", "checks": [...],
                                                         "sizes": {...}, "attributes": {...},
                                                         "counter": "..." | null}
                                                      or {"type": "problem", "kind": ...,
                                                          "reason": ...}
    {"type": "run", "seconds": 0.05}                 -> {"type": "round", "ops": N,
                                                         "elapsed_ns": N, "cycles": N | null,
                                                         "cpu_ns": N}
    {"type": "quit"}                                 -> (the worker exits with status 0)

``cpu_ns`` is the CPU time the worker's thread got during the round (wall time minus the
time it was descheduled). Any request can instead get {"type": "error", "message": ...}:
the worker could not serve it. A problem (not offered, unavailable, failed verification)
is an answer, not an error. The worker writes nothing else on stdout (stray output of
libraries goes to stderr), and exits when its stdin closes, so a controller that dies
never leaves a worker behind.
"""

from __future__ import annotations

import json
from typing import IO, Any

from pqbench.data.record.results import RowKey

VERSION = 1

#: The longest line a controller reads, in characters: far above any real message (a
#: hello with its fingerprint, a plan of every row), far below what would exhaust memory
#: when a worker's command prints without end (`cat /dev/zero`).
MAX_LINE = 4 << 20

#: Replies the controller accepts to each request.
REPLIES = {"pin": ("pinned",), "plan": ("plan",), "prepare": ("prepared", "problem"),
           "run": ("round",)}


class ProtocolError(Exception):
    """A line that is not a message of this protocol."""


def encode(message: dict[str, Any]) -> str:
    """One message as one line (JSON has no raw newlines in its encoding)."""
    return json.dumps(message, separators=(",", ":"), default=str) + "\n"


def read_line(stream: IO[str]) -> str:
    """The next line of `stream` ("" at its end), read with a bounded buffer: a line
    longer than MAX_LINE is a ProtocolError, never held in memory whole."""
    line = stream.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a line longer than {MAX_LINE} characters: "
                            f"{_excerpt(line[:40])}")
    return line


def decode(line: str) -> dict[str, Any]:
    """A message from a line; ProtocolError when it is not one."""
    try:
        message = json.loads(line)
    except ValueError:
        raise ProtocolError(f"not JSON: {_excerpt(line)}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError(f"not a protocol message (no type): {_excerpt(line)}")
    return message


def _excerpt(line: str, width: int = 120) -> str:
    text = line.strip()
    return repr(text if len(text) <= width else text[:width] + "...")


def row_of(message: dict[str, Any]) -> RowKey:
    """The (algorithm, implementation, operation, block size) a prepare names."""
    row = message.get("row")
    if not (isinstance(row, list) and len(row) == 4 and all(isinstance(v, str) for v in row[:3])
            and (row[3] is None or isinstance(row[3], int))):
        raise ProtocolError(f"prepare needs a row [algorithm, implementation, operation, "
                            f"block size], not {row!r}")
    return RowKey(*row)

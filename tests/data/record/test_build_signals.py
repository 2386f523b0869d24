"""The run format's validators are built with Ctrl-C and SIGTERM held back.

pydantic builds a deferred validator on first use, in Rust, and turns an exception that the
Python it calls raises into a SchemaError: a Ctrl-C that landed there while `ab` checked a
worker's row ended the session with a traceback instead of keeping its pairs (seen under
load, tests/hostile/test_repeated_signals.py). Where the signal lands is chance; that no
part of a build can take it is not: each path that builds a validator is run in a fresh
interpreter, every call into pydantic's schema generation is watched (a profile hook), and
each must find both signals blocked, and neither left blocked after.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO

_WATCH = """
import json, signal, sys
from pqbench.data.record import comparison, models, transfer, validation
from pqbench.platform.errors import InputFileError

held = unheld = 0
def watch(frame, event, arg):
    global held, unheld
    if event == "call" and frame.f_code.co_filename.endswith("_generate_schema.py"):
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        if {signal.SIGINT, signal.SIGTERM} <= blocked:
            held += 1
        else:
            unheld += 1

def document():
    try:
        transfer.parse_models({"format": "pqbench-run", "format_version": 1}, "a.json")
    except InputFileError:
        pass

paths = {
    "ab worker row": lambda: validation.worker_row_problem(
        {}, {}, None, [{"ops": 1, "elapsed_ns": 1}], []),
    "import, checked": document,
    "import, fast": lambda: validation.validate(b'{"format": "pqbench-run"}'),
    "run format schema": models.json_schema,
    "compare schema": comparison.schema,
}
sys.setprofile(watch)
paths[sys.argv[1]]()
sys.setprofile(None)
left = signal.pthread_sigmask(signal.SIG_BLOCK, [])
print(json.dumps({"held": held, "unheld": unheld,
                  "left": sorted(int(s) for s in left & {signal.SIGINT, signal.SIGTERM})}))
"""


@pytest.mark.process
@pytest.mark.parametrize("path", ["ab worker row", "import, checked", "import, fast",
                                  "run format schema", "compare schema"])
def test_no_part_of_a_validators_build_can_take_a_signal(path: str) -> None:
    done = subprocess.run([sys.executable, "-c", _WATCH, path], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    # The build happened on this path (not already done, not moved out of pydantic's
    # schema generation), every call of it with both signals held, and none held after.
    assert seen["held"] > 0, seen
    assert seen["unheld"] == 0, seen
    assert seen["left"] == [], seen

"""A pqbench whose `go` worker is the fake stack worker (`fake_stack_worker.py`), for tests
that need a foreign worker in a real pqbench process with a fault at a known moment.

On PYTHONPATH, Python imports this at start-up. It does nothing unless
PQBENCH_TEST_FAKE_STACK=MODE[:FIFO] is set; then every `go` worker pqbench starts is the
fake in that mode (no build), told the fifo if one is given.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_FAKE = os.environ.get("PQBENCH_TEST_FAKE_STACK")

if _FAKE:
    from pqbench.libraries.stacks import running

    _mode, _, _fifo = _FAKE.partition(":")
    _worker = Path(__file__).resolve().parent.parent / "fake_stack_worker.py"
    _init = running.StackProcess.__init__

    def _faked(self: running.StackProcess, stack: object, pinned: object = None,
               command: object = None) -> None:
        _init(self, stack, pinned, command)  # type: ignore[arg-type]
        if self.stack.name == "go":
            self.command = [sys.executable, str(_worker), "--impl", "go", "--mode", _mode,
                            *(["--fifo", _fifo] if _fifo else [])]

    running.StackProcess.__init__ = _faked  # type: ignore[method-assign]

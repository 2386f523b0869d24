"""A stack implementation served by the fake worker (`fake_stack_worker.py`): the real
protocol client, real processes and real cryptography, with faults chosen by mode."""

from __future__ import annotations

import sys
from pathlib import Path

from pqbench.libraries.implementations.stacks import StackImplementation
from pqbench.libraries.stacks import registry
from pqbench.libraries.stacks.running import StackProcess

FAKE_WORKER = Path(__file__).resolve().parent / "fake_stack_worker.py"


def fake_command(name: str = "go", mode: str = "good", *extra: str) -> list[str]:
    return [sys.executable, str(FAKE_WORKER), "--impl", name, "--mode", mode, *extra]


def fake_implementation(mode: str = "good", name: str = "go", *extra: str
                        ) -> StackImplementation:
    """The stack `name` with its worker replaced by the fake in `mode` (no build)."""
    stack = registry.by_name(name)
    return StackImplementation(stack, StackProcess(stack, (), fake_command(name, mode, *extra)))

"""pqbench's signal handlers take no lock.

A handler runs in the main thread between two of its bytecodes; a second signal's handler
can run inside the first one. Where the first holds a lock (`threading.Event.set` takes
one), the second waits on it forever in the only thread that could release it: five
Ctrl-Cs sent at once hung `files corpus` that way (its stack, dumped by
tests/hostile/test_signals.py, showed the handler nested five deep in `Event.set`). So
every handler `interrupts` installs is run here under a profiler that records each call,
and none may reach `threading` or a lock.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pqbench.platform import interrupts


@pytest.fixture(autouse=True)
def _handlers_restored() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    for signum, action in saved.items():
        signal.signal(signum, action)


def _calls_of(handler: Callable[[int, Any], None], signum: int) -> list[str]:
    """What the handler called (Python functions by file and name, C ones by name) and
    that it interrupted (raised KeyboardInterrupt, or Terminated for SIGTERM)."""
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
        elif event == "c_call":
            calls.append(getattr(arg, "__qualname__", repr(arg)))

    sys.setprofile(profile)
    try:
        handler(signum, None)
    except KeyboardInterrupt as exc:
        sys.setprofile(None)
        assert isinstance(exc, interrupts.Terminated) == (signum == signal.SIGTERM)
    else:
        sys.setprofile(None)
        raise AssertionError("the handler did not interrupt")
    return calls


def _locked(calls: list[str]) -> list[str]:
    return [c for c in calls if "threading" in c or "acquire" in c or "lock" in c.lower()]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_first_only_handler_takes_no_lock(signum: int) -> None:
    with pytest.raises(KeyboardInterrupt), interrupts.first_only():
        calls = _calls_of(signal.getsignal(signum), signum)  # type: ignore[arg-type]
        assert calls and _locked(calls) == [], calls
        raise KeyboardInterrupt  # what the handler raised, as the block would see it
    # Interrupted: later signals are ignored by the kernel, no handler runs at all.
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    assert interrupts.exit_code() == (interrupts.SIGTERM_EXIT if signum == signal.SIGTERM
                                      else interrupts.SIGINT_EXIT)


def test_the_sigterm_handler_takes_no_lock() -> None:
    interrupts.install()
    calls = _calls_of(signal.getsignal(signal.SIGTERM), signal.SIGTERM)  # type: ignore[arg-type]
    assert calls and _locked(calls) == [], calls
    assert interrupts.exit_code() == interrupts.SIGTERM_EXIT


def test_the_redelivered_signal_takes_no_lock() -> None:
    """The alarm that delivers again an interruption a finalizer dropped."""
    interrupts._deliver_again(signal.SIGTERM)
    signal.setitimer(signal.ITIMER_REAL, 0)  # this test calls the handler itself
    calls = _calls_of(signal.getsignal(signal.SIGALRM), signal.SIGTERM)  # type: ignore[arg-type]
    assert _locked(calls) == [], calls

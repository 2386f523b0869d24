"""SIGTERM treated like Ctrl-C: keep what completed, clean up, exit 143 (130 for Ctrl-C).

`kill`, systemd and CI runners stop a process with SIGTERM, whose default action ends it on
the spot: no run stored, temporary files left behind. While a command runs, SIGTERM raises
`Terminated`, a KeyboardInterrupt, so every place that already keeps completed work on
Ctrl-C (the speed suite, `files hash`, `files corpus`) does the same for SIGTERM. The exit
status follows the shell convention 128 + signal number.

A signal's exception can land where Python cannot raise it: in a finalizer or a weakref
callback that the garbage collector runs, where the interpreter prints "Exception ignored"
with a traceback and drops it, and the command runs on as if never interrupted. While a
command runs, such a dropped interruption is delivered again, as the same signal, as soon
as ordinary code runs (`install`).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGINT_EXIT = 128 + signal.SIGINT  # 130
SIGTERM_EXIT = 128 + signal.SIGTERM  # 143
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class _Flag:
    """A flag the signal handlers set. Not a `threading.Event`: its `set` takes a lock, and
    a second signal whose handler runs while the first one's holds it waits on that lock
    forever, in the one thread that could release it (five Ctrl-Cs at once hung `files
    corpus` so). One attribute read or assigned needs no lock: a handler runs between two
    bytecodes of the main thread, never inside one."""

    __slots__ = ("_on",)

    def __init__(self) -> None:
        self._on = False

    def set(self) -> None:
        self._on = True

    def clear(self) -> None:
        self._on = False

    def is_set(self) -> bool:
        return self._on


_terminated = _Flag()
# Set by the first signal any `first_only` block takes; blocks nest (the command's own
# around the one `handles_errors` opens), and an outer block must not hand the signals
# back to their handlers when an inner one was interrupted.
_interrupted = _Flag()
_open_blocks = [0]
# What the command kept before a signal that lands later ("stored as run X in DB"): said
# with the interruption, since a run stored whole is not lost by a late Ctrl-C.
_kept = [""]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would raise KeyboardInterrupt."""


def _raise_terminated(_signum: int, _frame: object) -> None:
    _terminated.set()
    raise Terminated()


def install() -> None:
    """Make SIGTERM raise Terminated in the main thread (a no-op elsewhere), and deliver
    again an interruption that a finalizer dropped."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)
        if sys.unraisablehook is not _unraisable:
            global _next_hook
            _next_hook = sys.unraisablehook
            sys.unraisablehook = _unraisable


_next_hook = sys.unraisablehook


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C or SIGTERM a finalizer dropped is delivered again (`_deliver_again`);
    every other unraisable exception goes to the hook that was there before."""
    exc = unraisable.exc_value
    if isinstance(exc, KeyboardInterrupt) and \
            threading.current_thread() is threading.main_thread():
        _deliver_again(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
        return
    _next_hook(unraisable)


def _deliver_again(signum: int) -> None:
    """The interruption once more, a moment later (SIGALRM after 10 ms), when the collector
    and this hook have returned to ordinary code: a handler that ran inside this hook
    would land where it is dropped again. Where it lands in a finalizer once more, the
    same happens again. `deferred` holds the alarm back as it holds the signals."""
    previous = signal.getsignal(signal.SIGALRM)

    def once(_signum: int, _frame: object) -> None:
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        if signum == signal.SIGTERM:
            _terminated.set()
            raise Terminated()
        raise KeyboardInterrupt()

    signal.signal(signal.SIGALRM, once)
    signal.setitimer(signal.ITIMER_REAL, 0.01)


def ignore_later() -> None:
    """Once interrupted, pqbench only reports and exits: later Ctrl-C and SIGTERM are
    ignored by the kernel. A Python handler would be reset to the default action at
    interpreter exit, where a late signal would still kill the process (-2) after the run
    was stored and the interruption reported."""
    for each in _SIGNALS:
        signal.signal(each, signal.SIG_IGN)


def forget_caught_interruption() -> None:
    """Let the exit status asked for stand (130 or 143) once an interruption was handled.

    CPython 3.11 marks a KeyboardInterrupt "unhandled" whenever one leaves code it runs from
    source text (`exec` of a string: dataclasses and namedtuple make their methods so, while
    a module is imported), even when a caller catches it; at exit the interpreter then ends
    itself by SIGINT (-2) whatever status was asked. Source text that runs to its end
    clears the mark, so one empty statement run that way, after the handling, does."""
    exec("pass")


def note_kept(text: str) -> None:
    """Say `text` ("stored as run X in DB") if a signal interrupts the command after this."""
    _kept[0] = text


def kept() -> str:
    """What the command kept before it was interrupted (`note_kept`), or ""."""
    return _kept[0]


def exit_code(exc: BaseException | None = None) -> int:
    """143 after SIGTERM, 130 after Ctrl-C (for `exc`, or for the last signal received
    when the interruption was caught and turned into an interrupted run)."""
    terminated = isinstance(exc, Terminated) if exc is not None else _terminated.is_set()
    return SIGTERM_EXIT if terminated else SIGINT_EXIT


@contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back until the block ends (storing a run, removing files),
    so a second signal cannot cut the clean-up short; a held signal is delivered after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS | {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def first_only() -> Iterator[None]:
    """The first Ctrl-C or SIGTERM interrupts the block; later ones are absorbed, so the
    clean-up and the storing that follow the first run to their end.

    `deferred` holds signals back only inside its own block: a second Ctrl-C pressed
    while the first one's KeyboardInterrupt is being handled, before the clean-up starts,
    or one held and delivered right after it, would cut the clean-up or the storing
    short (a corpus of hundreds of MB left behind, or the run lost). Here every signal
    after the first is ignored for the whole block, and after it: what follows the block
    is the report of the interruption. The first one's kind sets the exit status.
    Blocks nest: once any of them was interrupted, none hands the signals back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if not _open_blocks[0]:
        _interrupted.clear()  # a new command (tests run several in one process)
        _kept[0] = ""

    def handler(signum: int, _frame: object) -> None:
        if signum == signal.SIGTERM:
            _terminated.set()
        if _interrupted.is_set():
            return
        _interrupted.set()
        ignore_later()
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    for signum in _SIGNALS:
        signal.signal(signum, handler)
    _open_blocks[0] += 1
    try:
        yield
    finally:
        _open_blocks[0] -= 1
        # Once interrupted, the command only reports and exits: later signals stay
        # ignored to the end, so none cuts the report short or ends the process by the
        # signal (exit -2) instead of with 130 or 143.
        if not _interrupted.is_set():
            for signum, action in previous.items():
                signal.signal(signum, action)

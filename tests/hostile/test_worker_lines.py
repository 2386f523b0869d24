"""A worker's stdout is read on a thread of its own (`processes.LineReader`): a wait for the
next message times out, the end of the output and a line the protocol refuses are told
apart, and a worker that floods is refused once `max_pending` lines wait, then no longer
read. Fed through a pipe in this process: nothing is started."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import pytest

from pqbench.platform import processes
from pqbench.sessions.ab import protocol


@contextmanager
def _pipe() -> Iterator[tuple[IO[str], IO[str]]]:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, encoding="utf-8") as reader, \
            os.fdopen(write_end, "w", encoding="utf-8") as writer:
        yield reader, writer


def _reader(stream: IO[str], max_pending: int | None = None) -> processes.LineReader[str]:
    return processes.LineReader(stream, protocol.read_line, protocol.decode,
                                protocol.ProtocolError, max_pending=max_pending)


def test_messages_come_in_order_then_the_end() -> None:
    with _pipe() as (stream, writer):
        lines = _reader(stream)
        writer.write('{"type":"a"}\n{"type":"b","n":2}\n')
        writer.close()
        assert lines.next(30) == {"type": "a"}
        assert lines.next(30) == {"type": "b", "n": 2}
        with pytest.raises(EOFError):
            lines.next(30)


def test_no_line_within_the_limit_is_a_timeout() -> None:
    with _pipe() as (stream, writer):
        lines = _reader(stream)
        with pytest.raises(TimeoutError):
            lines.next(0.05)
        writer.write('{"type":"late"}\n')
        writer.flush()
        assert lines.next(30) == {"type": "late"}


def test_a_line_that_is_no_message_is_the_protocols_error() -> None:
    with _pipe() as (stream, writer):
        lines = _reader(stream)
        writer.write("not json\n")
        writer.close()
        with pytest.raises(protocol.ProtocolError, match="not JSON"):
            lines.next(30)


def test_an_over_long_line_ends_the_reading() -> None:
    with _pipe() as (stream, writer):
        lines = _reader(stream)
        writer.write("x" * (protocol.MAX_LINE + 10) + '\n{"type":"after"}\n')
        writer.close()
        with pytest.raises(protocol.ProtocolError, match="a line longer than"):
            lines.next(30)
        lines.thread.join(30)
        assert not lines.thread.is_alive()
        with pytest.raises(TimeoutError):  # nothing after the error was read
            lines.next(0.05)


def test_a_flood_is_refused_after_the_lines_that_may_wait() -> None:
    with _pipe() as (stream, writer):
        lines = _reader(stream, max_pending=3)
        writer.write('{"type":"r"}\n' * 5)
        writer.close()
        lines.thread.join(30)  # every line the pipe held has been read
        assert not lines.thread.is_alive()
        for _ in range(3):
            assert lines.next(30) == {"type": "r"}
        with pytest.raises(protocol.ProtocolError, match="more than 3 lines nobody asked for"):
            lines.next(30)

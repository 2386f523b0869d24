"""The round-trip model on inputs worked by hand (RFC 6928 initial window, RFC 5681 slow
start, MSS = MTU - 40)."""

from __future__ import annotations

import pytest

from pqbench.measure.tls import model


@pytest.mark.parametrize(("mtu", "expected"), [(1500, 1460), (1280, 1240), (9000, 8960)])
def test_mss_is_the_mtu_less_ipv4_and_tcp_headers(mtu: int, expected: int) -> None:
    assert model.mss(mtu) == expected


@pytest.mark.parametrize(("nbytes", "expected"), [
    (0, 0), (1, 1), (1460, 1), (1461, 2), (14600, 10), (14601, 11), (29200, 20)])
def test_segments_at_1500(nbytes: int, expected: int) -> None:
    assert model.segments(nbytes) == expected


@pytest.mark.parametrize(("segments", "window", "expected"), [
    (0, 10, 0),  # nothing to send
    (1, 10, 1), (10, 10, 1),  # fits the initial window
    (11, 10, 2), (30, 10, 2),  # 10 + 20
    (31, 10, 3), (70, 10, 3),  # 10 + 20 + 40
    (71, 10, 4),
    (1, 1, 1), (2, 1, 2), (3, 1, 2), (4, 1, 3), (7, 1, 3), (8, 1, 4),  # 1, 2, 4, 8
    (4, 4, 1), (5, 4, 2), (12, 4, 2), (13, 4, 3),  # RFC 3390's older window of 4
])
def test_slow_start_windows(segments: int, window: int, expected: int) -> None:
    assert model.windows(segments, window) == expected


@pytest.mark.parametrize(("client", "server", "mtu", "window", "trips", "segments"), [
    (300, 1_400, 1500, 10, 1, (1, 1)),  # a classical handshake: one round trip
    (300, 14_600, 1500, 10, 1, (1, 10)),  # exactly the initial window
    (300, 14_601, 1500, 10, 2, (1, 11)),  # one byte over: a second round trip
    (1_503, 16_496, 1500, 10, 2, (2, 12)),  # X25519MLKEM768 with an ML-DSA-65 chain
    (300, 43_800, 1500, 10, 2, (1, 30)),  # 10 + 20 segments
    (300, 43_801, 1500, 10, 3, (1, 31)),
    (300, 12_400, 1280, 10, 1, (1, 10)),  # MSS 1240
    (300, 12_401, 1280, 10, 2, (1, 11)),
    (300, 5_841, 1500, 4, 2, (1, 5)),  # initial window of 4 segments
    (14_601, 1_000, 1500, 10, 2, (11, 1)),  # a client flight over its window counts too
    (14_601, 14_601, 1500, 10, 3, (11, 11)),
])
def test_handshake_round_trips(client: int, server: int, mtu: int, window: int, trips: int,
                               segments: tuple[int, int]) -> None:
    result = model.handshake(client, server, mtu, window)
    assert result.round_trips == trips
    assert (result.client_segments, result.server_segments) == segments
    assert (result.mtu, result.initial_window) == (mtu, window)


def test_more_bytes_never_cost_fewer_round_trips_and_a_bigger_window_never_more() -> None:
    previous = 0
    for server in range(0, 200_000, 997):
        trips = model.handshake(300, server).round_trips
        assert trips >= previous
        assert model.handshake(300, server, initial_window=20).round_trips <= trips
        previous = trips


@pytest.mark.parametrize("call", [
    lambda: model.mss(40), lambda: model.segments(-1), lambda: model.windows(5, 0)])
def test_impossible_inputs_are_refused(call) -> None:
    with pytest.raises(ValueError):
        call()

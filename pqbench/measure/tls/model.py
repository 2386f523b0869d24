"""Round trips and TCP segments of a TLS 1.3 handshake, computed on paper from its bytes.

The model, and where each part comes from:

* A TLS 1.3 full or resumed (PSK with (EC)DHE) handshake takes one round trip (RFC 8446
  section 2): the client sends its first flight (ClientHello), the server answers with its
  whole flight (ServerHello up to its Finished), and the client can then send its Finished
  and application data together. The TCP handshake before it costs one more round trip,
  which is the same for every cell and is not counted here.
* A flight travels in segments of at most MSS = MTU - 40 bytes (20 bytes of IPv4 header and
  20 of TCP header without options, RFC 791 and RFC 9293); TLS record headers and AEAD tags
  are already in the flight's bytes.
* A fresh connection may send an initial window of 10 segments before it must wait for
  acknowledgements (RFC 6928). Slow start (RFC 5681 section 3.1) then grows the window by
  one segment per segment acknowledged, so a window doubles every round trip when every
  segment is acknowledged. A flight of S segments therefore needs the smallest k with
  IW * (2^k - 1) >= S windows, and each window after the first costs the sender a round trip
  of waiting for acknowledgements. This is the "big certificate chain overflows the initial
  window" effect: a server flight of 11 segments at IW 10 costs a second round trip.
* Not modelled: delayed acknowledgements (which slow the doubling), loss, pacing, QUIC's
  3x anti-amplification limit, and TCP options that shrink the MSS (timestamps: 12 bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_MTU = 1500
DEFAULT_INITIAL_WINDOW = 10  # segments, RFC 6928
IPV4_TCP_HEADERS = 40


def mss(mtu: int) -> int:
    """Maximum segment size for an MTU: the IPv4 and TCP headers without options."""
    if mtu <= IPV4_TCP_HEADERS:
        raise ValueError(f"an MTU of {mtu} bytes leaves no room for data")
    return mtu - IPV4_TCP_HEADERS


def segments(nbytes: int, mtu: int = DEFAULT_MTU) -> int:
    """TCP segments a flight of `nbytes` needs."""
    if nbytes < 0:
        raise ValueError("a flight cannot have a negative size")
    return math.ceil(nbytes / mss(mtu))


def windows(segment_count: int, initial_window: int = DEFAULT_INITIAL_WINDOW) -> int:
    """Congestion windows (each a round trip of waiting after the first) to send a flight.

    Slow start from `initial_window` segments, doubling per round trip: the smallest k with
    initial_window * (2**k - 1) >= segment_count; an empty flight needs none.
    """
    if initial_window < 1:
        raise ValueError("the initial window must be at least one segment")
    k, sent, window = 0, 0, initial_window
    while sent < segment_count:
        sent += window
        window *= 2
        k += 1
    return k


@dataclass(frozen=True)
class RoundTrips:
    """The paper figures of one handshake at one MTU and initial window."""

    mtu: int
    initial_window: int
    client_segments: int
    server_segments: int
    #: TLS round trips until the client may send application data (TCP's own not counted).
    round_trips: int

    def as_dict(self) -> dict[str, int]:
        return {"mtu": self.mtu, "initial_window": self.initial_window,
                "client_segments": self.client_segments,
                "server_segments": self.server_segments, "round_trips": self.round_trips}


def handshake(client_flight_bytes: int, server_flight_bytes: int, mtu: int = DEFAULT_MTU,
              initial_window: int = DEFAULT_INITIAL_WINDOW) -> RoundTrips:
    """Round trips of a 1-RTT TLS 1.3 handshake whose two first flights have these sizes.

    One round trip for ClientHello -> server flight, plus one per extra window either
    flight needs beyond its sender's initial window.
    """
    client = segments(client_flight_bytes, mtu)
    server = segments(server_flight_bytes, mtu)
    extra = (max(windows(client, initial_window), 1) - 1
             + max(windows(server, initial_window), 1) - 1)
    return RoundTrips(mtu, initial_window, client, server, 1 + extra)

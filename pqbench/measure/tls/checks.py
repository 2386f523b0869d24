"""Verified before timed: the handshake must be the one the cell asked for.

The facts come from the real connection (the client's view of its handshake messages and,
where the library has one, its API for the negotiated group); the expectations come from
the catalog, whose sizes come from pqbench's algorithm table. Any difference is a
VerificationError, which the grid records as a failed verification instead of a row.
"""

from __future__ import annotations

from pqbench.catalog.algorithms.base import normalize
from pqbench.measure.tls.catalog import GROUP_BY_CODEPOINT, SCHEME_NAMES, Cell
from pqbench.measure.tls.certs import Credentials
from pqbench.measure.tls.wire import WireFacts
from pqbench.platform.errors import VerificationError


def _group_text(codepoint: int) -> str:
    group = GROUP_BY_CODEPOINT.get(codepoint)
    return f"{group.name} (0x{codepoint:04x})" if group else f"group 0x{codepoint:04x}"


def _scheme_text(codepoint: int | None) -> str:
    if codepoint is None:
        return "no CertificateVerify"
    return f"{SCHEME_NAMES.get(codepoint, 'scheme')} (0x{codepoint:04x})"


def check_group(cell: Cell, facts: WireFacts, api_name: str | None = None) -> list[str]:
    """The group negotiated, its key shares' sizes, and the library's own name for it."""
    group = cell.group
    if facts.group != group.codepoint:
        raise VerificationError(f"asked for {group.name}, the connection negotiated "
                                f"{_group_text(facts.group)}")
    if facts.offered_groups != (group.codepoint,):
        offered = ", ".join(_group_text(g) for g in facts.offered_groups)
        raise VerificationError(f"the client offered key shares for {offered}, not only "
                                f"{group.name}")
    if (facts.client_share_bytes, facts.server_share_bytes) != (group.client_share_bytes,
                                                               group.server_share_bytes):
        raise VerificationError(
            f"{group.name} key shares of {facts.client_share_bytes} and "
            f"{facts.server_share_bytes} bytes; the algorithm table implies "
            f"{group.client_share_bytes} and {group.server_share_bytes}")
    checks = [f"negotiated {_group_text(group.codepoint)} read from the ServerHello; key "
              f"shares {facts.client_share_bytes} + {facts.server_share_bytes} bytes"]
    if api_name is not None:
        known = {normalize(n) for n in (group.name, *group.aliases)}
        if normalize(api_name) not in known:
            raise VerificationError(f"asked for {group.name}, the library reports {api_name!r}")
        checks.append(f"the library names the group {api_name}")
    return checks


def check_full(cell: Cell, facts: WireFacts, credentials: Credentials) -> list[str]:
    """A full handshake: signed with the certificate's scheme, over the chain we issued."""
    kind = cell.certificate
    if facts.resumed:
        raise VerificationError("a full handshake resumed a session")
    if facts.scheme != kind.scheme:
        raise VerificationError(f"asked for a {kind.name} certificate, the server signed "
                                f"with {_scheme_text(facts.scheme)}")
    expected = kind.signature_bytes
    if expected is not None and facts.signature_bytes != expected:
        raise VerificationError(f"a {kind.name} signature of {facts.signature_bytes} bytes; "
                                f"the algorithm table implies {expected}")
    if facts.certificate_der_lengths != credentials.chain_der_lengths:
        raise VerificationError(f"the server sent certificates of "
                                f"{list(facts.certificate_der_lengths)} bytes, not the chain "
                                f"pqbench issued ({list(credentials.chain_der_lengths)})")
    return [f"CertificateVerify signed with {_scheme_text(facts.scheme)}, "
            f"{facts.signature_bytes}-byte signature",
            f"chain of {len(facts.certificate_der_lengths)} certificates verified against the "
            "run's throw-away root CA and the server name"]


def check_resumed(facts: WireFacts) -> list[str]:
    """A resumed handshake: the server accepted the ticket and sent no certificate."""
    if not facts.resumed:
        raise VerificationError("the server did not accept the session ticket")
    if facts.scheme is not None or facts.certificate_message_bytes is not None:
        raise VerificationError("a resumed handshake carried a certificate")
    return ["resumed with a TLS 1.3 ticket (pre_shared_key accepted, no certificate)"]

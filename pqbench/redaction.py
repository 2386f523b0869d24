"""Keep database passwords out of everything pqbench prints, stores, exports or reports.

A results database is a file path or a URL, and a PostgreSQL URL may carry a password
(`postgresql://user:secret@host/db`, or `?password=secret`, libpq's URI forms) or be a
key=value string with `password=secret`. `redact` replaces every such password with `***`;
the store, the stored command line, the console and the report writers all go through it,
so a password typed on a command line is used to connect and nowhere else. The README
("Security") shows how to pass one without a command line: PGPASSWORD, ~/.pgpass, a
service file.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from urllib.parse import unquote

MASK = "***"

# scheme://user:password@ — the password runs to the last "@" before the path (RFC 3986
# reserves "/" in userinfo, so an unencoded "/" cannot be part of it).
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]*:)[^/?#\s]*@")
# ?password=... or &password=... in a URI; password=... or password='...' in a key=value DSN.
_QUERY = re.compile(r"(?P<head>[?&]password=)[^&#\s]*", re.IGNORECASE)
_KEYWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s'&#]+)",
                      re.IGNORECASE)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every password in a URL or DSN replaced by ***; also every literal in
    `secrets` (a driver's message may quote a password without its URL around it)."""
    text = _USERINFO.sub(lambda m: f"{m['head']}{MASK}@", text)
    text = _QUERY.sub(lambda m: f"{m['head']}{MASK}", text)
    text = _KEYWORD.sub(lambda m: f"{m['head']}{MASK}", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


def passwords_in(location: str) -> list[str]:
    """The passwords a location carries, as typed and percent-decoded (for `redact`)."""
    found: list[str] = []
    for pattern in (_USERINFO, _QUERY, _KEYWORD):
        for match in pattern.finditer(location):
            raw = match.group(0)[len(match["head"]):].removesuffix("@").strip("'")
            found += [raw, unquote(raw)]
    return sorted({s for s in found if s and s != MASK}, key=len, reverse=True)


def command_line(argv: Sequence[str]) -> str:
    """The command as it is stored with a run: shell-quoted, passwords redacted."""
    return shlex.join(["pqbench", *(redact(arg) for arg in argv)])

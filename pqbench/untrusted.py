"""Untrusted text made safe to show: passwords redacted, control characters removed.

Labels, OS builds, host names, paths and error texts come from users and from imported
files; the console and the report writers pass everything they show through `printable`
(and then escape it for rich or Markdown themselves).

Passwords. A results database is a file path or a URL, and a PostgreSQL URL may carry a password
(`postgresql://user:secret@host/db`, or `?password=secret`, libpq's URI forms) or be a
key=value string with `password=secret`. `redact` replaces every such password with `***`;
the store, the stored command line, the console and the report writers all go through it,
so a password typed on a command line is used to connect and nowhere else. The README
("Security") shows how to pass one without a command line: PGPASSWORD, ~/.pgpass, a
service file.

Control characters. ESC and BEL start terminal escape sequences (set the window title,
clear the screen, hyperlinks), C1 controls do the same on some terminals, and the Unicode
bidirectional overrides reorder what a reader sees ("Trojan Source", CVE-2021-42574).
None of them belongs in a label: tabs and line breaks become spaces, the rest is dropped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from urllib.parse import unquote

MASK = "***"

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SPACES = frozenset("\t\n\r\x0b\x0c")

# scheme://user:password@ — the password runs to the last "@" before the path (RFC 3986
# reserves "/" in userinfo, so an unencoded "/" cannot be part of it) and may hold spaces
# (a shell-quoted argument). One slash is enough: a URL that went through a path normaliser
# reads "postgresql:/user:pw@host".
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*:/+[^:/?#@\s]*:)[^/?#]*@")
# ?password=... or &sslpassword=... in a URI (libpq's two secret parameters); the value
# runs to the next parameter or quote, spaces included.
_QUERY = re.compile(r"(?P<head>[?&](?:ssl)?password=)[^&#'\"]*", re.IGNORECASE)
# password=... or password='...' in a key=value DSN; an unbalanced quote runs to the end.
_KEYWORD = re.compile(r"(?P<head>(?<![A-Za-z0-9_])(?:ssl)?password\s*=\s*)"
                      r"(?:'(?:[^'\\]|\\.)*'?|[^\s'&#]+)", re.IGNORECASE)
#: A password's pieces at least this long are redacted too: a driver that split a URL at
#: the wrong "@" or ":" quotes part of it as a host or a user ("Me7Xy@127.0.0.1").
_PIECE = 4


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
            for whole in (raw, unquote(raw)):
                found += [whole, *(piece for piece in re.split(r"[@:/\s]", whole)
                                   if len(piece) >= _PIECE)]
    return sorted({s for s in found if s and s != MASK}, key=len, reverse=True)


def command_line(argv: Sequence[str]) -> str:
    """The command as it is stored with a run: shell-quoted, passwords redacted, and
    argument bytes that are not UTF-8 (a file name `bad\\xff.bin` arrives as a lone
    surrogate, which neither database takes) written as \\xNN escapes."""
    return shlex.join(["pqbench", *(redact(storable(arg)) for arg in argv)])


def redact_command_line(text: str) -> str:
    """A stored command line with its passwords redacted word by word, so its shell
    quoting stays whole (a URL's redacted password must not swallow a closing quote);
    a text that is not a shell-quoted command goes through `redact` as a whole."""
    try:
        words = shlex.split(text)
    except ValueError:
        return redact(text)
    if shlex.join(words) != text:
        return redact(text)
    return shlex.join(redact(word) for word in words)


def storable(text: str) -> str:
    """`text` with the lone surrogates of undecodable bytes (os.fsdecode's
    surrogateescape) as \\xNN escapes: valid UTF-8 both stores accept."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte stands for: escaped as \udXXX
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def printable(value: object, keep_newlines: bool = False) -> str:
    """`value` as text fit to show: passwords redacted, bytes that are not UTF-8 as \\xNN
    escapes (a terminal's encoder refuses lone surrogates), whitespace controls turned
    into spaces (line breaks kept with `keep_newlines`), every other control character
    dropped."""
    def replace(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\n" and keep_newlines:
            return char
        return " " if char in _SPACES else ""

    return _CONTROL.sub(replace, redact(storable(str(value))))

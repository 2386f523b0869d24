"""Untrusted text made safe to show: passwords redacted, control characters removed.

Labels, OS builds, host names, paths and error texts come from users and from imported
files; the console and the report writers pass everything they show through `printable`
(and then escape it for rich or Markdown themselves).

Passwords. A results database is a file path or a URL, and a PostgreSQL URL may carry a password
(`postgresql://user:secret@host/db`, or `?password=secret`, libpq's URI forms) or be a
libpq keyword string with `password=secret`. `redact` replaces every such password with
`***`, reading each form as libpq does (quoted and escaped keyword values, percent-encoded
parameter names) and a URL's password as pqbench connects with it (`split_userinfo`); the
store, the stored command line, the console and the report writers all go through it, so
a password typed on a command line is used to connect and nowhere else. The README
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

MASK = "***"

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SPACES = frozenset("\t\n\r\x0b\x0c")

#: libpq's parameters that hold a secret, in a keyword string or in a URI's query.
SECRET_PARAMETERS = frozenset({"password", "sslpassword", "oauth_client_secret"})

# scheme://user: (one slash is enough: a URL that went through a path normaliser reads
# "postgresql:/user:pw@host"); a user name holds none of : @ / ? # (libpq's URI grammar).
_URL_USER = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*:/+(?=[^:@/?#\s]*:)")
_USER = re.compile(r"[^:@/?#\s]*")
# A URI query parameter's name, percent-encoded or not: libpq decodes names and values
# alike, so `?pass%77ord=` sets the password.
_PARAMETER = re.compile(r"(?P<sep>[?&])(?P<name>(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)=")
_QUERY_START = re.compile(r"\?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+=")
# A secret keyword of a libpq keyword/value string: spaces may surround "=", and libpq
# skips the spaces after it before the value starts.
_KEYWORD = re.compile(r"(?<![A-Za-z0-9_?&%])(?P<name>oauth_client_secret|sslpassword|"
                      r"password)\s*=\s*", re.IGNORECASE)
# A value redacted already: redacting twice changes nothing, and the text after stays.
_MASKED = re.compile(r"\*\*\*(?![A-Za-z0-9*])")
_PORTS = re.compile(r"[0-9,]*(?:[/?#]|$)")
#: A password's pieces at least this long are redacted too: a driver that split a URL at
#: one of its delimiters quotes part of it as a host, a port or a user ("Me7Xy@127.0.0.1").
_PIECE = 4
_DELIMITERS = re.compile(r"[@:/?#]")


@dataclass(frozen=True)
class _Secret:
    start: int
    end: int
    value: str  # as libpq reads it: percent-decoded, or unquoted and unescaped


def split_userinfo(rest: str) -> tuple[str, str | None, str] | None:
    """(user, password or None, what follows the "@"), as typed, of what follows
    `scheme://` in a URL; None when it has no user part.

    libpq reads a user part only when an "@" comes before any "/", and its password up to
    the first "@", so a password with a raw "/" or "@" does not reach the server whole.
    pqbench reads the password from the user's ":" up to the last "@" before the query
    (the first `?name=` after an "@"): a raw "/", "?", "#", "@" or space typed in a
    password is part of it, and the URL reaches libpq with user and password
    percent-encoded. A query value may hold an "@"; a password may not hold `?name=`."""
    user = _USER.match(rest)
    assert user is not None  # the pattern matches the empty string
    after_user = user.end()
    if rest[after_user:after_user + 1] == "@":
        return user.group(), None, rest[after_user + 1:]
    if rest[after_user:after_user + 1] != ":":
        return None
    first = rest.find("@", after_user)
    if first < 0 or _QUERY_START.search(rest, after_user, first):
        return None  # host:port/db?name=a@b: the "@" is the query's
    query = _QUERY_START.search(rest, first)
    at = rest.rfind("@", 0, query.start() if query else len(rest))
    return user.group(), rest[after_user + 1:at], rest[at + 1:]


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _url_passwords(text: str) -> Iterator[_Secret]:
    for found in _URL_USER.finditer(text):
        start = found.end()
        line = text[start:_line_end(text, start)]
        user = _USER.match(line)
        assert user is not None
        begin = start + user.end() + 1  # after the user's ":"
        if _MASKED.match(text, begin) and text[begin + len(MASK):begin + len(MASK) + 1] == "@":
            continue
        parts = split_userinfo(line)
        if parts is not None and parts[1] is not None:
            yield _Secret(begin, begin + len(parts[1]), unquote(parts[1]))
        elif parts is None and "@" in line[user.end():] and not _PORTS.match(
                line, user.end() + 1):
            # Not a password to pqbench (a `?name=` before any "@"), but one to a reader
            # who typed `user:pass?x=y@host`: hidden up to the line's last "@".
            end = start + line.rfind("@")
            yield _Secret(begin, end, unquote(text[begin:end]))


def _query_passwords(text: str) -> Iterator[_Secret]:
    for found in _PARAMETER.finditer(text):
        if unquote(found["name"]).lower() not in SECRET_PARAMETERS:
            continue
        begin = found.end()
        if _MASKED.match(text, begin):
            continue
        end = min(i for i in (text.find("&", begin), _line_end(text, begin)) if i >= 0)
        yield _Secret(begin, end, unquote(text[begin:end]))


def _keyword_passwords(text: str) -> Iterator[_Secret]:
    """libpq's keyword/value grammar: a value in single quotes runs to the closing quote,
    any other to the next space; a backslash keeps the character after it."""
    for found in _KEYWORD.finditer(text):
        begin = i = found.end()
        if _MASKED.match(text, begin):
            continue
        value: list[str] = []
        quoted = text[i:i + 1] == "'"
        i += quoted
        while i < len(text):
            char = text[i]
            if quoted and char == "'":
                i += 1
                break
            if not quoted and char.isspace():
                break
            if char == "\\" and i + 1 < len(text):
                i += 1
                char = text[i]
            value.append(char)
            i += 1
        else:
            if quoted:  # unterminated (libpq refuses it): hidden to the end of its line
                i = max(_line_end(text, begin), begin + 1)
        yield _Secret(begin, i, "".join(value))


def _secrets(text: str) -> list[_Secret]:
    found = [*_url_passwords(text), *_query_passwords(text), *_keyword_passwords(text)]
    return [s for s in found if s.end > s.start]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every password of a URL, a URI query or a libpq keyword string replaced
    by ***; also every literal in `secrets` (a driver's message may quote a password
    without its URL around it). Redacting twice changes nothing."""
    spans = sorted((s.start, s.end) for s in _secrets(text))
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        if end <= position:
            continue
        start = max(start, position)
        pieces += [text[position:start], MASK]
        position = end
    text = "".join(pieces) + text[position:]
    for secret in secrets:
        if secret and secret != MASK:
            text = text.replace(secret, MASK)
    return text


def passwords_in(location: str) -> list[str]:
    """Every form of the passwords a location carries, for `redact`: as typed, as libpq
    reads them (percent-decoded, unquoted), percent-encoded, and their pieces between URL
    delimiters."""
    found: set[str] = set()
    for secret in _secrets(location):
        typed = location[secret.start:secret.end]
        for whole in (typed, secret.value, quote(secret.value, safe="")):
            found.add(whole)
            found.update(piece for piece in _DELIMITERS.split(whole) if len(piece) >= _PIECE)
    return sorted((s for s in found if s and s != MASK), key=len, reverse=True)


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


#: The names a refusal lists, at most: a fleet's store holds thousands of labels.
SHOWN = 10


def named(values: Sequence[str], near: str | None = None, shown: int = SHOWN,
          key: Callable[[str], str] | None = None) -> str:
    """Stored names a message lists, each quoted and `printable`: at most `shown` of them,
    those closest to `near` (the name asked for, mistyped; compared with each name's
    `key`, the name itself by default) first, then the rest in their order, and how many
    more there are ("'a', 'b' and 3 more"); "none" for no name. A fleet's store has a
    thousand labels: a refusal naming each would be pages long."""
    import difflib

    unique = list(dict.fromkeys(values))
    close: list[str] = []
    if near:
        # As difflib.get_close_matches scores them, but ties keep the stored order.
        matcher = difflib.SequenceMatcher(b=near)
        scored = []
        for place, value in enumerate(unique):
            matcher.set_seq1((key or str)(value))
            if matcher.real_quick_ratio() >= _CLOSE and matcher.quick_ratio() >= _CLOSE:
                score = matcher.ratio()
                if score >= _CLOSE:
                    scored.append((-score, place, value))
        close = [value for _, _, value in sorted(scored)[:shown]]
    listed = list(dict.fromkeys([*close, *unique]))[:shown]
    text = ", ".join(repr(printable(value)) for value in listed)
    more = len(unique) - len(listed)
    return f"{text} and {more} more" if more else text or "none"


#: How alike a name must be to the one asked for to be listed first (difflib's ratio).
_CLOSE = 0.6


def first_few(values: Sequence[str], shown: int = SHOWN) -> str:
    """Stored names in running text, unquoted and `printable`: the first `shown`, then how
    many more ("p0, p1, p2 and 497 more"); "" for none. Where `named` lists what a user
    may pick from, this names what was done to many (runs left out, hosts that stepped)."""
    listed = ", ".join(printable(value) for value in values[:shown])
    return f"{listed} and {len(values) - shown} more" if len(values) > shown else listed

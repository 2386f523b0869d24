"""What `--a SIDE` / `--b SIDE` mean: how to start one side's worker process.

A side is a base and additions, each given as its own `--a`/`--b` (repeatable):

* ``here``: this pqbench, this Python (the default base);
* ``cmd:PREFIX``: a command that starts a pqbench elsewhere on this machine; the controller
  appends the worker subcommand, e.g. ``cmd:chroot /srv/trixie /opt/pqbench/.venv/bin/pqbench``
  runs ``chroot /srv/trixie /opt/pqbench/.venv/bin/pqbench worker``;
* ``userland:NAME``: the pqbench of a userland built by `pqbench userland build NAME`
  (another OS release on this machine); sugar for ``cmd:`` with that userland's prefix,
  whose pqbench is first refreshed from this checkout if the checkout changed;
* ``mask:aesni,shani``: hide CPU capabilities from OpenSSL in that worker (as `speed --mask`);
* ``env:NAME=VALUE``: set an environment variable for that worker (e.g. OQS_INSTALL_PATH);
* ``pip:PACKAGE==VERSION``: this pqbench with that release of a package, in a virtual
  environment pqbench makes once and caches (`sides.pip`);
* ``gomod:MODULE@VERSION``, ``crate:NAME==VERSION``, ``maven:GROUP:ARTIFACT==VERSION``: this
  pqbench with a foreign worker (`-i go`, `-i aws-lc-rs`, `-i bouncycastle` ...) built
  against that release of a library (`stacks.pins`), built once per machine before the
  session starts (`provision_stacks`).

The worker inherits this process's environment plus the additions. A ``cmd:`` that clears
the environment (sudo, docker run) must pass the variables on itself.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pqbench.data.record.format import LABEL_CHARS
from pqbench.libraries.stacks import pins
from pqbench.measure.speed import mask as capmask
from pqbench.platform import processes, untrusted
from pqbench.platform.errors import UsageError

#: Variables whose values are shown and stored: known to configure libraries, paths and
#: locales, never to carry a secret. Every other value passed to a worker (env:NAME=VALUE,
#: or NAME=VALUE in a cmd: prefix such as `env`, `sudo` or `docker run -e`) is shown as
#: NAME=*** : a name says nothing reliable about its value (GITHUB_PAT, SESSION_COOKIE,
#: PRIVATE), so only the harmless are listed, not the secret.
_HARMLESS_NAME = re.compile(
    r"(OQS_[A-Z0-9_]*|OPENSSL_(ia32cap|armcap|ppccap|s390xcap|riscvcap|CONF|MODULES|ENGINES)"
    r"|LD_LIBRARY_PATH|LD_PRELOAD|LD_BIND_NOW|PATH|PYTHONPATH|PYTHONHASHSEED|PYTHONHOME"
    r"|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONMALLOC|VIRTUAL_ENV|HOME|TMPDIR|TZ"
    r"|LANG|LANGUAGE|LC_[A-Z]+|TERM|COLUMNS|OMP_NUM_THREADS|MALLOC_[A-Z_]+|GLIBC_TUNABLES"
    r"|PQBENCH_[A-Z0-9_]*)")
#: Every kind of item a side is made of, as the help and the errors spell it: a base
#: (at most one of here, userland:, cmd: and pip:), then what it adds.
SPELLINGS = {"here": "here", "userland": "userland:NAME", "cmd": "cmd:PREFIX",
             "pip": "pip:PACKAGE==VERSION", "mask": "mask:NAMES", "env": "env:NAME=VALUE",
             **pins.SPELLINGS}
#: The same in a message: "here, userland:NAME, ..., maven:GROUP:ARTIFACT==VERSION".
SPELLED = ", ".join(SPELLINGS.values())
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: NAME=VALUE in a command word: alone (`env TOKEN=...`), as a long option's value
#: (`--env=TOKEN=...`), glued to a one-letter option (`docker run -eTOKEN=...`, the JVM's
#: `-Dgithub.token=...`), or an option's own value (`--token=...`).
_ASSIGNMENT_WORD = re.compile(
    r"(?P<head>--[A-Za-z][\w-]*=(?=[A-Za-z_][\w.-]*=)|-[A-Za-z](?=[A-Za-z_][\w.-]*=)|-{1,2})?"
    r"(?P<name>[A-Za-z_][\w.-]*)=(?P<value>.*)", re.DOTALL)
#: A command word that is itself a shell command line (`sh -c 'export TOKEN=...; exec
#: pqbench'`): its own words are redacted the same way.
_SCRIPT = re.compile(r"[\s;&|()<>`]")
_OPERATOR = re.compile(r"[();<>|&]+")
#: A lone "=" (not of "==", ">=", "<=", "!=", "~="): a NAME=VALUE, which only env: and cmd:
#: items hold; in any other kind's value (`pip:TOKEN=...`) it is a mistake, refused with
#: the value after it hidden, since that kind's own refusal would echo it.
_LONE_EQUALS = re.compile(r"(?<![=!<>~])=(?!=)")


@dataclass(frozen=True)
class Side:
    """One side of a session: the command that starts its worker and what it adds."""

    spec: str
    command: tuple[str, ...] | None = None  # None: this pqbench ("here")
    env: Mapping[str, str] = field(default_factory=dict)
    mask: capmask.Mask | None = None

    def argv(self) -> list[str]:
        base = list(self.command) if self.command else processes.python_module("pqbench")
        return [*base, "worker"]

    def environ(self) -> dict[str, str]:
        merged = {**os.environ, **self.env}
        if self.mask is not None:
            merged[self.mask.variable] = self.mask.value
        return merged

    def shown_env(self) -> dict[str, str]:
        """The added variables as they may be stored and printed (secrets redacted)."""
        return {name: redact(name, value) for name, value in self.env.items()}


def redact(name: str, value: str) -> str:
    """A value safe to store: *** unless the variable is known to be harmless, and even
    then with any password in a URL removed."""
    if not _HARMLESS_NAME.fullmatch(name):
        return untrusted.MASK
    return untrusted.redact(value)


#: Longest side, as shown: with "A: " and the session's time it is its run's label.
SPEC_CHARS = LABEL_CHARS - 40
#: The options whose values are sides or builds (`ab --a/--b`, `bisect --series`).
SIDE_OPTIONS = ("--a", "--b", "--series")
# Where a build's next item starts: `+`, then `here` or a kind and its colon (bisect's
# `here + env:A=1`), spelled as `parse` reads a kind (`kind_of`: any case, spaces around it).
_COLON_KINDS = "|".join(kind for kind in SPELLINGS if kind != "here")
_NEXT_ITEM = re.compile(rf"\+(?=\s*(?:here\s*(?:\+|$)|(?:{_COLON_KINDS})\s*:))", re.IGNORECASE)


def redact_argument(argument: str) -> str:
    """A command-line argument as it may be stored: a side or a build (`env:NAME=VALUE`,
    `cmd:PREFIX`, items joined by `+`, alone or as `--a=SIDE`, `--series=BUILD`) shown as
    `shown_spec` shows it, any other argument through `untrusted.redact`."""
    head, equals, rest = argument.partition("=")
    if equals and head in SIDE_OPTIONS:
        return f"{head}={shown_spec(rest)}"
    if kind_of(argument) in ("env", "cmd") or any(
            kind_of(item) in ("env", "cmd") for item in _NEXT_ITEM.split(argument)[1:]):
        return shown_spec(argument)
    return untrusted.redact(argument)


def command_line(argv: Sequence[str]) -> str:
    """The command of a session (`ab`, `bisect`) as it is stored with its runs: as
    `untrusted.command_line` stores any command, but its sides and builds through
    `redact_argument`, and the value after `--a`, `--b` or `--series` as a side whatever
    it holds (`shown_spec`)."""
    words = [untrusted.storable(argument) for argument in argv]
    return shlex.join(["pqbench", *(
        shown_spec(word) if position and words[position - 1] in SIDE_OPTIONS
        else redact_argument(word) for position, word in enumerate(words))])


def shown_spec(text: str) -> str:
    """A side or a build (items joined by `+`) as it may be shown and stored: every item
    through `shown`. A `cmd:` item runs to the end (its command may hold a "+"), and an
    `env:` value to the next item, so no part of a value is ever shown."""
    items = _NEXT_ITEM.split(text)
    for position, item in enumerate(items):
        if kind_of(item) == "cmd":
            items[position:] = ["+".join(items[position:])]
            break
    return " + ".join(shown(item) for item in items)


def kind_of(item: str) -> str:
    """An item's kind as `parse` reads it and `shown` shows it: what comes before the
    first colon, in any case, with spaces around it ignored (`ENV :NAME=VALUE` is env:)."""
    return item.partition(":")[0].strip().lower()


def redact_command(text: str) -> str:
    """A cmd: prefix as it may be stored: every NAME=VALUE word's value hidden unless
    harmless (`env MY_PASSWORD=... pqbench`, `docker run -e TOKEN=...`), URLs redacted.
    A prefix that does not split into words is hidden whole after its first word."""
    try:
        words = shlex.split(text)
    except ValueError:
        first = text.split(maxsplit=1)
        return f"{untrusted.redact(first[0])} {untrusted.MASK}" if first else text
    return shlex.join(_redact_word(word) for word in words)


def _redact_word(word: str) -> str:
    if kind_of(word) in ("env", "cmd") and ":" in word:
        return shown(word)
    match = _ASSIGNMENT_WORD.fullmatch(word)
    if match is not None:
        return f"{match['head'] or ''}{match['name']}={redact(match['name'], match['value'])}"
    if "=" in word and _SCRIPT.search(word):
        return _redact_script(word)
    return untrusted.redact(word)


def _redact_script(script: str) -> str:
    """A word that is a shell command line of its own (`sh -c`, `bash -lc`, `su -c`): its
    words redacted as a prefix's are, its operators kept; hidden whole when it does not
    split into words."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return untrusted.MASK
    return " ".join(word if _OPERATOR.fullmatch(word) else _script_word(word)
                    for word in words)


def _script_word(word: str) -> str:
    redacted = _redact_word(word)
    return redacted if redacted != word and redacted.endswith(untrusted.MASK) \
        else shlex.quote(redacted)


def parse(items: Sequence[str], which: str) -> Side:
    """A Side from the `--a`/`--b` values given for one side; bad specs are usage errors."""
    if not items:
        raise UsageError(f"--{which} is required: a side is {SPELLED}")
    command: tuple[str, ...] | None = None
    userland: str | None = None
    bases = 0
    env: dict[str, str] = {}
    chosen_mask: capmask.Mask | None = None
    pinned: list[pins.Pin] = []
    for item in items:
        kind, rest = kind_of(item), item.partition(":")[2]
        if kind in SPELLINGS and kind not in ("env", "cmd", "here") and \
                _LONE_EQUALS.search(rest):
            raise UsageError(f"--{which} {shown(item)!r}: a {kind}: item holds no "
                             f"NAME=VALUE ({SPELLINGS[kind]}); give variables as "
                             "env:NAME=VALUE")
        if kind == "here" and not rest:
            bases += 1
        elif kind == "cmd":
            command = _command(rest, which)
            bases += 1
        elif kind == "userland":
            userland = rest.strip()
            bases += 1
        elif kind == "pip":
            command = _pip(rest, env)
            bases += 1
        elif kind in pins.SPELLINGS:
            pinned.append(pins.parse(item))
        elif kind == "mask":
            if chosen_mask is not None:
                raise UsageError(f"--{which}: give one mask:NAMES (names comma-separated)")
            chosen_mask = capmask.build(rest)
        elif kind == "env":
            name, value = _assignment(rest, which)
            env[name] = value
        elif len(_NEXT_ITEM.split(item)) > 1:
            raise UsageError(f"--{which} {shown_spec(item)!r}: give each item of a side as "
                             f"its own --{which} (--{which} here --{which} env:NAME=VALUE)")
        else:
            raise UsageError(f"--{which} {shown(item)!r}: a side is {SPELLED}")
    if bases > 1:
        raise UsageError(f"--{which}: give at most one of here, userland:NAME and cmd:PREFIX "
                         "(pip:PACKAGE==VERSION counts as one of them)")
    if chosen_mask is not None and (chosen_mask.variable in env
                                    or os.environ.get(chosen_mask.variable) is not None):
        raise UsageError(f"--{which}: {chosen_mask.variable} is already set; it and "
                         "mask: would silently combine, so give one of them")
    if userland is not None:  # resolved last: it may refresh the userland's pqbench
        command = _userland(userland, which)
    if pinned:
        if pins.VARIABLE in env:
            raise UsageError(f"--{which}: give foreign library versions as gomod:, crate: or "
                             f"maven: items, not as env:{pins.VARIABLE}")
        env[pins.VARIABLE] = pins.joined(pinned)
    spec = " ".join(shown(item) for item in items)
    if len(spec) > SPEC_CHARS:
        raise UsageError(f"--{which}: the side is {len(spec)} characters long, at most "
                         f"{SPEC_CHARS}: it names its run, whose label holds "
                         f"{LABEL_CHARS} characters")
    return Side(spec=spec, command=command, env=env, mask=chosen_mask)


def _command(text: str, which: str) -> tuple[str, ...]:
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"--{which} cmd:{redact_command(text)}: {exc}") from None
    if not words:
        raise UsageError(f"--{which} cmd: needs a command that starts pqbench, e.g. "
                         "cmd:/opt/other/.venv/bin/pqbench")
    return words


def _userland(name: str, which: str) -> tuple[str, ...]:
    """The command prefix of a built userland, its pqbench refreshed from this checkout
    if needed; not built (or not root) is an error that names the fix."""
    from pqbench.libraries.userland import RECIPES, for_session

    if not name:
        raise UsageError(f"--{which} userland: needs a name: {', '.join(sorted(RECIPES))}")
    return tuple(for_session(name).command_prefix())


def _pip(text: str, env: dict[str, str]) -> tuple[str, ...]:
    """The worker command of a cached pip build, made first if needed; its name goes into
    the worker's environment, so the fingerprint says which build it is."""
    from pqbench.sessions.sides import pip

    build = pip.ensure_pip(pip.parse_pip(text))
    env[pip.BUILD_VARIABLE] = build.spec
    return build.command()


def _assignment(text: str, which: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not _ENV_NAME.fullmatch(name):
        raise UsageError(f"--{which} env:{_shown_env(text)}: expected env:NAME=VALUE with a "
                         "name of letters, digits and underscores")
    return name, value


def _shown_env(text: str) -> str:
    """NAME=VALUE with the value hidden unless the name is harmless; text without "="
    through `untrusted.redact`."""
    name, equals, value = text.partition("=")
    if not equals:
        return untrusted.redact(text)
    return f"{untrusted.redact(name)}={redact(name, value)}"


def shown(item: str) -> str:
    """One side item as it may be shown and stored, its kind read as `parse` reads it
    (`kind_of`) and written in lower case: `env:NAME=***` unless the name is known to be
    harmless, `cmd:` with its NAME=VALUE words hidden (`redact_command`), the other kinds
    through `untrusted.redact`. An item of no known kind (a typo, `evn:`, or a bare
    NAME=VALUE) is refused, and shown with everything after its first "=" hidden."""
    kind, colon, rest = kind_of(item), *item.partition(":")[1:]
    if not colon:
        return "here" if kind == "here" else _shown_env(item.strip())
    if kind == "env":
        return f"env:{_shown_env(rest)}"
    if kind == "cmd":
        return f"cmd:{redact_command(rest)}"
    if kind in SPELLINGS and kind != "here":
        return f"{kind}:{_hidden_after_assignment(rest)}"
    return _shown_env(item.strip())


def _hidden_after_assignment(text: str) -> str:
    """`text` through `untrusted.redact`, with the value after a lone "=" hidden
    (`_LONE_EQUALS`: `pip:TOKEN=***`, while `pip:pkg==1.0` stays as it is)."""
    found = _LONE_EQUALS.search(text)
    if found is None:
        return untrusted.redact(text)
    name = text[:found.start()]
    return f"{untrusted.redact(name)}={redact(name, text[found.end():])}"


def provision_stacks(side: Side, implementations: Sequence[str] | None) -> None:
    """Build, before the session starts, the foreign workers the side will start with its
    pinned versions (a build takes seconds for Go and minutes for Rust, longer than a
    worker may take to answer); a build that fails is a PqbenchError naming the side."""
    from pqbench.libraries.stacks import compiling, registry

    chosen = [name for name in implementations or () if name in registry.names()]
    if not chosen:
        return
    pinned = tuple(pins.parse(item) for item in
                   side.env.get(pins.VARIABLE, os.environ.get(pins.VARIABLE, "")).split())
    for name in chosen:
        planned = compiling.plan(registry.by_name(name), pinned)
        compiling.compile_worker(planned)

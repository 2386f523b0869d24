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
  environment pqbench makes once and caches (`provision`).

The worker inherits this process's environment plus the additions. A ``cmd:`` that clears
the environment (sudo, docker run) must pass the variables on itself.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pqbench import untrusted
from pqbench.errors import UsageError
from pqbench.measure import mask as capmask

#: Environment variable names whose values are never stored or printed.
_SECRET_NAME = re.compile(r"PASS|SECRET|TOKEN|KEY|CRED|AUTH", re.IGNORECASE)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Side:
    """One side of a session: the command that starts its worker and what it adds."""

    spec: str
    command: tuple[str, ...] | None = None  # None: this pqbench ("here")
    env: Mapping[str, str] = field(default_factory=dict)
    mask: capmask.Mask | None = None

    def argv(self) -> list[str]:
        base = list(self.command) if self.command else [sys.executable, "-m", "pqbench"]
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
    """A value safe to store: secret-looking names hidden, passwords in URLs removed."""
    if _SECRET_NAME.search(name):
        return untrusted.MASK
    return untrusted.redact(value)


def redact_argument(argument: str) -> str:
    """A command-line argument as it may be stored: an env:NAME=VALUE side redacted as
    its value would be, any other argument through `untrusted.redact`."""
    if argument.lower().startswith("env:"):
        return f"env:{_shown_env(argument[4:])}"
    return untrusted.redact(argument)


def parse(items: Sequence[str], which: str) -> Side:
    """A Side from the `--a`/`--b` values given for one side; bad specs are usage errors."""
    if not items:
        raise UsageError(f"--{which} is required: here, userland:NAME, cmd:PREFIX, "
                         "mask:NAMES or env:NAME=VALUE")
    command: tuple[str, ...] | None = None
    userland: str | None = None
    bases = 0
    env: dict[str, str] = {}
    chosen_mask: capmask.Mask | None = None
    for item in items:
        kind, _, rest = item.partition(":")
        kind = kind.strip().lower()
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
        elif kind == "mask":
            if chosen_mask is not None:
                raise UsageError(f"--{which}: give one mask:NAMES (names comma-separated)")
            chosen_mask = capmask.build(rest)
        elif kind == "env":
            name, value = _assignment(rest, which)
            env[name] = value
        else:
            raise UsageError(f"--{which} {item!r}: a side is here, userland:NAME, "
                             "cmd:PREFIX, pip:PACKAGE==VERSION, mask:NAMES or env:NAME=VALUE")
    if bases > 1:
        raise UsageError(f"--{which}: give at most one of here, userland:NAME and cmd:PREFIX "
                         "(pip:PACKAGE==VERSION counts as one of them)")
    if chosen_mask is not None and (chosen_mask.variable in env
                                    or os.environ.get(chosen_mask.variable) is not None):
        raise UsageError(f"--{which}: {chosen_mask.variable} is already set; it and "
                         "mask: would silently combine, so give one of them")
    if userland is not None:  # resolved last: it may refresh the userland's pqbench
        command = _userland(userland, which)
    spec = " ".join(_shown(item) for item in items)
    return Side(spec=spec, command=command, env=env, mask=chosen_mask)


def _command(text: str, which: str) -> tuple[str, ...]:
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"--{which} cmd:{text}: {exc}") from None
    if not words:
        raise UsageError(f"--{which} cmd: needs a command that starts pqbench, e.g. "
                         "cmd:/opt/other/.venv/bin/pqbench")
    return words


def _userland(name: str, which: str) -> tuple[str, ...]:
    """The command prefix of a built userland, its pqbench refreshed from this checkout
    if needed; not built (or not root) is an error that names the fix."""
    from pqbench.userland import RECIPES, for_session, log_to_stderr

    if not name:
        raise UsageError(f"--{which} userland: needs a name: {', '.join(sorted(RECIPES))}")
    return tuple(for_session(name, log_to_stderr).command_prefix())


def _pip(text: str, env: dict[str, str]) -> tuple[str, ...]:
    """The worker command of a cached pip build, made first if needed; its name goes into
    the worker's environment, so the fingerprint says which build it is."""
    from pqbench.ab import provision

    build = provision.ensure_pip(provision.parse_pip(text), provision.log_to_stderr)
    env[provision.BUILD_VARIABLE] = build.spec
    return build.command()


def _assignment(text: str, which: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not _ENV_NAME.fullmatch(name):
        raise UsageError(f"--{which} env:{_shown_env(text)}: expected env:NAME=VALUE with a "
                         "name of letters, digits and underscores")
    return name, value


def _shown_env(text: str) -> str:
    name, equals, value = text.partition("=")
    return f"{name}{equals}{redact(name, value)}" if equals else text


def _shown(item: str) -> str:
    kind, _, rest = item.partition(":")
    if kind.strip().lower() == "env":
        return f"env:{_shown_env(rest)}"
    if kind.strip().lower() == "cmd":
        return f"cmd:{untrusted.redact(rest)}"
    return item

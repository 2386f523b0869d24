"""What the slow tests build, built once before them and side by side into the per-user cache
(PQBENCH_CACHE_DIR): `make test-deps`, which `make test` runs first.

Without it a newcomer's first `make test` builds each of these where its first test asks for
it, one after another and inside the suite's time (the Debian 13 userland, the rebuilt
libcrypto, the foreign-language workers, an older aws-lc-rs, the pip builds of the bisect
tests). Here each is made by the very function its fixture or test calls, in a process of
its own, several at once: the downloads and debootstrap of one overlap the compiling of
another. Each keeps its own lock in the cache, so a test that reaches one still being made
waits for it, and one already made is reused in a moment.

`python -m tests.helpers.deps` makes them all and prints, per item, its wall time and the
CPU time of its process and what it started (steadier than wall time on a busy machine);
`--list` names them; `--only NAME` makes one in this process. An item that cannot be made
here (no root for the userland, a toolchain missing) is reported, and the test that needs
it fails with its own message: the exit status is 0 unless `--strict`.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

#: The cryptography releases the pip bisect test measures (tests/sessions/bisect/test_pip.py)
#: and the one its worker test starts: each a `pip:` build in the cache.
PIP_VERSIONS = ("43.0.3", "44.0.0", "44.0.1", "44.0.2", "44.0.3",
                "45.0.1", "45.0.2", "45.0.3", "45.0.4", "45.0.5")
PIP_WORKER_VERSION = "42.0.8"
#: The older aws-lc-rs the Rust worker's pin test builds against.
AWS_LC_RS_OLDER = "1.17.0"
#: Items made at most at once: two cores compile, a third item downloads meanwhile.
PARALLEL = 3


def _quiet(_line: str) -> None:
    return None


def _userland() -> None:
    from pqbench.libraries.userland import ensure
    from tests.helpers import NAME

    if os.geteuid() != 0:
        raise PermissionError("building a userland needs root (CI runs the suite as root)")
    ensure(NAME, _quiet)


def _rebuilt_libcrypto() -> None:
    from tests.helpers.rebuilt_libcrypto import rebuilt_libcrypto

    rebuilt_libcrypto(_quiet)


def _stack(name: str, pin: str | None = None) -> Callable[[], None]:
    def make() -> None:
        from pqbench.libraries.stacks import compiling, pins, registry

        pinned = (pins.parse(f"crate:{name}=={pin}"),) if pin else ()
        compiling.compile_worker(compiling.plan(registry.by_name(name), pinned), _quiet)

    return make


def _pip(version: str) -> Callable[[], None]:
    def make() -> None:
        from pqbench.sessions.sides.pip import ensure_pip, parse_pip

        ensure_pip(parse_pip(f"cryptography=={version}"), _quiet)

    return make


def items() -> dict[str, Callable[[], None]]:
    """name -> what makes it, longest first (so the longest start at once)."""
    from pqbench.libraries.stacks import registry

    found: dict[str, Callable[[], None]] = {
        "userland": _userland,
        "rebuilt-libcrypto": _rebuilt_libcrypto,
    }
    found.update({f"stack-{name}": _stack(name) for name in registry.names()})
    found[f"stack-aws-lc-rs-{AWS_LC_RS_OLDER}"] = _stack("aws-lc-rs", AWS_LC_RS_OLDER)
    found.update({f"pip-cryptography-{v}": _pip(v)
                  for v in (*PIP_VERSIONS, PIP_WORKER_VERSION)})
    return found


@dataclass(frozen=True)
class Made:
    name: str
    status: int
    wall: float
    cpu: float
    said: str


def _start(name: str, output: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.deps", "--only", name],
                            stdout=output, stderr=subprocess.STDOUT)


def make_all(names: list[str], parallel: int = PARALLEL,
             start: Callable[[str, IO[bytes]], subprocess.Popen[bytes]] = _start
             ) -> list[Made]:
    """Each item in a process of its own (`start`), `parallel` at once; its wall time and
    the CPU time (user and system) of its process and everything that process waited for.
    Each Popen is kept until its process is reaped here: one dropped while its process runs
    goes to subprocess's own list, and the next Popen would reap it there, out of sight."""
    waiting = list(names)
    running: dict[int, tuple[str, IO[bytes], float, subprocess.Popen[bytes]]] = {}
    made: list[Made] = []
    while waiting or running:
        while waiting and len(running) < parallel:
            name = waiting.pop(0)
            output = tempfile.TemporaryFile()  # noqa: SIM115 (closed when the item ends)
            process = start(name, output)
            running[process.pid] = (name, output, time.monotonic(), process)
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        name, output, started, process = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        process.returncode = code  # reaped here: the Popen must not wait for it again
        output.seek(0)
        said = output.read().decode(errors="replace")
        output.close()
        made.append(Made(name, code, time.monotonic() - started,
                         usage.ru_utime + usage.ru_stime, said.strip()))
        print(f"test-deps: {name}: {'ready' if code == 0 else 'FAILED'} in "
              f"{time.monotonic() - started:.0f} s ({usage.ru_utime + usage.ru_stime:.0f} s "
              "CPU)", flush=True)
        if code:
            print("    " + "\n    ".join(said.strip().splitlines()[-5:]), flush=True)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.helpers.deps")
    parser.add_argument("--only", metavar="NAME")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when an item could not be made")
    parser.add_argument("--parallel", type=int, default=PARALLEL)
    args = parser.parse_args(argv)
    found = items()
    if args.list:
        print("\n".join(found))
        return 0
    if args.only:
        found[args.only]()
        return 0
    started = time.monotonic()
    made = make_all(list(found), args.parallel)
    failed = [m.name for m in made if m.status]
    own = resource.getrusage(resource.RUSAGE_SELF)
    print(f"test-deps: {len(made) - len(failed)} of {len(made)} ready in "
          f"{time.monotonic() - started:.0f} s, {sum(m.cpu for m in made):.0f} s CPU "
          f"(+{own.ru_utime + own.ru_stime:.1f} s here)"
          + (f"; not made: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())

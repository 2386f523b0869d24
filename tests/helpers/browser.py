"""A real headless Chromium, driven over the DevTools protocol through a pipe: what the
tests of `pqbench publish` (and benchmarks/publish_scale.py) read a site with.

Debian's `chromium` package puts a wrapper script on the PATH that trips on its own
/dev/shm check on these machines; the browser binary it installs beside it
(`dpkg -L chromium`: /usr/lib/chromium/chromium) runs headless as root with
`--no-sandbox`. `chromium_binary` finds it and, where it is missing, says how to install
it (`make browser` installs it with apt); a test that needs it fails with that message,
it is never skipped.

The protocol goes over `--remote-debugging-pipe` (the browser reads commands on fd 3 and
answers on fd 4, each message JSON ended by a NUL byte): no port is opened, and the
browser's own network log (`Network.requestWillBeSent`) says what the page asked for. Every
call has a deadline: an `alert()` that a hostile label got to run would block the page,
so a dialog fails the test at once (`Page.javascriptDialogOpening`) rather than hang it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: Where Debian's package puts the browser itself (the wrapper script is /usr/bin/chromium).
DEBIAN_BINARY = Path("/usr/lib/chromium/chromium")
#: What to run where the browser is missing.
INSTALL = "make browser (as root: apt-get install -y chromium)"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions", "--mute-audio",
         "--remote-debugging-pipe", "--window-size=1280,900")


class BrowserError(AssertionError):
    """The page did something a test forbids (a dialog, an exception) or the browser
    failed to answer in time."""


def chromium_binary() -> Path:
    """The headless-capable Chromium binary, or a BrowserError saying how to install it."""
    override = os.environ.get("PQBENCH_CHROMIUM")
    if override:
        return Path(override)
    if DEBIAN_BINARY.exists():
        return DEBIAN_BINARY
    try:
        listed = subprocess.run(["dpkg", "-L", "chromium"], capture_output=True, text=True,
                                check=False, timeout=30).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        listed = []
    for path in listed:
        if path.endswith("/chromium") and "/lib/" in path and Path(path).is_file():
            return Path(path)
    raise BrowserError(f"no Chromium to render the site with: run {INSTALL}")


class Browser:
    """One headless Chromium with one page, attached over the pipe."""

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.requests: list[str] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self._events: list[dict[str, Any]] = []
        self._next = 0
        self._buffer = b""
        self._profile = tempfile.mkdtemp(prefix="pqbench-chromium-")
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()

        def onto_fds() -> None:  # in the child: fd 3 reads commands, fd 4 writes answers
            os.dup2(commands_read, 3)
            os.dup2(answers_write, 4)

        # A file, not a pipe: a pipe nobody reads fills and blocks a talkative browser.
        self._log = open(Path(self._profile) / "stderr.log", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [str(chromium_binary()), *FLAGS, f"--user-data-dir={self._profile}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
            preexec_fn=onto_fds, pass_fds=(3, 4), start_new_session=True)
        os.close(commands_read)
        os.close(answers_write)
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.page(f"{domain}.enable")

    # -- the protocol -------------------------------------------------------------------
    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and wait (at most `timeout`) for its answer."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            for one in self._read(deadline):
                if one.get("id") == self._next:
                    if "error" in one:
                        raise BrowserError(f"{method}: {one['error']}")
                    return dict(one.get("result", {}))
                self._event(one)

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def _read(self, deadline: float) -> list[dict[str, Any]]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer within {self.timeout:.0f} s"
                                   f"{self._dialog_note()}")
            ready, _, _ = select.select([self._answers], [], [], left)
            if ready:
                chunk = os.read(self._answers, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium exited: {self._stderr()}")
                self._buffer += chunk
        *whole, self._buffer = self._buffer.split(b"\0")
        return [json.loads(one) for one in whole]

    def _event(self, event: dict[str, Any]) -> None:
        method, params = event.get("method", ""), event.get("params", {})
        self._events.append(event)
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(params.get("message", ""))
            raise BrowserError(f"the page opened a {params.get('type')} dialog "
                               f"({params.get('message')!r}): a script ran that must not")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(str(details.get("exception", {}).get("description")
                                   or details.get("text")))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.console.append(f"{entry.get('level')}: {entry.get('text')}")
            if entry.get("level") == "error":
                self.errors.append(str(entry.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value")) for a in params.get("args", [])))

    def _dialog_note(self) -> str:
        return f" (dialogs: {self.dialogs})" if self.dialogs else ""

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "still running"
        self._log.flush()
        return (Path(self._profile) / "stderr.log").read_bytes().decode(errors="replace")[-2000:]

    # -- what a test asks -------------------------------------------------------------
    def open(self, path: Path) -> float:
        """Load a file and wait until its scripts say the page is ready (`data-ready` on
        <body>, set by the site's script once its charts are drawn); the seconds from the
        navigation to then."""
        start = time.monotonic()
        self.page("Page.navigate", url=path.resolve().as_uri())
        self.evaluate("""new Promise((resolve) => {
            const done = () => document.body && document.body.dataset.ready === "yes";
            if (done()) { resolve(true); return; }
            const look = () => done() ? resolve(true) : requestAnimationFrame(look);
            look();
        })""")
        return time.monotonic() - start

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        found = self.page("Runtime.evaluate", expression=expression, awaitPromise=True,
                          returnByValue=True)
        if "exceptionDetails" in found:
            raise BrowserError(f"{expression[:80]!r} threw: {found['exceptionDetails']}")
        return found.get("result", {}).get("value")

    def press(self, key: str, code: int) -> None:
        """One key pressed and released, as a keyboard user would (Enter with its text, so
        that it activates a button or submits a form)."""
        text = {"Enter": "\r"}.get(key)
        self.page("Input.dispatchKeyEvent", type="keyDown", key=key, code=key,
                  windowsVirtualKeyCode=code, nativeVirtualKeyCode=code,
                  **({"text": text} if text else {}))
        self.page("Input.dispatchKeyEvent", type="keyUp", key=key, code=key,
                  windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)

    def screenshot(self, path: Path) -> Path:
        """The page as it is now, as a PNG."""
        data = self.page("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=10)
        for fd in (self._commands, self._answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

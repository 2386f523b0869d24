"""The README's answers are what pqbench prints: its hashing section's console block (SHA-512
against SHA-256 on a file, paired, with intervals) has the shape of the real command's
output, run the same way on a real file, at 80 and 120 columns."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## SHA-512 or SHA-256 for a large file"


def _block(section: str) -> list[str]:
    """The first ```console block under `section`."""
    text = README.read_text("utf-8")
    start = text.index(section)
    body = text[text.index("```console", start) + len("```console"):]
    return body[:body.index("```")].strip("\n").splitlines()


def _shape(line: str) -> str:
    """A line with its figures as '#': what must match, whatever this machine measures."""
    return " ".join(re.sub(r"\d[\d.,]*", "#", line).split())


def _title_shape(lines: list[str]) -> str:
    """A table title wrapped over `lines`, its figures as '#', and its run id and the
    machine it ran on (others on every run and machine) as '<run>' and '<machine>'."""
    joined = re.sub(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}\b", "<run>", " ".join(lines))
    return re.sub(r" on .* \(cache ", " on <machine> (cache ", _shape(joined))


#: The interval of an answer as `numbers` writes it: "[#–#]" when it lies on one side of
#: 1, "[#x slower – #x faster]" when it holds both directions.
INTERVAL = re.compile(r"\[(#–#|#x (slower|faster) – #x (slower|faster))\]")


def _answer_shape(line: str) -> str:
    """An answer's shape whatever this machine measured: which way it points (SHA-512 is
    slower than SHA-256 where the CPU has SHA-NI, faster per byte without it) and whether
    its interval holds 1 (on a loaded machine it may) are measurements, not layout."""
    shape = _shape(line)
    assert INTERVAL.search(shape), line
    return re.sub(r"\b(slower|faster)\b", "(direction)", INTERVAL.sub("[interval]", shape))


@pytest.mark.parametrize("columns", [80, 120])
def test_the_readme_hashing_section_is_what_files_hash_prints(tmp_path: Path,
                                                              columns: int) -> None:
    shown = _block(SECTION)
    command = shown[0].removeprefix("$ pqbench ").split()
    assert command[:2] == ["files", "hash"] and "-a" in command, shown[0]
    file = command[2]
    (tmp_path / file).write_bytes(os.urandom(8 << 20))
    assert "--runs" not in command  # the default takes the passes the answers need
    done = subprocess.run([sys.executable, "-m", "pqbench", *command, "--db",
                           str(tmp_path / "r.db")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False,
                          env={**os.environ, "COLUMNS": str(columns)})
    assert done.returncode == 0, done.stderr
    printed = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    # A digest line is whole at any width (sha256sum -c reads it); the rest fits.
    assert max(len(line) for line in printed if not re.match(r"SHA\d+ \(", line)) <= columns
    # The table: its title (over as many lines as the width takes; the machine is this
    # one) and header as the README shows them, a line per hash.
    title = next(i for i, line in enumerate(printed) if line.startswith("pqbench files hash"))
    header = next(i for i, line in enumerate(printed) if line.split()[:2] == ["path", "hash"])
    readme_header = next(i for i, line in enumerate(shown) if line.startswith("path "))
    assert _title_shape(printed[title:header]) == _title_shape(shown[1:readme_header]), \
        printed[title:header]
    assert printed[header].split() == shown[readme_header].split()
    # The answers: SHA-512 against SHA-256, and each hash against reading the file, each
    # "Nx slower [low–high] (99 % CI, N pairs)" as in the README.
    answers = [line for line in shown if " against " in line and line.startswith(file)]
    assert len(answers) == 3 and "SHA-512 against SHA-256" in answers[0], shown
    said: list[str] = []  # a long line wraps under its first word: joined again
    for line in printed:
        if line.startswith("    ") and said:
            said[-1] += " " + line.strip()
        else:
            said.append(line)
    told = [line for line in said if " against " in line and line.startswith(file)]
    assert [_answer_shape(line) for line in told] == [_answer_shape(line) for line in answers], told
    # The digests in the tag format sha256sum -c reads, one per hash.
    for name in ("SHA256", "SHA512"):
        assert any(line.startswith(f"{name} ({file}) = ") for line in shown)
        assert any(line.startswith(f"{name} ({file}) = ") for line in printed), printed

"""A worker's compile told as it goes. Fast: what each tool's lines count, when a line is
due, what it says with and without an earlier compile to estimate from. Then a stand-in
tool with a long silent unit, a failing one, and a real compile of the Go worker (twice,
the second estimated from the first): no gap between progress lines exceeds 10 s."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from pqbench.libraries.stacks import compiling, progress, registry
from pqbench.libraries.stacks.progress import Counter, Estimate, Pacer
from pqbench.libraries.stacks.toolchains import Toolchain

#: What the issue promises: no step silent for longer.
LONGEST_SILENCE = 10.0


@pytest.mark.parametrize(("language", "line", "unit"), [
    ("rust", "   Compiling aws-lc-sys v0.47.0", "aws-lc-sys v0.47.0"),
    ("rust", "   Compiling pqbench-stack-common v0.1.0 (/tmp/x/common)",
     "pqbench-stack-common v0.1.0"),
    ("rust", "warning: unused variable: `x`", None),
    ("rust", "    Finished `release` profile [optimized] target(s) in 9m 07s", None),
    ("go", "crypto/mlkem", "crypto/mlkem"),
    ("go", "github.com/cloudflare/circl/kem/mlkem/mlkem512",
     "github.com/cloudflare/circl/kem/mlkem/mlkem512"),
    ("go", "go: downloading github.com/cloudflare/circl v1.6.1",
     "github.com/cloudflare/circl v1.6.1"),
    ("go", "# pqbench/stacks", None),
    ("go", "./main.go:3:1: syntax error: non-declaration statement outside function body",
     None),
    ("java", "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/"
             "bouncycastle/bcprov-jdk18on/1.87/bcprov-jdk18on-1.87.jar (8.9 MB at 3.1 MB/s)",
     "bcprov-jdk18on-1.87.jar"),
    ("java", "[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/"
             "bouncycastle/bcprov-jdk18on/1.87/bcprov-jdk18on-1.87.jar", None),
    ("java", "[INFO] BUILD SUCCESS", None),
])
def test_each_tools_lines_count_what_it_compiled_or_fetched(language: str, line: str,
                                                            unit: str | None) -> None:
    assert progress.unit_of(language, line) == unit


def test_a_line_says_the_count_the_time_and_what_is_left() -> None:
    counter = Counter("aws-lc-rs", "rust", Estimate(400.0, 41), started=1000.0)
    assert counter.line(1001.0, moved=False) == (
        "compiling the aws-lc-rs worker: still running, 1 s so far, about 6 min 39 s left "
        "(the last compile took 6 min 40 s)")
    counter.step = "cargo"
    assert counter.feed("   Compiling cc v1.2.0")
    assert not counter.feed("warning: something")
    assert counter.feed("   Compiling aws-lc-sys v0.47.0")
    assert counter.line(1130.0, moved=True) == (
        "compiling the aws-lc-rs worker: crate 2 of about 41 (aws-lc-sys v0.47.0), "
        "2 min 10 s so far, about 4 min 30 s left (the last compile took 6 min 40 s)")
    assert counter.line(1500.0, moved=False) == (
        "compiling the aws-lc-rs worker: still at aws-lc-sys v0.47.0 (2 of about 41 crates "
        "so far), 8 min 20 s so far, longer than the last compile (6 min 40 s)")
    first = Counter("go", "go", None, started=0.0)
    first.step = "go"
    assert first.line(65.0, moved=False) == (
        "compiling the go worker: still running go, 1 min 05 s so far, no earlier compile "
        "here to estimate from")
    assert progress.duration(3725) == "1 h 02 min"


def test_a_line_is_due_every_two_seconds_of_progress_and_five_of_silence() -> None:
    said: list[tuple[float, str]] = []
    now = [0.0]
    counter = Counter("libcrux", "rust", None, started=0.0)
    pacer = Pacer(lambda line: said.append((now[0], line)), counter)
    pacer.last_line = 0.0
    for t, line in [(0.5, "   Compiling a v1"), (1.0, "   Compiling b v1"),
                    (2.5, "   Compiling c v1"), (3.0, "   Compiling d v1")]:
        now[0] = t
        pacer.output(line, t)
    assert [t for t, _ in said] == [2.5]  # b and a folded into the line at 2.5
    assert "crate 3 (c v1)" in said[0][1]
    assert pacer.wait(3.0) == pytest.approx(1.5)  # d's count is due 2 s after c's
    for t in (4.0, 4.6, 9.0):
        now[0] = t
        pacer.tick(t)
    assert [t for t, _ in said] == [2.5, 4.6]
    assert "crate 4 (d v1)" in said[-1][1]
    assert pacer.wait(9.0) == pytest.approx(0.6)  # then silence: 5 s after the last line
    now[0] = 9.6
    pacer.tick(9.6)
    assert [t for t, _ in said] == [2.5, 4.6, 9.6]
    assert "still at d v1" in said[-1][1]


def test_estimates_are_kept_per_implementation_and_a_bad_file_is_none(tmp_path: Path) -> None:
    assert progress.read_estimates(tmp_path) == {}
    progress.write_estimate(tmp_path, "go", Estimate(12.34, 60))
    progress.write_estimate(tmp_path, "libcrux", Estimate(500.0, 45))
    progress.write_estimate(tmp_path, "go", Estimate(8.0, 61))
    assert progress.read_estimates(tmp_path) == {"go": Estimate(8.0, 61),
                                                "libcrux": Estimate(500.0, 45)}
    (tmp_path / progress.ESTIMATES).write_text('{"go": {"seconds": "x"}, "rust": 3}')
    assert progress.read_estimates(tmp_path) == {}
    (tmp_path / progress.ESTIMATES).write_text("not json")
    assert progress.read_estimates(tmp_path) == {}


# --- steps that run -----------------------------------------------------------------------

STAND_IN = '''
import sys, time
for name in ("cc v1.2.0", "cmake v0.1.54", "aws-lc-sys v0.47.0"):
    print("   Compiling " + name, file=sys.stderr, flush=True)
    time.sleep(0.3)
time.sleep({silence})  # the long unit: a build script compiling C, saying nothing
print("   Compiling aws-lc-rs v1.19.0", file=sys.stderr, flush=True)
print("Picked up JAVA_TOOL_OPTIONS: -Dgithub.token=Sekr3tT0ken", file=sys.stderr, flush=True)
print("    Finished `release` profile", file=sys.stderr, flush=True)
sys.exit({status})
'''


def _stand_in(tmp_path: Path, silence: float, status: int = 0) -> list[str]:
    script = tmp_path / "cargo"
    script.write_text(f"#!{sys.executable}\n" + STAND_IN.format(silence=silence,
                                                                 status=status))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return [str(script), "build", "--release"]


def _steps(log: list[tuple[float, str]], name: str = "aws-lc-rs") -> compiling.Steps:
    stack = registry.by_name(name)
    planned = compiling.Plan(stack, "0" * 64, {}, ())
    return compiling.Steps(planned, lambda line: log.append((time.monotonic(), line)),
                           Counter(name, stack.recipe.language, Estimate(30.0, 4)))


def _longest_gap(started: float, said: list[tuple[float, str]], ended: float) -> float:
    times = [started, *(t for t, _ in said), ended]
    return max(b - a for a, b in itertools.pairwise(times))


@pytest.mark.process
@pytest.mark.slow
def test_a_step_silent_for_12_s_still_says_what_runs_at_least_every_10_s(
        tmp_path: Path) -> None:
    said: list[tuple[float, str]] = []
    steps = _steps(said)
    started = time.monotonic()
    steps.run(_stand_in(tmp_path, silence=12), tmp_path, {})
    ended = time.monotonic()
    assert _longest_gap(started, said, ended) <= LONGEST_SILENCE, said
    lines = [line for _, line in said]
    assert lines[0].startswith("$ cargo build --release")
    assert any("still at aws-lc-sys v0.47.0 (3 of about 4 crates so far)" in line
               for line in lines), lines
    assert any("crate 4 of about 4 (aws-lc-rs v1.19.0)" in line for line in lines) or \
        steps.counter.units == 4
    assert all("Sekr3tT0ken" not in line for line in lines)


@pytest.mark.process
def test_a_failing_step_says_its_status_and_last_lines_without_a_jvm_secret(
        tmp_path: Path) -> None:
    said: list[tuple[float, str]] = []
    with pytest.raises(compiling.BuildFailed) as caught:
        _steps(said).run(_stand_in(tmp_path, silence=0, status=3), tmp_path, {})
    message = str(caught.value)
    assert message.startswith("compiling the aws-lc-rs worker: cargo exited with status 3:")
    assert "Compiling aws-lc-rs v1.19.0" in message
    assert "-Dgithub.token=***" in message and "Sekr3tT0ken" not in message


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_real_go_compile_is_never_silent_and_the_next_is_estimated_from_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Go worker compiled twice into an empty cache (the second from a copy of its
    sources with one more comment, so its key differs): each says what runs at least every
    10 s, the first has nothing to estimate from, the second uses the first's time."""
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path / "cache"))
    go = registry.by_name("go")
    copy = tmp_path / "sources"
    import shutil

    shutil.copytree(registry.SOURCES / "go", copy / "go")
    with (copy / "go" / "main.go").open("a") as source:
        source.write("\n// another key\n")
    runs = []
    for stack in (go, dataclasses.replace(go, root=copy)):
        said: list[tuple[float, str]] = []
        started = time.monotonic()
        compiling.compile_worker(compiling.plan(stack),
                                 lambda line, said=said: said.append((time.monotonic(), line)))
        assert _longest_gap(started, said, time.monotonic()) <= LONGEST_SILENCE, said
        runs.append([line for _, line in said])
    first, second = runs
    assert "the first here, with no earlier one to estimate from" in first[0]
    assert "the last compile here took" in second[0]
    assert any(line.startswith("$ go build -v -trimpath") for line in first)
    estimates = json.loads((tmp_path / "cache" / "stacks" / progress.ESTIMATES).read_text())
    assert estimates["go"]["seconds"] > 0
    assert os.environ["PQBENCH_CACHE_DIR"] == str(tmp_path / "cache")


CARGO_STAND_IN = '''
import json, os, pathlib, sys
target = pathlib.Path(os.environ["CARGO_TARGET_DIR"])
with open({record!r}, "a") as out:
    print(json.dumps({{"target": str(target), "cwd": os.getcwd(), "argv": sys.argv[1:],
                      "system_aws_lc": os.environ.get("AWS_LC_SYS_USE_SYSTEM")}}), file=out)
(target / "release").mkdir(parents=True, exist_ok=True)
(target / "release" / "pqbench-stack-worker").write_text(os.getcwd())
print("   Compiling pqbench-stack-common v0.1.0", file=sys.stderr, flush=True)
'''


@pytest.mark.process
def test_both_rust_workers_compile_into_one_target_folder_in_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the two Rust workers share is compiled once: both compiles get the one target
    folder under the cache, and each copies out its own binary."""
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path / "cache"))
    record = tmp_path / "calls.jsonl"
    cargo = tmp_path / "cargo"
    cargo.write_text(f"#!{sys.executable}\n" + CARGO_STAND_IN.format(record=str(record)))
    cargo.chmod(cargo.stat().st_mode | stat.S_IXUSR)
    for name in ("aws-lc-rs", "libcrux"):
        stack = registry.by_name(name)
        source, staging = tmp_path / f"source-{name}", tmp_path / f"staging-{name}"
        crate = source / Path(stack.recipe.dependencies).parent
        crate.mkdir(parents=True)
        (crate / "Cargo.toml").write_text("[package]\n")
        staging.mkdir()
        planned = compiling.Plan(stack, "0" * 64,
                                 {"cargo": Toolchain("cargo", "1", {"cargo": cargo})}, ())
        steps = compiling.Steps(planned, lambda line: None,
                                Counter(name, "rust", Estimate(30.0, 4)))
        compiling._compile_rust(planned, source, staging, steps)
        assert (staging / "pqbench-stack-worker").read_text() == str(crate)
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert [c["target"] for c in calls] == [str(compiling.cache_dir() / ".cargo-target" /
                                                 "rust")] * 2
    assert all(c["argv"] == ["build", "--release", "--locked"] for c in calls)
    assert all(c["system_aws_lc"] == "0" for c in calls)

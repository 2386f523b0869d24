"""A JVM's options as pqbench stores them: what they change, never what they carry. Fast
checks of the rule, then the real JVM worker started with a user's JAVA_TOOL_OPTIONS and
_JAVA_OPTIONS holding secrets, searched for in every output form."""

from __future__ import annotations

import collections
import json
import sqlite3
from pathlib import Path

import pytest

from pqbench.libraries.stacks import jvm, protocol
from pqbench.libraries.stacks.client import _keep_tail
from tests.helpers.leaks import Probe

SECRETS = ("KeyStorePw9", "GhT0ken77", "AgentArg55", "HeapDump33")


@pytest.mark.parametrize(("option", "shown"), [
    ("-Xmx512m", "-Xmx512m"), ("-Xms1g", "-Xms1g"), ("-Xss512k", "-Xss512k"),
    ("-XX:+UseSerialGC", "-XX:+UseSerialGC"), ("-XX:-UseKyberIntrinsics",
                                               "-XX:-UseKyberIntrinsics"),
    ("-XX:TieredStopAtLevel=1", "-XX:TieredStopAtLevel=1"),
    ("-XX:MaxRAMPercentage=75.0", "-XX:MaxRAMPercentage=75.0"),
    ("-XX:+UnlockDiagnosticVMOptions", "-XX:+UnlockDiagnosticVMOptions"),
    ("-Xint", "-Xint"), ("-ea", "-ea"), ("-verbose:gc", "-verbose:gc"),
    ("-Djavax.net.ssl.keyStorePassword=KeyStorePw9", "-Djavax.net.ssl.keyStorePassword=***"),
    ("-Dgithub.token=GhT0ken77", "-Dgithub.token=***"),
    ("-Dflag", "-Dflag"),
    ("-Dempty=", "-Dempty=***"),
    ("-javaagent:/opt/agent.jar=token=AgentArg55", "-javaagent:***"),
    ("-XX:HeapDumpPath=/home/me/HeapDump33", "-XX:HeapDumpPath=***"),
    ("--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=***"),
    ("-agentlib:jdwp=transport=dt_socket", "-agentlib:***"),
    ("ghp_AgentArg55", "***"),
    ("-Xmx512mAgentArg55", "***"),
])
def test_an_option_keeps_what_it_changes_and_never_its_value(option: str, shown: str) -> None:
    assert jvm.shown_option(option) == shown


def test_options_and_the_jvms_picked_up_line_are_shown_word_by_word() -> None:
    typed = ("-Djavax.net.ssl.keyStorePassword=KeyStorePw9  -Dgithub.token=GhT0ken77\t"
             "-XX:+UseParallelGC -Xmx600m")
    assert jvm.shown_options(typed) == ("-Djavax.net.ssl.keyStorePassword=*** "
                                        "-Dgithub.token=*** -XX:+UseParallelGC -Xmx600m")
    for variable in jvm.VARIABLES:
        line = f"NOTE: Picked up {variable}: {typed}"
        assert jvm.shown_line(line) == (f"NOTE: Picked up {variable}: "
                                        + jvm.shown_options(typed))
        assert jvm.picked_up(line)
    assert jvm.shown_line("error: cannot find symbol GhT0ken77") == \
        "error: cannot find symbol GhT0ken77"  # any other line is left to its caller


def test_a_hello_never_carries_a_jvm_option_value() -> None:
    hello = {"type": "hello", "protocol": 1, "implementation": "java", "runtime": "JDK",
             "libraries": {"SunEC": "25", protocol.JVM_OPTIONS:
                           "-Xms512m -Dgithub.token=GhT0ken77 -XX:+UseSerialGC"},
             "offers": {"X25519": ["keygen", "derive"]}}
    parsed = protocol.parse_hello(hello, "java")
    assert parsed.libraries[protocol.JVM_OPTIONS] == "-Xms512m -Dgithub.token=*** " \
                                                     "-XX:+UseSerialGC"
    assert parsed.libraries["SunEC"] == "25"
    assert "GhT0ken77" not in json.dumps(parsed.as_dict())
    # A JVM that says it picked up options on stdout, where a hello was due.
    with pytest.raises(protocol.ProtocolError) as caught:
        protocol.decode(b"Picked up JAVA_TOOL_OPTIONS: -Dgithub.token=GhT0ken77\n")
    assert "GhT0ken77" not in str(caught.value) and "-Dgithub.token=***" in str(caught.value)


def test_a_workers_stderr_tail_hides_the_options_even_across_a_long_line(
        tmp_path: Path) -> None:
    """A picked-up line longer than one read is cut: its rest is left out, not shown."""
    first_read = "Picked up _JAVA_OPTIONS: " + "-Xmx1g " * 581 + "-ea "
    assert len(first_read) == 4096  # the secret starts the line's second read
    text = (first_read + "-Dlast=AgentArg55\n"
            "Picked up JAVA_TOOL_OPTIONS: -Dgithub.token=GhT0ken77\n"
            "Error: Could not create the Java Virtual Machine.\n")
    stream = tmp_path / "stderr"
    stream.write_text(text)
    kept: collections.deque[str] = collections.deque(maxlen=12)
    with stream.open("rb") as read:
        _keep_tail(read, kept)
    tail = list(kept)
    assert not any(secret in line for line in tail for secret in SECRETS)
    assert "Picked up JAVA_TOOL_OPTIONS: -Dgithub.token=***" in tail
    assert tail[-1] == "Error: Could not create the Java Virtual Machine."


# --- the real JVM worker ------------------------------------------------------------------

#: A user's options: two secrets in system properties, one in each variable, and what
#: they change (a heap, a collector) that the run should record.
OPTIONS = {"JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.keyStorePassword=KeyStorePw9 "
                                "-Dgithub.token=GhT0ken77 -Xmx640m",
           "_JAVA_OPTIONS": "-Dagent.arg=AgentArg55 -XX:HeapDumpPath=/tmp/HeapDump33"}


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_jvm_options_with_secrets_are_stored_as_what_they_change(tmp_path: Path) -> None:
    """The JVM worker built (javac, under the same options) and run with a user's
    JAVA_TOOL_OPTIONS and _JAVA_OPTIONS: the run records the heap it got and the names of
    the properties, and no secret is in the console, --json, runs --json, show, the
    export, the report or the database; a JVM that cannot start with them is an error
    that quotes its stderr without them."""
    probe = Probe(tmp_path)
    db = str(tmp_path / "runs.db")
    env = {**OPTIONS, "PQBENCH_CACHE_DIR": str(tmp_path / "cache")}
    run = probe.json("speed", "x25519", "-o", "derive", "-i", "java", "--seconds", "0.2",
                     "--rounds", "2", "--db", db, "--json", env=env)
    options = run["environment"]["libraries"]["java:jvm options"]  # type: ignore[index]
    assert "-Xmx640m" in options and "-Dgithub.token=***" in options
    assert "-XX:HeapDumpPath=***" in options and "-Dagent.arg=***" in options
    assert [m["implementation"] for m in run["results"]] == ["java"]  # type: ignore[index]
    probe.cli("speed", "x25519", "-o", "derive", "-i", "java", "--seconds", "0.2",
              "--rounds", "2", "--db", db, env=env)
    ids = probe.run_ids(db)
    probe.cli("show", ids[0], "--db", db)
    probe.cli("export", *ids, "-O", str(tmp_path / "export.json"), "--db", db)
    probe.cli("report", *ids, "--out", str(tmp_path / "report"), "--db", db)
    broken = {**env, "JAVA_TOOL_OPTIONS": OPTIONS["JAVA_TOOL_OPTIONS"]
              + " -XX:+NoSuchOptionAnywhere"}
    # Its only implementation could not start: nothing measured, stored as failed, exit 1.
    failed = probe.json("speed", "x25519", "-o", "derive", "-i", "java", "--seconds", "0.2",
                        "--db", db, "--json", env=broken, code=1)
    assert failed["status"] == "failed"
    (problem,) = failed["problems"]  # type: ignore[misc]
    assert "NoSuchOptionAnywhere" in problem["reason"]
    assert "-Dgithub.token=***" in problem["reason"]
    with sqlite3.connect(db) as connection:
        tables = [name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert "pqbench_runs" in tables
        rows = "\n".join(str(row) for table in tables
                         for row in connection.execute(f'SELECT * FROM "{table}"'))
    for secret in SECRETS:
        assert probe.leaks(secret, rows) == [], secret

"""What only the JVM stack worker has (the protocol's cases every worker passes, for both its
implementations, are in test_worker_contract.py): `--impl java` (the JDK's providers) and
`--impl bouncycastle` (the BouncyCastle provider, through the same JCA calls). It must
report what the runtime and the jar say and the JVM options as pqbench may store them,
name the code path its JIT's intrinsics give, agree with BouncyCastle on deterministic
ML-DSA, escape non-ASCII text, refuse an unknown implementation, count the JIT in its
process clock, and run BouncyCastle on a JDK older than 24, where the `java` implementation
offers only what that JDK has. Its reference harnesses time the same rows."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.stack_workers import (
    STACKS,
    Worker,
    build_jvm_worker,
    built_worker,
    jdk_homes,
    jvm_worker_argv,
    newest_jdk,
    problem,
    vectors,
    with_jvm_options,
)

#: Every test here starts a worker process, and the first may build it (a cold Go or Maven
#: fetch and compile on a loaded 2-core machine takes minutes).
pytestmark = [pytest.mark.process, pytest.mark.timeout(1800)]

IMPLEMENTATIONS = ["java", "bouncycastle"]
ML_KEM = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"]
ML_DSA = ["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"]
CLASSICAL = {"X25519": ["keygen", "derive"], "ECDH-P-256": ["keygen", "derive"],
             "Ed25519": ["keygen", "sign", "verify"], "ECDSA-P-256": ["keygen", "sign", "verify"]}
OPERATIONS = {
    **{name: ["keygen", "encaps", "decaps"] for name in ML_KEM},
    **{name: ["keygen", "sign", "verify"] for name in ML_DSA},
    **CLASSICAL,
}
JDK = newest_jdk(24)


def jdk_version(home: Path) -> str:
    match = re.search(r'^JAVA_RUNTIME_VERSION="([^"]+)"', (home / "release").read_text(),
                      re.MULTILINE)
    assert match, home
    return match.group(1)


@pytest.fixture(scope="module")
def argv() -> dict[str, list[str]]:
    """Each implementation's command as `pqbench speed -i NAME` builds and starts it."""
    return {name: built_worker(name) for name in IMPLEMENTATIONS}


@pytest.fixture(scope="module")
def readme_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The worker built with the commands of pqbench/libraries/stacks/java/README.md (for Java
    17)."""
    return build_jvm_worker(tmp_path_factory.mktemp("jvm-worker"), JDK)


@pytest.fixture(scope="module", params=IMPLEMENTATIONS)
def worker(request: pytest.FixtureRequest, argv: dict[str, list[str]]) -> Iterator[Worker]:
    w = Worker(argv[request.param])
    yield w
    w.stop()


@pytest.fixture
def fresh(argv: dict[str, list[str]]) -> Iterator[Worker]:
    """A worker of this test's own, for tests that end it."""
    w = Worker(argv["bouncycastle"])
    yield w
    w.stop()


# --- hello -----------------------------------------------------------------------------

def test_hello_reports_the_runtime_and_the_versions_it_runs(
        worker: Worker, argv: dict[str, list[str]]) -> None:
    hello = worker.hello
    assert jdk_version(JDK) in hello["runtime"]
    libraries = hello["libraries"]
    command = argv[worker.implementation]
    assert libraries["jvm options"] == " ".join(command[1:command.index("-cp")])
    assert {"-Xms512m", "-Xmx512m", "-XX:+UseSerialGC"} <= set(libraries["jvm options"].split())
    assert set(hello["library_of"].values()) <= set(libraries)
    if worker.implementation == "bouncycastle":
        pom = ET.parse(STACKS / "java" / "pom.xml")
        pinned = pom.find("{http://maven.apache.org/POM/4.0.0}properties/"
                          "{http://maven.apache.org/POM/4.0.0}bc.version")
        assert pinned is not None
        assert libraries["bcprov-jdk18on"] == pinned.text
        assert set(hello["library_of"].values()) == {"bcprov-jdk18on"}
    else:
        assert {hello["library_of"][name] for name in ML_KEM} == {"SunJCE"}
        assert {hello["library_of"][name] for name in ML_DSA} == {"SUN"}
        for library in hello["library_of"].values():
            assert libraries[library] == jdk_version(JDK)




def test_a_users_jvm_options_are_reported_as_what_they_change(
        argv: dict[str, list[str]]) -> None:
    """JAVA_TOOL_OPTIONS and _JAVA_OPTIONS reach the JVM's input arguments: the worker's
    hello keeps the heap they set and every -D property's name, never a value."""
    for name in IMPLEMENTATIONS:
        w = Worker(argv[name], env={
            "JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.keyStorePassword=KeyStorePw9 -Xmx600m",
            "_JAVA_OPTIONS": "-Dgithub.token=GhT0ken77 -XX:+UseSerialGC"})
        try:
            options = w.hello["libraries"]["jvm options"]
            assert "-Djavax.net.ssl.keyStorePassword=***" in options.split()
            assert "-Dgithub.token=***" in options.split() and "-Xmx600m" in options.split()
            assert "KeyStorePw9" not in json.dumps(w.hello)
            assert "GhT0ken77" not in json.dumps(w.hello)
        finally:
            w.stop()


def vm_flags(jdk: Path, *options: str) -> dict[str, str]:
    printed = subprocess.run([str(jdk / "bin" / "java"), "-XX:+UnlockDiagnosticVMOptions",
                              *options, "-XX:+PrintFlagsFinal", "-version"],
                             capture_output=True, text=True, timeout=300, check=True).stdout
    return dict(re.findall(r"^\s*\S+\s+(\w+)\s+[:]?=\s+(\S+)", printed, re.MULTILINE))


def test_the_jdk_code_path_follows_the_intrinsics_and_both_pass(
        argv: dict[str, list[str]]) -> None:
    """The JDK's ML-KEM code path names HotSpot's intrinsics where the JVM turned them on
    (AVX-512 machines); with them turned off it is plain Java; without
    -XX:+UnlockDiagnosticVMOptions the flags cannot be read and the path is unknown. The
    known answers pass on every path."""
    on = vm_flags(JDK)
    unlock = "-XX:+UnlockDiagnosticVMOptions"
    without = [arg for arg in argv["java"] if arg != unlock]
    locked = Worker(without)
    default = Worker(with_jvm_options(without, unlock))
    plain = Worker(with_jvm_options(without, unlock, "-XX:-UseKyberIntrinsics",
                                    "-XX:-UseSHA3Intrinsics"))
    try:
        assert locked.hello["code_paths"]["ML-KEM-768"].startswith("unknown")
        path = default.hello["code_paths"]["ML-KEM-768"]
        assert ("UseKyberIntrinsics" in path) == (on["UseKyberIntrinsics"] == "true")
        assert plain.hello["code_paths"]["ML-KEM-768"] == "Java (C2 JIT), no intrinsics"
        for w in (default, plain):
            for v in vectors("ML-KEM-768"):
                key, public = w.key_pair("ML-KEM-768", bytes.fromhex(v["d"] + v["z"]))
                assert public.hex() == v["pk"]
                assert w.encaps("ML-KEM-768", public, bytes.fromhex(v["msg"])) == (
                    bytes.fromhex(v["ct"]), bytes.fromhex(v["ss"]))
                assert w.decaps("ML-KEM-768", key, bytes.fromhex(v["ct_n"])).hex() == v["ss_n"]
    finally:
        for w in (locked, default, plain):
            w.stop()


def test_bouncycastle_runs_on_an_older_jdk_where_the_jdk_offers_only_its_classics(
        readme_build: Path) -> None:
    """Compiled for Java 17 as its README says, the worker serves BouncyCastle's every
    algorithm on a JDK without ML-KEM; there the JDK's own implementation offers only what
    that JDK has (its X25519, Ed25519 and P-256), and asking it for ML-KEM is a problem."""
    older = {release: home for release, home in jdk_homes().items() if 17 <= release < 24}
    assert older, "a JDK 17..23 must be installed under /usr/lib/jvm (Debian's default is 17)"
    home = older[min(older)]
    bc = Worker(jvm_worker_argv(readme_build, home, "bouncycastle"))
    jdk = Worker(jvm_worker_argv(readme_build, home, "java"))
    try:
        assert jdk_version(home) in bc.hello["runtime"]
        assert bc.hello["offers"] == OPERATIONS
        v = vectors("ML-KEM-768")[0]
        key, public = bc.key_pair("ML-KEM-768", bytes.fromhex(v["d"] + v["z"]))
        assert public.hex() == v["pk"]
        assert bc.decaps("ML-KEM-768", key, bytes.fromhex(v["ct"])).hex() == v["ss"]
        assert jdk.hello["offers"] == CLASSICAL
        assert "JDK 24" in jdk.hello["needs"] and "JDK 17" in bc.hello["needs"]
        assert problem(jdk.request({"type": "keygen", "alg": "ML-KEM-768"}))
        key, public = jdk.key_pair("X25519")
        assert len(public) == 32
    finally:
        bc.stop()
        jdk.stop()


# --- known answers and replies --------------------------------------------------------

@pytest.mark.parametrize("alg", ML_DSA)
def test_jdk_deterministic_ml_dsa_equals_bouncycastles(argv: dict[str, list[str]],
                                                       alg: str) -> None:
    """Without a context the JDK's deterministic signature (rnd = 0^32 through its
    SecureRandom) must equal BouncyCastle's, whose deterministic mode passes the NIST
    vectors; hedged signatures of one message differ."""
    jdk = Worker(argv["java"])
    bc = Worker(argv["bouncycastle"])
    try:
        seed = bytes(range(32))
        message = b"deterministic"
        jdk_key, jdk_public = jdk.key_pair(alg, seed)
        bc_key, bc_public = bc.key_pair(alg, seed)
        assert jdk_public == bc_public
        signature = jdk.sign(alg, jdk_key, message, deterministic=True)
        assert signature == bc.sign(alg, bc_key, message, deterministic=True)
        assert jdk.sign(alg, jdk_key, message) != jdk.sign(alg, jdk_key, message)
    finally:
        jdk.stop()
        bc.stop()


def test_non_ascii_text_is_escaped_in_replies(worker: Worker) -> None:
    worker.send_raw('{"type": "keygen", "alg": "ML-KEM-768\u00e9\u2028"}\n'.encode())
    line = worker.line()
    assert line is not None and line.isascii()
    reply = json.loads(line)
    assert reply["type"] == "problem" and "ML-KEM-768\u00e9\u2028" in reply["reason"]


def test_a_request_nested_past_the_parsers_depth_is_an_error(worker: Worker) -> None:
    """The JVM worker's own JSON reader bounds its depth: 500 nested arrays are refused,
    and the next request is answered."""
    worker.send_raw(b'{"type": "keygen", "alg": "X25519", "deep": ' + b"[" * 500 + b"]" * 500
                    + b"}\n")
    reply = worker.reply()
    assert reply["type"] == "error" and reply["message"], reply
    key, public = worker.key_pair("X25519")
    assert len(public) == 32 and key


def test_an_unknown_implementation_exits_with_a_message(argv: dict[str, list[str]]) -> None:
    done = subprocess.run([*argv["bouncycastle"][:-1], "nonesuch"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "nonesuch" in done.stderr


# --- timing ----------------------------------------------------------------------------

def test_the_process_clock_counts_other_threads(fresh: Worker) -> None:
    """The process clock is the whole JVM's: over the first short rounds of a new JVM its
    sum exceeds the thread clock's (the JIT compiles the loop and the operation on its own
    threads), and no round's process time is below its thread time, as a process clock in
    10 ms ticks would often make it."""
    fresh.expect({"type": "prepare", "row": "jit", "alg": "ML-KEM-512",
                  "operation": "keygen"}, "prepared")
    rounds = [fresh.expect({"type": "run", "row": "jit", "seconds": 0.001}, "round")
              for _ in range(40)]
    assert all(r["thread_cpu_ns"] <= r["process_cpu_ns"] for r in rounds)
    assert sum(r["process_cpu_ns"] for r in rounds) > sum(r["thread_cpu_ns"] for r in rounds)


# --- the fidelity references -----------------------------------------------------------

REFERENCES = {"java": "pqbench.stacks.Reference", "bouncycastle": "pqbench.stacks.bc.Reference"}


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_the_reference_harness_times_every_operation(argv: dict[str, list[str]],
                                                     name: str) -> None:
    """The plain JCA loops (the JDK's providers, BouncyCastle's) the fidelity benchmark
    pairs with the worker's rows: one JSON round per line, for one row of each kind of
    operation (a JVM start each)."""
    command = argv[name]
    main = command.index("pqbench.stacks.Worker")
    rows = {"ML-KEM-512": ["keygen"], "ML-KEM-768": ["encaps", "decaps"], "ML-DSA-65": ["sign"],
            "X25519": ["derive"], "ECDSA-P-256": ["verify"], "Ed25519": ["verify"]}
    for alg, operations in rows.items():
        for operation in operations:
            done = subprocess.run([*command[:main], REFERENCES[name], alg, operation, "0.001",
                                   "2"], capture_output=True, text=True, timeout=300,
                                  check=False)
            assert done.returncode == 0, done.stderr
            rounds = [json.loads(line) for line in done.stdout.splitlines()]
            assert len(rounds) == 2
            for r in rounds:
                assert (r["alg"], r["operation"]) == (alg, operation)
                assert r["ops"] >= 1 and r["wall_ns"] >= 1_000_000 and r["thread_cpu_ns"] > 0
    done = subprocess.run([*command[:main], REFERENCES[name], "ML-KEM-768", "fly", "0.001"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and "fly" in done.stderr


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_the_reference_serves_one_round_per_line_until_stdin_closes(
        argv: dict[str, list[str]], name: str) -> None:
    """ROUNDS '-': one JVM serves a round for each line read (its seconds, or SECONDS when
    blank) and exits 0 when stdin closes, as the fidelity benchmark drives it."""
    command = argv[name]
    main = command.index("pqbench.stacks.Worker")
    done = subprocess.run([*command[:main], REFERENCES[name], "ML-KEM-768", "encaps", "0.001",
                           "-"], input="0.002\n\n0.001\n", capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    rounds = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rounds) == 3
    assert rounds[0]["wall_ns"] >= 2_000_000  # the line's seconds
    for r in rounds:
        assert r["ops"] >= 1 and r["operation"] == "encaps" and r["wall_ns"] >= 1_000_000

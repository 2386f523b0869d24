"""Every foreign implementation pqbench knows: its language, what builds it, what it covers.

The table is data: `pqbench list`, the builds, the docs and the tests read it. An
implementation's worker sources live under `pqbench/libraries/stacks/` (package data, so a wheel
builds what a checkout builds); `Recipe.sources` names the folders whose content is hashed
into its build's key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

#: Where the worker sources live: this package's own folder.
SOURCES = Path(__file__).resolve().parent

#: The JVM as these benchmarks run it on a small machine: a fixed heap, so the collector
#: does not resize it mid-run, and the serial collector, so no collector thread competes
#: with the timed thread for the two cores.
JVM_OPTIONS = ("-Xms512m", "-Xmx512m", "-XX:+UseSerialGC",
               # Only unlocks reading HotSpot's diagnostic flags (UseKyberIntrinsics ...),
               # from which the worker tells the code path its JDK chose.
               "-XX:+UnlockDiagnosticVMOptions")
#: The Java release the JVM worker's class files target: it runs on any JDK from 17, where
#: the `java` implementation offers what that JDK has and BouncyCastle all it has.
JAVA_RELEASE = 17
JAVA_MAIN = "pqbench.stacks.Worker"
WORKER_BINARY = "pqbench-stack-worker"
#: A plain loop over the library's documented API, built beside the worker where its
#: sources have one: the fidelity benchmark's reference (benchmarks/stacks_fidelity.py).
REFERENCE_BINARY = "pqbench-stack-reference"

Language = Literal["go", "rust", "java"]

#: The algorithms the protocol names (docs/stacks.md, "Names").
PROTOCOL_ALGORITHMS = ("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65",
                       "ML-DSA-87", "X25519", "ECDH-P-256", "Ed25519", "ECDSA-P-256")


@dataclass(frozen=True)
class Recipe:
    """How one worker is built: its language, its source folders (relative to SOURCES),
    the file declaring its dependencies (where a pin is looked for), the toolchains."""

    language: Language
    sources: tuple[str, ...]
    dependencies: str
    toolchains: tuple[str, ...]
    #: Java: also compile the BouncyCastle sources and fetch its jars.
    bouncycastle: bool = False
    #: The oldest JDK it runs on (the JDK's own ML-KEM and ML-DSA need 24).
    min_jdk: int = 24
    #: Least warm-up of each row before its timed rounds, in seconds: a JVM's JIT compiles
    #: the hottest code only after many calls (on a busy 2-core machine a JDK 25's ML-KEM
    #: reached its steady rate only after about ten seconds: docs/measurements.md), so two
    #: early warm-up rounds can agree before it has.
    warmup_min_seconds: float = 0.0


@dataclass(frozen=True)
class Stack:
    """One foreign implementation."""

    name: str
    language: str
    description: str
    recipe: Recipe
    #: The algorithms its worker offers once compiled (its hello says so, and a test holds
    #: the two together), for `pqbench list` before the first compile.
    offers: tuple[str, ...] = PROTOCOL_ALGORITHMS
    #: Where its source folders are: this package (a test may point at a copy).
    root: Path = SOURCES

    def source_dirs(self) -> list[Path]:
        return [self.root / folder for folder in self.recipe.sources]


_GO = Recipe("go", ("go",), "go/go.mod", ("go",))
_JAVA = Recipe("java", ("java/src/jdk",), "java/pom.xml", ("jdk",), warmup_min_seconds=10.0)
_BC = Recipe("java", ("java/src/jdk", "java/src/bc", "java/pom.xml"), "java/pom.xml",
             ("jdk", "maven"), bouncycastle=True, min_jdk=17, warmup_min_seconds=10.0)

STACKS: tuple[Stack, ...] = (
    Stack("go", "Go", "Go's standard library (crypto/mlkem, crypto/ecdh, crypto/ed25519, "
          "crypto/ecdsa) and a Go ML-DSA and ML-KEM-512", _GO),
    Stack("aws-lc-rs", "Rust", "the aws-lc-rs crate (AWS-LC), rustls's default provider",
          Recipe("rust", ("rust/aws-lc-rs", "rust/common"), "rust/aws-lc-rs/Cargo.toml",
                 ("cargo",))),
    Stack("libcrux", "Rust", "libcrux's formally verified ML-KEM (OpenSSH's) and ML-DSA",
          Recipe("rust", ("rust/libcrux", "rust/common"), "rust/libcrux/Cargo.toml",
                 ("cargo",)),
          offers=("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "ML-DSA-44", "ML-DSA-65",
                  "ML-DSA-87", "X25519", "Ed25519")),
    Stack("java", "Java", "the JDK's own providers (JDK 24 or newer: SunJCE, SunEC)", _JAVA),
    Stack("bouncycastle", "Java", "the BouncyCastle provider on the same JDK", _BC),
)


def by_name(name: str) -> Stack:
    for stack in STACKS:
        if stack.name == name:
            return stack
    raise KeyError(name)


def names() -> tuple[str, ...]:
    return tuple(stack.name for stack in STACKS)

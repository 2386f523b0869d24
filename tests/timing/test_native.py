"""Tests for the native timing loops (pqbench.timing._native through pqbench.timing.native).

The extension is built by the install; these tests load it, run every operation for a few
milliseconds and check the contract and the correctness checks. They never assert timings.
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pqbench.catalog import algorithms
from pqbench.data.record.rounds import LoopResult
from pqbench.timing import native

SECONDS = 0.02


def test_the_extension_was_built_by_the_set_up() -> None:
    # The set-up builds it wherever a C compiler and OpenSSL headers exist (CI has both);
    # every test below needs it, and its absence must fail here, not skip quietly.
    assert native.available(), native.unavailable_reason()

# Sizes in bytes from the algorithm table: (pk, sk, ct, ss), FIPS 203 Table 3, and
# (pk, sk, signature), FIPS 204 Table 2.
KEMS = {a.name: tuple(size for _, size in a.standard_sizes)
        for a in algorithms.all_algorithms() if a.family == "ML-KEM"}
SIGS = {a.name: tuple(size for _, size in a.standard_sizes)
        for a in algorithms.all_algorithms() if a.family == "ML-DSA"}
KEM_OPS = ("keygen", "encaps", "decaps")
SIG_OPS = ("keygen", "sign", "verify")

# libcrypto public-key algorithms and the ops each offers (RSA keygen only at 2048 bits:
# one 4096-bit key takes seconds).
PK_CASES = [
    *[
        (f"RSA-{bits}", op)
        for bits in (2048, 3072, 4096)
        for op in ("sign", "verify", "encrypt", "decrypt")
    ],
    ("RSA-2048", "keygen"),
    *[
        (curve, op)
        for curve in ("X25519", "X448", "P-256", "P-384", "P-521")
        for op in ("keygen", "derive")
    ],
    *[
        (alg, op)
        for alg in ("ECDSA-P-256", "ECDSA-P-384", "Ed25519", "Ed448")
        for op in ("sign", "verify", "keygen")
    ],
]
PQ_PK_CASES = [
    *[(alg, op) for alg in KEMS for op in KEM_OPS],
    *[(alg, op) for alg in SIGS for op in SIG_OPS],
]
CIPHERS = (
    "AES-128-GCM",
    "AES-256-GCM",
    "AES-128-CTR",
    "AES-256-CTR",
    "AES-128-XTS",
    "AES-256-XTS",
    "ChaCha20-Poly1305",
    "DES-EDE3-CBC",
)
DIGESTS = ("SHA256", "SHA512", "SHA3-256", "SHA3-512", "BLAKE2b512", "BLAKE2s256")


def assert_ran(result: LoopResult) -> None:
    assert isinstance(result, LoopResult)
    assert result.ops > 0
    assert result.elapsed_ns > 0
    assert result.cycles is None or result.cycles > 0


def liboqs_library() -> Path | None:
    """The liboqs pqbench uses (its own locator), or $PQBENCH_LIBOQS."""
    if os.environ.get("PQBENCH_LIBOQS"):
        return Path(os.environ["PQBENCH_LIBOQS"])
    try:
        from pqbench.libraries.liboqs import find_installed
    except ImportError:
        return None
    install = find_installed()
    return install.library if install else None


@pytest.fixture(scope="module")
def liboqs() -> str:
    assert native.available(), native.unavailable_reason()
    library = liboqs_library()
    assert library is not None, "no liboqs installed: run `make setup` or set PQBENCH_LIBOQS"
    return native.oqs_load(library)


# --- the contract -----------------------------------------------------------------------


def test_abi_and_counter() -> None:
    from pqbench.timing import _native

    assert _native.ABI == native.ABI == 3
    name = native.counter_name()
    # The loop reads its thread's CPU clock over the window of its wall clock: one thread,
    # so never more CPU than wall time (beyond the clocks' reads), and a busy loop spends
    # most of the window on the CPU unless the machine preempts it.
    found = native.ssl_digest("SHA256", 64, SECONDS)
    assert found.cpu_ns is not None and 0 < found.cpu_ns <= found.elapsed_ns + 100_000
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert name == "rdtsc (reference cycles)"
        assert native.ssl_digest("SHA256", 64, SECONDS).cycles is not None
    elif platform.machine().lower() in ("aarch64", "arm64"):
        assert name == "cntvct_el0 (timer ticks)"


@pytest.mark.parametrize("seconds", [0.0, -1.0, math.nan, math.inf], ids=str)
def test_bad_duration_is_rejected(seconds: float) -> None:
    with pytest.raises(ValueError, match="seconds"):
        native.ssl_digest("SHA256", 64, seconds)


def test_loop_runs_at_least_the_duration_and_batches() -> None:
    result = native.ssl_digest("SHA256", 16, 0.05)
    assert result.elapsed_ns >= 50_000_000
    assert result.ops > 1  # a 16-byte digest is far below a millisecond


def test_gil_is_released_during_the_loop() -> None:
    worker = threading.Thread(target=native.ssl_digest, args=("SHA256", 64, 0.5))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.01)
    worker.join()
    assert ticks >= 5  # a held GIL would freeze this thread until the loop ended


def test_the_loop_reads_its_own_threads_cpu_clock_while_another_thread_works() -> None:
    """A second Python thread spins while the loop runs (it releases the GIL): the
    process's CPU clock then counts both threads, the loop's own thread clock only
    itself. The loop's CPU time must fit in what the process spent minus what the
    spinner spent in the same window (read from the spinner's own clock)."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        assert spinner.ident is not None
        spinner_clock = time.pthread_getcpuclockid(spinner.ident)
        process_before = time.process_time_ns()
        spun_before = time.clock_gettime_ns(spinner_clock)
        found = native.ssl_digest("SHA256", 64, 0.5)
        spun = time.clock_gettime_ns(spinner_clock) - spun_before
        process = time.process_time_ns() - process_before
    finally:
        stop.set()
        spinner.join()
    assert spun > 10_000_000, spun  # the spinner ran beside the loop
    assert found.cpu_ns is not None and 0 < found.cpu_ns <= found.elapsed_ns + 100_000
    assert found.cpu_ns <= process - spun + 1_000_000, (found.cpu_ns, process, spun)


# --- liboqs -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", KEM_OPS)
@pytest.mark.parametrize("alg", list(KEMS))
def test_oqs_kem_ops(liboqs: str, alg: str, op: str) -> None:
    pk, sk, ct, ss = KEMS[alg]
    assert_ran(native.oqs_kem(alg, op, SECONDS, pk_len=pk, sk_len=sk, ct_len=ct, ss_len=ss))


@pytest.mark.parametrize("op", SIG_OPS)
@pytest.mark.parametrize("alg", list(SIGS))
def test_oqs_sig_ops(liboqs: str, alg: str, op: str) -> None:
    pk, sk, sig = SIGS[alg]
    assert_ran(native.oqs_sig(alg, op, SECONDS, pk_len=pk, sk_len=sk, sig_len_max=sig))


def test_oqs_sig_message_length(liboqs: str) -> None:
    pk, sk, sig = SIGS["ML-DSA-44"]
    result = native.oqs_sig(
        "ML-DSA-44", "sign", SECONDS, pk_len=pk, sk_len=sk, sig_len_max=sig, msg_len=1000
    )
    assert_ran(result)


def test_oqs_load_is_idempotent(liboqs: str) -> None:
    library = liboqs_library()
    assert library is not None
    assert native.oqs_load(library) == liboqs
    assert liboqs.startswith("0.")


def test_oqs_load_reports_dlerror(liboqs: str, tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot load liboqs"):
        native.oqs_load(tmp_path / "no-such-liboqs.so")


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        pytest.param((100, 2400, 1088, 32), "pk_len=100 is too small", id="pk-too-small"),
        pytest.param((1184, 2400, 1000, 32), "ct_len=1000 is too small", id="ct-too-small"),
        pytest.param((1184, 2400, 1568, 32), "ct_len=1568 is too large", id="ct-too-large"),
        pytest.param((1184, 2400, 1088, 64), "ss_len=64 is too large", id="ss-too-large"),
    ],
)
def test_oqs_kem_wrong_sizes_are_caught(
    liboqs: str, sizes: tuple[int, int, int, int], message: str
) -> None:
    pk, sk, ct, ss = sizes
    with pytest.raises(ValueError, match=message):
        native.oqs_kem("ML-KEM-768", "encaps", SECONDS, pk_len=pk, sk_len=sk, ct_len=ct, ss_len=ss)


def test_oqs_sig_too_small_signature_is_caught(liboqs: str) -> None:
    pk, sk, _ = SIGS["ML-DSA-65"]
    with pytest.raises(ValueError, match="sig_len_max=1000 is too small"):
        native.oqs_sig("ML-DSA-65", "sign", SECONDS, pk_len=pk, sk_len=sk, sig_len_max=1000)


def test_oqs_sizes_must_be_positive(liboqs: str) -> None:
    with pytest.raises(ValueError, match="pk_len"):
        native.oqs_kem("ML-KEM-768", "encaps", SECONDS, pk_len=0, sk_len=1, ct_len=1, ss_len=1)


def test_oqs_unknown_names_are_value_errors(liboqs: str) -> None:
    pk, sk, ct, ss = KEMS["ML-KEM-768"]
    with pytest.raises(ValueError, match="does not offer KEM"):
        native.oqs_kem("ML-KEM-769", "encaps", SECONDS, pk_len=pk, sk_len=sk, ct_len=ct, ss_len=ss)
    with pytest.raises(ValueError, match="unknown KEM op"):
        native.oqs_kem("ML-KEM-768", "sign", SECONDS, pk_len=pk, sk_len=sk, ct_len=ct, ss_len=ss)
    with pytest.raises(ValueError, match="does not offer signature"):
        native.oqs_sig("ML-DSA-99", "sign", SECONDS, pk_len=1, sk_len=1, sig_len_max=1)
    with pytest.raises(ValueError, match="unknown signature op"):
        native.oqs_sig("ML-DSA-44", "decaps", SECONDS, pk_len=1, sk_len=1, sig_len_max=1)


# --- libcrypto: public key --------------------------------------------------------------


def test_ssl_identity() -> None:
    assert native.ssl_version().startswith("OpenSSL ")
    path = native.ssl_library_path()
    assert path is not None
    assert "libcrypto" in Path(path).name


@pytest.mark.slow
@pytest.mark.parametrize(("alg", "op"), PK_CASES, ids=[f"{a}-{o}" for a, o in PK_CASES])
def test_ssl_pk_ops(alg: str, op: str) -> None:
    assert native.ssl_offers(alg) is None
    assert_ran(native.ssl_pk(alg, op, SECONDS))


@pytest.mark.parametrize(("alg", "op"), PQ_PK_CASES, ids=[f"{a}-{o}" for a, o in PQ_PK_CASES])
def test_ssl_post_quantum_offered_or_explained(alg: str, op: str) -> None:
    reason = native.ssl_offers(alg)
    if reason is None:  # OpenSSL >= 3.5
        assert_ran(native.ssl_pk(alg, op, SECONDS))
        return
    assert alg in reason
    if native.ssl_version().startswith("OpenSSL 3.0"):
        assert "needs OpenSSL >= 3.5" in reason
        assert "this libcrypto is OpenSSL 3.0" in reason
    with pytest.raises(ValueError, match="not offered"):
        native.ssl_pk(alg, op, SECONDS)


def test_ssl_pk_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown public-key algorithm"):
        native.ssl_pk("RSA-1024", "sign", SECONDS)
    with pytest.raises(ValueError, match="unknown op derive for Ed25519"):
        native.ssl_pk("Ed25519", "derive", SECONDS)
    with pytest.raises(ValueError, match="unknown public-key algorithm"):
        native.ssl_offers("DSA-2048")


# --- libcrypto: ciphers and digests -----------------------------------------------------


@pytest.mark.parametrize("op", ["encrypt", "decrypt"])
@pytest.mark.parametrize("name", CIPHERS)
def test_ssl_cipher(name: str, op: str) -> None:
    assert_ran(native.ssl_cipher(name, op, 1024, SECONDS))


@pytest.mark.parametrize("op", ["wrap", "unwrap"])
def test_ssl_key_wrap(op: str) -> None:
    assert_ran(native.ssl_cipher("id-aes256-wrap", op, 32, SECONDS))


@pytest.mark.parametrize(
    ("name", "op", "block_size", "message"),
    [
        ("AES-128-XTS", "encrypt", 8, ">= 16 for XTS"),
        ("DES-EDE3-CBC", "encrypt", 12, "multiple of 8"),
        ("AES-128-GCM", "wrap", 32, "unknown op wrap"),
        ("id-aes256-wrap", "encrypt", 32, "unknown op encrypt"),
        ("id-aes256-wrap", "wrap", 12, "multiple of 8"),
        ("AES-999-GCM", "encrypt", 16, "unknown cipher"),
        ("AES-128-GCM", "encrypt", 0, "block_size"),
    ],
)
def test_ssl_cipher_rejects(name: str, op: str, block_size: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        native.ssl_cipher(name, op, block_size, SECONDS)


@pytest.mark.parametrize("name", DIGESTS)
@pytest.mark.parametrize("block_size", [16, 8192])
def test_ssl_digest(name: str, block_size: int) -> None:
    assert_ran(native.ssl_digest(name, block_size, SECONDS))


def test_ssl_digest_rejects() -> None:
    with pytest.raises(ValueError, match="unknown digest"):
        native.ssl_digest("SHA257", 16, SECONDS)
    with pytest.raises(ValueError, match="XOF"):
        native.ssl_digest("SHAKE256", 16, SECONDS)


# --- the fallback -----------------------------------------------------------------------

_BLOCKED = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    class HideNative(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "pqbench.timing._native":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, HideNative())
    from pqbench.platform.errors import ImplementationUnavailable
    from pqbench.timing import native

    print(native.available())
    print(native.unavailable_reason())
    try:
        native.ssl_version()
    except ImplementationUnavailable as exc:
        print("raised:", exc)
    """
)


@pytest.mark.process
def test_without_the_extension_available_is_false_with_a_reason() -> None:
    root = Path(native.__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _BLOCKED], capture_output=True, text=True, env=env, check=True
    )
    available, reason, raised = done.stdout.strip().splitlines()
    assert available == "False"
    assert "not built" in reason
    assert "libssl-dev" in reason
    assert raised.startswith("raised: the native extension was not built")


# --- the operation count ----------------------------------------------------------------


@pytest.mark.parametrize(("op", "bytes_per_op"), [("keygen", 64), ("encaps", 32),
                                                  ("decaps", 0)])
def test_oqs_loop_reports_exactly_the_operations_it_ran(liboqs: str, op: str,
                                                        bytes_per_op: int) -> None:
    """Count the operations independently: liboqs's own custom-RNG hook sees every random
    byte the loop draws. FIPS 203 fixes the draws: ML-KEM.KeyGen takes d and z, 32 bytes
    each (Algorithm 19), ML-KEM.Encaps takes m, 32 bytes (Algorithm 20), Decaps none. The
    check before the loop runs keygen, encaps and decaps once: 96 bytes."""
    import ctypes

    library = liboqs_library()
    assert library is not None
    oqs = ctypes.CDLL(str(library))  # the very object the loop dlopened: one RNG state
    drawn = [0]

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t)
    def counting_rng(buffer: ctypes._Pointer[ctypes.c_uint8], length: int) -> None:
        drawn[0] += length
        ctypes.memmove(buffer, os.urandom(length), length)

    pk, sk, ct, ss = KEMS["ML-KEM-768"]
    oqs.OQS_randombytes_custom_algorithm(counting_rng)
    try:
        result = native.oqs_kem("ML-KEM-768", op, SECONDS, pk_len=pk, sk_len=sk, ct_len=ct,
                                ss_len=ss)
    finally:
        assert oqs.OQS_randombytes_switch_algorithm(b"OpenSSL") == 0
    assert result.ops > 1
    assert drawn[0] == 96 + bytes_per_op * result.ops

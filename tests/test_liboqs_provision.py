"""pqbench.liboqs against real libraries: our cache build, liboqs-python, and small C libraries.

The set-up step builds the cache; if it is missing, the `cache_prefix` fixture builds it once
(minutes). Anything that depends on process-global state (OQS_INSTALL_PATH, `import oqs`) runs
in a subprocess with `sys.executable`.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.liboqs import build, locate

REPO = Path(__file__).resolve().parent.parent


def run_python(
    code: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter that imports pqbench from this checkout."""
    full_env = {k: v for k, v in os.environ.items() if k not in drop} | (env or {})
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=120
    )


def survey_in_subprocess(env: dict[str, str]) -> dict[str, object]:
    code = (
        "import json; from pqbench.liboqs import survey\n"
        "found, rejected = survey()\n"
        "print(json.dumps({'found': found and found.to_dict(),"
        " 'rejected': [vars(r) for r in rejected]}))"
    )
    result = run_python(code, env)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


@pytest.fixture(scope="session")
def cache_prefix() -> Path:
    """Our pinned build in the cache; returns at once when set-up has already built it."""
    return build.build_pinned(log=lambda message: None)


@pytest.fixture(scope="session")
def oqs_module(cache_prefix: Path) -> object:
    os.environ["OQS_INSTALL_PATH"] = str(cache_prefix)
    from pqbench.liboqs import import_oqs

    return import_oqs()


@pytest.fixture(scope="session")
def cc() -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler is not None, "building liboqs needs a C compiler"
    return compiler


def test_cache_build_is_usable_with_shim(cache_prefix: Path) -> None:
    found = locate.probe(cache_prefix / "lib" / "liboqs.so", locate.ORIGIN_CACHE)
    assert isinstance(found, locate.LiboqsInstall), found
    assert found.version == build.LIBOQS_VERSION
    assert found.library == (cache_prefix / "lib" / f"liboqs.so.{build.LIBOQS_VERSION}")
    assert found.build["compat_shim"] is True
    assert found.build["source"] == build.SOURCE
    assert found.build["OQS_DIST_BUILD"] is True
    assert found.build["OQS_USE_OPENSSL"] is True
    assert isinstance(found.build["cpu_extensions"], list)


def test_cache_build_exports_symbols_dynamically(cache_prefix: Path) -> None:
    nm = shutil.which("nm")
    assert nm is not None, "nm (binutils) comes with the C toolchain the set-up needs"
    dynamic = subprocess.run(
        [nm, "-D", "--defined-only", str(cache_prefix / "lib" / "liboqs.so")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for symbol in ("OQS_SIG_supports_ctx_str", "OQS_KEM_new", "OQS_SIG_new", "OQS_version"):
        assert symbol in dynamic


def test_find_installed_prefers_oqs_install_path(cache_prefix: Path) -> None:
    data = survey_in_subprocess({"OQS_INSTALL_PATH": str(cache_prefix)})
    found = data["found"]
    assert isinstance(found, dict)
    assert found["version"] == build.LIBOQS_VERSION
    # The variable points at one of our builds, so the origin says where it came from.
    assert found["origin"] == locate.ORIGIN_CACHE
    assert found["prefix"] == str(cache_prefix)


def test_empty_oqs_install_path_is_skipped_with_reason(tmp_path: Path, cache_prefix: Path) -> None:
    data = survey_in_subprocess({"OQS_INSTALL_PATH": str(tmp_path)})
    rejected = data["rejected"]
    assert isinstance(rejected, list)
    assert rejected[0]["origin"] == locate.ORIGIN_ENV
    assert "no liboqs.so" in rejected[0]["reason"]
    found = data["found"]
    assert isinstance(found, dict)
    assert found["origin"] == locate.ORIGIN_CACHE  # the search went on to our cache


def test_liboqs_without_shim_is_rejected(tmp_path: Path, cache_prefix: Path, cc: str) -> None:
    """The same 0.13.0 archive linked without compat.c: what liboqs-python 0.16 cannot load."""
    libdir = tmp_path / "lib"
    libdir.mkdir()
    archive = cache_prefix / "lib" / "liboqs.a"
    subprocess.run(
        [cc, "-shared", "-o", str(libdir / "liboqs.so"), "-Wl,--whole-archive", str(archive),
         "-Wl,--no-whole-archive", "-lcrypto", "-pthread"],
        check=True,
    )  # fmt: skip
    data = survey_in_subprocess({"OQS_INSTALL_PATH": str(tmp_path)})
    rejected = data["rejected"]
    assert isinstance(rejected, list)
    assert rejected[0]["origin"] == locate.ORIGIN_ENV
    assert "lacks OQS_SIG_supports_ctx_str" in rejected[0]["reason"]


def test_older_liboqs_is_rejected(tmp_path: Path, cc: str) -> None:
    source = tmp_path / "old.c"
    source.write_text('const char *OQS_version(void) { return "0.12.0"; }\n')
    library = tmp_path / "liboqs.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    rejected = locate.probe(library, "test")
    assert isinstance(rejected, locate.Rejected)
    assert "0.12.0 is older than 0.13.0" in rejected.reason


def test_non_liboqs_library_is_rejected() -> None:
    libc = "libc.so.6"
    rejected = locate.probe(Path(libc), "test")
    assert isinstance(rejected, locate.Rejected)
    assert "no OQS_version" in rejected.reason


def test_import_oqs_round_trips_ml_kem_768(oqs_module: object) -> None:
    oqs = oqs_module
    with oqs.KeyEncapsulation("ML-KEM-768") as receiver:  # type: ignore[attr-defined]
        public_key = receiver.generate_keypair()
        with oqs.KeyEncapsulation("ML-KEM-768") as sender:  # type: ignore[attr-defined]
            ciphertext, shared_sender = sender.encap_secret(public_key)
        assert receiver.decap_secret(ciphertext) == shared_sender
    assert len(shared_sender) == 32  # FIPS 203: ML-KEM shared secrets are 32 bytes


@pytest.mark.parametrize(
    ("algorithm", "expected"),
    [
        pytest.param("ML-DSA-65", True, id="ML-DSA-65"),
        pytest.param("ML-DSA-44", True, id="ML-DSA-44"),
        pytest.param("Falcon-512", False, id="Falcon-512"),
        pytest.param("no-such-signature", False, id="unknown"),
    ],
)
def test_sig_supports_context_through_shim(
    oqs_module: object, algorithm: str, expected: bool
) -> None:
    assert oqs_module.sig_supports_context(algorithm) is expected  # type: ignore[attr-defined]


def test_ml_dsa_signs_with_context(oqs_module: object) -> None:
    oqs = oqs_module
    with oqs.Signature("ML-DSA-65") as signer:  # type: ignore[attr-defined]
        public_key = signer.generate_keypair()
        signature = signer.sign_with_ctx_str(b"message", b"pqbench")
        assert signer.verify_with_ctx_str(b"message", signature, b"pqbench", public_key)
        assert not signer.verify_with_ctx_str(b"message", signature, b"other", public_key)


def test_loaded_install_is_the_library_oqs_opened(oqs_module: object, cache_prefix: Path) -> None:
    from pqbench.liboqs import loaded_install

    install = loaded_install()
    assert install is not None
    assert install.prefix == cache_prefix
    opened = locate.loaded_path(oqs_module.native())  # type: ignore[attr-defined]
    assert opened is not None and opened.resolve() == install.library


def test_import_oqs_keeps_stdout_empty(cache_prefix: Path) -> None:
    code = (
        "from pqbench.liboqs import import_oqs\n"
        "oqs = import_oqs()\n"
        "import logging; logging.getLogger('oqs.oqs').warning('after import')\n"
    )
    result = run_python(code, {"OQS_INSTALL_PATH": str(cache_prefix)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "after import" in result.stderr  # its handler was bound to stderr, for good
    assert "differs from liboqs-python" not in result.stderr


def test_import_oqs_without_liboqs_never_imports_oqs(tmp_path: Path) -> None:
    code = (
        "import ctypes.util, sys\n"
        # As on a machine without a system liboqs, whatever this one has.
        "_find = ctypes.util.find_library\n"
        "ctypes.util.find_library = lambda n: None if n in ('oqs', 'liboqs') else _find(n)\n"
        "from pqbench.errors import ImplementationUnavailable\n"
        "from pqbench.liboqs import import_oqs\n"
        "try:\n"
        "    import_oqs()\n"
        "except ImplementationUnavailable as exc:\n"
        "    print(exc)\n"
        "print('oqs' in sys.modules)\n"
    )
    env = {"HOME": str(tmp_path), "PQBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = run_python(code, env, drop=("OQS_INSTALL_PATH", "XDG_CACHE_HOME"))
    assert result.returncode == 0, result.stderr
    message, imported = result.stdout.strip().splitlines()
    assert "liboqs not found" in message
    assert "python -m pqbench.liboqs" in message
    assert imported == "False"
    assert not (tmp_path / "_oqs").exists()  # liboqs-python's git-clone installer never ran


def test_main_prints_the_install_as_json(cache_prefix: Path) -> None:
    result = run_python(
        "import sys; from pqbench.liboqs.__main__ import main; sys.exit(main(['--json']))",
        {"OQS_INSTALL_PATH": str(cache_prefix)},
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["version"] == build.LIBOQS_VERSION
    assert data["origin"] == locate.ORIGIN_CACHE
    assert Path(data["library"]).is_file()


def test_build_pinned_reuses_a_finished_build(cache_prefix: Path) -> None:
    messages: list[str] = []
    assert build.build_pinned(log=messages.append) == cache_prefix
    assert any("already built" in message for message in messages)


def test_concurrent_set_up_waits_for_the_lock_then_reuses_the_build(cache_prefix: Path) -> None:
    code = (
        "from pqbench.liboqs import build\n"
        "print(build.build_pinned(log=lambda m: print(m, flush=True)))\n"
    )
    lock_path = cache_prefix.parent / ".lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as a set-up in the middle of a build would
        waiter = subprocess.Popen(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert waiter.stdout is not None
        assert "waiting for another set-up" in waiter.stdout.readline()
        fcntl.flock(lock, fcntl.LOCK_UN)
    rest, _ = waiter.communicate(timeout=60)
    assert waiter.returncode == 0
    assert "already built" in rest
    assert rest.strip().splitlines()[-1] == str(cache_prefix)


def test_cache_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PQBENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert locate.cache_root() == tmp_path / "xdg" / "pqbench"
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path / "explicit"))
    assert locate.cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("PQBENCH_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert locate.cache_root() == tmp_path / ".cache" / "pqbench"

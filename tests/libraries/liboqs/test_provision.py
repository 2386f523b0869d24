"""pqbench.libraries.liboqs against real libraries: our cache build, liboqs-python, and small C
libraries.

The set-up step builds the default (minimal) recipe into the cache; if it is missing, the
`cache_prefix` fixture builds it once (one to two minutes on 2 cores). The full recipe is
never compiled here (several minutes): its cmake options are checked by configuring liboqs,
and its cache handling with builds placed in temporary cache directories. Anything that
depends on process-global state (OQS_INSTALL_PATH, `import oqs`) runs in a subprocess with
`sys.executable`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.libraries.liboqs import compiling, locate, recipes
from tests.helpers import REPO


def run_python(
    code: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter that imports pqbench from this checkout."""
    full_env = {k: v for k, v in os.environ.items() if k not in drop} | (env or {})
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=120
    )


def survey_in_subprocess(env: dict[str, str], drop: tuple[str, ...] = ()) -> dict[str, object]:
    code = (
        "import json; from pqbench.libraries.liboqs import survey\n"
        "found, rejected = survey()\n"
        "print(json.dumps({'found': found and found.to_dict(),"
        " 'rejected': [vars(r) for r in rejected]}))"
    )
    result = run_python(code, env, drop)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


@pytest.fixture(scope="session")
def cache_prefix() -> Path:
    """Our minimal build in the cache, exactly (a full build beside it would not do: some tests
    need what it leaves out); returns at once when set-up has already built it."""
    return compiling.compile_recipe(recipes.MINIMAL, log=lambda message: None,
                                  reuse=(recipes.MINIMAL,))


@pytest.fixture
def minimal_only_cache(tmp_path: Path, cache_prefix: Path) -> Path:
    """A cache root (for PQBENCH_CACHE_DIR) whose only entry is the real minimal build."""
    root = tmp_path / "cache"
    (root / "liboqs").mkdir(parents=True)
    (root / "liboqs" / cache_prefix.name).symlink_to(cache_prefix)
    return root


ISOLATED_DROP = ("OQS_INSTALL_PATH", "XDG_CACHE_HOME")


def isolated_env(cache_root: Path, home: Path) -> dict[str, str]:
    """Environment in which pqbench finds liboqs only in `cache_root` (no ~/_oqs, no variable;
    run_python callers also pass drop=ISOLATED_DROP)."""
    env = {k: v for k, v in os.environ.items() if k not in ISOLATED_DROP}
    return env | {"PQBENCH_CACHE_DIR": str(cache_root), "HOME": str(home)}


@pytest.fixture(scope="session")
def oqs_module(cache_prefix: Path) -> object:
    os.environ["OQS_INSTALL_PATH"] = str(cache_prefix)
    from pqbench.libraries.liboqs import import_oqs

    return import_oqs()


@pytest.fixture(scope="session")
def cc() -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler is not None, "building liboqs needs a C compiler"
    return compiler


def test_cache_build_is_usable_with_shim(cache_prefix: Path) -> None:
    found = locate.probe(cache_prefix / "lib" / "liboqs.so", locate.ORIGIN_CACHE)
    assert isinstance(found, locate.LiboqsInstall), found
    assert found.version == compiling.LIBOQS_VERSION
    assert found.library == (cache_prefix / "lib" / f"liboqs.so.{compiling.LIBOQS_VERSION}")
    assert found.build["compat_shim"] is True
    assert found.build["source"] == compiling.SOURCE
    assert found.build["OQS_DIST_BUILD"] is True
    assert found.build["OQS_USE_OPENSSL"] is True
    assert found.build["algorithms"] == "minimal"
    assert isinstance(found.build["cpu_extensions"], list)


@pytest.mark.process
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


@pytest.mark.process
def test_find_installed_prefers_oqs_install_path(cache_prefix: Path) -> None:
    data = survey_in_subprocess({"OQS_INSTALL_PATH": str(cache_prefix)})
    found = data["found"]
    assert isinstance(found, dict)
    assert found["version"] == compiling.LIBOQS_VERSION
    # The variable points at one of our builds, so the origin says where it came from.
    assert found["origin"] == locate.ORIGIN_CACHE
    assert found["prefix"] == str(cache_prefix)


@pytest.mark.process
def test_empty_oqs_install_path_is_skipped_with_reason(tmp_path: Path, cache_prefix: Path) -> None:
    data = survey_in_subprocess({"OQS_INSTALL_PATH": str(tmp_path)})
    rejected = data["rejected"]
    assert isinstance(rejected, list)
    assert rejected[0]["origin"] == locate.ORIGIN_ENV
    assert "no liboqs.so" in rejected[0]["reason"]
    found = data["found"]
    assert isinstance(found, dict)
    assert found["origin"] == locate.ORIGIN_CACHE  # the search went on to our cache


@pytest.mark.process
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


@pytest.mark.process
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
    from pqbench.libraries.liboqs import loaded_install

    install = loaded_install()
    assert install is not None
    assert install.prefix == cache_prefix
    opened = locate.loaded_path(oqs_module.native())  # type: ignore[attr-defined]
    assert opened is not None and opened.resolve() == install.library


@pytest.mark.process
def test_import_oqs_keeps_stdout_empty(cache_prefix: Path) -> None:
    code = (
        "from pqbench.libraries.liboqs import import_oqs\n"
        "oqs = import_oqs()\n"
        "import logging; logging.getLogger('oqs.oqs').warning('after import')\n"
    )
    result = run_python(code, {"OQS_INSTALL_PATH": str(cache_prefix)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "after import" in result.stderr  # its handler was bound to stderr, for good
    assert "differs from liboqs-python" not in result.stderr


@pytest.mark.process
def test_import_oqs_without_liboqs_never_imports_oqs(tmp_path: Path) -> None:
    code = (
        "import ctypes.util, sys\n"
        # As on a machine without a system liboqs, whatever this one has.
        "_find = ctypes.util.find_library\n"
        "ctypes.util.find_library = lambda n: None if n in ('oqs', 'liboqs') else _find(n)\n"
        "from pqbench.platform.errors import ImplementationUnavailable\n"
        "from pqbench.libraries.liboqs import import_oqs\n"
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
    assert "python -m pqbench.libraries.liboqs" in message
    assert imported == "False"
    assert not (tmp_path / "_oqs").exists()  # liboqs-python's git-clone installer never ran


@pytest.mark.process
def test_main_prints_the_install_as_json(cache_prefix: Path) -> None:
    result = run_python(
        "import sys; from pqbench.libraries.liboqs.__main__ import main; "
        "sys.exit(main(['--json']))",
        {"OQS_INSTALL_PATH": str(cache_prefix)},
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["version"] == compiling.LIBOQS_VERSION
    assert data["origin"] == locate.ORIGIN_CACHE
    assert Path(data["library"]).is_file()
    assert data["build"]["algorithms"] == "minimal"


def test_compile_pinned_reuses_a_finished_build(
    cache_prefix: Path, minimal_only_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(minimal_only_cache))
    messages: list[str] = []
    assert compiling.compile_pinned(log=messages.append) == recipes.MINIMAL.directory()
    assert recipes.MINIMAL.directory().resolve() == cache_prefix
    assert any("already built" in message for message in messages)


@pytest.mark.process
def test_concurrent_set_up_waits_for_the_lock_then_reuses_the_build(
    minimal_only_cache: Path,
) -> None:
    code = (
        "from pqbench.libraries.liboqs import compiling\n"
        "print(compiling.compile_pinned(log=lambda m: print(m, flush=True)))\n"
    )
    lock_path = minimal_only_cache / "liboqs" / ".lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as a set-up in the middle of a build would
        waiter = subprocess.Popen(
            [sys.executable, "-c", code],
            env=dict(os.environ, PYTHONPATH=str(REPO), PQBENCH_CACHE_DIR=str(minimal_only_cache)),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert waiter.stdout is not None
        assert "waiting for another set-up" in waiter.stdout.readline()
        fcntl.flock(lock, fcntl.LOCK_UN)
    rest, _ = waiter.communicate(timeout=60)
    assert waiter.returncode == 0
    assert "already built" in rest
    (entry,) = (minimal_only_cache / "liboqs").glob("0.13.0-*")
    assert rest.strip().splitlines()[-1] == str(entry)


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


# --- the minimal and full recipes ---------------------------------------------------------

# The default build, as liboqs 0.13 names the algorithms (liboqs README, "Supported
# Algorithms"): FIPS 203 ML-KEM, HQC, FIPS 204 ML-DSA, Falcon (FN-DSA) and the SPHINCS+
# parameter sets FIPS 205 standardised as SLH-DSA.
MINIMAL_KEMS = {"ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "HQC-128", "HQC-192", "HQC-256"}
MINIMAL_SIGNATURES = {
    "ML-DSA-44", "ML-DSA-65", "ML-DSA-87",
    "Falcon-512", "Falcon-1024", "Falcon-padded-512", "Falcon-padded-1024",
    "SPHINCS+-SHA2-128f-simple", "SPHINCS+-SHA2-128s-simple", "SPHINCS+-SHA2-192f-simple",
    "SPHINCS+-SHA2-192s-simple", "SPHINCS+-SHA2-256f-simple", "SPHINCS+-SHA2-256s-simple",
    "SPHINCS+-SHAKE-128f-simple", "SPHINCS+-SHAKE-128s-simple", "SPHINCS+-SHAKE-192f-simple",
    "SPHINCS+-SHAKE-192s-simple", "SPHINCS+-SHAKE-256f-simple", "SPHINCS+-SHAKE-256s-simple",
}  # fmt: skip
# The same, as oqsconfig.h switches.
MINIMAL_SWITCHES = {
    "KEM_ml_kem_512", "KEM_ml_kem_768", "KEM_ml_kem_1024",
    "KEM_hqc_128", "KEM_hqc_192", "KEM_hqc_256",
    "SIG_ml_dsa_44", "SIG_ml_dsa_65", "SIG_ml_dsa_87",
    "SIG_falcon_512", "SIG_falcon_1024", "SIG_falcon_padded_512", "SIG_falcon_padded_1024",
    *{f"SIG_sphincs_{h}_{n}{v}_simple" for h in ("sha2", "shake") for n in (128, 192, 256)
      for v in "fs"},
}  # fmt: skip


def source_tree(prefix: Path) -> Path:
    """The liboqs source the cache build was made from (its manifest records it)."""
    manifest = json.loads((prefix / locate.MANIFEST_NAME).read_text())
    return Path(manifest["source_dir"])


def enabled_switches(source: Path, options: tuple[str, ...], build_dir: Path) -> set[str]:
    """Configure liboqs with `options` (no compiling) and read which algorithms it enables."""
    subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build_dir), *options],
        capture_output=True, check=True, text=True,
    )  # fmt: skip
    config = (build_dir / "include" / "oqs" / "oqsconfig.h").read_text()
    switches = set(re.findall(r"^#define OQS_ENABLE_((?:KEM|SIG|SIG_STFL)_\w+) 1", config, re.M))
    # Keep one name per algorithm: drop families (upper case) and per-CPU variants.
    variants = re.compile(r"_(avx2|avx512|x86_64|aarch64|aesni|avx|cuda|neon)$")
    return {s for s in switches if not s.split("_", 1)[1].isupper() and not variants.search(s)}


def declared_algorithms(source: Path) -> set[str]:
    """Every KEM and signature switch liboqs's alg_support.cmake declares (all we could build)."""
    text = (source / ".CMake" / "alg_support.cmake").read_text()
    declared = re.findall(r"cmake_dependent_option\(OQS_ENABLE_((?:KEM|SIG)_[a-z]\w*) ", text)
    variants = re.compile(r"_(avx2|avx512|x86_64|aarch64|aesni|avx|cuda|neon)$")
    # Anything under the libjade switch (off unless OQS_LIBJADE_BUILD) is not part of "all".
    return {s for s in declared if not variants.search(s) and "LIBJADE" not in s}


@pytest.mark.process
def test_minimal_recipe_configures_exactly_the_standards(
    cache_prefix: Path, tmp_path: Path
) -> None:
    switches = enabled_switches(
        source_tree(cache_prefix), recipes.MINIMAL.cmake_options, tmp_path / "build"
    )
    assert switches == MINIMAL_SWITCHES


@pytest.mark.process
def test_full_recipe_configures_every_algorithm(cache_prefix: Path, tmp_path: Path) -> None:
    source = source_tree(cache_prefix)
    switches = enabled_switches(source, recipes.FULL.cmake_options, tmp_path / "build")
    # Every algorithm liboqs declares, HQC included though liboqs 0.13 turns it off by default.
    assert declared_algorithms(source) <= switches
    assert switches > MINIMAL_SWITCHES  # so a full build answers a minimal request
    for name in ("KEM_frodokem_640_aes", "KEM_classic_mceliece_348864", "SIG_mayo_1",
                 "SIG_STFL_lms_sha256_h5_w1", "SIG_STFL_xmss_sha256_h10"):
        assert name in switches


def test_recipes_have_distinct_stable_cache_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", "/nonexistent-cache")
    minimal, full = recipes.MINIMAL.key(), recipes.FULL.key()
    assert re.fullmatch(r"[0-9a-f]{12}", minimal) and re.fullmatch(r"[0-9a-f]{12}", full)
    assert minimal != full
    assert recipes.MINIMAL.key() == minimal  # a pure function of the recipe
    assert recipes.MINIMAL.directory() == Path(f"/nonexistent-cache/liboqs/0.13.0-{minimal}")
    assert recipes.FULL.directory() == Path(f"/nonexistent-cache/liboqs/0.13.0-{full}")
    extra = "-DOQS_SPEED_USE_ARM_PMU=ON"
    changed = dataclasses.replace(
        recipes.MINIMAL, cmake_options=(*recipes.MINIMAL.cmake_options, extra)
    )
    assert changed.key() not in (minimal, full)


@pytest.mark.process
def test_minimal_build_enables_the_standards_and_leaves_the_rest_out(cache_prefix: Path) -> None:
    code = (
        "import json; from pqbench.libraries.liboqs import import_oqs, loaded_install\n"
        "from pqbench.libraries.liboqs.locate import left_out\n"
        "oqs = import_oqs()\n"
        "print(json.dumps({'kems': oqs.get_enabled_kem_mechanisms(),"
        " 'sigs': oqs.get_enabled_sig_mechanisms(),"
        " 'left_out': left_out(loaded_install().library)}))\n"
    )
    result = run_python(code, {"OQS_INSTALL_PATH": str(cache_prefix)})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data["kems"]) == MINIMAL_KEMS
    assert set(data["sigs"]) == MINIMAL_SIGNATURES
    for name in ("FrodoKEM-640-AES", "Classic-McEliece-348864", "BIKE-L1", "Kyber768",
                 "sntrup761", "Dilithium2", "MAYO-1", "cross-rsdp-128-fast", "OV-Is"):
        assert name in data["left_out"]
    assert not (MINIMAL_KEMS | MINIMAL_SIGNATURES) & set(data["left_out"])


def refuse_to_fetch(log: object) -> Path:
    raise compiling.SourceUnavailable("fetch refused by the test")


def test_full_build_in_cache_answers_a_minimal_request(
    cache_prefix: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(tmp_path / "cache"))
    recipes.FULL.directory().parent.mkdir(parents=True)
    recipes.FULL.directory().symlink_to(cache_prefix)  # stands in for a finished full build
    monkeypatch.setattr(compiling, "fetch_source", refuse_to_fetch)  # any build attempt fails
    messages: list[str] = []
    assert compiling.compile_pinned(messages.append) == recipes.FULL.directory()
    assert compiling.compile_pinned(messages.append, full=True) == recipes.FULL.directory()
    assert all("already built" in message for message in messages)


def test_minimal_build_in_cache_does_not_answer_a_full_request(
    minimal_only_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PQBENCH_CACHE_DIR", str(minimal_only_cache))
    monkeypatch.setattr(compiling, "fetch_source", refuse_to_fetch)
    assert compiling.compile_pinned(lambda message: None) == recipes.MINIMAL.directory()
    with pytest.raises(compiling.SourceUnavailable, match="refused by the test"):
        compiling.compile_pinned(lambda message: None, full=True)  # it went on to build
    assert not recipes.FULL.directory().exists()
    assert not list((minimal_only_cache / "liboqs").glob(".staging-*"))


@pytest.mark.process
def test_ensure_all_builds_when_the_cache_has_only_a_minimal_build(
    minimal_only_cache: Path, tmp_path: Path
) -> None:
    code = (
        "from pqbench.libraries.liboqs import compiling\n"
        "def refuse(log): raise compiling.SourceUnavailable('fetch refused by the test')\n"
        "compiling.fetch_source = refuse\n"
        "print('minimal request:', compiling.ensure(log=print).prefix)\n"
        "try:\n"
        "    compiling.ensure(log=print, full=True, fallback=False)\n"
        "except compiling.SourceUnavailable as exc:\n"
        "    print('full request:', exc)\n"
    )
    result = run_python(code, isolated_env(minimal_only_cache, tmp_path), ISOLATED_DROP)
    assert result.returncode == 0, result.stderr
    (entry,) = (minimal_only_cache / "liboqs").glob("0.13.0-*")
    lines = result.stdout.strip().splitlines()
    assert f"minimal request: {entry}" in lines
    # liboqs 0.13 knows 29 KEMs and 56 signatures (its README); the minimal build has 25.
    assert any(f"{entry} leaves out 60 mechanisms" in line for line in lines)
    assert lines[-1] == "full request: fetch refused by the test"  # it went on to build


@pytest.mark.process
def test_all_refuses_when_oqs_install_path_selects_a_minimal_build(
    cache_prefix: Path, tmp_path: Path
) -> None:
    env = isolated_env(tmp_path / "cache", tmp_path) | {"OQS_INSTALL_PATH": str(cache_prefix)}
    result = subprocess.run(
        [sys.executable, "-m", "pqbench.libraries.liboqs", "--all"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "OQS_INSTALL_PATH selects it" in result.stderr
    assert "leaves out 60 mechanisms" in result.stderr  # liboqs 0.13 knows 85, we build 25
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cache").exists()  # nothing was built


@pytest.mark.process
def test_survey_prefers_the_cache_build_that_enables_most(
    cache_prefix: Path, tmp_path: Path
) -> None:
    root = tmp_path / "cache" / "liboqs"
    root.mkdir(parents=True)
    larger = root / "0.13.0-larger"
    shutil.copytree(cache_prefix, larger, symlinks=True)
    with open(larger / "include" / "oqs" / "oqsconfig.h", "a") as config:
        config.write("#define OQS_ENABLE_KEM_frodokem_640_aes 1\n")
    (root / cache_prefix.name).symlink_to(cache_prefix)
    os.utime(cache_prefix, None)  # the minimal build is the newest, and still comes second
    data = survey_in_subprocess(isolated_env(tmp_path / "cache", tmp_path), ISOLATED_DROP)
    found = data["found"]
    assert isinstance(found, dict)
    assert found["prefix"] == str(larger)


@pytest.mark.process
def test_set_up_step_runs_on_the_standard_library_alone() -> None:
    """make setup runs it with the system python3 while pip fills .venv (python -S: no
    site-packages at all)."""
    result = subprocess.run(
        [sys.executable, "-S", "-c",
         "import pqbench.libraries.liboqs.__main__, pqbench.libraries.liboqs.compiling, sys; "
         "print(sorted(m for m in sys.modules if m.split('.')[0] in "
         "('typer', 'rich', 'oqs', 'numpy', 'cryptography')))"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.process
def test_no_fallback_without_cargo_defers_quietly(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "cache", tmp_path) | {"PATH": str(tmp_path / "empty-bin")}
    result = subprocess.run(
        [sys.executable, "-m", "pqbench.libraries.liboqs", "--no-fallback"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "cargo not found on PATH; leaving liboqs to liboqs-python's installer" in result.stderr
    assert not (tmp_path / "_oqs").exists()  # the git-clone installer did not run


# --- `pqbench speed` names --all for what the minimal build left out ------------------------


def speed(cache_root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pqbench", "speed", *args, "--db", str(home / "runs.db")],
        cwd=REPO, env=isolated_env(cache_root, home), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


@pytest.mark.process
@pytest.mark.parametrize(
    "name",
    [
        pytest.param("FrodoKEM-640-AES", id="FrodoKEM-640-AES"),
        pytest.param("classic-mceliece-348864", id="Classic-McEliece-348864"),
        pytest.param("MAYO-1", id="MAYO-1"),
    ],
)
def test_speed_names_all_for_an_algorithm_the_build_left_out(
    minimal_only_cache: Path, tmp_path: Path, name: str
) -> None:
    result = speed(minimal_only_cache, tmp_path, name)
    assert result.returncode == 2, result.stderr
    message = " ".join(result.stderr.split())  # undo the console's wrapping
    assert "python -m pqbench.libraries.liboqs --all" in message
    assert "was built without" in message
    assert name.lower() in message.lower()
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.process
def test_speed_names_all_for_a_typo_of_a_left_out_algorithm(
    minimal_only_cache: Path, tmp_path: Path
) -> None:
    result = speed(minimal_only_cache, tmp_path, "frodokem-641-aes")
    assert result.returncode == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert "unknown algorithm 'frodokem-641-aes'" in message
    assert "FrodoKEM-640-AES" in message and "python -m pqbench.libraries.liboqs --all" in message


@pytest.mark.process
def test_speed_unknown_name_near_nothing_left_out_does_not_mention_all(
    minimal_only_cache: Path, tmp_path: Path
) -> None:
    result = speed(minimal_only_cache, tmp_path, "mlkem769")
    assert result.returncode == 2, result.stderr
    assert "Did you mean" in result.stderr and "ML-KEM-768" in result.stderr
    assert "--all" not in result.stderr


@pytest.mark.process
def test_speed_times_slh_dsa_from_the_minimal_build(
    minimal_only_cache: Path, tmp_path: Path
) -> None:
    result = speed(minimal_only_cache, tmp_path, "sphincs+-shake-128f-simple", "falcon-512",
                   "-i", "liboqs-python", "--seconds", "0.05", "--rounds", "5", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["results"]
    measured = {(row["algorithm"], row["operation"]) for row in rows}
    assert measured == {(alg, op) for alg in ("SPHINCS+-SHAKE-128f-simple", "Falcon-512")
                        for op in ("keygen", "sign", "verify")}
    sphincs = next(row for row in rows if row["algorithm"].startswith("SPHINCS"))
    assert sphincs["sizes"]["signature"] == 17088  # SLH-DSA-SHAKE-128f, FIPS 205 table 2


# --- make setup: liboqs and pip side by side, either failing fails set-up -------------------


def make_setup(
    tmp_path: Path, cache_root: Path, python: Path, venv: Path
) -> subprocess.CompletedProcess[str]:
    env = isolated_env(cache_root, tmp_path)
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # when the suite itself runs under make
        env.pop(name, None)
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "setup",
         f"PYTHON={python}", f"VENV={venv}"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def ready_venv(path: Path) -> Path:
    """A stand-in .venv whose install stamp is up to date: the pip step has nothing to do."""
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").symlink_to(sys.executable)
    (path / ".pqbench-installed").touch()
    return path


def fake_python(path: Path, fails: str, code: int) -> Path:
    """python3 that exits `code` for `-m <fails>` and runs the real interpreter otherwise."""
    path.write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "-m {fails}" ]; then echo "fake {fails} failure" >&2; exit {code}; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    path.chmod(0o755)
    return path


@pytest.mark.process
def test_make_setup_reports_the_liboqs_it_uses(minimal_only_cache: Path, tmp_path: Path) -> None:
    venv = ready_venv(tmp_path / "venv")
    result = make_setup(tmp_path, minimal_only_cache, Path(sys.executable), venv)
    assert result.returncode == 0, result.stderr
    (entry,) = (minimal_only_cache / "liboqs").glob("0.13.0-*")
    assert f"prefix: {entry}" in result.stdout.splitlines()


@pytest.mark.process
def test_make_setup_fails_when_the_liboqs_step_fails(
    minimal_only_cache: Path, tmp_path: Path
) -> None:
    venv = ready_venv(tmp_path / "venv")
    python = fake_python(tmp_path / "python3", "pqbench.libraries.liboqs", 3)
    result = make_setup(tmp_path, minimal_only_cache, python, venv)
    assert result.returncode != 0
    assert "make setup: building liboqs failed (exit 3)" in result.stderr
    assert "installing .venv failed" not in result.stderr
    assert "prefix:" not in result.stdout  # set-up stopped before the final step


@pytest.mark.process
def test_make_setup_fails_when_the_venv_step_fails(
    minimal_only_cache: Path, tmp_path: Path
) -> None:
    python = fake_python(tmp_path / "python3", "venv", 4)
    result = make_setup(tmp_path, minimal_only_cache, python, tmp_path / "venv")
    assert result.returncode != 0
    assert "fake venv failure" in result.stderr
    assert "make setup: installing .venv failed" in result.stderr
    assert "building liboqs failed" not in result.stderr  # that step found the cache
    assert "prefix:" not in result.stdout


@pytest.mark.process
@pytest.mark.timeout(1800)  # a fresh virtual environment: pip and the C extensions
def test_make_setup_prints_no_setuptools_banner(minimal_only_cache: Path, tmp_path: Path
                                                ) -> None:
    """A fresh virtual environment filled the way `make run` fills it where uv cannot be
    installed (a version the registry does not have): pip installs the locked set instead,
    says why, and its editable install prints no BuildBackendWarning (setuptools'
    150-column "Editable installation" box of asterisks). Every CI run's own `make setup`
    takes the uv branch."""
    env = isolated_env(minimal_only_cache, tmp_path)
    env["PIP_CACHE_DIR"] = str(Path.home() / ".cache" / "pip")  # the wheels pip has fetched
    # Not the byte-code of every dependency (scipy's alone is thousands of files): what is
    # checked is what the editable install prints, which compiling does not change.
    env["PIP_NO_COMPILE"] = "1"
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    venv = tmp_path / "venv"
    result = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "setup",
                             f"PYTHON={sys.executable}", f"VENV={venv}", "UV_VERSION=0.0.0"],
                            env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    said = result.stdout + result.stderr
    assert "uv could not be installed; pip installs the same locked set" in result.stderr
    assert not (venv / "bin" / "uv").exists()
    assert "BuildBackendWarning" not in said and "*" * 20 not in said, said
    assert (venv / "bin" / "pqbench").exists()
    # Every package installed is one the lock names, at a version it locks.
    frozen = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "freeze",
                             "--exclude-editable"], env=env, capture_output=True, text=True,
                            timeout=120, check=True).stdout
    from packaging.utils import canonicalize_name

    from tests.helpers.lock import pins

    locked = {name: {str(version) for version, _ in each} for name, each in pins().items()}
    installed = {canonicalize_name(name): version for name, version in
                 (line.split("==") for line in frozen.split())}
    assert installed and {n: v for n, v in installed.items()
                          if v not in locked.get(n, ())} == {}, (installed, locked)

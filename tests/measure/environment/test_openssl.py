"""The CPU capabilities each loaded OpenSSL actually uses, read in a real pqbench process
with and without an OPENSSL_ia32cap mask. A capability's effect is asserted only where this
CPU has it (/proc/cpuinfo); on a CPU without it the other branch is asserted: nothing to
hide, so it is used neither way."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from pqbench.catalog.algorithms import capabilities
from pqbench.measure.environment import openssl
from tests.helpers import CPU_FLAGS, starts_processes

PROBE = ("import json; from pqbench.measure import environment; "
         "print(json.dumps(environment.collect()['openssl_capabilities']))")


def _without_knobs() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in (capabilities.IA32CAP,
                                                             capabilities.ARMCAP)}


def _measured(mask: list[str] | None) -> dict[str, Any]:
    env = _without_knobs()
    if mask:
        env[capabilities.IA32CAP] = capabilities.ia32cap_value(mask)
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
@starts_processes
def unmasked() -> dict[str, Any]:
    return _measured(None)


@pytest.fixture(scope="module")
@starts_processes
def masked() -> dict[str, Any]:
    return _measured(["aesni", "shani"])


def test_decoding_follows_openssls_bit_positions() -> None:
    """OPENSSL_ia32cap(3): word 0 is CPUID.1 EDX:ECX, AES-NI is ECX bit 25 (bit 57 of the
    word), PCLMULQDQ ECX bit 1 (33); word 1 is CPUID.7.0 EBX:ECX, SHA is EBX bit 29."""
    assert openssl.decode("OPENSSL_ia32cap=0x200000000000000:0x20000000") == (
        "ia32cap", ["aesni", "shani"])
    assert openssl.decode("OPENSSL_ia32cap=0x200000000:0x0") == ("ia32cap", ["pclmulqdq"])
    assert openssl.decode("OPENSSL_ia32cap=0x0:0x0:0x0:0x0:0x0") == ("ia32cap", [])
    # With the variable set, OpenSSL appends what it read.
    assert openssl.decode("OPENSSL_ia32cap=0x200000000:0x0 env:~0x200000000000000") == (
        "ia32cap", ["pclmulqdq"])
    assert openssl.decode("garbage") == (None, None)
    assert openssl.decode(None) == (None, None)


@pytest.mark.process
@pytest.mark.parametrize("capability, flag", [("aesni", "aes"), ("shani", "sha_ni")])
def test_the_system_libcrypto_uses_what_the_cpu_has_unless_masked(
        unmasked: dict[str, Any], masked: dict[str, Any], capability: str, flag: str) -> None:
    assert unmasked["libcrypto"]["source"] == "OPENSSL_info"
    assert capability not in masked["libcrypto"]["enabled"]
    if flag in CPU_FLAGS:
        assert capability in unmasked["libcrypto"]["enabled"]
    else:  # nothing to hide: used neither way
        assert capability not in unmasked["libcrypto"]["enabled"]
    # The mask hides only what it names.
    kept = set(unmasked["libcrypto"]["enabled"]) - {"aesni", "shani"}
    assert kept <= set(masked["libcrypto"]["enabled"])


@pytest.mark.parametrize("capability, flag", [("aesni", "aes"), ("shani", "sha_ni")])
def test_cryptographys_bundled_openssl_is_read_from_its_symbol_table(
        unmasked: dict[str, Any], masked: dict[str, Any], capability: str, flag: str) -> None:
    import cryptography.hazmat.bindings._rust as rust

    from pqbench.measure.environment import elf

    if elf.symbol(rust.__file__, "OPENSSL_ia32cap_P") is None:  # a stripped wheel
        assert "cryptography" not in unmasked
        return
    assert unmasked["cryptography"]["source"] == "OPENSSL_ia32cap_P in the symbol table"
    assert capability not in masked["cryptography"]["enabled"]
    assert (capability in unmasked["cryptography"]["enabled"]) == (flag in CPU_FLAGS)


@pytest.mark.process
@pytest.mark.parametrize("mask", [None, ["aesni"]], ids=["unmasked", "aesni-masked"])
def test_the_in_process_vector_is_what_openssl_info_cpusettings_prints(mask: list[str] | None
                                                                       ) -> None:
    """`openssl info -cpusettings` (OpenSSL 3.0+) asks the same library the same question
    from another process: the capabilities decoded from both agree."""
    command = shutil.which("openssl")
    assert command, "this test needs the openssl command of the system's OpenSSL"
    env = _without_knobs()
    if mask:
        env[capabilities.IA32CAP] = capabilities.ia32cap_value(mask)
    printed = subprocess.run([command, "info", "-cpusettings"], capture_output=True,
                             text=True, env=env, check=True).stdout.strip()
    assert openssl.decode(printed)[1] == _measured(mask)["libcrypto"]["enabled"]

"""Disk-style AES-256-XTS for `files corpus`: the small C extension, or cryptography.

Data units are encrypted as disk encryption does (IEEE 1619): unit i gets the tweak
first_unit + i, little-endian in 16 bytes. The extension `pqbench.measure.files._xts` keeps one
libcrypto context for all units, as a kernel does; it is optional (built only where a C
compiler and the OpenSSL headers exist), and without it every unit gets its own
cryptography context, whose Python cost (not AES) then bounds the figures (about 0.4 GB/s
here). Both give the same bytes; tests/measure/files/test_files.py checks it unit by unit.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

ABI = 1  # the extension's ABI this facade was written against


def _load() -> ModuleType | None:
    try:
        module = importlib.import_module("pqbench.measure.files._xts")
    except ImportError:  # not built, or built against a libcrypto that is gone
        return None
    return module if getattr(module, "ABI", None) == ABI else None


_ext = _load()


def native_available() -> bool:
    """True when the libcrypto extension is built and loads."""
    return _ext is not None


def implementation() -> str:
    """Which XTS `units` runs: the native one keeps the key schedule across units."""
    if _ext is not None:
        return "libcrypto AES-256-XTS, one context for all sectors (native)"
    return "cryptography AES-256-XTS, one context per sector (Python)"


def units(key: bytes, data: bytes, first_unit: int, unit_size: int, encrypt: bool) -> bytes:
    """Encrypt (or decrypt) `data`, whole units of `unit_size` bytes, with a 64-byte key."""
    if _ext is not None:
        out: bytes = _ext.xts_units(key, data, first_unit, unit_size, encrypt)
        return out
    result = bytearray(len(data))
    for offset in range(0, len(data), unit_size):
        tweak = (first_unit + offset // unit_size).to_bytes(16, "little")
        cipher = Cipher(algorithms.AES(key), modes.XTS(tweak))
        ctx = cipher.encryptor() if encrypt else cipher.decryptor()
        result[offset:offset + unit_size] = ctx.update(data[offset:offset + unit_size])
    return bytes(result)

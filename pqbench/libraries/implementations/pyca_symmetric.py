"""Ciphers, AEADs and key wrap through pyca/cryptography (`cryptography` rows).

PycaImplementation hands every "cipher" algorithm to this module, so the rows carry the
same implementation name as the public-key ones.

What one op is, per operation (the `per_op` attribute of each row says it too):

* encrypt/decrypt: one `update_into` of `block_size` bytes on one cipher context made
  before the clock, as `openssl speed -evp aes-256-gcm` does one EVP_EncryptUpdate per block
  on one context. For GCM that is CTR encryption plus GHASH of the block, with no tag per
  op; XTS treats each update as one data unit under the same tweak, as speed does.
  cryptography has no streaming ChaCha20-Poly1305, so its encrypt/decrypt ops are whole
  messages (as seal/open below), and say so.
* seal/open (AEADs, on request with `-o seal`): one whole AEAD message: key schedule reused,
  fixed 12-byte nonce (a benchmark never reuses it for secrets), no associated data, and the
  16-byte tag made or checked: what an application pays per message.
* wrap/unwrap: one RFC 3394 key wrap of `block_size` bytes of key material.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import keywrap
from cryptography.hazmat.primitives.ciphers import Cipher, CipherContext, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from pqbench.catalog.algorithms.base import Algorithm
from pqbench.catalog.algorithms.ciphers import security_attributes, size_problem
from pqbench.libraries.implementations.base import Check, PythonOperation, TimedOperation
from pqbench.platform.errors import NotOfferedError, VerificationError

try:  # cryptography >= 43; older releases keep it among the primitives
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
except ImportError:  # pragma: no cover - a `pip:cryptography==...` bisect build
    TripleDES = algorithms.TripleDES  # type: ignore[misc]

NONCE = bytes(12)
STREAM_UPDATE = "one update on one context (as openssl speed -evp)"
WHOLE_MESSAGE = "one whole AEAD message (nonce, data, 16-byte tag)"


def _key(alg: Algorithm) -> bytes:
    bits = alg.int_param("key_bits")
    if alg.name == "DES-EDE3-CBC":
        return os.urandom(24)  # 168 secret bits in 24 bytes with parity bits
    return os.urandom(bits // 8)


def _contexts(alg: Algorithm, key: bytes, encrypt: bool) -> list[CipherContext]:
    """Streaming contexts, applied in order (two for the cascade)."""
    mode = alg.param("mode")
    if mode == "CTR-CASCADE":
        halves = (key[:32], key[32:])  # two independent AES-256 keys
        ctxs = [Cipher(algorithms.AES(k), modes.CTR(bytes(16))) for k in halves]
        return [c.encryptor() for c in ctxs] if encrypt else \
            [c.decryptor() for c in reversed(ctxs)]
    cipher: Cipher[Any]
    if mode == "GCM":
        # A decryptor without a tag streams like EVP_DecryptUpdate; the tag is checked only
        # at finalize_with_tag, which the timed loop never calls (as speed).
        cipher = Cipher(algorithms.AES(key), modes.GCM(NONCE) if encrypt
                        else modes.GCM(NONCE, min_tag_length=16))
    elif mode == "CTR":
        cipher = Cipher(algorithms.AES(key), modes.CTR(bytes(16)))
    elif mode == "XTS":
        cipher = Cipher(algorithms.AES(key), modes.XTS(bytes(16)))
    elif mode == "CBC" and alg.name == "DES-EDE3-CBC":
        cipher = Cipher(TripleDES(key), modes.CBC(bytes(8)))
    elif mode == "CBC":
        cipher = Cipher(algorithms.AES(key), modes.CBC(bytes(16)))
    else:
        raise NotOfferedError(f"cryptography has no streaming interface for {alg.name}")
    return [cipher.encryptor() if encrypt else cipher.decryptor()]


def _aead(alg: Algorithm, key: bytes) -> AESGCM | ChaCha20Poly1305:
    return ChaCha20Poly1305(key) if alg.name == "ChaCha20-Poly1305" else AESGCM(key)


def offers(alg: Algorithm, operation: str) -> str | None:
    if operation not in alg.all_operations:
        return f"{alg.name} has no {operation!r} operation"
    return None


def _stream(ctxs: list[CipherContext], data: bytes) -> bytes:
    for ctx in ctxs:
        data = ctx.update(data)
    return data


def self_check(alg: Algorithm) -> list[Check]:
    """Round trip at several lengths; AEAD tags must reject a flipped bit."""
    key = _key(alg)
    message = os.urandom(4096)
    if alg.param("mode") == "KW":
        wrapping = os.urandom(32)
        wrapped = keywrap.aes_key_wrap(wrapping, key)
        if keywrap.aes_key_unwrap(wrapping, wrapped) != key or len(wrapped) != len(key) + 8:
            raise VerificationError(f"{alg.name}: unwrap(wrap(k)) != k")
        _expect_rejected(alg, partial(keywrap.aes_key_unwrap, wrapping, _flip(wrapped)))
        return [Check("wrap round trip"), Check("tampered wrap rejected")]
    checks = [Check("round trip", "4096 bytes")]
    if alg.name != "ChaCha20-Poly1305":
        ciphertext = _stream(_contexts(alg, key, True), message)
        if ciphertext == message or _stream(_contexts(alg, key, False), ciphertext) != message:
            raise VerificationError(f"{alg.name}: decrypt(encrypt(m)) != m")
    if alg.param("aead"):
        aead = _aead(alg, key)
        sealed = aead.encrypt(NONCE, message, b"header")
        if aead.decrypt(NONCE, sealed, b"header") != message:
            raise VerificationError(f"{alg.name}: open(seal(m)) != m")
        _expect_rejected(alg, partial(aead.decrypt, NONCE, _flip(sealed), b"header"))
        _expect_rejected(alg, partial(aead.decrypt, NONCE, sealed, b"other header"))
        checks.append(Check("tampered ciphertext and header rejected"))
    return checks


def _flip(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:]


def _expect_rejected(alg: Algorithm, attempt: Callable[[], object]) -> None:
    try:
        attempt()
    except (InvalidTag, keywrap.InvalidUnwrap):
        return
    raise VerificationError(f"{alg.name}: a tampered input was accepted")


def prepare(alg: Algorithm, operation: str, block_size: int | None) -> TimedOperation:
    """Key, nonce, buffers and contexts before the clock; only the update is timed."""
    reason = offers(alg, operation)
    if reason:
        raise NotOfferedError(reason)
    size = block_size or 16384
    _check_size(alg, size)
    key = _key(alg)
    data = os.urandom(size)
    attributes: dict[str, object] = {**security_attributes(alg)}
    if operation in ("wrap", "unwrap"):
        wrapping = os.urandom(32)
        call: Callable[[], object] = partial(keywrap.aes_key_wrap, wrapping, data)
        if operation == "unwrap":
            call = partial(keywrap.aes_key_unwrap, wrapping, keywrap.aes_key_wrap(wrapping, data))
        per_op = f"one RFC 3394 {operation} of block_size bytes"
        return PythonOperation(call, {"key": len(wrapping)}, {**attributes, "per_op": per_op})
    if operation in ("seal", "open") or alg.name == "ChaCha20-Poly1305":
        aead = _aead(alg, key)
        sealing = operation in ("seal", "encrypt")
        call = partial(aead.encrypt, NONCE, data, None) if sealing else \
            partial(aead.decrypt, NONCE, aead.encrypt(NONCE, data, None), None)
        return PythonOperation(call, {"key": len(key), "tag": 16},
                               {**attributes, "per_op": WHOLE_MESSAGE})
    ctxs = _contexts(alg, key, operation == "encrypt")
    return PythonOperation(_update_into(ctxs, data), {"key": len(key)},
                           {**attributes, "per_op": STREAM_UPDATE})


def _update_into(ctxs: list[CipherContext], data: bytes) -> Callable[[], object]:
    """One in-place-like update per context into preallocated buffers (no allocation)."""
    out = [bytearray(len(data) + 16) for _ in ctxs]  # update_into wants len + block - 1
    if len(ctxs) == 1:
        return partial(ctxs[0].update_into, data, out[0])
    first, second = ctxs
    middle = memoryview(out[0])[:len(data)]

    def cascade() -> int:
        first.update_into(data, out[0])
        return second.update_into(middle, out[1])

    return cascade


def _check_size(alg: Algorithm, size: int) -> None:
    problem = size_problem(alg, size)
    if problem:
        raise NotOfferedError(problem)

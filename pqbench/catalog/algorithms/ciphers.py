"""Symmetric ciphers, AEADs and key wrap: key bits, and what those bits buy.

Every row carries three numbers so a table answers "what does a 512-bit key cost, and what
does it buy":

* ``key_bits``: secret bits the key holds (parity bits excluded, both XTS halves included).
* ``security_bits``: log2 of the cheapest known classical attack on the key (time).
* ``quantum_security_bits``: the same against a quantum attacker. For a single cipher this is
  Grover's exhaustive key search, about 2^(k/2) cipher calls (Grover 1996). It is a
  generous figure for the attacker: Grover parallelises badly (NIST PQC call for proposals
  2016, section 4.A.5, MAXDEPTH), which is why NIST still files AES-128 as category 1.

The cases where key bits and security bits differ, reasoned out:

* AES-k-XTS (IEEE 1619-2018, NIST SP 800-38E) has a 2k-bit key: one AES-k key encrypts,
  the other only makes the tweak. The security proof of XEX/XTS (Rogaway 2004; Liskov,
  Rivest, Wagner 2002) reduces it to the strength of AES-k, and no standard credits the
  tweak key with anything more, so AES-256-XTS, the 512-bit FileVault/APFS key, is recorded
  as 256 classical and 128 quantum bits; AES-128-XTS (a 256-bit key) as 128 and 64. This is
  the conservative, documented figure, not a claim that a 2^k attack recovering both keys
  is known. XTS is also unauthenticated and deterministic per 16-byte block and tweak;
  those limits do not move with key length.
* A cascade of two independent AES-256-CTR ciphers (512 secret bits) falls to
  meet-in-the-middle (Diffie-Hellman 1977; Merkle-Hellman 1981): with one known plaintext
  block, tabulate the keystream of every K1 and match C xor P xor keystream(K2) against
  it: about 2^257 cipher calls (and 2^256 words of memory), so 256 classical bits, one
  more than AES-256 alone. Quantumly, claw finding (Brassard-Hoyer-Tapp 1998; applied to
  double encryption by Kaplan 2014, "Quantum attacks against iterated block ciphers")
  recovers the keys in about 2^(2k/3) = 2^171 queries, so 170 bits: against Grover this
  cascade buys about 42 bits over AES-256 (128), not the 128 a "512-bit key" suggests.
* 3DES (DES-EDE3, NIST SP 800-67 Rev. 2) has 168 key bits; meet-in-the-middle cuts it to
  112 (SP 800-57 Part 1 Rev. 5, Table 2). Quantumly, Grover over the 112 bits of K2, K3
  against a 2^56-entry table of K1 costs about 2^56 (Kaplan 2014), with quantum-accessible
  memory; without it, Grover over all 168 bits costs 2^84. The lower figure is recorded.
  Its 64-bit block also limits data per key (Sweet32, 2016); NIST disallows it after 2023.
* AES key wrap (RFC 3394, NIST SP 800-38F) has the strength of its AES key.

Each record names the OpenSSL EVP cipher (`evp`) when libcrypto has one, so native loops
can offer the same rows; the cascade has no EVP name.
"""

from __future__ import annotations

from pqbench.catalog.algorithms.base import Algorithm, security_attributes

#: `security_attributes` lives in `base`, for every kind; kept importable from here.
__all__ = ["ALGORITHMS", "security_attributes", "size_problem"]

STREAM_OPERATIONS = ("encrypt", "decrypt")
#: One whole AEAD message per op (fresh context, nonce, 16-byte tag), measured on request.
MESSAGE_OPERATIONS = ("seal", "open")
WRAP_OPERATIONS = ("wrap", "unwrap")


def _cipher(name: str, aliases: tuple[str, ...], *, evp: str | None, mode: str,
            key_bits: int, security: int, quantum: int, aead: bool = False,
            operations: tuple[str, ...] = STREAM_OPERATIONS) -> Algorithm:
    params: tuple[tuple[str, object], ...] = (
        ("mode", mode), ("key_bits", key_bits), ("security_bits", security),
        ("quantum_security_bits", quantum), ("aead", aead))
    if evp:
        params = (("evp", evp), *params)
    return Algorithm(name, "cipher", name.split("-")[0], aliases, operations,
                     optional_operations=MESSAGE_OPERATIONS if aead else (),
                     classical_bits=security, params=params)


ALGORITHMS = (
    _cipher("AES-128-GCM", ("aes128gcm",), evp="AES-128-GCM", mode="GCM", key_bits=128,
            security=128, quantum=64, aead=True),
    _cipher("AES-256-GCM", ("aes256gcm",), evp="AES-256-GCM", mode="GCM", key_bits=256,
            security=256, quantum=128, aead=True),
    _cipher("AES-128-CTR", ("aes128ctr",), evp="AES-128-CTR", mode="CTR", key_bits=128,
            security=128, quantum=64),
    _cipher("AES-256-CTR", ("aes256ctr",), evp="AES-256-CTR", mode="CTR", key_bits=256,
            security=256, quantum=128),
    # The cipher `openssl speed` users type first (`openssl speed -evp aes-256-cbc`).
    _cipher("AES-128-CBC", ("aes128cbc",), evp="AES-128-CBC", mode="CBC", key_bits=128,
            security=128, quantum=64),
    _cipher("AES-256-CBC", ("aes256cbc",), evp="AES-256-CBC", mode="CBC", key_bits=256,
            security=256, quantum=128),
    _cipher("AES-128-XTS", ("aes128xts",), evp="AES-128-XTS", mode="XTS", key_bits=256,
            security=128, quantum=64),
    _cipher("AES-256-XTS", ("aes256xts", "filevault", "apfs"), evp="AES-256-XTS", mode="XTS",
            key_bits=512, security=256, quantum=128),
    _cipher("AES-256-CTR-CASCADE", ("aes256ctrx2", "aes256ctrcascade", "cascade"), evp=None,
            mode="CTR-CASCADE", key_bits=512, security=256, quantum=170),
    _cipher("ChaCha20-Poly1305", ("chacha20poly1305", "chacha20"), evp="ChaCha20-Poly1305",
            mode="AEAD", key_bits=256, security=256, quantum=128, aead=True),
    _cipher("DES-EDE3-CBC", ("3des", "desede3", "des-ede3", "tripledes", "tdea"),
            evp="DES-EDE3-CBC", mode="CBC", key_bits=168, security=112, quantum=56),
    _cipher("AES-256-KW", ("aes256kw", "aeskeywrap", "keywrap", "id-aes256-wrap", "rfc3394"),
            evp="id-aes256-wrap", mode="KW", key_bits=256, security=256, quantum=128,
            operations=WRAP_OPERATIONS),
)


def size_problem(alg: Algorithm, size: int) -> str | None:
    """Why a cipher cannot take `size` bytes per operation, or None: CBC works on whole
    blocks (16 bytes for AES, 8 for 3DES; no padding is timed), XTS needs one AES block per
    data unit (IEEE 1619), key wrap a multiple of 8 bytes, at least 16 (RFC 3394)."""
    mode = alg.param("mode")
    if mode == "XTS" and size < 16:
        return "XTS needs at least 16 bytes per data unit (IEEE 1619)"
    if mode == "CBC":
        block = 8 if alg.name == "DES-EDE3-CBC" else 16
        if size % block:
            return f"{alg.name} works on whole {block}-byte blocks (no padding is timed)"
    if mode == "KW" and (size < 16 or size % 8):
        return "RFC 3394 wraps a multiple of 8 bytes, at least 16"
    return None

"""cryptography's key classes per algorithm: one table for timing (`pyca`) and for its
known-answer checks (`pyca_kat`)."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, x448, x25519

# cryptography 50 exposes these classes (ML-KEM-512 is not among them). Older releases (a
# `pip:cryptography==...` build of `pqbench bisect`) lack the modules: the tables are then
# empty and `pyca` answers "does not expose" for these algorithms.
MLKEM: dict[str, Any] = {}
#: ML-DSA parameter set -> (private key class, public key class).
MLDSA: dict[str, tuple[Any, Any]] = {}
try:
    from cryptography.hazmat.primitives.asymmetric import mldsa, mlkem
except ImportError:
    pass
else:
    MLKEM.update({"ML-KEM-768": mlkem.MLKEM768PrivateKey,
                  "ML-KEM-1024": mlkem.MLKEM1024PrivateKey})
    MLDSA.update({"ML-DSA-44": (mldsa.MLDSA44PrivateKey, mldsa.MLDSA44PublicKey),
                  "ML-DSA-65": (mldsa.MLDSA65PrivateKey, mldsa.MLDSA65PublicKey),
                  "ML-DSA-87": (mldsa.MLDSA87PrivateKey, mldsa.MLDSA87PublicKey)})
#: The algorithms' `curve` parameter -> cryptography's curve class.
CURVES: dict[str, type[ec.EllipticCurve]] = {
    "secp256r1": ec.SECP256R1, "secp384r1": ec.SECP384R1, "secp521r1": ec.SECP521R1,
}
EDDSA: dict[str, tuple[Any, Any]] = {
    "Ed25519": (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey),
    "Ed448": (ed448.Ed448PrivateKey, ed448.Ed448PublicKey),
}
XDH: dict[str, tuple[Any, Any]] = {
    "X25519": (x25519.X25519PrivateKey, x25519.X25519PublicKey),
    "X448": (x448.X448PrivateKey, x448.X448PublicKey),
}
#: The algorithms' `hash` parameter -> cryptography's hash class.
HASHES: dict[str, Any] = {"SHA256": hashes.SHA256, "SHA384": hashes.SHA384}

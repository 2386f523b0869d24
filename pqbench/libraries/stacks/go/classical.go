package main

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
)

// scalarSize is the size of an X25519 private key (RFC 7748) and of a P-256 private scalar
// (SEC 1 section 2.3.6, big-endian).
const scalarSize = 32

// agreement serves X25519 (RFC 7748) and ECDH over P-256 (SEC 1) from crypto/ecdh. Derive
// decodes the peer's public key each time, as a handshake does with a received share.
func agreement(name string, curve ecdh.Curve, publicSize int) *algorithm {
	load := func(secret []byte) (secretKey, []byte, error) {
		if len(secret) != scalarSize {
			return nil, nil, wrongLength(name+" private key", len(secret), scalarSize)
		}
		key, err := curve.NewPrivateKey(secret)
		if err != nil {
			return nil, nil, err
		}
		return key, key.PublicKey().Bytes(), nil
	}
	return &algorithm{
		name: name, kind: kindAgreement, library: "crypto/ecdh", features: []string{"seeded_keygen"},
		sizes: map[string]int{"public_key": publicSize, "secret_key": scalarSize, "shared_secret": 32},
		keygen: func(seed []byte) (secretKey, []byte, error) {
			if seed != nil {
				return load(seed)
			}
			key, err := curve.GenerateKey(rand.Reader)
			if err != nil {
				return nil, nil, err
			}
			return key, key.PublicKey().Bytes(), nil
		},
		importSecret: load,
		derive: func(key secretKey, peer []byte) ([]byte, error) {
			peerKey, err := curve.NewPublicKey(peer)
			if err != nil {
				return nil, err
			}
			return key.(*ecdh.PrivateKey).ECDH(peerKey)
		},
	}
}

func x25519Alg() *algorithm {
	a := agreement("X25519", ecdh.X25519(), 32)
	a.codePath = x25519Path()
	return a
}

func ecdhP256Alg() *algorithm {
	a := agreement("ECDH-P-256", ecdh.P256(), 65)
	a.codePath = p256Path()
	return a
}

// Ed25519 (RFC 8032, pure, no context) from crypto/ed25519. Its signatures are deterministic
// by definition (the protocol lists no feature for it), so `deterministic` changes nothing. Verification takes the encoded public
// key, which crypto/ed25519 decodes on every call.
func ed25519Alg() *algorithm {
	load := func(seed []byte) (secretKey, []byte, error) {
		if len(seed) != ed25519.SeedSize {
			return nil, nil, wrongLength("Ed25519 private key (seed)", len(seed), ed25519.SeedSize)
		}
		key := ed25519.NewKeyFromSeed(seed)
		return key, []byte(key.Public().(ed25519.PublicKey)), nil
	}
	return &algorithm{
		name: "Ed25519", kind: kindSignature, library: "crypto/ed25519", codePath: ed25519Path(),
		features: []string{"seeded_keygen"},
		sizes: map[string]int{"public_key": ed25519.PublicKeySize, "secret_key": ed25519.SeedSize,
			"signature": ed25519.SignatureSize},
		signing: "deterministic",
		keygen: func(seed []byte) (secretKey, []byte, error) {
			if seed != nil {
				return load(seed)
			}
			public, key, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return nil, nil, err
			}
			return key, []byte(public), nil
		},
		importSecret: load,
		sign: func(key secretKey, message, context []byte, _ bool) ([]byte, error) {
			if len(context) != 0 {
				return nil, notOfferedf("pure Ed25519 (RFC 8032) takes no context")
			}
			return ed25519.Sign(key.(ed25519.PrivateKey), message), nil
		},
		verify: func(public, message, context, signature []byte) (bool, error) {
			if len(public) != ed25519.PublicKeySize {
				return false, wrongLength("Ed25519 public key", len(public), ed25519.PublicKeySize)
			}
			if len(context) != 0 {
				return false, notOfferedf("pure Ed25519 (RFC 8032) takes no context")
			}
			return ed25519.Verify(public, message, signature), nil
		},
	}
}

// ECDSA over P-256 with SHA-256 (FIPS 186-5) from crypto/ecdsa; signatures are ASN.1 DER.
// Go signs hedged (a nonce from HMAC_DRBG over fresh randomness, the key and the hash);
// `deterministic` selects RFC 6979. Sign and verify hash the message inside the operation,
// and verification decodes the uncompressed public key each time.
func ecdsaP256Alg() *algorithm {
	load := func(secret []byte) (secretKey, []byte, error) {
		if len(secret) != scalarSize {
			return nil, nil, wrongLength("ECDSA-P-256 private scalar", len(secret), scalarSize)
		}
		key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), secret)
		if err != nil {
			return nil, nil, err
		}
		public, err := key.PublicKey.Bytes()
		return key, public, err
	}
	return &algorithm{
		name: "ECDSA-P-256", kind: kindSignature, library: "crypto/ecdsa", codePath: p256Path(),
		features: []string{"seeded_keygen", "deterministic_sign"},
		// A DER signature is at most 72 bytes; most are 70 or 71.
		sizes:   map[string]int{"public_key": 65, "secret_key": scalarSize, "signature": 72},
		signing: "hedged",
		keygen: func(seed []byte) (secretKey, []byte, error) {
			if seed != nil {
				return load(seed)
			}
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				return nil, nil, err
			}
			public, err := key.PublicKey.Bytes()
			return key, public, err
		},
		importSecret: load,
		sign: func(key secretKey, message, context []byte, deterministic bool) ([]byte, error) {
			if len(context) != 0 {
				return nil, notOfferedf("ECDSA takes no context")
			}
			digest := sha256.Sum256(message)
			if deterministic {
				return key.(*ecdsa.PrivateKey).Sign(nil, digest[:], crypto.SHA256)
			}
			return ecdsa.SignASN1(rand.Reader, key.(*ecdsa.PrivateKey), digest[:])
		},
		verify: func(public, message, context, signature []byte) (bool, error) {
			if len(context) != 0 {
				return false, notOfferedf("ECDSA takes no context")
			}
			pk, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), public)
			if err != nil {
				return false, err
			}
			digest := sha256.Sum256(message)
			return ecdsa.VerifyASN1(pk, digest[:], signature), nil
		},
	}
}

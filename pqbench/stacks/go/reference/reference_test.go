// Package reference is the Go-side reference for the worker's fidelity: `go test -bench`
// over the same operations the worker times, written the way the standard library's own
// benchmarks write them (crypto/mlkem's BenchmarkKeyGen/Encaps/Decaps, crypto/ecdh's
// BenchmarkECDH split into its parts) and sharing no code with the worker. A benchmark is
// named Benchmark<Family>/<algorithm>/<operation>, the worker's row names, so a script pairs
// each ns/op with the worker's rate for the same row.
//
//	go test -run '^$' -bench . -benchtime 1s ./reference
package reference

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/mlkem"
	"crypto/rand"
	"testing"

	"filippo.io/mldsa"
)

// sink consumes a byte of every result, as the worker's loop does.
var sink byte

func BenchmarkMLKEM(b *testing.B) {
	b.Run("ML-KEM-768/keygen", func(b *testing.B) {
		for b.Loop() {
			dk, err := mlkem.GenerateKey768()
			if err != nil {
				b.Fatal(err)
			}
			sink ^= dk.EncapsulationKey().Bytes()[0]
		}
	})
	b.Run("ML-KEM-768/encaps", func(b *testing.B) {
		dk, _ := mlkem.GenerateKey768()
		ekBytes := dk.EncapsulationKey().Bytes()
		for b.Loop() {
			ek, err := mlkem.NewEncapsulationKey768(ekBytes)
			if err != nil {
				b.Fatal(err)
			}
			shared, ct := ek.Encapsulate()
			sink ^= ct[0] ^ shared[0]
		}
	})
	b.Run("ML-KEM-768/decaps", func(b *testing.B) {
		dk, _ := mlkem.GenerateKey768()
		_, ct := dk.EncapsulationKey().Encapsulate()
		for b.Loop() {
			shared, err := dk.Decapsulate(ct)
			if err != nil {
				b.Fatal(err)
			}
			sink ^= shared[0]
		}
	})
	b.Run("ML-KEM-1024/keygen", func(b *testing.B) {
		for b.Loop() {
			dk, err := mlkem.GenerateKey1024()
			if err != nil {
				b.Fatal(err)
			}
			sink ^= dk.EncapsulationKey().Bytes()[0]
		}
	})
	b.Run("ML-KEM-1024/encaps", func(b *testing.B) {
		dk, _ := mlkem.GenerateKey1024()
		ekBytes := dk.EncapsulationKey().Bytes()
		for b.Loop() {
			ek, err := mlkem.NewEncapsulationKey1024(ekBytes)
			if err != nil {
				b.Fatal(err)
			}
			shared, ct := ek.Encapsulate()
			sink ^= ct[0] ^ shared[0]
		}
	})
	b.Run("ML-KEM-1024/decaps", func(b *testing.B) {
		dk, _ := mlkem.GenerateKey1024()
		_, ct := dk.EncapsulationKey().Encapsulate()
		for b.Loop() {
			shared, err := dk.Decapsulate(ct)
			if err != nil {
				b.Fatal(err)
			}
			sink ^= shared[0]
		}
	})
}

// BenchmarkMLDSA has key generation alone: filippo.io/mldsa's own benchmarks time signing
// and verification as the worker's rows do, but its BenchmarkKeygen makes the private key
// only, where a keygen row (here as for ML-KEM and ECDH) also derives and encodes the
// public key.
func BenchmarkMLDSA(b *testing.B) {
	b.Run("ML-DSA-65/keygen", func(b *testing.B) {
		for b.Loop() {
			key, err := mldsa.GenerateKey(mldsa.MLDSA65())
			if err != nil {
				b.Fatal(err)
			}
			sink ^= key.PublicKey().Bytes()[0]
		}
	})
}

func BenchmarkECDH(b *testing.B) {
	for _, c := range []struct {
		name  string
		curve ecdh.Curve
	}{{"X25519", ecdh.X25519()}, {"ECDH-P-256", ecdh.P256()}} {
		b.Run(c.name+"/keygen", func(b *testing.B) {
			for b.Loop() {
				key, err := c.curve.GenerateKey(rand.Reader)
				if err != nil {
					b.Fatal(err)
				}
				sink ^= key.PublicKey().Bytes()[0]
			}
		})
		b.Run(c.name+"/derive", func(b *testing.B) {
			key, _ := c.curve.GenerateKey(rand.Reader)
			peer, _ := c.curve.GenerateKey(rand.Reader)
			peerBytes := peer.PublicKey().Bytes()
			for b.Loop() {
				peerKey, err := c.curve.NewPublicKey(peerBytes)
				if err != nil {
					b.Fatal(err)
				}
				shared, err := key.ECDH(peerKey)
				if err != nil {
					b.Fatal(err)
				}
				sink ^= shared[0]
			}
		})
	}
}

func BenchmarkEd25519(b *testing.B) {
	public, private, _ := ed25519.GenerateKey(rand.Reader)
	messages := make([][]byte, 64)
	signatures := make([][]byte, 64)
	for i := range messages {
		messages[i] = make([]byte, 32)
		rand.Read(messages[i])
		signatures[i] = ed25519.Sign(private, messages[i])
	}
	b.Run("Ed25519/keygen", func(b *testing.B) {
		for b.Loop() {
			public, _, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			sink ^= public[0]
		}
	})
	b.Run("Ed25519/sign", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink ^= ed25519.Sign(private, messages[i])[63]
			i = (i + 1) % len(messages)
		}
	})
	b.Run("Ed25519/verify", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if !ed25519.Verify(public, messages[i], signatures[i]) {
				b.Fatal("a signature did not verify")
			}
			i = (i + 1) % len(messages)
		}
	})
}

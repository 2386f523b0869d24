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
	benchmarkMLKEM(b, "ML-KEM-768", mlkem.GenerateKey768, mlkem.NewEncapsulationKey768,
		func(dk *mlkem.DecapsulationKey768) byte { return dk.EncapsulationKey().Bytes()[0] })
	benchmarkMLKEM(b, "ML-KEM-1024", mlkem.GenerateKey1024, mlkem.NewEncapsulationKey1024,
		func(dk *mlkem.DecapsulationKey1024) byte { return dk.EncapsulationKey().Bytes()[0] })
}

// decapsulationKey and encapsulationKey are the methods crypto/mlkem gives the keys of each
// parameter set, whose types and functions it names per set (DecapsulationKey768, ...).
type decapsulationKey[EK encapsulationKey] interface {
	EncapsulationKey() EK
	Decapsulate(ciphertext []byte) (sharedKey []byte, err error)
}

type encapsulationKey interface {
	Bytes() []byte
	Encapsulate() (sharedKey, ciphertext []byte)
}

// benchmarkMLKEM times one parameter set. publicKeyByte is
// dk.EncapsulationKey().Bytes()[0], written per set and kept to one byte: so the compiler
// inlines both calls and keeps the key and its encoding on the stack, as a direct call in
// the loop does (through the type parameter both would move to the heap).
func benchmarkMLKEM[DK decapsulationKey[EK], EK encapsulationKey](b *testing.B, name string,
	generateKey func() (DK, error), newEncapsulationKey func([]byte) (EK, error),
	publicKeyByte func(DK) byte) {
	b.Run(name+"/keygen", func(b *testing.B) {
		for b.Loop() {
			dk, err := generateKey()
			if err != nil {
				b.Fatal(err)
			}
			sink ^= publicKeyByte(dk)
		}
	})
	b.Run(name+"/encaps", func(b *testing.B) {
		dk, _ := generateKey()
		ekBytes := dk.EncapsulationKey().Bytes()
		for b.Loop() {
			ek, err := newEncapsulationKey(ekBytes)
			if err != nil {
				b.Fatal(err)
			}
			shared, ct := ek.Encapsulate()
			sink ^= ct[0] ^ shared[0]
		}
	})
	b.Run(name+"/decaps", func(b *testing.B) {
		dk, _ := generateKey()
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

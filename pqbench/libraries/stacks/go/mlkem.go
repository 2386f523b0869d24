package main

import (
	"crypto/mlkem"
	"crypto/mlkem/mlkemtest"
	"crypto/rand"

	"github.com/cloudflare/circl/kem/mlkem/mlkem512"
)

// FIPS 203 sizes. The standard library keeps a decapsulation key as its 64-byte seed d||z
// (FIPS 203 section 7.1, ML-KEM.KeyGen_internal) and offers no import of the expanded
// 1632/2400/3168-byte dk.
const (
	mlkemSeedSize   = mlkem.SeedSize // 64: d || z
	mlkemRandomSize = 32             // m, FIPS 203 ML-KEM.Encaps_internal
)

func kemSizes(public, secret, ciphertext int) map[string]int {
	return map[string]int{"public_key": public, "secret_key": secret,
		"ciphertext": ciphertext, "shared_secret": mlkem.SharedKeySize}
}

// checkSeed refuses a keygen seed or import of the wrong size.
func checkSeed(what string, b []byte, size int) error {
	if len(b) != size {
		return wrongLength(what, len(b), size)
	}
	return nil
}

// stdlibDecapsulationKey and stdlibEncapsulationKey are the methods crypto/mlkem gives the
// keys of both its parameter sets, whose types it names per set (DecapsulationKey768, ...).
type stdlibDecapsulationKey interface {
	Decapsulate(ciphertext []byte) (sharedKey []byte, err error)
}

type stdlibEncapsulationKey interface {
	Encapsulate() (sharedKey, ciphertext []byte)
}

// stdlibMLKEM is one parameter set of crypto/mlkem: its name, sizes and the functions the
// standard library names per set.
type stdlibMLKEM[DK stdlibDecapsulationKey, EK stdlibEncapsulationKey] struct {
	name                       string
	publicSize, ciphertextSize int
	generateKey                func() (DK, error)
	newDecapsulationKey        func(seed []byte) (DK, error)
	newEncapsulationKey        func(encapsulationKey []byte) (EK, error)
	// publicKey is dk.EncapsulationKey().Bytes(), written per set so that the compiler
	// inlines it and keeps the EncapsulationKey it makes on the stack, as a direct call does.
	publicKey func(dk DK) []byte
	// derandomizedEncapsulate is crypto/mlkem/mlkemtest's Encapsulate with the caller's m.
	derandomizedEncapsulate func(ek EK, random []byte) (sharedKey, ciphertext []byte, err error)
}

func mlkem768Alg() *algorithm {
	return stdlibMLKEMAlg(stdlibMLKEM[*mlkem.DecapsulationKey768, *mlkem.EncapsulationKey768]{
		name:                    "ML-KEM-768",
		publicSize:              mlkem.EncapsulationKeySize768,
		ciphertextSize:          mlkem.CiphertextSize768,
		generateKey:             mlkem.GenerateKey768,
		newDecapsulationKey:     mlkem.NewDecapsulationKey768,
		newEncapsulationKey:     mlkem.NewEncapsulationKey768,
		derandomizedEncapsulate: mlkemtest.Encapsulate768,
		publicKey: func(dk *mlkem.DecapsulationKey768) []byte {
			return dk.EncapsulationKey().Bytes()
		},
	})
}

func mlkem1024Alg() *algorithm {
	return stdlibMLKEMAlg(stdlibMLKEM[*mlkem.DecapsulationKey1024, *mlkem.EncapsulationKey1024]{
		name:                    "ML-KEM-1024",
		publicSize:              mlkem.EncapsulationKeySize1024,
		ciphertextSize:          mlkem.CiphertextSize1024,
		generateKey:             mlkem.GenerateKey1024,
		newDecapsulationKey:     mlkem.NewDecapsulationKey1024,
		newEncapsulationKey:     mlkem.NewEncapsulationKey1024,
		derandomizedEncapsulate: mlkemtest.Encapsulate1024,
		publicKey: func(dk *mlkem.DecapsulationKey1024) []byte {
			return dk.EncapsulationKey().Bytes()
		},
	})
}

// ML-KEM-768 and ML-KEM-1024 from crypto/mlkem. Encapsulation decodes the encapsulation key
// each time (with its FIPS 203 section 7.2 modulus check), as a TLS server does with a
// client's key share and as Go's own BenchmarkEncaps does; decapsulation uses the parsed key.
func stdlibMLKEMAlg[DK stdlibDecapsulationKey, EK stdlibEncapsulationKey](set stdlibMLKEM[DK, EK]) *algorithm {
	return &algorithm{
		name: set.name, kind: kindKEM, library: "crypto/mlkem", codePath: stdlibMLKEMPath(),
		features: []string{"seeded_keygen", "derandomized_encaps"},
		sizes:    kemSizes(set.publicSize, mlkemSeedSize, set.ciphertextSize),
		keygen: func(seed []byte) (secretKey, []byte, error) {
			var dk DK
			var err error
			if seed == nil {
				dk, err = set.generateKey()
			} else if err = checkSeed("seed (d || z)", seed, mlkemSeedSize); err == nil {
				dk, err = set.newDecapsulationKey(seed)
			}
			if err != nil {
				return nil, nil, err
			}
			return dk, set.publicKey(dk), nil
		},
		importSecret: func(secret []byte) (secretKey, []byte, error) {
			if len(secret) != mlkemSeedSize {
				return nil, nil, notOfferedf("crypto/mlkem imports only the 64-byte seed d || z, not a %d-byte key", len(secret))
			}
			dk, err := set.newDecapsulationKey(secret)
			if err != nil {
				return nil, nil, err
			}
			return dk, set.publicKey(dk), nil
		},
		encaps: func(public, random []byte) ([]byte, []byte, error) {
			ek, err := set.newEncapsulationKey(public)
			if err != nil {
				return nil, nil, err
			}
			if random == nil {
				shared, ct := ek.Encapsulate()
				return ct, shared, nil
			}
			if err := checkSeed("random (m)", random, mlkemRandomSize); err != nil {
				return nil, nil, err
			}
			shared, ct, err := set.derandomizedEncapsulate(ek, random)
			return ct, shared, err
		},
		decaps: func(key secretKey, ciphertext []byte) ([]byte, error) {
			return key.(DK).Decapsulate(ciphertext)
		},
	}
}

// ML-KEM-512, which the standard library does not offer, from CIRCL. CIRCL keeps the
// expanded FIPS 203 dk and imports it as well as the seed; its functions panic on wrong
// sizes, so every size is checked first.
func mlkem512Alg() *algorithm {
	publicOf := func(sk *mlkem512.PrivateKey) []byte {
		public := make([]byte, mlkem512.PublicKeySize)
		sk.Public().(*mlkem512.PublicKey).Pack(public)
		return public
	}
	return &algorithm{
		name: "ML-KEM-512", kind: kindKEM, library: "github.com/cloudflare/circl",
		codePath: circlMLKEMPath(),
		features: []string{"seeded_keygen", "derandomized_encaps", "import_expanded"},
		sizes:    kemSizes(mlkem512.PublicKeySize, mlkem512.PrivateKeySize, mlkem512.CiphertextSize),
		keygen: func(seed []byte) (secretKey, []byte, error) {
			var sk *mlkem512.PrivateKey
			if seed == nil {
				_, generated, err := mlkem512.GenerateKeyPair(rand.Reader)
				if err != nil {
					return nil, nil, err
				}
				sk = generated
			} else {
				if err := checkSeed("seed (d || z)", seed, mlkem512.KeySeedSize); err != nil {
					return nil, nil, err
				}
				_, sk = mlkem512.NewKeyFromSeed(seed)
			}
			return sk, publicOf(sk), nil
		},
		importSecret: func(secret []byte) (secretKey, []byte, error) {
			switch len(secret) {
			case mlkem512.KeySeedSize:
				_, sk := mlkem512.NewKeyFromSeed(secret)
				return sk, publicOf(sk), nil
			case mlkem512.PrivateKeySize:
				var sk mlkem512.PrivateKey
				if err := sk.Unpack(secret); err != nil {
					return nil, nil, err
				}
				return &sk, publicOf(&sk), nil
			}
			return nil, nil, wrongLength("ML-KEM-512 secret key (seed or expanded dk)", len(secret),
				mlkem512.KeySeedSize, mlkem512.PrivateKeySize)
		},
		encaps: func(public, random []byte) ([]byte, []byte, error) {
			if len(public) != mlkem512.PublicKeySize {
				return nil, nil, wrongLength("ML-KEM-512 public key", len(public), mlkem512.PublicKeySize)
			}
			if random != nil {
				if err := checkSeed("random (m)", random, mlkem512.EncapsulationSeedSize); err != nil {
					return nil, nil, err
				}
			}
			var pk mlkem512.PublicKey
			if err := pk.Unpack(public); err != nil {
				return nil, nil, err
			}
			ct := make([]byte, mlkem512.CiphertextSize)
			shared := make([]byte, mlkem512.SharedKeySize)
			pk.EncapsulateTo(ct, shared, random)
			return ct, shared, nil
		},
		decaps: func(key secretKey, ciphertext []byte) ([]byte, error) {
			if len(ciphertext) != mlkem512.CiphertextSize {
				return nil, wrongLength("ML-KEM-512 ciphertext", len(ciphertext), mlkem512.CiphertextSize)
			}
			shared := make([]byte, mlkem512.SharedKeySize)
			key.(*mlkem512.PrivateKey).DecapsulateTo(shared, ciphertext)
			return shared, nil
		},
	}
}

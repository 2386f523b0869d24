package main

import (
	"filippo.io/mldsa"
)

// ML-DSA (FIPS 204), which Go 1.26's standard library does not export, from
// filippo.io/mldsa: the standard library's own implementation (crypto/internal/fips140/mldsa)
// extracted as a module, and on Go 1.27 a thin alias of the new crypto/mldsa. A private key
// is its 32-byte seed xi (FIPS 204 ML-DSA.KeyGen_internal); the library imports no expanded
// sk. Sign is hedged (FIPS 204 section 3.4: fresh rnd from crypto/rand); SignDeterministic is
// the rnd = 0^32 variant. Verification decodes the public key each time, as a verifier that
// receives it in a certificate or handshake does.
func mldsaAlg(name string) *algorithm {
	var params mldsa.Parameters
	switch name {
	case "ML-DSA-44":
		params = mldsa.MLDSA44()
	case "ML-DSA-65":
		params = mldsa.MLDSA65()
	default:
		params = mldsa.MLDSA87()
	}
	generate := func(seed []byte) (secretKey, []byte, error) {
		var sk *mldsa.PrivateKey
		var err error
		if seed == nil {
			sk, err = mldsa.GenerateKey(params)
		} else if err = checkSeed("seed (xi)", seed, mldsa.PrivateKeySize); err == nil {
			sk, err = mldsa.NewPrivateKey(params, seed)
		}
		if err != nil {
			return nil, nil, err
		}
		return sk, sk.PublicKey().Bytes(), nil
	}
	return &algorithm{
		name: name, kind: kindSignature, library: mldsaLibrary, codePath: stdlibKeccakPath(),
		features: []string{"seeded_keygen", "deterministic_sign"},
		sizes: map[string]int{"public_key": params.PublicKeySize(), "secret_key": mldsa.PrivateKeySize,
			"signature": params.SignatureSize()},
		signing: "hedged",
		keygen:  generate,
		importSecret: func(secret []byte) (secretKey, []byte, error) {
			if len(secret) != mldsa.PrivateKeySize {
				return nil, nil, notOfferedf("filippo.io/mldsa imports only the 32-byte seed xi, not a %d-byte key", len(secret))
			}
			return generate(secret)
		},
		sign: func(key secretKey, message, context []byte, deterministic bool) ([]byte, error) {
			opts := &mldsa.Options{Context: string(context)}
			sk := key.(*mldsa.PrivateKey)
			if deterministic {
				return sk.SignDeterministic(message, opts)
			}
			return sk.Sign(nil, message, opts)
		},
		verify: func(public, message, context, signature []byte) (bool, error) {
			pk, err := mldsa.NewPublicKey(params, public)
			if err != nil {
				return false, err
			}
			return mldsa.Verify(pk, message, signature, &mldsa.Options{Context: string(context)}) == nil, nil
		},
	}
}

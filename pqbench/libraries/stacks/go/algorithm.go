package main

import "fmt"

// kind is the protocol's family of an algorithm; it fixes which operations exist.
type kind string

const (
	kindKEM       kind = "kem"
	kindSignature kind = "signature"
	kindAgreement kind = "agreement"
)

// operationsOf lists the timed operations of each kind, in the protocol's order.
var operationsOf = map[kind][]string{
	kindKEM:       {"keygen", "encaps", "decaps"},
	kindSignature: {"keygen", "sign", "verify"},
	kindAgreement: {"keygen", "derive"},
}

// secretKey is a secret key as the library holds it (a parsed object). It never leaves the
// worker: the controller refers to it by a handle.
type secretKey any

// algorithm is one algorithm as this worker serves it. The same functions answer the
// correctness requests and run inside the timed loops, so the code that passes pqbench's
// known-answer and interoperability checks is the code that is timed. A nil function is an
// operation the library does not offer.
type algorithm struct {
	name     string
	kind     kind
	library  string   // the import path that serves it (the protocol's library_of)
	codePath string   // the CPU code path the library takes here
	features []string // the protocol's optional features this library allows
	sizes    map[string]int
	// signing is how `sign` without "deterministic" signs: hedged, randomized or
	// deterministic (the protocol's attributes.signing).
	signing string

	// keygen makes a key pair, from seed when seed is not nil (only where the algorithm
	// lists seeded_keygen), and returns the public key in its standard encoding.
	keygen func(seed []byte) (secretKey, []byte, error)
	// importSecret loads a secret key in the library's own encoding.
	importSecret func(secret []byte) (secretKey, []byte, error)
	encaps       func(public, random []byte) (ciphertext, shared []byte, err error)
	decaps       func(key secretKey, ciphertext []byte) ([]byte, error)
	sign         func(key secretKey, message, context []byte, deterministic bool) ([]byte, error)
	// verify answers false for a wrong or malformed signature and an error for a public key
	// that cannot be decoded.
	verify func(public, message, context, signature []byte) (bool, error)
	derive func(key secretKey, peer []byte) ([]byte, error)
}

func (a *algorithm) has(feature string) bool {
	for _, f := range a.features {
		if f == feature {
			return true
		}
	}
	return false
}

// notOfferedError is a request this library cannot serve: the protocol's problem reply.
type notOfferedError struct{ reason string }

func (e *notOfferedError) Error() string { return e.reason }

func notOfferedf(format string, args ...any) error {
	return &notOfferedError{reason: fmt.Sprintf(format, args...)}
}

// wrongLength is the error for a byte string of the wrong size.
func wrongLength(what string, got int, want ...int) error {
	if len(want) == 1 {
		return fmt.Errorf("%s must be %d bytes, got %d", what, want[0], got)
	}
	return fmt.Errorf("%s must be one of %v bytes, got %d", what, want, got)
}

// algorithms lists every algorithm this worker serves, in pqbench's canonical names.
func algorithms() []*algorithm {
	return []*algorithm{
		mlkem512Alg(), mlkem768Alg(), mlkem1024Alg(),
		mldsaAlg("ML-DSA-44"), mldsaAlg("ML-DSA-65"), mldsaAlg("ML-DSA-87"),
		x25519Alg(), ecdhP256Alg(), ed25519Alg(), ecdsaP256Alg(),
	}
}

//go:build go1.27 && !fips140v1.0

package main

// mldsaLibrary: from Go 1.27 filippo.io/mldsa is a set of aliases of crypto/mldsa.
const mldsaLibrary = "crypto/mldsa"

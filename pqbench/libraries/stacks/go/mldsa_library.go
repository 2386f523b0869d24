//go:build !go1.27 || fips140v1.0

package main

// mldsaLibrary: before Go 1.27 filippo.io/mldsa carries its own copy of the standard
// library's ML-DSA code.
const mldsaLibrary = "filippo.io/mldsa"

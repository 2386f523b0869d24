package main

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// The code path each library takes on this machine, read from the same build facts and CPU
// flags the libraries themselves dispatch on (an assembly file compiled in only on amd64
// without the purego tag; CIRCL's AVX2 routines behind golang.org/x/sys/cpu's HasAVX2).

func amd64Assembly() bool { return runtime.GOARCH == "amd64" && !purego }

// elsewhere is the answer off amd64: portable Go under purego; otherwise other
// architectures have assembly of their own that this worker does not inspect.
func elsewhere() string {
	if purego {
		return "portable Go"
	}
	return "unknown"
}

// stdlibKeccakPath is the path of code built on crypto/sha3: portable Go arithmetic whose
// Keccak-f[1600] permutation is amd64 assembly (crypto/internal/fips140/sha3).
func stdlibKeccakPath() string {
	if amd64Assembly() {
		return "portable Go; Keccak in amd64 assembly"
	}
	return elsewhere()
}

// stdlibMLKEMPath: crypto/mlkem's arithmetic is pure Go on every architecture.
func stdlibMLKEMPath() string { return stdlibKeccakPath() }

// circlMLKEMPath: CIRCL's Kyber NTT and 4-way Keccak are AVX2 assembly, chosen at run time.
func circlMLKEMPath() string {
	if amd64Assembly() && cpu.X86.HasAVX2 {
		return "avx2"
	}
	if runtime.GOARCH == "amd64" || purego {
		return "portable Go"
	}
	return elsewhere()
}

// x25519Path: crypto/ecdh's X25519 multiplies field elements in amd64 assembly
// (crypto/internal/fips140/edwards25519/field).
func x25519Path() string {
	if amd64Assembly() {
		return "amd64 assembly (field arithmetic)"
	}
	return elsewhere()
}

// ed25519Path: the same field assembly, and SHA-512 in AVX2 assembly where the CPU has
// AVX, AVX2 and BMI2 (crypto/internal/fips140/sha512).
func ed25519Path() string {
	if !amd64Assembly() {
		return elsewhere()
	}
	if cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasBMI2 {
		return "amd64 assembly (field arithmetic; SHA-512 avx2)"
	}
	return "amd64 assembly (field arithmetic; SHA-512 amd64)"
}

// p256Path: crypto/internal/fips140/nistec's P-256 is amd64 assembly.
func p256Path() string {
	if amd64Assembly() {
		return "amd64 assembly (P-256)"
	}
	return elsewhere()
}

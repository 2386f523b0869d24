/*
 * Symbols that liboqs-python 0.16 needs but liboqs 0.13.0 lacks.
 *
 * Linked into the shared liboqs that pqbench builds from the crates.io oqs-sys
 * sources (see build.py); the liboqs source tree itself is never patched.
 * Each function mirrors the liboqs 0.14 implementation, written only against
 * the public 0.13 API so that the struct layout is the library's own.
 */
#include <stdbool.h>
#include <stddef.h>

#include <oqs/oqs.h>

/*
 * liboqs 0.14, src/sig/sig.c: whether the named signature scheme accepts a
 * context string (FIPS 204 section 5.2 for ML-DSA, FIPS 205 section 10.2 for
 * SLH-DSA). Unknown or disabled names answer false.
 */
OQS_API bool OQS_SIG_supports_ctx_str(const char *alg_name) {
	bool supported = false;
	OQS_SIG *sig = OQS_SIG_new(alg_name);
	if (sig != NULL) {
		supported = sig->sig_with_ctx_support;
	}
	OQS_SIG_free(sig);
	return supported;
}

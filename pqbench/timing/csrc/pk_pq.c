/*
 * The public-key operations whose EVP calls changed across OpenSSL 3.x: the one-shot
 * signatures (EdDSA, ML-DSA) and ML-KEM encapsulation (OpenSSL >= 3.5), each mirroring
 * one loop of apps/speed.c (see native.h).
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "native.h"

/*
 * Which signing API the loop uses depends on the libcrypto that is loaded, not on the
 * headers pqbench was built with (Debian 12 headers are 3.0; a 3.5 runtime is one
 * LD_LIBRARY_PATH or one OS upgrade away):
 *
 * - OpenSSL 3.4 added the message-signing API. Where the loaded library has it, a ctx is
 *   initialised once with EVP_PKEY_sign_message_init (or verify_message_init) and each
 *   op is one EVP_PKEY_sign (EVP_PKEY_verify), as 3.5's `openssl speed` times ML-DSA.
 * - OpenSSL 3.0-3.3 lack it; there each op is one EVP_DigestSign (EVP_DigestVerify) on
 *   an EVP_MD_CTX initialised once, as 3.0's `openssl speed` times EdDSA. OpenSSL 3.5
 *   refuses that reuse ("final error" on the second call), hence the switch.
 *
 * Both time exactly one signature (or verification) per op, no initialisation, so rows
 * from the two kinds of library stay comparable. The message API is looked up with
 * dlsym so that a build against 3.0 headers still uses it on a 3.4+ library, and a
 * build against 3.4+ headers still loads on a 3.0 library.
 */
typedef int (*message_init_fn)(EVP_PKEY_CTX *ctx, EVP_SIGNATURE *algo,
                               const OSSL_PARAM params[]);

#if OPENSSL_VERSION_NUMBER >= 0x30400000L
_Static_assert(__builtin_types_compatible_p(message_init_fn,
                                            __typeof__(&EVP_PKEY_sign_message_init)) &&
                   __builtin_types_compatible_p(message_init_fn,
                                                __typeof__(&EVP_PKEY_verify_message_init)),
               "message_init_fn must match OpenSSL's prototypes");
#endif

typedef struct {
    message_init_fn sign_init, verify_init; /* both NULL: use EVP_DigestSign/Verify */
} sig_api;

static int runtime_at_least(unsigned int major, unsigned int minor)
{
    return OPENSSL_version_major() > major ||
           (OPENSSL_version_major() == major && OPENSSL_version_minor() >= minor);
}

/* The message API of the loaded libcrypto, found next to a function we link against. */
static sig_api sig_api_of_loaded_library(void)
{
    sig_api api = {NULL, NULL};
    Dl_info info;
    void *lib;

    if (!runtime_at_least(3, 4) ||
        dladdr((void *)(uintptr_t)&EVP_PKEY_CTX_new_from_pkey, &info) == 0 ||
        info.dli_fname == NULL || (lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)) == NULL)
        return api;
    *(void **)&api.sign_init = dlsym(lib, "EVP_PKEY_sign_message_init");
    *(void **)&api.verify_init = dlsym(lib, "EVP_PKEY_verify_message_init");
    dlclose(lib); /* only drops the reference RTLD_NOLOAD took; we link libcrypto */
    if (api.sign_init == NULL || api.verify_init == NULL)
        api.sign_init = api.verify_init = NULL;
    return api;
}

/* --- the timed ops ---------------------------------------------------------------- */

/* 3.0's EdDSA_sign_loop: one-shot EVP_DigestSign on an initialised EVP_MD_CTX. */
static int op_digest_sign(void *c)
{
    pk_bench *b = c;
    b->out_len = b->out_cap;
    return EVP_DigestSign(b->md, b->out, &b->out_len, b->in, b->in_len) == 1;
}

/* 3.0's EdDSA_verify_loop: one-shot EVP_DigestVerify. */
static int op_digest_verify(void *c)
{
    pk_bench *b = c;
    return EVP_DigestVerify(b->md, b->aux, b->aux_len, b->in, b->in_len) == 1;
}

/* speed (3.5+) KEM_encaps_loop: EVP_PKEY_encapsulate on an encapsulate-initialised ctx. */
static int op_pkey_encaps(void *c)
{
    pk_bench *b = c;
    size_t ct_len = b->out_cap, ss_len = b->aux2_cap;
    return EVP_PKEY_encapsulate(b->ctx, b->out, &ct_len, b->aux2, &ss_len) > 0;
}

/* speed (3.5+) KEM_decaps_loop: EVP_PKEY_decapsulate of a prepared ciphertext. */
static int op_pkey_decaps(void *c)
{
    pk_bench *b = c;
    size_t ss_len = b->aux2_cap;
    return EVP_PKEY_decapsulate(b->ctx, b->aux2, &ss_len, b->aux, b->aux_len) > 0;
}

/* --- signatures: preparation and correctness check ---------------------------------- */

/* A fresh context initialised for signing (sign=1) or verifying, in the API `api` says. */
static int sig_begin(pk_bench *b, const sig_api *api, int sign)
{
    if (api->sign_init != NULL) {
        EVP_PKEY_CTX_free(b->ctx);
        b->ctx = EVP_PKEY_CTX_new_from_pkey(NULL, b->key, NULL);
        return b->ctx != NULL &&
               (sign ? api->sign_init : api->verify_init)(b->ctx, b->sigalg, NULL) > 0;
    }
    if (b->md == NULL && (b->md = EVP_MD_CTX_new()) == NULL)
        return 0;
    if (sign)
        return EVP_DigestSignInit_ex(b->md, NULL, NULL, NULL, NULL, b->key, NULL) == 1;
    return EVP_DigestVerifyInit_ex(b->md, NULL, NULL, NULL, NULL, b->key, NULL) == 1;
}

/* 1 if the signature in aux verifies for the message in `in`, on a fresh context. */
static int sig_verifies(pk_bench *b, const sig_api *api)
{
    if (!sig_begin(b, api, 0))
        return -1;
    if (api->sign_init != NULL)
        return EVP_PKEY_verify(b->ctx, b->aux, b->aux_len, b->in, b->in_len) == 1;
    return EVP_DigestVerify(b->md, b->aux, b->aux_len, b->in, b->in_len) == 1;
}

/*
 * Sign once (the signature stays in aux for the verify loop); it must verify, and must
 * not verify once one bit of the message changed.
 */
static int sig_check(pk_bench *b, const sig_api *api, bench_error *e)
{
    int ok, rejected;

    b->aux_len = b->out_cap;
    if (!sig_begin(b, api, 1))
        return fail_ssl(e, "signature setup");
    ok = api->sign_init != NULL
             ? EVP_PKEY_sign(b->ctx, b->aux, &b->aux_len, b->in, b->in_len) > 0
             : EVP_DigestSign(b->md, b->aux, &b->aux_len, b->in, b->in_len) == 1;
    if (!ok)
        return fail_ssl(e, "signing for the correctness check");
    if ((ok = sig_verifies(b, api)) != 1)
        return ok < 0 || ERR_peek_error() ? fail_ssl(e, "signature correctness check")
                                          : fail(e, ERR_RUNTIME,
                                                 "%s: a fresh signature does not verify",
                                                 b->alg->name);
    b->in[0] ^= 1;
    rejected = sig_verifies(b, api) == 0;
    b->in[0] ^= 1;
    ERR_clear_error(); /* the refusal leaves its reason on the queue */
    if (!rejected)
        return fail(e, ERR_RUNTIME, "%s: a signature verifies for a changed message",
                    b->alg->name);
    return 1;
}

/*
 * EdDSA as `openssl speed ed25519` (20-byte message) and ML-DSA (32-byte message, as
 * pqbench's liboqs loops default to), pure signatures of the message itself: RFC 8032
 * PureEdDSA, FIPS 204 ML-DSA.Sign with an empty context string.
 */
int pk_prepare_oneshot_sig(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    sig_api api = sig_api_of_loaded_library();
    int sign = strcmp(op, "sign") == 0, verify = strcmp(op, "verify") == 0;

    b->in_len = b->alg->family == FAM_EDDSA ? 20 : 32;
    if (!pk_new_key(b, &b->key, e) || !pk_alloc_out(b, (size_t)EVP_PKEY_get_size(b->key), e))
        return 0;
    if (api.sign_init != NULL) {
        ERR_set_mark();
        b->sigalg = EVP_SIGNATURE_fetch(NULL, b->alg->keytype, NULL);
        ERR_pop_to_mark();
        if (b->sigalg == NULL)
            return fail(e, ERR_RUNTIME, "%s: libcrypto %s has no signature algorithm %s",
                        b->alg->name, OpenSSL_version(OPENSSL_VERSION), b->alg->keytype);
    }
    if (!sig_check(b, &api, e))
        return 0;
    if ((sign || verify) && !sig_begin(b, &api, sign))
        return fail_ssl(e, sign ? "signing setup" : "verification setup");
    if (api.sign_init != NULL)
        *fn = sign ? op_pkey_sign : verify ? op_pkey_verify : op_pkey_keygen;
    else
        *fn = sign ? op_digest_sign : verify ? op_digest_verify : op_pkey_keygen;
    return 1;
}

/* --- ML-KEM: preparation and correctness check -------------------------------------- */

/*
 * Encapsulate once (the ciphertext stays in aux for the decaps loop, the secret in `in`);
 * decapsulation must give the same secret, and a ciphertext with one bit changed must
 * decapsulate to a different one: FIPS 203's implicit rejection (ML-KEM.Decaps, 6.3)
 * returns a pseudorandom secret instead of failing.
 */
static int mlkem_check(pk_bench *b, EVP_PKEY_CTX *enc, EVP_PKEY_CTX *dec, size_t ss_len,
                       bench_error *e)
{
    size_t n = ss_len;
    int differs;

    b->aux_len = b->out_cap;
    if (EVP_PKEY_encapsulate(enc, b->aux, &b->aux_len, b->in, &n) <= 0 || n != ss_len ||
        EVP_PKEY_decapsulate(dec, b->aux2, &n, b->aux, b->aux_len) <= 0)
        return fail_ssl(e, "ML-KEM correctness check");
    if (n != ss_len || CRYPTO_memcmp(b->aux2, b->in, n) != 0)
        return fail(e, ERR_RUNTIME, "%s: decapsulated secret differs", b->alg->name);
    b->aux[0] ^= 1;
    differs = EVP_PKEY_decapsulate(dec, b->aux2, &n, b->aux, b->aux_len) > 0 &&
              n == ss_len && CRYPTO_memcmp(b->aux2, b->in, n) != 0;
    b->aux[0] ^= 1;
    if (!differs)
        return ERR_peek_error() ? fail_ssl(e, "ML-KEM implicit rejection check")
                                : fail(e, ERR_RUNTIME,
                                       "%s: a changed ciphertext gives the same secret",
                                       b->alg->name);
    return 1;
}

/*
 * ML-KEM through EVP_PKEY_encapsulate / EVP_PKEY_decapsulate (OpenSSL >= 3.5; the 3.0
 * API already declares both). The op keeps the ctx it needs and frees the other.
 */
int pk_prepare_mlkem(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    EVP_PKEY_CTX *enc = NULL, *dec = NULL;
    size_t ct_len = 0, ss_len = 0;
    int ok, encaps = strcmp(op, "encaps") == 0;

    if (!pk_new_key(b, &b->key, e))
        return 0;
    enc = EVP_PKEY_CTX_new_from_pkey(NULL, b->key, NULL);
    dec = EVP_PKEY_CTX_new_from_pkey(NULL, b->key, NULL);
    b->ctx = encaps ? enc : dec; /* owned by b from here on */
    ok = enc != NULL && dec != NULL && EVP_PKEY_encapsulate_init(enc, NULL) > 0 &&
         EVP_PKEY_decapsulate_init(dec, NULL) > 0 &&
         EVP_PKEY_encapsulate(enc, NULL, &ct_len, NULL, &ss_len) > 0;
    if (!ok)
        ok = fail_ssl(e, "ML-KEM setup");
    else if (ss_len == 0 || ss_len > sizeof(b->in) || ct_len == 0)
        ok = fail(e, ERR_RUNTIME, "%s: unexpected sizes ct=%zu ss=%zu", b->alg->name, ct_len,
                  ss_len);
    else if (!pk_alloc_out(b, ct_len, e))
        ok = 0;
    else if ((b->aux2 = OPENSSL_zalloc(ss_len)) == NULL)
        ok = fail(e, ERR_RUNTIME, "out of memory");
    else {
        b->aux2_cap = b->in_len = ss_len;
        ok = mlkem_check(b, enc, dec, ss_len, e);
    }
    EVP_PKEY_CTX_free(encaps ? dec : enc);
    if (!ok)
        return 0;
    if (strcmp(op, "decaps-reject") == 0) {
        /* Implicit rejection (FIPS 203, 6.3): the checked ciphertext, one bit changed. */
        b->aux[0] ^= 1;
        *fn = op_pkey_decaps;
        return 1;
    }
    *fn = encaps ? op_pkey_encaps : strcmp(op, "decaps") == 0 ? op_pkey_decaps : op_pkey_keygen;
    return 1;
}

/*
 * libcrypto public-key operations: the algorithm table, what the loaded libcrypto offers,
 * and RSA, ECDH and ECDSA, each mirroring one loop of OpenSSL 3.x apps/speed.c; pk_pq.c
 * holds the one-shot signatures and ML-KEM, which pk_prepare hands on to it; what both
 * share is in pk_ops.c (see native.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "native.h"

static const pk_alg PK_ALGS[] = {
    {"RSA-2048", FAM_RSA, "RSA", NULL, 2048},
    {"RSA-3072", FAM_RSA, "RSA", NULL, 3072},
    {"RSA-4096", FAM_RSA, "RSA", NULL, 4096},
    {"X25519", FAM_ECDH, "X25519", NULL, 0},
    {"X448", FAM_ECDH, "X448", NULL, 0},
    {"P-256", FAM_ECDH, "EC", "P-256", 0},
    {"P-384", FAM_ECDH, "EC", "P-384", 0},
    {"P-521", FAM_ECDH, "EC", "P-521", 0},
    {"ECDSA-P-256", FAM_ECDSA, "EC", "P-256", 0},
    {"ECDSA-P-384", FAM_ECDSA, "EC", "P-384", 0},
    {"Ed25519", FAM_EDDSA, "ED25519", NULL, 0},
    {"Ed448", FAM_EDDSA, "ED448", NULL, 0},
    {"ML-KEM-512", FAM_MLKEM, "ML-KEM-512", NULL, 0},
    {"ML-KEM-768", FAM_MLKEM, "ML-KEM-768", NULL, 0},
    {"ML-KEM-1024", FAM_MLKEM, "ML-KEM-1024", NULL, 0},
    {"ML-DSA-44", FAM_MLDSA, "ML-DSA-44", NULL, 0},
    {"ML-DSA-65", FAM_MLDSA, "ML-DSA-65", NULL, 0},
    {"ML-DSA-87", FAM_MLDSA, "ML-DSA-87", NULL, 0},
};
#define PK_ALG_COUNT (sizeof(PK_ALGS) / sizeof(PK_ALGS[0]))

static const char *const FAMILY_OPS[][6] = {
    [FAM_RSA] = {"sign", "verify", "encrypt", "decrypt", "keygen", NULL},
    [FAM_ECDH] = {"keygen", "derive", NULL},
    [FAM_ECDSA] = {"sign", "verify", "keygen", NULL},
    [FAM_EDDSA] = {"sign", "verify", "keygen", NULL},
    [FAM_MLKEM] = {"keygen", "encaps", "decaps", "decaps-reject", NULL},
    [FAM_MLDSA] = {"keygen", "sign", "verify", NULL},
};

const pk_alg *pk_find(const char *name)
{
    for (size_t i = 0; i < PK_ALG_COUNT; i++)
        if (strcmp(PK_ALGS[i].name, name) == 0)
            return &PK_ALGS[i];
    return NULL;
}

static int pk_op_known(const pk_alg *a, const char *op)
{
    for (const char *const *o = FAMILY_OPS[a->family]; *o != NULL; o++)
        if (strcmp(*o, op) == 0)
            return 1;
    return 0;
}

static void pk_ops_list(const pk_alg *a, char *out, size_t n)
{
    out[0] = '\0';
    for (const char *const *o = FAMILY_OPS[a->family]; *o != NULL; o++) {
        if (out[0] != '\0')
            strncat(out, ", ", n - strlen(out) - 1);
        strncat(out, *o, n - strlen(out) - 1);
    }
}

/* A keygen context for the algorithm, ready for EVP_PKEY_keygen. */
static EVP_PKEY_CTX *pk_keygen_ctx(const pk_alg *a)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, a->keytype, NULL);

    if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0 ||
        (a->group != NULL && EVP_PKEY_CTX_set_group_name(ctx, a->group) <= 0) ||
        (a->bits != 0 && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, (int)a->bits) <= 0)) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* None if libcrypto offers the algorithm, else the reason it does not. */
int pk_offered(const pk_alg *a, char *reason, size_t n)
{
    EVP_PKEY_CTX *ctx = pk_keygen_ctx(a);

    ERR_clear_error();
    if (ctx != NULL) {
        EVP_PKEY_CTX_free(ctx);
        return 1;
    }
    if ((a->family == FAM_MLKEM || a->family == FAM_MLDSA) &&
        (OPENSSL_version_major() < 3 ||
         (OPENSSL_version_major() == 3 && OPENSSL_version_minor() < 5)))
        snprintf(reason, n, "%s needs OpenSSL >= 3.5; this libcrypto is OpenSSL %u.%u.%u",
                 a->name, OPENSSL_version_major(), OPENSSL_version_minor(),
                 OPENSSL_version_patch());
    else
        snprintf(reason, n, "%s is not offered by the loaded providers of %s", a->name,
                 OpenSSL_version(OPENSSL_VERSION));
    return 0;
}

/*
 * RSA keys take seconds to generate at 4096 bits, so they are made once per process and
 * shared (EVP_PKEY is reference-counted and safe to use from several threads read-only),
 * as `openssl speed` uses fixed test keys. Other keys are cheap and made per call.
 */
static pthread_mutex_t g_rsa_lock = PTHREAD_MUTEX_INITIALIZER;
static EVP_PKEY *g_rsa_keys[3];

void pk_bench_free(pk_bench *b)
{
    EVP_PKEY_CTX_free(b->keygen);
    EVP_PKEY_free(b->key);
    EVP_PKEY_free(b->peer);
    EVP_PKEY_CTX_free(b->ctx);
    EVP_MD_CTX_free(b->md);
    EVP_SIGNATURE_free(b->sigalg);
    OPENSSL_clear_free(b->out, b->out_cap);
    OPENSSL_clear_free(b->aux, b->out_cap);
    OPENSSL_clear_free(b->aux2, b->aux2_cap);
}

static int pk_rsa_key(pk_bench *b, bench_error *e)
{
    int slot = b->alg->bits == 2048 ? 0 : b->alg->bits == 3072 ? 1 : 2;
    int ok = 1;

    pthread_mutex_lock(&g_rsa_lock);
    if (g_rsa_keys[slot] == NULL)
        ok = pk_new_key(b, &g_rsa_keys[slot], e);
    if (ok && EVP_PKEY_up_ref(g_rsa_keys[slot]))
        b->key = g_rsa_keys[slot];
    pthread_mutex_unlock(&g_rsa_lock);
    return ok && b->key != NULL;
}

/* --- the timed ops: each mirrors one loop of OpenSSL 3.x apps/speed.c ---------------- */

/* speed (3.2+) RSA_encrypt_loop: EVP_PKEY_encrypt of the 36-byte buffer, PKCS#1 v1.5. */
static int op_pkey_encrypt(void *c)
{
    pk_bench *b = c;
    b->out_len = b->out_cap;
    return EVP_PKEY_encrypt(b->ctx, b->out, &b->out_len, b->in, b->in_len) > 0;
}

/* speed (3.2+) RSA_decrypt_loop: EVP_PKEY_decrypt of a prepared ciphertext. */
static int op_pkey_decrypt(void *c)
{
    pk_bench *b = c;
    b->aux2_len = b->aux2_cap;
    return EVP_PKEY_decrypt(b->ctx, b->aux2, &b->aux2_len, b->aux, b->aux_len) > 0;
}

/* speed's ECDH_EVP_derive_key_loop: EVP_PKEY_derive with fixed keys and peer. */
static int op_pkey_derive(void *c)
{
    pk_bench *b = c;
    b->out_len = b->out_cap;
    return EVP_PKEY_derive(b->ctx, b->out, &b->out_len) > 0;
}

/* --- preparation and correctness checks, per family ---------------------------------- */

static int pk_ctx_for(pk_bench *b, EVP_PKEY *key, bench_error *e)
{
    b->ctx = EVP_PKEY_CTX_new(key, NULL);
    if (b->ctx == NULL)
        return fail_ssl(e, "EVP_PKEY_CTX_new");
    return 1;
}

/* 1 if a verify-initialised ctx refuses the signature in aux once one message bit changed. */
static int rejects_changed_message(EVP_PKEY_CTX *verify, pk_bench *b)
{
    int rejected;

    b->in[0] ^= 1;
    rejected = EVP_PKEY_verify(verify, b->aux, b->aux_len, b->in, b->in_len) != 1;
    b->in[0] ^= 1;
    ERR_clear_error(); /* the refusal leaves its reason on the queue */
    return rejected;
}

/*
 * The RSA check: the signature (kept in aux for the verify loop) verifies, and not for a
 * changed message, and unless only signing is timed, decrypt(encrypt(m)) == m (the
 * ciphertext stays in aux for decrypt).
 */
static int rsa_check(pk_bench *b, int with_encryption, bench_error *e)
{
    EVP_PKEY_CTX *check = EVP_PKEY_CTX_new(b->key, NULL);
    size_t n = b->aux2_cap;
    int ok;

    b->aux_len = b->out_cap;
    ok = check != NULL && EVP_PKEY_sign_init(check) > 0 &&
         EVP_PKEY_sign(check, b->aux, &b->aux_len, b->in, b->in_len) > 0 &&
         EVP_PKEY_verify_init(check) > 0 &&
         EVP_PKEY_verify(check, b->aux, b->aux_len, b->in, b->in_len) == 1 &&
         rejects_changed_message(check, b);
    if (ok && with_encryption) {
        b->aux_len = b->out_cap;
        ok = EVP_PKEY_encrypt_init(check) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(check, RSA_PKCS1_PADDING) > 0 &&
             EVP_PKEY_encrypt(check, b->aux, &b->aux_len, b->in, b->in_len) > 0 &&
             EVP_PKEY_decrypt_init(check) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(check, RSA_PKCS1_PADDING) > 0 &&
             EVP_PKEY_decrypt(check, b->aux2, &n, b->aux, b->aux_len) > 0 &&
             n == b->in_len && memcmp(b->aux2, b->in, n) == 0;
    }
    EVP_PKEY_CTX_free(check);
    if (ok)
        return 1;
    if (ERR_peek_error() != 0)
        return fail_ssl(e, "RSA correctness check");
    return fail(e, ERR_RUNTIME, "%s: correctness check failed", b->alg->name);
}

/*
 * RSA as `openssl speed rsaN`: PKCS#1 v1.5 (the default padding) over a 36-byte random
 * buffer, no digest set (speed signs the raw 36 bytes, like TLS 1.1's MD5+SHA1).
 */
static int pk_prepare_rsa(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    int ok, signing = strcmp(op, "sign") == 0 || strcmp(op, "verify") == 0;

    b->in_len = 36;
    if (!pk_rsa_key(b, e) || !pk_alloc_out(b, (size_t)EVP_PKEY_get_size(b->key), e))
        return 0;
    b->aux2_cap = b->out_cap;
    if ((b->aux2 = OPENSSL_zalloc(b->aux2_cap)) == NULL)
        return fail(e, ERR_RUNTIME, "out of memory");
    if (!rsa_check(b, !signing, e))
        return 0;
    if (strcmp(op, "keygen") == 0) {
        *fn = op_pkey_keygen;
        return 1;
    }
    if (!pk_ctx_for(b, b->key, e))
        return 0;
    if (strcmp(op, "sign") == 0) {
        *fn = op_pkey_sign;
        ok = EVP_PKEY_sign_init(b->ctx) > 0;
    } else if (strcmp(op, "verify") == 0) {
        *fn = op_pkey_verify;
        ok = EVP_PKEY_verify_init(b->ctx) > 0;
    } else if (strcmp(op, "encrypt") == 0) {
        *fn = op_pkey_encrypt;
        ok = EVP_PKEY_encrypt_init(b->ctx) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(b->ctx, RSA_PKCS1_PADDING) > 0;
    } else {
        *fn = op_pkey_decrypt;
        ok = EVP_PKEY_decrypt_init(b->ctx) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(b->ctx, RSA_PKCS1_PADDING) > 0;
    }
    return ok ? 1 : fail_ssl(e, "RSA context setup");
}

/*
 * ECDH as `openssl speed ecdhp256` / `ecdhx25519`: two fixed keys, a derive ctx with the
 * peer set, then EVP_PKEY_derive per op. The check, as speed does before timing: a*B and
 * b*A give the same secret. The keys come from the keygen ctx, so this also checks it.
 */
static int pk_prepare_ecdh(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    EVP_PKEY_CTX *test = NULL;
    size_t len_a = 0, len_b = 0;
    int ok;

    if (!pk_new_key(b, &b->key, e) || !pk_new_key(b, &b->peer, e) || !pk_ctx_for(b, b->key, e))
        return 0;
    if (EVP_PKEY_derive_init(b->ctx) <= 0 || EVP_PKEY_derive_set_peer(b->ctx, b->peer) <= 0 ||
        EVP_PKEY_derive(b->ctx, NULL, &len_a) <= 0 || len_a == 0)
        return fail_ssl(e, "ECDH setup");
    if (!pk_alloc_out(b, len_a, e))
        return 0;
    test = EVP_PKEY_CTX_new(b->peer, NULL);
    len_b = len_a;
    b->out_len = len_a;
    ok = test != NULL && EVP_PKEY_derive_init(test) > 0 &&
         EVP_PKEY_derive_set_peer(test, b->key) > 0 &&
         EVP_PKEY_derive(b->ctx, b->out, &b->out_len) > 0 &&
         EVP_PKEY_derive(test, b->aux, &len_b) > 0;
    EVP_PKEY_CTX_free(test);
    if (!ok)
        return fail_ssl(e, "ECDH correctness check");
    if (len_b != b->out_len || CRYPTO_memcmp(b->out, b->aux, len_b) != 0)
        return fail(e, ERR_RUNTIME, "%s: both sides derived different secrets", b->alg->name);
    *fn = strcmp(op, "keygen") == 0 ? op_pkey_keygen : op_pkey_derive;
    return 1;
}

/*
 * ECDSA as `openssl speed ecdsap256`: EVP_PKEY_sign / EVP_PKEY_verify over a 20-byte
 * buffer treated as the digest (no hashing in the loop).
 */
static int pk_prepare_ecdsa(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    b->in_len = 20;
    if (!pk_new_key(b, &b->key, e) || !pk_alloc_out(b, (size_t)EVP_PKEY_get_size(b->key), e) ||
        !pk_ctx_for(b, b->key, e))
        return 0;
    b->aux_len = b->out_cap;
    if (EVP_PKEY_sign_init(b->ctx) <= 0 ||
        EVP_PKEY_sign(b->ctx, b->aux, &b->aux_len, b->in, b->in_len) <= 0 ||
        EVP_PKEY_verify_init(b->ctx) <= 0)
        return fail_ssl(e, "ECDSA setup");
    if (EVP_PKEY_verify(b->ctx, b->aux, b->aux_len, b->in, b->in_len) != 1)
        return ERR_peek_error() ? fail_ssl(e, "ECDSA correctness check")
                                : fail(e, ERR_RUNTIME, "%s: a fresh signature does not verify",
                                       b->alg->name);
    if (!rejects_changed_message(b->ctx, b))
        return fail(e, ERR_RUNTIME, "%s: a signature verifies for a changed message",
                    b->alg->name);
    if (strcmp(op, "sign") == 0) {
        *fn = op_pkey_sign;
        if (EVP_PKEY_sign_init(b->ctx) <= 0)
            return fail_ssl(e, "EVP_PKEY_sign_init");
    } else {
        *fn = strcmp(op, "verify") == 0 ? op_pkey_verify : op_pkey_keygen;
    }
    return 1;
}

int pk_prepare(pk_bench *b, const char *alg, const char *op, bench_op *fn, bench_error *e)
{
    char reason[256], ops[96];

    if ((b->alg = pk_find(alg)) == NULL)
        return fail(e, ERR_VALUE,
                    "unknown public-key algorithm %s (RSA-2048/3072/4096, X25519, X448, "
                    "P-256/384/521, ECDSA-P-256/384, Ed25519, Ed448, ML-KEM-512/768/1024, "
                    "ML-DSA-44/65/87)",
                    alg);
    if (!pk_op_known(b->alg, op)) {
        pk_ops_list(b->alg, ops, sizeof(ops));
        return fail(e, ERR_VALUE, "unknown op %s for %s (%s)", op, alg, ops);
    }
    if (!pk_offered(b->alg, reason, sizeof(reason)))
        return fail(e, ERR_VALUE, "not offered: %s", reason);
    if ((b->keygen = pk_keygen_ctx(b->alg)) == NULL)
        return fail_ssl(e, "key generation setup");
    if (RAND_bytes(b->in, sizeof(b->in)) != 1)
        return fail_ssl(e, "RAND_bytes");
    switch (b->alg->family) {
    case FAM_RSA:
        return pk_prepare_rsa(b, op, fn, e);
    case FAM_ECDH:
        return pk_prepare_ecdh(b, op, fn, e);
    case FAM_ECDSA:
        return pk_prepare_ecdsa(b, op, fn, e);
    case FAM_EDDSA:
    case FAM_MLDSA:
        return pk_prepare_oneshot_sig(b, op, fn, e);
    case FAM_MLKEM:
        return pk_prepare_mlkem(b, op, fn, e);
    }
    return fail(e, ERR_VALUE, "unhandled family");
}

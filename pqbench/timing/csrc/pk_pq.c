/*
 * The public-key operations OpenSSL grew one-shot or new EVP calls for: EdDSA and ML-DSA
 * signatures, and ML-KEM encapsulation (OpenSSL >= 3.5), each mirroring one loop of
 * apps/speed.c (see native.h).
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "native.h"

/* --- the timed ops ---------------------------------------------------------------- */

/* speed's EdDSA_sign_loop: one-shot EVP_DigestSign on an initialised EVP_MD_CTX. */
static int op_digest_sign(void *c)
{
    pk_bench *b = c;
    b->out_len = b->out_cap;
    return EVP_DigestSign(b->md, b->out, &b->out_len, b->in, b->in_len) == 1;
}

/* speed's EdDSA_verify_loop: one-shot EVP_DigestVerify. */
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

/* --- preparation and correctness checks -------------------------------------------- */

/*
 * EdDSA as `openssl speed ed25519` (20-byte message) and ML-DSA (32-byte message, as
 * pqbench's liboqs loops default to): EVP_DigestSignInit / EVP_DigestVerifyInit with no
 * digest once, then the one-shot EVP_DigestSign / EVP_DigestVerify per op, which reuse
 * the initialised context.
 */
int pk_prepare_oneshot_sig(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    int sign = strcmp(op, "sign") == 0;

    b->in_len = b->alg->family == FAM_EDDSA ? 20 : 32;
    if (!pk_new_key(b, &b->key, e) || !pk_alloc_out(b, (size_t)EVP_PKEY_get_size(b->key), e))
        return 0;
    if ((b->md = EVP_MD_CTX_new()) == NULL)
        return fail(e, ERR_RUNTIME, "out of memory");
    b->aux_len = b->out_cap;
    if (EVP_DigestSignInit_ex(b->md, NULL, NULL, NULL, NULL, b->key, NULL) != 1 ||
        EVP_DigestSign(b->md, b->aux, &b->aux_len, b->in, b->in_len) != 1 ||
        EVP_DigestVerifyInit_ex(b->md, NULL, NULL, NULL, NULL, b->key, NULL) != 1)
        return fail_ssl(e, "one-shot signature setup");
    if (EVP_DigestVerify(b->md, b->aux, b->aux_len, b->in, b->in_len) != 1)
        return ERR_peek_error() ? fail_ssl(e, "signature correctness check")
                                : fail(e, ERR_RUNTIME, "%s: a fresh signature does not verify",
                                       b->alg->name);
    if (sign && EVP_DigestSignInit_ex(b->md, NULL, NULL, NULL, NULL, b->key, NULL) != 1)
        return fail_ssl(e, "EVP_DigestSignInit_ex");
    *fn = sign ? op_digest_sign : strcmp(op, "verify") == 0 ? op_digest_verify : op_pkey_keygen;
    return 1;
}

/*
 * ML-KEM through EVP_PKEY_encapsulate / EVP_PKEY_decapsulate (OpenSSL >= 3.5; the 3.0 API
 * already declares both). The check: decaps of the ciphertext (kept in aux for the decaps
 * loop) gives the encapsulated secret. The op keeps the ctx it needs and frees the other.
 */
int pk_prepare_mlkem(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
{
    EVP_PKEY_CTX *enc = NULL, *dec = NULL;
    size_t ct_len = 0, ss_len = 0, n;
    int ok, encaps = strcmp(op, "encaps") == 0;

    if (!pk_new_key(b, &b->key, e))
        return 0;
    enc = EVP_PKEY_CTX_new(b->key, NULL);
    dec = EVP_PKEY_CTX_new(b->key, NULL);
    b->ctx = encaps ? enc : dec; /* owned by b from here on */
    ok = enc != NULL && dec != NULL && EVP_PKEY_encapsulate_init(enc, NULL) > 0 &&
         EVP_PKEY_decapsulate_init(dec, NULL) > 0 &&
         EVP_PKEY_encapsulate(enc, NULL, &ct_len, NULL, &ss_len) > 0;
    if (ok && ss_len <= sizeof(b->in) && pk_alloc_out(b, ct_len, e) &&
        (b->aux2 = OPENSSL_zalloc(ss_len)) != NULL) {
        b->aux2_cap = n = b->in_len = ss_len;
        b->aux_len = ct_len;
        ok = EVP_PKEY_encapsulate(enc, b->aux, &b->aux_len, b->in, &n) > 0 &&
             EVP_PKEY_decapsulate(dec, b->aux2, &n, b->aux, b->aux_len) > 0;
    } else if (ok) {
        ok = fail(e, ERR_RUNTIME, "%s: unexpected sizes ct=%zu ss=%zu", b->alg->name, ct_len,
                  ss_len);
    }
    EVP_PKEY_CTX_free(encaps ? dec : enc);
    if (!ok)
        return e->kind != ERR_NONE ? 0 : fail_ssl(e, "ML-KEM correctness check");
    if (n != ss_len || CRYPTO_memcmp(b->aux2, b->in, n) != 0)
        return fail(e, ERR_RUNTIME, "%s: decapsulated secret differs", b->alg->name);
    *fn = encaps ? op_pkey_encaps : strcmp(op, "decaps") == 0 ? op_pkey_decaps : op_pkey_keygen;
    return 1;
}


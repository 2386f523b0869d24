/*
 * What every public-key preparation shares, in pk.c (RSA, ECDH, ECDSA) and in pk_pq.c
 * (the one-shot signatures and ML-KEM): a new key, the output buffers, and the timed
 * EVP_PKEY sign, verify and keygen ops, each mirroring one loop of OpenSSL 3.x
 * apps/speed.c. Both files call down into this one and never into each other: pk.c's
 * pk_prepare hands the post-quantum families to pk_pq.c (see native.h).
 */
#include <stdio.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "native.h"

int pk_new_key(pk_bench *b, EVP_PKEY **key, bench_error *e)
{
    char what[96];

    snprintf(what, sizeof(what), "%s key generation", b->alg->name);
    if (EVP_PKEY_keygen(b->keygen, key) <= 0)
        return fail_ssl(e, what);
    return 1;
}

int pk_alloc_out(pk_bench *b, size_t cap, bench_error *e)
{
    b->out_cap = cap;
    b->out = OPENSSL_zalloc(cap);
    b->aux = OPENSSL_zalloc(cap);
    if (b->out == NULL || b->aux == NULL)
        return fail(e, ERR_RUNTIME, "out of memory");
    return 1;
}

/* --- the timed ops --------------------------------------------------------------------- */

/* speed's RSA_sign_loop / ECDSA_sign_loop: EVP_PKEY_sign on a sign-initialised ctx. */
int op_pkey_sign(void *c)
{
    pk_bench *b = c;
    b->out_len = b->out_cap;
    return EVP_PKEY_sign(b->ctx, b->out, &b->out_len, b->in, b->in_len) > 0;
}

/* speed's RSA_verify_loop / ECDSA_verify_loop: EVP_PKEY_verify of a prepared signature. */
int op_pkey_verify(void *c)
{
    pk_bench *b = c;
    return EVP_PKEY_verify(b->ctx, b->aux, b->aux_len, b->in, b->in_len) == 1;
}

/* speed (3.5+) keygen loops: EVP_PKEY_keygen on a prepared ctx; the key is freed. */
int op_pkey_keygen(void *c)
{
    pk_bench *b = c;
    EVP_PKEY *k = NULL;
    int ok = EVP_PKEY_keygen(b->keygen, &k) > 0;

    EVP_PKEY_free(k);
    return ok;
}

/*
 * liboqs through dlopen: the library liboqs-python loaded, its KEM and signature
 * operations prepared with guarded buffers, checked once, then timed (see native.h).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "native.h"

/* Guarded by the GIL: oqs_load_path runs with it held; loops run on oqs_snapshot's copy. */
static oqs_api g_oqs;
static void *g_oqs_handle;
static char g_oqs_path[4096];

static int oqs_bind(void *h, oqs_api *api, bench_error *e)
{
#define BIND(field, sym)                                                                    \
    do {                                                                                    \
        *(void **)&api->field = dlsym(h, sym);                                              \
        if (api->field == NULL)                                                             \
            return fail(e, ERR_OS, "liboqs lacks %s: %s", sym, dlerror());                  \
    } while (0)
    BIND(kem_new, "OQS_KEM_new");
    BIND(kem_free, "OQS_KEM_free");
    BIND(kem_keypair, "OQS_KEM_keypair");
    BIND(kem_encaps, "OQS_KEM_encaps");
    BIND(kem_decaps, "OQS_KEM_decaps");
    BIND(sig_new, "OQS_SIG_new");
    BIND(sig_free, "OQS_SIG_free");
    BIND(sig_keypair, "OQS_SIG_keypair");
    BIND(sig_sign, "OQS_SIG_sign");
    BIND(sig_verify, "OQS_SIG_verify");
    BIND(version, "OQS_version");
#undef BIND
    return 1;
}

/*
 * Load liboqs. dlopen of the path liboqs-python already loaded returns that same object,
 * so both see one library and one state (RNG choice, CPU feature detection). A second
 * call with another path switches to it, but the old handle is never dlclose'd: a loop
 * on another thread may still be running inside it.
 */
int oqs_load_path(const char *path, bench_error *e)
{
    oqs_api api;
    void *h;
    void (*init)(void);

    if (g_oqs_handle != NULL && strcmp(path, g_oqs_path) == 0)
        return 1;
    if (strlen(path) >= sizeof(g_oqs_path))
        return fail(e, ERR_VALUE, "liboqs path too long");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return fail(e, ERR_OS, "cannot load liboqs from %s: %s", path, dlerror());
    if (!oqs_bind(h, &api, e)) {
        dlclose(h);
        return 0;
    }
    /* OQS_init is idempotent (CPU feature detection); liboqs-python calls it too. */
    *(void **)&init = dlsym(h, "OQS_init");
    if (init != NULL)
        init();
    g_oqs = api;
    g_oqs_handle = h;
    strcpy(g_oqs_path, path);
    return 1;
}

/*
 * Buffers with a guard zone. The caller's sizes cannot be checked against liboqs without
 * its headers, so every buffer is followed by a guard filled with a canary: a size that
 * is too small shows up as a written guard after the correctness check (instead of a
 * silent heap overflow in the timed loop); a size that is too large shows up as a tail
 * that liboqs never wrote (8 canary bytes: a 2^-64 chance of a false alarm).
 */
#define GUARD_MIN 65536u
#define CANARY 0xA5

typedef struct {
    uint8_t *p;
    size_t len;
    size_t cap;
} guarded_buf;

static int gbuf_alloc(guarded_buf *b, size_t len, bench_error *e)
{
    b->len = len;
    b->cap = len + (len > GUARD_MIN ? len : GUARD_MIN);
    b->p = malloc(b->cap);
    if (b->p == NULL)
        return fail(e, ERR_RUNTIME, "out of memory (%zu bytes)", b->cap);
    memset(b->p, CANARY, b->cap);
    return 1;
}

static void gbuf_free(guarded_buf *b)
{
    if (b->p != NULL)
        OPENSSL_cleanse(b->p, b->cap);
    free(b->p);
    b->p = NULL;
}

static int gbuf_overrun(const guarded_buf *b)
{
    for (size_t i = b->len; i < b->cap; i++)
        if (b->p[i] != CANARY)
            return 1;
    return 0;
}

static int gbuf_tail_unwritten(const guarded_buf *b)
{
    size_t n = b->len < 8 ? b->len : 8;

    for (size_t i = b->len - n; i < b->len; i++)
        if (b->p[i] != CANARY)
            return 0;
    return n > 0;
}

static int gbuf_check(const guarded_buf *b, const char *name, int exact, const char *alg,
                      bench_error *e)
{
    if (gbuf_overrun(b))
        return fail(e, ERR_VALUE, "%s: %s=%zu is too small (liboqs wrote past it)", alg,
                    name, b->len);
    if (exact && gbuf_tail_unwritten(b))
        return fail(e, ERR_VALUE, "%s: %s=%zu is too large (liboqs left its tail unwritten)",
                    alg, name, b->len);
    return 1;
}

typedef struct {
    oqs_api api;
    const char *alg;
    oqs_kem_t *kem;
    oqs_sig_t *sig;
    guarded_buf pk, sk, ct, ss_enc, ss_dec; /* KEM */
    guarded_buf signature, msg;             /* SIG (pk, sk shared) */
    size_t sig_len;
} oqs_bench;

static void oqs_bench_free(oqs_bench *b)
{
    gbuf_free(&b->pk);
    gbuf_free(&b->sk);
    gbuf_free(&b->ct);
    gbuf_free(&b->ss_enc);
    gbuf_free(&b->ss_dec);
    gbuf_free(&b->signature);
    gbuf_free(&b->msg);
    if (b->kem != NULL)
        b->api.kem_free(b->kem);
    if (b->sig != NULL)
        b->api.sig_free(b->sig);
}

/* The timed ops: the same calls liboqs's tests/speed_kem.c and speed_sig.c time. */
static int op_kem_keygen(void *c)
{
    oqs_bench *b = c;
    return b->api.kem_keypair(b->kem, b->pk.p, b->sk.p) == 0;
}

static int op_kem_encaps(void *c)
{
    oqs_bench *b = c;
    return b->api.kem_encaps(b->kem, b->ct.p, b->ss_enc.p, b->pk.p) == 0;
}

static int op_kem_decaps(void *c)
{
    oqs_bench *b = c;
    return b->api.kem_decaps(b->kem, b->ss_dec.p, b->ct.p, b->sk.p) == 0;
}

/*
 * Decapsulation of a tampered ciphertext, whatever the answer: ML-KEM returns a pseudorandom
 * secret (FIPS 203 implicit rejection, 6.3), HQC in liboqs 0.13 an error. Either way the
 * call ran its course, which is what decaps-reject measures.
 */
static int op_kem_decaps_reject(void *c)
{
    oqs_bench *b = c;
    (void)b->api.kem_decaps(b->kem, b->ss_dec.p, b->ct.p, b->sk.p);
    return 1;
}

static int op_sig_keygen(void *c)
{
    oqs_bench *b = c;
    return b->api.sig_keypair(b->sig, b->pk.p, b->sk.p) == 0;
}

static int op_sig_sign(void *c)
{
    oqs_bench *b = c;
    return b->api.sig_sign(b->sig, b->signature.p, &b->sig_len, b->msg.p, b->msg.len,
                           b->sk.p) == 0;
}

static int op_sig_verify(void *c)
{
    oqs_bench *b = c;
    return b->api.sig_verify(b->sig, b->msg.p, b->msg.len, b->signature.p, b->sig_len,
                             b->pk.p) == 0;
}

/* keypair, encaps, decaps once; both sides must hold the same shared secret. */
static int kem_check(oqs_bench *b, bench_error *e)
{
    if (b->api.kem_keypair(b->kem, b->pk.p, b->sk.p) != 0)
        return fail(e, ERR_RUNTIME, "%s: OQS_KEM_keypair failed", b->alg);
    if (!gbuf_check(&b->pk, "pk_len", 1, b->alg, e) || !gbuf_check(&b->sk, "sk_len", 1, b->alg, e))
        return 0;
    if (b->api.kem_encaps(b->kem, b->ct.p, b->ss_enc.p, b->pk.p) != 0)
        return fail(e, ERR_RUNTIME, "%s: OQS_KEM_encaps failed", b->alg);
    if (!gbuf_check(&b->ct, "ct_len", 1, b->alg, e) ||
        !gbuf_check(&b->ss_enc, "ss_len", 1, b->alg, e))
        return 0;
    if (b->api.kem_decaps(b->kem, b->ss_dec.p, b->ct.p, b->sk.p) != 0)
        return fail(e, ERR_RUNTIME, "%s: OQS_KEM_decaps failed", b->alg);
    if (!gbuf_check(&b->ss_dec, "ss_len", 1, b->alg, e))
        return 0;
    if (memcmp(b->ss_enc.p, b->ss_dec.p, b->ss_enc.len) != 0)
        return fail(e, ERR_RUNTIME, "%s: decapsulated secret differs from encapsulated one",
                    b->alg);
    return 1;
}

/* keypair, sign, verify once; the signature must verify and fail on a changed message. */
static int sig_check(oqs_bench *b, bench_error *e)
{
    int rejected;

    if (b->api.sig_keypair(b->sig, b->pk.p, b->sk.p) != 0)
        return fail(e, ERR_RUNTIME, "%s: OQS_SIG_keypair failed", b->alg);
    if (!gbuf_check(&b->pk, "pk_len", 1, b->alg, e) || !gbuf_check(&b->sk, "sk_len", 1, b->alg, e))
        return 0;
    b->sig_len = b->signature.len;
    if (b->api.sig_sign(b->sig, b->signature.p, &b->sig_len, b->msg.p, b->msg.len, b->sk.p) != 0)
        return fail(e, ERR_RUNTIME, "%s: OQS_SIG_sign failed", b->alg);
    if (!gbuf_check(&b->signature, "sig_len_max", 0, b->alg, e))
        return 0;
    if (b->sig_len == 0 || b->sig_len > b->signature.len)
        return fail(e, ERR_VALUE, "%s: signature of %zu bytes exceeds sig_len_max=%zu", b->alg,
                    b->sig_len, b->signature.len);
    if (b->api.sig_verify(b->sig, b->msg.p, b->msg.len, b->signature.p, b->sig_len, b->pk.p) != 0)
        return fail(e, ERR_RUNTIME, "%s: a fresh signature does not verify", b->alg);
    b->msg.p[0] ^= 1;
    rejected = b->api.sig_verify(b->sig, b->msg.p, b->msg.len, b->signature.p, b->sig_len,
                                 b->pk.p) != 0;
    b->msg.p[0] ^= 1;
    if (!rejected)
        return fail(e, ERR_RUNTIME, "%s: a signature verifies for a changed message", b->alg);
    return 1;
}

static int oqs_kem_prepare(oqs_bench *b, const char *op, const size_t lens[4], bench_op *fn,
                           bench_error *e)
{
    int reject = strcmp(op, "decaps-reject") == 0;

    if (strcmp(op, "keygen") == 0)
        *fn = op_kem_keygen;
    else if (strcmp(op, "encaps") == 0)
        *fn = op_kem_encaps;
    else if (strcmp(op, "decaps") == 0)
        *fn = op_kem_decaps;
    else if (reject)
        *fn = op_kem_decaps_reject;
    else
        return fail(e, ERR_VALUE, "unknown KEM op %s (keygen, encaps, decaps, decaps-reject)",
                    op);
    b->kem = b->api.kem_new(b->alg);
    if (b->kem == NULL)
        return fail(e, ERR_VALUE, "liboqs does not offer KEM %s (unknown or disabled)", b->alg);
    if (!gbuf_alloc(&b->pk, lens[0], e) || !gbuf_alloc(&b->sk, lens[1], e) ||
        !gbuf_alloc(&b->ct, lens[2], e) || !gbuf_alloc(&b->ss_enc, lens[3], e) ||
        !gbuf_alloc(&b->ss_dec, lens[3], e) || !kem_check(b, e))
        return 0;
    /* The checked ciphertext with one bit changed (see op_kem_decaps_reject). */
    if (reject)
        b->ct.p[0] ^= 1;
    return 1;
}

static int oqs_sig_prepare(oqs_bench *b, const char *op, const size_t lens[4], bench_op *fn,
                           bench_error *e)
{
    if (strcmp(op, "keygen") == 0)
        *fn = op_sig_keygen;
    else if (strcmp(op, "sign") == 0)
        *fn = op_sig_sign;
    else if (strcmp(op, "verify") == 0)
        *fn = op_sig_verify;
    else
        return fail(e, ERR_VALUE, "unknown signature op %s (keygen, sign, verify)", op);
    b->sig = b->api.sig_new(b->alg);
    if (b->sig == NULL)
        return fail(e, ERR_VALUE, "liboqs does not offer signature %s (unknown or disabled)",
                    b->alg);
    if (!gbuf_alloc(&b->pk, lens[0], e) || !gbuf_alloc(&b->sk, lens[1], e) ||
        !gbuf_alloc(&b->signature, lens[2], e) || !gbuf_alloc(&b->msg, lens[3], e))
        return 0;
    /* A random message, as speed_sig.c's OQS_randombytes(message, message_len). */
    if (RAND_bytes(b->msg.p, (int)b->msg.len) != 1)
        return fail_ssl(e, "RAND_bytes");
    return sig_check(b, e);
}


/* A copy of the loaded table, taken with the GIL held, for a loop that runs without it. */
int oqs_snapshot(oqs_api *out, bench_error *e)
{
    if (g_oqs_handle == NULL)
        return fail(e, ERR_RUNTIME, "liboqs is not loaded: call oqs_load(path) first");
    *out = g_oqs;
    return 1;
}

const char *oqs_version(void)
{
    return g_oqs_handle != NULL ? g_oqs.version() : NULL;
}

int oqs_with(const oqs_api *api, int is_kem, const char *alg, const char *op,
             const size_t lens[4], bench_runner run, void *arg, bench_error *e)
{
    oqs_bench b = {0};
    bench_op fn = NULL;
    int ok;

    b.api = *api;
    b.alg = alg;
    ok = (is_kem ? oqs_kem_prepare(&b, op, lens, &fn, e)
                 : oqs_sig_prepare(&b, op, lens, &fn, e)) &&
         run(fn, &b, arg, e);
    oqs_bench_free(&b);
    return ok;
}

typedef struct {
    double seconds;
    loop_result *r;
    const char *alg;
} timed_args;

static int timed_runner(bench_op op, void *ctx, void *arg, bench_error *e)
{
    timed_args *t = arg;
    return run_timed(op, ctx, t->seconds, t->r, e, t->alg);
}

int oqs_run(const oqs_api *api, int is_kem, const char *alg, const char *op, double seconds,
            const size_t lens[4], loop_result *r, bench_error *e)
{
    timed_args t = {seconds, r, alg};
    return oqs_with(api, is_kem, alg, op, lens, timed_runner, &t, e);
}

/*
 * pqbench.timing._native: timing loops that run in C, without the binding's cost per op.
 *
 * The loop contract is the one in pqbench/timing/contract.py and the one `openssl speed`
 * and liboqs's tests/speed_kem.c follow: run the operation until at least `seconds` of
 * CLOCK_MONOTONIC time have passed, count the operations, report (ops, elapsed_ns, ticks).
 *
 * Layout of this file:
 *   1. errors, clocks and the one timed loop every operation goes through
 *   2. liboqs, reached through dlopen of the library liboqs-python loaded
 *   3. libcrypto public-key operations (mirroring OpenSSL 3.x apps/speed.c loops)
 *   4. libcrypto ciphers and digests (mirroring `openssl speed -evp NAME`)
 *   5. the Python module
 *
 * Every benchmark is prepared, checked once for correctness, timed and freed with the GIL
 * released; Python exceptions are raised only afterwards, from the message the C code
 * left in a bench_error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first: pyconfig.h sets _GNU_SOURCE, needed for dladdr */

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#define NATIVE_ABI 1

/* ===================================================================================== */
/* 1. Errors, clocks and the timed loop                                                  */
/* ===================================================================================== */

typedef enum { ERR_NONE = 0, ERR_VALUE, ERR_RUNTIME, ERR_OS } error_kind;

typedef struct {
    error_kind kind;
    char msg[768];
} bench_error;

static int fail(bench_error *e, error_kind kind, const char *fmt, ...)
{
    va_list ap;

    e->kind = kind;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return 0;
}

/* A RuntimeError carrying OpenSSL's own reason (ERR_error_string) for the failure. */
static int fail_ssl(bench_error *e, const char *what)
{
    unsigned long code = ERR_get_error();
    char reason[256] = "no error reported by libcrypto";

    if (code != 0)
        ERR_error_string_n(code, reason, sizeof(reason));
    ERR_clear_error();
    return fail(e, ERR_RUNTIME, "%s failed: %s", what, reason);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The cycle counter. On x86-64 rdtsc counts reference cycles: with an invariant TSC it
 * ticks at a constant rate whatever the core frequency, so it is NOT core cycles. On
 * aarch64 cntvct_el0 is the generic timer (usually tens of MHz), also a constant-rate
 * tick. Elsewhere there is no counter and cycles are reported as None.
 */
#if defined(__x86_64__)
#define HAVE_COUNTER 1
#define COUNTER_NAME "rdtsc (reference cycles)"
static inline uint64_t read_counter(void)
{
    uint32_t lo, hi;

    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
#define HAVE_COUNTER 1
#define COUNTER_NAME "cntvct_el0 (timer ticks)"
static inline uint64_t read_counter(void)
{
    uint64_t v;

    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}
#else
#define HAVE_COUNTER 0
#define COUNTER_NAME NULL
static inline uint64_t read_counter(void) { return 0; }
#endif

/* One operation: returns 1 on success, 0 on failure (the op fills `e` when it can). */
typedef int (*bench_op)(void *ctx);

typedef struct {
    uint64_t ops;
    uint64_t elapsed_ns;
    uint64_t ticks;
} loop_result;

/* The clock is read after a batch; batches grow so it is read about once per this much. */
#define BATCH_TARGET_NS 1000000u
#define MAX_SECONDS 86400.0

/*
 * The one timed loop. Like `openssl speed` (which counts ops until SIGALRM) and liboqs's
 * TIME_OPERATION_SECONDS, it runs until at least `target_ns` have passed; unlike them it
 * reads the clock only between batches, so for a 100 ns op the clock read does not
 * dominate. The next batch is sized from the last one's measured cost per op to take
 * about BATCH_TARGET_NS, at most doubling per step so a cold first op cannot blow it up,
 * and is never below 1. The op goes through a function pointer: measured with `_noop`
 * below, the loop plus the indirect call cost ~1-2 ns per op on x86-64, negligible
 * against the cheapest op timed here (a 16-byte digest, ~100 ns).
 */
static int timed_loop(bench_op op, void *ctx, uint64_t target_ns, loop_result *out)
{
    uint64_t batch = 1, ops = 0;
    uint64_t t_start, t_batch, t_now, c_start, c_end;

    c_start = read_counter();
    t_start = monotonic_ns();
    t_batch = t_start;
    for (;;) {
        for (uint64_t i = 0; i < batch; i++) {
            if (!op(ctx)) {
                out->ops = ops + i;
                return 0;
            }
        }
        ops += batch;
        t_now = monotonic_ns();
        if (t_now - t_start >= target_ns)
            break;
        {
            uint64_t per_op = (t_now - t_batch) / batch;
            uint64_t next = per_op ? BATCH_TARGET_NS / per_op : batch * 2;

            if (next > batch * 2)
                next = batch * 2;
            batch = next ? next : 1;
        }
        t_batch = t_now;
    }
    c_end = read_counter();
    out->ops = ops;
    out->elapsed_ns = t_now - t_start;
    out->ticks = c_end - c_start;
    return 1;
}

static int seconds_ok(double seconds, bench_error *e)
{
    if (!(seconds > 0.0) || !isfinite(seconds) || seconds > MAX_SECONDS)
        return fail(e, ERR_VALUE, "seconds must be > 0 and <= %.0f, got %g", MAX_SECONDS,
                    seconds);
    return 1;
}

/* Time `op`; a failure inside the loop (after the check passed) is a RuntimeError. */
static int run_timed(bench_op op, void *ctx, double seconds, loop_result *r, bench_error *e,
                     const char *what)
{
    char where[160];

    ERR_clear_error();
    if (timed_loop(op, ctx, (uint64_t)(seconds * 1e9), r))
        return 1;
    snprintf(where, sizeof(where), "%s (op %llu of the timed loop)", what,
             (unsigned long long)r->ops + 1);
    if (ERR_peek_error() != 0)
        return fail_ssl(e, where);
    return fail(e, ERR_RUNTIME, "%s failed", where);
}

/* ===================================================================================== */
/* 2. liboqs through dlopen                                                              */
/* ===================================================================================== */

/*
 * The few public prototypes we need from <oqs/kem.h>, <oqs/sig.h> and <oqs/common.h>.
 * OQS_KEM / OQS_SIG are opaque here: the caller passes the sizes (from liboqs-python's
 * details), so liboqs headers are not needed to build. OQS_STATUS is an int, 0 = success.
 */
typedef struct oqs_kem_opaque oqs_kem_t;
typedef struct oqs_sig_opaque oqs_sig_t;

typedef struct {
    oqs_kem_t *(*kem_new)(const char *);
    void (*kem_free)(oqs_kem_t *);
    int (*kem_keypair)(const oqs_kem_t *, uint8_t *, uint8_t *);
    int (*kem_encaps)(const oqs_kem_t *, uint8_t *, uint8_t *, const uint8_t *);
    int (*kem_decaps)(const oqs_kem_t *, uint8_t *, const uint8_t *, const uint8_t *);
    oqs_sig_t *(*sig_new)(const char *);
    void (*sig_free)(oqs_sig_t *);
    int (*sig_keypair)(const oqs_sig_t *, uint8_t *, uint8_t *);
    int (*sig_sign)(const oqs_sig_t *, uint8_t *, size_t *, const uint8_t *, size_t,
                    const uint8_t *);
    int (*sig_verify)(const oqs_sig_t *, const uint8_t *, size_t, const uint8_t *, size_t,
                      const uint8_t *);
    const char *(*version)(void);
} oqs_api;

/* Guarded by the GIL: oqs_load runs with it held; loops copy the table before releasing. */
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
static int oqs_load_path(const char *path, bench_error *e)
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
    if (strcmp(op, "keygen") == 0)
        *fn = op_kem_keygen;
    else if (strcmp(op, "encaps") == 0)
        *fn = op_kem_encaps;
    else if (strcmp(op, "decaps") == 0)
        *fn = op_kem_decaps;
    else
        return fail(e, ERR_VALUE, "unknown KEM op %s (keygen, encaps, decaps)", op);
    b->kem = b->api.kem_new(b->alg);
    if (b->kem == NULL)
        return fail(e, ERR_VALUE, "liboqs does not offer KEM %s (unknown or disabled)", b->alg);
    return gbuf_alloc(&b->pk, lens[0], e) && gbuf_alloc(&b->sk, lens[1], e) &&
           gbuf_alloc(&b->ct, lens[2], e) && gbuf_alloc(&b->ss_enc, lens[3], e) &&
           gbuf_alloc(&b->ss_dec, lens[3], e) && kem_check(b, e);
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

/* ===================================================================================== */
/* 3. libcrypto public-key operations                                                    */
/* ===================================================================================== */

typedef enum { FAM_RSA, FAM_ECDH, FAM_ECDSA, FAM_EDDSA, FAM_MLKEM, FAM_MLDSA } pk_family;

typedef struct {
    const char *name;    /* pqbench's name */
    pk_family family;
    const char *keytype; /* EVP_PKEY_CTX_new_from_name */
    const char *group;   /* EC curve, or NULL */
    unsigned int bits;   /* RSA modulus, or 0 */
} pk_alg;

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
    [FAM_MLKEM] = {"keygen", "encaps", "decaps", NULL},
    [FAM_MLDSA] = {"keygen", "sign", "verify", NULL},
};

static const pk_alg *pk_find(const char *name)
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
static int pk_offered(const pk_alg *a, char *reason, size_t n)
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

typedef struct {
    const pk_alg *alg;
    EVP_PKEY_CTX *keygen; /* the keygen ctx, also timed for "keygen" */
    EVP_PKEY *key;        /* our key (private) */
    EVP_PKEY *peer;       /* ECDH peer */
    EVP_PKEY_CTX *ctx;    /* the op's ctx: sign/verify/encrypt/decrypt/derive/encaps */
    EVP_MD_CTX *md;       /* EdDSA and ML-DSA one-shot DigestSign/DigestVerify */
    unsigned char in[64]; /* the message (speed: 36 bytes for RSA, 20 for EC/EdDSA) */
    size_t in_len;
    unsigned char *out; /* signature / ciphertext / shared secret written by the op */
    size_t out_cap, out_len;
    unsigned char *aux; /* a prepared signature / ciphertext read by the op */
    size_t aux_len;
    unsigned char *aux2; /* decaps output / decrypted text */
    size_t aux2_cap, aux2_len;
} pk_bench;

static void pk_bench_free(pk_bench *b)
{
    EVP_PKEY_CTX_free(b->keygen);
    EVP_PKEY_free(b->key);
    EVP_PKEY_free(b->peer);
    EVP_PKEY_CTX_free(b->ctx);
    EVP_MD_CTX_free(b->md);
    OPENSSL_clear_free(b->out, b->out_cap);
    OPENSSL_clear_free(b->aux, b->out_cap);
    OPENSSL_clear_free(b->aux2, b->aux2_cap);
}

static int pk_new_key(pk_bench *b, EVP_PKEY **key, bench_error *e)
{
    char what[96];

    snprintf(what, sizeof(what), "%s key generation", b->alg->name);
    if (EVP_PKEY_keygen(b->keygen, key) <= 0)
        return fail_ssl(e, what);
    return 1;
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

/* speed's RSA_sign_loop / ECDSA_sign_loop: EVP_PKEY_sign on a sign-initialised ctx. */
static int op_pkey_sign(void *c)
{
    pk_bench *b = c;
    b->out_len = b->out_cap;
    return EVP_PKEY_sign(b->ctx, b->out, &b->out_len, b->in, b->in_len) > 0;
}

/* speed's RSA_verify_loop / ECDSA_verify_loop: EVP_PKEY_verify of a prepared signature. */
static int op_pkey_verify(void *c)
{
    pk_bench *b = c;
    return EVP_PKEY_verify(b->ctx, b->aux, b->aux_len, b->in, b->in_len) == 1;
}

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

/* speed (3.5+) keygen loops: EVP_PKEY_keygen on a prepared ctx; the key is freed. */
static int op_pkey_keygen(void *c)
{
    pk_bench *b = c;
    EVP_PKEY *k = NULL;
    int ok = EVP_PKEY_keygen(b->keygen, &k) > 0;

    EVP_PKEY_free(k);
    return ok;
}

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

/* --- preparation and correctness checks, per family ---------------------------------- */

static int pk_alloc_out(pk_bench *b, size_t cap, bench_error *e)
{
    b->out_cap = cap;
    b->out = OPENSSL_zalloc(cap);
    b->aux = OPENSSL_zalloc(cap);
    if (b->out == NULL || b->aux == NULL)
        return fail(e, ERR_RUNTIME, "out of memory");
    return 1;
}

static int pk_ctx_for(pk_bench *b, EVP_PKEY *key, bench_error *e)
{
    b->ctx = EVP_PKEY_CTX_new(key, NULL);
    if (b->ctx == NULL)
        return fail_ssl(e, "EVP_PKEY_CTX_new");
    return 1;
}

/*
 * The RSA check: the signature (kept in aux for the verify loop) verifies and, unless only
 * signing is timed, decrypt(encrypt(m)) == m (the ciphertext stays in aux for decrypt).
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
         EVP_PKEY_verify(check, b->aux, b->aux_len, b->in, b->in_len) == 1;
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
    if (strcmp(op, "sign") == 0) {
        *fn = op_pkey_sign;
        if (EVP_PKEY_sign_init(b->ctx) <= 0)
            return fail_ssl(e, "EVP_PKEY_sign_init");
    } else {
        *fn = strcmp(op, "verify") == 0 ? op_pkey_verify : op_pkey_keygen;
    }
    return 1;
}

/*
 * EdDSA as `openssl speed ed25519` (20-byte message) and ML-DSA (32-byte message, as
 * pqbench's liboqs loops default to): EVP_DigestSignInit / EVP_DigestVerifyInit with no
 * digest once, then the one-shot EVP_DigestSign / EVP_DigestVerify per op, which reuse
 * the initialised context.
 */
static int pk_prepare_oneshot_sig(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
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
static int pk_prepare_mlkem(pk_bench *b, const char *op, bench_op *fn, bench_error *e)
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

static int pk_prepare(pk_bench *b, const char *alg, const char *op, bench_op *fn,
                      bench_error *e)
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

/* ===================================================================================== */
/* 4. libcrypto ciphers and digests                                                      */
/* ===================================================================================== */

#define MAX_BLOCK_SIZE (64u << 20)

/* The IV is all zeros, as speed.c's static `iv` array. */
static const unsigned char ZERO_IV[EVP_MAX_IV_LENGTH];

typedef struct {
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    unsigned char key[EVP_MAX_KEY_LENGTH];
    int encrypt, wrap;
    unsigned char *buf, *out; /* buf: in-place data as speed; out: wrap output */
    size_t len;               /* block_size: bytes per op */
} cipher_bench;

static void cipher_bench_free(cipher_bench *b)
{
    EVP_CIPHER_CTX_free(b->ctx);
    EVP_CIPHER_free(b->cipher);
    OPENSSL_cleanse(b->key, sizeof(b->key));
    free(b->buf);
    free(b->out);
}

/*
 * speed's EVP_Update_loop: one EVP_EncryptUpdate (or EVP_DecryptUpdate with -decrypt) of
 * block_size bytes, in place, on a context initialised once; AEAD ciphers are streamed
 * the same way (no re-init, no AAD, no tag: that is only speed's -aead mode). When an
 * update fails (a GCM counter running out after 64 GiB) speed resets the IV and goes on;
 * we do the same but give up if the update fails again right after the reset.
 */
static int op_cipher_update(void *c)
{
    cipher_bench *b = c;
    int outl;

    for (int attempt = 0; attempt < 2; attempt++) {
        int rc = b->encrypt ? EVP_EncryptUpdate(b->ctx, b->buf, &outl, b->buf, (int)b->len)
                            : EVP_DecryptUpdate(b->ctx, b->buf, &outl, b->buf, (int)b->len);
        if (rc == 1)
            return 1;
        EVP_CipherInit_ex(b->ctx, NULL, NULL, NULL, ZERO_IV, -1);
    }
    return 0;
}

/* Key wrap (RFC 3394): one whole wrap or unwrap per update, `len` bytes of key material. */
static int op_cipher_wrap(void *c)
{
    cipher_bench *b = c;
    int outl;

    if (b->encrypt)
        return EVP_EncryptUpdate(b->ctx, b->out, &outl, b->buf, (int)b->len) == 1;
    return EVP_DecryptUpdate(b->ctx, b->out, &outl, b->buf, (int)b->len + 8) == 1;
}

static int cipher_is_aead(const EVP_CIPHER *c)
{
    return (EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0;
}

static EVP_CIPHER_CTX *cipher_ctx(const cipher_bench *b, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    if (ctx == NULL)
        return NULL;
    EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
    if (EVP_CipherInit_ex(ctx, b->cipher, NULL, b->key, b->wrap ? NULL : ZERO_IV, enc) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Encrypt then decrypt one block_size message (with the tag for AEAD): must round-trip. */
static int cipher_roundtrip(cipher_bench *b, const char *name, bench_error *e)
{
    size_t cap = b->len + 2 * EVP_MAX_BLOCK_LENGTH + 8;
    unsigned char *msg = malloc(b->len), *ct = malloc(cap), *pt = malloc(cap), tag[16];
    EVP_CIPHER_CTX *enc = NULL, *dec = NULL;
    int n1 = 0, n2 = 0, m1 = 0, m2 = 0, ok = 0;
    int aead = cipher_is_aead(b->cipher);

    if (msg == NULL || ct == NULL || pt == NULL || RAND_bytes(msg, (int)b->len) != 1)
        goto done;
    ok = (enc = cipher_ctx(b, 1)) != NULL &&
         EVP_EncryptUpdate(enc, ct, &n1, msg, (int)b->len) == 1 &&
         EVP_EncryptFinal_ex(enc, ct + n1, &n2) == 1 &&
         (!aead || EVP_CIPHER_CTX_ctrl(enc, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1) &&
         (dec = cipher_ctx(b, 0)) != NULL &&
         (!aead || EVP_CIPHER_CTX_ctrl(dec, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1) &&
         EVP_DecryptUpdate(dec, pt, &m1, ct, n1 + n2) == 1 &&
         EVP_DecryptFinal_ex(dec, pt + m1, &m2) == 1;
done:
    if (ok && ((size_t)(m1 + m2) != b->len || memcmp(pt, msg, b->len) != 0))
        ok = fail(e, ERR_RUNTIME, "%s: decrypt(encrypt(m)) != m", name);
    else if (!ok && e->kind == ERR_NONE)
        fail_ssl(e, "cipher round-trip check");
    EVP_CIPHER_CTX_free(enc);
    EVP_CIPHER_CTX_free(dec);
    free(msg);
    free(ct);
    free(pt);
    return ok;
}

static int cipher_prepare(cipher_bench *b, const char *name, const char *op, size_t block,
                          bench_error *e)
{
    int mode, bs, wrap_op;
    size_t align_len;

    ERR_set_mark();
    b->cipher = EVP_CIPHER_fetch(NULL, name, NULL);
    ERR_pop_to_mark();
    if (b->cipher == NULL)
        return fail(e, ERR_VALUE, "unknown cipher %s (an EVP cipher name, e.g. AES-128-GCM)",
                    name);
    mode = EVP_CIPHER_get_mode(b->cipher);
    bs = EVP_CIPHER_get_block_size(b->cipher);
    b->wrap = mode == EVP_CIPH_WRAP_MODE;
    wrap_op = strcmp(op, "wrap") == 0 || strcmp(op, "unwrap") == 0;
    if (b->wrap != wrap_op || (!wrap_op && strcmp(op, "encrypt") != 0 &&
                               strcmp(op, "decrypt") != 0))
        return fail(e, ERR_VALUE, "unknown op %s for %s (%s)", op, name,
                    b->wrap ? "wrap, unwrap" : "encrypt, decrypt");
    if (mode == EVP_CIPH_CCM_MODE || mode == EVP_CIPH_SIV_MODE)
        return fail(e, ERR_VALUE, "%s: CCM and SIV modes are not supported by the native loop",
                    name);
    b->encrypt = strcmp(op, "encrypt") == 0 || strcmp(op, "wrap") == 0;
    if (block == 0 || block > MAX_BLOCK_SIZE)
        return fail(e, ERR_VALUE, "block_size must be in 1..%u", MAX_BLOCK_SIZE);
    if (mode == EVP_CIPH_XTS_MODE && block < 16)
        return fail(e, ERR_VALUE, "%s: block_size must be >= 16 for XTS", name);
    if (b->wrap && (block < 16 || block % 8 != 0))
        return fail(e, ERR_VALUE, "%s: key material to wrap must be a multiple of 8, >= 16",
                    name);
    if (!b->wrap && bs > 1 && block % (size_t)bs != 0)
        return fail(e, ERR_VALUE, "%s: block_size must be a multiple of %d", name, bs);
    b->len = block;
    /* 64-byte aligned, as speed's buffers with -misalign 0 */
    align_len = (block + 8 + 63) & ~(size_t)63;
    b->buf = aligned_alloc(64, align_len);
    b->out = aligned_alloc(64, align_len);
    if (b->buf == NULL || b->out == NULL)
        return fail(e, ERR_RUNTIME, "out of memory");
    memset(b->buf, 0, align_len);
    if (RAND_bytes(b->key, EVP_CIPHER_get_key_length(b->cipher)) != 1)
        return fail_ssl(e, "RAND_bytes");
    if (!cipher_roundtrip(b, name, e))
        return 0;
    if ((b->ctx = cipher_ctx(b, b->encrypt)) == NULL)
        return fail_ssl(e, "cipher context setup");
    if (b->wrap && !b->encrypt) {
        /* a real wrapped key to unwrap in the loop; unwrap would fail on garbage */
        EVP_CIPHER_CTX *w = cipher_ctx(b, 1);
        int outl = 0, ok = w != NULL && RAND_bytes(b->out, (int)block) == 1 &&
                           EVP_EncryptUpdate(w, b->buf, &outl, b->out, (int)block) == 1;

        EVP_CIPHER_CTX_free(w);
        if (!ok || (size_t)outl != block + 8)
            return fail_ssl(e, "key wrap setup");
    } else if (b->wrap && RAND_bytes(b->buf, (int)block) != 1) {
        return fail_ssl(e, "RAND_bytes");
    }
    return 1;
}

typedef struct {
    EVP_MD *md;
    unsigned char *buf;
    size_t len;
    unsigned char digest[EVP_MAX_MD_SIZE];
} digest_bench;

/* speed's EVP_Digest_loop: EVP_Digest one-shot of block_size bytes with a fetched MD. */
static int op_digest(void *c)
{
    digest_bench *b = c;
    return EVP_Digest(b->buf, b->len, b->digest, NULL, b->md, NULL) == 1;
}

static int digest_prepare(digest_bench *b, const char *name, size_t block, bench_error *e)
{
    unsigned int n = 0;

    ERR_set_mark();
    b->md = EVP_MD_fetch(NULL, name, NULL);
    ERR_pop_to_mark();
    if (b->md == NULL)
        return fail(e, ERR_VALUE, "unknown digest %s (an EVP digest name, e.g. SHA256)", name);
    if ((EVP_MD_get_flags(b->md) & EVP_MD_FLAG_XOF) != 0)
        return fail(e, ERR_VALUE, "%s is an XOF; the native loop times fixed-size digests",
                    name);
    if (block == 0 || block > MAX_BLOCK_SIZE)
        return fail(e, ERR_VALUE, "block_size must be in 1..%u", MAX_BLOCK_SIZE);
    b->len = block;
    if ((b->buf = aligned_alloc(64, (block + 63) & ~(size_t)63)) == NULL)
        return fail(e, ERR_RUNTIME, "out of memory");
    memset(b->buf, 0, block);
    /* The check: the one-shot call works and yields the digest's declared size. */
    if (EVP_Digest(b->buf, b->len, b->digest, &n, b->md, NULL) != 1)
        return fail_ssl(e, "EVP_Digest");
    if ((int)n != EVP_MD_get_size(b->md))
        return fail(e, ERR_RUNTIME, "%s: digest of %u bytes, expected %d", name, n,
                    EVP_MD_get_size(b->md));
    return 1;
}

static void digest_bench_free(digest_bench *b)
{
    EVP_MD_free(b->md);
    free(b->buf);
}

/* ===================================================================================== */
/* 5. The Python module                                                                  */
/* ===================================================================================== */

static PyObject *raise_error(const bench_error *e)
{
    PyObject *kind = e->kind == ERR_VALUE ? PyExc_ValueError
                   : e->kind == ERR_OS    ? PyExc_OSError
                                          : PyExc_RuntimeError;
    PyErr_SetString(kind, e->msg[0] ? e->msg : "native benchmark failed");
    return NULL;
}

static PyObject *result_tuple(const loop_result *r)
{
    if (HAVE_COUNTER)
        return Py_BuildValue("(KKK)", (unsigned long long)r->ops,
                             (unsigned long long)r->elapsed_ns, (unsigned long long)r->ticks);
    return Py_BuildValue("(KKO)", (unsigned long long)r->ops,
                         (unsigned long long)r->elapsed_ns, Py_None);
}

static PyObject *py_counter_name(PyObject *self, PyObject *unused)
{
    if (COUNTER_NAME == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(COUNTER_NAME);
}

static PyObject *py_oqs_load(PyObject *self, PyObject *args)
{
    PyObject *path_obj = NULL;
    bench_error e = {0};
    int ok;

    if (!PyArg_ParseTuple(args, "O&:oqs_load", PyUnicode_FSConverter, &path_obj))
        return NULL;
    ok = oqs_load_path(PyBytes_AS_STRING(path_obj), &e);
    Py_DECREF(path_obj);
    if (!ok)
        return raise_error(&e);
    return PyUnicode_FromString(g_oqs.version());
}

static int oqs_loaded(bench_error *e)
{
    if (g_oqs_handle == NULL)
        return fail(e, ERR_RUNTIME, "liboqs is not loaded: call oqs_load(path) first");
    return 1;
}

static int lens_ok(const Py_ssize_t *in, size_t *out, int n, const char *const *names,
                   bench_error *e)
{
    for (int i = 0; i < n; i++) {
        if (in[i] <= 0 || in[i] > (Py_ssize_t)(64u << 20))
            return fail(e, ERR_VALUE, "%s must be in 1..%u, got %zd", names[i], 64u << 20,
                        in[i]);
        out[i] = (size_t)in[i];
    }
    return 1;
}

/* Shared by oqs_kem and oqs_sig: prepare + check + time + free, without the GIL. */
static PyObject *run_oqs(int is_kem, const char *alg, const char *op, double seconds,
                         const Py_ssize_t lens_in[4], const char *const names[4])
{
    oqs_bench b = {0};
    bench_error e = {0};
    loop_result r = {0};
    bench_op fn = NULL;
    size_t lens[4];
    int ok;

    if (!oqs_loaded(&e) || !seconds_ok(seconds, &e) || !lens_ok(lens_in, lens, 4, names, &e))
        return raise_error(&e);
    b.api = g_oqs;
    b.alg = alg;
    Py_BEGIN_ALLOW_THREADS
    ok = (is_kem ? oqs_kem_prepare(&b, op, lens, &fn, &e)
                 : oqs_sig_prepare(&b, op, lens, &fn, &e)) &&
         run_timed(fn, &b, seconds, &r, &e, alg);
    oqs_bench_free(&b);
    Py_END_ALLOW_THREADS
    if (!ok)
        return raise_error(&e);
    return result_tuple(&r);
}

static PyObject *py_oqs_kem(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alg", "op", "seconds", "pk_len", "sk_len", "ct_len", "ss_len",
                             NULL};
    static const char *const names[4] = {"pk_len", "sk_len", "ct_len", "ss_len"};
    const char *alg, *op;
    double seconds;
    Py_ssize_t lens[4];

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssdnnnn:oqs_kem", kwlist, &alg, &op, &seconds,
                                     &lens[0], &lens[1], &lens[2], &lens[3]))
        return NULL;
    return run_oqs(1, alg, op, seconds, lens, names);
}

static PyObject *py_oqs_sig(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alg", "op", "seconds", "pk_len", "sk_len", "sig_len_max",
                             "msg_len", NULL};
    static const char *const names[4] = {"pk_len", "sk_len", "sig_len_max", "msg_len"};
    const char *alg, *op;
    double seconds;
    Py_ssize_t lens[4] = {0, 0, 0, 32};

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssdnnn|n:oqs_sig", kwlist, &alg, &op, &seconds,
                                     &lens[0], &lens[1], &lens[2], &lens[3]))
        return NULL;
    return run_oqs(0, alg, op, seconds, lens, names);
}

static PyObject *py_ssl_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(OpenSSL_version(OPENSSL_VERSION));
}

static PyObject *py_ssl_library_path(PyObject *self, PyObject *unused)
{
    Dl_info info;

    if (dladdr((void *)(uintptr_t)&EVP_PKEY_CTX_new_from_name, &info) == 0 ||
        info.dli_fname == NULL)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(info.dli_fname);
}

static PyObject *py_ssl_offers(PyObject *self, PyObject *args)
{
    const char *alg;
    const pk_alg *a;
    char reason[256];
    int offered;

    if (!PyArg_ParseTuple(args, "s:ssl_offers", &alg))
        return NULL;
    if ((a = pk_find(alg)) == NULL)
        return PyErr_Format(PyExc_ValueError, "unknown public-key algorithm %s", alg);
    Py_BEGIN_ALLOW_THREADS
    offered = pk_offered(a, reason, sizeof(reason));
    Py_END_ALLOW_THREADS
    if (offered)
        Py_RETURN_NONE;
    return PyUnicode_FromString(reason);
}

static PyObject *py_ssl_pk(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alg", "op", "seconds", NULL};
    const char *alg, *op;
    double seconds;
    pk_bench b = {0};
    bench_error e = {0};
    loop_result r = {0};
    bench_op fn = NULL;
    int ok;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssd:ssl_pk", kwlist, &alg, &op, &seconds))
        return NULL;
    if (!seconds_ok(seconds, &e))
        return raise_error(&e);
    Py_BEGIN_ALLOW_THREADS
    ERR_clear_error();
    ok = pk_prepare(&b, alg, op, &fn, &e) && run_timed(fn, &b, seconds, &r, &e, alg);
    pk_bench_free(&b);
    ERR_clear_error();
    Py_END_ALLOW_THREADS
    if (!ok)
        return raise_error(&e);
    return result_tuple(&r);
}

static PyObject *py_ssl_cipher(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "op", "block_size", "seconds", NULL};
    const char *name, *op;
    Py_ssize_t block;
    double seconds;
    cipher_bench b = {0};
    bench_error e = {0};
    loop_result r = {0};
    int ok;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssnd:ssl_cipher", kwlist, &name, &op, &block,
                                     &seconds))
        return NULL;
    if (!seconds_ok(seconds, &e))
        return raise_error(&e);
    if (block <= 0)
        return PyErr_Format(PyExc_ValueError, "block_size must be > 0, got %zd", block);
    Py_BEGIN_ALLOW_THREADS
    ERR_clear_error();
    ok = cipher_prepare(&b, name, op, (size_t)block, &e) &&
         run_timed(b.wrap ? op_cipher_wrap : op_cipher_update, &b, seconds, &r, &e, name);
    cipher_bench_free(&b);
    ERR_clear_error();
    Py_END_ALLOW_THREADS
    if (!ok)
        return raise_error(&e);
    return result_tuple(&r);
}

static PyObject *py_ssl_digest(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "block_size", "seconds", NULL};
    const char *name;
    Py_ssize_t block;
    double seconds;
    digest_bench b = {0};
    bench_error e = {0};
    loop_result r = {0};
    int ok;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "snd:ssl_digest", kwlist, &name, &block,
                                     &seconds))
        return NULL;
    if (!seconds_ok(seconds, &e))
        return raise_error(&e);
    if (block <= 0)
        return PyErr_Format(PyExc_ValueError, "block_size must be > 0, got %zd", block);
    Py_BEGIN_ALLOW_THREADS
    ERR_clear_error();
    ok = digest_prepare(&b, name, (size_t)block, &e) &&
         run_timed(op_digest, &b, seconds, &r, &e, name);
    digest_bench_free(&b);
    ERR_clear_error();
    Py_END_ALLOW_THREADS
    if (!ok)
        return raise_error(&e);
    return result_tuple(&r);
}

/* A no-op through the same loop: the loop's own cost per op (for the overhead claim). */
static volatile uint64_t g_noop_sink;

static int op_noop(void *c)
{
    (void)c;
    g_noop_sink++;
    return 1;
}

static PyObject *py_noop(PyObject *self, PyObject *args)
{
    double seconds;
    bench_error e = {0};
    loop_result r = {0};

    if (!PyArg_ParseTuple(args, "d:_noop", &seconds))
        return NULL;
    if (!seconds_ok(seconds, &e))
        return raise_error(&e);
    Py_BEGIN_ALLOW_THREADS
    timed_loop(op_noop, NULL, (uint64_t)(seconds * 1e9), &r);
    Py_END_ALLOW_THREADS
    return result_tuple(&r);
}

/* --- disk-style XTS, not timed: the file benchmark's encryption ----------------------- */

/* AES-256-XTS over whole data units as disk encryption does it (IEEE 1619; APFS, FileVault):
 * unit i of `sector` bytes is encrypted with tweak = first + i, little-endian in 16 bytes.
 * One context for all units: the key is scheduled once and only the IV changes per unit,
 * as a kernel's XTS does. Not a timing loop: `pqbench files corpus` times the whole write. */
static int xts_units(const unsigned char *key, const unsigned char *src, unsigned char *dst,
                     Py_ssize_t len, unsigned long long first, Py_ssize_t sector, int encrypt,
                     bench_error *e)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = ctx != NULL &&
             EVP_CipherInit_ex(ctx, EVP_aes_256_xts(), NULL, key, NULL, encrypt) == 1;

    for (Py_ssize_t off = 0; ok && off < len; off += sector) {
        unsigned char iv[16] = {0};
        unsigned long long unit = first + (unsigned long long)(off / sector);
        int written = 0;

        for (int i = 0; i < 8; i++)
            iv[i] = (unsigned char)(unit >> (8 * i));
        ok = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1) == 1 &&
             EVP_CipherUpdate(ctx, dst + off, &written, src + off, (int)sector) == 1 &&
             written == sector;
    }
    EVP_CIPHER_CTX_free(ctx);
    return ok ? 1 : fail_ssl(e, "AES-256-XTS");
}

static PyObject *py_ssl_xts_units(PyObject *self, PyObject *args)
{
    Py_buffer key, data;
    unsigned long long first;
    Py_ssize_t sector;
    int encrypt, ok = 0;
    bench_error e = {0};
    PyObject *out = NULL;

    if (!PyArg_ParseTuple(args, "y*y*Knp:ssl_xts_units", &key, &data, &first, &sector,
                          &encrypt))
        return NULL;
    if (key.len != 64)
        PyErr_SetString(PyExc_ValueError, "AES-256-XTS takes a 64-byte key (two AES-256 keys)");
    else if (sector < 16 || sector > (1 << 24) || data.len % sector != 0)
        PyErr_SetString(PyExc_ValueError, "data must be whole units of 16 bytes to 16 MiB");
    else if ((out = PyBytes_FromStringAndSize(NULL, data.len)) != NULL) {
        unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(out);

        Py_BEGIN_ALLOW_THREADS
        ok = xts_units(key.buf, data.buf, dst, data.len, first, sector, encrypt, &e);
        Py_END_ALLOW_THREADS
        if (!ok) {
            Py_CLEAR(out);
            raise_error(&e);
        }
    }
    PyBuffer_Release(&key);
    PyBuffer_Release(&data);
    return out;
}

static PyMethodDef native_methods[] = {
    {"counter_name", py_counter_name, METH_NOARGS,
     "counter_name() -> str | None: the cycle counter read around each loop, or None."},
    {"oqs_load", py_oqs_load, METH_VARARGS,
     "oqs_load(path) -> str: dlopen liboqs (the library liboqs-python loaded); its version."},
    {"oqs_kem", (PyCFunction)(void (*)(void))py_oqs_kem, METH_VARARGS | METH_KEYWORDS,
     "oqs_kem(alg, op, seconds, pk_len, sk_len, ct_len, ss_len) -> (ops, elapsed_ns, cycles)"},
    {"oqs_sig", (PyCFunction)(void (*)(void))py_oqs_sig, METH_VARARGS | METH_KEYWORDS,
     "oqs_sig(alg, op, seconds, pk_len, sk_len, sig_len_max, msg_len=32) -> (ops, elapsed_ns, "
     "cycles)"},
    {"ssl_version", py_ssl_version, METH_NOARGS, "ssl_version() -> str: OpenSSL_version()."},
    {"ssl_library_path", py_ssl_library_path, METH_NOARGS,
     "ssl_library_path() -> str | None: the libcrypto file this module uses."},
    {"ssl_offers", py_ssl_offers, METH_VARARGS,
     "ssl_offers(alg) -> str | None: None if libcrypto offers alg, else the reason."},
    {"ssl_pk", (PyCFunction)(void (*)(void))py_ssl_pk, METH_VARARGS | METH_KEYWORDS,
     "ssl_pk(alg, op, seconds) -> (ops, elapsed_ns, cycles)"},
    {"ssl_cipher", (PyCFunction)(void (*)(void))py_ssl_cipher, METH_VARARGS | METH_KEYWORDS,
     "ssl_cipher(name, op, block_size, seconds) -> (ops, elapsed_ns, cycles)"},
    {"ssl_digest", (PyCFunction)(void (*)(void))py_ssl_digest, METH_VARARGS | METH_KEYWORDS,
     "ssl_digest(name, block_size, seconds) -> (ops, elapsed_ns, cycles)"},
    {"ssl_xts_units", py_ssl_xts_units, METH_VARARGS,
     "ssl_xts_units(key, data, first_unit, unit_size, encrypt) -> bytes: disk-style "
     "AES-256-XTS, tweak = unit number (IEEE 1619)."},
    {"_noop", py_noop, METH_VARARGS,
     "_noop(seconds) -> (ops, elapsed_ns, cycles): the loop around an empty op."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "pqbench.timing._native",
    "Native timing loops for liboqs and the system libcrypto (see pqbench.timing.native).",
    -1,
    native_methods,
};

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *m = PyModule_Create(&native_module);

    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", NATIVE_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

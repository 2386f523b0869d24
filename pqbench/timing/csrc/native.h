/*
 * pqbench.timing._native: timing loops that run in C, without the binding's cost per op.
 *
 * The loop contract is the one in pqbench/timing/contract.py and the one `openssl speed`
 * and liboqs's tests/speed_kem.c follow: run the operation until at least `seconds` of
 * CLOCK_MONOTONIC time have passed, count the operations, report (ops, elapsed_ns, ticks).
 *
 * The extension is built from one file per concern, all sharing this header:
 *   loop.c    errors, clocks and the one timed loop every operation goes through
 *   oqs.c     liboqs, reached through dlopen of the library liboqs-python loaded
 *   pk.c      libcrypto public-key operations (mirroring OpenSSL 3.x apps/speed.c loops)
 *   pk_pq.c   the one-shot signatures (EdDSA, ML-DSA) and ML-KEM through libcrypto
 *   pk_ops.c  what both share: a new key, output buffers, the EVP_PKEY sign/verify/keygen
 *   evp.c     libcrypto ciphers and digests (mirroring `openssl speed -evp NAME`)
 *   memory.c  the peak stack and heap of one call of a prepared operation
 *   memtest.c operations with known memory use, for the tests of memory.c only
 *   module.c  the Python module: argument parsing, the GIL, exceptions
 *
 * Every benchmark is prepared, checked once for correctness, timed and freed with the GIL
 * released; Python exceptions are raised only afterwards (module.c), from the message the
 * C code left in a bench_error. Nothing but module.c includes Python.h, and the build
 * hides every symbol but PyInit__native (-fvisibility=hidden), so these short names stay
 * private to the extension.
 */
#ifndef PQBENCH_NATIVE_H
#define PQBENCH_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* Bumped whenever a function's arguments or results change; native.py checks it. */
#define NATIVE_ABI 3

/* --- errors (loop.c) ------------------------------------------------------------------ */

typedef enum { ERR_NONE = 0, ERR_VALUE, ERR_RUNTIME, ERR_OS } error_kind;

typedef struct {
    error_kind kind;
    char msg[768];
} bench_error;

/* Fill `e` (ValueError, RuntimeError or OSError later); always returns 0. */
int fail(bench_error *e, error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A RuntimeError carrying OpenSSL's own reason (ERR_error_string) for the failure. */
int fail_ssl(bench_error *e, const char *what);

/* --- the timed loop (loop.c) ---------------------------------------------------------- */

/* One operation: returns 1 on success, 0 on failure (the op fills `e` when it can). */
typedef int (*bench_op)(void *ctx);

typedef struct {
    uint64_t ops;
    uint64_t elapsed_ns;
    uint64_t ticks;
    /* The calling thread's CPU time over the same window as elapsed_ns. */
    uint64_t cpu_ns;
} loop_result;

/* The cycle counter's name, or NULL where there is none (cycles are then None). */
extern const char *const COUNTER_NAME;
extern const int HAVE_COUNTER;

int seconds_ok(double seconds, bench_error *e);
int timed_loop(bench_op op, void *ctx, uint64_t target_ns, loop_result *out);
/* Time `op`; a failure inside the loop (after the check passed) is a RuntimeError. */
int run_timed(bench_op op, void *ctx, double seconds, loop_result *r, bench_error *e,
              const char *what);
/* The loop around an empty op: the loop's own cost per op. */
void noop_loop(double seconds, loop_result *r);

/*
 * What to do with an operation once it is prepared and checked: time it (run_timed) or
 * measure one call's memory (mem_runner). `arg` is the runner's own (seconds and result,
 * or a mem_result).
 */
typedef int (*bench_runner)(bench_op op, void *ctx, void *arg, bench_error *e);

/* --- liboqs (oqs.c) ------------------------------------------------------------------- */

/*
 * The few public prototypes we need from <oqs/kem.h>, <oqs/sig.h> and <oqs/common.h>.
 * OQS_KEM / OQS_SIG are opaque here: the caller passes the sizes (from liboqs-python's
 * details), so liboqs headers are not needed to build. OQS_STATUS is an int, 0 = success.
 */
typedef struct oqs_kem_opaque oqs_kem_t;
typedef struct oqs_sig_opaque oqs_sig_t;

typedef struct oqs_api {
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

/* Sizes beyond this are refused before anything is allocated. */
#define MAX_OQS_LEN (64u << 20)

int oqs_load_path(const char *path, bench_error *e);
/* The loaded table (fails if oqs_load_path never succeeded); call it with the GIL held. */
int oqs_snapshot(oqs_api *out, bench_error *e);
const char *oqs_version(void);
/* Prepare, check, time and free one liboqs benchmark; lens are checked by the caller. */
int oqs_run(const oqs_api *api, int is_kem, const char *alg, const char *op, double seconds,
            const size_t lens[4], loop_result *r, bench_error *e);
/*
 * Prepare and check one liboqs operation, hand it to `run`, free it. KEM ops are keygen,
 * encaps, decaps and decaps-reject (decaps of the checked ciphertext with one bit
 * changed: FIPS 203 implicit rejection); signature ops keygen, sign, verify.
 */
int oqs_with(const oqs_api *api, int is_kem, const char *alg, const char *op,
             const size_t lens[4], bench_runner run, void *arg, bench_error *e);

/* --- libcrypto public key (pk.c, pk_pq.c, pk_ops.c) ---------------------------------- */

typedef enum { FAM_RSA, FAM_ECDH, FAM_ECDSA, FAM_EDDSA, FAM_MLKEM, FAM_MLDSA } pk_family;

typedef struct {
    const char *name;    /* pqbench's name */
    pk_family family;
    const char *keytype; /* EVP_PKEY_CTX_new_from_name */
    const char *group;   /* EC curve, or NULL */
    unsigned int bits;   /* RSA modulus, or 0 */
} pk_alg;

typedef struct {
    const pk_alg *alg;
    EVP_PKEY_CTX *keygen; /* the keygen ctx, also timed for "keygen" */
    EVP_PKEY *key;        /* our key (private) */
    EVP_PKEY *peer;       /* ECDH peer */
    EVP_PKEY_CTX *ctx;    /* the op's ctx: sign/verify/encrypt/decrypt/derive/encaps */
    EVP_MD_CTX *md;       /* EdDSA and ML-DSA before OpenSSL 3.4: DigestSign/DigestVerify */
    EVP_SIGNATURE *sigalg; /* EdDSA and ML-DSA from 3.4: the message-signing algorithm */
    unsigned char in[64]; /* the message (speed: 36 bytes for RSA, 20 for EC/EdDSA) */
    size_t in_len;
    unsigned char *out; /* signature / ciphertext / shared secret written by the op */
    size_t out_cap, out_len;
    unsigned char *aux; /* a prepared signature / ciphertext read by the op */
    size_t aux_len;
    unsigned char *aux2; /* decaps output / decrypted text */
    size_t aux2_cap, aux2_len;
} pk_bench;

const pk_alg *pk_find(const char *name);
/* 1 if libcrypto offers the algorithm, else 0 with the reason in `reason`. */
int pk_offered(const pk_alg *a, char *reason, size_t n);
int pk_prepare(pk_bench *b, const char *alg, const char *op, bench_op *fn, bench_error *e);
void pk_bench_free(pk_bench *b);

/* Shared by pk.c and pk_pq.c (pk_ops.c). */
int pk_new_key(pk_bench *b, EVP_PKEY **key, bench_error *e);
int pk_alloc_out(pk_bench *b, size_t cap, bench_error *e);
int op_pkey_keygen(void *c);
int op_pkey_sign(void *c);
int op_pkey_verify(void *c);
int pk_prepare_oneshot_sig(pk_bench *b, const char *op, bench_op *fn, bench_error *e);
int pk_prepare_mlkem(pk_bench *b, const char *op, bench_op *fn, bench_error *e);

/* --- libcrypto ciphers and digests (evp.c) -------------------------------------------- */

typedef struct {
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    unsigned char key[EVP_MAX_KEY_LENGTH];
    int encrypt, wrap;
    unsigned char *buf, *out; /* buf: in-place data as speed; out: wrap output */
    size_t len;               /* block_size: bytes per op */
} cipher_bench;

typedef struct {
    EVP_MD *md;
    unsigned char *buf;
    size_t len;
    unsigned char digest[EVP_MAX_MD_SIZE];
} digest_bench;

int cipher_prepare(cipher_bench *b, const char *name, const char *op, size_t block,
                   bench_error *e);
bench_op cipher_op(const cipher_bench *b);
void cipher_bench_free(cipher_bench *b);
int digest_prepare(digest_bench *b, const char *name, size_t block, bench_error *e);
int op_digest(void *c);
void digest_bench_free(digest_bench *b);

/* --- memory per call (memory.c, memtest.c) ------------------------------------------- */

/* The smallest and largest figure over the measured calls. */
typedef struct {
    uint64_t min, max;
} mem_range;

typedef struct {
    unsigned calls;               /* calls measured so far (0: none yet) */
    mem_range stack;              /* stack high-water mark of a call, harness subtracted */
    mem_range heap;               /* most bytes a call had requested and not freed */
    mem_range total;              /* bytes a call requested in all */
    mem_range allocations;        /* malloc, calloc, realloc, aligned allocations */
    uint64_t harness_stack_bytes; /* what was subtracted: the harness around an empty call */
    int heap_counted;             /* 0: no allocator interposer in this process */
} mem_result;

#define MEM_MAX_CALLS 1000u

/* 1 if the allocator interposer is in this process (heap figures are then counted). */
int mem_heap_available(void);
/*
 * One call of op(ctx), measured on the painted stack (heap counted where the interposer
 * is), its figures folded into out's ranges. Start from a zeroed mem_result; measure
 * each call on a fresh preparation to see what varies with keys and inputs.
 */
int mem_measure(bench_op op, void *ctx, mem_result *out, bench_error *e);
/* mem_measure as a bench_runner; arg is a mem_result. */
int mem_runner(bench_op op, void *ctx, void *arg, bench_error *e);

#define MEMTEST_MAX_BLOCKS 1024u

typedef struct {
    size_t count; /* recursion depth, or blocks */
    size_t bytes; /* bytes per frame, or per block */
    void *slots[MEMTEST_MAX_BLOCKS];
} memtest;

/* A test operation of known memory use (memtest.c): stack, heap, heap-churn, allocators. */
int memtest_prepare(memtest *t, const char *name, size_t count, size_t bytes, bench_op *fn,
                    bench_error *e);
int memtest_empty(void *c);

#endif

/*
 * The cross-check harness of benchmarks/memory_vs_valgrind.py: one operation, prepared and
 * checked by pqbench's own C code (csrc/), then called ONCE in the way the external tool
 * can isolate. Built by the script from this file and the csrc sources but module.c; never
 * committed as a binary.
 *
 *   memory_harness MODE KIND ALG OP EMPTY LIBOQS [LENS...]
 *
 * MODE    painted: pqbench's own measurement (csrc/memory.c), printed as JSON, so that
 *                  the figure taken under valgrind sees the CPU valgrind emulates (and,
 *                  run with the interposer preloaded, the heap as the worker counts it)
 *         deep:    the call is made from a frame 1 MiB below main's, so the peak of the
 *                  whole run is the call's (preparation never reaches that deep) and
 *                  massif --stacks=yes's peak minus an EMPTY run's is the call's stack.
 *                  Massif samples the stack at intervals (it looks for a peak only when
 *                  heap memory is freed), so a short excursion can fall between two
 *                  samples: the call is repeated $MEMORY_HARNESS_REPEATS times (default 1)
 *                  at that depth to give the samples many chances to land on it
 *         marker:  the call goes through measured_call, so that DHAT's allocation
 *                  points made inside it can be told from the preparation's (whose
 *                  counts vary: RSA key generation, ML-DSA's signing check); a 256 MiB
 *                  block (never touched) is held across the call, so DHAT's t-gmax
 *                  falls inside it and the bytes those points hold then are its peak
 * KIND    kem | sig (liboqs, loaded from LIBOQS) | ssl (the system libcrypto)
 * EMPTY   1: prepare exactly the same, but call an empty function instead of the op
 * LENS    liboqs sizes: pk sk ct ss (kem) or pk sk sig_max msg (sig)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define DEEP_BYTES (1u << 20)
#define MARKER_BYTES ((size_t)256 << 20)

typedef struct {
    const char *mode;
    int empty;
} harness;

static __attribute__((noinline)) int deep_call(bench_op op, void *ctx, long repeats)
{
    volatile unsigned char pad[DEEP_BYTES];
    int ok = 1;

    pad[0] = 1;
    for (long i = 0; ok && i < repeats; i++)
        ok = op(ctx);
    pad[DEEP_BYTES - 1] = (unsigned char)ok; /* keeps the pad (and the depth) live */
    return ok && pad[0] == 1;
}

/* Not static, never inlined: its name marks the call's allocations in DHAT's output. */
__attribute__((noinline)) int measured_call(bench_op op, void *ctx)
{
    int ok = op(ctx);

    __asm__ volatile("" ::: "memory"); /* no tail call: keep this frame on the stack */
    return ok;
}

static int run(bench_op op, void *ctx, void *arg, bench_error *e)
{
    const harness *h = arg;
    bench_op call = h->empty ? memtest_empty : op;

    if (strcmp(h->mode, "painted") == 0) {
        mem_result m = {0};

        if (!mem_measure(call, ctx, &m, e))
            return 0;
        printf("{\"stack_bytes\": %llu, \"harness_stack_bytes\": %llu, \"heap_counted\": "
               "%d, \"heap_bytes\": %llu, \"allocations\": %llu}\n",
               (unsigned long long)m.stack.max, (unsigned long long)m.harness_stack_bytes,
               m.heap_counted, (unsigned long long)m.heap.max,
               (unsigned long long)m.allocations.max);
        return 1;
    }
    if (strcmp(h->mode, "deep") == 0) {
        const char *repeats = getenv("MEMORY_HARNESS_REPEATS");

        return deep_call(call, ctx, repeats ? atol(repeats) : 1) ||
               fail(e, ERR_RUNTIME, "the call failed");
    }
    if (strcmp(h->mode, "marker") == 0) {
        void *marker = malloc(MARKER_BYTES);
        int ok;

        if (marker == NULL)
            return fail(e, ERR_RUNTIME, "no memory for the marker");
        ok = measured_call(call, ctx);
        free(marker);
        return ok || fail(e, ERR_RUNTIME, "the call failed");
    }
    return fail(e, ERR_VALUE, "unknown mode %s (painted, deep, marker)", h->mode);
}

/* Python's _hashlib enumerates every digest at import (EVP_MD_do_all_provided). */
static void each_digest(EVP_MD *md, void *arg)
{
    (void)md;
    (void)arg;
}

int main(int argc, char **argv)
{
    harness h;
    bench_error e = {0};
    int ok;

    /*
     * Put libcrypto in the state pqbench's worker measures in: a Python process whose
     * hashlib enumerated the provided digests. That fills lookups some operations consult:
     * X25519 key generation, for one, requests 208 bytes more heap afterwards (3,500 B
     * instead of 3,292 in OpenSSL 3.0.19).
     */
    EVP_MD_do_all_provided(NULL, each_digest, NULL);

    if (argc < 7) {
        fprintf(stderr, "usage: %s MODE KIND ALG OP EMPTY LIBOQS [LENS...]\n", argv[0]);
        return 2;
    }
    h.mode = argv[1];
    h.empty = strcmp(argv[5], "1") == 0;
    if (strcmp(argv[2], "ssl") == 0) {
        pk_bench b = {0};
        bench_op fn = NULL;

        ok = pk_prepare(&b, argv[3], argv[4], &fn, &e) && run(fn, &b, &h, &e);
        pk_bench_free(&b);
    } else {
        oqs_api api;
        size_t lens[4];

        if (argc < 11) {
            fprintf(stderr, "liboqs needs four sizes\n");
            return 2;
        }
        for (int i = 0; i < 4; i++)
            lens[i] = strtoul(argv[7 + i], NULL, 10);
        ok = oqs_load_path(argv[6], &e) && oqs_snapshot(&api, &e) &&
             oqs_with(&api, strcmp(argv[2], "kem") == 0, argv[3], argv[4], lens, run, &h, &e);
    }
    if (!ok) {
        fprintf(stderr, "memory_harness: %s\n", e.msg);
        return 1;
    }
    return 0;
}

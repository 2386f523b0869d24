/*
 * Operations with known memory use, for the tests of memory.c and the interposer only:
 * known bytes go in, and the measurement must give the same bytes back (see native.h).
 *
 *   stack       recursion `depth` deep, each frame holding a `bytes`-byte array it writes
 *               in full: the stack grows by depth * (bytes + the frame's fixed overhead)
 *   heap        `count` blocks of `bytes` bytes from malloc, all live at once, then freed:
 *               peak count * bytes, count allocations
 *   heap-churn  the same blocks, each freed before the next: peak `bytes`
 *   allocators  one block from each allocation function the interposer replaces, with
 *               fixed sizes (MEMTEST_ALLOCATORS_* below give the answer)
 */
#define _GNU_SOURCE /* memalign, valloc, pvalloc, reallocarray */

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

/* Keeps the compiler from proving the arrays dead (each frame's sum feeds the result). */
static volatile unsigned char g_sink;

static __attribute__((noinline)) unsigned recurse(unsigned depth, size_t bytes)
{
    unsigned char frame[bytes]; /* a VLA: exactly `bytes`, rounded up to 16 by the ABI */
    volatile unsigned char *p = frame;
    unsigned sum = 0;

    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)(i + depth);
    if (depth > 1)
        sum = recurse(depth - 1, bytes);
    for (size_t i = 0; i < bytes; i += 64)
        sum += p[i];
    return sum;
}

static int op_stack(void *c)
{
    const memtest *t = c;

    g_sink = (unsigned char)recurse((unsigned)t->count, t->bytes);
    return 1;
}

static int op_heap(void *c)
{
    memtest *t = c;
    void **blocks = t->slots; /* set aside before the call: the test allocates nothing else */

    for (size_t i = 0; i < t->count; i++) {
        if ((blocks[i] = malloc(t->bytes)) == NULL)
            return 0;
        memset(blocks[i], 1, t->bytes);
    }
    for (size_t i = 0; i < t->count; i++)
        free(blocks[i]);
    return 1;
}

static int op_heap_churn(void *c)
{
    const memtest *t = c;

    for (size_t i = 0; i < t->count; i++) {
        unsigned char *p = malloc(t->bytes);

        if (p == NULL)
            return 0;
        memset(p, 1, t->bytes);
        g_sink = p[t->bytes - 1];
        free(p);
    }
    return 1;
}

/*
 * Live bytes after each step, as the interposer must count them (requested sizes):
 *   malloc 1000                      1000
 *   calloc 10 x 100                  2000
 *   realloc the first to 3000        4000   (the 1000 are released, 3000 taken)
 *   posix_memalign 64, 5000          9000
 *   aligned_alloc 64, 6400          15400
 *   memalign 128, 700               16100
 *   reallocarray the second, 30x100 18100   (1000 released, 3000 taken)
 *   free everything                     0
 * Peak 18100 bytes in 7 allocations; 1000 + 1000 + 3000 + 5000 + 6400 + 700 + 3000 =
 * 20100 bytes requested in all.
 */
static int op_allocators(void *c)
{
    void *a, *b, *d = NULL, *f, *g, *grown;

    (void)c;
    if ((a = malloc(1000)) == NULL || (b = calloc(10, 100)) == NULL)
        return 0;
    if ((grown = realloc(a, 3000)) == NULL)
        return 0;
    a = grown;
    if (posix_memalign(&d, 64, 5000) != 0 || (f = aligned_alloc(64, 6400)) == NULL ||
        (g = memalign(128, 700)) == NULL)
        return 0;
    if ((grown = reallocarray(b, 30, 100)) == NULL)
        return 0;
    b = grown;
    memset(a, 1, 3000);
    memset(b, 2, 3000);
    free(a);
    free(b);
    free(d);
    free(f);
    free(g);
    return 1;
}

int memtest_prepare(memtest *t, const char *name, size_t count, size_t bytes, bench_op *fn,
                    bench_error *e)
{
    memset(t, 0, sizeof(*t));
    t->count = count;
    t->bytes = bytes;
    if (strcmp(name, "stack") == 0) {
        /* Up to 16 MiB in all: deeper than the 8 MiB region, to test its guard. */
        if (count < 1 || count > 65536 || bytes < 16 || bytes > (64u << 10) ||
            count * bytes > (16u << 20))
            return fail(e, ERR_VALUE, "stack test: depth 1..65536, bytes 16..64 KiB, at "
                                      "most 16 MiB in all");
        *fn = op_stack;
    } else if (strcmp(name, "heap") == 0 || strcmp(name, "heap-churn") == 0) {
        if (count < 1 || count > MEMTEST_MAX_BLOCKS || bytes < 1 || bytes > (16u << 20))
            return fail(e, ERR_VALUE, "heap test: 1..%u blocks of 1..16 MiB",
                        MEMTEST_MAX_BLOCKS);
        *fn = name[4] == '\0' ? op_heap : op_heap_churn;
    } else if (strcmp(name, "allocators") == 0) {
        *fn = op_allocators;
    } else if (strcmp(name, "empty") == 0) {
        *fn = memtest_empty;
    } else {
        return fail(e, ERR_VALUE, "unknown memory test %s (stack, heap, heap-churn, "
                                  "allocators, empty)", name);
    }
    return 1;
}

int memtest_empty(void *c)
{
    (void)c;
    return 1;
}

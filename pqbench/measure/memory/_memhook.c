/*
 * pqbench's allocator interposer: counts the heap of one call, on one thread, on request.
 *
 * Loaded with LD_PRELOAD into pqbench's memory worker process (pqbench/measure/memory/worker.py),
 * it replaces malloc, calloc, realloc, reallocarray, free, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc, as glibc's manual allows ("Replacing malloc"), and passes
 * every call on to the next definition (dlsym(RTLD_NEXT), i.e. glibc's allocator). Why an
 * interposer and not the libraries' hooks: liboqs calls malloc directly, and OpenSSL's
 * CRYPTO_set_mem_functions only works before libcrypto's first allocation, which a Python
 * process has long passed when pqbench runs (hashlib and ssl load libcrypto at start-up).
 *
 * It counts nothing until the measuring thread arms it (pqbench_memhook_arm), and then
 * only that thread's calls (a thread-local flag), until pqbench_memhook_disarm. While
 * armed it records each block the call allocates with the size the call REQUESTED (not
 * malloc_usable_size: the figure is the library's demand, independent of the allocator's
 * rounding, as valgrind's DHAT and massif's "useful heap" count it), and reports:
 *
 *   peak         the most bytes allocated during the call and not yet freed, at any time
 *   total        bytes requested by the call in all
 *   allocations  successful allocating calls; a realloc counts as one (as DHAT counts it)
 *   frees        frees of blocks the call allocated (blocks allocated before the call and
 *                freed by it do not lower the figures: they are not the call's demand)
 *   overflow     1 if more blocks were live at once than the table holds (the figures
 *                are then incomplete and pqbench reports an error instead)
 *
 * Growing a block the call did not allocate (realloc of an older block) counts the new
 * block's whole size. The bookkeeping allocates nothing: the table is static.
 *
 * Not a Python module: setup.py builds it like one only to compile it with the extension.
 */
#define _GNU_SOURCE /* RTLD_NEXT */

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void *(*valloc_fn)(size_t);

static malloc_fn next_malloc;
static calloc_fn next_calloc;
static realloc_fn next_realloc;
static free_fn next_free;
static posix_memalign_fn next_posix_memalign;
static memalign_fn next_aligned_alloc, next_memalign;
static valloc_fn next_valloc, next_pvalloc;

/* --- start-up: allocations made while dlsym itself runs come from a static buffer ---- */

static _Alignas(64) unsigned char g_boot[64 * 1024];
static size_t g_boot_used;
static int g_resolving;

static int from_boot(const void *p)
{
    return (const unsigned char *)p >= g_boot && (const unsigned char *)p < g_boot + sizeof(g_boot);
}

static void *boot_alloc(size_t n)
{
    size_t start = (g_boot_used + 63) & ~(size_t)63;

    if (n > sizeof(g_boot) - start)
        return NULL;
    g_boot_used = start + n;
    return g_boot + start; /* static storage: already zero, as calloc needs */
}

static void resolve(void)
{
    g_resolving = 1;
    *(void **)&next_malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&next_calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&next_realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&next_free = dlsym(RTLD_NEXT, "free");
    *(void **)&next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    *(void **)&next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    *(void **)&next_memalign = dlsym(RTLD_NEXT, "memalign");
    *(void **)&next_valloc = dlsym(RTLD_NEXT, "valloc");
    *(void **)&next_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    g_resolving = 0;
}

__attribute__((constructor)) static void memhook_init(void)
{
    if (next_malloc == NULL)
        resolve();
}

/* --- the counter: one armed thread, a static table of the call's live blocks --------- */

/* initial-exec: a preloaded library has static TLS, so reading the flag never allocates. */
static __thread int t_armed __attribute__((tls_model("initial-exec")));
static atomic_int g_owned;

#define SLOTS (1u << 16)
#define MAX_LIVE (SLOTS / 4 * 3)

typedef struct {
    uintptr_t ptr; /* 0: empty */
    uint64_t size;
} slot;

static slot g_table[SLOTS];
static uint64_t g_live, g_peak, g_total, g_allocations, g_frees, g_count, g_overflow;

static uint32_t slot_of(uintptr_t p)
{
    return (uint32_t)(((uint64_t)p * UINT64_C(0x9E3779B97F4A7C15)) >> 48) & (SLOTS - 1);
}

static void table_put(uintptr_t p, uint64_t size)
{
    uint32_t i = slot_of(p);

    while (g_table[i].ptr != 0 && g_table[i].ptr != p)
        i = (i + 1) & (SLOTS - 1);
    if (g_table[i].ptr == 0) {
        if (g_count >= MAX_LIVE) {
            g_overflow = 1;
            return;
        }
        g_count++;
    }
    g_table[i].ptr = p;
    g_table[i].size = size;
}

/* Remove p (linear probing with backward-shift deletion); 1 and its size if it was ours. */
static int table_take(uintptr_t p, uint64_t *size)
{
    uint32_t i = slot_of(p), j, home;

    while (g_table[i].ptr != p) {
        if (g_table[i].ptr == 0)
            return 0;
        i = (i + 1) & (SLOTS - 1);
    }
    *size = g_table[i].size;
    g_count--;
    for (j = (i + 1) & (SLOTS - 1); g_table[j].ptr != 0; j = (j + 1) & (SLOTS - 1)) {
        home = slot_of(g_table[j].ptr);
        /* Move j back into the hole at i unless its home lies cyclically in (i, j]. */
        if (((j - home) & (SLOTS - 1)) >= ((j - i) & (SLOTS - 1))) {
            g_table[i] = g_table[j];
            i = j;
        }
    }
    g_table[i].ptr = 0;
    g_table[i].size = 0;
    return 1;
}

static void note_alloc(void *p, size_t n)
{
    if (p == NULL)
        return;
    g_allocations++;
    g_total += n;
    g_live += n;
    if (g_live > g_peak)
        g_peak = g_live;
    table_put((uintptr_t)p, n);
}

static void note_free(void *p)
{
    uint64_t size;

    if (p != NULL && table_take((uintptr_t)p, &size)) {
        g_live -= size;
        g_frees++;
    }
}

EXPORT int pqbench_memhook_arm(void)
{
    int expected = 0;

    if (!atomic_compare_exchange_strong(&g_owned, &expected, 1))
        return 0;
    g_live = g_peak = g_total = g_allocations = g_frees = g_overflow = 0;
    t_armed = 1;
    return 1;
}

/* out: peak, total, allocations, frees, overflow. */
EXPORT void pqbench_memhook_disarm(uint64_t out[5])
{
    t_armed = 0;
    out[0] = g_peak;
    out[1] = g_total;
    out[2] = g_allocations;
    out[3] = g_frees;
    out[4] = g_overflow;
    if (g_count != 0) { /* blocks the call kept: forget them for the next call */
        memset(g_table, 0, sizeof(g_table));
        g_count = 0;
    }
    atomic_store(&g_owned, 0);
}

/* --- the replaced functions ----------------------------------------------------------- */

EXPORT void *malloc(size_t n)
{
    void *p;

    if (next_malloc == NULL) {
        if (g_resolving)
            return boot_alloc(n);
        resolve();
    }
    p = next_malloc(n);
    if (t_armed)
        note_alloc(p, n);
    return p;
}

EXPORT void *calloc(size_t count, size_t n)
{
    void *p;

    if (n != 0 && count > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    if (next_calloc == NULL) {
        if (g_resolving)
            return boot_alloc(count * n);
        resolve();
    }
    p = next_calloc(count, n);
    if (t_armed)
        note_alloc(p, count * n);
    return p;
}

EXPORT void free(void *p)
{
    if (p == NULL || from_boot(p))
        return;
    if (t_armed)
        note_free(p);
    if (next_free == NULL)
        resolve();
    next_free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
    void *q;

    if (p != NULL && from_boot(p)) { /* a start-up block moves to the real heap */
        size_t left = (size_t)(g_boot + sizeof(g_boot) - (unsigned char *)p);

        q = malloc(n);
        if (q != NULL)
            memcpy(q, p, n < left ? n : left);
        return q;
    }
    if (next_realloc == NULL) {
        if (g_resolving)
            return p == NULL ? boot_alloc(n) : NULL;
        resolve();
    }
    q = next_realloc(p, n);
    if (t_armed && (q != NULL || (p != NULL && n == 0))) {
        note_free(p);
        note_alloc(q, n);
    }
    return q;
}

EXPORT void *reallocarray(void *p, size_t count, size_t n)
{
    if (n != 0 && count > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, count * n);
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t n)
{
    int rc;

    if (next_posix_memalign == NULL)
        resolve();
    rc = next_posix_memalign(out, alignment, n);
    if (rc == 0 && t_armed)
        note_alloc(*out, n);
    return rc;
}

EXPORT void *aligned_alloc(size_t alignment, size_t n)
{
    void *p;

    if (next_aligned_alloc == NULL)
        resolve();
    p = next_aligned_alloc(alignment, n);
    if (t_armed)
        note_alloc(p, n);
    return p;
}

EXPORT void *memalign(size_t alignment, size_t n)
{
    void *p;

    if (next_memalign == NULL)
        resolve();
    p = next_memalign(alignment, n);
    if (t_armed)
        note_alloc(p, n);
    return p;
}

EXPORT void *valloc(size_t n)
{
    void *p;

    if (next_valloc == NULL)
        resolve();
    p = next_valloc(n);
    if (t_armed)
        note_alloc(p, n);
    return p;
}

EXPORT void *pvalloc(size_t n)
{
    void *p;

    if (next_pvalloc == NULL)
        resolve();
    p = next_pvalloc(n);
    if (t_armed)
        note_alloc(p, n);
    return p;
}

/*
 * Memory per call: the peak stack and heap of ONE call of a prepared operation (see
 * native.h and pqbench/measure/memory/__init__.py for the method as users read it).
 *
 * Stack. The call runs on a stack pqbench maps and paints: an 8 MiB region (plus 1 MiB
 * of PROT_NONE guard below it) filled with a 64-bit pattern, entered with
 * makecontext/swapcontext. The context switch keeps the calling thread, so the thread
 * state the preparation warmed up (OpenSSL's per-thread DRBG and error queue, liboqs's
 * CPU dispatch) is the state the call sees, as in the timing loop; a fresh thread would
 * charge those one-time set-ups to the call. Afterwards the lowest word that no longer
 * holds the pattern is the high-water mark. The harness's own frames (the makecontext
 * trampoline, the entry function, arming the heap counter, an empty call) are measured
 * the same way once per process, with an empty operation, and subtracted.
 *
 * Heap. Counted by pqbench's allocator interposer (pqbench/measure/memory/_memhook.c), which the
 * measurement worker process is started with (LD_PRELOAD). It exports three functions;
 * when the process has them, the call is bracketed by arm/disarm on this thread and the
 * interposer reports the peak of bytes requested by the call and still live, the bytes
 * requested in all, and the number of allocations. Without them only the stack is
 * measured and heap_counted is 0.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, RTLD_DEFAULT */

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "native.h"

#define MEM_STACK_BYTES ((size_t)8 << 20)
/*
 * Below the stack, a PROT_NONE guard: a call that runs past the region faults. 1 MiB, not
 * one page, so that a single large frame cannot step over it into other memory.
 */
#define MEM_GUARD_BYTES ((size_t)1 << 20)
/* Not a value code writes by accident: neither 0, nor -1, nor a small integer or pointer. */
#define PAINT UINT64_C(0xC5A1D0E5B3F04A97)

/*
 * The interposer's API (pqbench/measure/memory/_memhook.c); out[] as MEMHOOK_* below. Errors of
 * this file start with "memory measurement" (pqbench/measure/memory/worker.py tells them apart
 * from a failed correctness check by that).
 */
typedef int (*memhook_arm_fn)(void);
typedef void (*memhook_disarm_fn)(uint64_t out[5]);
enum { MEMHOOK_PEAK, MEMHOOK_TOTAL, MEMHOOK_ALLOCATIONS, MEMHOOK_FREES, MEMHOOK_OVERFLOW };

typedef struct {
    memhook_arm_fn arm;
    memhook_disarm_fn disarm;
} memhook;

/* One measurement at a time per process: the region and the contexts are shared. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *g_region; /* the guard, then the stack */
static uint64_t g_baseline; /* the harness's own stack bytes; 0 until measured */
static int g_have_baseline;

typedef struct {
    bench_op op;
    void *ctx;
    const memhook *hook;
    int ok, armed;
    uint64_t heap[5];
    ucontext_t caller, callee;
} mem_call;

static mem_call g_call;

static memhook hook_lookup(void)
{
    memhook h = {NULL, NULL};

    *(void **)&h.arm = dlsym(RTLD_DEFAULT, "pqbench_memhook_arm");
    *(void **)&h.disarm = dlsym(RTLD_DEFAULT, "pqbench_memhook_disarm");
    if (h.arm == NULL || h.disarm == NULL)
        h.arm = NULL, h.disarm = NULL;
    return h;
}

int mem_heap_available(void)
{
    return hook_lookup().arm != NULL;
}

static int region_map(bench_error *e)
{
    void *p;

    if (g_region != NULL)
        return 1;
    p = mmap(NULL, MEM_GUARD_BYTES + MEM_STACK_BYTES, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return fail(e, ERR_OS, "memory measurement: cannot map the %zu-byte stack",
                    MEM_STACK_BYTES);
    if (mprotect(p, MEM_GUARD_BYTES, PROT_NONE) != 0) {
        munmap(p, MEM_GUARD_BYTES + MEM_STACK_BYTES);
        return fail(e, ERR_OS, "memory measurement: cannot protect the stack's guard");
    }
    g_region = p;
    return 1;
}

/* Runs on the painted stack: everything here is part of the subtracted baseline. */
static void mem_entry(void)
{
    mem_call *c = &g_call;

    if (c->hook->arm != NULL)
        c->armed = c->hook->arm();
    c->ok = c->op(c->ctx);
    if (c->armed)
        c->hook->disarm(c->heap);
    /* Returning resumes uc_link, the caller's context. */
}

static void paint(uint64_t *from, uint64_t *to)
{
    for (volatile uint64_t *w = from; w < to; w++)
        *w = PAINT;
}

/* Bytes from the top of the region down to the lowest word no longer painted. */
static uint64_t high_water(const uint64_t *from, const uint64_t *to)
{
    for (const uint64_t *w = from; w < to; w++)
        if (*w != PAINT)
            return (uint64_t)((const unsigned char *)to - (const unsigned char *)w);
    return 0;
}

/* One call of op on the painted stack; raw stack bytes, heap figures in c->heap. */
static int call_painted(bench_op op, void *ctx, const memhook *hook, uint64_t *raw,
                        bench_error *e)
{
    uint64_t *bottom = (uint64_t *)(void *)(g_region + MEM_GUARD_BYTES);
    uint64_t *top = bottom + MEM_STACK_BYTES / sizeof(uint64_t);
    mem_call *c = &g_call;

    memset(c->heap, 0, sizeof(c->heap));
    c->op = op;
    c->ctx = ctx;
    c->hook = hook;
    c->ok = 0;
    c->armed = 0;
    /* Paint first: makecontext writes the trampoline's frame at the top of the stack. */
    paint(bottom, top);
    if (getcontext(&c->callee) != 0)
        return fail(e, ERR_OS, "memory measurement: getcontext failed");
    c->callee.uc_stack.ss_sp = bottom;
    c->callee.uc_stack.ss_size = MEM_STACK_BYTES;
    c->callee.uc_link = &c->caller;
    makecontext(&c->callee, mem_entry, 0);
    if (swapcontext(&c->caller, &c->callee) != 0)
        return fail(e, ERR_OS, "memory measurement: swapcontext failed");
    *raw = high_water(bottom, top);
    if (hook->arm != NULL && !c->armed)
        return fail(e, ERR_RUNTIME,
                    "memory measurement: the heap counter is armed by another thread");
    if (c->heap[MEMHOOK_OVERFLOW])
        return fail(e, ERR_RUNTIME,
                    "memory measurement: the call held more blocks at once than the heap "
                    "counter tracks");
    return 1;
}

static int op_empty(void *c)
{
    (void)c;
    return 1;
}

static int baseline(const memhook *hook, bench_error *e)
{
    uint64_t raw = 0;

    if (g_have_baseline)
        return 1;
    if (!call_painted(op_empty, NULL, hook, &raw, e))
        return 0;
    g_baseline = raw;
    g_have_baseline = 1;
    return 1;
}

static void range_add(mem_range *r, uint64_t value, int first)
{
    if (first || value < r->min)
        r->min = value;
    if (first || value > r->max)
        r->max = value;
}

int mem_measure(bench_op op, void *ctx, mem_result *out, bench_error *e)
{
    memhook hook = hook_lookup();
    uint64_t raw = 0;
    int ok, first = out->calls == 0;

    pthread_mutex_lock(&g_lock);
    ok = region_map(e) && baseline(&hook, e) && call_painted(op, ctx, &hook, &raw, e);
    if (ok && !g_call.ok)
        ok = fail(e, ERR_RUNTIME, "memory measurement: the measured call failed");
    if (ok) {
        range_add(&out->stack, raw > g_baseline ? raw - g_baseline : 0, first);
        range_add(&out->heap, g_call.heap[MEMHOOK_PEAK], first);
        range_add(&out->total, g_call.heap[MEMHOOK_TOTAL], first);
        range_add(&out->allocations, g_call.heap[MEMHOOK_ALLOCATIONS], first);
        out->calls++;
        out->harness_stack_bytes = g_baseline;
        out->heap_counted = hook.arm != NULL;
    }
    pthread_mutex_unlock(&g_lock);
    return ok;
}

int mem_runner(bench_op op, void *ctx, void *arg, bench_error *e)
{
    return mem_measure(op, ctx, (mem_result *)arg, e);
}

/*
 * The timed loop: errors, the monotonic clock, the cycle counter and the one loop every
 * operation goes through (see native.h).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <openssl/err.h>

#include "native.h"

int fail(bench_error *e, error_kind kind, const char *fmt, ...)
{
    va_list ap;

    e->kind = kind;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return 0;
}

int fail_ssl(bench_error *e, const char *what)
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
 * The CPU time the calling thread got (CLOCK_THREAD_CPUTIME_ID), read at the loop's start
 * and end beside the monotonic clock: on a busy machine the thread is descheduled for part
 * of the window, which the monotonic clock counts and this clock does not. Read outside
 * the loop, the setup and check before it would count too.
 */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The cycle counter. On x86-64 rdtsc counts reference cycles: with an invariant TSC it
 * ticks at a constant rate whatever the core frequency, so it is NOT core cycles. On
 * aarch64 cntvct_el0 is the generic timer (usually tens of MHz), also a constant-rate
 * tick. Elsewhere there is no counter and cycles are reported as None.
 */
#if defined(__x86_64__)
const int HAVE_COUNTER = 1;
const char *const COUNTER_NAME = "rdtsc (reference cycles)";
static inline uint64_t read_counter(void)
{
    uint32_t lo, hi;

    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
const int HAVE_COUNTER = 1;
const char *const COUNTER_NAME = "cntvct_el0 (timer ticks)";
static inline uint64_t read_counter(void)
{
    uint64_t v;

    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}
#else
const int HAVE_COUNTER = 0;
const char *const COUNTER_NAME = NULL;
static inline uint64_t read_counter(void) { return 0; }
#endif

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
 * (noop_loop below), the loop plus the indirect call cost ~1-2 ns per op on x86-64, negligible
 * against the cheapest op timed here (a 16-byte digest, ~100 ns).
 */
int timed_loop(bench_op op, void *ctx, uint64_t target_ns, loop_result *out)
{
    uint64_t batch = 1, ops = 0;
    uint64_t t_start, t_batch, t_now, c_start, c_end, cpu_start;

    cpu_start = thread_cpu_ns();
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
    out->cpu_ns = thread_cpu_ns() - cpu_start;
    out->ops = ops;
    out->elapsed_ns = t_now - t_start;
    out->ticks = c_end - c_start;
    return 1;
}

int seconds_ok(double seconds, bench_error *e)
{
    if (!(seconds > 0.0) || !isfinite(seconds) || seconds > MAX_SECONDS)
        return fail(e, ERR_VALUE, "seconds must be > 0 and <= %.0f, got %g", MAX_SECONDS,
                    seconds);
    return 1;
}

int run_timed(bench_op op, void *ctx, double seconds, loop_result *r, bench_error *e,
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

/* A no-op through the same loop: the loop's own cost per op (for the overhead claim). */
static volatile uint64_t g_noop_sink;

static int op_noop(void *c)
{
    (void)c;
    g_noop_sink++;
    return 1;
}


void noop_loop(double seconds, loop_result *r)
{
    timed_loop(op_noop, NULL, (uint64_t)(seconds * 1e9), r);
}

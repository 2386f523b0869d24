#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first: pyconfig.h sets _GNU_SOURCE, needed for dladdr */

/*
 * The Python module: argument parsing, the GIL and exceptions around the C benchmarks
 * (see native.h). The only file that includes Python.h.
 */
#include <dlfcn.h>
#include <stdint.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "native.h"

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
        return Py_BuildValue("(KKKK)", (unsigned long long)r->ops,
                             (unsigned long long)r->elapsed_ns, (unsigned long long)r->ticks,
                             (unsigned long long)r->cpu_ns);
    return Py_BuildValue("(KKOK)", (unsigned long long)r->ops,
                         (unsigned long long)r->elapsed_ns, Py_None,
                         (unsigned long long)r->cpu_ns);
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
    return PyUnicode_FromString(oqs_version());
}

static int lens_ok(const Py_ssize_t *in, size_t *out, int n, const char *const *names,
                   bench_error *e)
{
    for (int i = 0; i < n; i++) {
        if (in[i] <= 0 || in[i] > (Py_ssize_t)MAX_OQS_LEN)
            return fail(e, ERR_VALUE, "%s must be in 1..%u, got %zd", names[i], MAX_OQS_LEN,
                        in[i]);
        out[i] = (size_t)in[i];
    }
    return 1;
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
    noop_loop(seconds, &r);
    Py_END_ALLOW_THREADS
    return result_tuple(&r);
}

/* --- memory per call (memory.c) ---------------------------------------------------- */

/* The figures as a dict: keys as in pqbench/timing/native.py's MemoryProbe. */
static PyObject *mem_dict(const mem_result *m)
{
    return Py_BuildValue("{s:I,s:K,s:O,s:(KK),s:(KK),s:(KK),s:(KK)}", "calls", m->calls,
                         "harness_stack_bytes", (unsigned long long)m->harness_stack_bytes,
                         "heap_counted", m->heap_counted ? Py_True : Py_False,
                         "stack_bytes", (unsigned long long)m->stack.min,
                         (unsigned long long)m->stack.max,
                         "heap_bytes", (unsigned long long)m->heap.min,
                         (unsigned long long)m->heap.max,
                         "heap_total_bytes", (unsigned long long)m->total.min,
                         (unsigned long long)m->total.max,
                         "allocations", (unsigned long long)m->allocations.min,
                         (unsigned long long)m->allocations.max);
}

static int calls_ok(Py_ssize_t calls, bench_error *e)
{
    if (calls < 1 || calls > (Py_ssize_t)MEM_MAX_CALLS)
        return fail(e, ERR_VALUE, "calls must be in 1..%u, got %zd", MEM_MAX_CALLS, calls);
    return 1;
}

static PyObject *py_mem_heap_available(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(mem_heap_available());
}

/* How much of an operation to run: timed for `seconds`, or `calls` single calls measured for
 * memory (memory.c), each on fresh keys and inputs. */
typedef struct {
    int timed;
    double seconds;
    Py_ssize_t calls;
} budget;

static int budget_ok(const budget *how, bench_error *e)
{
    return how->timed ? seconds_ok(how->seconds, e) : calls_ok(how->calls, e);
}

static PyObject *budget_result(int ok, const budget *how, const loop_result *r,
                               const mem_result *m, const bench_error *e)
{
    if (!ok)
        return raise_error(e);
    return how->timed ? result_tuple(r) : mem_dict(m);
}

/* --- liboqs (oqs.c): oqs_kem, oqs_sig, mem_oqs_kem and mem_oqs_sig -------------------- */

static const char *const KEM_LENS[4] = {"pk_len", "sk_len", "ct_len", "ss_len"};
static const char *const SIG_LENS[4] = {"pk_len", "sk_len", "sig_len_max", "msg_len"};

/* (alg, op, seconds or calls, then the four lengths liboqs-python's object gave; a
 * signature's msg_len defaults to 32): check, then run without the GIL. */
static PyObject *oqs_entry(PyObject *args, PyObject *kw, const char *fname, int is_kem,
                           int timed)
{
    const char *const *names = is_kem ? KEM_LENS : SIG_LENS;
    char *kwlist[] = {"alg", "op", timed ? "seconds" : "calls", (char *)names[0],
                      (char *)names[1], (char *)names[2], (char *)names[3], NULL};
    char format[48];
    const char *alg, *op;
    budget how = {timed, 0, 0};
    Py_ssize_t lens_in[4] = {0, 0, 0, 32};
    size_t lens[4];
    oqs_api api;
    bench_error e = {0};
    loop_result r = {0};
    mem_result m = {0};
    int ok;

    snprintf(format, sizeof(format), "ss%cnnn%sn:%s", timed ? 'd' : 'n', is_kem ? "" : "|",
             fname);
    ok = timed ? PyArg_ParseTupleAndKeywords(args, kw, format, kwlist, &alg, &op, &how.seconds,
                                             &lens_in[0], &lens_in[1], &lens_in[2], &lens_in[3])
               : PyArg_ParseTupleAndKeywords(args, kw, format, kwlist, &alg, &op, &how.calls,
                                             &lens_in[0], &lens_in[1], &lens_in[2], &lens_in[3]);
    if (!ok)
        return NULL;
    if (!oqs_snapshot(&api, &e) || !budget_ok(&how, &e) || !lens_ok(lens_in, lens, 4, names, &e))
        return raise_error(&e);
    Py_BEGIN_ALLOW_THREADS
    if (timed)
        ok = oqs_run(&api, is_kem, alg, op, how.seconds, lens, &r, &e);
    for (Py_ssize_t i = 0; !timed && ok && i < how.calls; i++)
        ok = oqs_with(&api, is_kem, alg, op, lens, mem_runner, &m, &e);
    Py_END_ALLOW_THREADS
    return budget_result(ok, &how, &r, &m, &e);
}

static PyObject *py_oqs_kem(PyObject *s, PyObject *a, PyObject *k) { return oqs_entry(a, k, "oqs_kem", 1, 1); }
static PyObject *py_oqs_sig(PyObject *s, PyObject *a, PyObject *k) { return oqs_entry(a, k, "oqs_sig", 0, 1); }
static PyObject *py_mem_oqs_kem(PyObject *s, PyObject *a, PyObject *k) { return oqs_entry(a, k, "mem_oqs_kem", 1, 0); }
static PyObject *py_mem_oqs_sig(PyObject *s, PyObject *a, PyObject *k) { return oqs_entry(a, k, "mem_oqs_sig", 0, 0); }

/* --- the system libcrypto (pk.c, evp.c): ssl_pk, ssl_cipher, ssl_digest, mem_ssl_pk ----- */

enum ssl_kind { SSL_PK, SSL_CIPHER, SSL_DIGEST };

typedef union {
    pk_bench pk;
    cipher_bench cipher;
    digest_bench digest;
} ssl_bench;

static int ssl_prepare(ssl_bench *b, enum ssl_kind kind, const char *name, const char *op,
                       size_t block, bench_op *fn, bench_error *e)
{
    switch (kind) {
    case SSL_PK:
        return pk_prepare(&b->pk, name, op, fn, e);
    case SSL_CIPHER:
        if (!cipher_prepare(&b->cipher, name, op, block, e))
            return 0;
        *fn = cipher_op(&b->cipher);
        return 1;
    default:
        if (!digest_prepare(&b->digest, name, block, e))
            return 0;
        *fn = op_digest;
        return 1;
    }
}

static void ssl_free(ssl_bench *b, enum ssl_kind kind)
{
    if (kind == SSL_PK)
        pk_bench_free(&b->pk);
    else if (kind == SSL_CIPHER)
        cipher_bench_free(&b->cipher);
    else
        digest_bench_free(&b->digest);
}

/* ssl_pk(alg, op, seconds), ssl_cipher(name, op, block_size, seconds),
 * ssl_digest(name, block_size, seconds) and mem_ssl_pk(alg, op, calls): check, then prepare
 * and run without the GIL (for memory, each call on fresh keys and inputs). */
static PyObject *ssl_entry(PyObject *args, PyObject *kw, enum ssl_kind kind, int timed)
{
    static char *pk_kw[] = {"alg", "op", "seconds", NULL};
    static char *mem_kw[] = {"alg", "op", "calls", NULL};
    static char *cipher_kw[] = {"name", "op", "block_size", "seconds", NULL};
    static char *digest_kw[] = {"name", "block_size", "seconds", NULL};
    const char *name, *op = "";
    Py_ssize_t block = 1;
    budget how = {timed, 0, 0};
    bench_error e = {0};
    loop_result r = {0};
    mem_result m = {0};
    int ok;

    ok = !timed ? PyArg_ParseTupleAndKeywords(args, kw, "ssn:mem_ssl_pk", mem_kw, &name, &op,
                                              &how.calls)
       : kind == SSL_PK ? PyArg_ParseTupleAndKeywords(args, kw, "ssd:ssl_pk", pk_kw, &name, &op,
                                                      &how.seconds)
       : kind == SSL_CIPHER
           ? PyArg_ParseTupleAndKeywords(args, kw, "ssnd:ssl_cipher", cipher_kw, &name, &op,
                                         &block, &how.seconds)
           : PyArg_ParseTupleAndKeywords(args, kw, "snd:ssl_digest", digest_kw, &name, &block,
                                         &how.seconds);
    if (!ok)
        return NULL;
    if (!budget_ok(&how, &e))
        return raise_error(&e);
    if (block <= 0)
        return PyErr_Format(PyExc_ValueError, "block_size must be > 0, got %zd", block);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; ok && i < (timed ? 1 : how.calls); i++) {
        ssl_bench b;
        bench_op fn = NULL;

        memset(&b, 0, sizeof(b));
        ERR_clear_error();
        ok = ssl_prepare(&b, kind, name, op, (size_t)block, &fn, &e) &&
             (timed ? run_timed(fn, &b, how.seconds, &r, &e, name) : mem_measure(fn, &b, &m, &e));
        ssl_free(&b, kind);
    }
    ERR_clear_error();
    Py_END_ALLOW_THREADS
    return budget_result(ok, &how, &r, &m, &e);
}

static PyObject *py_ssl_pk(PyObject *s, PyObject *a, PyObject *k) { return ssl_entry(a, k, SSL_PK, 1); }
static PyObject *py_ssl_cipher(PyObject *s, PyObject *a, PyObject *k) { return ssl_entry(a, k, SSL_CIPHER, 1); }
static PyObject *py_ssl_digest(PyObject *s, PyObject *a, PyObject *k) { return ssl_entry(a, k, SSL_DIGEST, 1); }
static PyObject *py_mem_ssl_pk(PyObject *s, PyObject *a, PyObject *k) { return ssl_entry(a, k, SSL_PK, 0); }

static PyObject *py_mem_test(PyObject *self, PyObject *args)
{
    const char *name;
    Py_ssize_t count, bytes, calls = 1;
    memtest *t;
    bench_error e = {0};
    mem_result m = {0};
    bench_op fn = NULL;
    int ok;

    if (!PyArg_ParseTuple(args, "snn|n:_mem_test", &name, &count, &bytes, &calls))
        return NULL;
    if (count < 0 || bytes < 0)
        return PyErr_Format(PyExc_ValueError, "count and bytes must not be negative");
    if (!calls_ok(calls, &e))
        return raise_error(&e);
    if ((t = PyMem_RawMalloc(sizeof(*t))) == NULL)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    ok = memtest_prepare(t, name, (size_t)count, (size_t)bytes, &fn, &e);
    for (Py_ssize_t i = 0; ok && i < calls; i++)
        ok = mem_measure(fn, t, &m, &e);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(t);
    if (!ok)
        return raise_error(&e);
    return mem_dict(&m);
}

static PyMethodDef native_methods[] = {
    {"counter_name", py_counter_name, METH_NOARGS,
     "counter_name() -> str | None: the cycle counter read around each loop, or None."},
    {"oqs_load", py_oqs_load, METH_VARARGS,
     "oqs_load(path) -> str: dlopen liboqs (the library liboqs-python loaded); its version."},
    {"oqs_kem", (PyCFunction)(void (*)(void))py_oqs_kem, METH_VARARGS | METH_KEYWORDS,
     "oqs_kem(alg, op, seconds, pk_len, sk_len, ct_len, ss_len) -> (ops, elapsed_ns, cycles, cpu_ns)"},
    {"oqs_sig", (PyCFunction)(void (*)(void))py_oqs_sig, METH_VARARGS | METH_KEYWORDS,
     "oqs_sig(alg, op, seconds, pk_len, sk_len, sig_len_max, msg_len=32) -> (ops, elapsed_ns, "
     "cycles, cpu_ns)"},
    {"ssl_version", py_ssl_version, METH_NOARGS, "ssl_version() -> str: OpenSSL_version()."},
    {"ssl_library_path", py_ssl_library_path, METH_NOARGS,
     "ssl_library_path() -> str | None: the libcrypto file this module uses."},
    {"ssl_offers", py_ssl_offers, METH_VARARGS,
     "ssl_offers(alg) -> str | None: None if libcrypto offers alg, else the reason."},
    {"ssl_pk", (PyCFunction)(void (*)(void))py_ssl_pk, METH_VARARGS | METH_KEYWORDS,
     "ssl_pk(alg, op, seconds) -> (ops, elapsed_ns, cycles, cpu_ns)"},
    {"ssl_cipher", (PyCFunction)(void (*)(void))py_ssl_cipher, METH_VARARGS | METH_KEYWORDS,
     "ssl_cipher(name, op, block_size, seconds) -> (ops, elapsed_ns, cycles, cpu_ns)"},
    {"ssl_digest", (PyCFunction)(void (*)(void))py_ssl_digest, METH_VARARGS | METH_KEYWORDS,
     "ssl_digest(name, block_size, seconds) -> (ops, elapsed_ns, cycles, cpu_ns)"},
    {"_noop", py_noop, METH_VARARGS,
     "_noop(seconds) -> (ops, elapsed_ns, cycles, cpu_ns): the loop around an empty op."},
    {"mem_heap_available", py_mem_heap_available, METH_NOARGS,
     "mem_heap_available() -> bool: whether the allocator interposer is in this process."},
    {"mem_oqs_kem", (PyCFunction)(void (*)(void))py_mem_oqs_kem, METH_VARARGS | METH_KEYWORDS,
     "mem_oqs_kem(alg, op, calls, pk_len, sk_len, ct_len, ss_len) -> dict (see native.py)"},
    {"mem_oqs_sig", (PyCFunction)(void (*)(void))py_mem_oqs_sig, METH_VARARGS | METH_KEYWORDS,
     "mem_oqs_sig(alg, op, calls, pk_len, sk_len, sig_len_max, msg_len=32) -> dict"},
    {"mem_ssl_pk", (PyCFunction)(void (*)(void))py_mem_ssl_pk, METH_VARARGS | METH_KEYWORDS,
     "mem_ssl_pk(alg, op, calls) -> dict"},
    {"_mem_test", py_mem_test, METH_VARARGS,
     "_mem_test(name, count, bytes, calls=1) -> dict: a test op of known memory use."},
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

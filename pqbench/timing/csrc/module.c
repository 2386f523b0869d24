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

/* Shared by oqs_kem and oqs_sig: prepare + check + time + free, without the GIL. */
static PyObject *run_oqs(int is_kem, const char *alg, const char *op, double seconds,
                         const Py_ssize_t lens_in[4], const char *const names[4])
{
    oqs_api api;
    bench_error e = {0};
    loop_result r = {0};
    size_t lens[4];
    int ok;

    if (!oqs_snapshot(&api, &e) || !seconds_ok(seconds, &e) ||
        !lens_ok(lens_in, lens, 4, names, &e))
        return raise_error(&e);
    Py_BEGIN_ALLOW_THREADS
    ok = oqs_run(&api, is_kem, alg, op, seconds, lens, &r, &e);
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
         run_timed(cipher_op(&b), &b, seconds, &r, &e, name);
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

static PyObject *mem_oqs(int is_kem, const char *alg, const char *op, Py_ssize_t calls,
                         const Py_ssize_t lens_in[4], const char *const names[4])
{
    oqs_api api;
    bench_error e = {0};
    mem_result m = {0};
    size_t lens[4];
    int ok;

    if (!oqs_snapshot(&api, &e) || !lens_ok(lens_in, lens, 4, names, &e) ||
        !calls_ok(calls, &e))
        return raise_error(&e);
    Py_BEGIN_ALLOW_THREADS
    ok = 1;
    for (Py_ssize_t i = 0; ok && i < calls; i++) /* each call on fresh keys and inputs */
        ok = oqs_with(&api, is_kem, alg, op, lens, mem_runner, &m, &e);
    Py_END_ALLOW_THREADS
    if (!ok)
        return raise_error(&e);
    return mem_dict(&m);
}

static PyObject *py_mem_oqs_kem(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alg", "op", "calls", "pk_len", "sk_len", "ct_len", "ss_len",
                             NULL};
    static const char *const names[4] = {"pk_len", "sk_len", "ct_len", "ss_len"};
    const char *alg, *op;
    Py_ssize_t calls, lens[4];

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssnnnnn:mem_oqs_kem", kwlist, &alg, &op,
                                     &calls, &lens[0], &lens[1], &lens[2], &lens[3]))
        return NULL;
    return mem_oqs(1, alg, op, calls, lens, names);
}

static PyObject *py_mem_oqs_sig(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alg", "op", "calls", "pk_len", "sk_len", "sig_len_max",
                             "msg_len", NULL};
    static const char *const names[4] = {"pk_len", "sk_len", "sig_len_max", "msg_len"};
    const char *alg, *op;
    Py_ssize_t calls, lens[4] = {0, 0, 0, 32};

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssnnnn|n:mem_oqs_sig", kwlist, &alg, &op,
                                     &calls, &lens[0], &lens[1], &lens[2], &lens[3]))
        return NULL;
    return mem_oqs(0, alg, op, calls, lens, names);
}

static PyObject *py_mem_ssl_pk(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"alg", "op", "calls", NULL};
    const char *alg, *op;
    Py_ssize_t calls;
    bench_error e = {0};
    mem_result m = {0};
    bench_op fn = NULL;
    int ok;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssn:mem_ssl_pk", kwlist, &alg, &op, &calls))
        return NULL;
    if (!calls_ok(calls, &e))
        return raise_error(&e);
    Py_BEGIN_ALLOW_THREADS
    ok = 1;
    for (Py_ssize_t i = 0; ok && i < calls; i++) { /* each call on fresh keys and inputs */
        pk_bench b = {0};

        ERR_clear_error();
        ok = pk_prepare(&b, alg, op, &fn, &e) && mem_measure(fn, &b, &m, &e);
        pk_bench_free(&b);
    }
    ERR_clear_error();
    Py_END_ALLOW_THREADS
    if (!ok)
        return raise_error(&e);
    return mem_dict(&m);
}

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

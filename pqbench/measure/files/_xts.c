/*
 * pqbench.measure.files._xts: disk-style AES-256-XTS in the system libcrypto, for `files corpus`.
 *
 * Not a timing loop (the corpus times the whole file write around it), which is why it
 * lives here and not in pqbench.timing. Data units are encrypted as disk encryption does
 * (IEEE 1619; dm-crypt, APFS, FileVault): unit i of `unit_size` bytes gets the tweak
 * first_unit + i, little-endian in 16 bytes. One context serves all units: the key is
 * scheduled once and only the IV changes per unit, as a kernel's XTS does.
 * pqbench/measure/files/xts.py is the typed facade and the fallback when this is not built.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <openssl/err.h>
#include <openssl/evp.h>

/* Bumped whenever a function's arguments or results change; xts.py checks it. */
#define XTS_ABI 1

/* 1 on success; on failure 0 with a Python exception set (the GIL must be held). */
static int xts_units(const unsigned char *key, const unsigned char *src, unsigned char *dst,
                     Py_ssize_t len, unsigned long long first, Py_ssize_t unit, int encrypt,
                     unsigned long *ssl_error)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = ctx != NULL &&
             EVP_CipherInit_ex(ctx, EVP_aes_256_xts(), NULL, key, NULL, encrypt) == 1;

    for (Py_ssize_t off = 0; ok && off < len; off += unit) {
        unsigned char iv[16] = {0};
        unsigned long long number = first + (unsigned long long)(off / unit);
        int written = 0;

        for (int i = 0; i < 8; i++)
            iv[i] = (unsigned char)(number >> (8 * i));
        ok = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1) == 1 &&
             EVP_CipherUpdate(ctx, dst + off, &written, src + off, (int)unit) == 1 &&
             written == unit;
    }
    EVP_CIPHER_CTX_free(ctx);
    *ssl_error = ok ? 0 : ERR_get_error();
    ERR_clear_error();
    return ok;
}

static PyObject *py_xts_units(PyObject *self, PyObject *args)
{
    Py_buffer key, data;
    unsigned long long first;
    Py_ssize_t unit;
    int encrypt, ok = 0;
    unsigned long code = 0;
    PyObject *out = NULL;

    if (!PyArg_ParseTuple(args, "y*y*Knp:xts_units", &key, &data, &first, &unit, &encrypt))
        return NULL;
    if (key.len != 64)
        PyErr_SetString(PyExc_ValueError, "AES-256-XTS takes a 64-byte key (two AES-256 keys)");
    else if (unit < 16 || unit > (1 << 24) || data.len % unit != 0)
        PyErr_SetString(PyExc_ValueError, "data must be whole units of 16 bytes to 16 MiB");
    else if ((out = PyBytes_FromStringAndSize(NULL, data.len)) != NULL) {
        unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(out);

        Py_BEGIN_ALLOW_THREADS
        ok = xts_units(key.buf, data.buf, dst, data.len, first, unit, encrypt, &code);
        Py_END_ALLOW_THREADS
        if (!ok) {
            char reason[256] = "no error reported by libcrypto";

            if (code != 0)
                ERR_error_string_n(code, reason, sizeof(reason));
            Py_CLEAR(out);
            PyErr_Format(PyExc_RuntimeError, "AES-256-XTS failed: %s", reason);
        }
    }
    PyBuffer_Release(&key);
    PyBuffer_Release(&data);
    return out;
}

static PyMethodDef xts_methods[] = {
    {"xts_units", py_xts_units, METH_VARARGS,
     "xts_units(key, data, first_unit, unit_size, encrypt) -> bytes: disk-style "
     "AES-256-XTS, tweak = unit number (IEEE 1619)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef xts_module = {
    PyModuleDef_HEAD_INIT,
    "pqbench.measure.files._xts",
    "Disk-style AES-256-XTS in the system libcrypto (see pqbench.measure.files.xts).",
    -1,
    xts_methods,
};

PyMODINIT_FUNC PyInit__xts(void)
{
    PyObject *m = PyModule_Create(&xts_module);

    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", XTS_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

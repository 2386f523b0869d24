/*
 * libcrypto ciphers and digests, as `openssl speed -evp NAME` times them (see native.h).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "native.h"

#define MAX_BLOCK_SIZE (64u << 20)

/* The IV is all zeros, as speed.c's static `iv` array. */
static const unsigned char ZERO_IV[EVP_MAX_IV_LENGTH];

void cipher_bench_free(cipher_bench *b)
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

int cipher_prepare(cipher_bench *b, const char *name, const char *op, size_t block,
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

/* speed's EVP_Digest_loop: EVP_Digest one-shot of block_size bytes with a fetched MD. */
int op_digest(void *c)
{
    digest_bench *b = c;
    return EVP_Digest(b->buf, b->len, b->digest, NULL, b->md, NULL) == 1;
}

int digest_prepare(digest_bench *b, const char *name, size_t block, bench_error *e)
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

void digest_bench_free(digest_bench *b)
{
    EVP_MD_free(b->md);
    free(b->buf);
}

/* The op the loop times for a prepared cipher: one update, or one whole (un)wrap. */
bench_op cipher_op(const cipher_bench *b)
{
    return b->wrap ? op_cipher_wrap : op_cipher_update;
}

/*
 * The hash studies' coordinator references (kernels/<study>/reference.c):
 * x = H(x) through OpenSSL's public EVP digest API, one Init/Update/Final
 * per step.  Coordinator only; no variant includes this.
 */
#ifndef SEQORCH_EVP_REFERENCE_H
#define SEQORCH_EVP_REFERENCE_H

#include "kernel.h"

#include <openssl/evp.h>
#include <stdio.h>

/* x (len bytes, the digest size of md) = md(x), steps times; 0 or -1. */
static inline int
evp_reference_chain(const EVP_MD *md, size_t len, uint8_t *x,
    uint64_t steps, volatile sig_atomic_t *stop, char *why, size_t whylen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n;
	uint64_t i;
	int rc = 0;

	if (ctx == NULL) {
		snprintf(why, whylen, "no EVP context");
		return -1;
	}
	for (i = 0; i < steps; i++) {
		if ((i & 0xffff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			rc = -1;
			break;
		}
		if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
		    EVP_DigestUpdate(ctx, x, len) != 1 ||
		    EVP_DigestFinal_ex(ctx, x, &n) != 1 || n != len) {
			snprintf(why, whylen, "OpenSSL %s failed",
			    EVP_MD_get0_name(md));
			rc = -1;
			break;
		}
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

/*
 * The message-length chain (kernel.h, KERNEL_MAX_MSG): x = md(x || zeros)
 * with msg_len-byte messages, the zeros absorbed as a part of each
 * message; 0 or -1.
 */
static inline int
evp_reference_msg_chain(const EVP_MD *md, size_t len, uint8_t *x,
    uint64_t steps, size_t msg_len, volatile sig_atomic_t *stop, char *why,
    size_t whylen)
{
	static const uint8_t zeros[1024];
	EVP_MD_CTX *ctx;
	unsigned int n;
	uint64_t i;
	size_t left, k;
	int rc = 0;

	if (msg_len < len || msg_len > KERNEL_MAX_MSG) {
		snprintf(why, whylen, "message length %zu is outside %zu..%d",
		    msg_len, len, KERNEL_MAX_MSG);
		return -1;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL) {
		snprintf(why, whylen, "no EVP context");
		return -1;
	}
	for (i = 0; i < steps && rc == 0; i++) {
		if ((i & 0xfff) == 0 && stop != NULL && *stop) {
			snprintf(why, whylen, "interrupted");
			rc = -1;
			break;
		}
		rc = EVP_DigestInit_ex(ctx, md, NULL) == 1 &&
		    EVP_DigestUpdate(ctx, x, len) == 1 ? 0 : -1;
		for (left = msg_len - len; rc == 0 && left > 0; left -= k) {
			k = left < sizeof zeros ? left : sizeof zeros;
			rc = EVP_DigestUpdate(ctx, zeros, k) == 1 ? 0 : -1;
		}
		if (rc == 0 && (EVP_DigestFinal_ex(ctx, x, &n) != 1 ||
		    n != len))
			rc = -1;
		if (rc != 0)
			snprintf(why, whylen, "OpenSSL %s failed",
			    EVP_MD_get0_name(md));
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

#endif

/* Reference chains computed with OpenSSL EVP, cached in results.db. */
#include "reference.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

static const struct ref_study {
	const char *name;
	const EVP_MD *(*md)(void);
	const char *md_name;
	size_t len;
	const char *zero_seed;
} studies[] = {
	{ "sha3", EVP_sha3_256, "EVP_sha3_256", 32,
	    "0000000000000000000000000000000000000000000000000000000000000000" },
};

static const struct ref_study *
find(const char *study)
{
	size_t i;

	for (i = 0; i < sizeof studies / sizeof studies[0]; i++)
		if (strcmp(studies[i].name, study) == 0)
			return &studies[i];
	return NULL;
}

int
reference_known(const char *study)
{
	return find(study) != NULL;
}

const char *
reference_default_seed(const char *study)
{
	const struct ref_study *s = find(study);

	return s != NULL ? s->zero_seed : NULL;
}

static int
compute(const struct ref_study *s, const uint8_t *seed, uint64_t steps,
    uint8_t *out, volatile sig_atomic_t *stop, struct so_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const EVP_MD *md = s->md();
	unsigned int n;
	uint64_t i;
	int rc = 0;

	if (ctx == NULL)
		return so_error(err, SO_ENOMEM, "reference: no EVP context");
	memcpy(out, seed, s->len);
	for (i = 0; i < steps; i++) {
		if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
		    EVP_DigestUpdate(ctx, out, s->len) != 1 ||
		    EVP_DigestFinal_ex(ctx, out, &n) != 1 || n != s->len) {
			rc = so_error(err, SO_EIO, "reference: OpenSSL %s "
			    "failed", s->md_name);
			break;
		}
		if ((i & 0xffff) == 0 && stop != NULL && *stop) {
			rc = so_error(err, SO_EINTR, "reference: interrupted");
			break;
		}
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

int
reference_get(struct db *db, const char *study, const char *seed_hex,
    uint64_t steps, char *digest, volatile sig_atomic_t *stop,
    struct so_err *err)
{
	const struct ref_study *s = find(study);
	uint8_t seed[64], out[64];
	char method[160];
	int rc;

	if (s == NULL)
		return so_error(err, SO_ENOTFOUND, "no reference "
		    "implementation for study \"%s\"", study);
	rc = db_ref_get(db, study, seed_hex, steps, digest, 129, err);
	if (rc != SO_ENOTFOUND)
		return rc;
	if (hex_decode(seed_hex, seed, s->len) != 0)
		return so_error(err, SO_EINVAL, "seed \"%s\" is not %zu bytes "
		    "of hex", seed_hex, s->len);
	if ((rc = compute(s, seed, steps, out, stop, err)) != 0)
		return rc;
	hex_encode(out, s->len, digest);
	snprintf(method, sizeof method, "%s %s", OpenSSL_version(
	    OPENSSL_VERSION), s->md_name);
	return db_ref_put(db, study, seed_hex, steps, digest, method, err);
}

/* Reference chains from each study's reference.c, cached in results.db. */
#include "reference.h"

#include "study.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

int
reference_get(struct db *db, const char *study, const char *seed_hex,
    uint64_t steps, uint64_t msg_len, char *digest,
    volatile sig_atomic_t *stop, struct so_err *err)
{
	const struct study_entry *s = study_find(study);
	uint8_t x[KERNEL_MAX_STATE];
	char method[200], why[160];
	size_t len;
	int rc;

	if (s == NULL)
		return so_error(err, SO_ENOTFOUND, "no reference "
		    "implementation for study \"%s\"", study);
	len = s->study->state_len;
	if (msg_len > 0 && s->ref->msg_chain == NULL)
		return so_error(err, SO_EINVAL, "study \"%s\" has no "
		    "message-length chain (its step hashes no message)", study);
	rc = db_ref_get(db, study, seed_hex, steps, msg_len, digest, 129, err);
	if (rc != SO_ENOTFOUND)
		return rc;
	if (strlen(seed_hex) != 2 * len || hex_decode(seed_hex, x, len) != 0)
		return so_error(err, SO_EINVAL, "seed \"%s\" is not %zu bytes "
		    "of hex", seed_hex, len);
	why[0] = '\0';
	if ((msg_len > 0 ? s->ref->msg_chain(x, steps, (size_t)msg_len, stop,
	    why, sizeof why) : s->ref->chain(x, steps, stop, why,
	    sizeof why)) != 0) {
		if (stop != NULL && *stop)
			return so_error(err, SO_EINTR, "reference: "
			    "interrupted");
		return so_error(err, SO_EIO, "reference of study \"%s\" "
		    "failed: %s", study, why);
	}
	hex_encode(x, len, digest);
	/* The library version matters for OpenSSL-based references. */
	snprintf(method, sizeof method, "%s (coordinator %s)", s->ref->method,
	    OpenSSL_version(OPENSSL_VERSION));
	return db_ref_put(db, study, seed_hex, steps, msg_len, digest, method,
	    err);
}

/*
 * The variants' checks before the window: names, setup, known answer,
 * self-test chain and their consensus.
 */
#include "variant.h"
#include "cpu.h"
#include "protocol.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

int
variant_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (list == NULL)
		return 1;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

int
variant_check_names(const char *study, const char *list, char *err,
    size_t len)
{
	const char *p = list;

	while (p != NULL && *p) {
		size_t n = strcspn(p, ","), i;
		int found = 0;
		char valid[1024] = "";

		for (i = 0; registry_kernels[i].study != NULL; i++) {
			const struct registry_kernel *r = &registry_kernels[i];

			if (strcmp(r->study, study) != 0)
				continue;
			if (strlen(r->variant) == n &&
			    strncmp(r->variant, p, n) == 0)
				found = 1;
			snprintf(valid + strlen(valid),
			    sizeof valid - strlen(valid), "%s%s",
			    valid[0] ? ", " : "", r->variant);
		}
		if (!found) {
			snprintf(err, len, "unknown variant \"%.*s\" of study "
			    "\"%s\" (valid: %s)", (int)n, p, study, valid);
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

int
variant_chain(struct slot *sl, uint8_t *x, size_t len, uint64_t steps,
    size_t msg_len)
{
	/* Zero beyond len once: each step writes only the digest part. */
	static uint8_t msg[KERNEL_MAX_MSG];
	uint64_t i;

	if (msg_len == 0)
		return sl->k->chain(sl->ctx, x, steps);
	if (sl->k->hash == NULL || msg_len < len || msg_len > sizeof msg)
		return -1;
	memset(msg, 0, msg_len);
	for (i = 0; i < steps; i++) {
		memcpy(msg, x, len);
		if (sl->k->hash(sl->ctx, msg, msg_len, x) != 0)
			return -1;
	}
	return 0;
}

void
variant_selftest(struct slot *sl, const struct study *st,
    const uint8_t *seed, size_t msg_len)
{
	const struct kernel *k = sl->k;
	unsigned missing;
	uint8_t digest[KERNEL_MAX_STATE], want[KERNEL_MAX_STATE];
	char names[128];
	size_t i;

	sl->status = PROTO_V_FAILED;
	if (k == NULL) {
		sl->status = PROTO_V_SKIPPED;
		snprintf(sl->reason, sizeof sl->reason, "%s", sl->missing);
		return;
	}
	if ((missing = k->features & ~cpu_features()) != 0) {
		cpu_feature_names(missing, names, sizeof names);
		sl->status = PROTO_V_SKIPPED;
		snprintf(sl->reason, sizeof sl->reason, "cpu lacks %s", names);
		return;
	}
	if (k->setup != NULL && k->setup(&sl->ctx) != 0) {
		sl->status = PROTO_V_SKIPPED;
		snprintf(sl->reason, sizeof sl->reason, "setup failed");
		return;
	}
	if (k->warning != NULL)
		sl->warning = k->warning(sl->ctx);
	if (st->kat_msg != NULL) {
		for (i = 0; i < st->state_len; i++) {
			unsigned v;

			sscanf(st->kat_hex + 2 * i, "%2x", &v);
			want[i] = (uint8_t)v;
		}
		if (k->hash == NULL) {
			snprintf(sl->reason, sizeof sl->reason,
			    "no known-answer hook");
			return;
		}
		if (k->hash(sl->ctx, (const uint8_t *)st->kat_msg,
		    strlen(st->kat_msg), digest) != 0 ||
		    memcmp(digest, want, st->state_len) != 0) {
			snprintf(sl->reason, sizeof sl->reason,
			    "known answer for \"%s\" is wrong", st->kat_msg);
			return;
		}
	}
	memcpy(sl->chain, seed, st->state_len);
	if (variant_chain(sl, sl->chain, st->state_len,
	    STUDY_SELFTEST_STEPS(st), msg_len) != 0) {
		snprintf(sl->reason, sizeof sl->reason, msg_len > 0 ?
		    "chain of %zu-byte messages failed" : "chain failed",
		    msg_len);
		return;
	}
	sl->status = PROTO_V_OK;
	sl->ready = 1;
}

void
variant_consensus(struct slot *sl, size_t n, size_t len, uint64_t steps,
    uint8_t *common)
{
	size_t i, j, best = 0, bestn = 0;

	for (i = 0; i < n; i++) {
		size_t votes = 0;

		if (!sl[i].ready)
			continue;
		for (j = 0; j < n; j++)
			if (sl[j].ready &&
			    memcmp(sl[i].chain, sl[j].chain, len) == 0)
				votes++;
		if (votes > bestn) {
			bestn = votes;
			best = i;
		}
	}
	if (bestn == 0)
		return;
	memcpy(common, sl[best].chain, len);
	for (i = 0; i < n; i++) {
		if (sl[i].ready && memcmp(sl[i].chain, common, len) != 0) {
			sl[i].ready = 0;
			sl[i].status = PROTO_V_FAILED;
			snprintf(sl[i].reason, sizeof sl[i].reason,
			    "%llu-step chain disagrees with the other variants",
			    (unsigned long long)steps);
		}
	}
}

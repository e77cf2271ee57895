/*
 * The seeds' protocols (repro.h): what each seed ran, as seqorch runs.
 * A part's variants are the registry's unless the seed named them, so a
 * variant added to a study (openssl-* of sha3) joins its reproduction.
 */
#include "repro.h"
#include "strbuf.h"
#include "study.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct repro_part sha3_parts[] = {
	{ .label = "chain", .study = "sha3", .samples = 3,
	  .control_uncounted = 1,
	  .note = "x = SHA3-256(x) from 32 zero bytes, every variant, "
	  "3 samples of 10M hashes, alternating order" },
	{ NULL },
};

static const struct repro_part sha512_parts[] = {
	{ .label = "tight", .study = "sha512", .variants = "openssl-transform",
	  .steps = 20000000, .samples = 2,
	  .note = "the SHA512_Transform chain, 2 runs of 20M hashes",
	  .says = "all three machines around 10^7 hashes/s, no "
	  "order-of-magnitude separation" },
	{ .label = "api", .study = "sha512", .variants = "openssl-api",
	  .steps = 10000000, .samples = 1, .control = 1,
	  .note = "the Init/Update/Final API control, 1 run of 10M",
	  .says = "the API chain slightly faster than the tight one on "
	  "Graviton5, slower on the other two" },
	{ .label = "armcap", .study = "sha512", .variants = "openssl-transform",
	  .steps = 2000000, .samples = 1, .arch = "aarch64",
	  .cap_clear = "ARMV8_SHA512", .control = 1,
	  .note = "on ARM, the tight chain with OpenSSL's ARMV8_SHA512 "
	  "capability (bit 6) cleared, the others kept, 2M hashes",
	  .says = "digests matched; no rate published" },
	{ NULL },
};

static const struct repro_part umbrella_parts[] = {
	{ .label = "mul", .study = "mul", .samples = 3,
	  .note = "multiply window: low-half mul + add + rotate-xor rounds" },
	{ .label = "sha3", .study = "sha3", .samples = 3,
	  .control_uncounted = 1,
	  .note = "SHA-3 window: seed 000's chain" },
	{ .label = "div", .study = "div", .samples = 3,
	  .note = "division window: 32- and 64-bit dependent division",
	  .says = "Graviton5's SVE and x86's best 32-bit division effectively "
	  "tied (1.2% apart); the M4's scalar division won both" },
	{ .label = "randomx", .study = "randomx", .variants = "full",
	  .first_look_variants = "light", .samples = 10,
	  .note = "RandomX window: full mode, default and native builds "
	  "interleaved (twenty samples in all)" },
	{ NULL },
};

/*
 * eBASH's lengths, each a run of its own; every sample hashes 16 MiB
 * (steps x L), about as long at every length, and 15 samples a cell give
 * the quartiles something to stand on.
 */
#define EBASH_PART(st, what, l, n) \
	{ .label = #st "-" #l, .study = #st, .samples = 15, .steps = n, \
	  .msg_len = l, .note = what ", messages of " #l " bytes: the " \
	  "previous digest then zeros, every block absorbed" }

static const struct repro_part ebash_parts[] = {
	EBASH_PART(sha3, "SHA3-256", 64, 262144),
	EBASH_PART(sha3, "SHA3-256", 576, 29127),
	EBASH_PART(sha3, "SHA3-256", 1536, 10923),
	EBASH_PART(sha3, "SHA3-256", 4096, 4096),
	EBASH_PART(sha512, "SHA-512", 64, 262144),
	EBASH_PART(sha512, "SHA-512", 576, 29127),
	EBASH_PART(sha512, "SHA-512", 1536, 10923),
	EBASH_PART(sha512, "SHA-512", 4096, 4096),
	{ NULL },
};

const struct repro repro_table[] = {
	{ "sha3", "000", "seed 000: the SHA3-256 chain, every sha3 variant, "
	  "3 x 10M hashes, alternating", sha3_parts },
	{ "sha512", "002", "seed 002: the SHA-512 chain, tight transform "
	  "2 x 20M, API control 1 x 10M, ARM capability control at 2M",
	  sha512_parts },
	{ "umbrella", "001", "seed 001: windows mul, sha3, div32 and div64, "
	  "randomx (full mode, default and native), in that order",
	  umbrella_parts },
	{ "ebash", "003", "seed 003: eBASH's cycles per byte of sha3 and "
	  "sha512 by message length (64, 576, 1536, 4096 bytes), quartiles",
	  ebash_parts },
	{ NULL, NULL, NULL, NULL },
};

const struct repro *
repro_find(const char *name)
{
	size_t i;

	for (i = 0; repro_table[i].name != NULL; i++)
		if (strcmp(repro_table[i].name, name) == 0)
			return &repro_table[i];
	return NULL;
}

/* Every variant the registry lists for study, as a comma list. */
static char *
all_variants(const char *study)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; variant_table[i].study != NULL; i++) {
		if (strcmp(variant_table[i].study, study) != 0)
			continue;
		if (sb.len > 0)
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, variant_table[i].variant);
	}
	return strbuf_detach(&sb);
}

size_t
repro_plan(const struct repro *r, uint64_t steps_cap, struct repro_run **out)
{
	const struct repro_part *p;
	const struct study_entry *se;
	const struct study_group *g;
	struct repro_run *runs = NULL, *x;
	char *list, *q, *study;
	const char *v;
	size_t n = 0;

	for (p = r->parts; p->label != NULL; p++) {
		g = study_group_find(p->study);
		list = xstrdup(g != NULL ? g->studies : p->study);
		for (q = list; (study = strsep(&q, ",")) != NULL; ) {
			if ((se = study_find(study)) == NULL)
				continue;
			ALLOC_GROW(runs, n);
			x = &runs[n++];
			memset(x, 0, sizeof *x);
			x->part = p;
			x->study = se->name;
			x->seed_steps = p->steps != 0 ? p->steps :
			    se->study->default_steps;
			x->steps = x->seed_steps;
			if (steps_cap > 0 && steps_cap < x->steps) {
				x->steps = steps_cap;
				x->shortened = 1;
			}
			v = steps_cap > 0 && p->first_look_variants != NULL ?
			    p->first_look_variants : p->variants;
			x->variants = v != NULL ? xstrdup(v) :
			    all_variants(se->name);
			x->samples = p->samples;
		}
		free(list);
	}
	*out = runs;
	return n;
}

void
repro_plan_free(struct repro_run *runs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(runs[i].variants);
	free(runs);
}

void
repro_print_plan(const struct repro *r, uint64_t steps_cap, FILE *out)
{
	struct repro_run *runs;
	const struct study_entry *se;
	size_t n, i, nv;
	const char *c;

	n = repro_plan(r, steps_cap, &runs);
	fprintf(out, "reproduce %s: %s\n", r->name, r->description);
	for (i = 0; i < n; i++) {
		const struct repro_run *x = &runs[i];

		se = study_find(x->study);
		for (nv = 1, c = x->variants; *c != '\0'; c++)
			nv += *c == ',';
		fprintf(out, "\nrun %zu (%s): study %s\n", i + 1,
		    x->part->label, x->study);
		fprintf(out, "  seed       %s: %s\n", r->seed, x->part->note);
		fprintf(out, "  variants   %s (%zu%s)\n", x->variants, nv,
		    x->part->variants == NULL ? ", every one the registry "
		    "lists; each host runs those of its architecture" : "");
		fprintf(out, "  steps      %" PRIu64 " %s per sample", x->steps,
		    se->study->unit_plural);
		if (x->shortened)
			fprintf(out, " (a first look: the seed's %" PRIu64 ")",
			    x->seed_steps);
		if (x->part->msg_len > 0)
			fprintf(out, "\n  message    %" PRIu64 " bytes a step "
			    "(--msg-len): the digest, then zeros; %" PRIu64
			    " bytes a sample", x->part->msg_len,
			    x->steps * x->part->msg_len);
		fprintf(out, "\n  samples    %" PRIu64 " per variant%s\n",
		    x->samples, se->targetings != NULL ? " and targeting" : "");
		fprintf(out, "  order      alternating, in one measurement "
		    "window%s\n", se->targetings != NULL ? ", builds "
		    "interleaved" : "");
		if (se->targetings != NULL)
			fprintf(out, "  builds     %s targetings on each host\n",
			    se->targetings);
		if (x->part->first_look_variants != NULL && steps_cap > 0)
			fprintf(out, "  first look %s instead of %s\n",
			    x->part->first_look_variants, x->part->variants);
		if (x->part->arch != NULL)
			fprintf(out, "  hosts      only those whose builds "
			    "target %s\n", x->part->arch);
		if (x->part->cap_clear != NULL)
			fprintf(out, "  control    OpenSSL capability %s "
			    "cleared, the others as detected "
			    "(--openssl-cap-clear %s)\n", x->part->cap_clear,
			    x->part->cap_clear);
	}
	repro_plan_free(runs, n);
}

/*
 * The seeds' protocols as units a user can name (`seqorch reproduce
 * NAME`): each is a list of parts, each part one run of a study (or of
 * each study of a group) with the seed's variants, steps, samples and
 * controls.  repro.c holds the table and turns a protocol into its plan;
 * repro-table.c prints the published table beside what was measured.
 *
 * Everything the table holds is static; a plan is the caller's to free
 * with repro_plan_free.
 */
#ifndef SEQORCH_REPRO_H
#define SEQORCH_REPRO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct db;

struct repro_part {
	const char *label;	/* the seed's name for it: "tight", "api" */
	const char *study;	/* a study, or a group (kernels/groups.txt) */
	/* Only these variants (comma list); NULL: all the registry lists. */
	const char *variants;
	/* With --steps (a first look), these instead; NULL: the same. */
	const char *first_look_variants;
	uint64_t steps;		/* per sample; 0: the study's default */
	uint64_t samples;
	const char *arch;	/* only on hosts whose builds target it */
	/*
	 * An OpenSSL capability the part clears ("ARMV8_SHA512", bit 6 of
	 * OPENSSL_armcap), or NULL: the control of seed 002.
	 */
	const char *cap_clear;
	/*
	 * A control of the seed's (the API chain, a capability cleared):
	 * the seed's cross-machine ratios are not its figures.
	 */
	int control;
	/*
	 * The seed's best was of its own implementations, never of the
	 * study's control (sha3: EVP, the host's libcrypto): a best here
	 * that is the control is said to be another thing.  0 where the
	 * seed timed the control as one of its own (sha512's transform
	 * chain, mul's c, div's c-div).
	 */
	int control_uncounted;
	/*
	 * Seed 003: each step hashes one message of this many bytes
	 * (`run --msg-len`, kernels/kernel.h); 0: the study's own chain.
	 */
	uint64_t msg_len;
	const char *note;	/* what the seed did, one line */
	/* What the seed published that seeds.json has no number for. */
	const char *says;
};

struct repro {
	const char *name;		/* "sha512" */
	const char *seed;		/* "002" */
	const char *description;	/* one line for --list */
	const struct repro_part *parts;	/* ended by a NULL label */
};

/* Every protocol; ends with a NULL name. */
extern const struct repro repro_table[];

/* The protocol called name, or NULL. */
const struct repro *repro_find(const char *name);

/* One run of a plan. */
struct repro_run {
	const struct repro_part *part;
	const char *study;		/* the group's study, in order */
	char *variants;			/* comma list, resolved: never NULL */
	uint64_t steps, seed_steps;	/* as run, and the seed's */
	uint64_t samples;
	int shortened;			/* steps < seed_steps */
};

/*
 * The runs of r with every sample at most steps_cap steps (0: the seed's
 * lengths), groups expanded and variants resolved from the registry.
 * Returns how many, *out the caller frees with repro_plan_free.
 */
size_t repro_plan(const struct repro *r, uint64_t steps_cap,
    struct repro_run **out);
void repro_plan_free(struct repro_run *runs, size_t n);

/*
 * Print the plan of r as --dry-run shows it: one block per run (study,
 * variants, steps, samples, order, controls), then what a first look
 * changes.
 */
void repro_print_plan(const struct repro *r, uint64_t steps_cap, FILE *out);

/*
 * The published table of reproduction name's newest run in db: the
 * seed's figures and ratios in full, each host's figure beside the
 * seed's machine it stands for, the seed's cross-machine ratios beside
 * the hosts', and "indicative only" where steps, protocol or machine
 * differ.  0, or a negative SO_E* code (SO_ENOTFOUND: no reproduction
 * of that name in db) with err filled.
 */
struct so_err;
int repro_print_table(struct db *db, const char *name, FILE *out,
    struct so_err *err);

#endif

/*
 * The variants of the study a run measures, before the window: which
 * are asked for (--variants), and each one's setup, known answer and
 * self-test chain, with the consensus of the chains deciding which of
 * them are timed (docs/measurement.md).
 *
 * Ownership: a slot's strings and kernel are the registry's (static);
 * its ctx is the kernel's setup() context, which the caller releases with
 * the kernel's teardown() when it is done timing.
 */
#ifndef SEQORCH_AGENT_VARIANT_H
#define SEQORCH_AGENT_VARIANT_H

#include "kernel.h"
#include "spread.h"

#include <stddef.h>
#include <stdint.h>

#define MAX_VARIANTS 64

struct slot {
	const char *study, *variant;
	const struct kernel *k;	/* NULL: not built, skipped for missing */
	const char *missing;
	void *ctx;
	int ready;		/* passed every check; will be timed */
	const char *status;	/* PROTO_V_OK, _SKIPPED or _FAILED */
	char reason[256];
	const char *warning;	/* the kernel's, after setup; or NULL */
	uint8_t chain[KERNEL_MAX_STATE];
	struct spread ns;	/* the samples timed, their ns */
	uint64_t stored;	/* of ns.n, those the run stored before
				 * (--stored-spread): not sent again */
	char more[128];		/* why the next sample is beyond the plan */
};

/* Is name in the comma list? (A NULL list selects everything.) */
int variant_in_list(const char *list, const char *name);

/*
 * Every name in the comma list must be a variant of study: 0, or -1 with
 * the unknown name and the valid ones in err (len bytes).
 */
int variant_check_names(const char *study, const char *list, char *err,
    size_t len);

/*
 * sl's chain of steps on x (len bytes): its kernel's chain, or with
 * msg_len > 0 the message-length chain through its hash hook (kernel.h,
 * KERNEL_MAX_MSG).  0, or -1 when the kernel fails or has no hash hook.
 */
int variant_chain(struct slot *sl, uint8_t *x, size_t len, uint64_t steps,
    size_t msg_len);

/*
 * Setup, the known answer (for studies that have one) and the self-test
 * chain from seed for sl, whose study, variant and k (or missing) are set,
 * of msg_len-byte messages when msg_len > 0 (variant_chain): its status,
 * reason, warning, chain and ready say how it went.
 */
void variant_selftest(struct slot *sl, const struct study *st,
    const uint8_t *seed, size_t msg_len);

/*
 * All n slots that passed their known answer must agree on the steps-long
 * chain (len bytes): the digest most of them produce is the consensus,
 * into common, and any slot that differs from it is failed, never timed.
 */
void variant_consensus(struct slot *sl, size_t n, size_t len, uint64_t steps,
    uint8_t *common);

#endif

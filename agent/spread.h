/*
 * The statistics the agent keeps of a variant's samples, for --max-cv:
 * a running mean and variance (Welford's), updated once per sample
 * outside the timer.  Plain values: nothing to free.
 */
#ifndef SEQORCH_AGENT_SPREAD_H
#define SEQORCH_AGENT_SPREAD_H

#include <stddef.h>
#include <stdint.h>

struct spread {
	uint64_t n;		/* samples so far */
	double mean, m2;	/* of their ns; m2: sum of squared deviations */
};

void spread_add(struct spread *s, double x);

/*
 * Is the coefficient of variation above max?  If so, why (len bytes)
 * says so, for the reason field of the extra sample.  A single sample has
 * no spread to judge, so it asks for another.
 */
int spread_too_wide(const struct spread *s, double max, char *why,
    size_t len);

#endif

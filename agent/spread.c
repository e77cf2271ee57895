/*
 * Running mean and variance of a variant's samples, and the --max-cv
 * test on them.
 */
#include "spread.h"

#include <stdio.h>

/*
 * Square root by Newton's method from above: the agent links no libm (the
 * Makefile and agent/build.sh link libc, libdl and, when the host has it,
 * libcrypto only), and this runs once per variant and adaptive round,
 * outside any timer.
 */
static double
root(double v)
{
	double x = v > 1 ? v : 1, prev;

	if (!(v > 0))
		return 0;
	do {
		prev = x;
		x = (x + v / x) / 2;
	} while (x < prev);
	return prev;
}

void
spread_add(struct spread *s, double x)
{
	double delta;

	s->n++;
	delta = x - s->mean;
	s->mean += delta / (double)s->n;
	s->m2 += delta * (x - s->mean);
}

int
spread_too_wide(const struct spread *s, double max, char *why, size_t len)
{
	double var;

	if (s->n < 2) {
		snprintf(why, len, "cv unknown after %llu sample",
		    (unsigned long long)s->n);
		return 1;
	}
	var = s->m2 / (double)(s->n - 1);
	if (var <= max * max * s->mean * s->mean)
		return 0;
	snprintf(why, len, "cv %.3g%% > %.3g%% after %llu samples",
	    100 * root(var) / s->mean, 100 * max, (unsigned long long)s->n);
	return 1;
}

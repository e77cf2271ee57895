/* Seed 003's eBASH arithmetic (ebash.h). */
#include "ebash.h"

#include "stats.h"

int
ebash_quartiles(double *v, size_t n, double q[3])
{
	struct stats_desc d;

	if (n == 0)
		return -1;
	stats_describe(v, n, &d);
	q[0] = d.q1;
	q[1] = d.median;
	q[2] = d.q3;
	return 0;
}

int
ebash_long(const double lo[3], size_t len_lo, const double hi[3],
    size_t len_hi, double out[3])
{
	size_t k;

	if (len_hi <= len_lo)
		return -1;
	for (k = 0; k < 3; k++)
		out[k] = (hi[k] * (double)len_hi - lo[k] * (double)len_lo) /
		    (double)(len_hi - len_lo);
	return 0;
}

int
ebash_large_variance(const double q[3])
{
	return q[2] - q[0] > EBASH_LARGE_VARIANCE * q[1];
}

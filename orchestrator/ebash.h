/*
 * Seed 003's eBASH arithmetic (repro-table.c prints with it): quartiles of
 * many cycles-per-byte measurements, the "long messages" figure from the
 * two longest lengths, and the large-variance flag.  Pure functions on
 * the caller's arrays; nothing is allocated.
 */
#ifndef SEQORCH_EBASH_H
#define SEQORCH_EBASH_H

#include <stddef.h>

/*
 * A cell is flagged for large variance (eBACS prints such figures in red
 * with question marks; its page does not say its threshold, so this is
 * seqorch's) when its interquartile range is above this fraction of its
 * median.
 */
#define EBASH_LARGE_VARIANCE 0.05

/*
 * Sort v[0..n) and put its first quartile, median and third quartile in
 * q, as stats_describe has them (linear between order statistics, numpy's
 * default).  n 0: -1 and q untouched, else 0.
 */
int ebash_quartiles(double *v, size_t n, double q[3]);

/*
 * The "long messages" cycles per byte: the slope between the two longest
 * lengths, (c_hi * len_hi - c_lo * len_lo) / (len_hi - len_lo) with c the
 * cycles per byte at each, quartile by quartile, so that the fixed cost of
 * a message (the padding block, the finalization) drops out.  -1 when
 * len_hi <= len_lo, else 0.
 */
int ebash_long(const double lo[3], size_t len_lo, const double hi[3],
    size_t len_hi, double out[3]);

/* 1 when q's interquartile range is above EBASH_LARGE_VARIANCE of q[1]. */
int ebash_large_variance(const double q[3]);

#endif

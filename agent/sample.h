/*
 * The sampling loop: one timed chain per sample record, the rounds of a
 * plain agent's window (rotated or reversed by sample index, then, with
 * --max-cv, extra rounds of the variants still too spread out), and
 * --serve's samples on request.  Each sample updates its slot's spread.
 *
 * Ownership: the slots are the caller's; these only time them and write
 * records (emit.h).  sample_counters is this module's, opened by main
 * with perf_open before the first sample and never closed (the process
 * ends).
 */
#ifndef SEQORCH_AGENT_SAMPLE_H
#define SEQORCH_AGENT_SAMPLE_H

#include "opts.h"
#include "perf.h"
#include "variant.h"

/* Read around each sample, when the host lets us. */
extern struct perf sample_counters;
/* The warmup samples taken (--warmup): done counts them with the rest. */
extern uint64_t sample_warmups;

/*
 * Time one sample of sl, as index s at position pos of its build's round
 * and place order in the host's whole order, and emit its record; a
 * warmup (--warmup, s its round) is marked so and left out of the spread.
 */
void sample_take(struct slot *sl, uint64_t s, size_t pos, uint64_t order,
    int warmup, const struct opts *o, const struct study *st);

/*
 * The window of a plain agent: o->warmup warmup rounds of the n ready
 * slots, their planned indices, then the adaptive ones (from
 * --extra-from's index and place, when given, and on spreads that start
 * from --stored-spread's); cpu is the pinned CPU or -1.  o->order counts.
 */
void sample_measure(struct slot **ready, size_t n, struct opts *o,
    const struct study *st, int cpu);

/*
 * --serve: time one sample per request from the conductor on stdin
 * ("sample S POS ORDER VARIANT", or "warmup W POS ORDER VARIANT" for
 * warmup round W < o->warmup) of the n slots in run, until "quit" or
 * the end of stdin (the conductor is gone).  An extra sample of
 * --max-cv, at an index past the planned ones, is "sample S POS ORDER
 * VARIANT REASON": its record carries REASON (the rest of the line).
 */
void sample_serve(struct slot **run, size_t n, const struct opts *o,
    const struct study *st);

#endif

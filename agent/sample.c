/*
 * Timed samples: the chain between two reads of the raw monotonic clock
 * (and the counters, and the thread's cpu time), then its record.
 */
#include "sample.h"
#include "emit.h"
#include "pin.h"
#include "protocol.h"
#include "timing.h"
#include "window.h"

#include <stdio.h>
#include <string.h>

struct perf sample_counters;
uint64_t sample_warmups;

/*
 * The kernel's metrics of the chain just timed, as the sample's "metrics"
 * object; phases ("phase_*", ns) get "phase_other", what the timer saw
 * beyond them, so that they add up to the sample's ns.
 */
static void
add_metrics(struct jsonl *rec, struct slot *sl, double ns)
{
	struct kernel_metric m[KERNEL_MAX_METRICS];
	size_t n, i;
	double phases = 0;
	int any = 0;
	struct jsonl *o = rec;

	jsonl_open(o, PROTO_F_METRICS, '{');
	n = sl->k->metrics(sl->ctx, m, KERNEL_MAX_METRICS - 1);
	for (i = 0; i < n && i < KERNEL_MAX_METRICS - 1; i++) {
		jsonl_num(o, m[i].name, m[i].value);
		if (strncmp(m[i].name, "phase_", 6) == 0) {
			phases += m[i].value;
			any = 1;
		}
	}
	if (any)
		jsonl_num(o, "phase_other", ns - phases);
	jsonl_close(o);
}

/* A sample's cycles and instructions, and where its cycles come from. */
static void
add_counts(struct jsonl *rec, int counted, uint64_t cycles, uint64_t insns)
{
	if (counted) {
		jsonl_num(rec, PROTO_F_CYCLES, (double)cycles);
		jsonl_num(rec, PROTO_F_INSTRUCTIONS,
		    (double)insns);
	} else {
		jsonl_null(rec, PROTO_F_CYCLES);
		jsonl_null(rec, PROTO_F_INSTRUCTIONS);
	}
	jsonl_str(rec, PROTO_F_CYCLES_SOURCE, counted ?
	    sample_counters.source : PROTO_V_CALIBRATION);
}

void
sample_take(struct slot *sl, uint64_t s, size_t pos, uint64_t order,
    int warmup, const struct opts *o, const struct study *st)
{
	uint8_t x[KERNEL_MAX_STATE];
	char buf[2 * KERNEL_MAX_STATE + 1];
	uint64_t t0, t1, w0, w1, c0, c1, q0 = 0, q1 = 0, cycles = 0,
	    insns = 0;
	double mhz, mhz_after, ns;
	int rc, cpu_before, cpu_after, counted, cpu_clock, waits;
	char jump[160];
	struct jsonl *rec;

	memcpy(x, o->seed, st->state_len);
	mhz = timing_calibrate_mhz();
	cpu_before = pin_current_cpu();
	/*
	 * Counters run from just before to just after the timed call, and
	 * the thread's cpu time is read around them (a syscall they miss).
	 * The clock is read again around that cpu time, w0 to w1, so that
	 * the two clocks are compared over one bracket: the counters'
	 * syscalls can take a millisecond of cpu on a loaded host, which
	 * t0 to t1 does not see.  The time the thread waited for its cpu is
	 * read outside that bracket (a file read), so that a crowded cpu is
	 * never taken for a clock that jumped.
	 */
	waits = timing_thread_wait_ns(&q0) == 0;
	w0 = timing_now_ns();
	cpu_clock = timing_thread_cpu_ns(&c0) == 0;
	perf_start(&sample_counters);
	t0 = timing_now_ns();
	rc = variant_chain(sl, x, st->state_len, o->steps,
	    (size_t)o->msg_len);
	t1 = timing_now_ns();
	counted = perf_stop(&sample_counters, &cycles, &insns) == 0;
	cpu_clock = timing_thread_cpu_ns(&c1) == 0 && cpu_clock;
	w1 = timing_now_ns();
	waits = timing_thread_wait_ns(&q1) == 0 && waits && q1 >= q0;
	cpu_after = pin_current_cpu();
	/* Again after: a clock that moved during the sample shows. */
	mhz_after = timing_calibrate_mhz();
	if (rc != 0)
		fatal(AG_FAIL, "variant \"%s\" failed during sample %llu",
		    sl->variant, (unsigned long long)s);
	/*
	 * The thread's cpu time is a second clock that no one sets: a
	 * timing it contradicts is no timing, and neither is any other on a
	 * host whose raw clock jumps.  Without that clock, no check.
	 */
	if (cpu_clock && timing_jumped(w0, w1, c1 - c0, waits ? q1 - q0 : 0,
	    jump, sizeof jump))
		fatal(AG_FAIL, "the raw monotonic clock (%s) jumped during "
		    "sample %llu of \"%s\": %s; the sample is dropped and "
		    "nothing more is timed on this host", timing_clock_name(),
		    (unsigned long long)s, sl->variant, jump);
	ns = (double)(t1 - t0);
	/* A warmup is in no rate, so in no spread either. */
	if (!warmup)
		spread_add(&sl->ns, ns);
	else
		sample_warmups++;

	rec = emit_new(PROTO_T_SAMPLE);
	jsonl_str(rec, PROTO_F_STUDY, sl->study);
	jsonl_str(rec, PROTO_F_VARIANT, sl->variant);
	jsonl_num(rec, PROTO_F_SAMPLE, (double)s);
	jsonl_num(rec, PROTO_F_POSITION, (double)pos);
	jsonl_num(rec, PROTO_F_ORDER, (double)order);
	if (warmup)
		jsonl_bool(rec, PROTO_F_WARMUP, 1);
	jsonl_num(rec, PROTO_F_STEPS, (double)o->steps);
	if (o->msg_len > 0)
		jsonl_num(rec, PROTO_F_MSG_LEN, (double)o->msg_len);
	jsonl_num(rec, PROTO_F_NS, ns);
	emit_hex(x, st->state_len, buf);
	jsonl_str(rec, PROTO_F_DIGEST, buf);
	emit_hex(o->seed, st->state_len, buf);
	jsonl_str(rec, PROTO_F_SEED, buf);
	jsonl_num(rec, PROTO_F_CALIB_MHZ, mhz);
	jsonl_num(rec, PROTO_F_CALIB_AFTER_MHZ, mhz_after);
	jsonl_num(rec, PROTO_F_CPU,
	    cpu_before == cpu_after ? cpu_before : -1);
	jsonl_str(rec, PROTO_F_BUILD_ID, o->build_id);
	add_counts(rec, counted, cycles, insns);
	if (sl->more[0])
		jsonl_str(rec, PROTO_F_REASON, sl->more);
	else
		jsonl_null(rec, PROTO_F_REASON);
	if (sl->k->metrics != NULL)
		add_metrics(rec, sl, ns);
	emit(rec);
}

/*
 * One sample of each of the n variants in run, in an order that depends
 * only on the sample index s: rotated by one per index, or reversed on odd
 * ones.  So a re-run of index s (--first-sample) puts each variant where
 * the full run did.  Warmup round s (--warmup) is ordered as index s is,
 * and takes no place in the host's order: the timed samples keep theirs.
 */
static void
time_round(struct slot **run, size_t n, uint64_t s, int warmup,
    struct opts *o, const struct study *st)
{
	size_t pos, idx;

	for (pos = 0; pos < n; pos++) {
		if (o->reverse)
			idx = (s & 1) ? n - 1 - pos : pos;
		else
			idx = (size_t)((pos + s) % n);
		sample_take(run[idx], s, pos, warmup ? s * n + pos :
		    o->order++, warmup, o, st);
	}
}

/* An extra sample's reason says how many of its spread a resume stored. */
static void
more_stored(struct slot *sl)
{
	size_t len = strlen(sl->more);

	if (sl->stored > 0)
		snprintf(sl->more + len, sizeof sl->more - len, " (%llu "
		    "stored before the resume)",
		    (unsigned long long)sl->stored);
}

void
sample_measure(struct slot **ready, size_t n, struct opts *o,
    const struct study *st, int cpu)
{
	struct slot *run[MAX_VARIANTS];
	uint64_t s, last = o->first_sample + o->samples;
	size_t i, nrun;

	/* One build alone on the host: its order is the host's. */
	o->order = o->first_sample * n;
	window_record(PROTO_V_BEGIN, cpu);
	for (s = 0; s < o->warmup; s++)
		time_round(ready, n, s, 1, o, st);
	for (s = o->first_sample; s < last; s++)
		time_round(ready, n, s, 0, o, st);
	/*
	 * A resume's extra rounds come after every index and place the run
	 * stored (--extra-from), and its stored samples are in the spread
	 * (--stored-spread): the decision is the whole run's.
	 */
	if (o->extra_from) {
		s = o->extra_first;
		if (o->samples == 0 || o->order < o->extra_order)
			o->order = o->extra_order;
	}
	for (; o->max_cv > 0; s++) {
		nrun = 0;
		for (i = 0; i < n; i++)
			if (ready[i]->ns.n < o->max_samples &&
			    spread_too_wide(&ready[i]->ns, o->max_cv,
			    ready[i]->more, sizeof ready[i]->more)) {
				more_stored(ready[i]);
				run[nrun++] = ready[i];
			}
		if (nrun == 0)
			break;
		time_round(run, nrun, s, 0, o, st);
	}
	window_record(PROTO_V_END, cpu);
}

void
sample_serve(struct slot **run, size_t n, const struct opts *o,
    const struct study *st)
{
	char line[512], v[128], *reason;
	unsigned long long s, pos, order;
	size_t i, len;
	int warmup, end;

	while (fgets(line, sizeof line, stdin) != NULL) {
		if (strcmp(line, "quit\n") == 0)
			return;
		line[strcspn(line, "\n")] = '\0';
		/* "sample " and "warmup " are as long. */
		warmup = strncmp(line, "warmup ", 7) == 0;
		if ((!warmup && strncmp(line, "sample ", 7) != 0) ||
		    sscanf(line + 7, "%llu %llu %llu %127s%n", &s, &pos, &order,
		    v, &end) != 4)
			fatal(AG_USAGE, "--serve: unknown request \"%s\"", line);
		/* What follows the variant: an extra sample's reason. */
		reason = line + 7 + end;
		reason += strspn(reason, " ");
		for (i = 0; i < n && strcmp(run[i]->variant, v) != 0; i++)
			;
		if (i == n)
			fatal(AG_USAGE, "--serve: variant \"%s\" did not pass "
			    "its self-test", v);
		if (warmup && (s >= o->warmup || *reason != '\0'))
			fatal(AG_USAGE, "--serve: warmup %llu is outside "
			    "--warmup, or has a reason", s);
		if (!warmup && *reason == '\0' && (s < o->first_sample ||
		    s >= o->first_sample + o->samples))
			fatal(AG_USAGE, "--serve: sample %llu is outside "
			    "--first-sample and --samples", s);
		if (!warmup && *reason != '\0' &&
		    s < o->first_sample + o->samples)
			fatal(AG_USAGE, "--serve: extra sample %llu is not past "
			    "--first-sample and --samples", s);
		len = strlen(reason);
		if (len >= sizeof run[i]->more)
			fatal(AG_USAGE, "--serve: the reason of sample %llu is "
			    "over %zu bytes", s, sizeof run[i]->more - 1);
		memcpy(run[i]->more, reason, len + 1);
		sample_take(run[i], s, (size_t)pos, order, warmup, o, st);
	}
}

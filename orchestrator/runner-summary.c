/*
 * The end of a run on stderr: its best variant per host with median and
 * spread, the variants that did not run and why, the warnings it stored
 * (repeated: on a terminal the live lines may have scrolled them away),
 * and the command to run next.
 */
#include "runner.h"
#include "report-builds.h"
#include "report-model.h"
#include "report-table.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The best is set against this many next variants, and the control. */
#define SUMMARY_NEXT 2

static int
by_ratio(const void *pa, const void *pb)
{
	const struct rrow *a = *(const struct rrow *const *)pa;
	const struct rrow *b = *(const struct rrow *const *)pb;

	return (a->vs_best.ratio < b->vs_best.ratio) -
	    (a->vs_best.ratio > b->vs_best.ratio);
}

static void
name(const struct rrun *r, const struct rrow *w, FILE *out)
{
	if (r->several_builds)
		fprintf(out, "%s (%s)", w->variant, w->label);
	else
		fputs(w->variant, out);
}

/*
 * "c-fused ran 1.23 +- 0.02 times faster than openssl-evp (control)", as
 * hyperfine words it: the ratio of medians best / w and its 95%
 * bootstrap interval, as +- half its width when it is about symmetric
 * (neither side 1.5 times the other), else as its ends: "2.34 [1.50,
 * 19.57]" (a few noisy samples make it lopsided, and "+- 17.23" would
 * claim a lower end below 0).
 */
static void
faster_line(const struct rrun *r, const struct rrow *best,
    const struct rrow *w, int control, FILE *out)
{
	const struct stats_ratio *s = &w->vs_best;
	double x = 1 / s->ratio, lo = 1 / s->hi, hi = 1 / s->lo;
	char *why = report_withheld_why(s);

	fputs("    ", out);
	name(r, best, out);
	fprintf(out, " ran %.2f", x);
	if (!isnan(s->lo) && hi - x <= 1.5 * (x - lo) &&
	    x - lo <= 1.5 * (hi - x))
		fprintf(out, " %s %.2f", report_plusminus(), (hi - lo) / 2);
	else if (!isnan(s->lo))
		fprintf(out, " [%.2f, %.2f]", lo, hi);
	fputs(" times faster than ", out);
	name(r, w, out);
	if (control)
		fputs(" (control)", out);
	if (isnan(s->lo))
		fputs(" (n < 2: no interval)", out);
	else if (why != NULL)	/* an interval clear of 1, yet no verdict */
		fprintf(out, " (not distinguishable: %s)", why);
	else if (s->verdict == STATS_UNDECIDED)
		fputs(" (not distinguishable)", out);
	fputc('\n', out);
	free(why);
}

/*
 * The best against another build of its variant as the report's paired
 * section says it (report-builds.c): "c-fused (gcc) against c-fused
 * (clang), paired over 8 pairs: 1.070x [1.010, 1.120], faster", the
 * median of the pairs' ratios, not the ratio of the two medians, which
 * the pairs may contradict ("ran 1.33 [0.87, 1.42] times faster" beside
 * the report's 1.070x).
 */
static void
paired_line(const struct rrun *r, const struct rrow *best,
    const struct rrow *w, const struct rpaired *p,
    const struct stats_ratio *s, FILE *out)
{
	char *iv = report_interval_str(s);

	fputs("    ", out);
	name(r, best, out);
	fputs(" against ", out);
	name(r, w, out);
	if (report_is_control(r, w->variant))
		fputs(" (control)", out);
	fprintf(out, ", paired over %zu pair%s: %.3fx %s, %s\n", p->n,
	    p->n == 1 ? "" : "s", s->ratio, iv, report_verdict_phrase(s));
	free(iv);
}

/*
 * Under each host's best: how much faster it ran than the next variants
 * and the study's control, fastest first; how many more the report has.
 */
static void
faster_lines(const struct rrun *r, const struct rhost *h, FILE *out)
{
	const struct rrow **rows = xcalloc(r->nrows + 1, sizeof *rows), *w;
	const struct rpaired *p;
	struct stats_ratio s;
	size_t i, n = 0, shown = 0;
	int is_control;

	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (w != h->best && strcmp(w->host, h->name) == 0 &&
		    !isnan(w->vs_best.ratio))
			rows[n++] = w;
	}
	qsort(rows, n, sizeof *rows, by_ratio);
	for (i = 0; i < n; i++) {
		is_control = report_is_control(r, rows[i]->variant);
		if (i >= SUMMARY_NEXT && !is_control)
			continue;
		if ((p = report_paired(r, h->best, rows[i], &s)) != NULL)
			paired_line(r, h->best, rows[i], p, &s, out);
		else
			faster_line(r, h->best, rows[i], is_control, out);
		shown++;
	}
	if (shown < n)
		fprintf(out, "    (%zu more in the report)\n", n - shown);
	free(rows);
}

/* Did h ask for a cpu and run elsewhere (docs/hosts.md, cpu)? */
static int
unpinned(const struct rhost *h)
{
	return h->has_pin_cpu && h->pin_error != NULL && h->pinned == 0;
}

void
runner_summary(struct db *db, int64_t run_id, const char *db_opts,
    const char *run_opts, const char *host_opts, const char *status,
    FILE *out)
{
	struct rrun r;
	struct so_err err = { 0, "" };
	const struct rrow *w;
	char med[32], lo[32], hi[32], cv[32], *line, *label;
	size_t i, nwarn = 0;

	if (report_load_run(db_handle(db), run_id, 0, &r, &err) != 0) {
		fprintf(out, "seqorch: no summary of run %lld: %s\n",
		    (long long)run_id, err.msg);
		return;
	}
	for (i = 0; i < r.nranked; i++) {
		w = r.ranked[i]->best;
		if (i == 0)
			fprintf(out, "best per host, %s/s (median, min%smax, "
			    "cv over n samples):\n", study_unit_plural(r.study),
			    report_dash());
		report_format_rate(w->median, med, sizeof med);
		report_format_rate(w->min, lo, sizeof lo);
		report_format_rate(w->max, hi, sizeof hi);
		/* One sample has no spread: "-", as the report says it. */
		if (isnan(w->desc.cv))
			snprintf(cv, sizeof cv, "-");
		else
			snprintf(cv, sizeof cv, "%.2f%%", 100 * w->desc.cv);
		/*
		 * Two compilers: the best is one of them, named; the control
		 * (sha3: the host's libcrypto) as the report says it.
		 */
		label = xasprintf("%s%s%s%s%s", w->variant, r.several_builds ?
		    " (" : "", r.several_builds ? w->label : "",
		    r.several_builds ? ")" : "", report_is_control(&r,
		    w->variant) ? " (control)" : "");
		fprintf(out, "  %-12s %-18s %8s  %s%s%s  cv %s  n %lld\n",
		    r.ranked[i]->name, label, med, lo, report_dash(), hi,
		    cv, (long long)w->n);
		free(label);
		faster_lines(&r, r.ranked[i], out);
	}
	/* Skipped for a reason it states (cpu, sources), not a failure. */
	if (r.nvariants > 0)
		fprintf(out, "variants not run:\n");
	for (i = 0; i < r.nvariants; ) {
		line = report_not_run(&r, &i);
		fprintf(out, "  %s\n", line);
		free(line);
	}
	for (i = 0; i < r.nevents; i++)
		nwarn += strcmp(r.events[i].level, "warning") == 0;
	for (i = 0; i < r.nhosts; i++)
		nwarn += unpinned(&r.hosts[i]);
	if (nwarn > 0)
		fprintf(out, "warnings (%zu):\n", nwarn);
	/* The facts hold it, not an event: the report words it the same. */
	for (i = 0; i < r.nhosts; i++)
		if (unpinned(&r.hosts[i]))
			fprintf(out, "  %s: not pinned to cpu %" PRId64 ": %s\n",
			    r.hosts[i].name, r.hosts[i].pin_cpu,
			    r.hosts[i].pin_error);
	for (i = 0; i < r.nevents; i++) {
		if (strcmp(r.events[i].level, "warning") == 0)
			fprintf(out, "  %s: %s\n", r.events[i].host != NULL ?
			    r.events[i].host : "-", r.events[i].message);
	}
	/* Interrupted or not, what is stored can be reported. */
	if (strcmp(status, "interrupted") == 0)
		fprintf(out, "resume: seqorch run --resume %lld%s\n",
		    (long long)run_id, run_opts);
	/* No host measured: reaching them comes before any report. */
	if (host_opts != NULL)
		fprintf(out, "next: seqorch hosts check%s\nthen: seqorch report "
		    "--run %lld%s\n", host_opts, (long long)run_id, db_opts);
	else
		fprintf(out, "next: seqorch report --run %lld%s\n",
		    (long long)run_id, db_opts);
	report_free_run(&r);
}

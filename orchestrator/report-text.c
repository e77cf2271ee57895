/*
 * The report as text: tables for an 80-column terminal (wider ones say
 * so), then the ratios, position bias and warnings in words.
 */
#include "report-table.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Invalid samples and events listed one by one; past these only a count
 * is shown (the coordinator logs an error event per invalid sample, so a
 * broken variant could otherwise bury the table).  JSON lists them all.
 */
#define INVALID_LIST_MAX 10
#define EVENT_LIST_MAX 20

static char *
rate_str(double rate)
{
	char buf[32];

	report_format_rate(rate, buf, sizeof buf);
	return xstrdup(buf);
}

static char *
ns_str(double rate)
{
	char buf[32];

	report_format_ns(rate, buf, sizeof buf);
	return xstrdup(buf);
}

static char *
cycles_str(const struct rrow *w)
{
	double c = report_row_cycles(w);

	return c > 0 ? xasprintf("%.1f %s", c, report_row_cycles_source(w)) :
	    xstrdup("-");
}

static char *
ipc_str(const struct rrow *w)
{
	return w->counted > 0 && w->ipc > 0 ? xasprintf("%.2f", w->ipc) :
	    xstrdup("-");
}

/* A host's preflight verdicts over its windows: "quiet", "noisy 1/2". */
static char *
noise_str(const struct rhost *h)
{
	if (h->windows == 0)
		return xstrdup("-");
	if (h->noisy == 0)
		return xstrdup("quiet");
	if (h->noisy == h->windows)
		return xstrdup("noisy");
	return xasprintf("noisy %" PRId64 "/%" PRId64, h->noisy, h->windows);
}

/* Short enough for the hosts table; why a pin failed is a warning. */
static char *
pin_str(const struct rhost *h)
{
	if (h->pinned == 1 && h->has_pin_cpu)
		return xasprintf("cpu %" PRId64, h->pin_cpu);
	if (h->pinned == 1)
		return xstrdup("pinned");
	if (h->has_pin_cpu)
		return xasprintf("cpu %" PRId64 " (not pinned)", h->pin_cpu);
	return xstrdup(h->pinned == -1 ? "unknown" : "none");
}

static void
text_header(const struct rrun *r, FILE *out)
{
	const struct rdigest *d;
	size_t i;

	report_emit(out, "study %s, run %" PRId64 ": %s%s", r->study, r->id,
	    r->status, r->exploratory ? " (exploratory)" : "");
	/* "running" would be read as still going. */
	if (r->gone_pid > 0)
		report_emit(out, "  stopped   its coordinator (pid %ld on this "
		    "machine) is gone: `seqorch run --resume %" PRId64 "` "
		    "finishes it", r->gone_pid, r->id);
	report_emit(out, "  steps     %" PRId64 " per sample, %" PRId64
	    " sample%s per variant", r->steps, r->samples,
	    r->samples == 1 ? "" : "s");
	if (r->msg_len > 0)
		report_emit(out, "  message   %" PRId64 " bytes a %s (--msg-len "
		    "%" PRId64 "): the previous digest, then zeros",
		    r->msg_len, study_unit(r->study), r->msg_len);
	report_emit(out, "  seed      %s", r->seed);
	if (r->openssl_cap != NULL)
		report_emit(out, "  openssl   capabilities \"%s\" (OPENSSL_ia32cap on "
		    "x86-64, OPENSSL_armcap on aarch64)", r->openssl_cap);
	report_emit(out, "  started   %s", r->started_at);
	report_emit(out, "  finished  %s", r->finished_at != NULL ?
	    r->finished_at : "-");
	report_emit_wrapped(out, "  command   ", r->command);
	if (r->imported_from != NULL)
		report_emit(out, "  imported  run %" PRId64 " of %s, %s",
		    r->origin_run, r->imported_from, r->imported_signed ?
		    "signature verified" : "UNSIGNED: nothing checked who "
		    "measured it");
	if (r->ndigests == 0)
		report_emit(out, "  digest    no valid samples");
	for (i = 0; i < r->ndigests; i++) {
		d = &r->digests[i];
		if (d->distinct == 1 && d->n == 1)
			report_emit(out, "  digest    %.16s... in the one valid "
			    "sample of %" PRId64 " steps", d->digest,
			    d->steps);
		else if (d->distinct == 1)
			report_emit(out, "  digest    %.16s... in all %" PRId64
			    " valid samples of %" PRId64 " steps", d->digest,
			    d->n, d->steps);
		else
			report_emit(out, "  digest    MISMATCH: %" PRId64 " valid "
			    "samples of %" PRId64 " steps end in %" PRId64
			    " different digests", d->n, d->steps,
			    d->distinct);
	}
}

static void
text_hosts(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"host", "status", "clock", "governor", "pinning", "counters",
		"noise"
	}, *no_gov[] = {
		"host", "status", "clock", "pinning", "counters", "noise"
	};
	struct table t = { .ncols = 7, .heads = heads, .align = "lllllll" };
	const struct rhost *h;
	size_t i;
	int governor = 0;

	/* A column of "-" (virtual machines have no cpufreq) is left out. */
	for (i = 0; i < r->nhosts; i++)
		governor |= r->hosts[i].governor != NULL;
	if (!governor) {
		t.ncols = 6;
		t.heads = no_gov;
		t.align = "llllll";
	}
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		table_cell(&t, xstrdup(h->name));
		table_cell(&t, xstrdup(h->status != NULL ? h->status : "-"));
		table_cell(&t, report_clock_str(h->clock_mhz, h->clock_source,
		    h->clock_n));
		if (governor)
			table_cell(&t, xstrdup(h->governor != NULL ? h->governor :
			    "-"));
		table_cell(&t, pin_str(h));
		table_cell(&t, xstrdup(h->counters != NULL ? h->counters : "-"));
		table_cell(&t, noise_str(h));
	}
	fputc('\n', out);
	table_print(&t, out);
	/* what the agents called: OpenSSL_version() on each host */
	for (i = 0; i < r->nhosts; i++)
		if (r->hosts[i].openssl != NULL)
			report_emit(out, "  libcrypto on %s: %s", r->hosts[i].name,
			    r->hosts[i].openssl);
	/* How the cpu was chosen and why cycles are estimated, in words. */
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->cpu_choice != NULL)
			report_emit_wrapped(out, "  cpu auto  ", h->cpu_choice);
		if (h->counters_error != NULL)
			report_emit_wrapped(out, "  counters  ", h->counters_error);
	}
}

/*
 * The upstream sources builds were generated from, and for what: as
 * sha256sum prints them, under each build and source, the whole hash
 * (a path's last part: the tables of the other formats have the whole
 * path).
 */
static void
text_sources(const struct rrun *r, FILE *out)
{
	char *vs = report_source_variants(r), *head, **lines;
	const struct rsource *s, *prev = NULL;
	const char *base;
	size_t i, n = 0;

	if (vs == NULL)
		return;
	head = xasprintf("upstream sources of %s, as each build recorded "
	    "them (sha256, file):", vs);
	fputc('\n', out);
	report_emit_wrapped(out, "", head);
	/* As sha256sum prints them: each hash and file on one line. */
	lines = xcalloc(2 * r->nsources, sizeof *lines);
	for (i = 0; i < r->nsources; i++) {
		s = &r->sources[i];
		if (prev == NULL || prev->build_id != s->build_id ||
		    strcmp(prev->name, s->name) != 0)
			lines[n++] = xasprintf("  build %" PRId64 ": %s %s",
			    s->build_id, s->name, s->version);
		base = strrchr(s->file, '/');
		lines[n++] = xasprintf("    %s  %s", s->sha256,
		    base != NULL ? base + 1 : s->file);
		prev = s;
	}
	report_emit_rows(out, lines, n);
	free(lines);
	free(head);
	free(vs);
}

static void
text_builds(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"build", "host", "compiler", "cflags", "status", "version"
	}, *all_ok[] = {
		"build", "host", "compiler", "cflags", "version"
	};
	struct table t = { .ncols = 6, .heads = heads, .align = "rlllll" };
	const struct rbuild *b;
	size_t i;
	int failed = 0;

	if (r->nbuilds == 0)
		return;
	/* Every build ok: no status column (a failed one is a warning). */
	for (i = 0; i < r->nbuilds; i++)
		failed |= strcmp(r->builds[i].status, "ok") != 0;
	if (!failed) {
		t.ncols = 5;
		t.heads = all_ok;
		t.align = "rllll";
	}
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		table_cell(&t, xasprintf("%" PRId64, b->id));
		table_cell(&t, xstrdup(b->host));
		table_cell(&t, xstrdup(b->compiler));
		table_cell(&t, xstrdup(b->cflags));
		if (failed)
			table_cell(&t, xstrdup(b->status));
		table_cell(&t, xstrdup(b->compiler_version != NULL ?
		    b->compiler_version : "-"));
	}
	fputc('\n', out);
	table_print(&t, out);
	text_sources(r, out);
}

/*
 * Rows are grouped by variant, one line per host (and build), so hosts
 * are compared down a column and any number of hosts fits in 80
 * columns.  The compiler, cycles and inv columns appear only when they
 * carry information; time per unit, the median's inverse, is left to the
 * best variant's table (hyperfine and pyperf show one of the two).
 */
static void
text_rows(const struct rrun *r, FILE *out)
{
	const char *heads[11];
	char align[12], cyc_head[64], range_head[16];
	struct table t = { .ncols = 0, .heads = heads, .align = align };
	const struct rrow *w;
	const char *prev = NULL;
	size_t i;
	int invalid = 0;

	for (i = 0; i < r->nrows; i++)
		invalid |= r->rows[i].invalid > 0;

	snprintf(cyc_head, sizeof cyc_head, "cycles/%s", study_unit(r->study));
#define COL(name, a) (heads[t.ncols] = (name), align[t.ncols++] = (a))
	COL("variant", 'l');
	if (r->several_builds)
		COL("compiler", 'l');
	COL("host", 'l');
	COL("median", 'r');
	if (r->any_calib)
		COL(cyc_head, 'r');
	if (r->any_counted)
		COL("ipc", 'r');
	snprintf(range_head, sizeof range_head, "min%smax", report_dash());
	COL(range_head, 'r');
	COL("n", 'r');
	COL("digest", 'l');
	if (invalid)
		COL("inv", 'r');
#undef COL
	align[t.ncols] = '\0';

	if (r->nrows == 0) {
		fputc('\n', out);
		report_emit(out, "no samples");
		return;
	}
	fputc('\n', out);
	report_emit(out, "%s/s over the n valid samples%s",
	    study_unit_plural(r->study), invalid ? "; inv: samples with "
	    "valid = 0, in no rate" : "");
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (prev != NULL && strcmp(prev, w->variant) == 0)
			table_cell(&t, xstrdup(w->note != NULL ? "*" : ""));
		else
			table_cell(&t, xasprintf("%s%s", w->variant,
			    w->note != NULL ? " *" : ""));
		prev = w->variant;
		if (r->several_builds)
			table_cell(&t, xstrdup(w->label));
		table_cell(&t, xstrdup(w->host));
		table_cell(&t, rate_str(w->n > 0 ? w->median : 0));
		if (r->any_calib)
			table_cell(&t, cycles_str(w));
		if (r->any_counted)
			table_cell(&t, ipc_str(w));
		if (w->n > 0) {
			char lo[32], hi[32];

			report_format_rate(w->min, lo, sizeof lo);
			report_format_rate(w->max, hi, sizeof hi);
			table_cell(&t, xasprintf("%s%s%s", lo, report_dash(),
			    hi));
		} else
			table_cell(&t, xstrdup("-"));
		table_cell(&t, xasprintf("%" PRId64, w->n));
		table_cell(&t, xstrdup(w->digest == DIGEST_OK ? "ok" :
		    w->digest == DIGEST_MISMATCH ? "MISMATCH" : "-"));
		if (invalid)
			table_cell(&t, xasprintf("%" PRId64, w->invalid));
	}
	table_print(&t, out);
	/* Wrapped, not cut: a note is worth reading whole. */
	for (i = 0; i < r->nrows; i++) {
		char *head, *text;

		w = &r->rows[i];
		if (w->note == NULL)
			continue;
		head = xasprintf("* %s on %s: ", w->variant, w->host);
		text = xasprintf("%s (docs/studies.md)", w->note);
		report_emit_wrapped(out, head, text);
		free(head);
		free(text);
	}
}

/* A note under the best table: "  host: text", wrapped. */
static void
text_note(void *out, size_t i, const char *host, const char *text)
{
	char *head = xasprintf("  %s: ", host);

	(void)i;
	report_emit_wrapped(out, head, text);
	free(head);
}

static void
text_best(const struct rrun *r, FILE *out)
{
	char ns_head[64], cyc_head[64];
	const char *heads[] = {
		"host", "variant", "median", ns_head, cyc_head
	};
	struct table t = { .ncols = 5, .heads = heads, .align = "llrrr" };
	const struct rhost *h;
	const struct rrow *w;
	const struct rratio *x;
	size_t i;
	char *iv, *d, *c, **lines, *note;

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	snprintf(cyc_head, sizeof cyc_head, "cycles/%s", study_unit(r->study));
	fputc('\n', out);
	report_emit(out, "best valid variant per host");
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		w = h->best;
		table_cell(&t, xstrdup(h->name));
		table_cell(&t, r->several_builds ? xasprintf("%s (%s)", w->variant,
		    w->label) : xstrdup(w->variant));
		table_cell(&t, rate_str(w->median));
		table_cell(&t, ns_str(w->median));
		table_cell(&t, cycles_str(w));
	}
	if (r->nranked > 0)
		table_print(&t, out);
	report_best_notes(r, r->several_builds, text_note, out);
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best == NULL)
			report_emit(out, "  %s: no valid samples%s",
			    r->hosts[i].name, report_host_mismatched(r,
			    &r->hosts[i]) ? " whose digest agrees with the "
			    "run's" : "");
	}
	if (r->nranked < 2)
		return;
	fputc('\n', out);
	report_emit(out, "ratios of best rates, %d%% bootstrap interval over the "
	    "samples, verdict", STATS_LEVEL_PCT);
	lines = xcalloc(r->nratios, sizeof *lines);
	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		if (x->refused != NULL) {
			lines[i] = xasprintf("  %s / %s: refused, %s",
			    x->a->host, x->b->host, x->refused);
			continue;
		}
		iv = report_interval_str(&x->s);
		d = report_ratio_doubted(r, x);
		c = report_ratio_control(r, x);
		lines[i] = xasprintf("  %s / %s = %.2fx  %s  %s%s%s%s%s",
		    x->a->host, x->b->host, x->s.ratio, iv,
		    report_verdict_phrase(&x->s), d != NULL ? "; doubtful: " :
		    "", d != NULL ? d : "", c != NULL ? "; control: " : "",
		    c != NULL ? c : "");
		free(iv);
		free(d);
		free(c);
	}
	report_emit_rows(out, lines, r->nratios);
	free(lines);
	if ((note = report_ratios_withheld_note(r)) != NULL)
		report_emit_wrapped(out, "  ", note);
	free(note);
}

/*
 * Every variant of a host against the host's best: which are slower, and
 * which cannot be told from the best at this precision.
 */
static void
text_vs_best(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"host", "variant", "/ best", "interval", "verdict"
	};
	struct table t = { .ncols = 5, .heads = heads, .align = "llrll" };
	const struct rrow **rows, *w;
	char *note;
	size_t i, n;

	rows = report_vs_best(r, 0, &n);
	for (i = 0; i < n; i++) {
		w = rows[i];
		table_cell(&t, xstrdup(w->host));
		table_cell(&t, r->several_builds ? xasprintf("%s (%s)",
		    w->variant, w->label) : xstrdup(w->variant));
		table_cell(&t, xasprintf("%.3fx", w->vs_best.ratio));
		table_cell(&t, report_interval_str(&w->vs_best));
		table_cell(&t, xstrdup(report_verdict_phrase(&w->vs_best)));
	}
	free(rows);
	if (n == 0)
		return;
	fputc('\n', out);
	report_emit(out, "variants against their host's best, %d%% interval",
	    STATS_LEVEL_PCT);
	table_print(&t, out);
	if ((note = report_vs_best_withheld_note(r)) != NULL)
		report_emit_wrapped(out, "  ", note);
	free(note);
}

/*
 * Quartiles, coefficient of variation and the one clock of each cell:
 * the spread that says how far its median can be trusted.
 */
static void
text_spread(const struct rrun *r, FILE *out)
{
	const char *heads[9];
	char align[10];
	struct table t = { .ncols = 0, .heads = heads, .align = align };
	const struct rrow *w;
	size_t i;

#define COL(name, a) (heads[t.ncols] = (name), align[t.ncols++] = (a))
	COL("variant", 'l');
	if (r->several_builds)
		COL("compiler", 'l');
	COL("host", 'l');
	COL("q1", 'r');
	COL("median", 'r');
	COL("q3", 'r');
	COL("cv", 'r');
	COL("clock", 'l');
#undef COL
	align[t.ncols] = '\0';
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (w->n == 0)
			continue;
		table_cell(&t, xstrdup(w->variant));
		if (r->several_builds)
			table_cell(&t, xstrdup(w->label));
		table_cell(&t, xstrdup(w->host));
		table_cell(&t, rate_str(w->desc.q1));
		table_cell(&t, rate_str(w->median));
		table_cell(&t, rate_str(w->desc.q3));
		table_cell(&t, isnan(w->desc.cv) ? xstrdup("-") :
		    xasprintf("%.2f%%", 100 * w->desc.cv));
		table_cell(&t, report_clock_str(w->clock_mhz, w->clock_source,
		    w->clock_source == CLOCK_SAMPLES ? -1 : 0));
	}
	if (t.ncells == 0)
		return;
	fputc('\n', out);
	report_emit(out, "spread per cell: quartiles of %s/s, coefficient of "
	    "variation, clock", study_unit_plural(r->study));
	table_print(&t, out);
}

/* Does a sample's place in the alternating order shift its result? */
static void
text_positions(const struct rrun *r, FILE *out)
{
	const struct rposition *p;
	size_t i;
	char *iv, **lines;

	fputc('\n', out);
	if (r->npositions == 0) {
		report_emit(out, "position bias: not measurable (one position only)");
		return;
	}
	report_emit(out, "position bias: %s", r->position_bias ?
	    "some positions in the alternating order shift results" :
	    "no position in the alternating order shifts results at this "
	    "precision");
	report_emit(out, "  each position / the others; verdicts by rank "
	    "tests, Holm-corrected over the %zu positions", r->npositions);
	lines = xcalloc(r->npositions, sizeof *lines);
	for (i = 0; i < r->npositions; i++) {
		p = &r->positions[i];
		iv = report_interval_str(&p->s);
		lines[i] = xasprintf("  position %" PRId64 ": n %zu, %.4fx  %s  "
		    "Holm p %.2g  %s", p->position, p->n, p->s.ratio, iv,
		    p->p_holm, report_verdict_phrase(&p->s));
		free(iv);
	}
	report_emit_rows(out, lines, r->npositions);
	free(lines);
}

/*
 * Whether the run's events hold h's error as an error on h: the events
 * below print it whole, so the host's line does not repeat it.
 */
static int
error_in_events(const struct rrun *r, const struct rhost *h)
{
	size_t i;

	for (i = 0; h->error != NULL && i < r->nevents &&
	    i < EVENT_LIST_MAX; i++)
		if (r->events[i].host != NULL &&
		    strcmp(r->events[i].host, h->name) == 0 &&
		    strcmp(r->events[i].level, "error") == 0 &&
		    strcmp(r->events[i].message, h->error) == 0)
			return 1;
	return 0;
}

static void
text_warnings(const struct rrun *r, FILE *out)
{
	const struct rinvalid *v;
	const struct rbuild *b;
	const struct rhost *h;
	const struct revent *e;
	size_t i, failed_builds = 0, host_notes = 0, unstable = 0;
	char *line;

	for (i = 0; i < r->nbuilds; i++)
		failed_builds += strcmp(r->builds[i].status, "ok") != 0;
	for (i = 0; i < r->nhosts; i++)
		host_notes += (r->hosts[i].status != NULL &&
		    strcmp(r->hosts[i].status, "ok") != 0) ||
		    r->hosts[i].pin_error != NULL;
	for (i = 0; i < r->nrows; i++)
		unstable += report_row_unstable(r, &r->rows[i]);
	if (r->ninvalid + r->nvariants + r->nevents + failed_builds +
	    host_notes + unstable + (size_t)r->moved == 0) {
		fputc('\n', out);
		report_emit(out, "warnings: none");
		return;
	}
	fputc('\n', out);
	report_emit(out, "warnings");
	if (r->ninvalid > 0)
		report_emit(out, "  %zu invalid sample%s (valid = 0), left out of "
		    "every rate", r->ninvalid, r->ninvalid == 1 ? "" : "s");
	for (i = 0; i < r->ninvalid && i < INVALID_LIST_MAX; i++) {
		v = &r->invalid[i];
		report_emit(out, "    %s %s (%s) sample %" PRId64 ": %s",
		    v->host, v->variant, v->label, v->index,
		    v->reason != NULL ? v->reason : "no reason recorded");
	}
	if (r->ninvalid > INVALID_LIST_MAX)
		report_emit(out, "    ... and %zu more",
		    r->ninvalid - INVALID_LIST_MAX);
	if (r->moved > 0)
		report_emit(out, "  %" PRId64 " of %" PRId64 " samples: clock "
		    "estimate moved over %d%% across the sample (cycles less "
		    "certain)", r->moved, r->clocked, CLOCK_MOVED_PCT);
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->status != NULL && strcmp(h->status, "ok") != 0 &&
		    error_in_events(r, h))
			report_emit(out, "  host \"%s\" %s (the error below)",
			    h->name, h->status);
		else if (h->status != NULL && strcmp(h->status, "ok") != 0)
			report_emit(out, "  host \"%s\" %s: %s", h->name,
			    h->status, h->error != NULL ? h->error :
			    "no error recorded");
		if (h->pin_error != NULL && h->has_pin_cpu)
			report_emit(out, "  host \"%s\" not pinned to cpu %" PRId64
			    ": %s", h->name, h->pin_cpu, h->pin_error);
		else if (h->pin_error != NULL)
			report_emit(out, "  host \"%s\" not pinned: %s", h->name,
			    h->pin_error);
	}
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		if (strcmp(b->status, "ok") != 0 && b->retried_as != 0)
			report_emit(out, "  build %" PRId64 " (%s) on \"%s\" %s, "
			    "built again as build %" PRId64, b->id, b->compiler,
			    b->host, b->status, b->retried_as);
		else if (strcmp(b->status, "ok") != 0)
			report_emit(out, "  build %" PRId64 " (%s) on \"%s\" %s",
			    b->id, b->compiler, b->host, b->status);
	}
	for (i = 0; i < r->nvariants; ) {
		line = report_not_run(r, &i);
		report_emit(out, "  %s", line);
		free(line);
	}
	for (i = 0; i < r->nevents && i < EVENT_LIST_MAX; i++) {
		e = &r->events[i];
		if (e->host != NULL)
			report_emit(out, "  %s on \"%s\" at %s:", e->level, e->host,
			    e->at);
		else
			report_emit(out, "  %s at %s:", e->level, e->at);
		report_emit_event(out, e->message);
	}
	if (r->nevents > EVENT_LIST_MAX)
		report_emit(out, "  ... and %zu more events (table events)",
		    r->nevents - EVENT_LIST_MAX);
	for (i = 0; i < r->nrows; i++) {
		if (!report_row_unstable(r, &r->rows[i]))
			continue;
		/* Continued lines hang under the item, as every warning's. */
		line = report_unstable_text(r, &r->rows[i]);
		report_emit(out, "  %s", line);
		free(line);
	}
	if (unstable > 0)
		report_emit(out, "  %s", REPORT_UNSTABLE_ADVICE);
}

void
report_text_run(const struct rrun *r, FILE *out)
{
	text_header(r, out);
	text_hosts(r, out);
	text_builds(r, out);
	text_rows(r, out);
	text_spread(r, out);
	text_best(r, out);
	text_vs_best(r, out);
	text_positions(r, out);
	text_warnings(r, out);
}

void
report_text_reference(const struct rrun *r, FILE *out)
{
	char *line, **lines;
	size_t i, n;

	if (!r->has_ref && r->ref_note == NULL)
		return;
	fputc('\n', out);
	if (!r->has_ref) {
		report_emit_wrapped(out, "published reference: ", r->ref_note);
		return;
	}
	line = xasprintf("published reference %s (reference/seeds.json "
	    "version %d, %s): %s", r->ref.id, r->ref.version,
	    r->ref.document, r->ref.note);
	report_emit_wrapped(out, "", line);
	free(line);
	lines = report_reference_lines(r, &n);
	for (i = 0; i < n; i++) {
		report_emit_wrapped(out, "  ", lines[i]);
		free(lines[i]);
	}
	free(lines);
}


/*
 * The report.  Each selected run is first loaded from results.db into a
 * small model (report-model.h), and every rendering (text and JSON here;
 * markdown, CSV and HTML in their own files) is written from that model,
 * so they always show the same numbers.
 */
#include "report-model.h"
#include "report-builds.h"
#include "study.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * Invalid samples and events listed one by one; past these only a count
 * is shown (the coordinator logs an error event per invalid sample, so a
 * broken variant could otherwise bury the table).  JSON lists them all.
 */
#define INVALID_LIST_MAX 10
#define EVENT_LIST_MAX 20
#define EVENT_TEXT_MAX 400	/* characters of an event's message */

/* Every text line fits a terminal this wide. */
#define REPORT_COLUMNS 100

void
report_format_rate(double rate, char *buf, size_t len)
{
	static const char *const suffix[] = { "", "k", "M", "G", "T" };
	size_t i = 0;
	int decimals;

	if (!(rate > 0) || !isfinite(rate)) {
		snprintf(buf, len, "-");
		return;
	}
	/* 999.96k must become 1.000M, not "1000.0k". */
	while (rate >= 999.95 && i + 1 < sizeof suffix / sizeof *suffix) {
		rate /= 1000;
		i++;
	}
	decimals = rate < 9.9995 ? 3 : rate < 99.995 ? 2 : 1;
	snprintf(buf, len, "%.*f%s", decimals, rate, suffix[i]);
}

/* ns per hash with four significant digits for fast and slow kernels. */
void
report_format_ns(double rate, char *buf, size_t len)
{
	double ns;

	if (!(rate > 0) || !isfinite(rate)) {
		snprintf(buf, len, "-");
		return;
	}
	ns = 1e9 / rate;
	snprintf(buf, len, "%.*f", ns < 9.9995 ? 3 : ns < 99.995 ? 2 : 1, ns);
}

char *
report_clock_str(double mhz, int source, int64_t n)
{
	if (!(mhz > 0))
		return xstrdup("-");
	if (source == CLOCK_SAMPLES && n > 0)
		return xasprintf("%.0f MHz (samples, median of %" PRId64 ")",
		    mhz, n);
	return xasprintf("%.0f MHz (%s)", mhz, report_clock_source(source));
}

char *
report_interval_str(const struct stats_ratio *s)
{
	if (isnan(s->lo))
		return xstrdup("[no interval: n < 2]");
	return xasprintf("[%.3f, %.3f]", s->lo, s->hi);
}

const char *
report_verdict_phrase(const struct stats_ratio *s)
{
	return stats_verdict_word(s->verdict);
}


/* Characters in s: UTF-8 continuation bytes do not count. */
static size_t
width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

/* Control characters (newlines in host text) become spaces. */
static void
blank_controls(char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
	}
}

/*
 * Cut s, in place, to max characters ending in "..." if it is wider.  s
 * then has at least max + 1 characters, so at least 4 bytes follow the
 * first max - 3 characters: room for "..." and its terminator.
 */
static void
cut_cols(char *s, size_t max)
{
	size_t cols = 0;

	if (width(s) <= max)
		return;
	for (; cols < max - 3 || ((unsigned char)*s & 0xc0) == 0x80; s++)
		cols += ((unsigned char)*s & 0xc0) != 0x80;
	memcpy(s, "...", 4);
}

/*
 * Print one line of text.  Free text from hosts (agent errors, build
 * logs) may hold newlines or run long: control characters become spaces
 * and a line wider than REPORT_COLUMNS is cut to end in "...".  The
 * database and the JSON keep the whole text.
 */
static void __attribute__((format(printf, 2, 3)))
emit(FILE *out, const char *fmt, ...)
{
	va_list ap;
	char *line;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	line = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(line, (size_t)n + 1, fmt, ap);
	va_end(ap);
	blank_controls(line);
	cut_cols(line, REPORT_COLUMNS);
	fprintf(out, "%s\n", line);
	free(line);
}

/*
 * Print prefix and text over as many lines as it takes, breaking at
 * spaces, continuation lines indented under the text: the command line
 * is worth showing whole.
 */
static void
emit_wrapped(FILE *out, const char *prefix, const char *text)
{
	size_t indent = width(prefix), room = REPORT_COLUMNS - indent, cols;
	const char *p = text, *q, *space;
	int first = 1;

	while (first || *p != '\0') {
		space = NULL;
		cols = 0;
		for (q = p; *q != '\0' && cols < room; q++) {
			if (*q == ' ')
				space = q;
			cols += ((unsigned char)*q & 0xc0) != 0x80;
		}
		while (((unsigned char)*q & 0xc0) == 0x80)
			q++;
		if (*q != '\0' && *q != ' ' && space != NULL)
			q = space;
		if (first)
			emit(out, "%s%.*s", prefix, (int)(q - p), p);
		else
			emit(out, "%*s%.*s", (int)indent, "", (int)(q - p), p);
		for (p = q; *p == ' '; p++)
			;
		first = 0;
	}
}

/*
 * An event's message under its heading, wrapped: the numbers in a drift
 * warning come last.  Host text in it (build output) may be long or hold
 * newlines: newlines become spaces and the text stops at EVENT_TEXT_MAX
 * characters with "..."; the database and the JSON keep all of it.
 */
static void
emit_event(FILE *out, const char *message)
{
	char *text = xstrdup(message);

	blank_controls(text);
	cut_cols(text, EVENT_TEXT_MAX);
	emit_wrapped(out, "    ", text);
	free(text);
}

/*
 * Text tables: cells are collected first so that each column is as wide
 * as its widest cell, counted in characters (the range has an en dash).
 */
struct table {
	size_t		  ncols;
	const char	**heads;
	const char	 *align;	/* 'l' or 'r' per column */
	char		**cells;
	size_t		  ncells;
};

static void
cell(struct table *t, char *owned)
{
	t->cells = report_grow(t->cells, t->ncells, sizeof *t->cells);
	t->cells[t->ncells++] = owned;
}

static void
table_row(const struct table *t, const size_t *w, const char *const *cells,
    FILE *out)
{
	size_t c, n = 1, len, pad;
	char *line, *p;

	for (c = 0; c < t->ncols; c++)
		n += 2 + strlen(cells[c]) + w[c] - width(cells[c]);
	p = line = xmalloc(n);
	for (c = 0; c < t->ncols; c++) {
		len = strlen(cells[c]);
		pad = w[c] - width(cells[c]);
		/* No trailing blanks after a left-aligned last column. */
		if (c + 1 == t->ncols && t->align[c] == 'l')
			pad = 0;
		memset(p, ' ', 2);
		p += 2;
		if (t->align[c] == 'r') {
			memset(p, ' ', pad);
			p += pad;
		}
		memcpy(p, cells[c], len);
		p += len;
		if (t->align[c] == 'l') {
			memset(p, ' ', pad);
			p += pad;
		}
	}
	*p = '\0';
	emit(out, "%s", line);
	free(line);
}

static void
table_print(struct table *t, FILE *out)
{
	size_t *w = xcalloc(t->ncols, sizeof *w);
	size_t i, c;

	for (c = 0; c < t->ncols; c++)
		w[c] = width(t->heads[c]);
	for (i = 0; i < t->ncells; i++) {
		c = i % t->ncols;
		if (width(t->cells[i]) > w[c])
			w[c] = width(t->cells[i]);
	}
	table_row(t, w, t->heads, out);
	for (i = 0; i + t->ncols <= t->ncells; i += t->ncols)
		table_row(t, w, (const char *const *)&t->cells[i], out);
	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
	t->cells = NULL;
	t->ncells = 0;
}

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

	emit(out, "study %s, run %" PRId64 ": %s%s", r->study, r->id,
	    r->status, r->exploratory ? " (exploratory)" : "");
	emit(out, "  steps     %" PRId64 " per sample, %" PRId64
	    " sample%s per variant", r->steps, r->samples,
	    r->samples == 1 ? "" : "s");
	emit(out, "  seed      %s", r->seed);
	if (r->openssl_cap != NULL)
		emit(out, "  openssl   capabilities \"%s\" (OPENSSL_ia32cap on "
		    "x86-64, OPENSSL_armcap on aarch64)", r->openssl_cap);
	emit(out, "  started   %s", r->started_at);
	emit(out, "  finished  %s", r->finished_at != NULL ?
	    r->finished_at : "-");
	emit_wrapped(out, "  command   ", r->command);
	if (r->ndigests == 0)
		emit(out, "  digest    no valid samples");
	for (i = 0; i < r->ndigests; i++) {
		d = &r->digests[i];
		if (d->distinct == 1 && d->n == 1)
			emit(out, "  digest    %.16s... in the one valid "
			    "sample of %" PRId64 " steps", d->digest,
			    d->steps);
		else if (d->distinct == 1)
			emit(out, "  digest    %.16s... in all %" PRId64
			    " valid samples of %" PRId64 " steps", d->digest,
			    d->n, d->steps);
		else
			emit(out, "  digest    MISMATCH: %" PRId64 " valid "
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
	};
	struct table t = { 7, heads, "lllllll", NULL, 0 };
	const struct rhost *h;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		cell(&t, xstrdup(h->name));
		cell(&t, xstrdup(h->status != NULL ? h->status : "-"));
		cell(&t, report_clock_str(h->clock_mhz, h->clock_source,
		    h->clock_n));
		cell(&t, xstrdup(h->governor != NULL ? h->governor : "-"));
		cell(&t, pin_str(h));
		cell(&t, xstrdup(h->counters != NULL ? h->counters : "-"));
		cell(&t, noise_str(h));
	}
	fputc('\n', out);
	table_print(&t, out);
	/* what the agents called: OpenSSL_version() on each host */
	for (i = 0; i < r->nhosts; i++)
		if (r->hosts[i].openssl != NULL)
			emit(out, "  libcrypto on %s: %s", r->hosts[i].name,
			    r->hosts[i].openssl);
	/* How the cpu was chosen and why cycles are estimated, in words. */
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->cpu_choice != NULL)
			emit_wrapped(out, "  cpu auto  ", h->cpu_choice);
		if (h->counters_error != NULL)
			emit_wrapped(out, "  counters  ", h->counters_error);
	}
}

static void
text_builds(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"build", "host", "compiler", "cflags", "status", "version"
	};
	struct table t = { 6, heads, "rlllll", NULL, 0 };
	const struct rbuild *b;
	size_t i;

	if (r->nbuilds == 0)
		return;
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		cell(&t, xasprintf("%" PRId64, b->id));
		cell(&t, xstrdup(b->host));
		cell(&t, xstrdup(b->compiler));
		cell(&t, xstrdup(b->cflags));
		cell(&t, xstrdup(b->status));
		cell(&t, xstrdup(b->compiler_version != NULL ?
		    b->compiler_version : "-"));
	}
	fputc('\n', out);
	table_print(&t, out);
}

/*
 * Rows are grouped by variant, one line per host (and build), so hosts
 * are compared down a column and any number of hosts fits in 100
 * columns.  The compiler and cycles columns appear only when they carry
 * information.
 */
static void
text_rows(const struct rrun *r, FILE *out)
{
	const char *heads[11];
	char align[12], ns_head[64];
	struct table t = { 0, heads, align, NULL, 0 };
	const struct rrow *w;
	const char *prev = NULL;
	size_t i;

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
#define COL(name, a) (heads[t.ncols] = (name), align[t.ncols++] = (a))
	COL("variant", 'l');
	if (r->several_builds)
		COL("compiler", 'l');
	COL("host", 'l');
	COL("median", 'r');
	COL(ns_head, 'r');
	if (r->any_calib)
		COL("cycles", 'r');
	if (r->any_counted)
		COL("ipc", 'r');
	COL("min–max", 'r');
	COL("n", 'r');
	COL("digest", 'l');
	COL("inv", 'r');
#undef COL
	align[t.ncols] = '\0';

	if (r->nrows == 0) {
		fputc('\n', out);
		emit(out, "no samples");
		return;
	}
	fputc('\n', out);
	emit(out, "%s/s over the n valid samples; inv: samples with "
	    "valid = 0, in no rate", study_unit_plural(r->study));
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		cell(&t, xstrdup(prev != NULL && strcmp(prev, w->variant) == 0 ?
		    "" : w->variant));
		prev = w->variant;
		if (r->several_builds)
			cell(&t, xstrdup(w->label));
		cell(&t, xstrdup(w->host));
		cell(&t, rate_str(w->n > 0 ? w->median : 0));
		cell(&t, ns_str(w->n > 0 ? w->median : 0));
		if (r->any_calib)
			cell(&t, cycles_str(w));
		if (r->any_counted)
			cell(&t, ipc_str(w));
		if (w->n > 0) {
			char lo[32], hi[32];

			report_format_rate(w->min, lo, sizeof lo);
			report_format_rate(w->max, hi, sizeof hi);
			cell(&t, xasprintf("%s–%s", lo, hi));
		} else
			cell(&t, xstrdup("-"));
		cell(&t, xasprintf("%" PRId64, w->n));
		cell(&t, xstrdup(w->digest == DIGEST_OK ? "ok" :
		    w->digest == DIGEST_MISMATCH ? "MISMATCH" : "-"));
		cell(&t, xasprintf("%" PRId64, w->invalid));
	}
	table_print(&t, out);
}

static void
text_best(const struct rrun *r, FILE *out)
{
	char ns_head[64];
	const char *heads[] = {
		"host", "variant", "median", ns_head, "cycles"
	};
	struct table t = { 5, heads, "llrrr", NULL, 0 };
	const struct rhost *h;
	const struct rrow *w;
	const struct rratio *x;
	size_t i;
	char *iv;

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	fputc('\n', out);
	emit(out, "best valid variant per host");
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		w = h->best;
		cell(&t, xstrdup(h->name));
		cell(&t, r->several_builds ? xasprintf("%s (%s)", w->variant,
		    w->label) : xstrdup(w->variant));
		cell(&t, rate_str(w->median));
		cell(&t, ns_str(w->median));
		cell(&t, cycles_str(w));
	}
	if (r->nranked > 0)
		table_print(&t, out);
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best == NULL)
			emit(out, "  %s: no valid samples",
			    r->hosts[i].name);
	}
	if (r->nranked < 2)
		return;
	fputc('\n', out);
	emit(out, "ratios of best rates, %d%% bootstrap interval over the "
	    "samples, verdict", STATS_LEVEL_PCT);
	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		if (x->refused != NULL) {
			emit(out, "  %s / %s: refused, %s", x->a->host,
			    x->b->host, x->refused);
			continue;
		}
		iv = report_interval_str(&x->s);
		emit(out, "  %s / %s = %.2fx  %s  %s", x->a->host, x->b->host,
		    x->s.ratio, iv, report_verdict_phrase(&x->s));
		free(iv);
	}
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
	struct table t = { 5, heads, "llrll", NULL, 0 };
	const struct rrow *w;
	const struct rhost *h;
	size_t i, j, n = 0;

	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		for (j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if (w == h->best || strcmp(w->host, h->name) != 0 ||
			    isnan(w->vs_best.ratio))
				continue;
			cell(&t, xstrdup(h->name));
			cell(&t, r->several_builds ? xasprintf("%s (%s)",
			    w->variant, w->label) : xstrdup(w->variant));
			cell(&t, xasprintf("%.3fx", w->vs_best.ratio));
			cell(&t, report_interval_str(&w->vs_best));
			cell(&t, xstrdup(report_verdict_phrase(&w->vs_best)));
			n++;
		}
	}
	if (n == 0)
		return;
	fputc('\n', out);
	emit(out, "variants against their host's best, %d%% interval",
	    STATS_LEVEL_PCT);
	table_print(&t, out);
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
	struct table t = { 0, heads, align, NULL, 0 };
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
		cell(&t, xstrdup(w->variant));
		if (r->several_builds)
			cell(&t, xstrdup(w->label));
		cell(&t, xstrdup(w->host));
		cell(&t, rate_str(w->desc.q1));
		cell(&t, rate_str(w->median));
		cell(&t, rate_str(w->desc.q3));
		cell(&t, isnan(w->desc.cv) ? xstrdup("-") :
		    xasprintf("%.2f%%", 100 * w->desc.cv));
		cell(&t, report_clock_str(w->clock_mhz, w->clock_source,
		    w->clock_source == CLOCK_SAMPLES ? -1 : 0));
	}
	if (t.ncells == 0)
		return;
	fputc('\n', out);
	emit(out, "spread per cell: quartiles of %s/s, coefficient of "
	    "variation, clock", study_unit_plural(r->study));
	table_print(&t, out);
}

/* Does a sample's place in the alternating order shift its result? */
static void
text_positions(const struct rrun *r, FILE *out)
{
	const struct rposition *p;
	size_t i;
	char *iv;

	fputc('\n', out);
	if (r->npositions == 0) {
		emit(out, "position bias: not measurable (one position only)");
		return;
	}
	emit(out, "position bias: %s", r->position_bias ?
	    "some positions in the alternating order shift results" :
	    "no position in the alternating order shifts results at this "
	    "precision");
	for (i = 0; i < r->npositions; i++) {
		p = &r->positions[i];
		iv = report_interval_str(&p->s);
		emit(out, "  position %" PRId64 ": n %zu, %.4fx the others  "
		    "%s  %s", p->position, p->n, p->s.ratio, iv,
		    report_verdict_phrase(&p->s));
		free(iv);
	}
}

/* Same host, build, status and reason: one warning line for all. */
static int
same_outcome(const struct rvariant *a, const struct rvariant *b)
{
	return strcmp(a->host, b->host) == 0 && a->build_id == b->build_id &&
	    strcmp(a->status, b->status) == 0 &&
	    (a->reason == NULL ? b->reason == NULL :
	    b->reason != NULL && strcmp(a->reason, b->reason) == 0);
}

/* "variants a, b, c" for n >= 2 variants.  Caller frees. */
static char *
variant_list(const struct rvariant *v, size_t n)
{
	char *s = xasprintf("variants %s", v[0].variant), *t;
	size_t i;

	for (i = 1; i < n; i++) {
		t = xasprintf("%s, %s", s, v[i].variant);
		free(s);
		s = t;
	}
	return s;
}

static void
text_warnings(const struct rrun *r, FILE *out)
{
	const struct rinvalid *v;
	const struct rvariant *x;
	const struct rbuild *b;
	const struct rhost *h;
	const struct revent *e;
	size_t i, j, failed_builds = 0, host_notes = 0;
	char *names;

	for (i = 0; i < r->nbuilds; i++)
		failed_builds += strcmp(r->builds[i].status, "ok") != 0;
	for (i = 0; i < r->nhosts; i++)
		host_notes += (r->hosts[i].status != NULL &&
		    strcmp(r->hosts[i].status, "ok") != 0) ||
		    r->hosts[i].pin_error != NULL;
	if (r->ninvalid + r->nvariants + r->nevents + failed_builds +
	    host_notes + (size_t)r->moved == 0) {
		fputc('\n', out);
		emit(out, "warnings: none");
		return;
	}
	fputc('\n', out);
	emit(out, "warnings");
	if (r->ninvalid > 0)
		emit(out, "  %zu invalid sample%s (valid = 0), left out of "
		    "every rate", r->ninvalid, r->ninvalid == 1 ? "" : "s");
	for (i = 0; i < r->ninvalid && i < INVALID_LIST_MAX; i++) {
		v = &r->invalid[i];
		emit(out, "    %s %s (%s) sample %" PRId64 ": %s",
		    v->host, v->variant, v->label, v->index,
		    v->reason != NULL ? v->reason : "no reason recorded");
	}
	if (r->ninvalid > INVALID_LIST_MAX)
		emit(out, "    ... and %zu more",
		    r->ninvalid - INVALID_LIST_MAX);
	if (r->moved > 0)
		emit(out, "  %" PRId64 " of %" PRId64 " samples: clock "
		    "estimate moved over %d%% across the sample (cycles less "
		    "certain)", r->moved, r->clocked, CLOCK_MOVED_PCT);
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->status != NULL && strcmp(h->status, "ok") != 0)
			emit(out, "  host \"%s\" %s: %s", h->name,
			    h->status, h->error != NULL ? h->error :
			    "no error recorded");
		if (h->pin_error != NULL && h->has_pin_cpu)
			emit(out, "  host \"%s\" not pinned to cpu %" PRId64
			    ": %s", h->name, h->pin_cpu, h->pin_error);
		else if (h->pin_error != NULL)
			emit(out, "  host \"%s\" not pinned: %s", h->name,
			    h->pin_error);
	}
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		if (strcmp(b->status, "ok") != 0)
			emit(out, "  build %" PRId64 " (%s) on \"%s\" %s",
			    b->id, b->compiler, b->host, b->status);
	}
	for (i = 0; i < r->nvariants; i = j) {
		x = &r->variants[i];
		for (j = i + 1; j < r->nvariants &&
		    same_outcome(x, &r->variants[j]); j++)
			;
		if (j == i + 1)
			names = xasprintf("variant \"%s\"", x->variant);
		else
			names = variant_list(&r->variants[i], j - i);
		emit(out, "  %s on \"%s\" (%s) %s: %s", names, x->host,
		    x->label, x->status, x->reason != NULL ? x->reason :
		    "no reason recorded");
		free(names);
	}
	for (i = 0; i < r->nevents && i < EVENT_LIST_MAX; i++) {
		e = &r->events[i];
		if (e->host != NULL)
			emit(out, "  %s on \"%s\" at %s:", e->level, e->host,
			    e->at);
		else
			emit(out, "  %s at %s:", e->level, e->at);
		emit_event(out, e->message);
	}
	if (r->nevents > EVENT_LIST_MAX)
		emit(out, "  ... and %zu more events (table events)",
		    r->nevents - EVENT_LIST_MAX);
}

static void
text_run(const struct rrun *r, FILE *out)
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

/* cJSON leaves a key out for a NULL string; scripts want null. */
static void
json_str(cJSON *o, const char *key, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static void
json_num(cJSON *o, const char *key, double v, int known)
{
	if (known)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void
json_build(cJSON *o, const struct rrun *r, int64_t build_id)
{
	const struct rbuild *b = report_find_build(r, build_id);

	cJSON_AddNumberToObject(o, "build_id", (double)build_id);
	json_str(o, "compiler", b != NULL ? b->compiler : NULL);
}

cJSON *
report_json_ratio(const struct stats_ratio *s)
{
	cJSON *o = cJSON_CreateObject();

	json_num(o, "ratio", s->ratio, !isnan(s->ratio));
	json_num(o, "lo", s->lo, !isnan(s->lo));
	json_num(o, "hi", s->hi, !isnan(s->hi));
	cJSON_AddNumberToObject(o, "level_pct", STATS_LEVEL_PCT);
	json_str(o, "verdict", stats_verdict_key(s->verdict));
	json_str(o, "verdict_text", stats_verdict_word(s->verdict));
	return o;
}

static cJSON *
json_row(const struct rrow *w)
{
	cJSON *o = cJSON_CreateObject();
	int known = w->n > 0;

	json_str(o, "variant", w->variant);
	json_str(o, "host", w->host);
	cJSON_AddNumberToObject(o, "build_id", (double)w->build_id);
	json_str(o, "compiler", w->compiler);
	cJSON_AddNumberToObject(o, "n", (double)w->n);
	json_num(o, "median_rate", w->median, known);
	json_num(o, "ns_per_step", known ? 1e9 / w->median : 0, known);
	json_num(o, "cycles_per_step", report_row_cycles(w),
	    report_row_cycles(w) > 0);
	json_num(o, "clock_mhz", w->clock_mhz, w->clock_mhz > 0);
	json_str(o, "clock_source", report_clock_source(w->clock_source));
	json_str(o, "cycles_source", report_row_cycles_source(w));
	json_num(o, "ipc", w->ipc, w->counted > 0 && w->ipc > 0);
	cJSON_AddNumberToObject(o, "clock_moved", (double)w->moved);
	json_num(o, "min_rate", w->min, known);
	json_num(o, "q1_rate", w->desc.q1, known);
	json_num(o, "q3_rate", w->desc.q3, known);
	json_num(o, "max_rate", w->max, known);
	json_num(o, "mean_rate", w->desc.mean, known);
	json_num(o, "cv", w->desc.cv, !isnan(w->desc.cv));
	if (isnan(w->vs_best.ratio))
		cJSON_AddNullToObject(o, "vs_best");
	else
		cJSON_AddItemToObject(o, "vs_best", report_json_ratio(&w->vs_best));
	json_str(o, "digest", w->digest == DIGEST_OK ? "ok" :
	    w->digest == DIGEST_MISMATCH ? "mismatch" : NULL);
	cJSON_AddNumberToObject(o, "invalid", (double)w->invalid);
	return o;
}

static cJSON *
json_hosts(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rhost *h;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		o = cJSON_CreateObject();
		json_str(o, "host", h->name);
		json_str(o, "status", h->status);
		json_str(o, "error", h->error);
		json_num(o, "pin_cpu", (double)h->pin_cpu, h->has_pin_cpu);
		if (h->pinned == -1)
			cJSON_AddNullToObject(o, "pinned");
		else
			cJSON_AddBoolToObject(o, "pinned", h->pinned);
		json_str(o, "pin_error", h->pin_error);
		json_str(o, "governor", h->governor);
		json_str(o, "openssl", h->openssl);
		json_num(o, "calib_mhz", h->calib_mhz, h->calib_mhz > 0);
		json_num(o, "clock_mhz", h->clock_mhz, h->clock_mhz > 0);
		json_str(o, "clock_source",
		    report_clock_source(h->clock_source));
		cJSON_AddNumberToObject(o, "clock_samples", (double)h->clock_n);
		json_str(o, "cpu_model", h->cpu_model);
		json_str(o, "arch", h->arch);
		json_str(o, "os", h->os);
		json_str(o, "kernel", h->kernel);
		json_num(o, "cores", (double)h->cores, h->cores > 0);
		json_str(o, "cpu_choice", h->cpu_choice);
		json_str(o, "counters", h->counters);
		json_str(o, "counters_error", h->counters_error);
		cJSON_AddNumberToObject(o, "windows", (double)h->windows);
		cJSON_AddNumberToObject(o, "noisy_windows", (double)h->noisy);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
json_builds(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rbuild *b;
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)b->id);
		json_str(o, "host", b->host);
		json_str(o, "compiler", b->compiler);
		json_str(o, "compiler_version", b->compiler_version);
		json_str(o, "cflags", b->cflags);
		json_str(o, "native", b->native);
		json_str(o, "status", b->status);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
json_best(const struct rrun *r, cJSON **ratios)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rratio *x;
	size_t i;

	for (i = 0; i < r->nranked; i++)
		cJSON_AddItemToArray(a, json_row(r->ranked[i]->best));
	*ratios = cJSON_CreateArray();
	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		o = x->refused != NULL ? cJSON_CreateObject() :
		    report_json_ratio(&x->s);
		json_str(o, "faster", x->a->host);
		json_str(o, "slower", x->b->host);
		json_str(o, "refused", x->refused);
		cJSON_AddItemToArray(*ratios, o);
	}
	return a;
}

static cJSON *
json_positions(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	size_t i;

	for (i = 0; i < r->npositions; i++) {
		o = report_json_ratio(&r->positions[i].s);
		cJSON_AddNumberToObject(o, "position",
		    (double)r->positions[i].position);
		cJSON_AddNumberToObject(o, "n", (double)r->positions[i].n);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
json_warnings(const struct rrun *r)
{
	cJSON *w = cJSON_CreateObject(), *a, *o;
	size_t i;

	a = cJSON_AddArrayToObject(w, "invalid_samples");
	for (i = 0; i < r->ninvalid; i++) {
		o = cJSON_CreateObject();
		json_str(o, "host", r->invalid[i].host);
		json_str(o, "variant", r->invalid[i].variant);
		json_build(o, r, r->invalid[i].build_id);
		cJSON_AddNumberToObject(o, "sample_index",
		    (double)r->invalid[i].index);
		json_str(o, "reason", r->invalid[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	a = cJSON_AddArrayToObject(w, "variants");
	for (i = 0; i < r->nvariants; i++) {
		o = cJSON_CreateObject();
		json_str(o, "host", r->variants[i].host);
		json_str(o, "variant", r->variants[i].variant);
		json_build(o, r, r->variants[i].build_id);
		json_str(o, "status", r->variants[i].status);
		json_str(o, "reason", r->variants[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	o = cJSON_AddObjectToObject(w, "clock_moved");
	cJSON_AddNumberToObject(o, "samples", (double)r->moved);
	cJSON_AddNumberToObject(o, "of", (double)r->clocked);
	cJSON_AddNumberToObject(o, "threshold_pct", CLOCK_MOVED_PCT);
	a = cJSON_AddArrayToObject(w, "events");
	for (i = 0; i < r->nevents; i++) {
		o = cJSON_CreateObject();
		json_str(o, "host", r->events[i].host);
		json_str(o, "at", r->events[i].at);
		json_str(o, "level", r->events[i].level);
		json_str(o, "message", r->events[i].message);
		cJSON_AddItemToArray(a, o);
	}
	return w;
}

static cJSON *json_reference(const struct rrun *r);

static cJSON *
json_run(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *a, *d, *ratios;
	size_t i;

	cJSON_AddNumberToObject(o, "id", (double)r->id);
	json_str(o, "study", r->study);
	json_str(o, "unit", study_unit(r->study));
	json_str(o, "unit_plural", study_unit_plural(r->study));
	json_str(o, "status", r->status);
	cJSON_AddBoolToObject(o, "exploratory", r->exploratory);
	cJSON_AddNumberToObject(o, "steps", (double)r->steps);
	cJSON_AddNumberToObject(o, "samples_per_variant", (double)r->samples);
	json_str(o, "seed", r->seed);
	json_str(o, "openssl_cap", r->openssl_cap);
	json_str(o, "started_at", r->started_at);
	json_str(o, "finished_at", r->finished_at);
	json_str(o, "command", r->command);
	a = cJSON_AddArrayToObject(o, "digests");
	for (i = 0; i < r->ndigests; i++) {
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "steps", (double)r->digests[i].steps);
		cJSON_AddNumberToObject(d, "valid_samples",
		    (double)r->digests[i].n);
		cJSON_AddBoolToObject(d, "agree", r->digests[i].distinct == 1);
		json_str(d, "digest", r->digests[i].distinct == 1 ?
		    r->digests[i].digest : NULL);
		cJSON_AddItemToArray(a, d);
	}
	cJSON_AddItemToObject(o, "hosts", json_hosts(r));
	cJSON_AddItemToObject(o, "builds", json_builds(r));
	a = cJSON_AddArrayToObject(o, "rows");
	for (i = 0; i < r->nrows; i++)
		cJSON_AddItemToArray(a, json_row(&r->rows[i]));
	cJSON_AddItemToObject(o, "best", json_best(r, &ratios));
	cJSON_AddItemToObject(o, "ratios", ratios);
	cJSON_AddBoolToObject(o, "position_bias", r->position_bias);
	cJSON_AddItemToObject(o, "positions", json_positions(r));
	cJSON_AddItemToObject(o, "warnings", json_warnings(r));
	if (r->has_ref || r->ref_note != NULL)
		cJSON_AddItemToObject(o, "reference", json_reference(r));
	return o;
}

int
report_format_parse(const char *s)
{
	static const char *const names[] = {
		[REPORT_TEXT] = "text", [REPORT_JSON] = "json",
		[REPORT_MARKDOWN] = "markdown", [REPORT_CSV] = "csv",
		[REPORT_HTML] = "html",
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof *names; i++) {
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	}
	return -1;
}

char *
report_reference_line(const struct rrun *r, const struct rhost *h)
{
	const struct published *p = &r->ref;
	char local[32], pub[32], *steps;
	char *line;

	report_format_rate(h->best->median, local, sizeof local);
	report_format_rate(p->median_rate, pub, sizeof pub);
	steps = p->steps == h->best->steps ? xstrdup("same steps") :
	    xasprintf("steps differ: %" PRId64 " here, %" PRId64
	    " published; indicative only", h->best->steps, p->steps);
	line = xasprintf("%s %s %s %s/s is %.2fx %s (%s %s/s, %s; %s)",
	    h->name, h->best->variant, local, study_unit_plural(r->study),
	    h->best->median / p->median_rate, p->id, pub,
	    study_unit_plural(r->study), p->machine, steps);
	free(steps);
	return line;
}

static void
text_reference(const struct rrun *r, FILE *out)
{
	size_t i;
	char *line;

	if (!r->has_ref && r->ref_note == NULL)
		return;
	fputc('\n', out);
	if (!r->has_ref) {
		emit(out, "published reference: %s", r->ref_note);
		return;
	}
	line = xasprintf("published reference %s (reference/seeds.json "
	    "version %d, %s): %s", r->ref.id, r->ref.version,
	    r->ref.document, r->ref.note);
	emit_wrapped(out, "", line);
	free(line);
	for (i = 0; i < r->nranked; i++) {
		line = report_reference_line(r, r->ranked[i]);
		emit_wrapped(out, "  ", line);
		free(line);
	}
}

/* Attach o->reference's figure for each run's study, or why there is none. */
static int
attach_reference(const struct report_opts *o, struct rrun *r,
    struct so_err *err)
{
	struct so_err why;
	int ret;

	if (o->reference == NULL)
		return 0;
	ret = published_find(o->reference, r->study, &r->ref, &why);
	if (ret == 0)
		r->has_ref = 1;
	else if (ret == SO_EINVAL)
		r->ref_note = xstrdup(why.msg);
	else
		return so_error(err, ret, "%s", why.msg);
	return 0;
}

static cJSON *
json_reference(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *a, *x;
	size_t i;
	char *line;

	if (!r->has_ref) {
		json_str(o, "note", r->ref_note);
		return o;
	}
	json_str(o, "id", r->ref.id);
	cJSON_AddNumberToObject(o, "version", r->ref.version);
	json_str(o, "machine", r->ref.machine);
	json_str(o, "document", r->ref.document);
	cJSON_AddNumberToObject(o, "steps", (double)r->ref.steps);
	cJSON_AddNumberToObject(o, "samples", (double)r->ref.samples);
	cJSON_AddNumberToObject(o, "median_rate", r->ref.median_rate);
	a = cJSON_AddArrayToObject(o, "local");
	for (i = 0; i < r->nranked; i++) {
		x = cJSON_CreateObject();
		json_str(x, "host", r->ranked[i]->name);
		json_str(x, "variant", r->ranked[i]->best->variant);
		cJSON_AddNumberToObject(x, "median_rate",
		    r->ranked[i]->best->median);
		cJSON_AddNumberToObject(x, "ratio",
		    r->ranked[i]->best->median / r->ref.median_rate);
		cJSON_AddBoolToObject(x, "same_steps",
		    r->ranked[i]->best->steps == r->ref.steps);
		line = report_reference_line(r, r->ranked[i]);
		json_str(x, "text", line);
		free(line);
		cJSON_AddItemToArray(a, x);
	}
	return o;
}

int
report_print(sqlite3 *db, const struct report_opts *o, FILE *out,
    struct so_err *err)
{
	struct rrun *runs = NULL;
	int64_t *ids = NULL;
	size_t n = 0, loaded = 0, i;
	cJSON *root = NULL, *a;
	char *text;
	int ret;

	if ((ret = report_select(db, o, &ids, &n, err)) != 0)
		goto out;
	/* Load everything before printing: a failure prints nothing. */
	runs = xcalloc(n, sizeof *runs);
	for (loaded = 0; loaded < n; loaded++) {
		if ((ret = report_load_run(db, ids[loaded], &runs[loaded],
		    err)) != 0)
			goto out;
		if ((ret = attach_reference(o, &runs[loaded], err)) != 0) {
			loaded++;
			goto out;
		}
	}
	if (o->format == REPORT_MARKDOWN)
		report_markdown(runs, n, out);
	else if (o->format == REPORT_HTML)
		report_html(runs, n, o, out);
	else if (o->format == REPORT_CSV)
		ret = report_csv(db, runs, n, out, err);
	else if (o->format == REPORT_JSON) {
		root = cJSON_CreateObject();
		json_str(root, "db", o->db_path);
		a = cJSON_AddArrayToObject(root, "runs");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(a, json_run(&runs[i]));
		if ((text = cJSON_Print(root)) == NULL) {
			ret = so_error(err, SO_ENOMEM, "cannot format the "
			    "report as json");
			goto out;
		}
		fprintf(out, "%s\n", text);
		cJSON_free(text);
	} else {
		for (i = 0; i < n && ret == 0; i++) {
			if (i > 0)
				fputc('\n', out);
			text_run(&runs[i], out);
			text_reference(&runs[i], out);
			ret = report_builds_text(db, runs[i].id, out, err);
		}
	}
out:
	cJSON_Delete(root);
	for (i = 0; i < loaded; i++)
		report_free_run(&runs[i]);
	free(runs);
	free(ids);
	return ret;
}

/*
 * The tables and warnings Markdown and HTML both show, built once from the
 * model: each rendering names its columns (struct report_col) and prints
 * the table its own way (report-table.c).
 */
#include "report-table.h"
#include "strbuf.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *
dup_or_dash(const char *s)
{
	return xstrdup(s != NULL ? s : "-");
}

static char *
rate_cell(double rate)
{
	char buf[32];

	report_format_rate(rate, buf, sizeof buf);
	return xstrdup(buf);
}

/* Give t the heads and alignment of cols, in one block the table frees. */
static void
set_cols(struct table *t, const struct report_col *cols, size_t ncols)
{
	const char **heads = xcalloc(1, ncols * sizeof *heads + ncols + 1);
	char *align = (char *)(heads + ncols);
	size_t c;

	for (c = 0; c < ncols; c++) {
		heads[c] = cols[c].head;
		align[c] = cols[c].align;
	}
	t->ncols = ncols;
	t->heads = heads;
	t->align = align;
	t->mem = heads;
}

static char *
pin_cell(const struct rhost *h)
{
	if (h->pinned == 1 && h->has_pin_cpu)
		return xasprintf("cpu %" PRId64, h->pin_cpu);
	if (h->has_pin_cpu)
		return xasprintf("cpu %" PRId64 " (not pinned)", h->pin_cpu);
	return xstrdup(h->pinned == -1 ? "unknown" : "none");
}

static char *
noise_cell(const struct rhost *h)
{
	if (h->windows == 0)
		return xstrdup("-");
	return xasprintf("%s %" PRId64 "/%" PRId64, h->noisy > 0 ? "noisy" :
	    "quiet", h->noisy > 0 ? h->noisy : h->windows, h->windows);
}

/* The model, and the x86 signature that names the core where a VM's
 * model string does not ("AMD EPYC"). */
static char *
cpu_cell(const struct rhost *h)
{
	if (h->cpu_signature == NULL)
		return dup_or_dash(h->cpu_model);
	return xasprintf("%s (%s)", h->cpu_model != NULL ? h->cpu_model : "-",
	    h->cpu_signature);
}

static char *
host_cell(const struct rhost *h, int what)
{
	switch (what) {
	case COL_HOST:		return dup_or_dash(h->name);
	case COL_HOST_STATUS:	return dup_or_dash(h->status);
	case COL_CLOCK:		return report_clock_str(h->clock_mhz,
				    h->clock_source, h->clock_n);
	case COL_CPU:		return cpu_cell(h);
	case COL_ARCH:		return dup_or_dash(h->arch);
	case COL_KERNEL:	return dup_or_dash(h->kernel);
	case COL_OPENSSL:	return dup_or_dash(h->openssl);
	case COL_GOVERNOR:	return dup_or_dash(h->governor);
	case COL_PINNING:	return pin_cell(h);
	case COL_COUNTERS:	return dup_or_dash(h->counters);
	default:		return noise_cell(h);
	}
}

int
report_host_mismatched(const struct rrun *r, const struct rhost *h)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].n > 0 && r->rows[i].digest == DIGEST_MISMATCH &&
		    strcmp(r->rows[i].host, h->name) == 0)
			return 1;
	return 0;
}

void
report_best_rows(const struct rrun *r, struct table *t)
{
	const struct rhost *h;
	char buf[32];
	size_t i;

	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		table_cell(t, xstrdup(h->name));
		table_cell(t, xasprintf("%s (%s)", h->best->variant,
		    h->best->label));
		report_format_rate(h->best->median, buf, sizeof buf);
		table_cell(t, xstrdup(buf));
		report_format_ns(h->best->median, buf, sizeof buf);
		table_cell(t, xstrdup(buf));
	}
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best != NULL)
			continue;
		table_cell(t, xstrdup(r->hosts[i].name));
		table_cell(t, xstrdup(report_host_mismatched(r, &r->hosts[i]) ?
		    "no valid samples whose digest agrees with the run's" :
		    "no valid samples"));
		table_cell(t, xstrdup(""));
		table_cell(t, xstrdup(""));
	}
}

void
report_host_table(const struct rrun *r, const struct report_col *cols,
    size_t ncols, struct table *t)
{
	size_t i, c;

	set_cols(t, cols, ncols);
	for (i = 0; i < r->nhosts; i++) {
		for (c = 0; c < ncols; c++)
			table_cell(t, host_cell(&r->hosts[i], cols[c].what));
	}
}

void
report_build_table(const struct rrun *r, const struct report_col *cols,
    size_t ncols, struct table *t)
{
	const struct rbuild *b;
	struct strbuf code = STRBUF_INIT;
	size_t i, c;

	set_cols(t, cols, ncols);
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		for (c = 0; c < ncols; c++) {
			switch (cols[c].what) {
			case COL_BUILD:
				table_cell(t, xasprintf("%" PRId64, b->id));
				break;
			case COL_BUILD_HOST:
				table_cell(t, dup_or_dash(b->host));
				break;
			case COL_COMPILER:
				table_cell(t, dup_or_dash(b->compiler));
				break;
			case COL_VERSION:
				table_cell(t, dup_or_dash(b->compiler_version));
				break;
			case COL_CFLAGS:
				table_cell(t, dup_or_dash(b->cflags));
				break;
			case COL_NATIVE:
				table_cell(t, dup_or_dash(b->native));
				break;
			case COL_BUILD_STATUS:
				table_cell(t, dup_or_dash(b->status));
				break;
			default:	/* COL_BINARY_CODE, for HTML */
				strbuf_addstr(&code, "<code>");
				report_html_add(&code, b->binary_sha256);
				strbuf_addstr(&code, "</code>");
				table_raw(t, strbuf_detach(&code));
			}
		}
	}
}

/* Add v to the comma list out when its folder needs source name. */
static void
source_variant(const struct rrun *r, const char *name, const char *v,
    struct strbuf *out)
{
	const struct variant_entry *ve = study_variant(r->study, v);
	const char *p;
	size_t n = strlen(v);

	if (ve == NULL || ve->needs == NULL || strcmp(ve->needs, name) != 0)
		return;
	for (p = out->buf; (p = strstr(p, v)) != NULL; p += n)
		if ((p == out->buf || p[-1] == ' ') &&
		    (p[n] == ',' || p[n] == '\0'))
			return;
	strbuf_addf(out, "%s%s", out->len ? ", " : "", v);
}

/* Same host, build, status and reason: one line for all. */
static int
same_outcome(const struct rvariant *a, const struct rvariant *b)
{
	return strcmp(a->host, b->host) == 0 && a->build_id == b->build_id &&
	    strcmp(a->status, b->status) == 0 &&
	    (a->reason == NULL ? b->reason == NULL :
	    b->reason != NULL && strcmp(a->reason, b->reason) == 0);
}

char *
report_not_run(const struct rrun *r, size_t *i)
{
	const struct rvariant *x = &r->variants[*i];
	struct strbuf s = STRBUF_INIT;
	size_t j, k;

	for (j = *i + 1; j < r->nvariants && same_outcome(x, &r->variants[j]);
	    j++)
		;
	if (j == *i + 1)
		strbuf_addf(&s, "variant \"%s\"", x->variant);
	else
		for (k = *i; k < j; k++)
			strbuf_addf(&s, "%s%s", k == *i ? "variants " : ", ",
			    r->variants[k].variant);
	*i = j;
	strbuf_addf(&s, " on \"%s\" (%s) %s: %s", x->host, x->label,
	    x->status, x->reason != NULL ? x->reason : "no reason recorded");
	return strbuf_detach(&s);
}

/* The run's variants (measured or not) whose folder needs source name. */
static void
source_variants(const struct rrun *r, const char *name, struct strbuf *out)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		source_variant(r, name, r->rows[i].variant, out);
	for (i = 0; i < r->nvariants; i++)
		source_variant(r, name, r->variants[i].variant, out);
}

char *
report_source_variants(const struct rrun *r)
{
	struct strbuf v = STRBUF_INIT;
	size_t i, j;

	if (r->nsources == 0)
		return NULL;
	for (i = 0; i < r->nsources; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(r->sources[j].name, r->sources[i].name) == 0)
				break;
		if (j == i)
			source_variants(r, r->sources[i].name, &v);
	}
	if (v.len == 0)
		strbuf_addstr(&v, "-");
	return strbuf_detach(&v);
}

void
report_source_table(const struct rrun *r, struct table *t)
{
	static const struct report_col cols[] = {
		{ "build", 'r', COL_BUILD }, { "source", 'l', COL_BUILD },
		{ "file", 'l', COL_BUILD }, { "sha256", 'l', COL_BUILD },
	};
	const struct rsource *s;
	size_t i;

	set_cols(t, cols, sizeof cols / sizeof *cols);
	for (i = 0; i < r->nsources; i++) {
		s = &r->sources[i];
		table_cell(t, xasprintf("%" PRId64, s->build_id));
		table_cell(t, xasprintf("%s %s", s->name, s->version));
		table_cell(t, xstrdup(s->file));
		table_cell(t, xstrdup(s->sha256));
	}
}

static char *
row_cell(const struct rrow *w, int what)
{
	char buf[32];
	int known = w->n > 0, counted = report_row_cycles(w) > 0;

	switch (what) {
	case COL_VARIANT:
		return w->note != NULL ? xasprintf("%s (%s)", w->variant,
		    w->note) : xstrdup(w->variant);
	case COL_LABEL:		return xstrdup(w->label);
	case COL_ROW_HOST:	return xstrdup(w->host);
	case COL_MEDIAN:	return rate_cell(known ? w->median : 0);
	case COL_Q1:		return rate_cell(known ? w->desc.q1 : 0);
	case COL_Q3:		return rate_cell(known ? w->desc.q3 : 0);
	case COL_MIN:		return rate_cell(known ? w->min : 0);
	case COL_MAX:		return rate_cell(known ? w->max : 0);
	case COL_CV:
		return isnan(w->desc.cv) ? xstrdup("-") :
		    xasprintf("%.2f%%", 100 * w->desc.cv);
	case COL_N:		return xasprintf("%" PRId64, w->n);
	case COL_NS:
		report_format_ns(known ? w->median : 0, buf, sizeof buf);
		return xstrdup(buf);
	case COL_NS_1:
		return known ? xasprintf("%.1f", 1e9 / w->median) :
		    xstrdup("-");
	case COL_CYCLES:
		return counted ? xasprintf("%.1f", report_row_cycles(w)) :
		    xstrdup("-");
	case COL_CLOCK_MHZ:
		return counted ? xasprintf("%.0f", w->clock_mhz) :
		    xstrdup("-");
	case COL_CLOCK_SOURCE:
		return counted ? xasprintf("%.0f (%s)", w->clock_mhz,
		    report_clock_source(w->clock_source)) : xstrdup("-");
	case COL_DIGEST:
		return xstrdup(w->digest == DIGEST_OK ? "ok" :
		    w->digest == DIGEST_MISMATCH ? "MISMATCH" : "-");
	default:		return xasprintf("%" PRId64, w->invalid);
	}
}

void
report_row_table(const struct rrun *r, const struct report_col *cols,
    size_t ncols, struct table *t)
{
	const struct rrow *w;
	size_t i, c;

	set_cols(t, cols, ncols);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		for (c = 0; c < ncols; c++) {
			/* Markdown shows a mismatch in bold. */
			if (cols[c].what == COL_DIGEST_STRONG &&
			    w->digest == DIGEST_MISMATCH)
				table_raw(t, xstrdup("**MISMATCH**"));
			else
				table_cell(t, row_cell(w, cols[c].what ==
				    COL_DIGEST_STRONG ? COL_DIGEST :
				    cols[c].what));
		}
	}
}

/*
 * A warning: a head naming what it is about (owned) and the host's text
 * after it (the run's; NULL shown as "-").
 */
struct note {
	char		*head;
	const char	*text;
};

static void
note(struct note **v, size_t *n, char *head, const char *text)
{
	ALLOC_GROW(*v, *n);
	(*v)[*n].head = head;
	(*v)[(*n)++].text = text;
}

int
report_row_unstable(const struct rrun *r, const struct rrow *w)
{
	return w->n >= 2 && w->desc.cv > r->max_cv;
}

const struct rhost *
report_best_host(const struct rrun *r, const struct rrow *w)
{
	size_t i;

	for (i = 0; i < r->nranked; i++)
		if (r->ranked[i]->best == w)
			return r->ranked[i];
	return NULL;
}

int
report_is_control(const struct rrun *r, const char *variant)
{
	const struct study_entry *e = study_find(r->study);

	return e != NULL && e->study->control != NULL &&
	    strcmp(e->study->control, variant) == 0;
}

char *
report_ratio_control(const struct rrun *r, const struct rratio *x)
{
	int a = report_is_control(r, x->a->variant);
	int b = report_is_control(r, x->b->variant);

	if (a && b)
		return xstrdup("both");
	return a ? xstrdup(x->a->host) : b ? xstrdup(x->b->host) : NULL;
}

const struct rrow *
report_best_runner_up(const struct rrun *r, const struct rhost *h,
    size_t *ties)
{
	const struct rrow *w, *up = NULL;
	size_t i;

	*ties = 0;
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (w == h->best || strcmp(w->host, h->name) != 0 ||
		    isnan(w->vs_best.ratio) ||
		    w->vs_best.verdict != STATS_UNDECIDED)
			continue;
		(*ties)++;
		if (up == NULL || w->vs_best.ratio > up->vs_best.ratio)
			up = w;
	}
	return up;
}

size_t
report_best_notes(const struct rrun *r, int labels,
    void (*fn)(void *arg, size_t i, const char *host, const char *text),
    void *arg)
{
	const struct rhost *h;
	const struct rrow *up;
	char *d, *s, *name, *iv, *others, *why;
	size_t i, ties, n = 0;

	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		if ((d = report_best_doubts(r, h)) == NULL)
			continue;
		s = xasprintf("%s: its figure and its ratios may not hold", d);
		fn(arg, n++, h->name, s);
		free(s);
		free(d);
	}
	/*
	 * A ratio of bests is read as best variant against best variant;
	 * the control (sha3: the host's libcrypto) is not one of them.
	 */
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		if (!report_is_control(r, h->best->variant))
			continue;
		s = xasprintf("its best is the study's control, %s, not one of "
		    "the variants measured against it: its ratios set the "
		    "control against the other host's best", h->best->variant);
		fn(arg, n++, h->name, s);
		free(s);
	}
	/* The highest of close medians leans high (the winner's curse). */
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		if ((up = report_best_runner_up(r, h, &ties)) == NULL)
			continue;
		name = labels ? xasprintf("%s (%s)", up->variant, up->label) :
		    xstrdup(up->variant);
		others = ties > 1 ? xasprintf(" or %zu other row%s", ties - 1,
		    ties > 2 ? "s" : "") : xstrdup("");
		iv = report_interval_str(&up->vs_best);
		/* An interval that leaves out 1 would read as a verdict. */
		why = report_withheld_why(&up->vs_best);
		s = xasprintf("its best cannot be told from %s (%.3fx %s%s%s)%s "
		    "at this precision: which is faster may be the noise's "
		    "choice, and the best's figure leans high", name,
		    up->vs_best.ratio, iv, why != NULL ? ": " : "",
		    why != NULL ? why : "", others);
		fn(arg, n++, h->name, s);
		free(s);
		free(why);
		free(iv);
		free(others);
		free(name);
	}
	return n;
}

char *
report_ratio_doubted(const struct rrun *r, const struct rratio *x)
{
	const struct rhost *h[2] = { report_best_host(r, x->a),
	    report_best_host(r, x->b) };
	const struct rhost *one = NULL;
	char *d;
	int i, n = 0;

	for (i = 0; i < 2; i++) {
		if (h[i] == NULL || (d = report_best_doubts(r, h[i])) == NULL)
			continue;
		free(d);
		one = h[i];
		n++;
	}
	/* "both": the line stays within 80 columns. */
	return n == 0 ? NULL : n == 2 ? xstrdup("both") : xstrdup(one->name);
}

char *
report_best_doubts(const struct rrun *r, const struct rhost *h)
{
	struct strbuf sb = STRBUF_INIT;

	if (h->best != NULL && report_row_unstable(r, h->best))
		strbuf_addf(&sb, "unstable (cv %.2f%% > --max-cv %g%%)",
		    100 * h->best->desc.cv, 100 * r->max_cv);
	if (h->best != NULL && h->best->moved > 0)
		strbuf_addf(&sb, "%sclock moved (over %d%% in %" PRId64 " of %"
		    PRId64 " samples)", sb.len ? ", " : "", CLOCK_MOVED_PCT,
		    h->best->moved, h->best->n);
	if (h->has_pin_cpu && h->pinned == 0)
		strbuf_addf(&sb, "%snot pinned (cpu %" PRId64 ")", sb.len ?
		    ", " : "", h->pin_cpu);
	if (h->noisy > 0)
		strbuf_addf(&sb, "%snoisy (%" PRId64 " of %" PRId64 " windows)",
		    sb.len ? ", " : "", h->noisy, h->windows);
	if (h->drifted > 0)
		strbuf_addf(&sb, "%sdrifted (%" PRId64 " of %" PRId64
		    " windows)", sb.len ? ", " : "", h->drifted, h->windows >
		    h->drifted ? h->windows : h->drifted);
	/* Two "hosts" that are one machine, timed at once: halves of it. */
	if (h->shared_with != NULL)
		strbuf_addf(&sb, "%sone machine with \"%s\", measured at the "
		    "same time", sb.len ? ", " : "", h->shared_with);
	if (sb.len == 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

char *
report_unstable_text(const struct rrun *r, const struct rrow *w)
{
	return xasprintf("unstable: %s on \"%s\" (%s): cv %.2f%% > --max-cv "
	    "%g%%, the result may be unstable", w->variant, w->host, w->label,
	    100 * w->desc.cv, 100 * r->max_cv);
}

static struct note *
warnings(const struct rrun *r, size_t *n)
{
	const struct rinvalid *v;
	const struct rvariant *x;
	const struct revent *e;
	const struct rhost *h;
	struct note *notes = NULL;
	size_t i, unstable = 0;

	*n = 0;
	for (i = 0; i < r->ninvalid; i++) {
		v = &r->invalid[i];
		note(&notes, n, xasprintf("invalid sample: %s %s (%s) sample %"
		    PRId64 ": ", v->host, v->variant, v->label, v->index),
		    v->reason);
	}
	if (r->moved > 0)
		note(&notes, n, xasprintf("%" PRId64 " of %" PRId64 " samples: "
		    "clock estimate moved over %d%% across the sample (cycles "
		    "less certain)", r->moved, r->clocked, CLOCK_MOVED_PCT), "");
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->status != NULL && strcmp(h->status, "ok") != 0)
			note(&notes, n, xasprintf("host \"%s\" %s: ", h->name,
			    h->status), h->error);
		if (h->pin_error != NULL)
			note(&notes, n, xasprintf("host \"%s\" not pinned: ",
			    h->name), h->pin_error);
	}
	for (i = 0; i < r->nvariants; i++) {
		x = &r->variants[i];
		note(&notes, n, xasprintf("variant \"%s\" on \"%s\" (%s) %s: ",
		    x->variant, x->host, x->label, x->status), x->reason);
	}
	for (i = 0; i < r->nevents; i++) {
		e = &r->events[i];
		note(&notes, n, xasprintf("%s%s%s at %s: ", e->level,
		    e->host != NULL ? " on " : "", e->host != NULL ? e->host :
		    "", e->at), e->message);
	}
	for (i = 0; i < r->nrows; i++) {
		if (report_row_unstable(r, &r->rows[i]))
			note(&notes, n, report_unstable_text(r, &r->rows[i]), "");
		unstable += report_row_unstable(r, &r->rows[i]);
	}
	if (unstable > 0)
		note(&notes, n, xstrdup(REPORT_UNSTABLE_ADVICE), "");
	return notes;
}

size_t
report_warning_count(const struct rrun *r)
{
	struct note *notes;
	size_t i, n;

	notes = warnings(r, &n);
	for (i = 0; i < n; i++)
		free(notes[i].head);
	free(notes);
	return n;
}

void
report_print_warnings(const struct rrun *r, FILE *out, const char *open,
    void (*head)(FILE *, const char *), void (*text)(FILE *, const char *),
    const char *close, const char *none)
{
	struct note *notes;
	size_t i, n;

	notes = warnings(r, &n);
	for (i = 0; i < n; i++) {
		fputs(open, out);
		if (head != NULL)
			head(out, notes[i].head);
		else
			fputs(notes[i].head, out);
		text(out, notes[i].text);
		fputs(close, out);
		free(notes[i].head);
	}
	free(notes);
	if (n == 0)
		fputs(none, out);
}

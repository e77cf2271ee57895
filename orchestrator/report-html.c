/*
 * The report as one self-contained HTML page: no script, no fetch (a
 * Content-Security-Policy forbids any), charts as inline SVG drawn here.
 * Per run: a bar chart of every measured cell (median bar, quartile box,
 * min-max whisker, one colour per host, with a legend), the variants
 * against their host's best in the same order, a chart of the host ratios
 * with their intervals, then the tables, host facts and warnings.  The
 * layout reflows to a phone's width (390 px): tables and charts scroll in
 * their own boxes, a table's first column stays in view, and a chart never
 * shrinks below its viewBox width, so its 12 px labels stay 12 px.  It
 * prints without the scroll boxes.
 *
 * Every chart sits on a background of CHART_BG, which tests/test_50
 * finds in Chromium's screenshot; every bar is a rect of class "bar".
 */
#include "report-builds.h"
#include "report-table.h"
#include "strbuf.h"
#include "study.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHART_BG	"#eef2f8"
#define CHART_W		520	/* viewBox width; it scales to the page */
#define CHART_W_PX	"520px"	/* and never below it: labels stay >= 12 px */
#define LABEL_W		175	/* room for the cell names on the left */
#define BAR_H		18
#define BAR_GAP		6
#define TOP		34
#define BOTTOM		46

/*
 * The hosts' colours: neutral ones, since red and green mean slower and
 * faster in the tables.
 */
static const char *const palette[] = {
	"#1f77b4", "#9467bd", "#8c564b", "#17becf", "#7f7f7f", "#393b79",
	"#bcbd22", "#e377c2",
};

static void
rate(FILE *out, double r)
{
	char buf[32];

	report_format_rate(r, buf, sizeof buf);
	fputs(buf, out);
}

static size_t
host_index(const struct rrun *r, const char *host)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		if (strcmp(r->hosts[i].name, host) == 0)
			return i;
	}
	return 0;
}

static const char *
host_colour(const struct rrun *r, const char *host)
{
	return palette[host_index(r, host) % (sizeof palette / sizeof *palette)];
}

/* A tick's rate, short: "0", "500k", "1.5M". */
static void
tick_label(FILE *out, double v)
{
	static const char *const suffix[] = { "", "k", "M", "G", "T" };
	size_t i = 0;

	while (v >= 1000 && i + 1 < sizeof suffix / sizeof *suffix) {
		v /= 1000;
		i++;
	}
	fprintf(out, "%.3g%s", v, suffix[i]);
}

/* A round step for about n ticks over [0, max]: 1, 2 or 5 x 10^k. */
static double
tick_step(double max, int n)
{
	double raw = max / n, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* A row the charts draw, and the place of its host among them. */
struct placed {
	size_t			 place;
	const struct rrow	*w;
};

/* By host place, then the fastest median first. */
static int
by_place(const void *a, const void *b)
{
	const struct placed *p = a, *q = b;
	const struct rrow *x = p->w, *y = q->w;

	if (p->place != q->place)
		return p->place < q->place ? -1 : 1;
	if (x->median != y->median)
		return x->median < y->median ? 1 : -1;
	return strcmp(x->variant, y->variant) != 0 ?
	    strcmp(x->variant, y->variant) : strcmp(x->label, y->label);
}

/* The place of host in the charts: its rank, unranked hosts after. */
static size_t
host_place(const struct rrun *r, const char *host)
{
	size_t i;

	for (i = 0; i < r->nranked; i++) {
		if (strcmp(r->ranked[i]->name, host) == 0)
			return i;
	}
	return r->nranked + host_index(r, host);
}


/*
 * A mark's tooltip, "c-fused on fast (clang)": with two compilers on a
 * host, two marks titled "c-fused on fast" could not be told apart.
 */
static void
title_cell(const struct rrun *r, const struct rrow *w, FILE *out)
{
	report_html_text(out, w->variant);
	fputs(" on ", out);
	report_html_text(out, w->host);
	if (r->several_builds) {
		fputs(" (", out);
		report_html_text(out, w->label);
		fputs(")", out);
	}
}

/*
 * The rows the charts draw, in the one order they share so that a cell
 * sits at the same place in each: hosts as ranked (fastest best first,
 * hosts without a best after), fastest median first within a host.  Rows
 * with valid samples, and with a ratio to their host's best when vs_best;
 * in *n (caller frees the array).
 */
static const struct rrow **
chart_rows(const struct rrun *r, int vs_best, size_t *n)
{
	const struct rrow **v = xcalloc(r->nrows + 1, sizeof *v), *w;
	struct placed *p = xcalloc(r->nrows + 1, sizeof *p);
	size_t i;

	*n = 0;
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		if (w->n > 0 && (!vs_best || !isnan(w->vs_best.ratio))) {
			p[*n].place = host_place(r, w->host);
			p[(*n)++].w = w;
		}
	}
	qsort(p, *n, sizeof *p, by_place);
	for (i = 0; i < *n; i++)
		v[i] = p[i].w;
	free(p);
	return v;
}

/* The hosts' colours, as a list under a chart whose marks use them. */
static void
legend(const struct rrun *r, const struct rrow *const *v, size_t n,
    FILE *out)
{
	size_t i;

	fputs("<ul class=\"legend\">", out);
	for (i = 0; i < n; i++) {
		/* The rows come host by host: a host starts where it changes. */
		if (i > 0 && strcmp(v[i - 1]->host, v[i]->host) == 0)
			continue;
		fprintf(out, "<li><span class=\"swatch\" style=\""
		    "background:%s\"></span>", host_colour(r, v[i]->host));
		report_html_text(out, v[i]->host);
		fputs("</li>", out);
	}
	fputs("</ul>\n", out);
}

/* A cell's label: "variant · host", and its build when a host has several. */
static void
cell_label(const struct rrun *r, const struct rrow *w, FILE *out)
{
	report_html_text(out, w->variant);
	fputs(" \xc2\xb7 ", out);
	report_html_text(out, w->host);
	if (r->several_builds) {
		fputs(" (", out);
		report_html_text(out, w->label);
		fputs(")", out);
	}
}

/*
 * One horizontal bar per measured cell (n > 0): the bar reaches the
 * median, the box spans the quartiles, the whisker min to max.
 */

static void
chart_cells(const struct rrun *r, FILE *out)
{
	const struct rrow *w, **order;
	double max = 0, step, x0 = LABEL_W, span = CHART_W - LABEL_W - 20;
	double t, y, h;
	size_t k, bars;

	order = chart_rows(r, 0, &bars);
	for (k = 0; k < bars; k++)
		max = fmax(max, order[k]->max);
	if (bars == 0) {
		free(order);
		return;
	}
	step = tick_step(max, 4);
	max = ceil(max / step) * step;
	h = TOP + (double)bars * (BAR_H + BAR_GAP) + BOTTOM;
	fprintf(out, "<figure class=\"chart\" data-chart=\"cells\" "
	    "data-bars=\"%zu\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"median ",
	    bars, CHART_W, h);
	report_html_text(out, study_unit_plural(r->study));
	fprintf(out, " per second of every cell\">\n<rect x=\"0\" y=\"0\" "
	    "width=\"%d\" height=\"%.0f\" fill=\"" CHART_BG "\"/>\n",
	    CHART_W, h);
	fprintf(out, "<text x=\"%d\" y=\"20\" class=\"title\">%s, run %"
	    PRId64 ": median rate per cell</text>\n", 8, r->study, r->id);
	for (t = 0; t <= max * 1.0001; t += step) {
		double x = x0 + t / max * span;

		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		    "y2=\"%.0f\" class=\"grid\"/>\n<text x=\"%.1f\" y=\"%.0f\""
		    " class=\"tick\" text-anchor=\"middle\">", x, TOP - 4, x,
		    h - BOTTOM + 2, x, h - BOTTOM + 16);
		tick_label(out, t);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" "
	    "text-anchor=\"middle\">", x0 + span / 2, h - 10);
	report_html_text(out, study_unit_plural(r->study));
	fputs(" per second</text>\n", out);
	fprintf(out, "<line x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%.0f\" "
	    "class=\"axisline\"/>\n", x0, TOP - 4, x0, h - BOTTOM + 2);
	for (k = 0; k < bars; k++) {
		w = order[k];
		y = TOP + (double)k * (BAR_H + BAR_GAP);
		fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" class=\"label\" "
		    "text-anchor=\"end\">", x0 - 6, y + BAR_H * 0.72);
		cell_label(r, w, out);
		fprintf(out, "</text>\n<rect class=\"bar\" x=\"%.0f\" y=\"%.1f\""
		    " width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>",
		    x0, y, w->median / max * span, BAR_H,
		    host_colour(r, w->host));
		title_cell(r, w, out);
		fputs(": median ", out);
		rate(out, w->median);
		fprintf(out, ", n %" PRId64 "</title></rect>\n", w->n);
		fprintf(out, "<rect class=\"iqr\" x=\"%.1f\" y=\"%.1f\" "
		    "width=\"%.1f\" height=\"%d\"/>\n",
		    x0 + w->desc.q1 / max * span, y + 4,
		    fmax((w->desc.q3 - w->desc.q1) / max * span, 1.5),
		    BAR_H - 8);
		fprintf(out, "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" "
		    "x2=\"%.1f\" y2=\"%.1f\"/>\n", x0 + w->min / max * span,
		    y + BAR_H / 2.0, x0 + w->max / max * span, y + BAR_H / 2.0);
	}
	fputs("</svg>\n", out);
	legend(r, order, bars, out);
	free(order);
	fputs("<figcaption>One bar per (variant, host, build) with valid "
	    "samples, hosts fastest first and the fastest variant first in "
	    "each, reaching its median; the box spans the quartiles, the "
	    "whiskers the slowest and fastest sample; colour marks the "
	    "host.</figcaption>\n</figure>\n", out);
}

/*
 * The ratio axis of a chart of height h: a grid line and a tick from lo
 * to hi every step (the line at 1x marked), and the axis label below.
 */
static void
ratio_axis(FILE *out, double lo, double hi, double step, double h,
    const char *label)
{
	double x0 = LABEL_W, span = CHART_W - LABEL_W - 20, t, px;

	for (t = lo; t <= hi + step / 2; t += step) {
		px = x0 + (t - lo) / (hi - lo) * span;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		    "y2=\"%.0f\" class=\"%s\"/>\n<text x=\"%.1f\" y=\"%.0f\" "
		    "class=\"tick\" text-anchor=\"middle\">%.2fx</text>\n", px,
		    TOP - 4, px, h - BOTTOM + 2, fabs(t - 1) < step / 100 ?
		    "one" : "grid", px, h - BOTTOM + 16, t);
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" "
	    "text-anchor=\"middle\">%s</text>\n", x0 + span / 2, h - 10,
	    label);
}

/* Host ratios on a linear axis around 1, intervals as lines. */
static void
chart_ratios(const struct rrun *r, FILE *out)
{
	const struct rratio *x;
	double lo = 1, hi = 1, h, y, px, step;
	double x0 = LABEL_W, span = CHART_W - LABEL_W - 20;
	size_t i, k = 0;

	if (r->nratios == 0)
		return;
	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		if (x->refused != NULL)
			continue;
		lo = fmin(lo, isnan(x->s.lo) ? x->s.ratio : x->s.lo);
		hi = fmax(hi, isnan(x->s.hi) ? x->s.ratio : x->s.hi);
	}
	step = tick_step(hi - fmin(lo, 1) + 1e-9, 4);
	lo = floor(fmin(lo, 1) / step) * step;
	hi = ceil(hi / step) * step;
	if (hi - lo < step)
		hi = lo + step;
	h = TOP + (double)r->nratios * (BAR_H + BAR_GAP) + BOTTOM;
	fprintf(out, "<figure class=\"chart\" data-chart=\"ratios\" "
	    "data-points=\"%zu\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"ratios of "
	    "the hosts' best rates\">\n<rect x=\"0\" y=\"0\" width=\"%d\" "
	    "height=\"%.0f\" fill=\"" CHART_BG "\"/>\n<text x=\"8\" y=\"20\" "
	    "class=\"title\">ratios of best rates, %d%% interval</text>\n",
	    r->nratios, CHART_W, h, CHART_W, h, STATS_LEVEL_PCT);
	ratio_axis(out, lo, hi, step, h, "higher median / lower median");
	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		y = TOP + (double)k++ * (BAR_H + BAR_GAP) + BAR_H / 2.0;
		fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" class=\"label\" "
		    "text-anchor=\"end\">", x0 - 6, y + 4);
		report_html_text(out, x->a->host);
		fputs(" / ", out);
		report_html_text(out, x->b->host);
		fputs("</text>\n", out);
		if (x->refused != NULL) {
			fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" "
			    "class=\"label\">refused: ", x0 + 4, y + 4);
			report_html_text(out, x->refused);
			fputs("</text>\n", out);
			continue;
		}
		if (!isnan(x->s.lo))
			fprintf(out, "<line class=\"interval\" x1=\"%.1f\" "
			    "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    x0 + (x->s.lo - lo) / (hi - lo) * span, y,
			    x0 + (x->s.hi - lo) / (hi - lo) * span, y);
		px = x0 + (x->s.ratio - lo) / (hi - lo) * span;
		fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" "
		    "r=\"5\"><title>%.3fx: %s</title></circle>\n", px, y,
		    x->s.ratio, report_verdict_phrase(&x->s));
	}
	fputs("</svg>\n<figcaption>Each point is the ratio of two hosts' "
	    "best valid medians; its line the bootstrap interval over the "
	    "samples; the dashed line marks 1.</figcaption>\n</figure>\n",
	    out);
}

/*
 * The main question drawn: every variant against its host's best (1x),
 * with its interval, hosts in ranked order.
 */
static void
chart_vs_best(const struct rrun *r, FILE *out)
{
	const struct rrow **v, *w;
	double lo = 1, hi = 1, h, y, px, step;
	double x0 = LABEL_W, span = CHART_W - LABEL_W - 20;
	size_t i, n;

	v = chart_rows(r, 1, &n);
	if (n < 2) {
		free(v);
		return;
	}
	for (i = 0; i < n; i++) {
		w = v[i];
		lo = fmin(lo, isnan(w->vs_best.lo) ? w->vs_best.ratio :
		    w->vs_best.lo);
		hi = fmax(hi, isnan(w->vs_best.hi) ? w->vs_best.ratio :
		    w->vs_best.hi);
	}
	lo = fmax(lo, 0);
	step = tick_step(hi - lo + 1e-9, 4);
	lo = floor(lo / step) * step;
	hi = ceil(hi / step) * step;
	if (hi - lo < step)
		hi = lo + step;
	h = TOP + (double)n * (BAR_H + BAR_GAP) + BOTTOM;
	fprintf(out, "<figure class=\"chart\" data-chart=\"vs-best\" "
	    "data-points=\"%zu\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"variants "
	    "against their host's best\">\n<rect x=\"0\" y=\"0\" width=\"%d\" "
	    "height=\"%.0f\" fill=\"" CHART_BG "\"/>\n<text x=\"8\" y=\"20\" "
	    "class=\"title\">variants against their host's best, %d%% "
	    "interval</text>\n", n, CHART_W, h, CHART_W, h, STATS_LEVEL_PCT);
	ratio_axis(out, lo, hi, step, h, "variant / the host's best");
	for (i = 0; i < n; i++) {
		w = v[i];
		y = TOP + (double)i * (BAR_H + BAR_GAP) + BAR_H / 2.0;
		fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" class=\"label\" "
		    "text-anchor=\"end\">", x0 - 6, y + 4);
		cell_label(r, w, out);
		fputs("</text>\n", out);
		if (!isnan(w->vs_best.lo))
			fprintf(out, "<line class=\"interval\" x1=\"%.1f\" "
			    "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    x0 + (w->vs_best.lo - lo) / (hi - lo) * span, y,
			    x0 + (w->vs_best.hi - lo) / (hi - lo) * span, y);
		px = x0 + (w->vs_best.ratio - lo) / (hi - lo) * span;
		fprintf(out, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" "
		    "r=\"5\" style=\"fill:%s\"><title>", px, y,
		    host_colour(r, w->host));
		title_cell(r, w, out);
		fprintf(out, ": %.3fx the best, %s</title></circle>\n",
		    w->vs_best.ratio, report_verdict_phrase(&w->vs_best));
	}
	fputs("</svg>\n", out);
	legend(r, v, n, out);
	free(v);
	fputs("<figcaption>Each point is a variant's median over its host's "
	    "best (the point at 1 is the best itself), in the bar chart's "
	    "order, its line the bootstrap interval; colour marks the "
	    "host.</figcaption>\n</figure>\n", out);
}

static void
td_ratio(FILE *out, const struct stats_ratio *s)
{
	char *iv = report_interval_str(s);

	/* "[no interval: n < 2]" is text: its '<' escaped. */
	fprintf(out, "<td class=\"n\">%.3fx</td><td>", s->ratio);
	report_html_text(out, iv);
	fprintf(out, "</td><td class=\"%s\">%s</td>",
	    stats_verdict_key(s->verdict), report_verdict_phrase(s));
	free(iv);
}

static void
html_facts(const struct rrun *r, FILE *out)
{
	static const struct report_col hosts[] = {
		C_HOST, C_HOST_STATUS, { "CPU", 'l', COL_CPU }, C_ARCH, C_KERNEL,
		{ "OpenSSL", 'l', COL_OPENSSL }, C_PINNING,
		{ "clock (source)", 'l', COL_CLOCK }, C_GOVERNOR, C_COUNTERS,
		C_NOISE,
	};
	static const struct report_col builds[] = {
		C_BUILD, C_BUILD_HOST, C_COMPILER, C_VERSION,
		{ "flags", 'l', COL_CFLAGS }, C_NATIVE, C_BUILD_STATUS,
		{ "binary sha256", 'l', COL_BINARY_CODE },
	};
	struct table t = { 0 };
	char *vs;

	fputs("<h3>Hosts</h3>\n", out);
	report_host_table(r, hosts, sizeof hosts / sizeof *hosts, &t);
	table_html(&t, out);
	fputs("<h3>Builds</h3>\n", out);
	report_build_table(r, builds, sizeof builds / sizeof *builds, &t);
	table_html(&t, out);
	if ((vs = report_source_variants(r)) == NULL)
		return;
	report_source_table(r, &t);
	fputs("<h3>Upstream sources</h3>\n<p>Of ", out);
	report_html_text(out, vs);
	fputs(", as each build recorded them.</p>\n", out);
	table_html(&t, out);
	free(vs);
}

static void
html_cells(const struct rrun *r, FILE *out)
{
	char ns_head[64];
	const struct report_col cols[] = {
		C_CELL_STATS, { ns_head, 'r', COL_NS_1 },
		{ "cycles", 'r', COL_CYCLES },
		{ "clock MHz", 'r', COL_CLOCK_SOURCE },
		{ "digest", 'l', COL_DIGEST }, C_INVALID,
	};
	struct table t = { 0 };

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	fprintf(out, "<h3>Cells</h3>\n<p>%s/s over the n valid samples; cv: "
	    "coefficient of variation; cycles = clock / median rate.</p>\n",
	    study_unit_plural(r->study));
	report_row_table(r, cols, sizeof cols / sizeof *cols, &t);
	table_html(&t, out);
}

static void
td(FILE *out, const char *s)
{
	fputs("<td>", out);
	report_html_text(out, s);
	fputs("</td>", out);
}

/* A list item: a, then b, as text (NULL as "-"). */
static void
li(FILE *out, const char *a, const char *b)
{
	fputs("<li>", out);
	report_html_text(out, a);
	report_html_text(out, b);
	fputs("</li>\n", out);
}

static int
is_best(const struct rrun *r, const struct rrow *w)
{
	size_t i;

	for (i = 0; i < r->nranked; i++) {
		if (r->ranked[i]->best == w)
			return 1;
	}
	return 0;
}

/* A note under the best table: the first opens the list. */
static void
best_note(void *out, size_t i, const char *host, const char *text)
{
	if (i == 0)
		fputs("<ul class=\"notes\">\n", out);
	fputs("<li><strong>", out);
	report_html_text(out, host);
	fputs("</strong>: ", out);
	report_html_text(out, text);
	fputs("</li>\n", out);
}

/*
 * Each host's best, and under it what the text and Markdown say of it,
 * from the same facts: its doubts, a control as its best, and a row the
 * interval cannot tell from it.  The ratios' marks point here.
 */
static void
html_best(const struct rrun *r, FILE *out)
{
	char rate_head[64], ns_head[64];
	const char *heads[4] = { "host", "variant", rate_head, ns_head };
	struct table t = { .ncols = 4, .heads = heads, .align = "llrr" };

	if (r->nhosts == 0)
		return;
	snprintf(rate_head, sizeof rate_head, "median %s/s",
	    study_unit_plural(r->study));
	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	fputs("<h3>Best valid variant per host</h3>\n", out);
	report_best_rows(r, &t);
	table_html(&t, out);
	if (report_best_notes(r, 1, best_note, out) > 0)
		fputs("</ul>\n", out);
}

/* Why a section's ratios have no verdict, a paragraph; frees note. */
static void
html_withheld(FILE *out, char *note)
{
	if (note == NULL)
		return;
	fputs("<p>", out);
	report_html_text(out, note);
	fputs("</p>\n", out);
	free(note);
}

static void
html_ratios(const struct rrun *r, FILE *out)
{
	const struct rratio *x;
	const struct rrow **rows, *w;
	size_t i, n;
	char **lines;

	if (r->nratios > 0)
		fprintf(out, "<h3>Ratios of best rates</h3>\n<div class=\""
		    "scroll\"><table><tr><th>a</th><th>b</th><th>"
		    "a / b</th><th>%d%% interval</th><th>verdict</th><th>"
		    "doubtful</th><th>control</th></tr>\n", STATS_LEVEL_PCT);
	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		fputs("<tr>", out);
		td(out, x->a->host);
		td(out, x->b->host);
		if (x->refused != NULL) {
			fputs("<td colspan=\"5\">refused: ", out);
			report_html_text(out, x->refused);
			fputs("</td>", out);
		} else {
			char *d = report_ratio_doubted(r, x);
			char *c = report_ratio_control(r, x);

			td_ratio(out, &x->s);
			td(out, d != NULL ? d : "");
			td(out, c != NULL ? c : "");
			free(d);
			free(c);
		}
		fputs("</tr>\n", out);
	}
	if (r->nratios > 0)
		fputs("</table></div>\n", out);
	html_withheld(out, report_ratios_withheld_note(r));
	fputs("<h3>Variants against their host's best</h3>\n"
	    "<div class=\"scroll\"><table><tr><th>host</th><th>variant</th>"
	    "<th>/ best</th><th>interval</th><th>verdict</th></tr>\n", out);
	rows = report_vs_best(r, 1, &n);
	for (i = 0; i < n; i++) {
		w = rows[i];
		fputs("<tr>", out);
		td(out, w->host);
		fputs("<td>", out);
		report_html_text(out, w->variant);
		fputs(" (", out);
		report_html_text(out, w->label);
		fputs(!is_best(r, w) ? ")</td>" : report_is_control(r,
		    w->variant) ? ") best, the study's control</td>" :
		    ") best</td>", out);
		td_ratio(out, &w->vs_best);
		fputs("</tr>\n", out);
	}
	free(rows);
	fputs("</table></div>\n", out);
	html_withheld(out, report_vs_best_withheld_note(r));
	fputs("<h3>Position bias</h3>\n", out);
	if (r->npositions == 0)
		fputs("<p>Not measurable: one position only.</p>\n", out);
	else {
		fprintf(out, "<p>%s Verdicts by rank tests, Holm-corrected "
		    "over the %zu positions.</p>\n<div class=\"scroll\">"
		    "<table><tr><th>position</th><th>n</th><th>/ others</th>"
		    "<th>interval</th><th>verdict</th></tr>\n",
		    r->position_bias ? "Some positions in the alternating "
		    "order shift results." : "No position in the alternating "
		    "order shifts results at this precision.", r->npositions);
		for (i = 0; i < r->npositions; i++) {
			fprintf(out, "<tr><td class=\"n\">%" PRId64 "</td><td "
			    "class=\"n\">%zu</td>", r->positions[i].position,
			    r->positions[i].n);
			td_ratio(out, &r->positions[i].s);
			fputs("</tr>\n", out);
		}
		fputs("</table></div>\n", out);
	}
	if (r->has_ref || r->ref_note != NULL) {
		fputs("<h3>Published reference</h3>\n<ul>\n", out);
		if (!r->has_ref)
			li(out, r->ref_note, "");
		lines = r->has_ref ? report_reference_lines(r, &n) : NULL;
		for (i = 0; r->has_ref && i < n; i++) {
			li(out, lines[i], "");
			free(lines[i]);
		}
		free(lines);
		fputs("</ul>\n", out);
	}
}

static void
html_warnings(const struct rrun *r, FILE *out)
{
	fprintf(out, "<h3 id=\"warnings-%" PRId64 "\">Warnings</h3>\n<ul "
	    "class=\"warnings\">\n", r->id);
	report_print_warnings(r, out, "<li>", report_html_text,
	    report_html_text, "</li>\n", "<li>none</li>\n");
	fputs("</ul>\n", out);
}

/*
 * What must not be missed, at the top of the run: its noisy hosts, its
 * unstable cells and how many warnings the section at the bottom holds
 * (named, not linked: the page fetches and links nothing).
 */
static void
html_banner(const struct rrun *r, FILE *out)
{
	size_t i, nwarn = 0, unstable = 0, noisy = 0;
	const char *sep = " ";

	for (i = 0; i < r->nhosts; i++)
		noisy += r->hosts[i].noisy > 0;
	for (i = 0; i < r->nrows; i++)
		unstable += report_row_unstable(r, &r->rows[i]);
	/* The advice after the unstable cells is not a warning of its own. */
	nwarn = report_warning_count(r) - (unstable > 0);
	if (noisy + nwarn + (strcmp(r->status, "ok") != 0) == 0)
		return;
	fprintf(out, "<div class=\"banner\" role=\"alert\" data-warnings=\""
	    "%zu\" data-noisy=\"%zu\"><strong>", nwarn, noisy);
	if (strcmp(r->status, "ok") != 0) {
		fputs("Run ", out);
		report_html_text(out, r->status);
		fputs(".</strong> <strong>", out);
	}
	if (noisy > 0) {
		fputs("Noisy:", out);
		for (i = 0; i < r->nhosts; i++) {
			if (r->hosts[i].noisy == 0)
				continue;
			fputs(sep, out);
			sep = ", ";
			report_html_text(out, r->hosts[i].name);
			fprintf(out, " %" PRId64 "/%" PRId64 " windows",
			    r->hosts[i].noisy, r->hosts[i].windows);
		}
		fputs(".</strong> ", out);
	} else
		fputs("</strong>", out);
	if (nwarn > 0)
		fprintf(out, "%zu warning%s (under Warnings below)", nwarn,
		    nwarn == 1 ? "" : "s");
	if (unstable > 0)
		fprintf(out, ", of them %zu unstable cell%s", unstable,
		    unstable == 1 ? "" : "s");
	if (nwarn > 0)
		fputc('.', out);
	fputs("</div>\n", out);
}

/*
 * A name, path or command line, with a line break allowed where one
 * reads well on a narrow screen: after a '-' inside a word ("c-fused",
 * not "--steps"), after a '/' and after a middle dot.  A browser breaks
 * at none of these in code and, left to overflow-wrap, anywhere at all.
 */
static void
html_breakable(FILE *out, const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	char one[2] = "";

	for (p = s; p != NULL && *p != '\0'; p++) {
		one[0] = *p;
		report_html_add(&sb, one);
		if ((*p == '-' && p > s && isalnum((unsigned char)p[-1]) &&
		    isalnum((unsigned char)p[1])) ||
		    (*p == '/' && p[1] != '/' && p[1] != '\0') ||
		    (*p == '\xb7' && p > s && p[-1] == '\xc2'))
			strbuf_addstr(&sb, "<wbr>");
	}
	fputs(p == NULL ? "-" : sb.buf, out);
	strbuf_release(&sb);
}

/* A hash or seed in hex: breakable every 16 digits, as the text cuts it. */
static void
html_hex(FILE *out, const char *s)
{
	size_t i, n = s != NULL ? strlen(s) : 0;

	if (s == NULL) {
		fputs("-", out);
		return;
	}
	for (i = 0; i < n; i += 16) {
		char *part = xasprintf("%.16s", s + i);

		if (i > 0)
			fputs("<wbr>", out);
		/* Imported bundles' digests are checked, but not trusted. */
		report_html_text(out, part);
		free(part);
	}
}

static void
html_run(const struct rrun *r, FILE *out)
{
	size_t i;

	fprintf(out, "<section class=\"run\" id=\"run-%" PRId64 "\">\n<h2>",
	    r->id);
	report_html_text(out, r->study);
	fprintf(out, ", run %" PRId64 ": ", r->id);
	report_html_text(out, r->status);
	fprintf(out, "%s</h2>\n<dl><dt>steps</dt><dd>%" PRId64 " per sample, %"
	    PRId64 " samples per variant</dd>",
	    r->exploratory ? " (exploratory)" : "", r->steps, r->samples);
	if (r->msg_len > 0)
		fprintf(out, "<dt>message</dt><dd>%" PRId64 " bytes a %s "
		    "(<code>--msg-len %" PRId64 "</code>): the previous digest, "
		    "then zeros</dd>", r->msg_len, study_unit(r->study),
		    r->msg_len);
	fputs("<dt>seed</dt><dd><code>", out);
	html_hex(out, r->seed);
	fputs("</code></dd><dt>started</dt><dd>", out);
	report_html_text(out, r->started_at);
	fputs("</dd><dt>finished</dt><dd>", out);
	report_html_text(out, r->finished_at);
	fputs("</dd><dt>command</dt><dd><code>", out);
	html_breakable(out, r->command);
	fputs("</code></dd>", out);
	if (r->imported_from != NULL) {
		fprintf(out, "<dt>imported</dt><dd>run %" PRId64 " of ",
		    r->origin_run);
		html_breakable(out, r->imported_from);
		fputs(r->imported_signed ? ", signature verified</dd>" :
		    ", <strong>unsigned</strong>: nothing checked who measured "
		    "it</dd>", out);
	}
	for (i = 0; i < r->ndigests; i++) {
		fputs("<dt>digest</dt><dd>", out);
		if (r->digests[i].distinct == 1) {
			fputs("<code>", out);
			html_hex(out, r->digests[i].digest);
			fprintf(out, "</code> in all %" PRId64 " valid samples "
			    "of %" PRId64 " steps</dd>", r->digests[i].n,
			    r->digests[i].steps);
		} else
			fprintf(out, "<strong>MISMATCH</strong>: %" PRId64
			    " different digests</dd>", r->digests[i].distinct);
	}
	fputs("</dl>\n", out);
	html_banner(r, out);
	chart_cells(r, out);
	chart_vs_best(r, out);
	chart_ratios(r, out);
	html_cells(r, out);
	html_best(r, out);
	html_ratios(r, out);
	report_builds_html(r, out);
	report_builds_tables(r, out, 1);
	html_facts(r, out);
	html_warnings(r, out);
	fputs("</section>\n", out);
}

void
report_html(const struct rrun *runs, size_t n, const struct report_opts *o,
    FILE *out)
{
	size_t i;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\""
	    "utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\">\n<meta http-equiv=\"Content-Security-Policy\" "
	    "content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
	    "<title>seqorch report</title>\n<style>\n"
	    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	    "color:#111;background:#fff;margin:0 auto;padding:0.8rem;"
	    "max-width:74rem}\n"
	    "h1{font-size:1.4rem}h2{font-size:1.2rem;border-bottom:2px solid "
	    "#333;margin-top:2rem}h3{font-size:1rem;margin:1.4rem 0 .4rem}\n"
	    "dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem "
	    ".8rem}dt{font-weight:600}dd{margin:0}\n"
	    "code{font-size:.85em}\n"
	    ".scroll{overflow-x:auto}table{border-collapse:collapse;"
	    "font-size:.85rem}\n"
	    "th,td{border-bottom:1px solid #ccc;padding:.15rem .45rem;"
	    "text-align:left;vertical-align:top;background:#fff}\n"
	    /* The first column (the names) stays in view while the rest
	     * scrolls, each name whole: "c-\nunrolled" reads as two. */
	    ".scroll th:first-child,.scroll td:first-child{position:sticky;"
	    "left:0;z-index:1;white-space:nowrap;box-shadow:1px 0 0 #ccc}\n"
	    "td.n{text-align:right;"
	    "font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	    "td.faster{color:#11651d}td.slower{color:#a11}\n"
	    "figure{margin:1rem 0;overflow-x:auto}svg{width:100%;"
	    "min-width:" CHART_W_PX ";max-width:46rem;height:auto;"
	    "display:block}\n"
	    ".legend{list-style:none;display:flex;flex-wrap:wrap;gap:.2rem "
	    "1rem;padding:0;margin:.3rem 0;font-size:.85rem}.swatch{"
	    "display:inline-block;width:.9em;height:.9em;margin-right:.35em;"
	    "vertical-align:-.1em}\n"
	    "svg text{font-family:system-ui,sans-serif;font-size:12px;"
	    "fill:#222}svg .title{font-size:14px;font-weight:600}\n"
	    "svg .axis{font-size:12px}svg .grid{stroke:#c8cfdb;"
	    "stroke-width:1}svg .one{stroke:#444;stroke-width:1.5;"
	    "stroke-dasharray:4 3}\n"
	    "svg .axisline{stroke:#444}svg .iqr{fill:none;stroke:#000;"
	    "stroke-width:1.5}svg .whisker{stroke:#000;stroke-width:1}\n"
	    "svg .interval{stroke:#222;stroke-width:2.5}svg .point{fill:"
	    "#555;stroke:#000}\n"
	    "figcaption{font-size:.8rem;color:#444}\n"
	    ".banner{border:2px solid #b26b00;background:#fff4e0;padding:"
	    ".4rem .7rem;margin:.8rem 0}\n"
	    "@media (max-width:40rem){body{font-size:14px;padding:.4rem}}\n"
	    "@media print{body{max-width:none;font-size:10pt}.scroll{"
	    "overflow:visible}table{font-size:7pt}th,td{padding:.1rem .25rem}figure,table{break-inside:avoid}h2{"
	    "break-before:page}section:first-of-type h2{break-before:auto}}\n"
	    "</style>\n</head>\n<body>\n<h1>seqorch report</h1>\n<p>From <code>",
	    out);
	html_breakable(out, o->db_path != NULL ? o->db_path : "results.db");
	fprintf(out, "</code>: %zu run%s. Ratios carry a %d%% bootstrap "
	    "interval over the samples (seeded, reproducible) and a verdict: "
	    "faster, slower, or not distinguishable at this precision.</p>\n",
	    n, n == 1 ? "" : "s", STATS_LEVEL_PCT);
	for (i = 0; i < n; i++)
		html_run(&runs[i], out);
	fputs("</body>\n</html>\n", out);
}

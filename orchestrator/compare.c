/* seqorch compare: the change of every cell between two runs. */
#include "compare.h"
#include "db-report.h"
#include "report-model.h"
#include "report.h"
#include "report-table.h"
#include "strbuf.h"
#include "study.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ccell {
	const struct rrow	*a, *b;		/* baseline, new; NULL if absent */
	struct rratio		 x;		/* b / a */
};

struct cmp {
	struct rrun		 ra, rb;
	struct ccell		*cells;
	size_t			 ncells;
	struct stats_ratio	 geo;		/* geometric mean of b / a */
	size_t			 ngeo;		/* cells in it */
	/*
	 * The one reason every cell in both runs was refused for (steps
	 * differ, most often): a mismatch of the runs, said once, not per
	 * cell.  Points into a cell; NULL when the reasons vary or some
	 * cell compared.
	 */
	const char		*refused;
	size_t			 nrefused;
};

static const struct rrow *
match(const struct rrun *r, const struct rrow *w)
{
	size_t i;

	for (i = 0; i < r->nrows; i++) {
		if (strcmp(r->rows[i].variant, w->variant) == 0 &&
		    strcmp(r->rows[i].host, w->host) == 0 &&
		    strcmp(r->rows[i].label, w->label) == 0)
			return &r->rows[i];
	}
	return NULL;
}

/* A cell compared: in both runs, not refused. */
static int
compared(const struct ccell *x)
{
	return x->a != NULL && x->b != NULL && x->x.refused == NULL;
}

/*
 * The geometric mean's verdict stands only when Welch's t-test of all
 * the compared cells at once (stats_welch: the mean over the cells of
 * their difference of mean logs) is under 1 - STATS_LEVEL_PCT / 100 too,
 * on the interval's side: each cell's interval is too narrow at a few
 * samples, and so is their mean's.
 */
static void
geomean_check(struct cmp *c)
{
	struct stats_welch w = { 0 };
	const struct ccell *x;
	size_t i;

	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		if (compared(x))
			stats_welch_add(&w, x->b->rates, (size_t)x->b->n,
			    x->a->rates, (size_t)x->a->n);
	}
	c->geo.p = stats_welch_p(&w);
	if (!(c->geo.p < 1 - STATS_LEVEL_PCT / 100.0) ||
	    (c->geo.verdict == STATS_FASTER) != (w.d > 0))
		c->geo.verdict = STATS_UNDECIDED;
}

/*
 * The geometric mean of the compared cells' ratios, its interval from
 * resampling every cell at once (each resample draws a median per side
 * per cell), NAN when some cell has fewer than 2 samples a side.
 */
static void
geomean(struct cmp *c)
{
	struct stats_rng rng;
	double sum = 0, *boot;
	const struct ccell *x;
	size_t i, k, small = 0;

	c->geo.ratio = c->geo.lo = c->geo.hi = c->geo.p = NAN;
	c->geo.verdict = STATS_UNDECIDED;
	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		if (!compared(x))
			continue;
		sum += log(x->x.s.ratio);
		small += x->a->n < 2 || x->b->n < 2;
		c->ngeo++;
	}
	if (c->ngeo == 0)
		return;
	c->geo.ratio = exp(sum / (double)c->ngeo);
	if (small > 0)
		return;
	stats_rng_seed(&rng, STATS_SEED);
	boot = xmalloc(STATS_RESAMPLES * sizeof *boot);
	for (k = 0; k < STATS_RESAMPLES; k++) {
		sum = 0;
		for (i = 0; i < c->ncells; i++) {
			x = &c->cells[i];
			if (!compared(x))
				continue;
			sum += log(stats_boot_median(&rng, x->b->rates,
			    (size_t)x->b->n) / stats_boot_median(&rng,
			    x->a->rates, (size_t)x->a->n));
		}
		boot[k] = exp(sum / (double)c->ngeo);
	}
	stats_interval(boot, STATS_RESAMPLES, &c->geo);
	free(boot);
	geomean_check(c);
}

static void
run_refusal(struct cmp *c)
{
	const struct ccell *x;
	size_t i;

	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		if (x->a == NULL || x->b == NULL)
			continue;
		if (x->x.refused == NULL || (c->refused != NULL &&
		    strcmp(c->refused, x->x.refused) != 0)) {
			c->refused = NULL;
			c->nrefused = 0;
			return;
		}
		c->refused = x->x.refused;
		c->nrefused++;
	}
}

/* A cell the table shows: all but those the run-level refusal covers. */
static int
shown(const struct cmp *c, const struct ccell *x)
{
	return c->refused == NULL || x->a == NULL || x->b == NULL;
}

static void
build(struct cmp *c)
{
	struct report_draws draws = { 0 };
	struct ccell *x;
	size_t i;

	c->cells = xcalloc(c->ra.nrows + c->rb.nrows + 1, sizeof *c->cells);
	for (i = 0; i < c->rb.nrows; i++) {
		x = &c->cells[c->ncells++];
		x->b = &c->rb.rows[i];
		x->a = match(&c->ra, x->b);
		if (x->a == NULL)
			continue;
		report_ratio(&draws, &c->rb, x->b, &c->ra, x->a, &x->x);
		/* The reason's values in the table's order: baseline first. */
		if (x->x.refused != NULL) {
			free(x->x.refused);
			x->x.refused = report_incomparable(&c->ra, x->a,
			    &c->rb, x->b);
		}
	}
	report_draws_free(&draws);
	for (i = 0; i < c->ra.nrows; i++) {
		if (match(&c->rb, &c->ra.rows[i]) == NULL)
			c->cells[c->ncells++].a = &c->ra.rows[i];
	}
	geomean(c);
	run_refusal(c);
}

static const struct rrow *
some(const struct ccell *x)
{
	return x->b != NULL ? x->b : x->a;
}

static char *
pct(double ratio)
{
	return isnan(ratio) ? xstrdup("-") :
	    xasprintf("%+.1f%%", 100 * (ratio - 1));
}

static char *
pct_interval(const struct stats_ratio *s)
{
	char *lo, *hi, *out;

	if (isnan(s->lo))
		return xstrdup("[no interval: n < 2]");
	lo = pct(s->lo);
	hi = pct(s->hi);
	out = xasprintf("[%s, %s]", lo, hi);
	free(lo);
	free(hi);
	return out;
}

/*
 * One cell in words: both medians, and the change with its interval and
 * verdict; or "-", no interval and why there is none.
 */
struct cwords {
	char		 ra[32], rb[32];
	char		*change;
	char		*interval;	/* NULL: no change computed */
	char		*verdict;
};

static void
cell_words(const struct ccell *x, struct cwords *cw)
{
	report_format_rate(x->a != NULL && x->a->n > 0 ? x->a->median : 0,
	    cw->ra, sizeof cw->ra);
	report_format_rate(x->b != NULL && x->b->n > 0 ? x->b->median : 0,
	    cw->rb, sizeof cw->rb);
	cw->interval = NULL;
	if (x->a == NULL || x->b == NULL) {
		cw->change = xstrdup("-");
		cw->verdict = xasprintf("only in the %s run", x->a == NULL ?
		    "new" : "baseline");
	} else if (x->x.refused != NULL) {
		cw->change = xstrdup("-");
		cw->verdict = xasprintf("refused: %s", x->x.refused);
	} else {
		cw->change = pct(x->x.s.ratio);
		cw->interval = pct_interval(&x->x.s);
		cw->verdict = xstrdup(report_verdict_phrase(&x->x.s));
	}
}

static void
cell_words_free(struct cwords *cw)
{
	free(cw->verdict);
	free(cw->interval);
	free(cw->change);
}

/*
 * Why cells shown whose interval leaves out 1 have no verdict
 * (report_withheld_note), or NULL.  Caller frees.
 */
static char *
withheld_note(const struct cmp *c)
{
	struct report_withheld f = { 0 };
	const struct ccell *x;
	size_t i;

	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		if (shown(c, x) && compared(x))
			report_withheld_add(&f, &x->x.s);
	}
	return report_withheld_note(&f);
}

/* The geometric mean's change, interval and verdict.  Caller frees. */
static char *
geo_words(const struct cmp *c)
{
	char *ch = pct(c->geo.ratio), *iv = pct_interval(&c->geo), *s;

	s = xasprintf("%s %s %s", ch, iv, report_verdict_phrase(&c->geo));
	free(ch);
	free(iv);
	return s;
}

/*
 * A run's noise verdict from its hosts' preflights: "noisy" when any
 * window was, "quiet" when none was, "unknown" without windows.
 */
static const char *
noise(const struct rrun *r)
{
	int64_t windows = 0, noisy = 0;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		windows += r->hosts[i].windows;
		noisy += r->hosts[i].noisy;
	}
	return noisy > 0 ? "noisy" : windows > 0 ? "quiet" : "unknown";
}

/*
 * "ok, noisy (genoa 1/2 windows)": a run's status and noise, and whether
 * it is an unsigned import.  Caller frees.
 */
static char *
run_words(const struct rrun *r)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addf(&sb, "%s, %s", r->status, noise(r));
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].noisy > 0)
			strbuf_addf(&sb, "%s%s %" PRId64 "/%" PRId64,
			    strchr(sb.buf, '(') == NULL ? " (" : ", ",
			    r->hosts[i].name, r->hosts[i].noisy,
			    r->hosts[i].windows);
	}
	if (strchr(sb.buf, '(') != NULL)
		strbuf_addstr(&sb, " noisy windows)");
	/* As every report of it says: its figures are on nobody's word. */
	if (r->imported_from != NULL && !r->imported_signed)
		strbuf_addstr(&sb, "; UNSIGNED import: nothing checked who "
		    "measured it");
	return strbuf_detach(&sb);
}

/* At most this many cells are named in a reason; the table shows them all. */
#define UNDECIDED_NAMES 5

/* Compared, but without an interval: fewer than 2 samples a side. */
static int
no_interval(const struct ccell *x, const struct compare_opts *o)
{
	(void)o;
	return compared(x) && isnan(x->x.s.lo);
}

/*
 * Slower by more than --fail-slower's PCT by its interval, but with no
 * verdict: the t-test did not back it (samples too spread for how
 * few they are).  The gate can neither call it slower nor pass it.
 */
static int
withheld_slower(const struct ccell *x, const struct compare_opts *o)
{
	return o->fail_slower > 0 && compared(x) && x->x.s.hi < 1 &&
	    x->x.s.verdict == STATS_UNDECIDED && x->x.s.ratio < 1 -
	    o->fail_slower / 100;
}

/*
 * "N cells WHAT: c-fused (cc) on genoa, ... and K more": the cells pick
 * chooses, after "; " when sb has a reason already; nothing for none.
 */
static void
name_cells(struct strbuf *sb, const struct cmp *c,
    const struct compare_opts *o, const char *what,
    int (*pick)(const struct ccell *, const struct compare_opts *))
{
	const struct ccell *x;
	size_t i, n = 0, named = 0;

	for (i = 0; i < c->ncells; i++)
		n += pick(&c->cells[i], o);
	if (n == 0)
		return;
	strbuf_addf(sb, "%s%zu cell%s %s: ", sb->len > 0 ? "; " : "", n,
	    n == 1 ? "" : "s", what);
	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		if (pick(x, o) && named++ < UNDECIDED_NAMES)
			strbuf_addf(sb, "%s%s (%s) on %s", named > 1 ? ", " :
			    "", x->b->variant, x->b->label, x->b->host);
	}
	if (n > UNDECIDED_NAMES)
		strbuf_addf(sb, " and %zu more", n - UNDECIDED_NAMES);
}

/*
 * Why a gate cannot decide on c, or NULL (caller frees).  A cell compared
 * without an interval (fewer than 2 samples a side) has no verdict: the
 * gate cannot call it slower or not, so it is named; so is one slower
 * than the gate allows by its interval whose verdict was withheld.
 */
static char *
undecided(const struct cmp *c, const struct compare_opts *o)
{
	struct strbuf sb = STRBUF_INIT;
	const struct ccell *x;
	size_t i, missing = 0, refused = 0;

	if (strcmp(c->rb.status, "ok") != 0)
		strbuf_addf(&sb, "run %" PRId64 " is not ok (%s)", c->rb.id,
		    c->rb.status);
	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		missing += x->b == NULL;
		refused += x->a != NULL && x->b != NULL &&
		    x->x.refused != NULL;
	}
	if (c->ngeo == 0)
		strbuf_addf(&sb, "%sno cell could be compared",
		    sb.len > 0 ? "; " : "");
	else if (refused > 0)
		strbuf_addf(&sb, "%s%zu cell%s refused", sb.len > 0 ? "; " : "",
		    refused, refused == 1 ? "" : "s");
	name_cells(&sb, c, o, "without an interval (n < 2)", no_interval);
	name_cells(&sb, c, o, "slower than the threshold by the interval, a "
	    "verdict the t-test does not back", withheld_slower);
	if (missing > 0)
		strbuf_addf(&sb, "%s%zu cell%s of the baseline missing from run "
		    "%" PRId64, sb.len > 0 ? "; " : "", missing,
		    missing == 1 ? "" : "s", c->rb.id);
	if (sb.len == 0)
		return NULL;
	return strbuf_detach(&sb);
}

static void
text(const struct cmp *c, const struct compare_opts *o, FILE *out)
{
	const struct rrow *w;
	struct cwords cw;
	char *geo, *wa, *wb, *why;
	size_t i;

	fprintf(out, "compare %s: run %" PRId64 " (baseline) -> run %" PRId64
	    "\n", c->rb.study, c->ra.id, c->rb.id);
	wa = run_words(&c->ra);
	wb = run_words(&c->rb);
	fprintf(out, "  baseline  run %" PRId64 ": %s\n  new       run %"
	    PRId64 ": %s\n", c->ra.id, wa, c->rb.id, wb);
	if (o->base_db_path != NULL)
		fprintf(out, "  files     baseline \"%s\", new \"%s\"\n",
		    o->base_db_path, o->db_path);
	free(wb);
	free(wa);
	if (c->refused != NULL)
		fprintf(out, "refused, all %zu cell%s of both runs: %s\n",
		    c->nrefused, c->nrefused == 1 ? "" : "s", c->refused);
	if (c->nrefused < c->ncells) {
		fprintf(out, "%schange of the median rate (%s/s; + is faster), "
		    "%d%% bootstrap interval, verdict\n\n", c->refused != NULL ?
		    "\n" : "", study_unit_plural(c->rb.study), STATS_LEVEL_PCT);
		fprintf(out, "  %-16s %-9s %-10s %9s %9s %8s  %-18s %s\n",
		    "variant", "compiler", "host", "baseline", "new", "change",
		    "interval", "verdict");
	}
	for (i = 0; i < c->ncells; i++) {
		if (!shown(c, &c->cells[i]))
			continue;
		w = some(&c->cells[i]);
		cell_words(&c->cells[i], &cw);
		fprintf(out, "  %-16s %-9s %-10s %9s %9s %8s  ", w->variant,
		    w->label, w->host, cw.ra, cw.rb, cw.change);
		if (cw.interval != NULL)
			fprintf(out, "%-18s ", cw.interval);
		fprintf(out, "%s\n", cw.verdict);
		cell_words_free(&cw);
	}
	if ((why = withheld_note(c)) != NULL)
		report_emit_wrapped(out, "  ", why);
	free(why);
	geo = geo_words(c);
	if (c->ngeo == 0)
		fprintf(out, "\ngeometric mean: no cell could be compared\n");
	else
		fprintf(out, "\ngeometric mean over %zu compared cell%s: %s\n",
		    c->ngeo, c->ngeo == 1 ? "" : "s", geo);
	free(geo);
	if (o->fail_slower > 0)
		fprintf(out, "fail threshold: a cell decided slower by more "
		    "than %g%%\n", o->fail_slower);
	if ((why = undecided(c, o)) != NULL)
		fprintf(out, "cannot decide: %s\n", why);
	free(why);
}

static void
md(const struct cmp *c, const struct compare_opts *o, FILE *out)
{
	const struct rrow *w;
	struct cwords cw;
	char *geo, *wa, *wb, *why;
	size_t i;

	fprintf(out, "## compare %s: run %" PRId64 " (baseline) → run %"
	    PRId64 "\n\n", c->rb.study, c->ra.id, c->rb.id);
	wa = run_words(&c->ra);
	wb = run_words(&c->rb);
	fprintf(out, "Baseline run %" PRId64 ": %s.  New run %" PRId64
	    ": %s.\n\n", c->ra.id, wa, c->rb.id, wb);
	free(wb);
	free(wa);
	if (c->refused != NULL) {
		fprintf(out, "Refused, all %zu cell%s of both runs: ",
		    c->nrefused, c->nrefused == 1 ? "" : "s");
		report_md_text(out, c->refused);
		fputs(c->nrefused < c->ncells ? ".\n\n" : ".\n", out);
	}
	if (c->nrefused < c->ncells)
		fprintf(out, "| variant | compiler | host | baseline | new | "
		    "change | %d%% interval | verdict |\n| --- | --- | --- | "
		    "---: | ---: | ---: | --- | --- |\n", STATS_LEVEL_PCT);
	for (i = 0; i < c->ncells; i++) {
		if (!shown(c, &c->cells[i]))
			continue;
		w = some(&c->cells[i]);
		cell_words(&c->cells[i], &cw);
		fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
		    w->variant, w->label, w->host, cw.ra, cw.rb, cw.change,
		    cw.interval != NULL ? cw.interval : "-", cw.verdict);
		cell_words_free(&cw);
	}
	if ((why = withheld_note(c)) != NULL) {
		fputc('\n', out);
		report_md_text(out, why);
		fputc('\n', out);
	}
	free(why);
	geo = geo_words(c);
	if (c->ngeo == 0)
		fprintf(out, "\nGeometric mean: no cell could be compared.\n");
	else
		fprintf(out, "\nGeometric mean over %zu compared cell%s: %s\n",
		    c->ngeo, c->ngeo == 1 ? "" : "s", geo);
	free(geo);
	if (o->fail_slower > 0)
		fprintf(out, "\nFail threshold: a cell decided slower by more "
		    "than %g%%.\n", o->fail_slower);
	if ((why = undecided(c, o)) != NULL)
		fprintf(out, "\nCannot decide: %s.\n", why);
	free(why);
}

/* Cells --fail-slower fails: decided slower by more than its PCT. */
static size_t
slower_cells(const struct cmp *c, const struct compare_opts *o)
{
	size_t i, n = 0;

	for (i = 0; o->fail_slower > 0 && i < c->ncells; i++)
		if (c->cells[i].a != NULL && c->cells[i].b != NULL &&
		    c->cells[i].x.refused == NULL &&
		    c->cells[i].x.s.verdict == STATS_SLOWER &&
		    c->cells[i].x.s.ratio < 1 - o->fail_slower / 100)
			n++;
	return n;
}

static cJSON *
json(const struct cmp *c, const struct compare_opts *o)
{
	cJSON *root = cJSON_CreateObject(), *a, *e;
	const struct ccell *x;
	char *why;
	const struct rrow *w;
	size_t i;

	cJSON_AddNumberToObject(root, "schema_version", REPORT_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "study", c->rb.study);
	cJSON_AddNumberToObject(root, "baseline", (double)c->ra.id);
	cJSON_AddNumberToObject(root, "new", (double)c->rb.id);
	if (o->base_db_path != NULL) {
		cJSON_AddStringToObject(root, "baseline_db", o->base_db_path);
		cJSON_AddStringToObject(root, "new_db", o->db_path);
	}
	cJSON_AddStringToObject(root, "baseline_status", c->ra.status);
	cJSON_AddStringToObject(root, "new_status", c->rb.status);
	cJSON_AddStringToObject(root, "baseline_noise", noise(&c->ra));
	cJSON_AddStringToObject(root, "new_noise", noise(&c->rb));
	a = cJSON_AddArrayToObject(root, "cells");
	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		w = some(x);
		e = x->a != NULL && x->b != NULL && x->x.refused == NULL ?
		    report_json_ratio(&x->x.s) : cJSON_CreateObject();
		cJSON_AddStringToObject(e, "variant", w->variant);
		cJSON_AddStringToObject(e, "compiler", w->label);
		cJSON_AddStringToObject(e, "host", w->host);
		if (x->a != NULL && x->a->n > 0)
			cJSON_AddNumberToObject(e, "baseline_rate",
			    x->a->median);
		else
			cJSON_AddNullToObject(e, "baseline_rate");
		if (x->b != NULL && x->b->n > 0)
			cJSON_AddNumberToObject(e, "new_rate", x->b->median);
		else
			cJSON_AddNullToObject(e, "new_rate");
		if (x->a == NULL || x->b == NULL)
			cJSON_AddStringToObject(e, "only_in",
			    x->a == NULL ? "new" : "baseline");
		else if (x->x.refused != NULL)
			cJSON_AddStringToObject(e, "refused", x->x.refused);
		cJSON_AddItemToArray(a, e);
	}
	e = report_json_ratio(&c->geo);
	cJSON_AddNumberToObject(e, "cells", (double)c->ngeo);
	cJSON_AddItemToObject(root, "geometric_mean", e);
	report_json_str(root, "refused", c->refused);
	why = undecided(c, o);
	report_json_str(root, "undecided", why);
	/* The gate's verdict, as the exit status gives it. */
	if (o->fail_slower > 0) {
		size_t n = slower_cells(c, o);

		cJSON_AddNumberToObject(root, "fail_slower_pct",
		    o->fail_slower);
		cJSON_AddNumberToObject(root, "slower_cells", (double)n);
		cJSON_AddBoolToObject(root, "gate_passed", n == 0 &&
		    why == NULL);
	}
	free(why);
	return root;
}

/*
 * The newest run of study after base measured here, whatever its status:
 * a gate that passed over a failed run to judge an older ok one, or judged
 * a run imported or taken with --explore, would check what CI did not
 * build.  The runs passed over are named.
 */
static int
newest_measured(sqlite3 *db, const char *study, int64_t base, int64_t *id,
    struct so_err *err)
{
	char *passed = NULL;
	int ret;

	if ((ret = db_report_newest_measured(db, study, base, id, &passed,
	    err)) != 0)
		return ret;
	if (*id == 0)
		ret = base == 0 ? so_error(err, SO_ENOTFOUND, "no run of "
		    "study \"%s\" measured here to compare the baseline "
		    "with (%s%s)", study, passed != NULL ? "others: " :
		    "none at all", passed != NULL ? passed : "") :
		    so_error(err, SO_ENOTFOUND, "no run of study \"%s\" "
		    "measured here after run %" PRId64 " to compare it with "
		    "(%s%s)", study, base, passed != NULL ? "newer: " :
		    "none is newer", passed != NULL ? passed : "");
	else if (passed != NULL)
		fprintf(stderr, "seqorch: comparing with run %" PRId64 ", the "
		    "newest run of study \"%s\" measured here; newer, not "
		    "measured here: %s\n", *id, study, passed);
	free(passed);
	return ret;
}

void
compare_gate_free(struct compare_gate *gate)
{
	free(gate->undecided);
	gate->undecided = NULL;
}

static void
json_render(const struct cmp *c, const struct compare_opts *o, FILE *out)
{
	cJSON *root = json(c, o);
	char *s;

	if ((s = cJSON_Print(root)) != NULL)
		fprintf(out, "%s\n", s);
	cJSON_free(s);
	cJSON_Delete(root);
}

/*
 * A number of a CSV row in plain notation, never "3.5e+06", with digits
 * decimals (more than any interval here supports); NAN as an empty field.
 */
static void
csv_num(FILE *out, int digits, double v)
{
	if (!isnan(v))
		fprintf(out, "%.*f", digits, v);
	fputc(',', out);
}

/*
 * One row per cell, as the text table lists them (all cells: a run-level
 * refusal repeats its reason, so every row stands alone), with the
 * ratio new / baseline and its interval as numbers; the header first.
 */
static void
csv_render(const struct cmp *c, const struct compare_opts *o, FILE *out)
{
	const struct ccell *x;
	const struct rrow *w;
	int cmp;
	size_t i;

	(void)o;
	fputs("study,unit,baseline_run,new_run,variant,compiler,host,"
	    "baseline_median_per_s,new_median_per_s,ratio,ratio_lo,"
	    "ratio_hi,level_pct,verdict,reason\n", out);
	for (i = 0; i < c->ncells; i++) {
		x = &c->cells[i];
		w = some(x);
		cmp = x->a != NULL && x->b != NULL && x->x.refused == NULL;
		report_csv_text(out, c->rb.study);
		fputc(',', out);
		report_csv_text(out, study_unit(c->rb.study));
		fprintf(out, ",%" PRId64 ",%" PRId64 ",", c->ra.id, c->rb.id);
		report_csv_text(out, w->variant);
		fputc(',', out);
		report_csv_text(out, w->label);
		fputc(',', out);
		report_csv_text(out, w->host);
		fputc(',', out);
		csv_num(out, 1, x->a != NULL && x->a->n > 0 ?
		    x->a->median : NAN);
		csv_num(out, 1, x->b != NULL && x->b->n > 0 ?
		    x->b->median : NAN);
		csv_num(out, 5, cmp ? x->x.s.ratio : NAN);
		csv_num(out, 5, cmp ? x->x.s.lo : NAN);
		csv_num(out, 5, cmp ? x->x.s.hi : NAN);
		fprintf(out, "%d,%s,", STATS_LEVEL_PCT, cmp ?
		    stats_verdict_key(x->x.s.verdict) : x->x.refused != NULL ?
		    "refused" : x->a == NULL ? "only_in_new" :
		    "only_in_baseline");
		report_csv_text(out, x->x.refused);
		fputc('\n', out);
	}
}

const struct compare_renderer compare_renderers[] = {
	{ "text", text },
	{ "markdown", md },
	{ "json", json_render },
	{ "csv", csv_render },
	{ NULL, NULL },
};

int
compare_print(sqlite3 *db, sqlite3 *base_db, const struct compare_opts *o,
    FILE *out, struct compare_gate *gate, struct so_err *err)
{
	struct cmp c;
	int64_t next = o->next;
	size_t i;
	int ret;

	memset(&c, 0, sizeof c);
	memset(gate, 0, sizeof *gate);
	if ((ret = report_load_one(base_db != NULL ? base_db : db, o->base,
	    base_db != NULL ? o->base_db_path : o->db_path, 0, &c.ra, err)) !=
	    0)
		return ret;
	/* Ids of another file say nothing of order here: any run is newer. */
	if (next == 0 && (ret = newest_measured(db, c.ra.study,
	    base_db != NULL ? 0 : o->base, &next, err)) != 0)
		goto out;
	if ((ret = report_load_one(db, next, o->db_path, 0, &c.rb, err)) != 0)
		goto out;
	if (strcmp(c.ra.study, c.rb.study) != 0) {
		ret = so_error(err, SO_EINVAL, "comparison refused: run %"
		    PRId64 " is of study \"%s\", run %" PRId64 " of \"%s\"",
		    c.ra.id, c.ra.study, c.rb.id, c.rb.study);
		goto out;
	}
	build(&c);
	gate->slower = slower_cells(&c, o);
	gate->next = c.rb.id;
	gate->compared = c.ngeo;
	gate->undecided = undecided(&c, o);
	(o->format != NULL ? o->format : compare_renderers)->render(&c, o,
	    out);
out:
	for (i = 0; i < c.ncells; i++)
		free(c.cells[i].x.refused);
	free(c.cells);
	report_free_run(&c.rb);
	report_free_run(&c.ra);
	return ret;
}

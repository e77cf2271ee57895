/*
 * The report.  Each selected run is first loaded from results.db into a
 * small model (report-model.h), and every rendering (report-text.c,
 * report-json.c, report-md.c, report-csv.c, report-html.c) is written
 * from that model, so they always show the same numbers.  Here: the
 * shared number formats, the renderer table and report_print.
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
#include <strings.h>

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

/* An interval that leaves out 1 without a verdict: the t-test held it. */
static int
withheld(const struct stats_ratio *s)
{
	return s->verdict == STATS_UNDECIDED && !isnan(s->p) && (s->lo > 1 ||
	    s->hi < 1);
}

char *
report_withheld_why(const struct stats_ratio *s)
{
	if (!withheld(s))
		return NULL;
	if (s->p < 1 - STATS_LEVEL_PCT / 100.0)
		return xstrdup("the t-test of the samples' logs points the "
		    "other way");
	return xasprintf("the t-test's p = %.2g is over %d%%", s->p,
	    100 - STATS_LEVEL_PCT);
}

void
report_withheld_add(struct report_withheld *f, const struct stats_ratio *s)
{
	if (!withheld(s))
		return;
	f->n++;
	if (s->p < 1 - STATS_LEVEL_PCT / 100.0)
		f->against++;
	else if (f->n - f->against == 1 || s->p < f->p)
		f->p = s->p;
}

char *
report_withheld_note(const struct report_withheld *f)
{
	size_t over = f->n - f->against;

	if (f->n == 0)
		return NULL;
	if (f->n == 1 && over == 1)
		return xasprintf("no verdict where the interval leaves out 1: "
		    "the t-test's p = %.2g is over %d%% (more samples may "
		    "decide it)", f->p, 100 - STATS_LEVEL_PCT);
	if (f->n == 1)
		return xstrdup("no verdict where the interval leaves out 1: the "
		    "t-test of the samples' logs points the other way");
	if (f->against == 0)
		return xasprintf("no verdict for %zu ratios whose interval "
		    "leaves out 1: the t-test's p is over %d%% for each (%.2g "
		    "at least; more samples may decide them)", f->n,
		    100 - STATS_LEVEL_PCT, f->p);
	return xasprintf("no verdict for %zu ratios whose interval leaves out "
	    "1: the t-test's p is over %d%% for %zu, and it points the other "
	    "way for %zu", f->n, 100 - STATS_LEVEL_PCT, over, f->against);
}

char *
report_reference_line(const struct rrun *r, const struct rhost *h)
{
	const struct figure *p = &r->ref;
	char local[32], pub[32], *steps, *variant, *doubts, *line;

	report_format_rate(h->best->median, local, sizeof local);
	report_format_rate(p->median_rate, pub, sizeof pub);
	steps = p->steps == h->best->steps ? xstrdup("same steps") :
	    xasprintf("steps differ: %" PRId64 " here, %" PRId64
	    " published; indicative only", h->best->steps, p->steps);
	/* Two compilers: the figure is one of them, named as the table does. */
	variant = r->several_builds ? xasprintf("%s (%s)", h->best->variant,
	    h->best->label) : xstrdup(h->best->variant);
	/* The seeds' best is of their variants, never of the control. */
	if (report_is_control(r, h->best->variant)) {
		line = xasprintf("%s (the study's control)", variant);
		free(variant);
		variant = line;
	}
	doubts = report_best_doubts(r, h);
	line = xasprintf("%s %s %s %s/s is %.2fx %s (%s %s/s, %s; %s)%s%s",
	    h->name, variant, local, study_unit_plural(r->study),
	    h->best->median / p->median_rate, p->id, pub,
	    study_unit_plural(r->study), p->machine, steps, doubts != NULL ?
	    "; doubtful here: " : "", doubts != NULL ? doubts : "");
	free(steps);
	free(variant);
	free(doubts);
	return line;
}

char **
report_reference_lines(const struct rrun *r, size_t *n)
{
	char **lines = xcalloc(r->nranked + 1, sizeof *lines);
	size_t i;

	for (i = 0; i < r->nranked; i++)
		lines[i] = report_reference_line(r, r->ranked[i]);
	*n = r->nranked;
	return lines;
}

const struct rrow **
report_vs_best(const struct rrun *r, int with_best, size_t *n)
{
	const struct rrow **rows = xcalloc(r->nrows + 1, sizeof *rows);
	const struct rrow *w;
	const struct rhost *h;
	size_t i, j;

	*n = 0;
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		for (j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if ((w == h->best && !with_best) ||
			    strcmp(w->host, h->name) != 0 ||
			    isnan(w->vs_best.ratio))
				continue;
			rows[(*n)++] = w;
		}
	}
	return rows;
}

char *
report_ratios_withheld_note(const struct rrun *r)
{
	struct report_withheld f = { 0 };
	size_t i;

	for (i = 0; i < r->nratios; i++)
		if (r->ratios[i].refused == NULL)
			report_withheld_add(&f, &r->ratios[i].s);
	return report_withheld_note(&f);
}

char *
report_vs_best_withheld_note(const struct rrun *r)
{
	struct report_withheld f = { 0 };
	const struct rrow *w;
	size_t i, j;

	for (i = 0; i < r->nranked; i++)
		for (j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if (w != r->ranked[i]->best && strcmp(w->host,
			    r->ranked[i]->name) == 0)
				report_withheld_add(&f, &w->vs_best);
		}
	return report_withheld_note(&f);
}

/*
 * Attach o->reference's figure for each run's study, or why there is none.
 * The seeds' figures are of the study's own chain, each message the
 * digest alone: a run of other messages (--msg-len) is not comparable.
 */
static int
attach_reference(const struct report_opts *o, struct rrun *r,
    struct so_err *err)
{
	const struct study_entry *se;
	struct so_err why;
	int ret;

	if (o->reference == NULL)
		return 0;
	ret = figures_find(o->reference, r->study, &r->ref, &why);
	se = study_find(r->study);
	if (ret == 0 && r->msg_len > 0 && se != NULL &&
	    (size_t)r->msg_len != se->study->state_len)
		r->ref_note = xasprintf("not compared: run %" PRId64 " hashed "
		    "%" PRId64 "-byte messages (--msg-len %" PRId64 "), %s's "
		    "%s figure the %zu-byte digest alone (the study's own "
		    "chain)",
		    r->id, r->msg_len, r->msg_len, r->ref.id, r->study,
		    se->study->state_len);
	else if (ret == 0)
		r->has_ref = 1;
	else if (ret == SO_EINVAL)
		r->ref_note = xstrdup(why.msg);
	else
		return so_error(err, ret, "%s", why.msg);
	return 0;
}

static int
render_text(sqlite3 *db, const struct rrun *runs, size_t n,
    const struct report_opts *o, FILE *out, struct so_err *err)
{
	size_t i;

	(void)db;
	(void)o;
	(void)err;
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputc('\n', out);
		report_text_run(&runs[i], out);
		report_text_reference(&runs[i], out);
		report_builds_text(&runs[i], out);
	}
	return 0;
}

static int
render_markdown(sqlite3 *db, const struct rrun *runs, size_t n,
    const struct report_opts *o, FILE *out, struct so_err *err)
{
	(void)db;
	(void)o;
	(void)err;
	report_markdown(runs, n, out);
	return 0;
}

static int
render_csv(sqlite3 *db, const struct rrun *runs, size_t n,
    const struct report_opts *o, FILE *out, struct so_err *err)
{
	if (o->per_cell) {
		report_csv_cells(runs, n, out);
		return 0;
	}
	return report_csv(db, runs, n, out, err);
}

static int
render_json(sqlite3 *db, const struct rrun *runs, size_t n,
    const struct report_opts *o, FILE *out, struct so_err *err)
{
	cJSON *root = cJSON_CreateObject(), *a;
	char *text;
	size_t i;
	int ret = 0;

	(void)db;
	report_json_str(root, "format", "seqorch-report");
	cJSON_AddNumberToObject(root, "schema_version", REPORT_SCHEMA_VERSION);
	report_json_str(root, "seqorch_version", SEQORCH_VERSION);
	report_json_str(root, "db", o->db_path);
	a = cJSON_AddArrayToObject(root, "runs");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, report_json_run(&runs[i]));
	if ((text = cJSON_Print(root)) == NULL)
		ret = so_error(err, SO_ENOMEM, "cannot format the report as "
		    "json");
	else
		fprintf(out, "%s\n", text);
	cJSON_free(text);
	cJSON_Delete(root);
	return ret;
}

static int
render_html(sqlite3 *db, const struct rrun *runs, size_t n,
    const struct report_opts *o, FILE *out, struct so_err *err)
{
	(void)db;
	(void)err;
	report_html(runs, n, o, out);
	return 0;
}

const struct report_renderer report_renderers[] = {
	{ "text", NULL, render_text },
	{ "markdown", ".md .markdown", render_markdown },
	{ "csv", ".csv", render_csv },
	{ "json", ".json", render_json },
	{ "html", ".html .htm", render_html },
	{ NULL, NULL, NULL },
};

const struct report_renderer *
report_renderer_for_path(const char *path)
{
	const struct report_renderer *f;
	const char *dot = strrchr(path, '.'), *p;
	size_t len;

	if (dot == NULL || strchr(dot, '/') != NULL)
		return &report_renderers[0];
	len = strlen(dot);
	for (f = report_renderers; f->name != NULL; f++) {
		for (p = f->ext; p != NULL && *p != '\0'; p += strcspn(p, " ")) {
			p += strspn(p, " ");
			if (strncasecmp(p, dot, len) == 0 &&
			    (p[len] == ' ' || p[len] == '\0'))
				return f;
		}
	}
	return &report_renderers[0];
}

int
report_print(sqlite3 *db, const struct report_opts *o, FILE *out,
    struct so_err *err)
{
	const struct report_renderer *f = o->format != NULL ? o->format :
	    &report_renderers[0];
	struct rrun *runs = NULL;
	int64_t *ids = NULL;
	size_t n = 0, loaded = 0, i;
	int ret;

	if ((ret = report_select(db, o, &ids, &n, err)) != 0)
		goto out;
	/* Load everything before printing: a failure prints nothing. */
	runs = xcalloc(n, sizeof *runs);
	for (loaded = 0; loaded < n; loaded++) {
		if ((ret = report_load_run(db, ids[loaded], 0, &runs[loaded],
		    err)) != 0)
			goto out;
		if (o->max_cv > 0)
			runs[loaded].max_cv = o->max_cv;
		if ((ret = attach_reference(o, &runs[loaded], err)) != 0) {
			loaded++;
			goto out;
		}
	}
	ret = f->render(db, runs, n, o, out, err);
out:
	for (i = 0; i < loaded; i++)
		report_free_run(&runs[i]);
	free(runs);
	free(ids);
	return ret;
}

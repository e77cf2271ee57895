/*
 * The documents of one run, from the report's model: summary.json, and
 * hyperfine's --export-json shape.
 */
#include "db-report.h"
#include "export.h"
#include "report-model.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* v in decimal at p, as printf's %" PRId64 " would; returns its end. */
static char *
put_i64(char *p, int64_t v)
{
	char digits[20];
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	int n = 0;

	if (v < 0)
		*p++ = '-';
	do
		digits[n++] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/*
 * The valid samples' ns, ascending, as a raw JSON array: a million of
 * them are printed in a fraction of the time cJSON takes for numbers.
 * They arrive in the order of samples_valid, ascending within a cell of
 * one steps value, so the sort is only for cells of several.
 */
static cJSON *
ns_array(const struct rrow *w)
{
	int64_t *ns = xmalloc(((size_t)w->n + 1) * sizeof *ns);
	char *text = xmalloc((size_t)w->n * 21 + 3), *p = text;
	cJSON *raw;
	size_t i, n = (size_t)w->n;

	if (n > 0)
		memcpy(ns, w->ns, n * sizeof *ns);
	for (i = 1; i < n && ns[i - 1] <= ns[i]; i++)
		;
	if (i < n)
		qsort(ns, n, sizeof *ns, cmp_i64);
	*p++ = '[';
	for (i = 0; i < n; i++) {
		if (i > 0)
			*p++ = ',';
		p = put_i64(p, ns[i]);
	}
	*p++ = ']';
	*p = '\0';
	raw = cJSON_CreateRaw(text);
	free(text);
	free(ns);
	return raw;
}

static cJSON *
cells(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rrow *w;
	size_t i;

	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		o = report_json_cell(w);
		report_json_num(o, "steps", (double)w->steps, w->n > 0 &&
		    w->steps > 0);
		cJSON_AddItemToObject(o, "ns", ns_array(w));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
export_run(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *d, *a;
	size_t i;

	report_json_str(o, "format", "seqorch-summary");
	cJSON_AddNumberToObject(o, "schema_version", REPORT_SCHEMA_VERSION);
	report_json_str(o, "seqorch_version", SEQORCH_VERSION);
	report_json_header(cJSON_AddObjectToObject(o, "run"), r);
	/* The common digest: the one every valid sample ends in, if any. */
	report_json_str(o, "common_digest", r->ndigests == 1 &&
	    r->digests[0].distinct == 1 ? r->digests[0].digest : NULL);
	cJSON_AddItemToObject(o, "digests", report_json_digests(r));
	a = cJSON_AddArrayToObject(o, "hosts");
	for (i = 0; i < r->nhosts; i++)
		cJSON_AddItemToArray(a, report_json_host(&r->hosts[i]));
	cJSON_AddItemToObject(o, "builds", report_json_builds(r));
	cJSON_AddItemToObject(o, "cells", cells(r));
	a = cJSON_AddArrayToObject(o, "best");
	for (i = 0; i < r->nranked; i++) {
		d = cJSON_CreateObject();
		report_json_str(d, "host", r->ranked[i]->name);
		report_json_str(d, "variant", r->ranked[i]->best->variant);
		cJSON_AddNumberToObject(d, "build_id",
		    (double)r->ranked[i]->best->build_id);
		cJSON_AddNumberToObject(d, "median_rate",
		    r->ranked[i]->best->median);
		report_json_best_notes(d, r, r->ranked[i]);
		cJSON_AddItemToArray(a, d);
	}
	cJSON_AddItemToObject(o, "ratios", report_json_ratios(r));
	report_json_position_bias(o, r);
	cJSON_AddNumberToObject(o, "invalid_samples", (double)r->ninvalid);
	return o;
}

int
export_summary(sqlite3 *db, int64_t run_id, const char *db_path,
    cJSON **out, struct so_err *err)
{
	struct rrun r;
	int ret;

	*out = NULL;
	if ((ret = report_load_one(db, run_id, db_path, REPORT_LOAD_NS, &r,
	    err)) != 0)
		return ret;
	*out = export_run(&r);
	report_free_run(&r);
	return 0;
}

/* Each cell's valid samples' times in seconds, in the order they ran. */
struct hf_times {
	const struct rrun *r;
	double		**t;
	size_t		*n;
	size_t		 last;		/* the row the previous sample was of */
};

static int
hf_sample(const struct db_sample *s, void *arg)
{
	struct hf_times *h = arg;
	const struct rrow *w = NULL;
	size_t i;

	/* The rows' samples: valid ones that took time (db_report_valid). */
	if (!s->valid || s->ns <= 0)
		return 0;
	for (i = 0; i < h->r->nrows; i++) {
		/* Samples come grouped by cell: try the last one first. */
		w = &h->r->rows[(h->last + i) % h->r->nrows];
		if (w->build_id == s->build_id && strcmp(w->host, s->host) == 0
		    && strcmp(w->variant, s->variant) == 0)
			break;
	}
	if (i == h->r->nrows)
		return 0;
	h->last = (h->last + i) % h->r->nrows;
	/* Room for the row's n: it counts the same samples. */
	if (h->t[h->last] == NULL)
		h->t[h->last] = xcalloc((size_t)w->n + 1, sizeof **h->t);
	if (h->n[h->last] < (size_t)w->n)
		h->t[h->last][h->n[h->last]++] = (double)s->ns / 1e9;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One cell as hyperfine writes one command's result, keys in its order. */
static cJSON *
hf_result(const struct rrow *w, const double *t, size_t n)
{
	cJSON *o = cJSON_CreateObject(), *a, *p;
	double *sorted = xmalloc(n * sizeof *sorted), sum = 0, ss = 0, mean;
	char *command, build[24];
	size_t i;

	for (i = 0; i < n; i++)
		sum += t[i];
	mean = sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (t[i] - mean) * (t[i] - mean);
	memcpy(sorted, t, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cmp_double);
	command = xasprintf("%s/%s/%s", w->host, w->variant,
	    w->label != NULL ? w->label : "?");
	report_json_str(o, "command", command);
	cJSON_AddNumberToObject(o, "mean", mean);
	/* Sample standard deviation; hyperfine has none for one run. */
	report_json_num(o, "stddev", sqrt(ss / (double)(n - 1)), n >= 2);
	cJSON_AddNumberToObject(o, "median", n % 2 ? sorted[n / 2] :
	    (sorted[n / 2 - 1] + sorted[n / 2]) / 2);
	/* A sample is a call in the agent, not a process: no CPU times. */
	cJSON_AddNullToObject(o, "user");
	cJSON_AddNullToObject(o, "system");
	cJSON_AddNumberToObject(o, "min", sorted[0]);
	cJSON_AddNumberToObject(o, "max", sorted[n - 1]);
	a = cJSON_AddArrayToObject(o, "times");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(t[i]));
	/*
	 * Only valid samples are here, each a completed call whose digest
	 * matched: 0 each, as hyperfine records a command that succeeded.
	 */
	a = cJSON_AddArrayToObject(o, "exit_codes");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(0));
	p = cJSON_AddObjectToObject(o, "parameters");
	report_json_str(p, "host", w->host);
	report_json_str(p, "variant", w->variant);
	snprintf(build, sizeof build, "%" PRId64, w->build_id);
	report_json_str(p, "build", build);
	free(command);
	free(sorted);
	return o;
}

int
export_hyperfine(sqlite3 *db, int64_t run_id, const char *db_path,
    cJSON **out, struct so_err *err)
{
	struct rrun r;
	struct hf_times h = { 0 };
	struct db_report_run run;
	cJSON *a;
	size_t i;
	int ret;

	*out = NULL;
	if ((ret = report_load_one(db, run_id, db_path, 0, &r, err)) != 0)
		return ret;
	h.r = &r;
	h.t = xcalloc(r.nrows + 1, sizeof *h.t);
	h.n = xcalloc(r.nrows + 1, sizeof *h.n);
	run.id = r.id;
	run.study = r.study;
	if ((ret = db_report_samples(db, &run, hf_sample, &h, err)) == 0) {
		*out = cJSON_CreateObject();
		a = cJSON_AddArrayToObject(*out, "results");
		for (i = 0; i < r.nrows; i++)
			if (h.n[i] > 0)
				cJSON_AddItemToArray(a, hf_result(&r.rows[i],
				    h.t[i], h.n[i]));
	}
	for (i = 0; i < r.nrows; i++)
		free(h.t[i]);
	free(h.t);
	free(h.n);
	report_free_run(&r);
	return ret;
}

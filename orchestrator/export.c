/* The summary document of one run, from the report's model. */
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
	cJSON_AddNumberToObject(o, "summary_version", EXPORT_SUMMARY_VERSION);
	report_json_str(o, "seqorch_version", SEQORCH_VERSION);
	report_json_header(cJSON_AddObjectToObject(o, "run"), r);
	/* The common digest: the one every valid sample ends in, if any. */
	report_json_str(o, "common_digest", r->ndigests == 1 &&
	    r->digests[0].distinct == 1 ? r->digests[0].digest : NULL);
	cJSON_AddItemToObject(o, "digests", report_json_digests(r));
	a = cJSON_AddArrayToObject(o, "hosts");
	for (i = 0; i < r->nhosts; i++)
		cJSON_AddItemToArray(a, report_json_host(&r->hosts[i], "name"));
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
		cJSON_AddItemToArray(a, d);
	}
	cJSON_AddItemToObject(o, "ratios", report_json_ratios(r));
	cJSON_AddBoolToObject(o, "position_bias", r->position_bias);
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
	if ((ret = report_load_one(db, run_id, db_path, &r, err)) != 0)
		return ret;
	*out = export_run(&r);
	report_free_run(&r);
	return 0;
}

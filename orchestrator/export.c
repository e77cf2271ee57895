/* The summary document of one run, from the report's model. */
#include "export.h"
#include "report-model.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
str(cJSON *o, const char *key, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static void
num(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *
hosts(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rhost *h;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		o = cJSON_CreateObject();
		str(o, "name", h->name);
		str(o, "status", h->status);
		str(o, "cpu_model", h->cpu_model);
		str(o, "arch", h->arch);
		str(o, "os", h->os);
		str(o, "kernel", h->kernel);
		num(o, "cores", h->cores > 0 ? (double)h->cores : NAN);
		str(o, "openssl", h->openssl);
		str(o, "governor", h->governor);
		num(o, "pin_cpu", h->has_pin_cpu ? (double)h->pin_cpu : NAN);
		if (h->pinned == -1)
			cJSON_AddNullToObject(o, "pinned");
		else
			cJSON_AddBoolToObject(o, "pinned", h->pinned);
		str(o, "pin_error", h->pin_error);
		num(o, "clock_mhz", h->clock_mhz > 0 ? h->clock_mhz : NAN);
		str(o, "clock_source", report_clock_source(h->clock_source));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
builds(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rbuild *b;
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)b->id);
		str(o, "host", b->host);
		str(o, "compiler", b->compiler);
		str(o, "compiler_version", b->compiler_version);
		str(o, "target", b->target);
		str(o, "cflags", b->cflags);
		str(o, "native", b->native);
		str(o, "status", b->status);
		str(o, "source_sha256", b->source_sha256);
		str(o, "binary_sha256", b->binary_sha256);
		str(o, "openssl", b->openssl);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The valid samples' ns, ascending, as a raw JSON array: a million of
 * them are printed in a fraction of the time cJSON takes for numbers.
 */
static cJSON *
ns_array(const struct rrow *w)
{
	int64_t *ns = xmalloc(((size_t)w->n + 1) * sizeof *ns);
	char *text = xmalloc((size_t)w->n * 21 + 3), *p = text;
	cJSON *raw;
	size_t i;

	if (w->n > 0)
		memcpy(ns, w->ns, (size_t)w->n * sizeof *ns);
	if (w->n > 0)
		qsort(ns, (size_t)w->n, sizeof *ns, cmp_i64);
	*p++ = '[';
	for (i = 0; i < (size_t)w->n; i++)
		p += sprintf(p, i ? ",%" PRId64 : "%" PRId64, ns[i]);
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
		o = cJSON_CreateObject();
		str(o, "variant", w->variant);
		str(o, "host", w->host);
		cJSON_AddNumberToObject(o, "build_id", (double)w->build_id);
		str(o, "compiler", w->compiler);
		cJSON_AddNumberToObject(o, "n", (double)w->n);
		cJSON_AddNumberToObject(o, "invalid", (double)w->invalid);
		num(o, "median_rate", w->n > 0 ? w->median : NAN);
		num(o, "mean_rate", w->n > 0 ? w->desc.mean : NAN);
		num(o, "q1_rate", w->n > 0 ? w->desc.q1 : NAN);
		num(o, "q3_rate", w->n > 0 ? w->desc.q3 : NAN);
		num(o, "min_rate", w->n > 0 ? w->min : NAN);
		num(o, "max_rate", w->n > 0 ? w->max : NAN);
		num(o, "cv", w->desc.cv);
		num(o, "ns_per_step", w->n > 0 ? 1e9 / w->median : NAN);
		num(o, "clock_mhz", w->clock_mhz > 0 ? w->clock_mhz : NAN);
		str(o, "clock_source", report_clock_source(w->clock_source));
		num(o, "cycles_per_step", report_row_cycles(w) > 0 ?
		    report_row_cycles(w) : NAN);
		str(o, "digest", w->digest == DIGEST_OK ? "ok" :
		    w->digest == DIGEST_MISMATCH ? "mismatch" : NULL);
		num(o, "steps", w->n > 0 && w->steps > 0 ? (double)w->steps :
		    NAN);
		cJSON_AddItemToObject(o, "ns", ns_array(w));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
ratios(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rratio *x;
	size_t i;

	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		o = x->refused != NULL ? cJSON_CreateObject() :
		    report_json_ratio(&x->s);
		str(o, "faster", x->a->host);
		str(o, "slower", x->b->host);
		str(o, "refused", x->refused);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
export_run(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *run, *d, *a;
	size_t i;

	str(o, "format", "seqorch-summary");
	cJSON_AddNumberToObject(o, "summary_version", EXPORT_SUMMARY_VERSION);
	str(o, "seqorch_version", SEQORCH_VERSION);
	run = cJSON_AddObjectToObject(o, "run");
	cJSON_AddNumberToObject(run, "id", (double)r->id);
	str(run, "study", r->study);
	str(run, "unit", study_unit(r->study));
	str(run, "status", r->status);
	cJSON_AddBoolToObject(run, "exploratory", r->exploratory);
	cJSON_AddNumberToObject(run, "steps", (double)r->steps);
	cJSON_AddNumberToObject(run, "samples_per_variant", (double)r->samples);
	str(run, "seed", r->seed);
	str(run, "started_at", r->started_at);
	str(run, "finished_at", r->finished_at);
	str(run, "command", r->command);
	/* The common digest: the one every valid sample ends in, if any. */
	str(o, "common_digest", r->ndigests == 1 && r->digests[0].distinct == 1 ?
	    r->digests[0].digest : NULL);
	a = cJSON_AddArrayToObject(o, "digests");
	for (i = 0; i < r->ndigests; i++) {
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "steps", (double)r->digests[i].steps);
		cJSON_AddNumberToObject(d, "valid_samples",
		    (double)r->digests[i].n);
		cJSON_AddBoolToObject(d, "agree", r->digests[i].distinct == 1);
		str(d, "digest", r->digests[i].distinct == 1 ?
		    r->digests[i].digest : NULL);
		cJSON_AddItemToArray(a, d);
	}
	cJSON_AddItemToObject(o, "hosts", hosts(r));
	cJSON_AddItemToObject(o, "builds", builds(r));
	cJSON_AddItemToObject(o, "cells", cells(r));
	a = cJSON_AddArrayToObject(o, "best");
	for (i = 0; i < r->nranked; i++) {
		d = cJSON_CreateObject();
		str(d, "host", r->ranked[i]->name);
		str(d, "variant", r->ranked[i]->best->variant);
		cJSON_AddNumberToObject(d, "build_id",
		    (double)r->ranked[i]->best->build_id);
		cJSON_AddNumberToObject(d, "median_rate",
		    r->ranked[i]->best->median);
		cJSON_AddItemToArray(a, d);
	}
	cJSON_AddItemToObject(o, "ratios", ratios(r));
	cJSON_AddBoolToObject(o, "position_bias", r->position_bias);
	cJSON_AddNumberToObject(o, "invalid_samples", (double)r->ninvalid);
	return o;
}

int
export_summary(sqlite3 *db, int64_t run_id, const char *db_path,
    cJSON **out, struct so_err *err)
{
	struct report_opts o = { .run_id = run_id, .db_path = db_path };
	struct rrun r;
	int64_t *ids = NULL;
	size_t n = 0;
	int ret;

	*out = NULL;
	if ((ret = report_select(db, &o, &ids, &n, err)) != 0)
		return ret;
	free(ids);
	if ((ret = report_load_run(db, run_id, &r, err)) != 0)
		return ret;
	*out = export_run(&r);
	report_free_run(&r);
	return 0;
}

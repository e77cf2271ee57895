/*
 * The report as JSON: one object per run with the same content as the
 * text, every number unrounded, NaN and unknown values as null.
 */
#include "report-builds.h"
#include "report-model.h"
#include "study.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cJSON leaves a key out for a NULL string; scripts want null. */
void
report_json_str(cJSON *o, const char *key, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

void
report_json_num(cJSON *o, const char *key, double v, int known)
{
	if (known)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void json_build(cJSON *o, const struct rrun *r, int64_t build_id);

static cJSON *
json_reference(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *a, *x;
	size_t i;
	char *line;

	if (!r->has_ref) {
		report_json_str(o, "note", r->ref_note);
		return o;
	}
	report_json_str(o, "id", r->ref.id);
	cJSON_AddNumberToObject(o, "version", r->ref.version);
	report_json_str(o, "machine", r->ref.machine);
	report_json_str(o, "document", r->ref.document);
	cJSON_AddNumberToObject(o, "steps", (double)r->ref.steps);
	cJSON_AddNumberToObject(o, "samples", (double)r->ref.samples);
	cJSON_AddNumberToObject(o, "median_rate", r->ref.median_rate);
	a = cJSON_AddArrayToObject(o, "local");
	for (i = 0; i < r->nranked; i++) {
		x = cJSON_CreateObject();
		report_json_str(x, "host", r->ranked[i]->name);
		report_json_str(x, "variant", r->ranked[i]->best->variant);
		/* Which build's figure it is, when a host had two. */
		json_build(x, r, r->ranked[i]->best->build_id);
		cJSON_AddNumberToObject(x, "median_rate",
		    r->ranked[i]->best->median);
		cJSON_AddNumberToObject(x, "ratio",
		    r->ranked[i]->best->median / r->ref.median_rate);
		cJSON_AddBoolToObject(x, "same_steps",
		    r->ranked[i]->best->steps == r->ref.steps);
		line = report_best_doubts(r, r->ranked[i]);
		report_json_str(x, "doubts", line);
		free(line);
		line = report_reference_line(r, r->ranked[i]);
		report_json_str(x, "text", line);
		free(line);
		cJSON_AddItemToArray(a, x);
	}
	return o;
}

static void
json_build(cJSON *o, const struct rrun *r, int64_t build_id)
{
	const struct rbuild *b = report_find_build(r, build_id);

	cJSON_AddNumberToObject(o, "build_id", (double)build_id);
	report_json_str(o, "compiler", b != NULL ? b->compiler : NULL);
}

cJSON *
report_json_ratio(const struct stats_ratio *s)
{
	cJSON *o = cJSON_CreateObject();

	report_json_num(o, "ratio", s->ratio, !isnan(s->ratio));
	report_json_num(o, "lo", s->lo, !isnan(s->lo));
	report_json_num(o, "hi", s->hi, !isnan(s->hi));
	cJSON_AddNumberToObject(o, "level_pct", STATS_LEVEL_PCT);
	/* Why an interval that leaves out 1 is no verdict: the text's. */
	report_json_num(o, "t_p", s->p, !isnan(s->p));
	report_json_str(o, "verdict", stats_verdict_key(s->verdict));
	report_json_str(o, "verdict_text", stats_verdict_word(s->verdict));
	return o;
}

/*
 * Where a cell's cycles come from, in the samples table's words (pmu,
 * test-seam, calibration), which CSV carries too; the text's narrow
 * column abbreviates calibration to "calib".
 */
static const char *
cycles_source(const struct rrow *w)
{
	const char *s = report_row_cycles_source(w);

	return s != NULL && strcmp(s, "calib") == 0 ? "calibration" : s;
}

/*
 * A cell's statistics, shared with export: NaN and unknown as null.  The
 * caller adds its own members.
 */
cJSON *
report_json_cell(const struct rrow *w)
{
	cJSON *o = cJSON_CreateObject();
	int known = w->n > 0;

	report_json_str(o, "variant", w->variant);
	report_json_str(o, "host", w->host);
	cJSON_AddNumberToObject(o, "build_id", (double)w->build_id);
	report_json_str(o, "compiler", w->compiler);
	cJSON_AddNumberToObject(o, "n", (double)w->n);
	cJSON_AddNumberToObject(o, "invalid", (double)w->invalid);
	report_json_num(o, "median_rate", w->median, known);
	report_json_num(o, "mean_rate", w->desc.mean, known);
	report_json_num(o, "q1_rate", w->desc.q1, known);
	report_json_num(o, "q3_rate", w->desc.q3, known);
	report_json_num(o, "min_rate", w->min, known);
	report_json_num(o, "max_rate", w->max, known);
	report_json_num(o, "cv_pct", 100 * w->desc.cv, isfinite(w->desc.cv));
	report_json_num(o, "ns_per_step", known ? 1e9 / w->median : 0, known);
	report_json_num(o, "clock_mhz", w->clock_mhz, w->clock_mhz > 0);
	report_json_str(o, "clock_source", report_clock_source(w->clock_source));
	report_json_num(o, "cycles_per_step", report_row_cycles(w),
	    report_row_cycles(w) > 0);
	report_json_str(o, "cycles_source", cycles_source(w));
	report_json_str(o, "digest", w->digest == DIGEST_OK ? "ok" :
	    w->digest == DIGEST_MISMATCH ? "mismatch" : NULL);
	return o;
}

/* The report's cell: the shared statistics, counters, against best. */
static cJSON *
json_row(const struct rrow *w)
{
	cJSON *o = report_json_cell(w);

	report_json_num(o, "ipc", w->ipc, w->counted > 0 && w->ipc > 0);
	cJSON_AddNumberToObject(o, "clock_moved", (double)w->moved);
	if (isnan(w->vs_best.ratio))
		cJSON_AddNullToObject(o, "vs_best");
	else
		cJSON_AddItemToObject(o, "vs_best", report_json_ratio(&w->vs_best));
	return o;
}

cJSON *
report_json_host(const struct rhost *h)
{
	cJSON *o = cJSON_CreateObject();

	report_json_str(o, "name", h->name);
	report_json_str(o, "status", h->status);
	report_json_str(o, "cpu_model", h->cpu_model);
	report_json_str(o, "cpu_signature", h->cpu_signature);
	report_json_str(o, "arch", h->arch);
	report_json_str(o, "os", h->os);
	report_json_str(o, "kernel", h->kernel);
	report_json_num(o, "cores", (double)h->cores, h->cores > 0);
	report_json_str(o, "openssl", h->openssl);
	report_json_str(o, "governor", h->governor);
	report_json_num(o, "pin_cpu", (double)h->pin_cpu, h->has_pin_cpu);
	if (h->pinned == -1)
		cJSON_AddNullToObject(o, "pinned");
	else
		cJSON_AddBoolToObject(o, "pinned", h->pinned);
	report_json_str(o, "pin_error", h->pin_error);
	report_json_num(o, "clock_mhz", h->clock_mhz, h->clock_mhz > 0);
	report_json_str(o, "clock_source", report_clock_source(h->clock_source));
	return o;
}

/* The report's hosts: the facts, the clock's basis, counters, windows. */
static cJSON *
json_hosts(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rhost *h;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		o = report_json_host(h);
		report_json_str(o, "error", h->error);
		report_json_num(o, "calib_mhz", h->calib_mhz, h->calib_mhz > 0);
		cJSON_AddNumberToObject(o, "clock_samples", (double)h->clock_n);
		report_json_str(o, "cpu_choice", h->cpu_choice);
		report_json_str(o, "counters", h->counters);
		report_json_str(o, "counters_error", h->counters_error);
		cJSON_AddNumberToObject(o, "windows", (double)h->windows);
		cJSON_AddNumberToObject(o, "noisy_windows", (double)h->noisy);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *
report_json_builds(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rbuild *b;
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)b->id);
		report_json_str(o, "host", b->host);
		report_json_str(o, "compiler", b->compiler);
		report_json_str(o, "compiler_version", b->compiler_version);
		report_json_str(o, "target", b->target);
		report_json_str(o, "cflags", b->cflags);
		report_json_str(o, "native", b->native);
		report_json_str(o, "status", b->status);
		report_json_str(o, "source_sha256", b->source_sha256);
		report_json_str(o, "binary_sha256", b->binary_sha256);
		report_json_str(o, "openssl", b->openssl);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The upstream sources each build recorded (struct rsource). */
static cJSON *
json_sources(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rsource *s;
	size_t i;

	for (i = 0; i < r->nsources; i++) {
		s = &r->sources[i];
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "build", (double)s->build_id);
		report_json_str(o, "name", s->name);
		report_json_str(o, "version", s->version);
		report_json_str(o, "file", s->file);
		report_json_str(o, "sha256", s->sha256);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/*
 * A ratio that was not computed has every member of one that was, null:
 * no number, no interval, no verdict ("Unknown is null, never a missing
 * member", docs/report.md).
 */
static cJSON *
json_refused(void)
{
	static const char *const keys[] = {
		"ratio", "lo", "hi", "level_pct", "t_p", "verdict",
		"verdict_text"
	};
	cJSON *o = cJSON_CreateObject();
	size_t i;

	for (i = 0; i < sizeof keys / sizeof *keys; i++)
		cJSON_AddNullToObject(o, keys[i]);
	return o;
}

cJSON *
report_json_ratios(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o, *d;
	const struct rratio *x;
	const struct rhost *h;
	const struct rrow *w, *win;
	char *why;
	size_t i, j;

	for (i = 0; i < r->nratios; i++) {
		x = &r->ratios[i];
		o = x->refused != NULL ? json_refused() :
		    report_json_ratio(&x->s);
		report_json_str(o, "a", x->a->host);
		report_json_str(o, "b", x->b->host);
		/*
		 * A winner only where the verdict names one: a script reading
		 * "faster" must not get the higher median of two hosts the
		 * interval cannot tell apart (the text's "not distinguishable").
		 */
		win = x->refused != NULL ? NULL : x->s.verdict ==
		    STATS_FASTER ? x->a : x->s.verdict == STATS_SLOWER ? x->b :
		    NULL;
		report_json_str(o, "faster", win != NULL ? win->host : NULL);
		report_json_str(o, "slower", win == NULL ? NULL : win == x->a ?
		    x->b->host : x->a->host);
		report_json_str(o, "refused", x->refused);
		/* The sides whose best figure has doubts (json_best's). */
		d = cJSON_AddArrayToObject(o, "doubtful");
		for (j = 0; j < 2; j++) {
			h = report_best_host(r, j == 0 ? x->a : x->b);
			if (h != NULL && (why = report_best_doubts(r, h)) !=
			    NULL) {
				cJSON_AddItemToArray(d,
				    cJSON_CreateString(h->name));
				free(why);
			}
		}
		/* The sides whose best is the study's control. */
		d = cJSON_AddArrayToObject(o, "control");
		for (j = 0; j < 2; j++) {
			w = j == 0 ? x->a : x->b;
			if (report_is_control(r, w->variant))
				cJSON_AddItemToArray(d,
				    cJSON_CreateString(w->host));
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *
report_json_digests(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *d;
	size_t i;

	for (i = 0; i < r->ndigests; i++) {
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "steps", (double)r->digests[i].steps);
		cJSON_AddNumberToObject(d, "valid_samples",
		    (double)r->digests[i].n);
		cJSON_AddBoolToObject(d, "agree", r->digests[i].distinct == 1);
		report_json_str(d, "digest", r->digests[i].distinct == 1 ?
		    r->digests[i].digest : NULL);
		cJSON_AddItemToArray(a, d);
	}
	return a;
}

void
report_json_header(cJSON *o, const struct rrun *r)
{
	cJSON_AddNumberToObject(o, "id", (double)r->id);
	report_json_str(o, "study", r->study);
	report_json_str(o, "unit", study_unit(r->study));
	report_json_str(o, "status", r->status);
	cJSON_AddBoolToObject(o, "exploratory", r->exploratory);
	cJSON_AddNumberToObject(o, "steps", (double)r->steps);
	cJSON_AddNumberToObject(o, "samples_per_variant", (double)r->samples);
	report_json_num(o, "msg_len", (double)r->msg_len, r->msg_len > 0);
	report_json_str(o, "seed", r->seed);
	report_json_str(o, "started_at", r->started_at);
	report_json_str(o, "finished_at", r->finished_at);
	report_json_str(o, "command", r->command);
	if (r->imported_from != NULL) {
		cJSON *i = cJSON_AddObjectToObject(o, "imported");

		cJSON_AddNumberToObject(i, "origin_run", (double)r->origin_run);
		report_json_str(i, "coordinator", r->imported_from);
		cJSON_AddBoolToObject(i, "signed", r->imported_signed);
	}
}

void
report_json_best_notes(cJSON *o, const struct rrun *r, const struct rhost *h)
{
	cJSON *x;
	const struct rrow *up;
	char *why;
	size_t ties;

	why = report_best_doubts(r, h);
	report_json_str(o, "doubts", why);
	free(why);
	cJSON_AddBoolToObject(o, "control", report_is_control(r,
	    h->best->variant));
	/* The closest row the interval cannot tell from the best. */
	if ((up = report_best_runner_up(r, h, &ties)) != NULL) {
		x = report_json_ratio(&up->vs_best);
		report_json_str(x, "variant", up->variant);
		cJSON_AddNumberToObject(x, "build_id", (double)up->build_id);
		cJSON_AddNumberToObject(x, "ties", (double)ties);
		cJSON_AddItemToObject(o, "runner_up", x);
	} else
		cJSON_AddNullToObject(o, "runner_up");
}

static cJSON *
json_best(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	size_t i;

	for (i = 0; i < r->nranked; i++) {
		o = json_row(r->ranked[i]->best);
		report_json_best_notes(o, r, r->ranked[i]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

void
report_json_position_bias(cJSON *o, const struct rrun *r)
{
	/* No two positions to compare: not measurable, as the text says. */
	if (r->npositions == 0)
		cJSON_AddNullToObject(o, "position_bias");
	else
		cJSON_AddBoolToObject(o, "position_bias", r->position_bias);
}

static cJSON *
json_positions(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	size_t i;

	for (i = 0; i < r->npositions; i++) {
		o = report_json_ratio(&r->positions[i].s);
		/* Holm's rank tests decide a position, not the t-test. */
		cJSON_ReplaceItemInObjectCaseSensitive(o, "t_p",
		    cJSON_CreateNull());
		cJSON_AddNumberToObject(o, "position",
		    (double)r->positions[i].position);
		cJSON_AddNumberToObject(o, "n", (double)r->positions[i].n);
		if (!isnan(r->positions[i].p)) {
			cJSON_AddNumberToObject(o, "p", r->positions[i].p);
			cJSON_AddNumberToObject(o, "p_holm",
			    r->positions[i].p_holm);
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
json_warnings(const struct rrun *r)
{
	cJSON *w = cJSON_CreateObject(), *a, *o, *e;
	size_t i;

	a = cJSON_AddArrayToObject(w, "invalid_samples");
	for (i = 0; i < r->ninvalid; i++) {
		o = cJSON_CreateObject();
		report_json_str(o, "host", r->invalid[i].host);
		report_json_str(o, "variant", r->invalid[i].variant);
		json_build(o, r, r->invalid[i].build_id);
		cJSON_AddNumberToObject(o, "sample_index",
		    (double)r->invalid[i].index);
		report_json_str(o, "reason", r->invalid[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	a = cJSON_AddArrayToObject(w, "variants");
	for (i = 0; i < r->nvariants; i++) {
		o = cJSON_CreateObject();
		report_json_str(o, "host", r->variants[i].host);
		report_json_str(o, "variant", r->variants[i].variant);
		json_build(o, r, r->variants[i].build_id);
		report_json_str(o, "status", r->variants[i].status);
		report_json_str(o, "reason", r->variants[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	o = cJSON_AddObjectToObject(w, "clock_moved");
	cJSON_AddNumberToObject(o, "samples", (double)r->moved);
	cJSON_AddNumberToObject(o, "of", (double)r->clocked);
	cJSON_AddNumberToObject(o, "threshold_pct", CLOCK_MOVED_PCT);
	o = cJSON_AddObjectToObject(w, "unstable");
	cJSON_AddNumberToObject(o, "max_cv_pct", 100 * r->max_cv);
	a = cJSON_AddArrayToObject(o, "cells");
	for (i = 0; i < r->nrows; i++) {
		if (!report_row_unstable(r, &r->rows[i]))
			continue;
		e = cJSON_CreateObject();
		report_json_str(e, "host", r->rows[i].host);
		report_json_str(e, "variant", r->rows[i].variant);
		json_build(e, r, r->rows[i].build_id);
		cJSON_AddNumberToObject(e, "cv_pct", 100 * r->rows[i].desc.cv);
		cJSON_AddItemToArray(a, e);
	}
	a = cJSON_AddArrayToObject(w, "events");
	for (i = 0; i < r->nevents; i++) {
		o = cJSON_CreateObject();
		report_json_str(o, "host", r->events[i].host);
		report_json_str(o, "at", r->events[i].at);
		report_json_str(o, "level", r->events[i].level);
		report_json_str(o, "message", r->events[i].message);
		cJSON_AddItemToArray(a, o);
	}
	return w;
}

cJSON *
report_json_run(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *a;
	size_t i;

	report_json_header(o, r);
	report_json_str(o, "unit_plural", study_unit_plural(r->study));
	report_json_str(o, "openssl_cap", r->openssl_cap);
	cJSON_AddItemToObject(o, "digests", report_json_digests(r));
	cJSON_AddItemToObject(o, "hosts", json_hosts(r));
	cJSON_AddItemToObject(o, "builds", report_json_builds(r));
	cJSON_AddItemToObject(o, "sources", json_sources(r));
	a = cJSON_AddArrayToObject(o, "cells");
	for (i = 0; i < r->nrows; i++)
		cJSON_AddItemToArray(a, json_row(&r->rows[i]));
	cJSON_AddItemToObject(o, "best", json_best(r));
	cJSON_AddItemToObject(o, "ratios", report_json_ratios(r));
	cJSON_AddItemToObject(o, "paired", report_builds_json(r));
	report_builds_json_sections(r, o);
	report_json_position_bias(o, r);
	cJSON_AddItemToObject(o, "positions", json_positions(r));
	cJSON_AddItemToObject(o, "warnings", json_warnings(r));
	if (r->has_ref || r->ref_note != NULL)
		cJSON_AddItemToObject(o, "reference", json_reference(r));
	return o;
}

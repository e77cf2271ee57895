/* The embedded reference/seeds.json, parsed on first use. */
#include "figures.h"

#include <cjson/cJSON.h>
#include <string.h>
#include <stdio.h>

#include "published-data.h"

static cJSON *
root(void)
{
	static cJSON *doc;

	if (doc == NULL)
		doc = cJSON_Parse(published_json);
	return doc;
}

static const char *
str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double
num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void
fill(const cJSON *e, struct figure *out)
{
	const cJSON *ph, *phases = cJSON_GetObjectItemCaseSensitive(e,
	    "phases");

	memset(out, 0, sizeof *out);
	out->id = str(e, "id");
	out->machine = str(e, "machine");
	out->study = str(e, "study");
	out->steps = (int64_t)num(e, "steps");
	out->samples = (int64_t)num(e, "samples");
	out->variant = str(e, "variant");
	out->median_rate = num(e, "median_rate");
	out->document = str(e, "document");
	out->note = str(e, "note");
	out->version = (int)num(root(), "version");
	out->targeting = str(e, "targeting");
	cJSON_ArrayForEach(ph, phases) {
		if (out->nphases == FIGURE_MAX_PHASES || str(ph, "name") == NULL)
			break;
		out->phases[out->nphases].name = str(ph, "name");
		out->phases[out->nphases].words = str(ph, "words");
		out->phases[out->nphases++].share = num(ph, "share");
	}
}

size_t
figures_of_study(const char *study, struct figure *out, size_t max)
{
	const cJSON *e, *refs = cJSON_GetObjectItemCaseSensitive(root(),
	    "references");
	size_t n = 0;

	cJSON_ArrayForEach(e, refs) {
		if (str(e, "id") == NULL || str(e, "study") == NULL ||
		    strcmp(str(e, "study"), study) != 0)
			continue;
		if (n < max)
			fill(e, &out[n]);
		n++;
	}
	return n;
}

size_t
figures_cpb(const char *study, struct figure_cpb *out, size_t max)
{
	const cJSON *e, *l, *q, *rows = cJSON_GetObjectItemCaseSensitive(
	    root(), "cycles_per_byte");
	struct figure_cpb *f;
	size_t n = 0, k;

	cJSON_ArrayForEach(e, rows) {
		if (str(e, "study") == NULL || strcmp(str(e, "study"), study))
			continue;
		if (n >= max) {
			n++;
			continue;
		}
		f = &out[n++];
		memset(f, 0, sizeof *f);
		f->id = str(e, "id");
		f->machine = str(e, "machine");
		f->study = str(e, "study");
		f->primitive = str(e, "primitive");
		f->document = str(e, "document");
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(e,
		    "lengths")) {
			if (f->nlengths == FIGURE_MAX_LENGTHS)
				break;
			f->bytes[f->nlengths] = (int64_t)num(l, "bytes");
			k = 0;
			cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(
			    l, "quartiles"))
				if (k < 3 && cJSON_IsNumber(q))
					f->quartiles[f->nlengths][k++] =
					    q->valuedouble;
			f->nlengths++;
		}
	}
	return n;
}

size_t
figures_ratios(const char *study, struct figure_ratio *out, size_t max)
{
	const cJSON *e, *ratios = cJSON_GetObjectItemCaseSensitive(root(),
	    "ratios");
	size_t n = 0;

	cJSON_ArrayForEach(e, ratios) {
		if (str(e, "study") == NULL || str(e, "faster") == NULL ||
		    str(e, "slower") == NULL ||
		    strcmp(str(e, "study"), study) != 0)
			continue;
		if (n < max) {
			out[n].study = str(e, "study");
			out[n].faster = str(e, "faster");
			out[n].slower = str(e, "slower");
			out[n].ratio = num(e, "ratio");
			out[n].document = str(e, "document");
		}
		n++;
	}
	return n;
}

int
figures_known(const char *id)
{
	const cJSON *e, *refs = cJSON_GetObjectItemCaseSensitive(root(),
	    "references");

	cJSON_ArrayForEach(e, refs) {
		if (str(e, "id") != NULL && strcmp(str(e, "id"), id) == 0)
			return 1;
	}
	return 0;
}

int
figures_find(const char *id, const char *study, struct figure *out,
    struct so_err *err)
{
	const cJSON *doc = root(), *refs, *e;
	char ids[256] = "", studies[256] = "";
	int seen = 0;

	refs = cJSON_GetObjectItemCaseSensitive(doc, "references");
	if (!cJSON_IsArray(refs))
		return so_error(err, SO_EPARSE, "reference/seeds.json: no "
		    "\"references\" array");
	cJSON_ArrayForEach(e, refs) {
		if (str(e, "id") == NULL || str(e, "study") == NULL)
			continue;
		if (strstr(ids, str(e, "id")) == NULL)
			snprintf(ids + strlen(ids), sizeof ids - strlen(ids),
			    "%s%s", *ids ? ", " : "", str(e, "id"));
		if (strcmp(str(e, "id"), id) != 0)
			continue;
		seen = 1;
		snprintf(studies + strlen(studies), sizeof studies -
		    strlen(studies), "%s%s", *studies ? ", " : "",
		    str(e, "study"));
		if (strcmp(str(e, "study"), study) != 0)
			continue;
		fill(e, out);
		return 0;
	}
	if (!seen)
		return so_error(err, SO_ENOTFOUND, "unknown reference \"%s\" "
		    "(published references: %s)", id, ids);
	return so_error(err, SO_EINVAL, "reference \"%s\" has no figure for "
	    "study \"%s\" (it has: %s)", id, study, studies);
}

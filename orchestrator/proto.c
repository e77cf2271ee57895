/*
 * Strict reader for agent records (docs/protocol.md; the version and every
 * name are protocol.h's, which the agent shares).  Each record type is a
 * table of fields; nested objects (a window's state, its busy_on_cpu
 * entries) are tables too, checked the same way.
 */
#include "proto.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_STR 4096
#define MAX_FLAGS 16384
#define MAX_COMM 64
#define MAX_HEX 128
#define MAX_BUSY 16
#define MAX_ITEMS 32		/* a preflight's reasons and notes */
#define MAX_ITEM 256

enum ftype {
	F_STR, F_STR_NULL, F_INT, F_INT_NULL, F_NUM, F_NUM_NULL, F_BOOL, F_HEX,
	F_TIME,		/* UTC wall time, 2026-01-31T12:00:00.000Z */
	F_STATE,	/* a window's host-state object (state_f) */
	F_BUSY,		/* null or up to MAX_BUSY busy_f objects */
	F_STRS,		/* up to MAX_ITEMS strings */
	F_STR_OPT,	/* a string, or absent */
	F_INT_OPT,	/* an integer, or absent (then 0) */
	F_BOOL_OPT,	/* true or false, or absent (then false), as an int */
	F_METRICS,	/* absent, or an object of named numbers */
};

struct field {
	const char *name;
	enum ftype type;
	size_t off;		/* offset in struct record, or (size_t)-1 */
	int64_t min;		/* for numbers */
};

#define NO ((size_t)-1)
#define S(m) offsetof(struct record, m)

static const struct field hello_f[] = {
	{ PROTO_F_PROTO, F_INT, S(proto), 1 },
	{ PROTO_F_AGENT, F_STR, NO, 0 },
	{ PROTO_F_BUILD_ID, F_STR, S(build_id), 0 },
	{ PROTO_F_TOKEN, F_STR, S(token), 0 },
	{ PROTO_F_STUDY, F_STR, S(study), 0 },
	{ PROTO_F_STEPS, F_INT, S(steps), 1 },
	/* 0: a resumed --max-cv build's extra rounds alone (--extra-from). */
	{ PROTO_F_SAMPLES, F_INT, S(samples), 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field facts_f[] = {
	{ PROTO_F_ARCH, F_STR, NO, 0 },
	{ PROTO_F_OS, F_STR, NO, 0 },
	{ PROTO_F_KERNEL, F_STR, NO, 0 },
	{ PROTO_F_HOSTNAME, F_STR, NO, 0 },
	{ PROTO_F_CPU_MODEL, F_STR_NULL, NO, 0 },
	{ PROTO_F_CPU_SIGNATURE, F_STR_OPT, NO, 0 },
	{ PROTO_F_CPU_FLAGS, F_STR_NULL, NO, 0 },
	{ PROTO_F_HWCAPS, F_STR_NULL, NO, 0 },
	{ PROTO_F_FACTS_WARNING, F_STR_NULL, NO, 0 },
	{ PROTO_F_POWER, F_STR_NULL, NO, 0 },
	{ PROTO_F_THERMAL_PRESSURE, F_STR_NULL, NO, 0 },
	{ PROTO_F_CORES, F_INT, NO, 1 },
	{ PROTO_F_COMPILER, F_STR, NO, 0 },
	{ PROTO_F_OPENSSL, F_STR_NULL, NO, 0 },
	{ PROTO_F_GOVERNOR, F_STR_NULL, NO, 0 },
	{ PROTO_F_OPENSSL_IA32CAP, F_STR_NULL, NO, 0 },
	{ PROTO_F_OPENSSL_ARMCAP, F_STR_NULL, NO, 0 },
	{ PROTO_F_OPENSSL_CAP_DETECTED, F_STR_OPT, NO, 0 },
	{ PROTO_F_OPENSSL_CAP_CLEARED, F_STR_OPT, NO, 0 },
	{ PROTO_F_OPENSSL_CAP_APPLIED, F_STR_OPT, NO, 0 },
	{ PROTO_F_PIN_CPU, F_INT_NULL, NO, 0 },
	{ PROTO_F_PINNED, F_BOOL, NO, 0 },
	{ PROTO_F_PIN_ERROR, F_STR_NULL, NO, 0 },
	{ PROTO_F_CLOCK, F_STR, NO, 0 },
	{ PROTO_F_CALIB_MHZ, F_NUM, S(calib_mhz), 0 },
	{ PROTO_F_CPU_CHOICE, F_STR_NULL, NO, 0 },
	{ PROTO_F_COUNTERS, F_STR, NO, 0 },
	{ PROTO_F_COUNTERS_ERROR, F_STR_NULL, NO, 0 },
	{ PROTO_F_SYSFS_ROOT, F_STR_NULL, NO, 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field variant_f[] = {
	{ PROTO_F_STUDY, F_STR, S(study), 0 },
	{ PROTO_F_VARIANT, F_STR, S(variant), 0 },
	{ PROTO_F_STATUS, F_STR, S(status), 0 },
	{ PROTO_F_REASON, F_STR_NULL, S(reason), 0 },
	{ PROTO_F_WARNING, F_STR_OPT, S(warning), 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field selftest_f[] = {
	{ PROTO_F_STUDY, F_STR, S(study), 0 },
	{ PROTO_F_STEPS, F_INT, S(steps), 1 },
	{ PROTO_F_DIGEST, F_HEX, S(digest), 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field sample_f[] = {
	{ PROTO_F_STUDY, F_STR, S(study), 0 },
	{ PROTO_F_VARIANT, F_STR, S(variant), 0 },
	{ PROTO_F_SAMPLE, F_INT, S(sample), 0 },
	{ PROTO_F_POSITION, F_INT, S(position), 0 },
	{ PROTO_F_ORDER, F_INT, S(order), 0 },
	{ PROTO_F_STEPS, F_INT, S(steps), 1 },
	{ PROTO_F_MSG_LEN, F_INT_OPT, S(msg_len), 1 },
	{ PROTO_F_WARMUP, F_BOOL_OPT, S(warmup), 0 },
	{ PROTO_F_NS, F_INT, S(ns), 1 },
	{ PROTO_F_DIGEST, F_HEX, S(digest), 0 },
	{ PROTO_F_SEED, F_HEX, S(seed), 0 },
	{ PROTO_F_CALIB_MHZ, F_NUM, S(calib_mhz), 0 },
	{ PROTO_F_CALIB_AFTER_MHZ, F_NUM, S(calib_after_mhz), 0 },
	{ PROTO_F_CPU, F_INT, S(cpu), -1 },
	{ PROTO_F_BUILD_ID, F_STR, S(build_id), 0 },
	{ PROTO_F_CYCLES, F_INT_NULL, S(cycles), 0 },
	{ PROTO_F_INSTRUCTIONS, F_INT_NULL, S(instructions), 0 },
	{ PROTO_F_CYCLES_SOURCE, F_STR, S(cycles_source), 0 },
	{ PROTO_F_REASON, F_STR_NULL, S(reason), 0 },
	{ PROTO_F_METRICS, F_METRICS, NO, 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field preflight_f[] = {
	{ PROTO_F_CPU, F_INT_NULL, NO, 0 },
	{ PROTO_F_CPU_CHOICE, F_STR_NULL, NO, 0 },
	{ PROTO_F_VERDICT, F_STR, S(verdict), 0 },
	{ PROTO_F_REASONS, F_STRS, NO, 0 },
	{ PROTO_F_NOTES, F_STRS, NO, 0 },
	{ NULL, 0, 0, 0 },
};
/* The host state, nested in window records; nothing of it is stored. */
static const struct field state_f[] = {
	{ PROTO_F_AT, F_TIME, NO, 0 },
	{ PROTO_F_LOAD1, F_NUM_NULL, NO, 0 },
	{ PROTO_F_LOAD5, F_NUM_NULL, NO, 0 },
	{ PROTO_F_LOAD15, F_NUM_NULL, NO, 0 },
	{ PROTO_F_CALIB_MHZ, F_NUM_NULL, NO, 0 },
	{ PROTO_F_GOVERNOR, F_STR_NULL, NO, 0 },
	{ PROTO_F_FREQ_KHZ, F_INT_NULL, NO, 0 },
	{ PROTO_F_TEMP_C, F_NUM_NULL, NO, -273 },
	{ PROTO_F_THROTTLE_COUNT, F_INT_NULL, NO, 0 },
	{ PROTO_F_BUSY_ON_CPU, F_BUSY, NO, 0 },
	{ PROTO_F_RUNNABLE, F_INT_NULL, NO, 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field busy_f[] = {
	{ PROTO_F_PID, F_INT, NO, 1 },
	{ PROTO_F_COMM, F_STR, NO, 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field window_f[] = {
	{ PROTO_F_PHASE, F_STR, S(phase), 0 },
	{ PROTO_F_STATE, F_STATE, S(state), 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field wait_f[] = {
	{ PROTO_F_HOLDER, F_STR, S(holder), 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field done_f[] = {
	{ PROTO_F_SAMPLES, F_INT, S(samples), 0 },
	{ NULL, 0, 0, 0 },
};
/* A conductor's: the records that follow are build_id's ("" its own). */
static const struct field build_f[] = {
	{ PROTO_F_BUILD_ID, F_STR, S(build_id), 0 },
	{ NULL, 0, 0, 0 },
};
static const struct field error_f[] = {
	{ PROTO_F_MESSAGE, F_STR, S(message), 0 },
	{ NULL, 0, 0, 0 },
};

static const struct {
	const char *name;
	enum rec_type type;
	const struct field *fields;
} types[] = {
	{ PROTO_T_HELLO, REC_HELLO, hello_f },
	{ PROTO_T_FACTS, REC_FACTS, facts_f },
	{ PROTO_T_VARIANT, REC_VARIANT, variant_f },
	{ PROTO_T_SELFTEST, REC_SELFTEST, selftest_f },
	{ PROTO_T_SAMPLE, REC_SAMPLE, sample_f },
	{ PROTO_T_WINDOW, REC_WINDOW, window_f },
	{ PROTO_T_WAIT, REC_WAIT, wait_f },
	{ PROTO_T_DONE, REC_DONE, done_f },
	{ PROTO_T_ERROR, REC_ERROR, error_f },
	{ PROTO_T_PREFLIGHT, REC_PREFLIGHT, preflight_f },
	{ PROTO_T_BUILD, REC_BUILD, build_f },
};

const char *
proto_type_name(enum rec_type t)
{
	size_t i;

	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		if (types[i].type == t)
			return types[i].name;
	return "?";
}

static int
is_hex(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_HEX || n % 2 != 0)
		return 0;
	return strspn(s, "0123456789abcdef") == n;
}

/* Integral JSON number within int64 range (doubles are exact to 2^53). */
static int
as_int(const cJSON *v, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return 0;
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < -9007199254740992.0 ||
	    d > 9007199254740992.0)
		return 0;
	*out = (int64_t)d;
	return 1;
}

/* Longest string a field may hold: short names are short. */
static size_t
max_len(const struct field *f)
{
	if (strcmp(f->name, PROTO_F_CPU_FLAGS) == 0 ||
	    strcmp(f->name, PROTO_F_HWCAPS) == 0)
		return MAX_FLAGS;
	if (strcmp(f->name, PROTO_F_GOVERNOR) == 0 ||
	    strcmp(f->name, PROTO_F_COMM) == 0)
		return MAX_COMM;
	return MAX_STR;
}

/* Exactly "YYYY-MM-DDTHH:MM:SS.mmmZ": sortable and comparable as text. */
static int
is_time(const char *s)
{
	static const char form[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	size_t i;

	for (i = 0; form[i] != '\0'; i++) {
		if (form[i] == 'd' ? !isdigit((unsigned char)s[i]) :
		    s[i] != form[i])
			return 0;
	}
	return s[i] == '\0';
}

/* Offset of the first control character (C0 or DEL) in s, or -1. */
static size_t
ctrl_at(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return i;
	return (size_t)-1;
}

static int check_object(const struct field *fields, const cJSON *obj,
    const char *skip, struct record *rec, const char *what,
    struct so_err *err);

/*
 * A sample's metrics: at most KERNEL_MAX_METRICS names of [a-z0-9_] (at
 * most KERNEL_METRIC_NAME bytes) with finite numbers, kept in rec.
 */
static int
check_metrics(const cJSON *v, struct record *rec, const char *what,
    struct so_err *err)
{
	const cJSON *e;
	size_t n;

	if (!cJSON_IsObject(v))
		return so_error(err, SO_EPROTO, "%s: field \"metrics\" must be "
		    "an object", what);
	rec->nmetrics = 0;
	cJSON_ArrayForEach(e, v) {
		n = strlen(e->string);
		if (n == 0 || n > KERNEL_METRIC_NAME ||
		    strspn(e->string, "abcdefghijklmnopqrstuvwxyz0123456789_")
		    != n)
			return so_error(err, SO_EPROTO, "%s: metric name "
			    "\"%.40s\": expected 1 to %d of a-z, 0-9 and _",
			    what, e->string, KERNEL_METRIC_NAME);
		if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
			return so_error(err, SO_EPROTO, "%s: metric \"%s\" must "
			    "be a finite number", what, e->string);
		if (rec->nmetrics == KERNEL_MAX_METRICS)
			return so_error(err, SO_EPROTO, "%s: more than %d "
			    "metrics", what, KERNEL_MAX_METRICS);
		rec->metric_name[rec->nmetrics] = e->string;
		rec->metric_value[rec->nmetrics++] = e->valuedouble;
	}
	return 0;
}

/*
 * Check one value against its field; what names the object it is in
 * ("sample record", "window record: state").  A value with an offset is
 * stored into rec.
 */
static int
check_field(const struct field *f, const cJSON *v, struct record *rec,
    const char *what, struct so_err *err)
{
	char *base = (char *)rec, inner[128];
	const cJSON *e;
	int64_t iv;
	size_t max = max_len(f), n;
	int i, rc;

	switch (f->type) {
	case F_METRICS:
		return check_metrics(v, rec, what, err);
	case F_STR_NULL:
		if (cJSON_IsNull(v))
			return 0;
		/* FALLTHROUGH */
	case F_STR_OPT:
	case F_STR:
	case F_HEX:
	case F_TIME:
		if (!cJSON_IsString(v))
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be a string", what, f->name);
		if (strlen(v->valuestring) > max)
			return so_error(err, SO_EPROTO, "%s: field \"%s\" is "
			    "longer than %zu bytes", what, f->name, max);
		/* Agent text reaches terminals and logs: no escapes in it. */
		if ((n = ctrl_at(v->valuestring)) != (size_t)-1)
			return so_error(err, SO_EPROTO, "%s: field \"%s\" holds "
			    "control character 0x%02x at byte %zu", what,
			    f->name, (unsigned char)v->valuestring[n], n);
		if (f->type == F_HEX && !is_hex(v->valuestring))
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be lowercase hex of at most %d digits, got "
			    "\"%.40s\"", what, f->name, MAX_HEX, v->valuestring);
		if (f->type == F_TIME && !is_time(v->valuestring))
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be a UTC time like 2026-01-31T12:00:00.000Z, got "
			    "\"%.40s\"", what, f->name, v->valuestring);
		if (f->off != NO)
			*(const char **)(base + f->off) = v->valuestring;
		return 0;
	case F_INT_NULL:
		if (cJSON_IsNull(v))
			return 0;
		/* FALLTHROUGH */
	case F_INT_OPT:
	case F_INT:
		if (!as_int(v, &iv) || iv < f->min)
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be an integer >= %lld%s", what, f->name,
			    (long long)f->min,
			    f->type == F_INT_NULL ? " or null" : "");
		if (f->off != NO)
			*(int64_t *)(base + f->off) = iv;
		return 0;
	case F_NUM_NULL:
		if (cJSON_IsNull(v))
			return 0;
		/* FALLTHROUGH */
	case F_NUM:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
		    v->valuedouble < (double)f->min) {
			if (f->min == 0)
				return so_error(err, SO_EPROTO, "%s: field "
				    "\"%s\" must be a non-negative number%s",
				    what, f->name, f->type == F_NUM_NULL ?
				    " or null" : "");
			return so_error(err, SO_EPROTO, "%s: field \"%s\" "
			    "must be a number >= %lld%s", what, f->name,
			    (long long)f->min,
			    f->type == F_NUM_NULL ? " or null" : "");
		}
		if (f->off != NO)
			*(double *)(base + f->off) = v->valuedouble;
		return 0;
	case F_BOOL:
	case F_BOOL_OPT:
		if (!cJSON_IsBool(v))
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be true or false", what, f->name);
		if (f->off != NO)
			*(int *)(base + f->off) = cJSON_IsTrue(v);
		return 0;
	case F_STATE:
		if (!cJSON_IsObject(v))
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be an object", what, f->name);
		snprintf(inner, sizeof inner, "%s: %s", what, f->name);
		if ((rc = check_object(state_f, v, NULL, rec, inner,
		    err)) != 0)
			return rc;
		if (f->off != NO)
			*(const cJSON **)(base + f->off) = v;
		return 0;
	case F_BUSY:
		if (cJSON_IsNull(v))
			return 0;
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > MAX_BUSY)
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be null or an array of at most %d objects", what,
			    f->name, MAX_BUSY);
		i = 0;
		cJSON_ArrayForEach(e, v) {
			snprintf(inner, sizeof inner, "%s: %s[%d]", what,
			    f->name, i++);
			if (!cJSON_IsObject(e))
				return so_error(err, SO_EPROTO, "%s: not an "
				    "object", inner);
			if ((rc = check_object(busy_f, e, NULL, rec, inner,
			    err)) != 0)
				return rc;
		}
		return 0;
	case F_STRS:
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > MAX_ITEMS)
			return so_error(err, SO_EPROTO, "%s: field \"%s\" must "
			    "be an array of at most %d strings", what, f->name,
			    MAX_ITEMS);
		i = 0;
		cJSON_ArrayForEach(e, v) {
			if (!cJSON_IsString(e) ||
			    strlen(e->valuestring) > MAX_ITEM)
				return so_error(err, SO_EPROTO, "%s: %s[%d] must "
				    "be a string of at most %d bytes", what,
				    f->name, i, MAX_ITEM);
			i++;
		}
		return 0;
	}
	return so_error(err, SO_EPROTO, "bad field table");
}

/*
 * Every member of obj but skip (NULL: none) must be one of fields, and
 * every one of fields must be present with its type.
 */
static int
check_object(const struct field *fields, const cJSON *obj, const char *skip,
    struct record *rec, const char *what, struct so_err *err)
{
	const struct field *f;
	const cJSON *item;
	int rc;

	cJSON_ArrayForEach(item, obj) {
		if (skip != NULL && strcmp(item->string, skip) == 0)
			continue;
		for (f = fields; f->name != NULL; f++)
			if (strcmp(f->name, item->string) == 0)
				break;
		if (f->name == NULL)
			return so_error(err, SO_EPROTO, "%s: unknown field "
			    "\"%.40s\"", what, item->string);
	}
	for (f = fields; f->name != NULL; f++) {
		item = cJSON_GetObjectItemCaseSensitive(obj, f->name);
		if (item == NULL && (f->type == F_STR_OPT ||
		    f->type == F_INT_OPT || f->type == F_BOOL_OPT ||
		    f->type == F_METRICS))
			continue;
		if (item == NULL)
			return so_error(err, SO_EPROTO, "%s: missing field "
			    "\"%s\"", what, f->name);
		if ((rc = check_field(f, item, rec, what, err)) != 0)
			return rc;
	}
	return 0;
}

/*
 * A sample's counts and their source agree: counted samples ("pmu",
 * "test-seam") have both counts, "calibration" ones have neither.
 */
static int
check_counts(struct record *rec, struct so_err *err)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(rec->json,
	    PROTO_F_CYCLES);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(rec->json,
	    PROTO_F_INSTRUCTIONS);
	const char *src = rec->cycles_source;

	if (strcmp(src, PROTO_V_PMU) != 0 &&
	    strcmp(src, PROTO_V_TEST_SEAM) != 0 &&
	    strcmp(src, PROTO_V_CALIBRATION) != 0)
		return so_error(err, SO_EPROTO, "sample record: cycles_source "
		    "\"%.20s\" is not pmu, test-seam or calibration", src);
	rec->counted = strcmp(src, PROTO_V_CALIBRATION) != 0;
	if (cJSON_IsNull(c) == rec->counted || cJSON_IsNull(n) == rec->counted)
		return so_error(err, SO_EPROTO, "sample record: cycles_source "
		    "\"%s\" %s cycles and instructions", src, rec->counted ?
		    "needs" : "comes without");
	if (rec->counted && rec->cycles == 0)
		return so_error(err, SO_EPROTO, "sample record: counted "
		    "cycles must be above 0");
	return 0;
}

int
proto_parse(const char *line, size_t len, struct record *rec,
    struct so_err *err)
{
	const struct field *fields = NULL;
	const cJSON *type;
	const char *tname;
	char what[32];
	size_t i;
	int rc;

	memset(rec, 0, sizeof *rec);
	if (len > PROTO_MAX_LINE)
		return so_error(err, SO_EPROTO, "record longer than %d bytes",
		    PROTO_MAX_LINE);
	rec->json = cJSON_ParseWithLength(line, len);
	if (rec->json == NULL || !cJSON_IsObject(rec->json)) {
		rc = so_error(err, SO_EPROTO, "not a JSON object: \"%.60s\"",
		    line);
		goto fail;
	}
	type = cJSON_GetObjectItemCaseSensitive(rec->json, PROTO_F_TYPE);
	if (!cJSON_IsString(type)) {
		rc = so_error(err, SO_EPROTO, "record has no \"type\" string");
		goto fail;
	}
	tname = type->valuestring;
	for (i = 0; i < sizeof types / sizeof types[0]; i++) {
		if (strcmp(types[i].name, tname) == 0) {
			rec->type = types[i].type;
			fields = types[i].fields;
			tname = types[i].name;
		}
	}
	if (fields == NULL) {
		rc = so_error(err, SO_EPROTO, "unknown record type \"%.40s\"",
		    tname);
		goto fail;
	}
	/* The version first: another version's hello has other fields. */
	if (rec->type == REC_HELLO && as_int(cJSON_GetObjectItemCaseSensitive(
	    rec->json, PROTO_F_PROTO), &rec->proto) &&
	    rec->proto != SEQORCH_PROTO_VERSION) {
		rc = so_error(err, SO_EPROTO, "agent speaks protocol %lld, "
		    "this seqorch speaks %d", (long long)rec->proto,
		    SEQORCH_PROTO_VERSION);
		goto fail;
	}
	snprintf(what, sizeof what, "%s record", tname);
	if ((rc = check_object(fields, rec->json, PROTO_F_TYPE, rec, what,
	    err)) != 0)
		goto fail;
	if (rec->type == REC_VARIANT && strcmp(rec->status, PROTO_V_OK) != 0 &&
	    strcmp(rec->status, PROTO_V_SKIPPED) != 0 &&
	    strcmp(rec->status, PROTO_V_FAILED) != 0) {
		rc = so_error(err, SO_EPROTO, "variant record: status \"%.20s\" "
		    "is not ok, skipped or failed", rec->status);
		goto fail;
	}
	if (rec->type == REC_SAMPLE && (rc = check_counts(rec, err)) != 0)
		goto fail;
	if (rec->type == REC_PREFLIGHT &&
	    strcmp(rec->verdict, PROTO_V_QUIET) != 0 &&
	    strcmp(rec->verdict, PROTO_V_NOISY) != 0) {
		rc = so_error(err, SO_EPROTO, "preflight record: verdict "
		    "\"%.20s\" is not quiet or noisy", rec->verdict);
		goto fail;
	}
	if (rec->type == REC_WINDOW && strcmp(rec->phase, PROTO_V_BEGIN) != 0 &&
	    strcmp(rec->phase, PROTO_V_END) != 0) {
		rc = so_error(err, SO_EPROTO, "window record: phase \"%.20s\" "
		    "is not begin or end", rec->phase);
		goto fail;
	}
	return 0;
fail:
	cJSON_Delete(rec->json);
	memset(rec, 0, sizeof *rec);
	return rc;
}

void
proto_record_free(struct record *rec)
{
	cJSON_Delete(rec->json);
	memset(rec, 0, sizeof *rec);
}

int
proto_peek_type(const char *line, size_t len, enum rec_type *t)
{
	cJSON *j = len > PROTO_MAX_LINE ? NULL : cJSON_ParseWithLength(line,
	    len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, PROTO_F_TYPE);
	size_t i;
	int rc = -1;

	for (i = 0; cJSON_IsObject(j) && cJSON_IsString(type) &&
	    i < sizeof types / sizeof types[0]; i++)
		if (strcmp(types[i].name, type->valuestring) == 0) {
			*t = types[i].type;
			rc = 0;
		}
	cJSON_Delete(j);
	return rc;
}

int
line_feed(struct line_reader *r, const char *data, size_t n,
    int (*on_line)(void *arg, char *line, size_t len), void *arg,
    struct so_err *err)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (data[i] != '\n') {
			if (r->len == PROTO_MAX_LINE)
				return so_error(err, SO_EPROTO, "agent output "
				    "line %llu is longer than %d bytes",
				    (unsigned long long)r->lineno + 1,
				    PROTO_MAX_LINE);
			r->buf[r->len++] = data[i];
			continue;
		}
		r->buf[r->len] = '\0';
		r->lineno++;
		r->offset += r->len + 1;
		rc = on_line(arg, r->buf, r->len);
		r->len = 0;
		if (rc == SO_EPROTO || rc == SO_EPARSE || rc == SO_EINVAL) {
			char tmp[SO_ERR_MAX];

			if (strncmp(err->msg, "agent output line ", 18) != 0) {
				snprintf(tmp, sizeof tmp, "agent output line "
				    "%llu: %.*s", (unsigned long long)r->lineno,
				    (int)(sizeof tmp - 40), err->msg);
				memcpy(err->msg, tmp, sizeof tmp);
			}
		}
		if (rc != 0 && rc != SO_EAGENT)
			strip_ctrl(err->msg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * Unit tests for the records protocol version 2 added: window (with its
 * host-state object), wait, and the sample's reason.  Each malformed case
 * must be rejected with a message that names the field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define STATE "{\"at\":\"2026-11-30T02:00:58.851Z\",\"load1\":0.5," \
	"\"load5\":0.25,\"load15\":0.125,\"calib_mhz\":2623.5," \
	"\"governor\":\"performance\",\"freq_khz\":2600000,\"temp_c\":41.5," \
	"\"throttle_count\":0,\"busy_on_cpu\":[{\"pid\":42,\"comm\":\"cc1\"}]," \
	"\"runnable\":3}"
#define WINDOW "{\"type\":\"window\",\"phase\":\"begin\",\"state\":" STATE "}"
#define SAMPLE "{\"type\":\"sample\",\"study\":\"sha3\",\"variant\":\"c-fused\"," \
	"\"sample\":3,\"position\":0,\"order\":6,\"steps\":1000,\"ns\":12345," \
	"\"digest\":\"52cf48e88ce4dea40f272b6aaf083675ade26504a0129f51ec30204a2fdb1c5b\"," \
	"\"seed\":\"00\",\"calib_mhz\":3400.5,\"calib_after_mhz\":3390,\"cpu\":1,\"build_id\":\"7\"," \
	"\"cycles\":null,\"instructions\":null,\"cycles_source\":\"calibration\"," \
	"\"reason\":\"cv 1.84% > 1% after 3 samples\"}"
#define PREFLIGHT "{\"type\":\"preflight\",\"cpu\":5,\"cpu_choice\":null," \
	"\"verdict\":\"noisy\",\"reasons\":[\"load 3.01 on 2 cpus\"]," \
	"\"notes\":[\"governor unknown\",\"cpu 5 not in isolcpus (none)\"]}"

/* Replace the first occurrence of from in base with to. */
static char *
mutate(const char *base, const char *from, const char *to)
{
	const char *p = strstr(base, from);

	assert_non_null(p);
	return xasprintf("%.*s%s%s", (int)(p - base), base, to,
	    p + strlen(from));
}

/* The line must be rejected with msg in the error. */
static void
rejected(const char *line, const char *msg)
{
	struct record r;
	struct so_err err;

	err.msg[0] = '\0';
	if (proto_parse(line, strlen(line), &r, &err) != SO_EPROTO)
		fail_msg("accepted: %s", line);
	if (strstr(err.msg, msg) == NULL)
		fail_msg("\"%s\" lacks \"%s\"", err.msg, msg);
}

static void
test_window_ok(void **state)
{
	struct record r;
	struct so_err err;
	const cJSON *busy, *at;

	(void)state;
	assert_int_equal(proto_parse(WINDOW, strlen(WINDOW), &r, &err), 0);
	assert_int_equal(r.type, REC_WINDOW);
	assert_string_equal(proto_type_name(r.type), "window");
	assert_string_equal(r.phase, "begin");
	assert_non_null(r.state);
	at = cJSON_GetObjectItemCaseSensitive(r.state, "at");
	assert_string_equal(at->valuestring, "2026-11-30T02:00:58.851Z");
	busy = cJSON_GetObjectItemCaseSensitive(r.state, "busy_on_cpu");
	assert_int_equal(cJSON_GetArraySize(busy), 1);
	proto_record_free(&r);
}

/* What a host without /proc, /sys or a calibration loop sends. */
static void
test_window_all_null(void **state)
{
	static const char line[] = "{\"type\":\"window\",\"phase\":\"end\","
	    "\"state\":{\"at\":\"2026-11-30T02:00:59.533Z\",\"load1\":null,"
	    "\"load5\":null,\"load15\":null,\"calib_mhz\":null,"
	    "\"governor\":null,\"freq_khz\":null,\"temp_c\":-5,"
	    "\"throttle_count\":null,\"busy_on_cpu\":null,\"runnable\":null}}";
	struct record r;
	struct so_err err;

	(void)state;
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_string_equal(r.phase, "end");
	proto_record_free(&r);
}

static void
test_window_rejected(void **state)
{
	static const struct { const char *from, *to, *msg; } cases[] = {
		{ "\"begin\"", "\"middle\"",
		    "phase \"middle\" is not begin or end" },
		{ "\"phase\":\"begin\",", "", "missing field \"phase\"" },
		{ "\"begin\"", "1", "field \"phase\" must be a string" },
		{ "\"load1\":0.5", "\"load1\":\"0.5\"",
		    "state: field \"load1\" must be a non-negative number "
		    "or null" },
		{ "\"load1\":0.5", "\"load1\":-1", "field \"load1\"" },
		{ "\"calib_mhz\":2623.5", "\"calib_mhz\":true",
		    "field \"calib_mhz\"" },
		{ "\"governor\":\"performance\"", "\"governor\":5",
		    "state: field \"governor\" must be a string" },
		{ "\"freq_khz\":2600000", "\"freq_khz\":2.5",
		    "field \"freq_khz\" must be an integer >= 0 or null" },
		{ "\"temp_c\":41.5", "\"temp_c\":\"hot\"",
		    "field \"temp_c\" must be a number >= -273 or null" },
		{ "\"temp_c\":41.5", "\"temp_c\":-300", "field \"temp_c\"" },
		{ "\"throttle_count\":0", "\"throttle_count\":-1",
		    "field \"throttle_count\"" },
		{ "\"runnable\":3", "\"runnable\":[]", "field \"runnable\"" },
		{ ",\"runnable\":3", "", "state: missing field \"runnable\"" },
		{ "\"runnable\":3", "\"runnable\":3,\"fan\":1",
		    "state: unknown field \"fan\"" },
		{ "\"at\":\"2026-11-30T02:00:58.851Z\"", "\"at\":null",
		    "field \"at\" must be a string" },
		{ "\"at\":\"2026-11-30T02:00:58.851Z\"",
		    "\"at\":\"2026-11-30 02:00:58\"",
		    "field \"at\" must be a UTC time" },
		{ "58.851Z", "58.851Z+", "field \"at\" must be a UTC time" },
		{ STATE, "[]", "field \"state\" must be an object" },
		{ "[{\"pid\":42,\"comm\":\"cc1\"}]", "{}",
		    "field \"busy_on_cpu\" must be null or an array" },
		{ "[{\"pid\":42,\"comm\":\"cc1\"}]", "[7]",
		    "busy_on_cpu[0]: not an object" },
		{ "\"pid\":42", "\"pid\":\"42\"",
		    "busy_on_cpu[0]: field \"pid\" must be an integer >= 1" },
		{ "\"pid\":42", "\"pid\":0", "field \"pid\"" },
		{ "\"comm\":\"cc1\"", "\"comm\":null",
		    "busy_on_cpu[0]: field \"comm\" must be a string" },
		{ "\"comm\":\"cc1\"", "\"comm\":\"cc1\",\"uid\":0",
		    "busy_on_cpu[0]: unknown field \"uid\"" },
		{ ",\"comm\":\"cc1\"", "", "busy_on_cpu[0]: missing field "
		    "\"comm\"" },
		{ "\"comm\":\"cc1\"", "\"comm\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"", "longer than 64" },
		{ "\"phase\"", "\"phase\":\"begin\",\"extra\"",
		    "window record: unknown field \"extra\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *line = mutate(WINDOW, cases[i].from, cases[i].to);

		rejected(line, cases[i].msg);
		free(line);
	}
}

/* busy_on_cpu holds at most 16 entries: 16 pass, 17 do not. */
static void
test_window_busy_limit(void **state)
{
	const char *entry = "{\"pid\":9,\"comm\":\"spin\"}";
	char list[1024] = "";
	char *line;
	struct record r;
	struct so_err err;
	int i;

	(void)state;
	for (i = 0; i < 16; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list),
		    "%s%s", i ? "," : "", entry);
	line = mutate(WINDOW, "{\"pid\":42,\"comm\":\"cc1\"}", list);
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	proto_record_free(&r);
	free(line);
	snprintf(list + strlen(list), sizeof list - strlen(list), ",%s",
	    entry);
	line = mutate(WINDOW, "{\"pid\":42,\"comm\":\"cc1\"}", list);
	rejected(line, "must be null or an array of at most 16 objects");
	free(line);
}

static void
test_wait(void **state)
{
	static const char line[] = "{\"type\":\"wait\",\"holder\":"
	    "\"seqorch pid 4242 on genoa, run 7\"}";
	struct record r;
	struct so_err err;

	(void)state;
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.type, REC_WAIT);
	assert_string_equal(proto_type_name(r.type), "wait");
	assert_string_equal(r.holder, "seqorch pid 4242 on genoa, run 7");
	proto_record_free(&r);
	rejected("{\"type\":\"wait\"}", "wait record: missing field "
	    "\"holder\"");
	rejected("{\"type\":\"wait\",\"holder\":null}", "field \"holder\" "
	    "must be a string");
	rejected("{\"type\":\"wait\",\"holder\":\"x\",\"since\":1}",
	    "unknown field \"since\"");
}

static void
test_sample_reason(void **state)
{
	struct record r;
	struct so_err err;
	char *line;

	(void)state;
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_string_equal(r.reason, "cv 1.84% > 1% after 3 samples");
	assert_int_equal(r.sample, 3);
	proto_record_free(&r);

	line = mutate(SAMPLE, "\"cv 1.84% > 1% after 3 samples\"", "null");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_null(r.reason);
	proto_record_free(&r);
	free(line);

	/* Version 2 requires the field; version 1 samples lack it. */
	line = mutate(SAMPLE, ",\"reason\":\"cv 1.84% > 1% after 3 samples\"",
	    "");
	rejected(line, "sample record: missing field \"reason\"");
	free(line);
	line = mutate(SAMPLE, "\"cv 1.84% > 1% after 3 samples\"", "3");
	rejected(line, "field \"reason\" must be a string");
	free(line);
}

/* An older agent is refused by name, not by its first odd record. */
static void
test_version(void **state)
{
	static const char hello[] = "{\"type\":\"hello\",\"proto\":%d,"
	    "\"agent\":\"x\",\"build_id\":\"\",\"token\":\"ab\","
	    "\"study\":\"sha3\",\"steps\":1,\"samples\":1}";
	char line[256];
	struct record r;
	struct so_err err;

	(void)state;
	assert_int_equal(SEQORCH_PROTO_VERSION, 13);
	snprintf(line, sizeof line, hello, 13);
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_string_equal(r.token, "ab");
	proto_record_free(&r);
	snprintf(line, sizeof line, hello, 12);
	rejected(line, "agent speaks protocol 12, this seqorch speaks 13");
}

/* Version 10: msg_len, with --msg-len only; absent is the own chain (0). */
static void
test_sample_msg_len(void **state)
{
	struct record r;
	struct so_err err;
	char *line;

	(void)state;
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_int_equal(r.msg_len, 0);
	proto_record_free(&r);
	line = mutate(SAMPLE, "\"ns\":", "\"msg_len\":576,\"ns\":");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.msg_len, 576);
	proto_record_free(&r);
	free(line);
	line = mutate(SAMPLE, "\"ns\":", "\"msg_len\":0,\"ns\":");
	rejected(line, "field \"msg_len\" must be an integer >= 1");
	free(line);
	line = mutate(SAMPLE, "\"ns\":", "\"msg_len\":\"576\",\"ns\":");
	rejected(line, "field \"msg_len\" must be an integer");
	free(line);
}

/* Version 11: warmup, true on --warmup's samples; absent is false. */
static void
test_sample_warmup(void **state)
{
	struct record r;
	struct so_err err;
	char *line;

	(void)state;
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_int_equal(r.warmup, 0);
	proto_record_free(&r);
	line = mutate(SAMPLE, "\"ns\":", "\"warmup\":true,\"ns\":");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.warmup, 1);
	proto_record_free(&r);
	free(line);
	line = mutate(SAMPLE, "\"ns\":", "\"warmup\":false,\"ns\":");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.warmup, 0);
	proto_record_free(&r);
	free(line);
	line = mutate(SAMPLE, "\"ns\":", "\"warmup\":1,\"ns\":");
	rejected(line, "field \"warmup\" must be true or false");
	free(line);
}

/*
 * Protocol 7: a sample's place in the host's whole order is required,
 * and a conductor's build record names the build whose records follow.
 */
static void
test_order_and_build(void **state)
{
	struct record r;
	struct so_err err;
	char line[2048];
	const char *p = strstr(SAMPLE, "\"order\":6,");

	(void)state;
	assert_non_null(p);
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_int_equal(r.order, 6);
	proto_record_free(&r);
	snprintf(line, sizeof line, "%.*s%s", (int)(p - SAMPLE), SAMPLE,
	    p + strlen("\"order\":6,"));
	rejected(line, "order");
	snprintf(line, sizeof line, "%.*s\"order\":-1,%s", (int)(p - SAMPLE),
	    SAMPLE, p + strlen("\"order\":6,"));
	rejected(line, "order");
	snprintf(line, sizeof line, "{\"type\":\"build\",\"build_id\":\"12\"}");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.type, REC_BUILD);
	assert_string_equal(r.build_id, "12");
	proto_record_free(&r);
	rejected("{\"type\":\"build\",\"build_id\":12}", "build_id");
	rejected("{\"type\":\"build\"}", "build_id");
}

/* A sample's named metrics (protocol 5): optional, bounded, checked. */
static void
test_sample_metrics(void **state)
{
	static const char *const bad[][2] = {
		{ "[1]", "field \"metrics\" must be an object" },
		{ "{\"Phase\":1}", "metric name \"Phase\": expected" },
		{ "{\"\":1}", "metric name \"\": expected" },
		{ "{\"phase_x\":\"1\"}", "metric \"phase_x\" must be a finite" },
		{ "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,"
		    "\"g\":7,\"h\":8,\"i\":9,\"j\":10,\"k\":11,\"l\":12,"
		    "\"m\":13,\"n\":14,\"o\":15,\"p\":16,\"q\":17}",
		    "more than 16 metrics" },
	};
	struct record r;
	struct so_err err;
	char *line;
	size_t i;

	(void)state;
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_int_equal(r.nmetrics, 0);
	proto_record_free(&r);
	line = mutate(SAMPLE, "}", ",\"metrics\":{\"phase_execute\":9000,"
	    "\"phase_other\":-3.5}}");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.nmetrics, 2);
	assert_string_equal(r.metric_name[0], "phase_execute");
	assert_true(r.metric_value[0] == 9000);
	assert_string_equal(r.metric_name[1], "phase_other");
	assert_true(r.metric_value[1] == -3.5);
	proto_record_free(&r);
	free(line);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *m = xasprintf(",\"metrics\":%s}", bad[i][0]);

		line = mutate(SAMPLE, "}", m);
		rejected(line, bad[i][1]);
		free(line);
		free(m);
	}
}

/* A variant's optional warning (protocol 5), kept in the record. */
static void
test_variant_warning(void **state)
{
	static const char base[] = "{\"type\":\"variant\",\"study\":"
	    "\"randomx\",\"variant\":\"light\",\"status\":\"ok\","
	    "\"reason\":null}";
	struct record r;
	struct so_err err;
	char *line;

	(void)state;
	assert_int_equal(proto_parse(base, strlen(base), &r, &err), 0);
	assert_null(r.warning);
	proto_record_free(&r);
	line = mutate(base, "}", ",\"warning\":\"selects software AES on a "
	    "CPU with hardware AES\"}");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_string_equal(r.warning, "selects software AES on a CPU with "
	    "hardware AES");
	proto_record_free(&r);
	free(line);
	line = mutate(base, "}", ",\"warning\":null}");
	rejected(line, "field \"warning\" must be a string");
	free(line);
}

/* Counted samples carry both counts; calibrated ones neither. */
static void
test_sample_counts(void **state)
{
	struct record r;
	struct so_err err;
	char *line;

	(void)state;
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_int_equal(r.counted, 0);
	assert_string_equal(r.cycles_source, "calibration");
	proto_record_free(&r);

	line = mutate(SAMPLE, "\"cycles\":null,\"instructions\":null,"
	    "\"cycles_source\":\"calibration\"", "\"cycles\":24500000,"
	    "\"instructions\":81000000,\"cycles_source\":\"pmu\"");
	assert_int_equal(proto_parse(line, strlen(line), &r, &err), 0);
	assert_int_equal(r.counted, 1);
	assert_int_equal(r.cycles, 24500000);
	assert_int_equal(r.instructions, 81000000);
	assert_string_equal(r.cycles_source, "pmu");
	proto_record_free(&r);
	free(line);

	line = mutate(SAMPLE, "\"cycles\":null", "\"cycles\":100");
	rejected(line, "cycles_source \"calibration\" comes without cycles "
	    "and instructions");
	free(line);
	line = mutate(SAMPLE, "\"calibration\"", "\"pmu\"");
	rejected(line, "cycles_source \"pmu\" needs cycles and instructions");
	free(line);
	line = mutate(SAMPLE, "\"calibration\"", "\"guess\"");
	rejected(line, "cycles_source \"guess\" is not pmu, test-seam or "
	    "calibration");
	free(line);
	line = mutate(SAMPLE, "\"cycles\":null,\"instructions\":null,"
	    "\"cycles_source\":\"calibration\"", "\"cycles\":0,"
	    "\"instructions\":0,\"cycles_source\":\"test-seam\"");
	rejected(line, "counted cycles must be above 0");
	free(line);
	line = mutate(SAMPLE, ",\"cycles_source\":\"calibration\"", "");
	rejected(line, "missing field \"cycles_source\"");
	free(line);
}

static void
test_preflight(void **state)
{
	struct record r;
	struct so_err err;
	char *line, many[4096];
	size_t n, i;

	(void)state;
	assert_int_equal(proto_parse(PREFLIGHT, strlen(PREFLIGHT), &r, &err),
	    0);
	assert_int_equal(r.type, REC_PREFLIGHT);
	assert_string_equal(proto_type_name(r.type), "preflight");
	assert_string_equal(r.verdict, "noisy");
	proto_record_free(&r);

	line = mutate(PREFLIGHT, "\"noisy\"", "\"calm\"");
	rejected(line, "verdict \"calm\" is not quiet or noisy");
	free(line);
	line = mutate(PREFLIGHT, "[\"load 3.01 on 2 cpus\"]", "[3]");
	rejected(line, "reasons[0] must be a string");
	free(line);
	line = mutate(PREFLIGHT, ",\"notes\":[\"governor unknown\","
	    "\"cpu 5 not in isolcpus (none)\"]", "");
	rejected(line, "missing field \"notes\"");
	free(line);
	n = (size_t)snprintf(many, sizeof many, "[");
	for (i = 0; i < 33; i++)
		n += (size_t)snprintf(many + n, sizeof many - n, "%s\"r%zu\"",
		    i ? "," : "", i);
	snprintf(many + n, sizeof many - n, "]");
	line = mutate(PREFLIGHT, "[\"load 3.01 on 2 cpus\"]", many);
	rejected(line, "field \"reasons\" must be an array of at most 32 "
	    "strings");
	free(line);
}

/*
 * A refused build's relayed lines are only typed (runner-collect.c): a
 * sample that proto_parse refuses is still a sample, a build record
 * still switches, and what is not an object with a known type is none.
 */
static void
test_peek_type(void **state)
{
	static const char *none[] = { "", "not json", "[\"sample\"]",
	    "{\"type\":\"bogus\"}", "{\"type\":7}", "{\"kind\":\"sample\"}",
	    "{\"type\":\"sample\"" };
	char *line = mutate(SAMPLE, "\"ns\":12345", "\"ns\":-1");
	enum rec_type t;
	size_t i;

	(void)state;
	rejected(line, "field \"ns\" must be an integer >= 1");
	assert_int_equal(proto_peek_type(line, strlen(line), &t), 0);
	assert_int_equal(t, REC_SAMPLE);
	free(line);
	line = "{\"type\":\"build\",\"build_id\":\"\"}";
	assert_int_equal(proto_peek_type(line, strlen(line), &t), 0);
	assert_int_equal(t, REC_BUILD);
	for (i = 0; i < sizeof none / sizeof none[0]; i++)
		assert_int_equal(proto_peek_type(none[i], strlen(none[i]), &t),
		    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peek_type),
		cmocka_unit_test(test_window_ok),
		cmocka_unit_test(test_window_all_null),
		cmocka_unit_test(test_window_rejected),
		cmocka_unit_test(test_window_busy_limit),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_sample_reason),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_sample_msg_len),
		cmocka_unit_test(test_sample_warmup),
		cmocka_unit_test(test_order_and_build),
		cmocka_unit_test(test_sample_counts),
		cmocka_unit_test(test_preflight),
		cmocka_unit_test(test_sample_metrics),
		cmocka_unit_test(test_variant_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The agent's modules that need no host: agent/opts.c (the command line,
 * whose refusals come back as values with their messages, the agent
 * still running) and agent/spread.c (the --max-cv statistics, against
 * the mean and sample variance computed directly) and agent/jsonl.c (its
 * records' text and the bounded reader's refusals) and agent/sha256.c
 * (against OpenSSL's SHA-256) and agent/macfacts.c (the macOS facts'
 * wording, over sysctl values a Mac printed and IOKit's power states)
 * and agent/osslcap.c (--openssl-cap-clear's masks, over the masks
 * OpenSSL 3.0 and 3.5 print).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "../../agent/jsonl.h"
#include "../../agent/macfacts.h"
#include "../../agent/opts.h"
#include "../../agent/osslcap.h"
#include "../../agent/sha256.h"
#include "../../agent/spread.h"
#include "../../agent/timing.h"

/* Parse the NULL-terminated words after "seqorch-agent", from scratch. */
static enum opts_result
parse(struct opts *o, char *err, size_t len, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = "seqorch-agent";
	va_start(ap, len);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	optind = 0;		/* GNU getopt: start over */
	opterr = 0;
	return opts_parse(argc, argv, o, err, len);
}

static void
test_defaults(void **state)
{
	struct opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--seed", "0aFf", "--cpu", "auto", "--order", "reverse", NULL),
	    OPTS_OK);
	assert_string_equal(o.study, "sha3");
	assert_int_equal(o.samples, 3);
	assert_int_equal(o.steps, 0);
	assert_int_equal(o.cpu, CPU_AUTO);
	assert_int_equal(o.reverse, 1);
	assert_string_equal(o.build_id, "");
	assert_string_equal(o.token, "");
	assert_true(o.have_seed && o.seed_len == 2 && o.seed[0] == 0x0a &&
	    o.seed[1] == 0xff);
	assert_string_equal(err, "");
}

static void
test_refusals(void **state)
{
	static const struct {
		const char *a[6];
		const char *msg;
	} cases[] = {
		{ { "--steps", "0", "--study", "x" },
		    "invalid --steps \"0\": expected an integer from 1 to "
		    "1000000000000" },
		{ { "--max-cv", "2", "--study", "x" },
		    "invalid --max-cv \"2\": expected a fraction above 0 and at "
		    "most 1 (0.01 is 1%)" },
		{ { "--cpu", "-3", "--study", "x" },
		    "invalid --cpu \"-3\": expected an integer from 0 to 65535" },
		{ { "--seed", "abc", "--study", "x" },
		    "invalid --seed: expected at most 64 bytes of hex" },
		{ { "--token", "AB", "--study", "x" },
		    "invalid --token: expected 1 to 64 lowercase hex digits" },
		{ { "--holder", "a\tb", "--lock", "l", "--study", "x" },
		    "invalid --holder: control character at byte 1" },
		{ { "--order", "up", "--study", "x" },
		    "invalid --order \"up\": expected rotate or reverse" },
		{ { "--samples", "2" }, "--study is required" },
		{ { "--study", "x", "extra" }, "unexpected argument \"extra\"" },
		{ { "--study", "x", "--max-cv", "0.1" },
		    "--max-cv and --max-samples go together" },
		{ { "--study", "x", "--serve", "--conduct" },
		    "--serve and --conduct exclude each other" },
		{ { "--study", "x", "--lock", "l" },
		    "--lock and --holder go together" },
		{ { "--study", "x", "--no-wait" }, "--no-wait needs --lock" },
	};
	struct opts o;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *const *a = cases[i].a;

		assert_int_equal(parse(&o, err, sizeof err, a[0], a[1], a[2],
		    a[3], a[4], a[5], NULL), OPTS_ERROR);
		assert_string_equal(err, cases[i].msg);
	}
	/* A short buffer is cut, still terminated. */
	assert_int_equal(parse(&o, err, 8, "--samples", "2", NULL),
	    OPTS_ERROR);
	assert_string_equal(err, "--study");
}

static void
test_help_and_unknown(void **state)
{
	struct opts o;
	char err[64];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof err, "--study", "x", "--help",
	    "--steps", "0", NULL), OPTS_HELP);
	assert_int_equal(parse(&o, err, sizeof err, "--bogus", NULL),
	    OPTS_USAGE);
	/* No study needed for these. */
	assert_int_equal(parse(&o, err, sizeof err, "--list", NULL), OPTS_OK);
	assert_int_equal(o.list, 1);
}

static void
test_builds(void **state)
{
	char *argv[2 + 2 * (MAX_BUILDS + 1) + 2];
	struct opts o;
	char err[128];
	int argc = 0, i;

	(void)state;
	argv[argc++] = "seqorch-agent";
	argv[argc++] = "--conduct";
	for (i = 0; i <= MAX_BUILDS; i++) {
		argv[argc++] = "--build";
		argv[argc++] = "id:sum:path";
	}
	argv[argc++] = "--study";
	argv[argc++] = "x";
	optind = 0;
	opterr = 0;
	assert_int_equal(opts_parse(argc, argv, &o, err, sizeof err),
	    OPTS_ERROR);
	assert_string_equal(err, "more than 16 --build");
	/* One fewer (the last --build's place taken by --study) is kept. */
	argv[argc - 4] = "--study";
	argv[argc - 3] = "x";
	optind = 0;
	assert_int_equal(opts_parse(argc - 2, argv, &o, err, sizeof err),
	    OPTS_OK);
	assert_int_equal(o.nbuilds, MAX_BUILDS);
	assert_int_equal(o.conduct, 1);
}

/*
 * --stored-spread and --extra-from (a resumed --max-cv run): the numbers
 * come back as the coordinator printed them (%.17g), and anything else
 * is refused with the option's form.
 */
static void
test_stored_spread(void **state)
{
	static const char *const bad_stored[] = {
		"c-fused", "c-fused:3", "c-fused:3:1e6", "c-fused:3:1e6:5:",
		"c-fused:3:1e6:5:7", ":3:1e6:5", "c fused:3:1e6:5",
		"c-fused:0:1e6:5", "c-fused:100001:1e6:5", "c-fused:-3:1e6:5",
		"c-fused:3:0:5", "c-fused:3:-1:5", "c-fused:3:inf:5",
		"c-fused:3:nan:5", "c-fused:3:0x10:5", "c-fused:3: 1e6:5",
		"c-fused:3:1e6:-5", "c-fused:3:1e6:1e999", "c-fused:1:1e6:2",
		"c-fused::1e6:5", "c-fused:3:1e6:5x",
		"a-name-of-sixty-four-bytes-which-is-one-byte-too-long-for-it-xxx"
		    ":3:1e6:5",
	};
	char mean[64], m2[64], arg[160], arg2[160], err[512];
	double mv = 1234567.0 / 3, m2v = 98765.4321e7;
	struct opts o;
	size_t i;

	(void)state;
	snprintf(mean, sizeof mean, "%.17g", mv);
	snprintf(m2, sizeof m2, "%.17g", m2v);
	snprintf(arg, sizeof arg, "c-fused:7:%s:%s", mean, m2);
	snprintf(arg2, sizeof arg2, "openssl-evp:1:%s:0", mean);
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--samples", "0", "--max-cv", "0.01", "--max-samples", "9",
	    "--stored-spread", arg, "--stored-spread", arg2, "--extra-from",
	    "12:345", NULL), OPTS_OK);
	assert_int_equal(o.nstored, 2);
	assert_string_equal(o.stored[0].variant, "c-fused");
	assert_int_equal(o.stored[0].n, 7);
	assert_true(o.stored[0].mean == mv && o.stored[0].m2 == m2v);
	assert_string_equal(o.stored[1].variant, "openssl-evp");
	assert_true(o.stored[1].n == 1 && o.stored[1].m2 == 0);
	assert_true(o.extra_from && o.extra_first == 12 &&
	    o.extra_order == 345);
	assert_int_equal(o.samples, 0);

	for (i = 0; i < sizeof bad_stored / sizeof bad_stored[0]; i++) {
		char want[512];

		snprintf(want, sizeof want, "invalid --stored-spread \"%s\": "
		    "expected [BUILD:]VARIANT:N:MEAN:M2 (N from 1 to 100000 "
		    "samples, their mean ns above 0, their sum of squared "
		    "deviations from it, 0 for one sample)", bad_stored[i]);
		assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
		    "--max-cv", "0.01", "--max-samples", "9",
		    "--stored-spread", bad_stored[i], NULL), OPTS_ERROR);
		assert_string_equal(err, want);
	}
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--max-cv", "0.01", "--max-samples", "9", "--stored-spread",
	    "c-fused:2:5:1", "--stored-spread", "c-fused:2:5:1", NULL),
	    OPTS_ERROR);
	assert_string_equal(err, "--stored-spread of variant \"c-fused\" "
	    "given twice");
	/* A conductor's name their build; a plain agent's do not. */
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--conduct", "--build", "7:s:p", "--max-cv", "0.01",
	    "--max-samples", "9", "--stored-spread", "7:c-fused:2:5:1",
	    "--stored-spread", "8:c-fused:2:5:1", NULL), OPTS_OK);
	assert_string_equal(o.stored[1].build, "8");
	assert_string_equal(o.stored[1].variant, "c-fused");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--conduct", "--build", "7:s:p", "--max-cv", "0.01",
	    "--max-samples", "9", "--stored-spread", "c-fused:2:5:1", NULL),
	    OPTS_ERROR);
	assert_string_equal(err, "--stored-spread \"c-fused\": a conductor's "
	    "name the build, BUILD:VARIANT:N:MEAN:M2");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--max-cv", "0.01", "--max-samples", "9", "--stored-spread",
	    "7:c-fused:2:5:1", NULL), OPTS_ERROR);
	assert_string_equal(err, "--stored-spread \"7:c-fused\": only a "
	    "conductor's name a build");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--serve", "--max-cv", "0.01", "--max-samples", "9", NULL),
	    OPTS_ERROR);
	assert_string_equal(err, "--serve takes no --max-cv: its conductor "
	    "decides the extra rounds");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--stored-spread", "c-fused:2:5:1", NULL), OPTS_ERROR);
	assert_string_equal(err, "--stored-spread and --extra-from need "
	    "--max-cv");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--extra-from", "3:0", NULL), OPTS_ERROR);
	assert_string_equal(err, "--stored-spread and --extra-from need "
	    "--max-cv");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--samples", "0", NULL), OPTS_ERROR);
	assert_string_equal(err, "--samples 0 needs --extra-from (extra "
	    "rounds alone)");
	assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
	    "--first-sample", "2", "--samples", "3", "--max-cv", "0.01",
	    "--max-samples", "9", "--extra-from", "4:0", NULL), OPTS_ERROR);
	assert_string_equal(err, "--extra-from 4 is below --first-sample + "
	    "--samples (5): extra rounds follow the planned ones");
	for (i = 0; i < 6; i++) {
		static const char *const bad_extra[] = { "3", "3:", ":3",
		    "3:4:5", "-1:4", "2000000001:4" };
		char want[256];

		snprintf(want, sizeof want, "invalid --extra-from \"%s\": "
		    "expected INDEX:ORDER (an index from 0 to 2000000000, a "
		    "place from 0 to 1000000000000)", bad_extra[i]);
		assert_int_equal(parse(&o, err, sizeof err, "--study", "sha3",
		    "--max-cv", "0.01", "--max-samples", "9", "--extra-from",
		    bad_extra[i], NULL), OPTS_ERROR);
		assert_string_equal(err, want);
	}
}

static void
test_spread(void **state)
{
	static const double x[] = { 100, 110, 90, 105, 95 };
	struct spread s = { 0, 0, 0 };
	char why[128];
	double mean = 100, var = (0 + 100 + 100 + 25 + 25) / 4.0;
	size_t i;

	(void)state;
	assert_int_equal(spread_too_wide(&s, 0.5, why, sizeof why), 1);
	assert_string_equal(why, "cv unknown after 0 sample");
	for (i = 0; i < 5; i++)
		spread_add(&s, x[i]);
	assert_int_equal(s.n, 5);
	assert_true(s.mean > mean - 1e-9 && s.mean < mean + 1e-9);
	assert_true(s.m2 / 4 > var - 1e-9 && s.m2 / 4 < var + 1e-9);
	/* cv = sqrt(62.5) / 100 = 7.9% */
	assert_int_equal(spread_too_wide(&s, 0.08, why, sizeof why), 0);
	assert_int_equal(spread_too_wide(&s, 0.05, why, sizeof why), 1);
	assert_string_equal(why, "cv 7.91% > 5% after 5 samples");
}

/* One record with every kind of value, and the writer's bounds. */
static void
test_jsonl_write(void **state)
{
	const char *why = NULL, *t;
	struct jsonl *j;
	int i;

	(void)state;
	assert_non_null(j = jsonl_new("t"));
	jsonl_str(j, "s", "a\"\\\n\x01\x7f");
	jsonl_str(j, "z", NULL);
	jsonl_num(j, "i", 12345678901234.0);
	jsonl_num(j, "n", -3.0);
	jsonl_num(j, "big", 1e15);
	jsonl_num(j, "f", 0.1);
	jsonl_num(j, "nan", 0.0 / 0.0);
	jsonl_u64(j, "u", UINT64_MAX);
	jsonl_int(j, "m", -5);
	jsonl_bool(j, "b", 1);
	jsonl_null(j, "x");
	jsonl_open(j, "a", '[');
	jsonl_int(j, NULL, 1);
	jsonl_open(j, NULL, '{');
	jsonl_bool(j, "k", 0);
	/* left open: jsonl_finish closes the object, the array, the record */
	assert_non_null(t = jsonl_finish(j, &why));
	assert_string_equal(t, "{\"type\":\"t\",\"s\":\"a\\\"\\\\\\n"
	    "\\u0001\\u007f\",\"z\":null,\"i\":12345678901234,\"n\":-3,"
	    "\"big\":1e+15,\"f\":0.1,\"nan\":null,"
	    "\"u\":18446744073709551615,\"m\":-5,\"b\":true,\"x\":null,"
	    "\"a\":[1,{\"k\":false}]}");
	jsonl_free(j);

	assert_non_null(j = jsonl_new("deep"));
	for (i = 0; i < JSONL_DEPTH; i++)
		jsonl_open(j, "o", '{');
	assert_null(jsonl_finish(j, &why));
	assert_string_equal(why, "record nested too deep");
	jsonl_free(j);

	assert_non_null(j = jsonl_new("long"));
	for (i = 0; i < JSONL_MAX / 8; i++)
		jsonl_str(j, "k", "v");
	assert_null(jsonl_finish(j, &why));
	assert_string_equal(why, "record longer than the protocol's bound");
	jsonl_free(j);
}

/* Read one line for the fields "a" (8 bytes) and "b"; 0 or -1. */
static int
rd(const char *line, char *a, char *b, int found[2], char *why)
{
	struct jsonl_field f[] = { { "a", a, 8, 0, 0 },
	    { "b", b, 8, 0, 0 } };
	int rc = jsonl_read(line, strlen(line), f, 2, why, 128);

	found[0] = f[0].found;
	found[1] = f[1].found;
	return rc;
}

static void
test_jsonl_read(void **state)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "[1]", "not a JSON object at byte 0" },
		{ "{\"a\":1} x", "text after the record at byte 8" },
		{ "{\"a\":\"x", "unterminated string at byte 7" },
		{ "{\"a\":\"\\ud800\"}", "lone surrogate at byte 12" },
		{ "{\"a\":\"\\q\"}", "invalid escape at byte 7" },
		{ "{\"a\":\"\\u0000\"}", "NUL in a string at byte 12" },
		{ "{\"a\":\"\\u001b[31m\"}", "control character 0x1b in a "
		    "string at byte 12" },
		{ "{\"a\":\"x\x7f\"}", "control character 0x7f in a string at "
		    "byte 8" },
		{ "{\"a\":01}", "expected ',' or '}' at byte 6" },
		{ "{\"a\":1.}", "invalid number at byte 5" },
		{ "{\"a\":tru}", "invalid value at byte 5" },
		{ "{\"a\" 1}", "expected ':' at byte 5" },
		{ "{1:2}", "expected a field name at byte 1" },
		{ "{\"a\":[1 2]}", "expected ',' or ']' at byte 8" },
		{ "{\"a\":[[[[[[[[1]]]]]]]]}", "nested deeper than 8 at byte 12" },
	};
	char a[8], b[8], why[128];
	int found[2];
	size_t i;

	(void)state;
	assert_int_equal(rd(" {\"x\":{\"a\":\"inner\"},\"a\":\"\\u00e9\\ud83d"
	    "\\ude00\",\"b\":[true,false,null,-1.5e3]} ", a, b, found, why), 0);
	assert_int_equal(found[0], 1);
	assert_string_equal(a, "\xc3\xa9\xf0\x9f\x98\x80");
	assert_int_equal(found[1], 0);

	assert_int_equal(rd("{\"a\":\"12345678\",\"b\":\"1234567\"}", a, b,
	    found, why), 0);
	assert_int_equal(found[0], -1);
	assert_int_equal(found[1], 1);
	assert_string_equal(b, "1234567");

	assert_int_equal(rd("{\"a\":[[[[[[1]]]]]]}", a, b, found, why), 0);

	/* A number field: its text; a string there is not it, nor it one. */
	{
		struct jsonl_field nf[] = { { "ns", a, 8, 0, 1 },
		    { "b", b, 8, 0, 0 } };

		assert_int_equal(jsonl_read("{\"ns\":-1.5e3,\"b\":2}", 19,
		    nf, 2, why, sizeof why), 0);
		assert_int_equal(nf[0].found, 1);
		assert_string_equal(a, "-1.5e3");
		assert_int_equal(nf[1].found, 0);
		assert_int_equal(jsonl_read("{\"ns\":\"12\"}", 11, nf, 2, why,
		    sizeof why), 0);
		assert_int_equal(nf[0].found, 0);
		assert_int_equal(jsonl_read("{\"ns\":123456789}", 16, nf, 2,
		    why, sizeof why), 0);
		assert_int_equal(nf[0].found, -1);
	}

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		assert_int_equal(rd(bad[i].line, a, b, found, why), -1);
		assert_string_equal(why, bad[i].why);
	}

	assert_int_equal(jsonl_read("{\"a\":1}\0", 9, NULL, 0, why,
	    sizeof why), -1);
	assert_string_equal(why, "NUL byte at byte 7");
}

/* An offending line in an error: escaped, at most max bytes. */
static void
test_jsonl_excerpt(void **state)
{
	char ex[4 * 8 + 1];

	(void)state;
	jsonl_excerpt("a\\\x1b[1\0b", 7, 8, ex);
	assert_string_equal(ex, "a\\\\\\x1b[1\\x00b");
	jsonl_excerpt("abcdefghij", 10, 8, ex);
	assert_string_equal(ex, "abcdefgh");
	jsonl_excerpt("\xff\xff\xff", 3, 8, ex);
	assert_string_equal(ex, "\\xff\\xff\\xff");
}

/*
 * A sample's raw clock against the thread's cpu time and its wait for a
 * cpu: a crowded cpu (51.9 s for 3.9 s of cpu, 47.9 s waited, seen at load
 * 15 on 2 cpus) is no jump; hours no one ran or waited, or a clock gone
 * back, or more cpu than time, are.
 */
static void
test_clock_jumps(void **state)
{
	const uint64_t s = 1000000000u;
	uint64_t a, b;
	char why[160];

	(void)state;
	assert_int_equal(timing_jumped(s, s + 51850000000u, 3943000000u,
	    47900000000u, why, sizeof why), 0);
	assert_int_equal(timing_jumped(s, s + 51850000000u, 3943000000u, 0,
	    why, sizeof why), 1);
	assert_string_equal(why, "it advanced 51.850 s while the thread ran "
	    "only 3.943 s of cpu and waited 0.000 s for one (or the agent was "
	    "stopped)");
	assert_int_equal(timing_jumped(s, s + 7200 * s, s / 4, s / 100, why,
	    sizeof why), 1);
	assert_int_equal(timing_jumped(3 * s, s, 0, 0, why, sizeof why), 1);
	assert_string_equal(why, "it went back 2.000 s");
	/* More cpu than time, beyond 1% and 1 ms of slack. */
	assert_int_equal(timing_jumped(s, s + 66000, 1372000, 0, why,
	    sizeof why), 1);
	assert_int_equal(timing_jumped(s, s + 66000, 1000000, 0, why,
	    sizeof why), 0);
	/* This thread's own wait, where Linux says it, only grows. */
	if (timing_thread_wait_ns(&a) == 0) {
		assert_int_equal(timing_thread_wait_ns(&b), 0);
		assert_true(b >= a);
	}
}

/* Files of lengths around the padding's edges and over many blocks. */
static void
test_sha256_file(void **state)
{
	static const size_t lens[] = { 0, 3, 55, 56, 63, 64, 65, 100003 };
	char path[] = "/tmp/seqorch-test-sha256-XXXXXX", sum[65], want[65];
	unsigned char *buf, md[SHA256_DIGEST_LENGTH];
	size_t i, k;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(buf = malloc(100003));
	for (k = 0; k < 100003; k++)
		buf[k] = (unsigned char)(k * 131 + 7);
	assert_true((fd = mkstemp(path)) >= 0);
	close(fd);
	for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		assert_non_null(f = fopen(path, "wb"));
		assert_int_equal(fwrite(buf, 1, lens[i], f), lens[i]);
		assert_int_equal(fclose(f), 0);
		SHA256(buf, lens[i], md);
		for (k = 0; k < sizeof md; k++)
			snprintf(want + 2 * k, 3, "%02x", md[k]);
		assert_int_equal(sha256_file(path, sum), 0);
		assert_string_equal(sum, want);
	}
	unlink(path);
	free(buf);
	assert_int_equal(sha256_file(path, sum), -1);
}

/*
 * An Apple chip's FEAT_* sysctls, 1 or 0, in the shape published listings
 * of `sysctl hw.optional.arm` have (the M4's differences from the M1/M2
 * included: SME, SME2 and WFxT set, SSBS clear); a name missing here
 * does not exist on that system (SVE, on every Apple chip so far).
 */
static const struct { const char *name; int v; } m4[] = {
	{ "FEAT_AES", 1 }, { "FEAT_AFP", 1 }, { "FEAT_BF16", 1 },
	{ "FEAT_BTI", 1 }, { "FEAT_CSV2", 1 }, { "FEAT_CSV3", 1 },
	{ "FEAT_DIT", 1 }, { "FEAT_DPB", 1 }, { "FEAT_DPB2", 1 },
	{ "FEAT_DotProd", 1 }, { "FEAT_ECV", 1 }, { "FEAT_FCMA", 1 },
	{ "FEAT_FHM", 1 }, { "FEAT_FP16", 1 }, { "FEAT_FPAC", 1 },
	{ "FEAT_FRINTTS", 1 }, { "FEAT_FlagM", 1 }, { "FEAT_FlagM2", 1 },
	{ "FEAT_I8MM", 1 }, { "FEAT_JSCVT", 1 }, { "FEAT_LRCPC", 1 },
	{ "FEAT_LRCPC2", 1 }, { "FEAT_LSE", 1 }, { "FEAT_LSE2", 1 },
	{ "FEAT_PAuth", 1 }, { "FEAT_PAuth2", 1 }, { "FEAT_PMULL", 1 },
	{ "FEAT_RDM", 1 }, { "FEAT_RPRES", 1 }, { "FEAT_SB", 1 },
	{ "FEAT_SHA1", 1 }, { "FEAT_SHA256", 1 }, { "FEAT_SHA3", 1 },
	{ "FEAT_SHA512", 1 }, { "FEAT_SME", 1 }, { "FEAT_SME2", 1 },
	{ "FEAT_SME_F64F64", 1 }, { "FEAT_SME_I16I64", 1 },
	{ "FEAT_SPECRES", 0 }, { "FEAT_SSBS", 0 }, { "FEAT_WFxT", 1 },
};
static int sysctl_calls;

static int
m4_sysctl(const char *name, int *v)
{
	size_t i;

	sysctl_calls++;
	if (strncmp(name, "hw.optional.arm.", 16) != 0)
		return -1;
	for (i = 0; i < sizeof m4 / sizeof m4[0]; i++)
		if (strcmp(name + 16, m4[i].name) == 0) {
			*v = m4[i].v;
			return 0;
		}
	return -1;
}

/* macOS 11: hw.optional.arm.* did not exist yet. */
static int
no_sysctl(const char *name, int *v)
{
	(void)name;
	(void)v;
	return -1;
}

static void
test_macfacts_feat_names(void **state)
{
	char buf[1024], small[40];
	size_t i, set = 0;

	(void)state;
	sysctl_calls = 0;
	assert_int_equal(macfacts_feat_names(m4_sysctl, buf, sizeof buf),
	    (int)(sizeof m4 / sizeof m4[0]));
	assert_true(sysctl_calls > (int)(sizeof m4 / sizeof m4[0]));
	/* Every set name once, in sysctl's (ASCII) order; the unset
	 * and the absent (SVE: an M4 has none) not at all. */
	assert_true(strncmp(buf, "FEAT_AES FEAT_AFP FEAT_BF16 ", 28) == 0);
	assert_non_null(strstr(buf, " FEAT_SHA256 FEAT_SHA3 FEAT_SHA512 "
	    "FEAT_SME FEAT_SME2 FEAT_SME_F64F64 FEAT_SME_I16I64 FEAT_WFxT"));
	assert_null(strstr(buf, "FEAT_SSBS"));
	assert_null(strstr(buf, "FEAT_SPECRES"));
	assert_null(strstr(buf, "SVE"));
	for (i = 0; i < sizeof m4 / sizeof m4[0]; i++)
		set += m4[i].v != 0;
	for (i = 0; buf[i] != '\0'; i++)
		set -= buf[i] == ' ';
	assert_int_equal(set, 1);
	/* Cut at a name, never inside one. */
	assert_int_equal(macfacts_feat_names(m4_sysctl, small, sizeof small),
	    (int)(sizeof m4 / sizeof m4[0]));
	assert_string_equal(small, "FEAT_AES FEAT_AFP FEAT_BF16 FEAT_BTI");
	/* None to read: unknown, not an empty list. */
	assert_int_equal(macfacts_feat_names(no_sysctl, buf, sizeof buf), 0);
	assert_string_equal(buf, "");
}

static void
test_macfacts_power(void **state)
{
	static const struct {
		struct macfacts_power p;
		const char *want;
	} cases[] = {
		/* Seed 002's MacBook Pro. */
		{ { "AC Power", 1, 1, 0, 87 }, "AC attached; charging; 87%" },
		{ { "AC Power", 1, 0, 1, 100 }, "AC attached; charged; 100%" },
		/* Optimized charging holds it at 80%. */
		{ { "AC Power", 1, 0, 0, 80 }, "AC attached; not charging; 80%" },
		{ { "Battery Power", 1, 0, 0, 54 }, "on battery; 54%" },
		{ { "Battery Power", 1, -1, -1, -1 }, "on battery" },
		/* A Mac mini, a Mac Studio. */
		{ { "AC Power", 0, -1, -1, -1 }, "AC attached; no battery" },
		{ { "UPS Power", 0, -1, -1, -1 }, "on UPS" },
		{ { "Solar", 0, -1, -1, -1 }, "on \"Solar\"" },
	};
	struct macfacts_power unknown = { NULL, 1, 1, 0, 50 };
	char buf[128], tiny[12];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(macfacts_power_describe(&cases[i].p, buf,
		    sizeof buf), 0);
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(macfacts_power_describe(&unknown, buf, sizeof buf),
	    -1);
	assert_string_equal(buf, "");
	assert_int_equal(macfacts_power_describe(&cases[0].p, tiny,
	    sizeof tiny), 0);
	assert_string_equal(tiny, "AC attached");
}

static void
test_osslcap_mask(void **state)
{
	static const struct {
		const char *arch, *detected, *names, *cleared, *applied;
	} cases[] = {
		/* OpenSSL 3.0 on x86-64: two words. */
		{ "x86_64", "0x7ffaf3ffffebffff:0x29c67af", "AVX2",
		  "0x0:0x20", "0x7ffaf3ffffebffff:0x29c678f" },
		/* OpenSSL 3.5: five, zero-padded (crypto/info.c). */
		{ "x86_64", "0x7ffaf3ffffebffff:0x00000000029c67af:"
		  "0x0000000000000000:0x0000000000000000:0x0000000000000400",
		  "AESNI,AVX2", "0x200000000000000:0x20:0x0:0x0:0x0",
		  "0x7dfaf3ffffebffff:0x29c678f:0x0:0x0:0x400" },
		/* A later release's sixth and seventh words, as they were. */
		{ "x86_64", "0x1:0x20:0x3:0x4:0x5:0x0000000000000006:0x7",
		  "AVX2", "0x0:0x20:0x0:0x0:0x0",
		  "0x1:0x0:0x3:0x4:0x5:0x0000000000000006:0x7" },
		/* aarch64: OPENSSL_armcap's one word. */
		{ "aarch64", "0xfd", "ARMV8_SHA512", "0x40", "0xbd" },
		{ "aarch64", "0xfd", "ARMV8_SHA512,ARMV8_SHA3", "0x840",
		  "0xbd" },
	};
	static const struct {
		const char *arch, *detected, *names, *err;
	} bad[] = {
		{ "aarch64", "0xfd", "AVX2", "--openssl-cap-clear: \"AVX2\" is "
		  "not an OpenSSL capability of aarch64 (kernels/"
		  "openssl-caps.h)" },
		/* AVX2 is in word 1, which this mask does not have. */
		{ "x86_64", "0xff", "SSE2,AVX2", "--openssl-cap-clear: \"AVX2\" "
		  "is in word 1 of the mask, and the one OpenSSL detected, "
		  "\"0xff\", has 1" },
		{ "x86_64", "0x1:zz", "AVX2", "cannot read the capability mask "
		  "OpenSSL detected from \"0x1:zz\"" },
		{ "x86_64", "0x1:", "AVX2", "cannot read the capability mask "
		  "OpenSSL detected from \"0x1:\"" },
		{ "aarch64", "", "ARMV8_SHA512", "cannot read the capability "
		  "mask OpenSSL detected from \"\"" },
	};
	char cleared[256], applied[256], small[24], err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err[0] = '\0';
		assert_int_equal(osslcap_mask(cases[i].arch, cases[i].detected,
		    cases[i].names, cleared, applied, sizeof applied, err,
		    sizeof err), 0);
		assert_string_equal(cleared, cases[i].cleared);
		assert_string_equal(applied, cases[i].applied);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(osslcap_mask(bad[i].arch, bad[i].detected,
		    bad[i].names, cleared, applied, sizeof applied, err,
		    sizeof err), -1);
		assert_string_equal(err, bad[i].err);
	}
	/* A mask its buffers cannot hold is refused, not cut. */
	assert_int_equal(osslcap_mask("x86_64", cases[1].detected, "AVX2",
	    small, applied, sizeof small, err, sizeof err), -1);
	assert_true(strncmp(err, "--openssl-cap-clear: the mask OpenSSL "
	    "detected, \"0x7ffaf3ffffebffff:", 52) == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_help_and_unknown),
		cmocka_unit_test(test_builds),
		cmocka_unit_test(test_stored_spread),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_jsonl_write),
		cmocka_unit_test(test_jsonl_read),
		cmocka_unit_test(test_jsonl_excerpt),
		cmocka_unit_test(test_clock_jumps),
		cmocka_unit_test(test_sha256_file),
		cmocka_unit_test(test_macfacts_feat_names),
		cmocka_unit_test(test_macfacts_power),
		cmocka_unit_test(test_osslcap_mask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The agent's modules that need no host: agent/opts.c (the command line,
 * whose refusals come back as values with their messages, the agent
 * still running) and agent/spread.c (the --max-cv statistics, against
 * the mean and sample variance computed directly).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <getopt.h>
#include <string.h>

#include "../../agent/opts.h"
#include "../../agent/spread.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_help_and_unknown),
		cmocka_unit_test(test_builds),
		cmocka_unit_test(test_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

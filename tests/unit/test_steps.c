/*
 * Unit tests for deploy-steps.c: a cold build's output split into its
 * steps and its report, whatever the chunks it arrives in; a mark inside
 * the report's sections (a build log may hold anything) stays report.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deploy-steps.h"
#include "util.h"

struct seen {
	char steps[16][STEP_MAX + 1];
	size_t n;
};

static void
on_step(void *arg, const char *step)
{
	struct seen *sn = arg;

	assert_true(sn->n < 16);
	assert_true(strlen(step) <= STEP_MAX);
	snprintf(sn->steps[sn->n++], sizeof sn->steps[0], "%s", step);
}

/* Feed in chunks of chunk bytes (0: all at once); the report in *out. */
static int
feed(const char *in, size_t chunk, size_t max, struct seen *sn, char **out)
{
	struct build_stream bs;
	size_t len = strlen(in), off = 0, n;
	int rc = 0;

	memset(sn, 0, sizeof *sn);
	build_stream_init(&bs, max, on_step, sn);
	while (off < len && rc == 0) {
		n = chunk == 0 || len - off < chunk ? len - off : chunk;
		rc = build_stream_out(&bs, in + off, n);
		off += n;
	}
	*out = build_stream_report(&bs);
	build_stream_release(&bs);
	return rc;
}

static const char build_out[] =
    "@@seqorch:built\n"
    "@@seqorch:step compiling 1/3 agent/agent.c\n"
    "@@seqorch:stepping stone\n"
    "@@seqorch:step randomx [ 23%] compiling aes_hash.cpp\n"
    "@@seqorch\n"
    "@@seqorch:step linking seqorch-agent\n"
    "@@seqorch:meta 4\n"
    "a=b\n"
    "@@seqorch:log 38\n"
    "@@seqorch:step not a step: the log\n\n";

static const char report[] =
    "@@seqorch:built\n"
    "@@seqorch:stepping stone\n"
    "@@seqorch\n"
    "@@seqorch:meta 4\n"
    "a=b\n"
    "@@seqorch:log 38\n"
    "@@seqorch:step not a step: the log\n\n";

static void
test_split_in_any_chunks(void **state)
{
	static const size_t chunks[] = { 0, 1, 2, 3, 7, 15, 16, 64 };
	struct seen sn;
	char *out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		assert_int_equal(feed(build_out, chunks[i], 4096, &sn, &out), 0);
		assert_string_equal(out, report);
		assert_int_equal(sn.n, 3);
		assert_string_equal(sn.steps[0], "compiling 1/3 agent/agent.c");
		assert_string_equal(sn.steps[1],
		    "randomx [ 23%] compiling aes_hash.cpp");
		assert_string_equal(sn.steps[2], "linking seqorch-agent");
		free(out);
	}
}

static void
test_long_and_hostile_steps(void **state)
{
	char in[1024], want[STEP_MAX + 1];
	struct seen sn;
	char *out;

	(void)state;
	memset(want, 'x', STEP_MAX);
	want[STEP_MAX] = '\0';
	/* 300 bytes of step: the first STEP_MAX say it, the rest is dropped. */
	snprintf(in, sizeof in, "@@seqorch:step %s%0300d\n"
	    "@@seqorch:step a\033[2Jb\n@@seqorch:step \n@@seqorch:meta 0\n",
	    want, 0);
	assert_int_equal(feed(in, 5, 4096, &sn, &out), 0);
	assert_int_equal(sn.n, 2);
	assert_string_equal(sn.steps[0], want);
	assert_string_equal(sn.steps[1], "a?[2Jb");
	assert_string_equal(out, "@@seqorch:meta 0\n");
	free(out);
}

static void
test_report_limit_and_cut_end(void **state)
{
	struct seen sn;
	char *out;

	(void)state;
	/* Steps do not count against the limit; the report does. */
	assert_int_equal(feed("@@seqorch:step one\n@@seqorch:meta 3\nabc", 1,
	    20, &sn, &out), 0);
	assert_string_equal(out, "@@seqorch:meta 3\nabc");
	free(out);
	assert_int_equal(feed("@@seqorch:meta 30\n0123456789", 4, 20, &sn,
	    &out), SO_EPROTO);
	free(out);
	/* Output that stops inside a line: kept, unless a step's. */
	assert_int_equal(feed("@@seqorch:bu", 1, 20, &sn, &out), 0);
	assert_string_equal(out, "@@seqorch:bu");
	free(out);
	assert_int_equal(feed("@@seqorch:step cut", 1, 20, &sn, &out), 0);
	assert_string_equal(out, "");
	assert_int_equal(sn.n, 0);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_in_any_chunks),
		cmocka_unit_test(test_long_and_hostile_steps),
		cmocka_unit_test(test_report_limit_and_cut_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

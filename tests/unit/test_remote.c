/*
 * Unit tests for remote.h and pool.h: a script's placeholders filled in
 * and run by a real /bin/sh (a quoted value comes back as it was, a raw
 * one is shell text), and the host pool running every job exactly once
 * with no more threads at once than asked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"
#include "remote.h"

/* Run cmd with /bin/sh and return its stdout (at most 255 bytes). */
static void
run_sh(const char *cmd, char out[256])
{
	FILE *p = popen(cmd, "r");
	size_t n;

	assert_non_null(p);
	n = fread(out, 1, 255, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
}

static void
test_script_quotes_values(void **state)
{
	static const char *const words[] = {
		"plain", "with space", "it's", "$(touch /nonexistent/x)",
		"`id`", "a;b|c&d", "{{x}}", "", "new\nline",
	};
	struct strbuf cmd = STRBUF_INIT;
	char out[256], want[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		strbuf_reset(&cmd);
		/* A value holding "{{x}}" is not expanded again. */
		rcmd_script(&cmd, "printf '[%s]' {{v}}{{&sep}}{{v}}",
		    (const char *const[]){ "v", words[i], "sep", "\"-\"",
		    NULL });
		run_sh(cmd.buf, out);
		snprintf(want, sizeof want, "[%s-%s]", words[i], words[i]);
		assert_string_equal(out, want);
	}
	strbuf_release(&cmd);
}

static void
test_args(void **state)
{
	struct strbuf cmd = STRBUF_INIT;
	char out[256];

	(void)state;
	rcmd_raw(&cmd, "printf '<%%s>'");
	rcmd_arg(&cmd, "a b");
	rcmd_argf(&cmd, "%d'%s", 7, "x y");
	rcmd_raw(&cmd, " %s", "raw");
	assert_string_equal(cmd.buf,
	    "printf '<%s>' 'a b' '7'\\''x y' raw");
	run_sh(cmd.buf, out);
	assert_string_equal(out, "<a b><7'x y><raw>");
	strbuf_release(&cmd);
}

static void
test_cpu_word(void **state)
{
	struct host h = { 0 };
	char buf[16];

	(void)state;
	h.cpu = 3;
	assert_string_equal(rcmd_cpu(&h, buf, sizeof buf), "3");
	h.cpu = HOST_CPU_AUTO;
	assert_string_equal(rcmd_cpu(&h, buf, sizeof buf), "auto");
	h.cpu = -1;
	assert_string_equal(rcmd_cpu(&h, buf, sizeof buf), "none");
}

#define NJOBS 40
#define LIMIT 3

struct jobs {
	pthread_mutex_t mu;
	int ran[NJOBS];
	int running, most;
};

static void
job(void *arg, size_t i)
{
	struct jobs *j = arg;

	pthread_mutex_lock(&j->mu);
	j->ran[i]++;
	if (++j->running > j->most)
		j->most = j->running;
	pthread_mutex_unlock(&j->mu);
	usleep(1000);
	pthread_mutex_lock(&j->mu);
	j->running--;
	pthread_mutex_unlock(&j->mu);
}

static void
test_pool(void **state)
{
	struct jobs j = { .mu = PTHREAD_MUTEX_INITIALIZER };
	size_t i;

	(void)state;
	pool_run(NJOBS, LIMIT, job, &j);
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(j.ran[i], 1);
	assert_true(j.most >= 1 && j.most <= LIMIT);
	assert_int_equal(j.running, 0);
	/* No jobs, or a limit under one, still returns (one at a time). */
	pool_run(0, LIMIT, job, &j);
	memset(&j.ran, 0, sizeof j.ran);
	j.most = 0;
	pool_run(NJOBS, 0, job, &j);
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(j.ran[i], 1);
	assert_int_equal(j.most, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_quotes_values),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_cpu_word),
		cmocka_unit_test(test_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

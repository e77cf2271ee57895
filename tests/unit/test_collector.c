/*
 * Unit tests for the collector client's pure parts (`seqorch publish`):
 * the backoff between tries (capped: twenty tries used to wait 36 hours at
 * the end) and what is shown of a collector's answer (bounded, the token
 * and any Bearer or Authorization value replaced).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"

static void
test_backoff_doubles_then_stops_at_the_cap(void **state)
{
	double total = 0;
	int i;

	(void)state;
	assert_true(collector_backoff(0.5, 1) == 0.5);
	assert_true(collector_backoff(0.5, 2) == 1.0);
	assert_true(collector_backoff(0.5, 5) == 8.0);
	assert_true(collector_backoff(0.5, 7) == COLLECTOR_BACKOFF_MAX);
	assert_true(collector_backoff(0.5, 19) == COLLECTOR_BACKOFF_MAX);
	assert_true(collector_backoff(0.5, 1000000) == COLLECTOR_BACKOFF_MAX);
	/* --attempts 20 (the most): 19 waits, about eight minutes. */
	for (i = 1; i < 20; i++)
		total += collector_backoff(0.5, i);
	assert_true(total < 10 * 60);
}

static void
shown(const char *body, const char *token, char *out, size_t n)
{
	collector_shown(body, strlen(body), token, out, n);
}

static void
test_shown_is_the_first_line_without_control_bytes(void **state)
{
	char out[512];

	(void)state;
	shown("stored as 42\r\nsecond", NULL, out, sizeof out);
	assert_string_equal(out, "stored as 42");
	shown("a\tb\x1b[31mc", NULL, out, sizeof out);
	assert_string_equal(out, "a?b?[31mc");
	shown("", NULL, out, sizeof out);
	assert_string_equal(out, "");
}

static void
test_shown_is_bounded(void **state)
{
	char body[4097], out[512];

	(void)state;
	memset(body, 'x', sizeof body - 1);
	body[sizeof body - 1] = '\0';
	shown(body, NULL, out, sizeof out);
	assert_int_equal(strlen(out), COLLECTOR_SHOWN_MAX + 3);
	assert_string_equal(out + COLLECTOR_SHOWN_MAX, "...");
}

static void
test_shown_hides_tokens(void **state)
{
	char out[512], body[4200];

	(void)state;
	shown("you sent s3cret-token, which is wrong", "s3cret-token", out,
	    sizeof out);
	assert_string_equal(out, "you sent [redacted], which is wrong");
	shown("echo: Authorization: Bearer abc.def", NULL, out, sizeof out);
	assert_null(strstr(out, "abc"));
	assert_string_equal(out, "echo: Authorization: [redacted]");
	shown("{\"auth\": \"bearer  xyz123\", \"ok\": 0}", NULL, out,
	    sizeof out);
	assert_string_equal(out, "{\"auth\": \"bearer  [redacted]\", \"ok\": 0}");
	/* A token past the cut is not left half shown. */
	memset(body, 'y', 195);
	strcpy(body + 195, "s3cret-token and more");
	shown(body, "s3cret-token", out, sizeof out);
	assert_null(strstr(out, "s3cr"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_doubles_then_stops_at_the_cap),
		cmocka_unit_test(test_shown_is_the_first_line_without_control_bytes),
		cmocka_unit_test(test_shown_is_bounded),
		cmocka_unit_test(test_shown_hides_tokens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

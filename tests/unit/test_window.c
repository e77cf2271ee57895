/*
 * window.c's checks of a host's wall clock: a window record's time must lie
 * between its agent's launch and now, by the coordinator's clock, give or
 * take WINDOW_SKEW_S; the skew then goes first in the window's drift.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "window.h"

/* t seconds since the epoch as an agent writes it. */
static void
iso(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)((t - (double)s) * 1000));
}

static void
test_skew_within(void **state)
{
	double now = window_clock();
	char at[64], coord[32] = "";

	(void)state;
	/* Launched a minute ago; written then, now, or a second off. */
	iso(now - 60, at, sizeof at);
	assert_null(window_skew(at, "begin", now - 60, coord, sizeof coord));
	iso(now - 61, at, sizeof at);
	assert_null(window_skew(at, "begin", now - 60, coord, sizeof coord));
	iso(now + 1, at, sizeof at);
	assert_null(window_skew(at, "end", now - 60, coord, sizeof coord));
	assert_string_equal(coord, "");
}

static void
test_skew_ahead_behind(void **state)
{
	double now = window_clock();
	char at[64], coord[32] = "", want[256], *s;

	(void)state;
	iso(now + 7200 + 30, at, sizeof at);
	s = window_skew(at, "end", now - 60, coord, sizeof coord);
	assert_non_null(s);
	snprintf(want, sizeof want, "the host's wall clock is at least "
	    "2h00m%02ds ahead of the coordinator's: window end at %s by the "
	    "host, kept at the coordinator's time", 29, at);
	/* Now moved on a little since: 29 or 30 s. */
	if (strcmp(s, want) != 0)
		snprintf(want, sizeof want, "the host's wall clock is at least "
		    "2h00m30s ahead of the coordinator's: window end at %s by "
		    "the host, kept at the coordinator's time", at);
	assert_string_equal(s, want);
	/* The coordinator's time instead, in the same format. */
	assert_int_equal(strlen(coord), 24);
	assert_true(strcmp(coord, at) < 0);
	free(s);

	/* Written before its agent was launched: behind by that much. */
	iso(now - 3 * 86400 - 5, at, sizeof at);
	s = window_skew(at, "begin", now, coord, sizeof coord);
	assert_non_null(s);
	snprintf(want, sizeof want, "the host's wall clock is at least "
	    "72h00m05s behind the coordinator's: window begin at %s by the "
	    "host, kept at the coordinator's time", at);
	assert_string_equal(s, want);
	free(s);
}

static void
test_drift_with_skew(void **state)
{
	const char *b = "{\"calib_mhz\":3000,\"busy_on_cpu\":[]}";
	const char *a = "{\"calib_mhz\":2000,\"busy_on_cpu\":[]}";
	char *d;

	(void)state;
	d = window_drift(b, b, "skewed");
	assert_string_equal(d, "skewed");
	free(d);
	d = window_drift(b, a, "skewed");
	assert_string_equal(d, "skewed; clock estimate changed -33.3% "
	    "(3000 -> 2000 MHz)");
	free(d);
	d = window_drift(b, a, NULL);
	assert_string_equal(d, "clock estimate changed -33.3% (3000 -> 2000 "
	    "MHz)");
	free(d);
	assert_null(window_drift(b, b, NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skew_within),
		cmocka_unit_test(test_skew_ahead_behind),
		cmocka_unit_test(test_drift_with_skew),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

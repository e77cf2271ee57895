/*
 * ebash.c: seed 003's quartiles, "long messages" slope and large-variance
 * flag, against values worked by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "ebash.h"

static void
test_quartiles(void **state)
{
	/* numpy.quantile([1, 2, 3, 4, 10], [.25, .5, .75]) = 2, 3, 4 */
	double odd[] = { 10, 3, 1, 4, 2 };
	/* numpy.quantile([1, 2, 3, 4], ...) = 1.75, 2.5, 3.25 */
	double even[] = { 4, 1, 3, 2 };
	double one[] = { 7 }, q[3] = { -1, -1, -1 };

	(void)state;
	assert_int_equal(ebash_quartiles(odd, 5, q), 0);
	assert_true(q[0] == 2 && q[1] == 3 && q[2] == 4);
	assert_int_equal(ebash_quartiles(even, 4, q), 0);
	assert_true(q[0] == 1.75 && q[1] == 2.5 && q[2] == 3.25);
	assert_int_equal(ebash_quartiles(one, 1, q), 0);
	assert_true(q[0] == 7 && q[1] == 7 && q[2] == 7);
	q[0] = -1;
	assert_int_equal(ebash_quartiles(one, 0, q), -1);
	assert_true(q[0] == -1);
}

static void
test_long(void **state)
{
	/*
	 * A message of L bytes costing 1000 + 40 L cycles: 40 cycles/byte
	 * for long messages, whatever the fixed 1000.
	 */
	double lo[3], hi[3], out[3];
	size_t k;

	(void)state;
	for (k = 0; k < 3; k++) {
		lo[k] = (1000.0 + (40.0 + (double)k) * 1536) / 1536;
		hi[k] = (1000.0 + (40.0 + (double)k) * 4096) / 4096;
	}
	assert_int_equal(ebash_long(lo, 1536, hi, 4096, out), 0);
	for (k = 0; k < 3; k++)
		assert_true(fabs(out[k] - (40.0 + (double)k)) < 1e-9);
	/* Seed 003's sha3256 on the U54: 44.25 at 1536, 42.80 at 4096. */
	lo[1] = 44.25;
	hi[1] = 42.80;
	assert_int_equal(ebash_long(lo, 1536, hi, 4096, out), 0);
	assert_true(fabs(out[1] - (42.80 * 4096 - 44.25 * 1536) / 2560) <
	    1e-12 && out[1] > 41.9 && out[1] < 42.0);
	assert_int_equal(ebash_long(lo, 4096, hi, 4096, out), -1);
	assert_int_equal(ebash_long(hi, 4096, lo, 1536, out), -1);
}

static void
test_large_variance(void **state)
{
	double tight[] = { 41.36, 41.39, 41.40 };	/* the seed's */
	double edge[] = { 95, 100, 100 };		/* IQR exactly 5% */
	double wide[] = { 95, 100, 100.01 };

	(void)state;
	assert_false(ebash_large_variance(tight));
	assert_false(ebash_large_variance(edge));
	assert_true(ebash_large_variance(wide));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quartiles),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_large_variance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * seqorch compare's gate (compare.c): what --fail-slower decides.  A
 * results.db is made with db_open in a private temporary directory; each
 * test writes its runs in a transaction it rolls back, and asks
 * compare_print what the gate would say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "db.h"
#include "util.h"
#include "unit-tmp.h"

#define GOOD	"abababababababababababababababababababababababababababababababab"
#define SEED	"0000000000000000000000000000000000000000000000000000000000000000"

static char tmpdir[] = "/tmp/seqorch-test-compare.XXXXXX";
static struct db *db;

static void
exec_ok(const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db_handle(db), sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

/* Run id of study sha3 with status, and its build (id = run id) on genoa. */
static void
run(int64_t id, const char *status, int exploratory)
{
	char *sql = xasprintf("INSERT INTO runs (id, study, started_at,"
	    " finished_at, status, steps, samples_per_variant, command, seed,"
	    " variants, hosts, exploratory, coordinator, version) VALUES"
	    " (%lld, 'sha3', '2026-09-10T10:00:00Z', '2026-09-10T10:01:00Z',"
	    " '%s', 1000000, 3, 'seqorch run', '" SEED "', NULL, 'genoa', %d,"
	    " 'coord pid 7', '0.1.0');"
	    "INSERT INTO builds (id, run_id, host, compiler, compiler_version,"
	    " cflags, status, created_at) VALUES (%lld, %lld, 'genoa', 'cc',"
	    " 'cc 12', '-O3', 'ok', '2026-09-10T10:00:00Z')", (long long)id,
	    status, exploratory, (long long)id, (long long)id);

	exec_ok(sql);
	free(sql);
}

/* n samples of variant in run id (build id), each taking ns. */
static void
samples(int64_t id, const char *variant, int n, int64_t ns)
{
	char *sql;
	int i;

	for (i = 0; i < n; i++) {
		sql = xasprintf("INSERT INTO samples (run_id, host, build_id,"
		    " study, variant, sample_index, position, steps, ns, digest,"
		    " seed, valid, invalid_reason, calib_mhz, cpu, received_at)"
		    " VALUES (%lld, 'genoa', %lld, 'sha3', '%s', %d, %d,"
		    " 1000000, %lld, '" GOOD "', '" SEED "', 1, NULL, NULL, 1,"
		    " '2026-09-10T10:00:30Z')", (long long)id, (long long)id,
		    variant, i, i, (long long)(ns + i));
		exec_ok(sql);
		free(sql);
	}
}

/* compare_print's verdict for base -> next (0: its own choice) at 10%. */
static int
gate(int64_t base, int64_t next, struct compare_gate *g)
{
	struct compare_opts o = { .base = base, .next = next,
	    .fail_slower = 10, .db_path = "results.db" };
	struct so_err err;
	FILE *out = fopen("/dev/null", "w");
	int ret;

	assert_non_null(out);
	ret = compare_print(db_handle(db), NULL, &o, out, g, &err);
	fclose(out);
	if (ret != 0)
		fail_msg("compare %lld %lld: %s", (long long)base,
		    (long long)next, err.msg);
	return ret;
}

static int
setup(void **state)
{
	(void)state;
	return unit_db_open(tmpdir, &db);
}

/* Each test's runs go, whether it passed or not. */
static int
rollback(void **state)
{
	(void)state;
	if (!sqlite3_get_autocommit(db_handle(db)))
		exec_ok("ROLLBACK");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	unit_rmtree(tmpdir);
	return 0;
}

/*
 * A cell of one sample a side has no interval, so no verdict: a new run
 * three times slower is not "decided slower", and before issue 29 the
 * gate passed it.  It cannot decide, and names the cell.
 */
static void
test_one_sample_cells_undecided(void **state)
{
	struct compare_gate g;

	(void)state;
	exec_ok("BEGIN");
	run(1, "ok", 0);
	run(2, "ok", 0);
	samples(1, "c-fused", 1, 1000000000);
	samples(2, "c-fused", 1, 3000000000);
	samples(1, "c-wrapped", 3, 1000000000);
	samples(2, "c-wrapped", 3, 1000000000);
	gate(1, 2, &g);
	assert_int_equal(g.slower, 0);
	assert_non_null(g.undecided);
	assert_string_equal(g.undecided, "1 cell without an interval (n < 2): "
	    "c-fused (cc) on genoa");
	compare_gate_free(&g);
	/*
	 * 3 samples a side, apart, the new run's spread from 1.3 s to 2 s:
	 * the interval says slower, but the t-test of the logs is p = 0.1,
	 * so the gate can neither fail the cell as slower nor pass it.
	 */
	exec_ok("DELETE FROM samples WHERE variant = 'c-fused'");
	samples(1, "c-fused", 3, 1000000000);
	samples(2, "c-fused", 3, 1300000000);
	exec_ok("UPDATE samples SET ns = 2000000000 WHERE run_id = 2 AND "
	    "variant = 'c-fused' AND sample_index = 2");
	gate(1, 2, &g);
	assert_int_equal(g.slower, 0);
	assert_non_null(g.undecided);
	assert_string_equal(g.undecided, "1 cell slower than the threshold by "
	    "the interval, a verdict the t-test does not back: c-fused "
	    "(cc) on genoa");
	compare_gate_free(&g);
	/* 3 samples a side, close together: the cell is decided. */
	exec_ok("DELETE FROM samples WHERE variant = 'c-fused'");
	samples(1, "c-fused", 3, 1000000000);
	samples(2, "c-fused", 3, 3000000000);
	gate(1, 2, &g);
	assert_int_equal(g.slower, 1);
	assert_null(g.undecided);
	compare_gate_free(&g);
}

/* compare 1 2 --format json's geometric_mean.verdict. */
static char *
geo_verdict(void)
{
	struct compare_opts o = { .base = 1, .next = 2, .db_path = "results.db",
	    .format = &compare_renderers[2] };
	struct compare_gate g;
	struct so_err err;
	char *buf = NULL, *v;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	cJSON *root;

	assert_non_null(out);
	assert_string_equal(compare_renderers[2].name, "json");
	if (compare_print(db_handle(db), NULL, &o, out, &g, &err) != 0)
		fail_msg("compare: %s", err.msg);
	fclose(out);
	compare_gate_free(&g);
	root = cJSON_Parse(buf);
	assert_non_null(root);
	v = xstrdup(cJSON_GetObjectItem(cJSON_GetObjectItem(root,
	    "geometric_mean"), "verdict")->valuestring);
	cJSON_Delete(root);
	free(buf);
	return v;
}

/*
 * The geometric mean's verdict needs Welch's t-test of all the cells at
 * once: two cells slower, each spread as the gate test's (p = 0.1
 * alone), decide it, with twice the degrees of freedom; one of them and
 * one unchanged but for a sample twice as slow do not (p = 0.09), where
 * the interval of the mean alone said slower.
 */
static void
test_geomean_t_test(void **state)
{
	char *v;

	(void)state;
	exec_ok("BEGIN");
	run(1, "ok", 0);
	run(2, "ok", 0);
	samples(1, "c-fused", 3, 1000000000);
	samples(2, "c-fused", 3, 1300000000);
	samples(1, "c-wrapped", 3, 1000000000);
	samples(2, "c-wrapped", 3, 1300000000);
	exec_ok("UPDATE samples SET ns = 2000000000 WHERE run_id = 2 AND "
	    "sample_index = 2");
	v = geo_verdict();
	assert_string_equal(v, "slower");
	free(v);
	exec_ok("DELETE FROM samples WHERE run_id = 2");
	samples(2, "c-fused", 3, 1300000000);
	samples(2, "c-wrapped", 3, 1000000000);
	exec_ok("UPDATE samples SET ns = 2000000000 WHERE run_id = 2 AND "
	    "sample_index = 2");
	v = geo_verdict();
	assert_string_equal(v, "undecided");
	free(v);
}

/*
 * --baseline alone: the gate judges the newest run measured here, a failed
 * one included (before, it passed over it to an older ok run), and never
 * an imported or --explore run, however new and ok.
 */
static void
test_baseline_judges_newest_measured(void **state)
{
	struct compare_gate g;

	(void)state;
	exec_ok("BEGIN");
	run(1, "ok", 0);
	run(2, "ok", 0);
	run(3, "failed", 0);
	run(4, "ok", 0);
	run(5, "ok", 1);
	samples(1, "c-fused", 3, 1000000000);
	samples(2, "c-fused", 3, 1000000000);
	samples(4, "c-fused", 3, 1000000000);
	samples(5, "c-fused", 3, 1000000000);
	exec_ok("INSERT INTO imports (run_id, origin_run_id, origin_coordinator,"
	    " manifest_sha256, imported_at) VALUES (4, 9, 'elsewhere pid 1',"
	    " '" GOOD "', '2026-09-11T00:00:00Z')");
	gate(1, 0, &g);
	assert_int_equal(g.next, 3);
	assert_non_null(g.undecided);
	assert_non_null(strstr(g.undecided, "run 3 is not ok (failed)"));
	compare_gate_free(&g);
	/* Once run 3 is gone, run 2 is the newest measured here. */
	exec_ok("DELETE FROM builds WHERE run_id = 3; DELETE FROM runs"
	    " WHERE id = 3");
	gate(1, 0, &g);
	assert_int_equal(g.next, 2);
	assert_null(g.undecided);
	compare_gate_free(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_one_sample_cells_undecided,
		    rollback),
		cmocka_unit_test_teardown(test_baseline_judges_newest_measured,
		    rollback),
		cmocka_unit_test_teardown(test_geomean_t_test, rollback),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * results.db: what the report shows per build of a run (report-builds.c
 * renders it): rates per host and build, native/default ratios and the
 * phase shares of hashing time.  These read on the raw handle that
 * report_print is given.
 */
#include "db.h"

#include <stdlib.h>
#include <string.h>

static const char *const phase_names[DB_PHASES] = { "phase_proggen",
    "phase_compile", "phase_execute", "phase_mprotect", "phase_other" };

/*
 * The query of each enum db_build_section, its columns in the order of
 * struct db_build_row; ?1 is the run, ?2.. the phase names.
 */
static const char *const section_sql[] = {
	[DB_BUILD_RATES] = "SELECT s.host, s.build_id, b.compiler, "
	    "b.targeting, s.variant, s.n, s.median_rate, s.min_rate, "
	    "s.max_rate FROM summary s JOIN builds b ON b.id = s.build_id "
	    "WHERE s.run_id = ?1 AND b.targeting IS NOT NULL "
	    "ORDER BY s.host, s.variant, b.compiler, b.targeting",
	[DB_TARGETING_RATIOS] = "SELECT n.host, NULL, bn.compiler, NULL, "
	    "n.variant, NULL, n.median_rate / d.median_rate, n.min_rate, "
	    "n.max_rate, d.min_rate, d.max_rate FROM summary n "
	    "JOIN builds bn ON bn.id = n.build_id AND bn.targeting = 'native' "
	    "JOIN summary d ON d.run_id = n.run_id AND d.host = n.host AND "
	    "d.variant = n.variant "
	    "JOIN builds bd ON bd.id = d.build_id AND "
	    "bd.targeting = 'default' AND bd.compiler = bn.compiler "
	    "WHERE n.run_id = ?1 ORDER BY n.host, n.variant, bn.compiler",
	/*
	 * Samples without the last phase did not measure phases.  The scan
	 * starts from the metrics of the run's span of sample ids (two
	 * probes of samples_run_id), so a run without metrics costs nothing
	 * and one with them costs its metrics, never a pass over its samples.
	 */
	[DB_PHASE_SHARES] = "SELECT s.host, s.build_id, NULL, "
	    "b.targeting, s.variant, COUNT(DISTINCT s.id), "
	    "SUM(CASE WHEN m.name = ?2 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?3 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?4 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?5 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?6 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?6 THEN s.ns END) "
	    "FROM sample_metrics m CROSS JOIN samples s ON s.id = m.sample_id "
	    "LEFT JOIN builds b ON b.id = s.build_id "
	    "WHERE m.sample_id BETWEEN (SELECT MIN(id) FROM samples "
	    "WHERE run_id = ?1) AND (SELECT MAX(id) FROM samples "
	    "WHERE run_id = ?1) AND s.run_id = ?1 AND s.valid = 1 "
	    "GROUP BY s.host, s.build_id, s.variant "
	    "HAVING SUM(CASE WHEN m.name = ?6 THEN m.value END) IS NOT NULL "
	    "ORDER BY s.host, s.variant, s.build_id",
};

/*
 * Rates and ratios are only for runs with targeted builds: a probe of
 * builds_run skips the summary view's pass over the run's samples.
 */
static const char gate_sql[] = "SELECT 1 FROM builds WHERE run_id = ?1 "
    "AND targeting IS NOT NULL LIMIT 1";

/* SQLITE_ROW when run_id has a targeted build, SQLITE_DONE when not. */
static int
targeted(sqlite3 *h, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(h, gate_sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	return rc;
}

int
db_build_section(sqlite3 *h, enum db_build_section which, int64_t run_id,
    int (*fn)(void *arg, const struct db_build_row *r), void *arg,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_build_row r;
	int rc, i, stop = 0;

	rc = which == DB_PHASE_SHARES ? SQLITE_ROW : targeted(h, run_id);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc == SQLITE_ROW)
		rc = sqlite3_prepare_v2(h, section_sql[which], -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		for (i = 0; which == DB_PHASE_SHARES && i < DB_PHASES; i++)
			sqlite3_bind_text(st, i + 2, phase_names[i], -1,
			    SQLITE_STATIC);
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			r.host = (const char *)sqlite3_column_text(st, 0);
			r.build_id = sqlite3_column_int64(st, 1);
			r.compiler = (const char *)sqlite3_column_text(st, 2);
			r.targeting = (const char *)sqlite3_column_text(st, 3);
			r.variant = (const char *)sqlite3_column_text(st, 4);
			r.n = sqlite3_column_int64(st, 5);
			for (i = 0; i < DB_BUILD_VALUES; i++)
				r.v[i] = sqlite3_column_double(st, 6 + i);
			stop = fn(arg, &r);
		}
	}
	sqlite3_finalize(st);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : so_error(err, SO_EDB, "report: cannot "
	    "read builds and phases: %s", sqlite3_errmsg(h));
}

/*
 * Every pair of samples of two ok builds of a host with the same variant,
 * index and steps, both valid: the UNIQUE index of samples finds b's.
 * The baseline of a host is its first ok build at the default targeting
 * (or at none): the first compiler's.
 */
static const char pairs_sql[] =
    "WITH base AS (SELECT host, MIN(id) AS id FROM builds WHERE "
    "run_id = ?1 AND status = 'ok' AND (targeting IS NULL OR "
    "targeting = 'default') GROUP BY host) "
    "SELECT a.host, a.variant, a.build_id, b.build_id, ba.compiler, "
    "ba.targeting, bb.compiler, bb.targeting, "
    "b.build_id = (SELECT id FROM base WHERE base.host = a.host), "
    "CAST(b.ns AS REAL) / a.ns "
    "FROM samples a JOIN samples b ON b.run_id = a.run_id AND "
    "b.host = a.host AND b.build_id < a.build_id AND b.study = a.study AND "
    "b.variant = a.variant AND b.sample_index = a.sample_index AND "
    "b.steps = a.steps AND b.valid = 1 AND b.ns > 0 "
    "JOIN builds ba ON ba.id = a.build_id "
    "JOIN builds bb ON bb.id = b.build_id "
    "WHERE a.run_id = ?1 AND a.valid = 1 AND a.ns > 0 "
    "ORDER BY a.host, a.variant, a.build_id, b.build_id, 10";

static int
flush_pair(struct db_pair_row *r, double *ratios, size_t n,
    int (*fn)(void *arg, const struct db_pair_row *r), void *arg)
{
	if (n == 0)
		return 0;
	r->n = n;
	r->ratios = ratios;
	return fn(arg, r);
}

int
db_build_pairs(sqlite3 *h, int64_t run_id,
    int (*fn)(void *arg, const struct db_pair_row *r), void *arg,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_pair_row cur = { 0 };
	char *host = NULL, *variant = NULL, *ac = NULL, *at = NULL;
	char *bc = NULL, *bt = NULL;
	double *ratios = NULL;
	size_t n = 0, cap = 0;
	int rc, stop = 0;

	rc = sqlite3_prepare_v2(h, pairs_sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		rc = SQLITE_ROW;
	}
	while (rc == SQLITE_ROW && !stop &&
	    (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *rh = (const char *)sqlite3_column_text(st, 0);
		const char *rv = (const char *)sqlite3_column_text(st, 1);
		int64_t a = sqlite3_column_int64(st, 2);
		int64_t b = sqlite3_column_int64(st, 3);

		if (host == NULL || strcmp(host, rh) != 0 ||
		    strcmp(variant, rv) != 0 || a != cur.a_id ||
		    b != cur.b_id) {
			if ((stop = flush_pair(&cur, ratios, n, fn, arg)) != 0)
				break;
			n = 0;
#define COPY(dst, col) do { free(dst); dst = sqlite3_column_text(st, col) ? \
	xstrdup((const char *)sqlite3_column_text(st, col)) : NULL; } while (0)
			COPY(host, 0);
			COPY(variant, 1);
			COPY(ac, 4);
			COPY(at, 5);
			COPY(bc, 6);
			COPY(bt, 7);
#undef COPY
			cur.host = host;
			cur.variant = variant;
			cur.a_id = a;
			cur.b_id = b;
			cur.a_compiler = ac;
			cur.a_targeting = at;
			cur.b_compiler = bc;
			cur.b_targeting = bt;
			cur.b_baseline = sqlite3_column_int(st, 8);
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			ratios = xrealloc(ratios, cap * sizeof *ratios);
		}
		ratios[n++] = sqlite3_column_double(st, 9);
	}
	if (rc == SQLITE_DONE)
		stop = flush_pair(&cur, ratios, n, fn, arg);
	sqlite3_finalize(st);
	free(ratios);
	free(host);
	free(variant);
	free(ac);
	free(at);
	free(bc);
	free(bt);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : so_error(err, SO_EDB, "report: cannot "
	    "read paired samples: %s", sqlite3_errmsg(h));
}

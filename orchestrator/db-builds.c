/*
 * results.db: what the report shows per build of a run (report-builds.c
 * renders it): rates per host and build, native/default ratios and the
 * phase shares of hashing time.  These read on the raw handle that
 * report_print is given.
 */
#include "db.h"

#include <string.h>

static const char *const phase_names[DB_PHASES] = { "phase_proggen",
    "phase_compile", "phase_execute", "phase_mprotect", "phase_other" };

/*
 * Prepare sql, bind run_id to ?1 (and the phase names to ?2.. when
 * phases), and call row for each result row until it returns non-zero.
 */
static int
each_row(sqlite3 *h, const char *sql, int64_t run_id, int phases,
    int (*row)(sqlite3_stmt *st, void *ctx), void *ctx, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, i, stop = 0;

	rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		for (i = 0; phases && i < DB_PHASES; i++)
			sqlite3_bind_text(st, i + 2, phase_names[i], -1,
			    SQLITE_STATIC);
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
			stop = row(st, ctx);
	}
	sqlite3_finalize(st);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : so_error(err, SO_EDB, "report: cannot "
	    "read builds and phases: %s", sqlite3_errmsg(h));
}

static const char *
text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

struct rate_ctx {
	int (*fn)(void *arg, const struct db_build_rate *r);
	void *arg;
};

static int
rate_row(sqlite3_stmt *st, void *ctx)
{
	struct rate_ctx *c = ctx;
	struct db_build_rate r = {
		.host = text(st, 0),
		.build_id = sqlite3_column_int64(st, 1),
		.compiler = text(st, 2),
		.targeting = text(st, 3),
		.variant = text(st, 4),
		.n = sqlite3_column_int64(st, 5),
		.median = sqlite3_column_double(st, 6),
		.min = sqlite3_column_double(st, 7),
		.max = sqlite3_column_double(st, 8),
	};

	return c->fn(c->arg, &r);
}

int
db_build_rates(sqlite3 *h, int64_t run_id,
    int (*fn)(void *arg, const struct db_build_rate *r), void *arg,
    struct so_err *err)
{
	struct rate_ctx c = { fn, arg };

	return each_row(h, "SELECT s.host, s.build_id, b.compiler, "
	    "b.targeting, s.variant, s.n, s.median_rate, s.min_rate, "
	    "s.max_rate FROM summary s JOIN builds b ON b.id = s.build_id "
	    "WHERE s.run_id = ? AND b.targeting IS NOT NULL "
	    "ORDER BY s.host, s.variant, b.compiler, b.targeting", run_id, 0,
	    rate_row, &c, err);
}

struct ratio_ctx {
	int (*fn)(void *arg, const struct db_targeting_ratio *r);
	void *arg;
};

static int
ratio_row(sqlite3_stmt *st, void *ctx)
{
	struct ratio_ctx *c = ctx;
	struct db_targeting_ratio r = {
		.host = text(st, 0),
		.compiler = text(st, 1),
		.variant = text(st, 2),
		.ratio = sqlite3_column_double(st, 3),
		.native_min = sqlite3_column_double(st, 4),
		.native_max = sqlite3_column_double(st, 5),
		.default_min = sqlite3_column_double(st, 6),
		.default_max = sqlite3_column_double(st, 7),
	};

	return c->fn(c->arg, &r);
}

int
db_targeting_ratios(sqlite3 *h, int64_t run_id,
    int (*fn)(void *arg, const struct db_targeting_ratio *r), void *arg,
    struct so_err *err)
{
	struct ratio_ctx c = { fn, arg };

	return each_row(h, "SELECT n.host, bn.compiler, n.variant, "
	    "n.median_rate / d.median_rate, n.min_rate, n.max_rate, "
	    "d.min_rate, d.max_rate FROM summary n "
	    "JOIN builds bn ON bn.id = n.build_id AND bn.targeting = 'native' "
	    "JOIN summary d ON d.run_id = n.run_id AND d.host = n.host AND "
	    "d.variant = n.variant "
	    "JOIN builds bd ON bd.id = d.build_id AND "
	    "bd.targeting = 'default' AND bd.compiler = bn.compiler "
	    "WHERE n.run_id = ? ORDER BY n.host, n.variant, bn.compiler",
	    run_id, 0, ratio_row, &c, err);
}

struct phase_ctx {
	int (*fn)(void *arg, const struct db_phase_share *p);
	void *arg;
};

static int
phase_row(sqlite3_stmt *st, void *ctx)
{
	struct phase_ctx *c = ctx;
	struct db_phase_share p = {
		.host = text(st, 0),
		.build_id = sqlite3_column_int64(st, 1),
		.targeting = text(st, 2),
		.variant = text(st, 3),
		.n = sqlite3_column_int64(st, 4),
		.total_ns = sqlite3_column_double(st, 10),
	};
	int i;

	/* Samples without the last phase did not measure phases. */
	if (sqlite3_column_type(st, 9) == SQLITE_NULL)
		return 0;
	for (i = 0; i < DB_PHASES; i++)
		p.ns[i] = sqlite3_column_double(st, 5 + i);
	return c->fn(c->arg, &p);
}

int
db_phase_shares(sqlite3 *h, int64_t run_id,
    int (*fn)(void *arg, const struct db_phase_share *p), void *arg,
    struct so_err *err)
{
	struct phase_ctx c = { fn, arg };

	return each_row(h, "SELECT s.host, s.build_id, "
	    "b.targeting, s.variant, COUNT(DISTINCT s.id), "
	    "SUM(CASE WHEN m.name = ?2 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?3 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?4 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?5 THEN m.value END), "
	    "SUM(CASE WHEN m.name = ?6 THEN m.value END), "
	    "(SELECT SUM(x.ns) FROM samples x WHERE x.run_id = s.run_id AND "
	    "x.host = s.host AND x.build_id = s.build_id AND "
	    "x.variant = s.variant AND x.valid = 1 AND EXISTS (SELECT 1 FROM "
	    "sample_metrics y WHERE y.sample_id = x.id AND y.name = ?6)) "
	    "FROM samples s JOIN sample_metrics m ON m.sample_id = s.id "
	    "LEFT JOIN builds b ON b.id = s.build_id "
	    "WHERE s.run_id = ?1 AND s.valid = 1 "
	    "GROUP BY s.host, s.build_id, s.variant "
	    "ORDER BY s.host, s.variant, s.build_id", run_id, 1, phase_row, &c,
	    err);
}

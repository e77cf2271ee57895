/*
 * The report's per-build queries (db-report.h): rates per build,
 * native/default ratios, phase sums and the paired samples of a run's
 * builds.  Part of the report's storage side, on its read snapshot.
 */
#include "db-report.h"

#include <stdlib.h>
#include <string.h>

static int
failed(sqlite3 *h, const char *what, struct so_err *err)
{
	return so_error(err, SO_EDB, "report: cannot read %s: %s", what,
	    sqlite3_errmsg(h));
}

static const char *
text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/*
 * Prepare sql with ?1 bound to run_id, run fn on each row; 0 or SO_EDB
 * naming what.
 */
static int
each(sqlite3 *h, const char *sql, int64_t run_id, const char *what,
    void (*fn)(sqlite3_stmt *st, void *arg), void *arg, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		if ((rc = sqlite3_step(st)) == SQLITE_ROW)
			fn(st, arg);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : failed(h, what, err);
}

struct rate_arg {
	void	(*fn)(const struct db_build_rate *b, void *arg);
	void	 *arg;
};

static void
rate_row(sqlite3_stmt *st, void *arg)
{
	const struct rate_arg *a = arg;
	struct db_build_rate b = {
		.host = text(st, 0), .build_id = sqlite3_column_int64(st, 1),
		.compiler = text(st, 2), .targeting = text(st, 3),
		.variant = text(st, 4), .n = sqlite3_column_int64(st, 5),
		.median = sqlite3_column_double(st, 6),
		.min = sqlite3_column_double(st, 7),
		.max = sqlite3_column_double(st, 8),
	};

	a->fn(&b, a->arg);
}

int
db_report_build_rates(sqlite3 *h, int64_t run_id,
    void (*fn)(const struct db_build_rate *b, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "SELECT s.host, s.build_id, b.compiler, b.targeting, s.variant,"
	    " s.n, s.median_rate, s.min_rate, s.max_rate FROM summary s"
	    " JOIN builds b ON b.id = s.build_id"
	    " WHERE s.run_id = ?1 AND b.targeting IS NOT NULL"
	    " ORDER BY s.host, s.variant, b.compiler, b.targeting";
	struct rate_arg a = { fn, arg };

	return each(h, sql, run_id, "builds and phases", rate_row, &a, err);
}

struct targeting_arg {
	void	(*fn)(const struct db_targeting *t, void *arg);
	void	 *arg;
};

static void
targeting_row(sqlite3_stmt *st, void *arg)
{
	const struct targeting_arg *a = arg;
	struct db_targeting t = {
		.host = text(st, 0), .compiler = text(st, 1),
		.variant = text(st, 2),
		.ratio = sqlite3_column_double(st, 3),
		.native_min = sqlite3_column_double(st, 4),
		.native_max = sqlite3_column_double(st, 5),
		.default_min = sqlite3_column_double(st, 6),
		.default_max = sqlite3_column_double(st, 7),
	};

	a->fn(&t, a->arg);
}

int
db_report_targeting(sqlite3 *h, int64_t run_id,
    void (*fn)(const struct db_targeting *t, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "SELECT n.host, bn.compiler, n.variant,"
	    " n.median_rate / d.median_rate, n.min_rate, n.max_rate,"
	    " d.min_rate, d.max_rate FROM summary n"
	    " JOIN builds bn ON bn.id = n.build_id AND bn.targeting = 'native'"
	    " JOIN summary d ON d.run_id = n.run_id AND d.host = n.host AND"
	    " d.variant = n.variant"
	    " JOIN builds bd ON bd.id = d.build_id AND"
	    " bd.targeting = 'default' AND bd.compiler = bn.compiler"
	    " WHERE n.run_id = ?1 ORDER BY n.host, n.variant, bn.compiler";
	struct targeting_arg a = { fn, arg };

	return each(h, sql, run_id, "builds and phases", targeting_row, &a,
	    err);
}

struct phase_arg {
	void	(*fn)(const struct db_phase_sum *p, void *arg);
	void	 *arg;
};

static void
phase_row(sqlite3_stmt *st, void *arg)
{
	const struct phase_arg *a = arg;
	struct db_phase_sum p = {
		.host = text(st, 0), .build_id = sqlite3_column_int64(st, 1),
		.targeting = text(st, 2), .variant = text(st, 3),
		.name = text(st, 4), .n = sqlite3_column_int64(st, 5),
		.value = sqlite3_column_double(st, 6),
		.ns = sqlite3_column_double(st, 7),
		.first = sqlite3_column_int64(st, 8),
	};

	a->fn(&p, a->arg);
}

/*
 * The scan starts from the metrics of the run's span of sample ids (two
 * probes of samples_run_id), so a run without metrics costs nothing and
 * one with them costs its metrics, never a pass over its samples.
 */
int
db_report_phases(sqlite3 *h, int64_t run_id,
    void (*fn)(const struct db_phase_sum *p, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "SELECT s.host, s.build_id, b.targeting, s.variant, m.name,"
	    " COUNT(*), SUM(m.value), SUM(s.ns), MIN(m.rowid)"
	    " FROM sample_metrics m CROSS JOIN samples s ON s.id = m.sample_id"
	    " LEFT JOIN builds b ON b.id = s.build_id"
	    " WHERE m.sample_id BETWEEN (SELECT MIN(id) FROM samples"
	    " WHERE run_id = ?1) AND (SELECT MAX(id) FROM samples"
	    " WHERE run_id = ?1) AND s.run_id = ?1 AND s.valid = 1"
	    " AND s.warmup = 0"
	    " AND substr(m.name, 1, 6) = 'phase_'"
	    " GROUP BY s.host, s.build_id, s.variant, m.name"
	    " ORDER BY s.host, s.variant, s.build_id, m.name";
	struct phase_arg a = { fn, arg };

	return each(h, sql, run_id, "builds and phases", phase_row, &a, err);
}

/*
 * Every pair of samples of two ok builds of a host with the same variant,
 * index and steps, both valid.  The pairs of the run's builds come first
 * (pb), so that b's sample is one lookup in the UNIQUE index of samples
 * with every column fixed; with b.build_id < a.build_id in the join
 * itself, SQLite scanned every earlier build's sample of the cell for
 * each sample, quadratic within a cell (30 s for a 40k-sample run with
 * two builds a host).  DISTINCT (the pairs are distinct anyway) keeps
 * SQLite from flattening pb into the join, which brings that range back
 * as b.build_id < x.id.  The baseline of a host is its first ok build at
 * the default targeting (or at none): the first compiler's.  The last
 * column is a's window less b's (samples.window_id, the agent launch
 * that took the sample; NULL, as 0, in runs stored before it): a build a
 * resume measured, or a --max-cv run's before protocol 13 (one after the
 * other), stands apart from the samples of the same index taken in
 * another window.
 */
static const char pairs_sql[] =
    "WITH base AS (SELECT host, MIN(id) AS id FROM builds WHERE "
    "run_id = ?1 AND status = 'ok' AND (targeting IS NULL OR "
    "targeting = 'default') GROUP BY host), "
    "pb AS (SELECT DISTINCT x.host, x.id AS a_id, x.compiler AS ac, "
    "x.targeting AS at, y.id AS b_id, y.compiler AS bc, "
    "y.targeting AS bt FROM builds x "
    "JOIN builds y ON y.run_id = ?1 AND y.host = x.host AND y.id < x.id "
    "WHERE x.run_id = ?1) "
    "SELECT a.host, a.variant, pb.a_id, pb.b_id, pb.ac, pb.at, pb.bc, "
    "pb.bt, "
    "pb.b_id = (SELECT id FROM base WHERE base.host = a.host), "
    "CAST(b.ns AS REAL) / a.ns, "
    "COALESCE(a.window_id, 0) - COALESCE(b.window_id, 0) "
    "FROM pb JOIN samples a ON a.run_id = ?1 AND a.host = pb.host AND "
    "a.build_id = pb.a_id "
    "JOIN samples b ON b.run_id = ?1 AND b.host = pb.host AND "
    "b.build_id = pb.b_id AND b.study = a.study AND "
    "b.variant = a.variant AND b.sample_index = a.sample_index AND "
    "b.steps = a.steps AND b.valid = 1 AND b.ns > 0 AND b.warmup = 0 "
    "WHERE a.valid = 1 AND a.ns > 0 AND a.warmup = 0 "
    "ORDER BY a.host, a.variant, pb.a_id, pb.b_id, 10";

static void
flush_pair(struct db_pair_row *r, double *ratios, size_t n,
    void (*fn)(const struct db_pair_row *r, void *arg), void *arg)
{
	if (n == 0 && r->a_later == 0 && r->b_later == 0)
		return;
	r->n = n;
	r->ratios = ratios;
	fn(r, arg);
}

int
db_report_pairs(sqlite3 *h, int64_t run_id,
    void (*fn)(const struct db_pair_row *r, void *arg), void *arg,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_pair_row cur = { 0 };
	char *host = NULL, *variant = NULL, *ac = NULL, *at = NULL;
	char *bc = NULL, *bt = NULL;
	double *ratios = NULL;
	size_t n = 0, cap = 0;
	int rc;

	rc = sqlite3_prepare_v2(h, pairs_sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		rc = SQLITE_ROW;
	}
	while (rc == SQLITE_ROW && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *rh = text(st, 0), *rv = text(st, 1);
		int64_t a = sqlite3_column_int64(st, 2);
		int64_t b = sqlite3_column_int64(st, 3), later;

		if (host == NULL || strcmp(host, rh) != 0 ||
		    strcmp(variant, rv) != 0 || a != cur.a_id ||
		    b != cur.b_id) {
			flush_pair(&cur, ratios, n, fn, arg);
			n = 0;
			cur.a_later = cur.b_later = 0;
#define COPY(dst, col) do { free(dst); dst = text(st, col) ? \
	xstrdup(text(st, col)) : NULL; } while (0)
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
		later = sqlite3_column_int64(st, 10);
		if (later != 0) {
			*(later > 0 ? &cur.a_later : &cur.b_later) += 1;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			ratios = xrealloc(ratios, cap * sizeof *ratios);
		}
		ratios[n++] = sqlite3_column_double(st, 9);
	}
	if (rc == SQLITE_DONE)
		flush_pair(&cur, ratios, n, fn, arg);
	sqlite3_finalize(st);
	free(ratios);
	free(host);
	free(variant);
	free(ac);
	free(at);
	free(bc);
	free(bt);
	return rc == SQLITE_DONE ? 0 : failed(h, "paired samples", err);
}

/* Per-build rates, targeting ratios and phase shares (report-builds.h). */
#include "report-builds.h"

#include "report.h"

#include <string.h>

static int
failed(sqlite3 *db, struct so_err *err)
{
	return so_error(err, SO_EDB, "report: cannot read builds and phases: "
	    "%s", sqlite3_errmsg(db));
}

static const char *
text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s != NULL ? (const char *)s : "-";
}

/* H/s of each host, build and variant, for runs with targeted builds. */
static int
rates(sqlite3 *db, int64_t run_id, FILE *out, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char med[16], lo[16], hi[16];
	int rc, any = 0;

	rc = sqlite3_prepare_v2(db, "SELECT s.host, s.build_id, b.compiler, "
	    "b.targeting, s.variant, s.n, s.median_rate, s.min_rate, "
	    "s.max_rate FROM summary s JOIN builds b ON b.id = s.build_id "
	    "WHERE s.run_id = ? AND b.targeting IS NOT NULL "
	    "ORDER BY s.host, s.variant, b.compiler, b.targeting", -1, &st,
	    NULL);
	if (rc != SQLITE_OK)
		return failed(db, err);
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!any)
			fprintf(out, "\nrates per build\n  %-16s %6s %-10s "
			    "%-9s %-10s %4s %10s %10s %10s\n", "host", "build",
			    "compiler", "targeting", "variant", "n", "median/s",
			    "min/s", "max/s");
		any = 1;
		report_format_rate(sqlite3_column_double(st, 6), med,
		    sizeof med);
		report_format_rate(sqlite3_column_double(st, 7), lo, sizeof lo);
		report_format_rate(sqlite3_column_double(st, 8), hi, sizeof hi);
		fprintf(out, "  %-16.16s %6lld %-10.10s %-9.9s %-10.10s %4lld "
		    "%10s %10s %10s\n", text(st, 0),
		    (long long)sqlite3_column_int64(st, 1), text(st, 2),
		    text(st, 3), text(st, 4),
		    (long long)sqlite3_column_int64(st, 5), med, lo, hi);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : failed(db, err);
}

/*
 * native / default of the median rates, per host, compiler and variant.
 * The verdict compares the spreads: ranges that overlap are within the
 * noise of this run; otherwise one targeting is faster in every sample.
 */
static int
ratios(sqlite3 *db, int64_t run_id, FILE *out, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, any = 0;

	rc = sqlite3_prepare_v2(db, "SELECT n.host, bn.compiler, n.variant, "
	    "n.median_rate / d.median_rate, n.min_rate, n.max_rate, "
	    "d.min_rate, d.max_rate FROM summary n "
	    "JOIN builds bn ON bn.id = n.build_id AND bn.targeting = 'native' "
	    "JOIN summary d ON d.run_id = n.run_id AND d.host = n.host AND "
	    "d.variant = n.variant "
	    "JOIN builds bd ON bd.id = d.build_id AND "
	    "bd.targeting = 'default' AND bd.compiler = bn.compiler "
	    "WHERE n.run_id = ? ORDER BY n.host, n.variant, bn.compiler", -1,
	    &st, NULL);
	if (rc != SQLITE_OK)
		return failed(db, err);
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double nlo = sqlite3_column_double(st, 4);
		double nhi = sqlite3_column_double(st, 5);
		double dlo = sqlite3_column_double(st, 6);
		double dhi = sqlite3_column_double(st, 7);
		const char *verdict = nlo > dhi ? "native faster in every "
		    "sample" : nhi < dlo ? "native slower in every sample" :
		    "within noise (ranges overlap)";

		if (!any)
			fprintf(out, "\nnative / default targeting\n  %-16s "
			    "%-10s %-10s %7s  %s\n", "host", "compiler",
			    "variant", "ratio", "verdict");
		any = 1;
		fprintf(out, "  %-16.16s %-10.10s %-10.10s %7.3f  %s\n",
		    text(st, 0), text(st, 1), text(st, 2),
		    sqlite3_column_double(st, 3), verdict);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : failed(db, err);
}

/*
 * Each phase's share of the hashing time: its ns over the samples' ns,
 * summed over the valid samples of a host, build and variant.  The
 * phases include "other", so a row adds up to 100%.
 */
static int
phases(sqlite3 *db, int64_t run_id, FILE *out, struct so_err *err)
{
	static const char *const names[] = { "phase_proggen",
	    "phase_compile", "phase_execute", "phase_mprotect",
	    "phase_other" };
	sqlite3_stmt *st = NULL;
	int rc, any = 0, i;

	rc = sqlite3_prepare_v2(db, "SELECT s.host, s.build_id, "
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
	    "ORDER BY s.host, s.variant, s.build_id", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return failed(db, err);
	sqlite3_bind_int64(st, 1, run_id);
	for (i = 0; i < 5; i++)
		sqlite3_bind_text(st, i + 2, names[i], -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double total = sqlite3_column_double(st, 10), sum = 0;

		if (sqlite3_column_type(st, 9) == SQLITE_NULL || !(total > 0))
			continue;
		if (!any)
			fprintf(out, "\nphase shares of hashing time (sum over "
			    "valid samples)\n  %-16s %6s %-9s %-10s %3s %7s "
			    "%7s %7s %7s %7s %7s\n", "host", "build",
			    "targeting", "variant", "n", "proggen", "compile",
			    "execute", "mprotect", "other", "total");
		any = 1;
		fprintf(out, "  %-16.16s %6lld %-9.9s %-10.10s %3lld",
		    text(st, 0), (long long)sqlite3_column_int64(st, 1),
		    text(st, 2), text(st, 3),
		    (long long)sqlite3_column_int64(st, 4));
		for (i = 0; i < 5; i++) {
			double v = sqlite3_column_double(st, 5 + i);

			sum += v;
			fprintf(out, " %6.2f%%", 100 * v / total);
		}
		fprintf(out, " %6.2f%%\n", 100 * sum / total);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : failed(db, err);
}

int
report_builds_text(sqlite3 *db, int64_t run_id, FILE *out,
    struct so_err *err)
{
	int rc;

	if ((rc = rates(db, run_id, out, err)) == 0 &&
	    (rc = ratios(db, run_id, out, err)) == 0)
		rc = phases(db, run_id, out, err);
	return rc;
}

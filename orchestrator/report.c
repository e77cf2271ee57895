/*
 * The report.  Each selected run is first loaded from results.db into a
 * small model (struct rrun), and both renderings, text and JSON, are
 * written from that model, so they always show the same numbers.
 */
#include "report.h"
#include "study.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * Invalid samples and events listed one by one; past these only a count
 * is shown (the coordinator logs an error event per invalid sample, so a
 * broken variant could otherwise bury the table).  JSON lists them all.
 */
#define INVALID_LIST_MAX 10
#define EVENT_LIST_MAX 20
#define EVENT_TEXT_MAX 400	/* characters of an event's message */
/*
 * A sample's clock moved when its estimates before and after differ by
 * more than this percentage of the larger: its cycles are less certain.
 */
#define CLOCK_MOVED_PCT 10
#define STR(x) STR_(x)
#define STR_(x) #x

/* Every text line fits a terminal this wide. */
#define REPORT_COLUMNS 100

/* How a row's final digests compare with the rest of the run. */
enum {
	DIGEST_NONE,		/* no valid sample to compare */
	DIGEST_OK,		/* one digest per steps value, run-wide */
	DIGEST_MISMATCH,
};

struct rbuild {
	int64_t		 id;
	char		*host;
	char		*compiler;
	char		*compiler_version;
	char		*cflags;
	char		*native;
	char		*status;
};

/* One (variant, host, build) of the run: a row of the table. */
struct rrow {
	char		*variant;
	char		*host;
	int64_t		 build_id;
	const char	*compiler;	/* the build's, NULL if it has no row */
	char		*label;		/* compiler, made unique per host */
	int64_t		 n;		/* valid samples */
	int64_t		 invalid;	/* samples with valid = 0 */
	double		 median, min, max;	/* over valid samples */
	int		 digest;
	double		 calib_mhz;	/* the host's; 0 = unknown */
	double		 cycles;	/* median of the samples'; 0 = unknown */
	int64_t		 moved;		/* valid samples whose clock moved */
	int64_t		 counted;	/* valid samples with counter cycles */
	double		 pcycles, ipc;	/* their medians; 0 = none */
	char		*csrc;		/* their source: pmu, test-seam */
};

struct rhost {
	char		*name;
	char		*status;	/* NULL: samples but no run_hosts row */
	char		*error;
	int		 has_pin_cpu;
	int64_t		 pin_cpu;
	int		 pinned;	/* 1, 0, or -1 when not recorded */
	char		*pin_error;
	char		*governor;
	char		*openssl;
	double		 calib_mhz;	/* 0 = unknown */
	char		*cpu_choice;	/* cpu = "auto": why this cpu */
	char		*counters;	/* pmu, test-seam, none; NULL: older */
	char		*counters_error;
	int64_t		 windows, noisy;	/* windows; noisy preflights */
	const struct rrow *best;	/* fastest valid row, NULL if none */
};

/* Run-wide digest agreement for one steps value. */
struct rdigest {
	int64_t		 steps;
	int64_t		 n;		/* valid samples */
	int64_t		 distinct;	/* distinct final digests among them */
	char		*digest;	/* the smallest of them */
};

struct rinvalid {
	char		*host;
	char		*variant;
	int64_t		 build_id;
	char		*label;
	int64_t		 index;
	char		*reason;
};

/* A variant that did not run (table `variants`, status other than ok). */
struct rvariant {
	char		*host;
	char		*variant;
	int64_t		 build_id;
	char		*label;
	char		*status;
	char		*reason;
};

struct revent {
	char		*host;
	char		*at;
	char		*level;
	char		*message;
};

struct rrun {
	int64_t		 id;
	char		*study;
	char		*status;
	char		*started_at;
	char		*finished_at;
	char		*command;
	char		*seed;
	int64_t		 steps;
	int64_t		 samples;
	int		 exploratory;
	int		 several_builds;	/* some host has > 1 build */
	int		 any_calib;
	int		 any_counted;	/* some row has counter cycles */
	int		 any_verdict;	/* some window has a preflight */
	int64_t		 moved;		/* valid samples whose clock moved */
	int64_t		 clocked;	/* valid samples with both estimates */

	struct rhost	*hosts;
	size_t		 nhosts;
	struct rbuild	*builds;
	size_t		 nbuilds;
	struct rrow	*rows;
	size_t		 nrows;
	struct rdigest	*digests;
	size_t		 ndigests;
	struct rinvalid	*invalid;
	size_t		 ninvalid;
	struct rvariant	*variants;
	size_t		 nvariants;
	struct revent	*events;
	size_t		 nevents;

	const struct rhost **ranked;	/* hosts with a best row, fastest first */
	size_t		 nranked;
};

/*
 * Grow array of n elements by one zeroed element and return it (moved);
 * the caller then takes &array[n++].
 */
static void *
grow(void *array, size_t n, size_t size)
{
	array = xrealloc(array, (n + 1) * size);
	memset((char *)array + n * size, 0, size);
	return array;
}

static char *
col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s == NULL ? NULL : xstrdup((const char *)s);
}

static double
col_double(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 :
	    sqlite3_column_double(st, i);
}

static int
db_failed(sqlite3 *db, const char *what, struct so_err *err)
{
	return so_error(err, SO_EDB, "cannot read %s: %s", what,
	    sqlite3_errmsg(db));
}

/*
 * Prepare sql and bind ?1 to run_id and ?2 to study where the statement
 * has them.
 */
static int
prepare(sqlite3 *db, const char *sql, const char *what, int64_t run_id,
    const char *study, sqlite3_stmt **st, struct so_err *err)
{
	int np;

	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return db_failed(db, what, err);
	np = sqlite3_bind_parameter_count(*st);
	if ((np >= 1 && sqlite3_bind_int64(*st, 1, run_id) != SQLITE_OK) ||
	    (np >= 2 && sqlite3_bind_text(*st, 2, study, -1,
	    SQLITE_STATIC) != SQLITE_OK)) {
		db_failed(db, what, err);
		sqlite3_finalize(*st);
		*st = NULL;
		return SO_EDB;
	}
	return 0;
}

void
report_format_rate(double rate, char *buf, size_t len)
{
	static const char *const suffix[] = { "", "k", "M", "G", "T" };
	size_t i = 0;
	int decimals;

	if (!(rate > 0) || !isfinite(rate)) {
		snprintf(buf, len, "-");
		return;
	}
	/* 999.96k must become 1.000M, not "1000.0k". */
	while (rate >= 999.95 && i + 1 < sizeof suffix / sizeof *suffix) {
		rate /= 1000;
		i++;
	}
	decimals = rate < 9.9995 ? 3 : rate < 99.995 ? 2 : 1;
	snprintf(buf, len, "%.*f%s", decimals, rate, suffix[i]);
}

/* ns per hash with four significant digits for fast and slow kernels. */
static void
format_ns(double rate, char *buf, size_t len)
{
	double ns;

	if (!(rate > 0) || !isfinite(rate)) {
		snprintf(buf, len, "-");
		return;
	}
	ns = 1e9 / rate;
	snprintf(buf, len, "%.*f", ns < 9.9995 ? 3 : ns < 99.995 ? 2 : 1, ns);
}

static void
free_run(struct rrun *r)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		free(r->hosts[i].name);
		free(r->hosts[i].status);
		free(r->hosts[i].error);
		free(r->hosts[i].pin_error);
		free(r->hosts[i].governor);
		free(r->hosts[i].openssl);
		free(r->hosts[i].cpu_choice);
		free(r->hosts[i].counters);
		free(r->hosts[i].counters_error);
	}
	for (i = 0; i < r->nbuilds; i++) {
		free(r->builds[i].host);
		free(r->builds[i].compiler);
		free(r->builds[i].compiler_version);
		free(r->builds[i].cflags);
		free(r->builds[i].native);
		free(r->builds[i].status);
	}
	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].variant);
		free(r->rows[i].host);
		free(r->rows[i].label);
		free(r->rows[i].csrc);
	}
	for (i = 0; i < r->ndigests; i++)
		free(r->digests[i].digest);
	for (i = 0; i < r->ninvalid; i++) {
		free(r->invalid[i].host);
		free(r->invalid[i].variant);
		free(r->invalid[i].label);
		free(r->invalid[i].reason);
	}
	for (i = 0; i < r->nvariants; i++) {
		free(r->variants[i].host);
		free(r->variants[i].variant);
		free(r->variants[i].label);
		free(r->variants[i].status);
		free(r->variants[i].reason);
	}
	for (i = 0; i < r->nevents; i++) {
		free(r->events[i].host);
		free(r->events[i].at);
		free(r->events[i].level);
		free(r->events[i].message);
	}
	free(r->hosts);
	free(r->builds);
	free(r->rows);
	free(r->digests);
	free(r->invalid);
	free(r->variants);
	free(r->events);
	free(r->ranked);
	free(r->study);
	free(r->status);
	free(r->started_at);
	free(r->finished_at);
	free(r->command);
	free(r->seed);
	memset(r, 0, sizeof *r);
}

static int
load_header(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT study, status, started_at, finished_at, command, seed,"
	    " steps, samples_per_variant, exploratory"
	    " FROM runs WHERE id = ?1";
	sqlite3_stmt *st;
	int rc, ret = 0;

	if ((ret = prepare(db, sql, "runs", r->id, NULL, &st, err)) != 0)
		return ret;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		r->study = col_dup(st, 0);
		r->status = col_dup(st, 1);
		r->started_at = col_dup(st, 2);
		r->finished_at = col_dup(st, 3);
		r->command = col_dup(st, 4);
		r->seed = col_dup(st, 5);
		r->steps = sqlite3_column_int64(st, 6);
		r->samples = sqlite3_column_int64(st, 7);
		r->exploratory = sqlite3_column_int(st, 8) != 0;
	} else if (rc == SQLITE_DONE)
		ret = so_error(err, SO_ENOTFOUND, "run %" PRId64 " vanished "
		    "while reading it", r->id);
	else
		ret = db_failed(db, "runs", err);
	sqlite3_finalize(st);
	return ret;
}

/*
 * Hosts of the run: those with a run_hosts row plus any that only left
 * samples.  Without a calibration in the facts, fall back to the samples'.
 */
static int
load_hosts(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT h.host, rh.status, rh.error, rh.pin_cpu, rh.pinned,"
	    " rh.pin_error, rh.governor, rh.openssl,"
	    " COALESCE(NULLIF(rh.calib_mhz, 0), (SELECT AVG(s.calib_mhz)"
	    "  FROM samples s WHERE s.run_id = ?1 AND s.host = h.host"
	    "  AND s.calib_mhz > 0)),"
	    " rh.cpu_choice, rh.counters, rh.counters_error,"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = h.host AND w.verdict IS NOT NULL),"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = h.host AND w.verdict = 'noisy')"
	    " FROM (SELECT host FROM run_hosts WHERE run_id = ?1"
	    "  UNION SELECT host FROM samples WHERE run_id = ?1) h"
	    " LEFT JOIN run_hosts rh ON rh.run_id = ?1 AND rh.host = h.host"
	    " ORDER BY h.host";
	sqlite3_stmt *st;
	struct rhost *h;
	int rc, ret;

	if ((ret = prepare(db, sql, "run_hosts", r->id, NULL, &st, err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->hosts = grow(r->hosts, r->nhosts, sizeof *h);
		h = &r->hosts[r->nhosts++];
		h->name = col_dup(st, 0);
		h->status = col_dup(st, 1);
		h->error = col_dup(st, 2);
		h->has_pin_cpu = sqlite3_column_type(st, 3) != SQLITE_NULL;
		h->pin_cpu = sqlite3_column_int64(st, 3);
		h->pinned = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 :
		    sqlite3_column_int(st, 4) != 0;
		h->pin_error = col_dup(st, 5);
		h->governor = col_dup(st, 6);
		h->openssl = col_dup(st, 7);
		h->calib_mhz = col_double(st, 8);
		if (h->calib_mhz > 0)
			r->any_calib = 1;
		h->cpu_choice = col_dup(st, 9);
		h->counters = col_dup(st, 10);
		h->counters_error = col_dup(st, 11);
		h->windows = sqlite3_column_int64(st, 12);
		h->noisy = sqlite3_column_int64(st, 13);
		if (h->windows > 0)
			r->any_verdict = 1;
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "run_hosts", err);
	sqlite3_finalize(st);
	return ret;
}

static int
load_builds(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT id, host, compiler, compiler_version, cflags, native,"
	    " status FROM builds WHERE run_id = ?1 ORDER BY host, id";
	sqlite3_stmt *st;
	struct rbuild *b;
	int rc, ret;

	if ((ret = prepare(db, sql, "builds", r->id, NULL, &st, err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->builds = grow(r->builds, r->nbuilds, sizeof *b);
		b = &r->builds[r->nbuilds++];
		b->id = sqlite3_column_int64(st, 0);
		b->host = col_dup(st, 1);
		b->compiler = col_dup(st, 2);
		b->compiler_version = col_dup(st, 3);
		b->cflags = col_dup(st, 4);
		b->native = col_dup(st, 5);
		b->status = col_dup(st, 6);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "builds", err);
	sqlite3_finalize(st);
	return ret;
}

/*
 * How a build is named in rows: its compiler, or "compiler#id" when the
 * same host has two builds with that compiler (say, different cflags).
 * Caller frees.
 */
static const struct rbuild *
find_build(const struct rrun *r, int64_t build_id)
{
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		if (r->builds[i].id == build_id)
			return &r->builds[i];
	}
	return NULL;
}

static char *
build_label(const struct rrun *r, const char *host, int64_t build_id)
{
	const struct rbuild *b = find_build(r, build_id);
	size_t i;

	if (b == NULL)
		return xasprintf("build#%" PRId64, build_id);
	for (i = 0; i < r->nbuilds; i++) {
		if (r->builds[i].id != build_id &&
		    strcmp(r->builds[i].host, host) == 0 &&
		    strcmp(r->builds[i].compiler, b->compiler) == 0)
			return xasprintf("%s#%" PRId64, b->compiler, build_id);
	}
	return xstrdup(b->compiler);
}

static const struct rhost *
find_host(const struct rrun *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		if (strcmp(r->hosts[i].name, name) == 0)
			return &r->hosts[i];
	}
	return NULL;
}

/*
 * One row per (variant, host, build) that left any sample.
 *
 * cycles is the median over valid samples of each sample's cycles per
 * hash, at the mean of the clock estimates taken just before and just
 * after it; a sample whose two estimates differ by more than
 * CLOCK_MOVED_PCT counts as moved.
 *
 * n, median, min and max are computed exactly as the schema's summary
 * view computes them, but over this run's samples only: SQLite (3.40)
 * does not push "WHERE run_id = ?" through the view's GROUP BY into its
 * window, so reading the view costs a pass over every sample ever stored.
 * test_report.c checks that both agree.
 *
 * A row's digest is ok when its valid samples end in one digest per steps
 * value and so does the whole run, so a variant that computes something
 * else shows even if its samples were wrongly marked valid.
 */
static int
load_rows(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "WITH d AS (SELECT steps, COUNT(DISTINCT digest) AS nd"
	    "  FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 1"
	    "  GROUP BY steps),"
	    " v AS (SELECT variant, host, build_id, steps * 1e9 / ns AS rate,"
	    "  ROW_NUMBER() OVER w AS rn,"
	    "  COUNT(*) OVER (PARTITION BY variant, host, build_id) AS cnt"
	    "  FROM samples"
	    "  WHERE run_id = ?1 AND study = ?2 AND valid = 1 AND ns > 0"
	    "  WINDOW w AS (PARTITION BY variant, host, build_id"
	    "   ORDER BY steps * 1e9 / ns)),"
	    " m AS (SELECT variant, host, build_id, MAX(cnt) AS n,"
	    "  AVG(CASE WHEN rn IN ((cnt + 1) / 2, (cnt + 2) / 2)"
	    "   THEN rate END) AS median, MIN(rate) AS lo, MAX(rate) AS hi"
	    "  FROM v GROUP BY variant, host, build_id),"
	    " c AS (SELECT variant, host, build_id, cyc,"
	    "  ROW_NUMBER() OVER (PARTITION BY variant, host, build_id"
	    "   ORDER BY cyc) AS rn,"
	    "  COUNT(*) OVER (PARTITION BY variant, host, build_id) AS cnt"
	    "  FROM (SELECT variant, host, build_id, ns * (calib_mhz +"
	    "   COALESCE(NULLIF(calib_after_mhz, 0), calib_mhz)) / 2000.0"
	    "   / steps AS cyc FROM samples WHERE run_id = ?1 AND study = ?2"
	    "   AND valid = 1 AND ns > 0 AND calib_mhz > 0)),"
	    " cm AS (SELECT variant, host, build_id, AVG(CASE WHEN rn IN"
	    "  ((cnt + 1) / 2, (cnt + 2) / 2) THEN cyc END) AS cycles"
	    "  FROM c GROUP BY variant, host, build_id),"
	    " p AS (SELECT variant, host, build_id, cyc, ipc, src,"
	    "  ROW_NUMBER() OVER (PARTITION BY variant, host, build_id"
	    "   ORDER BY cyc) AS rn,"
	    "  ROW_NUMBER() OVER (PARTITION BY variant, host, build_id"
	    "   ORDER BY ipc) AS rn2,"
	    "  COUNT(*) OVER (PARTITION BY variant, host, build_id) AS cnt"
	    "  FROM (SELECT variant, host, build_id, cycles * 1.0 / steps AS"
	    "   cyc, instructions * 1.0 / cycles AS ipc, cycles_source AS src"
	    "   FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 1"
	    "   AND cycles > 0)),"
	    " pm AS (SELECT variant, host, build_id, MAX(cnt) AS n,"
	    "  AVG(CASE WHEN rn IN ((cnt + 1) / 2, (cnt + 2) / 2)"
	    "   THEN cyc END) AS cycles,"
	    "  AVG(CASE WHEN rn2 IN ((cnt + 1) / 2, (cnt + 2) / 2)"
	    "   THEN ipc END) AS ipc, MAX(src) AS src"
	    "  FROM p GROUP BY variant, host, build_id),"
	    " g AS (SELECT s.variant, s.host, s.build_id,"
	    "  SUM(s.valid = 0) AS invalid,"
	    "  COUNT(DISTINCT CASE WHEN s.valid = 1 THEN s.steps END) AS vsteps,"
	    "  COUNT(DISTINCT CASE WHEN s.valid = 1"
	    "   THEN s.steps || ' ' || s.digest END) AS vdigests,"
	    "  MAX(CASE WHEN s.valid = 1 THEN d.nd END) AS run_digests,"
	    "  SUM(s.valid = 1 AND s.calib_mhz > 0 AND s.calib_after_mhz > 0)"
	    "   AS clocked,"
	    "  SUM(s.valid = 1 AND s.calib_mhz > 0 AND s.calib_after_mhz > 0"
	    "   AND ABS(s.calib_after_mhz - s.calib_mhz) * 100 > "
	    STR(CLOCK_MOVED_PCT) " * MAX(s.calib_mhz, s.calib_after_mhz))"
	    "   AS moved"
	    "  FROM samples s LEFT JOIN d ON d.steps = s.steps"
	    "  WHERE s.run_id = ?1 AND s.study = ?2"
	    "  GROUP BY s.variant, s.host, s.build_id)"
	    " SELECT g.variant, g.host, g.build_id, g.invalid, g.vsteps,"
	    "  g.vdigests, g.run_digests, COALESCE(m.n, 0), m.median, m.lo,"
	    "  m.hi, cm.cycles, g.clocked, g.moved, pm.n, pm.cycles, pm.ipc,"
	    "  pm.src"
	    " FROM g LEFT JOIN m ON m.variant = g.variant AND m.host = g.host"
	    "  AND m.build_id = g.build_id"
	    " LEFT JOIN cm ON cm.variant = g.variant AND cm.host = g.host"
	    "  AND cm.build_id = g.build_id"
	    " LEFT JOIN pm ON pm.variant = g.variant AND pm.host = g.host"
	    "  AND pm.build_id = g.build_id"
	    " ORDER BY g.variant, g.host, g.build_id";
	sqlite3_stmt *st;
	struct rrow *w;
	const struct rhost *h;
	const struct rbuild *b;
	int64_t vsteps, vdigests, run_digests;
	int rc, ret;

	if ((ret = prepare(db, sql, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->rows = grow(r->rows, r->nrows, sizeof *w);
		w = &r->rows[r->nrows++];
		w->variant = col_dup(st, 0);
		w->host = col_dup(st, 1);
		w->build_id = sqlite3_column_int64(st, 2);
		w->invalid = sqlite3_column_int64(st, 3);
		vsteps = sqlite3_column_int64(st, 4);
		vdigests = sqlite3_column_int64(st, 5);
		run_digests = sqlite3_column_int64(st, 6);
		w->n = sqlite3_column_int64(st, 7);
		w->median = col_double(st, 8);
		w->min = col_double(st, 9);
		w->max = col_double(st, 10);
		w->cycles = col_double(st, 11);
		r->clocked += sqlite3_column_int64(st, 12);
		w->moved = sqlite3_column_int64(st, 13);
		r->moved += w->moved;
		w->counted = sqlite3_column_int64(st, 14);
		w->pcycles = col_double(st, 15);
		w->ipc = col_double(st, 16);
		w->csrc = col_dup(st, 17);
		if (w->cycles > 0)
			r->any_calib = 1;
		if (w->counted > 0)
			r->any_counted = r->any_calib = 1;
		if (vsteps == 0)
			w->digest = DIGEST_NONE;
		else if (vdigests == vsteps && run_digests == 1)
			w->digest = DIGEST_OK;
		else
			w->digest = DIGEST_MISMATCH;
		w->label = build_label(r, w->host, w->build_id);
		if ((b = find_build(r, w->build_id)) != NULL)
			w->compiler = b->compiler;
		if ((h = find_host(r, w->host)) != NULL)
			w->calib_mhz = h->calib_mhz;
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "samples", err);
	sqlite3_finalize(st);
	return ret;
}

static int
load_digests(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT steps, COUNT(*), COUNT(DISTINCT digest), MIN(digest)"
	    " FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 1"
	    " GROUP BY steps ORDER BY steps";
	sqlite3_stmt *st;
	struct rdigest *d;
	int rc, ret;

	if ((ret = prepare(db, sql, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->digests = grow(r->digests, r->ndigests, sizeof *d);
		d = &r->digests[r->ndigests++];
		d->steps = sqlite3_column_int64(st, 0);
		d->n = sqlite3_column_int64(st, 1);
		d->distinct = sqlite3_column_int64(st, 2);
		d->digest = col_dup(st, 3);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "samples", err);
	sqlite3_finalize(st);
	return ret;
}

static int
load_invalid(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT host, variant, build_id, sample_index, invalid_reason"
	    " FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 0"
	    " ORDER BY host, variant, build_id, sample_index";
	sqlite3_stmt *st;
	struct rinvalid *v;
	int rc, ret;

	if ((ret = prepare(db, sql, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->invalid = grow(r->invalid, r->ninvalid, sizeof *v);
		v = &r->invalid[r->ninvalid++];
		v->host = col_dup(st, 0);
		v->variant = col_dup(st, 1);
		v->build_id = sqlite3_column_int64(st, 2);
		v->label = build_label(r, v->host, v->build_id);
		v->index = sqlite3_column_int64(st, 3);
		v->reason = col_dup(st, 4);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "samples", err);
	sqlite3_finalize(st);
	return ret;
}

static int
load_variants(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT host, variant, build_id, status, reason FROM variants"
	    " WHERE run_id = ?1 AND study = ?2 AND status <> 'ok'"
	    " ORDER BY host, build_id, status, reason, variant";
	sqlite3_stmt *st;
	struct rvariant *v;
	int rc, ret;

	if ((ret = prepare(db, sql, "variants", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->variants = grow(r->variants, r->nvariants, sizeof *v);
		v = &r->variants[r->nvariants++];
		v->host = col_dup(st, 0);
		v->variant = col_dup(st, 1);
		v->build_id = sqlite3_column_int64(st, 2);
		v->label = build_label(r, v->host, v->build_id);
		v->status = col_dup(st, 3);
		v->reason = col_dup(st, 4);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "variants", err);
	sqlite3_finalize(st);
	return ret;
}

/* Warnings and errors only: info events are the run's diary. */
static int
load_events(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT host, at, level, message FROM events"
	    " WHERE run_id = ?1 AND level IN ('warning', 'error')"
	    " ORDER BY id";
	sqlite3_stmt *st;
	struct revent *e;
	int rc, ret;

	if ((ret = prepare(db, sql, "events", r->id, NULL, &st, err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->events = grow(r->events, r->nevents, sizeof *e);
		e = &r->events[r->nevents++];
		e->host = col_dup(st, 0);
		e->at = col_dup(st, 1);
		e->level = col_dup(st, 2);
		e->message = col_dup(st, 3);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "events", err);
	sqlite3_finalize(st);
	return ret;
}

static int
cmp_ranked(const void *a, const void *b)
{
	const struct rhost *x = *(const struct rhost *const *)a;
	const struct rhost *y = *(const struct rhost *const *)b;

	if (x->best->median != y->best->median)
		return x->best->median < y->best->median ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The best row per host: the highest median among rows whose digests
 * agree, whatever the compiler, as SUPERCOP picks the best implementation
 * and compiler pair.  Then rank the hosts by it for the ratios.
 */
static void
rank(struct rrun *r)
{
	struct rhost *h;
	const struct rrow *w;
	size_t i, j;
	int64_t first;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		first = -1;
		for (j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if (strcmp(w->host, h->name) != 0)
				continue;
			if (first == -1)
				first = w->build_id;
			else if (w->build_id != first)
				r->several_builds = 1;
			if (w->n == 0 || w->digest != DIGEST_OK)
				continue;
			if (h->best == NULL || w->median > h->best->median)
				h->best = w;
		}
	}
	r->ranked = xcalloc(r->nhosts, sizeof *r->ranked);
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best != NULL)
			r->ranked[r->nranked++] = &r->hosts[i];
	}
	qsort(r->ranked, r->nranked, sizeof *r->ranked, cmp_ranked);
}

static int
load_run(sqlite3 *db, int64_t id, struct rrun *r, struct so_err *err)
{
	int ret;

	memset(r, 0, sizeof *r);
	r->id = id;
	if ((ret = load_header(db, r, err)) != 0 ||
	    (ret = load_hosts(db, r, err)) != 0 ||
	    (ret = load_builds(db, r, err)) != 0 ||
	    (ret = load_rows(db, r, err)) != 0 ||
	    (ret = load_digests(db, r, err)) != 0 ||
	    (ret = load_invalid(db, r, err)) != 0 ||
	    (ret = load_variants(db, r, err)) != 0 ||
	    (ret = load_events(db, r, err)) != 0) {
		free_run(r);
		return ret;
	}
	rank(r);
	return 0;
}

/* Characters in s: UTF-8 continuation bytes do not count. */
static size_t
width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return n;
}

/* Control characters (newlines in host text) become spaces. */
static void
blank_controls(char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
	}
}

/*
 * Cut s, in place, to max characters ending in "..." if it is wider.  s
 * then has at least max + 1 characters, so at least 4 bytes follow the
 * first max - 3 characters: room for "..." and its terminator.
 */
static void
cut_cols(char *s, size_t max)
{
	size_t cols = 0;

	if (width(s) <= max)
		return;
	for (; cols < max - 3 || ((unsigned char)*s & 0xc0) == 0x80; s++)
		cols += ((unsigned char)*s & 0xc0) != 0x80;
	memcpy(s, "...", 4);
}

/*
 * Print one line of text.  Free text from hosts (agent errors, build
 * logs) may hold newlines or run long: control characters become spaces
 * and a line wider than REPORT_COLUMNS is cut to end in "...".  The
 * database and the JSON keep the whole text.
 */
static void __attribute__((format(printf, 2, 3)))
emit(FILE *out, const char *fmt, ...)
{
	va_list ap;
	char *line;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	line = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(line, (size_t)n + 1, fmt, ap);
	va_end(ap);
	blank_controls(line);
	cut_cols(line, REPORT_COLUMNS);
	fprintf(out, "%s\n", line);
	free(line);
}

/*
 * Print prefix and text over as many lines as it takes, breaking at
 * spaces, continuation lines indented under the text: the command line
 * is worth showing whole.
 */
static void
emit_wrapped(FILE *out, const char *prefix, const char *text)
{
	size_t indent = width(prefix), room = REPORT_COLUMNS - indent, cols;
	const char *p = text, *q, *space;
	int first = 1;

	while (first || *p != '\0') {
		space = NULL;
		cols = 0;
		for (q = p; *q != '\0' && cols < room; q++) {
			if (*q == ' ')
				space = q;
			cols += ((unsigned char)*q & 0xc0) != 0x80;
		}
		while (((unsigned char)*q & 0xc0) == 0x80)
			q++;
		if (*q != '\0' && *q != ' ' && space != NULL)
			q = space;
		if (first)
			emit(out, "%s%.*s", prefix, (int)(q - p), p);
		else
			emit(out, "%*s%.*s", (int)indent, "", (int)(q - p), p);
		for (p = q; *p == ' '; p++)
			;
		first = 0;
	}
}

/*
 * An event's message under its heading, wrapped: the numbers in a drift
 * warning come last.  Host text in it (build output) may be long or hold
 * newlines: newlines become spaces and the text stops at EVENT_TEXT_MAX
 * characters with "..."; the database and the JSON keep all of it.
 */
static void
emit_event(FILE *out, const char *message)
{
	char *text = xstrdup(message);

	blank_controls(text);
	cut_cols(text, EVENT_TEXT_MAX);
	emit_wrapped(out, "    ", text);
	free(text);
}

/*
 * Text tables: cells are collected first so that each column is as wide
 * as its widest cell, counted in characters (the range has an en dash).
 */
struct table {
	size_t		  ncols;
	const char	**heads;
	const char	 *align;	/* 'l' or 'r' per column */
	char		**cells;
	size_t		  ncells;
};

static void
cell(struct table *t, char *owned)
{
	t->cells = grow(t->cells, t->ncells, sizeof *t->cells);
	t->cells[t->ncells++] = owned;
}

static void
table_row(const struct table *t, const size_t *w, const char *const *cells,
    FILE *out)
{
	size_t c, n = 1, len, pad;
	char *line, *p;

	for (c = 0; c < t->ncols; c++)
		n += 2 + strlen(cells[c]) + w[c] - width(cells[c]);
	p = line = xmalloc(n);
	for (c = 0; c < t->ncols; c++) {
		len = strlen(cells[c]);
		pad = w[c] - width(cells[c]);
		/* No trailing blanks after a left-aligned last column. */
		if (c + 1 == t->ncols && t->align[c] == 'l')
			pad = 0;
		memset(p, ' ', 2);
		p += 2;
		if (t->align[c] == 'r') {
			memset(p, ' ', pad);
			p += pad;
		}
		memcpy(p, cells[c], len);
		p += len;
		if (t->align[c] == 'l') {
			memset(p, ' ', pad);
			p += pad;
		}
	}
	*p = '\0';
	emit(out, "%s", line);
	free(line);
}

static void
table_print(struct table *t, FILE *out)
{
	size_t *w = xcalloc(t->ncols, sizeof *w);
	size_t i, c;

	for (c = 0; c < t->ncols; c++)
		w[c] = width(t->heads[c]);
	for (i = 0; i < t->ncells; i++) {
		c = i % t->ncols;
		if (width(t->cells[i]) > w[c])
			w[c] = width(t->cells[i]);
	}
	table_row(t, w, t->heads, out);
	for (i = 0; i + t->ncols <= t->ncells; i += t->ncols)
		table_row(t, w, (const char *const *)&t->cells[i], out);
	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
	t->cells = NULL;
	t->ncells = 0;
}

static char *
rate_str(double rate)
{
	char buf[32];

	report_format_rate(rate, buf, sizeof buf);
	return xstrdup(buf);
}

static char *
ns_str(double rate)
{
	char buf[32];

	format_ns(rate, buf, sizeof buf);
	return xstrdup(buf);
}

/*
 * Cycles per hash of a row: from its samples' counters (docs/
 * measurement.md), else from their own clock estimates, else (samples
 * without one) from the host's; 0 when unknown.
 */
static double
row_cycles(const struct rrow *w)
{
	if (w->n == 0)
		return 0;
	if (w->counted > 0 && w->pcycles > 0)
		return w->pcycles;
	if (w->cycles > 0)
		return w->cycles;
	if (w->calib_mhz > 0 && w->median > 0)
		return w->calib_mhz * 1e6 / w->median;
	return 0;
}

/* Where row_cycles came from: pmu, test-seam, calib; NULL if unknown. */
static const char *
row_cycles_source(const struct rrow *w)
{
	if (row_cycles(w) <= 0)
		return NULL;
	if (w->counted > 0 && w->pcycles > 0)
		return w->csrc != NULL ? w->csrc : "pmu";
	return "calib";
}

/* "24.1 pmu": every figure says its source. */
static char *
cycles_str(const struct rrow *w)
{
	double c = row_cycles(w);

	return c > 0 ? xasprintf("%.1f %s", c, row_cycles_source(w)) :
	    xstrdup("-");
}

static char *
ipc_str(const struct rrow *w)
{
	return w->counted > 0 && w->ipc > 0 ? xasprintf("%.2f", w->ipc) :
	    xstrdup("-");
}

/* A host's preflight verdicts over its windows: "quiet", "noisy 1/2". */
static char *
noise_str(const struct rhost *h)
{
	if (h->windows == 0)
		return xstrdup("-");
	if (h->noisy == 0)
		return xstrdup("quiet");
	if (h->noisy == h->windows)
		return xstrdup("noisy");
	return xasprintf("noisy %" PRId64 "/%" PRId64, h->noisy, h->windows);
}

/* Short enough for the hosts table; why a pin failed is a warning. */
static char *
pin_str(const struct rhost *h)
{
	if (h->pinned == 1 && h->has_pin_cpu)
		return xasprintf("cpu %" PRId64, h->pin_cpu);
	if (h->pinned == 1)
		return xstrdup("pinned");
	if (h->has_pin_cpu)
		return xasprintf("cpu %" PRId64 " (not pinned)", h->pin_cpu);
	return xstrdup(h->pinned == -1 ? "unknown" : "none");
}

static void
text_header(const struct rrun *r, FILE *out)
{
	const struct rdigest *d;
	size_t i;

	emit(out, "study %s, run %" PRId64 ": %s%s", r->study, r->id,
	    r->status, r->exploratory ? " (exploratory)" : "");
	emit(out, "  steps     %" PRId64 " per sample, %" PRId64
	    " sample%s per variant", r->steps, r->samples,
	    r->samples == 1 ? "" : "s");
	emit(out, "  seed      %s", r->seed);
	emit(out, "  started   %s", r->started_at);
	emit(out, "  finished  %s", r->finished_at != NULL ?
	    r->finished_at : "-");
	emit_wrapped(out, "  command   ", r->command);
	if (r->ndigests == 0)
		emit(out, "  digest    no valid samples");
	for (i = 0; i < r->ndigests; i++) {
		d = &r->digests[i];
		if (d->distinct == 1 && d->n == 1)
			emit(out, "  digest    %.16s... in the one valid "
			    "sample of %" PRId64 " steps", d->digest,
			    d->steps);
		else if (d->distinct == 1)
			emit(out, "  digest    %.16s... in all %" PRId64
			    " valid samples of %" PRId64 " steps", d->digest,
			    d->n, d->steps);
		else
			emit(out, "  digest    MISMATCH: %" PRId64 " valid "
			    "samples of %" PRId64 " steps end in %" PRId64
			    " different digests", d->n, d->steps,
			    d->distinct);
	}
}

static void
text_hosts(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"host", "status", "calib", "governor", "pinning", "counters",
		"noise"
	};
	struct table t = { 7, heads, "lllllll", NULL, 0 };
	const struct rhost *h;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		cell(&t, xstrdup(h->name));
		cell(&t, xstrdup(h->status != NULL ? h->status : "-"));
		cell(&t, h->calib_mhz > 0 ? xasprintf("%.0f MHz",
		    h->calib_mhz) : xstrdup("-"));
		cell(&t, xstrdup(h->governor != NULL ? h->governor : "-"));
		cell(&t, pin_str(h));
		cell(&t, xstrdup(h->counters != NULL ? h->counters : "-"));
		cell(&t, noise_str(h));
	}
	fputc('\n', out);
	table_print(&t, out);
	/* How the cpu was chosen and why cycles are estimated, in words. */
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->cpu_choice != NULL)
			emit_wrapped(out, "  cpu auto  ", h->cpu_choice);
		if (h->counters_error != NULL)
			emit_wrapped(out, "  counters  ", h->counters_error);
	}
}

static void
text_builds(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"build", "host", "compiler", "cflags", "status", "version"
	};
	struct table t = { 6, heads, "rlllll", NULL, 0 };
	const struct rbuild *b;
	size_t i;

	if (r->nbuilds == 0)
		return;
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		cell(&t, xasprintf("%" PRId64, b->id));
		cell(&t, xstrdup(b->host));
		cell(&t, xstrdup(b->compiler));
		cell(&t, xstrdup(b->cflags));
		cell(&t, xstrdup(b->status));
		cell(&t, xstrdup(b->compiler_version != NULL ?
		    b->compiler_version : "-"));
	}
	fputc('\n', out);
	table_print(&t, out);
}

/*
 * Rows are grouped by variant, one line per host (and build), so hosts
 * are compared down a column and any number of hosts fits in 100
 * columns.  The compiler and cycles columns appear only when they carry
 * information.
 */
static void
text_rows(const struct rrun *r, FILE *out)
{
	const char *heads[11];
	char align[12];
	struct table t = { 0, heads, align, NULL, 0 };
	const struct rrow *w;
	const char *prev = NULL;
	char ns_head[48], line[200];
	size_t i;

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
#define COL(name, a) (heads[t.ncols] = (name), align[t.ncols++] = (a))
	COL("variant", 'l');
	if (r->several_builds)
		COL("compiler", 'l');
	COL("host", 'l');
	COL("median", 'r');
	COL(ns_head, 'r');
	if (r->any_calib)
		COL("cycles", 'r');
	if (r->any_counted)
		COL("ipc", 'r');
	COL("min–max", 'r');
	COL("n", 'r');
	COL("digest", 'l');
	COL("inv", 'r');
#undef COL
	align[t.ncols] = '\0';

	if (r->nrows == 0) {
		fputc('\n', out);
		emit(out, "no samples");
		return;
	}
	fputc('\n', out);
	snprintf(line, sizeof line, "%s/s over the n valid samples; inv: "
	    "samples with valid = 0, in no rate", study_unit_plural(r->study));
	emit(out, line);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		cell(&t, xstrdup(prev != NULL && strcmp(prev, w->variant) == 0 ?
		    "" : w->variant));
		prev = w->variant;
		if (r->several_builds)
			cell(&t, xstrdup(w->label));
		cell(&t, xstrdup(w->host));
		cell(&t, rate_str(w->n > 0 ? w->median : 0));
		cell(&t, ns_str(w->n > 0 ? w->median : 0));
		if (r->any_calib)
			cell(&t, cycles_str(w));
		if (r->any_counted)
			cell(&t, ipc_str(w));
		if (w->n > 0) {
			char lo[32], hi[32];

			report_format_rate(w->min, lo, sizeof lo);
			report_format_rate(w->max, hi, sizeof hi);
			cell(&t, xasprintf("%s–%s", lo, hi));
		} else
			cell(&t, xstrdup("-"));
		cell(&t, xasprintf("%" PRId64, w->n));
		cell(&t, xstrdup(w->digest == DIGEST_OK ? "ok" :
		    w->digest == DIGEST_MISMATCH ? "MISMATCH" : "-"));
		cell(&t, xasprintf("%" PRId64, w->invalid));
	}
	table_print(&t, out);
}

static void
text_best(const struct rrun *r, FILE *out)
{
	char ns_head[48];
	const char *heads[] = {
		"host", "variant", "median", ns_head, "cycles"
	};
	struct table t = { 5, heads, "llrrr", NULL, 0 };
	const struct rhost *h;
	const struct rrow *w;
	size_t i, j;

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	fputc('\n', out);
	emit(out, "best valid variant per host");
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		w = h->best;
		cell(&t, xstrdup(h->name));
		cell(&t, r->several_builds ? xasprintf("%s (%s)", w->variant,
		    w->label) : xstrdup(w->variant));
		cell(&t, rate_str(w->median));
		cell(&t, ns_str(w->median));
		cell(&t, cycles_str(w));
	}
	if (r->nranked > 0)
		table_print(&t, out);
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best == NULL)
			emit(out, "  %s: no valid samples",
			    r->hosts[i].name);
	}
	if (r->nranked < 2)
		return;
	fputc('\n', out);
	emit(out, "ratios of best rates");
	for (i = 0; i < r->nranked; i++) {
		for (j = i + 1; j < r->nranked; j++)
			emit(out, "  %s / %s = %.2fx", r->ranked[i]->name,
			    r->ranked[j]->name, r->ranked[i]->best->median /
			    r->ranked[j]->best->median);
	}
}

/* Same host, build, status and reason: one warning line for all. */
static int
same_outcome(const struct rvariant *a, const struct rvariant *b)
{
	return strcmp(a->host, b->host) == 0 && a->build_id == b->build_id &&
	    strcmp(a->status, b->status) == 0 &&
	    (a->reason == NULL ? b->reason == NULL :
	    b->reason != NULL && strcmp(a->reason, b->reason) == 0);
}

/* "variants a, b, c" for n >= 2 variants.  Caller frees. */
static char *
variant_list(const struct rvariant *v, size_t n)
{
	char *s = xasprintf("variants %s", v[0].variant), *t;
	size_t i;

	for (i = 1; i < n; i++) {
		t = xasprintf("%s, %s", s, v[i].variant);
		free(s);
		s = t;
	}
	return s;
}

static void
text_warnings(const struct rrun *r, FILE *out)
{
	const struct rinvalid *v;
	const struct rvariant *x;
	const struct rbuild *b;
	const struct rhost *h;
	const struct revent *e;
	size_t i, j, failed_builds = 0, host_notes = 0;
	char *names;

	for (i = 0; i < r->nbuilds; i++)
		failed_builds += strcmp(r->builds[i].status, "ok") != 0;
	for (i = 0; i < r->nhosts; i++)
		host_notes += (r->hosts[i].status != NULL &&
		    strcmp(r->hosts[i].status, "ok") != 0) ||
		    r->hosts[i].pin_error != NULL;
	if (r->ninvalid + r->nvariants + r->nevents + failed_builds +
	    host_notes + (size_t)r->moved == 0) {
		fputc('\n', out);
		emit(out, "warnings: none");
		return;
	}
	fputc('\n', out);
	emit(out, "warnings");
	if (r->ninvalid > 0)
		emit(out, "  %zu invalid sample%s (valid = 0), left out of "
		    "every rate", r->ninvalid, r->ninvalid == 1 ? "" : "s");
	for (i = 0; i < r->ninvalid && i < INVALID_LIST_MAX; i++) {
		v = &r->invalid[i];
		emit(out, "    %s %s (%s) sample %" PRId64 ": %s",
		    v->host, v->variant, v->label, v->index,
		    v->reason != NULL ? v->reason : "no reason recorded");
	}
	if (r->ninvalid > INVALID_LIST_MAX)
		emit(out, "    ... and %zu more",
		    r->ninvalid - INVALID_LIST_MAX);
	if (r->moved > 0)
		emit(out, "  %" PRId64 " of %" PRId64 " samples: clock "
		    "estimate moved over %d%% across the sample (cycles less "
		    "certain)", r->moved, r->clocked, CLOCK_MOVED_PCT);
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		if (h->status != NULL && strcmp(h->status, "ok") != 0)
			emit(out, "  host \"%s\" %s: %s", h->name,
			    h->status, h->error != NULL ? h->error :
			    "no error recorded");
		if (h->pin_error != NULL && h->has_pin_cpu)
			emit(out, "  host \"%s\" not pinned to cpu %" PRId64
			    ": %s", h->name, h->pin_cpu, h->pin_error);
		else if (h->pin_error != NULL)
			emit(out, "  host \"%s\" not pinned: %s", h->name,
			    h->pin_error);
	}
	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		if (strcmp(b->status, "ok") != 0)
			emit(out, "  build %" PRId64 " (%s) on \"%s\" %s",
			    b->id, b->compiler, b->host, b->status);
	}
	for (i = 0; i < r->nvariants; i = j) {
		x = &r->variants[i];
		for (j = i + 1; j < r->nvariants &&
		    same_outcome(x, &r->variants[j]); j++)
			;
		if (j == i + 1)
			names = xasprintf("variant \"%s\"", x->variant);
		else
			names = variant_list(&r->variants[i], j - i);
		emit(out, "  %s on \"%s\" (%s) %s: %s", names, x->host,
		    x->label, x->status, x->reason != NULL ? x->reason :
		    "no reason recorded");
		free(names);
	}
	for (i = 0; i < r->nevents && i < EVENT_LIST_MAX; i++) {
		e = &r->events[i];
		if (e->host != NULL)
			emit(out, "  %s on \"%s\" at %s:", e->level, e->host,
			    e->at);
		else
			emit(out, "  %s at %s:", e->level, e->at);
		emit_event(out, e->message);
	}
	if (r->nevents > EVENT_LIST_MAX)
		emit(out, "  ... and %zu more events (table events)",
		    r->nevents - EVENT_LIST_MAX);
}

static void
text_run(const struct rrun *r, FILE *out)
{
	text_header(r, out);
	text_hosts(r, out);
	text_builds(r, out);
	text_rows(r, out);
	text_best(r, out);
	text_warnings(r, out);
}

/* cJSON leaves a key out for a NULL string; scripts want null. */
static void
json_str(cJSON *o, const char *key, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static void
json_num(cJSON *o, const char *key, double v, int known)
{
	if (known)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void
json_build(cJSON *o, const struct rrun *r, int64_t build_id)
{
	const struct rbuild *b = find_build(r, build_id);

	cJSON_AddNumberToObject(o, "build_id", (double)build_id);
	json_str(o, "compiler", b != NULL ? b->compiler : NULL);
}

static cJSON *
json_row(const struct rrow *w)
{
	cJSON *o = cJSON_CreateObject();
	int known = w->n > 0;

	json_str(o, "variant", w->variant);
	json_str(o, "host", w->host);
	cJSON_AddNumberToObject(o, "build_id", (double)w->build_id);
	json_str(o, "compiler", w->compiler);
	cJSON_AddNumberToObject(o, "n", (double)w->n);
	json_num(o, "median_rate", w->median, known);
	json_num(o, "ns_per_step", known ? 1e9 / w->median : 0, known);
	json_num(o, "cycles_per_step", row_cycles(w), row_cycles(w) > 0);
	json_str(o, "cycles_source", row_cycles_source(w));
	json_num(o, "ipc", w->ipc, w->counted > 0 && w->ipc > 0);
	cJSON_AddNumberToObject(o, "clock_moved", (double)w->moved);
	json_num(o, "min_rate", w->min, known);
	json_num(o, "max_rate", w->max, known);
	json_str(o, "digest", w->digest == DIGEST_OK ? "ok" :
	    w->digest == DIGEST_MISMATCH ? "mismatch" : NULL);
	cJSON_AddNumberToObject(o, "invalid", (double)w->invalid);
	return o;
}

static cJSON *
json_hosts(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rhost *h;
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		o = cJSON_CreateObject();
		json_str(o, "host", h->name);
		json_str(o, "status", h->status);
		json_str(o, "error", h->error);
		json_num(o, "pin_cpu", (double)h->pin_cpu, h->has_pin_cpu);
		if (h->pinned == -1)
			cJSON_AddNullToObject(o, "pinned");
		else
			cJSON_AddBoolToObject(o, "pinned", h->pinned);
		json_str(o, "pin_error", h->pin_error);
		json_str(o, "governor", h->governor);
		json_str(o, "openssl", h->openssl);
		json_num(o, "calib_mhz", h->calib_mhz, h->calib_mhz > 0);
		json_str(o, "cpu_choice", h->cpu_choice);
		json_str(o, "counters", h->counters);
		json_str(o, "counters_error", h->counters_error);
		cJSON_AddNumberToObject(o, "windows", (double)h->windows);
		cJSON_AddNumberToObject(o, "noisy_windows", (double)h->noisy);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
json_builds(const struct rrun *r)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rbuild *b;
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		b = &r->builds[i];
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)b->id);
		json_str(o, "host", b->host);
		json_str(o, "compiler", b->compiler);
		json_str(o, "compiler_version", b->compiler_version);
		json_str(o, "cflags", b->cflags);
		json_str(o, "native", b->native);
		json_str(o, "status", b->status);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
json_best(const struct rrun *r, cJSON **ratios)
{
	cJSON *a = cJSON_CreateArray(), *o;
	const struct rhost *h;
	size_t i, j;

	*ratios = cJSON_CreateArray();
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		o = json_row(h->best);
		cJSON_AddItemToArray(a, o);
		for (j = i + 1; j < r->nranked; j++) {
			o = cJSON_CreateObject();
			json_str(o, "faster", h->name);
			json_str(o, "slower", r->ranked[j]->name);
			cJSON_AddNumberToObject(o, "ratio", h->best->median /
			    r->ranked[j]->best->median);
			cJSON_AddItemToArray(*ratios, o);
		}
	}
	return a;
}

static cJSON *
json_warnings(const struct rrun *r)
{
	cJSON *w = cJSON_CreateObject(), *a, *o;
	size_t i;

	a = cJSON_AddArrayToObject(w, "invalid_samples");
	for (i = 0; i < r->ninvalid; i++) {
		o = cJSON_CreateObject();
		json_str(o, "host", r->invalid[i].host);
		json_str(o, "variant", r->invalid[i].variant);
		json_build(o, r, r->invalid[i].build_id);
		cJSON_AddNumberToObject(o, "sample_index",
		    (double)r->invalid[i].index);
		json_str(o, "reason", r->invalid[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	a = cJSON_AddArrayToObject(w, "variants");
	for (i = 0; i < r->nvariants; i++) {
		o = cJSON_CreateObject();
		json_str(o, "host", r->variants[i].host);
		json_str(o, "variant", r->variants[i].variant);
		json_build(o, r, r->variants[i].build_id);
		json_str(o, "status", r->variants[i].status);
		json_str(o, "reason", r->variants[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	o = cJSON_AddObjectToObject(w, "clock_moved");
	cJSON_AddNumberToObject(o, "samples", (double)r->moved);
	cJSON_AddNumberToObject(o, "of", (double)r->clocked);
	cJSON_AddNumberToObject(o, "threshold_pct", CLOCK_MOVED_PCT);
	a = cJSON_AddArrayToObject(w, "events");
	for (i = 0; i < r->nevents; i++) {
		o = cJSON_CreateObject();
		json_str(o, "host", r->events[i].host);
		json_str(o, "at", r->events[i].at);
		json_str(o, "level", r->events[i].level);
		json_str(o, "message", r->events[i].message);
		cJSON_AddItemToArray(a, o);
	}
	return w;
}

static cJSON *
json_run(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *a, *d, *ratios;
	size_t i;

	cJSON_AddNumberToObject(o, "id", (double)r->id);
	json_str(o, "study", r->study);
	json_str(o, "unit", study_unit(r->study));
	json_str(o, "status", r->status);
	cJSON_AddBoolToObject(o, "exploratory", r->exploratory);
	cJSON_AddNumberToObject(o, "steps", (double)r->steps);
	cJSON_AddNumberToObject(o, "samples_per_variant", (double)r->samples);
	json_str(o, "seed", r->seed);
	json_str(o, "started_at", r->started_at);
	json_str(o, "finished_at", r->finished_at);
	json_str(o, "command", r->command);
	a = cJSON_AddArrayToObject(o, "digests");
	for (i = 0; i < r->ndigests; i++) {
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "steps", (double)r->digests[i].steps);
		cJSON_AddNumberToObject(d, "valid_samples",
		    (double)r->digests[i].n);
		cJSON_AddBoolToObject(d, "agree", r->digests[i].distinct == 1);
		json_str(d, "digest", r->digests[i].distinct == 1 ?
		    r->digests[i].digest : NULL);
		cJSON_AddItemToArray(a, d);
	}
	cJSON_AddItemToObject(o, "hosts", json_hosts(r));
	cJSON_AddItemToObject(o, "builds", json_builds(r));
	a = cJSON_AddArrayToObject(o, "rows");
	for (i = 0; i < r->nrows; i++)
		cJSON_AddItemToArray(a, json_row(&r->rows[i]));
	cJSON_AddItemToObject(o, "best", json_best(r, &ratios));
	cJSON_AddItemToObject(o, "ratios", ratios);
	cJSON_AddItemToObject(o, "warnings", json_warnings(r));
	return o;
}

/* "9, 8, 7": the newest run ids, for messages.  Caller frees. */
static char *
recent_ids(sqlite3 *db)
{
	static const char sql[] = "SELECT id FROM runs ORDER BY id DESC LIMIT 5";
	sqlite3_stmt *st;
	char *s = NULL, *t;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		t = s == NULL ? xasprintf("%lld", sqlite3_column_int64(st, 0)) :
		    xasprintf("%s, %lld", s, sqlite3_column_int64(st, 0));
		free(s);
		s = t;
	}
	sqlite3_finalize(st);
	return s;
}

static int
select_one(sqlite3 *db, const struct report_opts *o, int64_t **ids,
    size_t *n, struct so_err *err)
{
	static const char sql[] = "SELECT study FROM runs WHERE id = ?1";
	const char *name = o->db_path != NULL ? o->db_path : "results.db";
	sqlite3_stmt *st;
	char *latest;
	int rc, ret = 0;

	if ((ret = prepare(db, sql, "runs", o->run_id, NULL, &st, err)) != 0)
		return ret;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (o->study != NULL && strcmp(o->study,
		    (const char *)sqlite3_column_text(st, 0)) != 0)
			ret = so_error(err, SO_EINVAL, "run %" PRId64 " is of "
			    "study \"%s\", not \"%s\"", o->run_id,
			    sqlite3_column_text(st, 0), o->study);
		else {
			*ids = xmalloc(sizeof **ids);
			(*ids)[0] = o->run_id;
			*n = 1;
		}
	} else if (rc == SQLITE_DONE) {
		latest = recent_ids(db);
		if (latest != NULL)
			ret = so_error(err, SO_ENOTFOUND, "no run with id %"
			    PRId64 " in \"%s\" (latest: %s)", o->run_id, name,
			    latest);
		else
			ret = so_error(err, SO_ENOTFOUND, "no run with id %"
			    PRId64 " in \"%s\" (it has no runs)", o->run_id,
			    name);
		free(latest);
	} else
		ret = db_failed(db, "runs", err);
	sqlite3_finalize(st);
	return ret;
}

/*
 * Why nothing matched, for the message: hidden exploratory runs, or the
 * studies that do have runs.
 */
static int
explain_none(sqlite3 *db, const struct report_opts *o, struct so_err *err)
{
	static const char sql[] =
	    "SELECT (SELECT COUNT(*) FROM runs WHERE exploratory <> 0"
	    "  AND (?1 IS NULL OR study = ?1)),"
	    " (SELECT group_concat(study, ', ') FROM"
	    "  (SELECT DISTINCT study FROM runs ORDER BY study))";
	const char *name = o->db_path != NULL ? o->db_path : "results.db";
	sqlite3_stmt *st;
	int64_t hidden = 0;
	char *studies = NULL;
	int ret;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, o->study, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		ret = db_failed(db, "runs", err);
		goto out;
	}
	hidden = sqlite3_column_int64(st, 0);
	studies = col_dup(st, 1);
	if (hidden > 0)
		ret = so_error(err, SO_ENOTFOUND, "no runs%s%s%s in \"%s\" "
		    "(%" PRId64 " exploratory run%s hidden; use --explore)",
		    o->study != NULL ? " of study \"" : "",
		    o->study != NULL ? o->study : "",
		    o->study != NULL ? "\"" : "", name, hidden,
		    hidden == 1 ? "" : "s");
	else if (o->study != NULL && studies != NULL)
		ret = so_error(err, SO_ENOTFOUND, "no runs of study \"%s\" in "
		    "\"%s\" (studies with runs: %s)", o->study, name, studies);
	else if (o->study != NULL)
		ret = so_error(err, SO_ENOTFOUND, "no runs of study \"%s\" in "
		    "\"%s\" (it has no runs yet)", o->study, name);
	else
		ret = so_error(err, SO_ENOTFOUND, "no runs in \"%s\" yet "
		    "(start one with \"seqorch run\")", name);
out:
	free(studies);
	sqlite3_finalize(st);
	return ret;
}

int
report_select(sqlite3 *db, const struct report_opts *o, int64_t **ids,
    size_t *n, struct so_err *err)
{
	static const char sql[] =
	    "SELECT MAX(id) FROM runs"
	    " WHERE (?1 IS NULL OR study = ?1) AND (?2 OR exploratory = 0)"
	    " GROUP BY study ORDER BY study";
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	*ids = NULL;
	*n = 0;
	if (o->run_id > 0)
		return select_one(db, o, ids, n, err);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, o->study, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int(st, 2, o->explore != 0) !=
	    SQLITE_OK) {
		ret = db_failed(db, "runs", err);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*ids = grow(*ids, *n, sizeof **ids);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "runs", err);
	else if (*n == 0)
		ret = explain_none(db, o, err);
out:
	sqlite3_finalize(st);
	if (ret != 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return ret;
}

int
report_print(sqlite3 *db, const struct report_opts *o, FILE *out,
    struct so_err *err)
{
	struct rrun *runs = NULL;
	int64_t *ids = NULL;
	size_t n = 0, loaded = 0, i;
	cJSON *root = NULL, *a;
	char *text;
	int ret;

	if ((ret = report_select(db, o, &ids, &n, err)) != 0)
		goto out;
	/* Load everything before printing: a failure prints nothing. */
	runs = xcalloc(n, sizeof *runs);
	for (loaded = 0; loaded < n; loaded++) {
		if ((ret = load_run(db, ids[loaded], &runs[loaded], err)) != 0)
			goto out;
	}
	if (o->format == REPORT_JSON) {
		root = cJSON_CreateObject();
		json_str(root, "db", o->db_path);
		a = cJSON_AddArrayToObject(root, "runs");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(a, json_run(&runs[i]));
		if ((text = cJSON_Print(root)) == NULL) {
			ret = so_error(err, SO_ENOMEM, "cannot format the "
			    "report as json");
			goto out;
		}
		fprintf(out, "%s\n", text);
		cJSON_free(text);
	} else {
		for (i = 0; i < n; i++) {
			if (i > 0)
				fputc('\n', out);
			text_run(&runs[i], out);
		}
	}
out:
	cJSON_Delete(root);
	for (i = 0; i < loaded; i++)
		free_run(&runs[i]);
	free(runs);
	free(ids);
	return ret;
}

/*
 * The report's queries (db-report.h).  Each is bound to one run id (?1)
 * and, where it reads samples, the run's study (?2), which makes it an
 * index range of samples (run_id, study, ...).
 */
#include "db.h"
#include "db-report.h"
#include "strbuf.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s == NULL ? NULL : xstrdup((const char *)s);
}

/* SQLite reads NULL as 0.0: one call a column, not two (a million rows). */
static double
col_double(sqlite3_stmt *st, int i)
{
	return sqlite3_column_double(st, i);
}

static const char *
col_str(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
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

/*
 * Run sql bound to run (prepare) and hand each row to fn, until fn
 * returns non-zero.  0 or SO_EDB naming what.
 */
static int
each_row(sqlite3 *db, const char *sql, const char *what,
    const struct db_report_run *run, int (*fn)(sqlite3_stmt *st, void *arg),
    void *arg, struct so_err *err)
{
	sqlite3_stmt *st;
	int rc, ret;

	if ((ret = prepare(db, sql, what, run->id, run->study, &st, err)) != 0)
		return ret;
	/*
	 * The connection's mutex held over the rows: each column call then
	 * takes it again without an atomic operation (a million rows).
	 */
	sqlite3_mutex_enter(sqlite3_db_mutex(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (fn(st, arg) != 0)
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = db_failed(db, what, err);
	sqlite3_mutex_leave(sqlite3_db_mutex(db));
	sqlite3_finalize(st);
	return ret;
}

/*
 * How a row's columns land in a struct: the i-th field takes column i,
 * its text (F_TEXT, NULL for NULL, valid during the row), an integer
 * (F_I64, 0 for NULL) or a number (F_REAL, 0 for NULL); decode fills
 * fields from to n - 1.
 */
enum { F_TEXT, F_I64, F_REAL };
struct field {
	int	 type;
	size_t	 off;
};
#define FIELD(type, st, member) { type, offsetof(st, member) }

static void
decode(sqlite3_stmt *st, void *obj, const struct field *f, size_t from,
    size_t n)
{
	char *p;
	size_t i;

	for (i = from; i < n; i++) {
		p = (char *)obj + f[i].off;
		switch (f[i].type) {
		case F_TEXT:
			*(const char **)p = col_str(st, (int)i);
			break;
		case F_I64:
			*(int64_t *)p = sqlite3_column_int64(st, (int)i);
			break;
		default:
			*(double *)p = col_double(st, (int)i);
		}
	}
}

/* A list's rows, each decoded by fields, to fn. */
struct list_arg {
	const struct field	 *fields;
	size_t			  nfields;
	void			(*fn)(const union db_report_row *row, void *arg);
	void			 *arg;
};

static int
list_row(sqlite3_stmt *st, void *arg)
{
	const struct list_arg *a = arg;
	union db_report_row row;

	decode(st, &row, a->fields, 0, a->nfields);
	a->fn(&row, a->arg);
	return 0;
}

int
db_report_begin(sqlite3 *db, struct so_err *err)
{
	if (sqlite3_exec(db, "SAVEPOINT report_load", NULL, NULL, NULL) !=
	    SQLITE_OK)
		return db_failed(db, "the database", err);
	return 0;
}

void
db_report_end(sqlite3 *db)
{
	sqlite3_exec(db, "RELEASE report_load", NULL, NULL, NULL);
}

int
db_report_header(sqlite3 *db, int64_t id,
    void (*fn)(const struct db_header *h, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "SELECT study, status, started_at, finished_at, command, seed,"
	    " steps, samples_per_variant, exploratory, openssl_cap,"
	    " i.origin_coordinator, i.origin_run_id, i.signed,"
	    " COALESCE(msg_len, 0), coordinator"
	    " FROM runs LEFT JOIN imports i ON i.run_id = runs.id"
	    " WHERE id = ?1";
	struct db_header h;
	sqlite3_stmt *st;
	char host[256];
	long pid;
	int rc, ret = 0;

	if ((ret = prepare(db, sql, "runs", id, NULL, &st, err)) != 0)
		return ret;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		h.study = col_str(st, 0);
		h.status = col_str(st, 1);
		h.started_at = col_str(st, 2);
		h.finished_at = col_str(st, 3);
		h.command = col_str(st, 4);
		h.seed = col_str(st, 5);
		h.steps = sqlite3_column_int64(st, 6);
		h.samples = sqlite3_column_int64(st, 7);
		h.exploratory = sqlite3_column_int(st, 8) != 0;
		h.openssl_cap = col_str(st, 9);
		h.imported_from = col_str(st, 10);
		h.origin_run = sqlite3_column_int64(st, 11);
		h.imported_signed = sqlite3_column_int(st, 12) != 0;
		h.msg_len = sqlite3_column_int64(st, 13);
		h.gone_pid = 0;
		if (h.status != NULL && strcmp(h.status, "running") == 0 &&
		    db_coordinator_parse(col_str(st, 14), host, sizeof host,
		    &pid) == 0 && db_holder_dead(host, pid))
			h.gone_pid = pid;
		fn(&h, arg);
	} else if (rc == SQLITE_DONE)
		ret = so_error(err, SO_ENOTFOUND, "run %" PRId64 " vanished "
		    "while reading it", id);
	else
		ret = db_failed(db, "runs", err);
	sqlite3_finalize(st);
	return ret;
}

/* A string member of the facts record, or NULL; valid while facts is. */
static const char *
fact(const cJSON *facts, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(facts, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

struct host_arg {
	void	(*fn)(const struct db_host *h, void *arg);
	void	 *arg;
};

static int
host_row(sqlite3_stmt *st, void *arg)
{
	const struct host_arg *a = arg;
	struct db_host h;
	const cJSON *cores;
	cJSON *facts;

	h.name = col_str(st, 0);
	h.status = col_str(st, 1);
	h.error = col_str(st, 2);
	h.has_pin_cpu = sqlite3_column_type(st, 3) != SQLITE_NULL;
	h.pin_cpu = sqlite3_column_int64(st, 3);
	h.pinned = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 :
	    sqlite3_column_int(st, 4) != 0;
	h.pin_error = col_str(st, 5);
	h.governor = col_str(st, 6);
	h.openssl = col_str(st, 7);
	h.calib_mhz = col_double(st, 8);
	facts = sqlite3_column_type(st, 9) == SQLITE_NULL ? NULL :
	    cJSON_Parse(col_str(st, 9));
	h.cpu_model = fact(facts, "cpu_model");
	h.cpu_signature = fact(facts, "cpu_signature");
	h.arch = fact(facts, "arch");
	h.os = fact(facts, "os");
	h.kernel = fact(facts, "kernel");
	cores = cJSON_GetObjectItemCaseSensitive(facts, "cores");
	h.cores = cJSON_IsNumber(cores) ? (int64_t)cores->valuedouble : 0;
	h.cpu_choice = col_str(st, 10);
	h.counters = col_str(st, 11);
	h.counters_error = col_str(st, 12);
	h.windows = sqlite3_column_int64(st, 13);
	h.noisy = sqlite3_column_int64(st, 14);
	h.shared_with = col_str(st, 15);
	h.drifted = sqlite3_column_int64(st, 16);
	a->fn(&h, a->arg);
	cJSON_Delete(facts);
	return 0;
}

/*
 * calib_mhz is the facts' estimate alone (taken before sampling); the
 * clock the report shows is the samples' (report-stats.c).
 */
int
db_report_hosts(sqlite3 *db, const struct db_report_run *run,
    void (*fn)(const struct db_host *h, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "SELECT host, status, error, pin_cpu, pinned, pin_error, governor,"
	    " openssl, calib_mhz, facts, cpu_choice, counters, counters_error,"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = run_hosts.host AND w.verdict IS NOT NULL),"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = run_hosts.host AND w.verdict = 'noisy'),"
	    /*
	     * Another host of the run on this machine (its facts' hostname)
	     * whose window was open at the same time: by the agents' own
	     * clock, which is one clock when the hostname is one.
	     */
	    " (SELECT MIN(w2.host) FROM windows w1 JOIN windows w2 ON"
	    "  w2.run_id = w1.run_id AND w2.host != w1.host AND"
	    "  w1.started_at < COALESCE(w2.finished_at, '9999') AND"
	    "  w2.started_at < COALESCE(w1.finished_at, '9999')"
	    "  JOIN run_hosts h2 ON h2.run_id = w2.run_id AND h2.host = w2.host"
	    "  WHERE w1.run_id = ?1 AND w1.host = run_hosts.host AND"
	    "  json_extract(h2.facts, '$.hostname') ="
	    "  json_extract(run_hosts.facts, '$.hostname')),"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = run_hosts.host AND COALESCE(w.drift, '') != '')"
	    " FROM run_hosts WHERE run_id = ?1";
	struct host_arg a = { fn, arg };

	return each_row(db, sql, "run_hosts", run, host_row, &a, err);
}

#define F(type, member) FIELD(type, struct db_build, member)
static const struct field build_fields[] = {
	F(F_I64, id), F(F_TEXT, host), F(F_TEXT, compiler),
	F(F_TEXT, compiler_version), F(F_TEXT, cflags), F(F_TEXT, native),
	F(F_TEXT, status), F(F_TEXT, target), F(F_TEXT, source_sha256),
	F(F_TEXT, binary_sha256), F(F_TEXT, openssl), F(F_TEXT, targeting),
	F(F_TEXT, extra),
};
#undef F

#define F(type, member) FIELD(type, struct db_event, member)
static const struct field event_fields[] = {
	F(F_TEXT, host), F(F_TEXT, at), F(F_TEXT, level), F(F_TEXT, message),
};
#undef F

#define F(type, member) FIELD(type, struct db_invalid, member)
static const struct field invalid_fields[] = {
	F(F_TEXT, host), F(F_TEXT, variant), F(F_I64, build_id),
	F(F_I64, index), F(F_TEXT, reason),
};
#undef F

#define F(type, member) FIELD(type, struct db_variant, member)
static const struct field variant_fields[] = {
	F(F_TEXT, host), F(F_TEXT, variant), F(F_I64, build_id),
	F(F_TEXT, status), F(F_TEXT, reason),
};
#undef F

#define F(type, member) FIELD(type, struct db_digest, member)
static const struct field digest_fields[] = {
	F(F_I64, steps), F(F_I64, n), F(F_I64, distinct),
	F(F_TEXT, digest),
};
#undef F

#define LIST(fields) fields, sizeof fields / sizeof *fields

/* What db_report_list reads: the query, its table, how rows decode. */
static const struct list {
	const char		*sql;
	const char		*what;
	const struct field	*fields;
	size_t			 nfields;
} lists[] = {
	[DB_REPORT_BUILDS] = {
	    "SELECT id, host, compiler, compiler_version, cflags, native,"
	    " status, target, source_sha256, binary_sha256, openssl, targeting,"
	    " extra FROM builds WHERE run_id = ?1 ORDER BY host, id", "builds",
	    LIST(build_fields) },
	/* Warnings and errors only: info events are the run's diary. */
	[DB_REPORT_EVENTS] = {
	    "SELECT host, at, level, message FROM events"
	    " WHERE run_id = ?1 AND level IN ('warning', 'error')"
	    " ORDER BY id", "events",
	    LIST(event_fields) },
	[DB_REPORT_INVALID] = {
	    "SELECT host, variant, build_id, sample_index, invalid_reason"
	    " FROM samples INDEXED BY samples_digest"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 0 AND warmup = 0"
	    " ORDER BY host, variant, build_id, sample_index", "samples",
	    LIST(invalid_fields) },
	[DB_REPORT_VARIANTS] = {
	    "SELECT host, variant, build_id, status, reason FROM variants"
	    " WHERE run_id = ?1 AND study = ?2 AND status <> 'ok'"
	    " ORDER BY host, build_id, status, reason, variant", "variants",
	    LIST(variant_fields) },
	[DB_REPORT_DIGESTS] = {
	    "SELECT steps, COUNT(*), COUNT(DISTINCT digest), MIN(digest)"
	    " FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 1"
	    " AND warmup = 0 GROUP BY steps ORDER BY steps", "samples",
	    LIST(digest_fields) },
};

int
db_report_list(sqlite3 *db, const struct db_report_run *run,
    enum db_report_list which,
    void (*fn)(const union db_report_row *row, void *arg), void *arg,
    struct so_err *err)
{
	const struct list *l = &lists[which];
	struct list_arg a = { l->fields, l->nfields, fn, arg };

	return each_row(db, l->sql, l->what, run, list_row, &a, err);
}

/*
 * The valid samples are read part by part, a part the samples of one
 * cell and steps value: one range of samples_valid, whose leading columns
 * (two strings, the build and the steps) are then not read a million
 * times.  The next part is a seek: a later steps value of the same cell,
 * else a later build of the same host and variant, else a later variant
 * of the host, else a later host (four seeks, as SQLite 3.40 seeks a row
 * value (host, variant, build_id, steps) > (...) by host alone and scans
 * the rest).
 */
#define VALID_PART \
	"SELECT host, variant, build_id, steps FROM samples" \
	" INDEXED BY samples_valid WHERE run_id = ?1 AND study = ?2" \
	" AND valid = 1 AND ns > 0 AND warmup = 0"
static const char valid_first_sql[] =
    VALID_PART " ORDER BY host, variant, build_id, steps LIMIT 1";
static const char valid_next_sql[] =
    "SELECT * FROM (" VALID_PART " AND host = ?3 AND variant = ?4"
    "  AND build_id = ?5 AND steps > ?6 ORDER BY steps LIMIT 1)"
    " UNION ALL SELECT * FROM (" VALID_PART " AND host = ?3"
    "  AND variant = ?4 AND build_id > ?5 ORDER BY build_id, steps"
    "  LIMIT 1)"
    " UNION ALL SELECT * FROM (" VALID_PART " AND host = ?3"
    "  AND variant > ?4 ORDER BY variant, build_id, steps LIMIT 1)"
    " UNION ALL SELECT * FROM (" VALID_PART " AND host > ?3"
    "  ORDER BY host, variant, build_id, steps LIMIT 1)"
    " LIMIT 1";
/*
 * A part's samples, and apart its counted ones: the two columns only
 * they use are not read for every sample.
 */
#define VALID_IN \
	" FROM samples INDEXED BY samples_valid WHERE run_id = ?1" \
	" AND study = ?2 AND host = ?3 AND variant = ?4 AND build_id = ?5" \
	" AND steps = ?6 AND valid = 1 AND ns > 0 AND warmup = 0"
static const char valid_part_sql[] =
    "SELECT ns, position, calib_mhz, calib_after_mhz, cycles" VALID_IN;
static const char valid_counted_sql[] =
    "SELECT cycles, instructions, cycles_source" VALID_IN
    " AND cycles > 0";

/*
 * The samples of the part of steps steps that in (and counted) are bound
 * to, to fns; the counted ones only when there are any.
 */
static int
valid_part(sqlite3_stmt *in, sqlite3_stmt *counted, int64_t steps,
    const struct db_valid_fns *fns, void *arg)
{
	struct db_counted c;
	struct db_valid s;
	int rc, any = 0;

	s.steps = c.steps = steps;
	while ((rc = sqlite3_step(in)) == SQLITE_ROW) {
		s.ns = sqlite3_column_int64(in, 0);
		s.position = sqlite3_column_int64(in, 1);
		s.calib_mhz = col_double(in, 2);
		s.calib_after_mhz = col_double(in, 3);
		s.cycles = sqlite3_column_int64(in, 4);
		any |= s.cycles > 0;
		fns->sample(&s, arg);
	}
	sqlite3_reset(in);
	if (rc != SQLITE_DONE || !any)
		return rc;
	while ((rc = sqlite3_step(counted)) == SQLITE_ROW) {
		c.cycles = sqlite3_column_int64(counted, 0);
		c.instructions = sqlite3_column_int64(counted, 1);
		c.cycles_source = col_str(counted, 2);
		fns->counted(&c, arg);
	}
	sqlite3_reset(counted);
	return rc;
}

/*
 * The connection's page cache size (PRAGMA cache_size, negative: KiB)
 * set to size; the old one, or 0 when it cannot be read (and nothing is
 * set).
 */
static int64_t
cache_size(sqlite3 *db, int64_t size)
{
	sqlite3_stmt *st;
	int64_t old = 0;
	char *sql;

	if (sqlite3_prepare_v2(db, "PRAGMA cache_size", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		old = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (old != 0) {
		sql = xasprintf("PRAGMA cache_size = %" PRId64, size);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		free(sql);
	}
	return old;
}

/* The cache of a pass over a run's samples: 128 KiB. */
#define SCAN_CACHE (-128)

int
db_report_valid(sqlite3 *db, const struct db_report_run *run,
    const struct db_valid_fns *fns, void *arg, struct so_err *err)
{
	sqlite3_stmt *first = NULL, *next = NULL, *in = NULL, *counted = NULL;
	sqlite3_stmt *at;
	sqlite3_value *key[4] = { NULL, NULL, NULL, NULL };
	int64_t cache, steps;
	int i, rc = SQLITE_DONE, ret;

	/*
	 * The pass reads each page of the samples once, so a small cache
	 * does: the default one would be 2 MB of memory touched first, which
	 * costs more than the pass over it.  Put back after, for the probes
	 * of the queries that follow.
	 */
	cache = cache_size(db, SCAN_CACHE);
	if ((ret = prepare(db, valid_first_sql, "samples", run->id,
	    run->study, &first, err)) != 0 ||
	    (ret = prepare(db, valid_next_sql, "samples", run->id, run->study,
	    &next, err)) != 0 ||
	    (ret = prepare(db, valid_part_sql, "samples", run->id, run->study,
	    &in, err)) != 0 ||
	    (ret = prepare(db, valid_counted_sql, "samples", run->id,
	    run->study, &counted, err)) != 0)
		goto out;
	/* As each_row: the connection's mutex held over the rows. */
	sqlite3_mutex_enter(sqlite3_db_mutex(db));
	for (at = first; (rc = sqlite3_step(at)) == SQLITE_ROW; at = next) {
		fns->cell(col_str(at, 1), col_str(at, 0),
		    sqlite3_column_int64(at, 2), arg);
		steps = sqlite3_column_int64(at, 3);
		/* The key outlives the row: it binds the next seek. */
		for (i = 0; i < 4; i++) {
			sqlite3_value_free(key[i]);
			key[i] = sqlite3_value_dup(sqlite3_column_value(at, i));
		}
		sqlite3_reset(at);
		for (i = 0; i < 4 && rc == SQLITE_ROW; i++) {
			if (key[i] == NULL ||
			    sqlite3_bind_value(in, 3 + i, key[i]) !=
			    SQLITE_OK ||
			    sqlite3_bind_value(counted, 3 + i, key[i]) !=
			    SQLITE_OK ||
			    sqlite3_bind_value(next, 3 + i, key[i]) !=
			    SQLITE_OK)
				rc = SQLITE_NOMEM;
		}
		if (rc != SQLITE_ROW || (rc = valid_part(in, counted, steps,
		    fns, arg)) != SQLITE_DONE)
			break;
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "samples", err);
	sqlite3_mutex_leave(sqlite3_db_mutex(db));
out:
	for (i = 0; i < 4; i++)
		sqlite3_value_free(key[i]);
	sqlite3_finalize(counted);
	sqlite3_finalize(in);
	sqlite3_finalize(next);
	sqlite3_finalize(first);
	if (cache != 0)
		cache_size(db, cache);
	return ret;
}

struct count_arg {
	void	(*fn)(const char *variant, const char *host, int64_t build_id,
		    int64_t count, void *arg);
	void	 *arg;
};

static int
count_row(sqlite3_stmt *st, void *arg)
{
	const struct count_arg *a = arg;

	a->fn(col_str(st, 0), col_str(st, 1), sqlite3_column_int64(st, 2),
	    sqlite3_column_int64(st, 3), a->arg);
	return 0;
}

int
db_report_invalid_counts(sqlite3 *db, const struct db_report_run *run,
    void (*fn)(const char *variant, const char *host, int64_t build_id,
    int64_t count, void *arg), void *arg, struct so_err *err)
{
	static const char sql[] =
	    "SELECT variant, host, build_id, COUNT(*)"
	    " FROM samples INDEXED BY samples_digest"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 0 AND warmup = 0"
	    " GROUP BY variant, host, build_id";
	struct count_arg a = { fn, arg };

	return each_row(db, sql, "samples", run, count_row, &a, err);
}

int
db_report_range(sqlite3 *db, const struct db_report_run *run, const char *col,
    int64_t steps, const char *seed, char *lo, char *hi, size_t len,
    struct so_err *err)
{
	char *sql = xasprintf("SELECT (SELECT MIN(%s) FROM samples"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 1 AND warmup = 0"
	    "%s%s),"
	    " (SELECT MAX(%s) FROM samples"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 1 AND warmup = 0"
	    "%s%s)", col,
	    steps > 0 ? " AND steps = ?3" : "", seed ? " AND seed = ?4" : "",
	    col, steps > 0 ? " AND steps = ?3" : "", seed ? " AND seed = ?4" :
	    "");
	sqlite3_stmt *st;
	int ret;

	ret = prepare(db, sql, "samples", run->id, run->study, &st, err);
	free(sql);
	if (ret != 0)
		return ret;
	if ((steps > 0 && sqlite3_bind_int64(st, 3, steps) != SQLITE_OK) ||
	    (seed != NULL && sqlite3_bind_text(st, 4, seed, -1,
	    SQLITE_STATIC) != SQLITE_OK) || sqlite3_step(st) != SQLITE_ROW)
		ret = db_failed(db, "samples", err);
	else {
		snprintf(lo, len, "%s", sqlite3_column_type(st, 0) ==
		    SQLITE_NULL ? "" : col_str(st, 0));
		snprintf(hi, len, "%s", sqlite3_column_type(st, 1) ==
		    SQLITE_NULL ? "" : col_str(st, 1));
	}
	sqlite3_finalize(st);
	return ret;
}

struct group_arg {
	void	(*fn)(const struct db_digest_group *g, void *arg);
	void	 *arg;
};

#define F(type, member) FIELD(type, struct db_digest_group, member)
static const struct field group_fields[] = {
	F(F_TEXT, variant), F(F_TEXT, host), F(F_I64, build_id),
	F(F_I64, nsteps), F(F_I64, nfinals), F(F_I64, run_finals),
	F(F_I64, nkeys), F(F_I64, steps), F(F_TEXT, seed),
	F(F_TEXT, digest),
};
#undef F

static int
group_row(sqlite3_stmt *st, void *arg)
{
	const struct group_arg *a = arg;
	struct db_digest_group g;

	decode(st, &g, group_fields, 0, sizeof group_fields /
	    sizeof *group_fields);
	a->fn(&g, a->arg);
	return 0;
}

int
db_report_digest_groups(sqlite3 *db, const struct db_report_run *run,
    void (*fn)(const struct db_digest_group *g, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "WITH d AS (SELECT steps, COUNT(DISTINCT digest) AS nd"
	    "  FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 1"
	    "  AND warmup = 0 GROUP BY steps)"
	    " SELECT s.variant, s.host, s.build_id,"
	    "  COUNT(DISTINCT s.steps), COUNT(DISTINCT s.steps || ' ' ||"
	    "  s.digest), MAX(d.nd), COUNT(DISTINCT s.steps || ' ' || s.seed"
	    "  || ' ' || s.digest), MIN(s.steps), MIN(s.seed), MIN(s.digest)"
	    " FROM samples s JOIN d ON d.steps = s.steps"
	    " WHERE s.run_id = ?1 AND s.study = ?2 AND s.valid = 1"
	    " AND s.warmup = 0 GROUP BY s.variant, s.host, s.build_id";
	struct group_arg a = { fn, arg };

	return each_row(db, sql, "samples", run, group_row, &a, err);
}

struct sample_arg {
	int	(*fn)(const struct db_sample *s, void *arg);
	void	 *arg;
};

static int
sample_row(sqlite3_stmt *st, void *arg)
{
	const struct sample_arg *a = arg;
	struct db_sample x = {
		.id = sqlite3_column_int64(st, 0),
		.build_id = sqlite3_column_int64(st, 1),
		.sample_index = sqlite3_column_int64(st, 2),
		.position = sqlite3_column_int64(st, 3),
		.steps = sqlite3_column_int64(st, 4),
		.ns = sqlite3_column_int64(st, 5),
		.valid = sqlite3_column_int64(st, 6),
		.has_cpu = sqlite3_column_type(st, 7) != SQLITE_NULL,
		.cpu = sqlite3_column_int64(st, 7),
		.host = col_str(st, 8), .study = col_str(st, 9),
		.variant = col_str(st, 10), .compiler = col_str(st, 11),
		.digest = col_str(st, 12), .seed = col_str(st, 13),
		.invalid_reason = col_str(st, 14),
		.received_at = col_str(st, 15), .reason = col_str(st, 16),
		.calib_mhz = sqlite3_column_type(st, 17) == SQLITE_NULL ? NAN :
		    sqlite3_column_double(st, 17),
		.calib_after_mhz = sqlite3_column_type(st, 18) ==
		    SQLITE_NULL ? NAN : sqlite3_column_double(st, 18),
		.cycles = sqlite3_column_type(st, 19) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 19),
		.instructions = sqlite3_column_type(st, 20) == SQLITE_NULL ?
		    -1 : sqlite3_column_int64(st, 20),
		.cycles_source = col_str(st, 21),
		.openssl_cap = col_str(st, 22),
		.host_position = sqlite3_column_type(st, 23) == SQLITE_NULL ?
		    -1 : sqlite3_column_int64(st, 23),
		.openssl_cap_detected = col_str(st, 24),
		.openssl_cap_cleared = col_str(st, 25),
		.msg_len = sqlite3_column_type(st, 26) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 26),
		.window_id = sqlite3_column_type(st, 27) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 27),
	};

	return a->fn(&x, a->arg);
}

int
db_report_samples(sqlite3 *db, const struct db_report_run *run,
    int (*fn)(const struct db_sample *s, void *arg), void *arg,
    struct so_err *err)
{
	/*
	 * The unique index's order, study (one value) included: SQLite 3.40
	 * does not skip a column that is only equal to a constant, and sorted
	 * each (host, build) anew, in a temporary file (1.5 s a 1M-sample
	 * run).  The unary + keeps study out of the index's search.
	 */
	static const char sql[] =
	    "SELECT s.id, s.build_id, s.sample_index, s.position, s.steps,"
	    " s.ns, s.valid, s.cpu, s.host, s.study, s.variant, b.compiler,"
	    " s.digest, s.seed, s.invalid_reason, s.received_at, s.reason,"
	    " s.calib_mhz, s.calib_after_mhz, s.cycles, s.instructions,"
	    " s.cycles_source, s.openssl_cap, s.host_position,"
	    " s.openssl_cap_detected, s.openssl_cap_cleared, s.msg_len,"
	    " s.window_id FROM samples s LEFT JOIN builds b ON b.id = s.build_id"
	    " WHERE s.run_id = ?1 AND +s.study = ?2 AND s.warmup = 0"
	    " ORDER BY s.host, s.build_id, s.study, s.variant, s.sample_index";
	struct sample_arg a = { fn, arg };

	return each_row(db, sql, "samples", run, sample_row, &a, err);
}

int
db_report_run_study(sqlite3 *db, int64_t id, char **study,
    struct so_err *err)
{
	static const char sql[] = "SELECT study FROM runs WHERE id = ?1";
	sqlite3_stmt *st;
	int rc, ret;

	*study = NULL;
	if ((ret = prepare(db, sql, "runs", id, NULL, &st, err)) != 0)
		return ret;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*study = col_dup(st, 0);
	else if (rc == SQLITE_DONE)
		ret = SO_ENOTFOUND;
	else
		ret = db_failed(db, "runs", err);
	sqlite3_finalize(st);
	return ret;
}

char *
db_report_recent_ids(sqlite3 *db)
{
	static const char sql[] = "SELECT id FROM runs ORDER BY id DESC LIMIT 5";
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW)
		strbuf_addf(&sb, "%s%lld", sb.len > 0 ? ", " : "",
		    sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	if (sb.len == 0)
		return NULL;
	return strbuf_detach(&sb);
}

int
db_report_no_run(sqlite3 *db, int64_t id, struct so_err *err)
{
	char *latest = db_report_recent_ids(db);
	int ret;

	if (latest != NULL)
		ret = so_error(err, SO_ENOTFOUND, "no run with id %" PRId64
		    " (latest: %s)", id, latest);
	else
		ret = so_error(err, SO_ENOTFOUND, "no run with id %" PRId64
		    " (it has no runs)", id);
	free(latest);
	return ret;
}

int
db_report_latest(sqlite3 *db, const char *study, int explore,
    int64_t **ids, size_t *n, struct so_err *err)
{
	static const char sql[] =
	    "SELECT MAX(id) FROM runs"
	    " WHERE (?1 IS NULL OR study = ?1) AND (?2 OR exploratory = 0)"
	    " GROUP BY study ORDER BY study";
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, study, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int(st, 2, explore != 0) !=
	    SQLITE_OK) {
		ret = db_failed(db, "runs", err);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*ids, *n);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "runs", err);
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
db_report_newest_measured(sqlite3 *db, const char *study, int64_t after,
    int64_t *id, char **passed, struct so_err *err)
{
	static const char sql[] =
	    "SELECT id, exploratory, id IN (SELECT run_id FROM imports)"
	    " FROM runs WHERE study = ?1 AND id > ?2 ORDER BY id DESC";
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	*id = 0;
	*passed = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, study, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_int64(st, 2, after) != SQLITE_OK) {
		ret = db_failed(db, "runs", err);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 2) == 0 &&
		    sqlite3_column_int64(st, 1) == 0) {
			*id = sqlite3_column_int64(st, 0);
			break;
		}
		strbuf_addf(&sb, "%s%lld %s", sb.len > 0 ? ", " : "",
		    sqlite3_column_int64(st, 0),
		    sqlite3_column_int64(st, 2) != 0 ? "imported" :
		    "exploratory");
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = db_failed(db, "runs", err);
	else if (sb.len > 0)
		*passed = strbuf_detach(&sb);
out:
	strbuf_release(&sb);
	sqlite3_finalize(st);
	return ret;
}

int
db_report_absent(sqlite3 *db, const char *study, int64_t *hidden,
    char **studies, struct so_err *err)
{
	static const char sql[] =
	    "SELECT (SELECT COUNT(*) FROM runs WHERE exploratory <> 0"
	    "  AND (?1 IS NULL OR study = ?1)),"
	    " (SELECT group_concat(study, ', ') FROM"
	    "  (SELECT DISTINCT study FROM runs ORDER BY study))";
	sqlite3_stmt *st;
	int ret = 0;

	*hidden = 0;
	*studies = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, study, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		ret = db_failed(db, "runs", err);
	else {
		*hidden = sqlite3_column_int64(st, 0);
		*studies = col_dup(st, 1);
	}
	sqlite3_finalize(st);
	return ret;
}

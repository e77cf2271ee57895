/*
 * The report's storage side: every query the report, export and compare
 * make, into the model of report-model.h.  Reading a run costs in
 * proportion to that run: each query is bound to one run id and served by
 * an index on samples (run_id, ...), and one read transaction makes all
 * of them see the same database.
 */
#include "report-model.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STR(x) STR_(x)
#define STR_(x) #x

void *
report_grow(void *array, size_t n, size_t size)
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
report_free_run(struct rrun *r)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++) {
		free(r->hosts[i].name);
		free(r->hosts[i].status);
		free(r->hosts[i].error);
		free(r->hosts[i].pin_error);
		free(r->hosts[i].governor);
		free(r->hosts[i].openssl);
		free(r->hosts[i].cpu_model);
		free(r->hosts[i].arch);
		free(r->hosts[i].os);
		free(r->hosts[i].kernel);
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
		free(r->builds[i].target);
		free(r->builds[i].source_sha256);
		free(r->builds[i].binary_sha256);
		free(r->builds[i].openssl);
	}
	for (i = 0; i < r->nrows; i++) {
		free(r->rows[i].variant);
		free(r->rows[i].host);
		free(r->rows[i].label);
		free(r->rows[i].rates);
		free(r->rows[i].ns);
		free(r->rows[i].pos);
		free(r->rows[i].clocks);
		free(r->rows[i].seed);
		free(r->rows[i].final);
		free(r->rows[i].csrc);
		free(r->rows[i].pcs);
		free(r->rows[i].ipcs);
	}
	for (i = 0; i < r->nratios; i++)
		free(r->ratios[i].refused);
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
	free(r->ratios);
	free(r->positions);
	free(r->ref_note);
	free(r->study);
	free(r->status);
	free(r->started_at);
	free(r->finished_at);
	free(r->command);
	free(r->seed);
	free(r->openssl_cap);
	memset(r, 0, sizeof *r);
}

static int
load_header(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT study, status, started_at, finished_at, command, seed,"
	    " steps, samples_per_variant, exploratory, openssl_cap"
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
		r->openssl_cap = col_dup(st, 9);
	} else if (rc == SQLITE_DONE)
		ret = so_error(err, SO_ENOTFOUND, "run %" PRId64 " vanished "
		    "while reading it", r->id);
	else
		ret = db_failed(db, "runs", err);
	sqlite3_finalize(st);
	return ret;
}

/* A string member of the facts record, or NULL. */
static char *
fact(const cJSON *facts, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(facts, key);

	return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

/*
 * Hosts of the run: those with a run_hosts row plus any that only left
 * samples.  calib_mhz is the facts' estimate alone (taken before
 * sampling); the clock the report shows is the samples' (report-stats.c).
 */
static int
cmp_hosts(const void *a, const void *b)
{
	return strcmp(((const struct rhost *)a)->name,
	    ((const struct rhost *)b)->name);
}

static int
load_hosts(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT host, status, error, pin_cpu, pinned, pin_error, governor,"
	    " openssl, calib_mhz, facts, cpu_choice, counters, counters_error,"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = run_hosts.host AND w.verdict IS NOT NULL),"
	    " (SELECT COUNT(*) FROM windows w WHERE w.run_id = ?1"
	    "  AND w.host = run_hosts.host AND w.verdict = 'noisy')"
	    " FROM run_hosts WHERE run_id = ?1";
	sqlite3_stmt *st;
	struct rhost *h;
	const cJSON *cores;
	cJSON *facts;
	size_t i, j;
	int rc, ret;

	if ((ret = prepare(db, sql, "run_hosts", r->id, NULL, &st, err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->hosts = report_grow(r->hosts, r->nhosts, sizeof *h);
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
		facts = sqlite3_column_type(st, 9) == SQLITE_NULL ? NULL :
		    cJSON_Parse((const char *)sqlite3_column_text(st, 9));
		h->cpu_model = fact(facts, "cpu_model");
		h->arch = fact(facts, "arch");
		h->os = fact(facts, "os");
		h->kernel = fact(facts, "kernel");
		cores = cJSON_GetObjectItemCaseSensitive(facts, "cores");
		h->cores = cJSON_IsNumber(cores) ? (int64_t)cores->valuedouble :
		    0;
		cJSON_Delete(facts);
		h->cpu_choice = col_dup(st, 10);
		h->counters = col_dup(st, 11);
		h->counters_error = col_dup(st, 12);
		h->windows = sqlite3_column_int64(st, 13);
		h->noisy = sqlite3_column_int64(st, 14);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "run_hosts", err);
	sqlite3_finalize(st);
	/* Hosts that left samples without a run_hosts row (older runs). */
	for (i = 0; i < r->nrows; i++) {
		for (j = 0; j < r->nhosts; j++) {
			if (strcmp(r->hosts[j].name, r->rows[i].host) == 0)
				break;
		}
		if (j < r->nhosts)
			continue;
		r->hosts = report_grow(r->hosts, r->nhosts, sizeof *h);
		h = &r->hosts[r->nhosts++];
		h->name = xstrdup(r->rows[i].host);
		h->pinned = -1;
	}
	if (r->nhosts > 0)
		qsort(r->hosts, r->nhosts, sizeof *r->hosts, cmp_hosts);
	return ret;
}

static int
load_builds(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char sql[] =
	    "SELECT id, host, compiler, compiler_version, cflags, native,"
	    " status, target, source_sha256, binary_sha256, openssl"
	    " FROM builds WHERE run_id = ?1 ORDER BY host, id";
	sqlite3_stmt *st;
	struct rbuild *b;
	int rc, ret;

	if ((ret = prepare(db, sql, "builds", r->id, NULL, &st, err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->builds = report_grow(r->builds, r->nbuilds, sizeof *b);
		b = &r->builds[r->nbuilds++];
		b->id = sqlite3_column_int64(st, 0);
		b->host = col_dup(st, 1);
		b->compiler = col_dup(st, 2);
		b->compiler_version = col_dup(st, 3);
		b->cflags = col_dup(st, 4);
		b->native = col_dup(st, 5);
		b->status = col_dup(st, 6);
		b->target = col_dup(st, 7);
		b->source_sha256 = col_dup(st, 8);
		b->binary_sha256 = col_dup(st, 9);
		b->openssl = col_dup(st, 10);
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
const struct rbuild *
report_find_build(const struct rrun *r, int64_t build_id)
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
	const struct rbuild *b = report_find_build(r, build_id);
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

/* The row of (variant, host, build), made if new; samples come in runs. */
static size_t
row_get(struct rrun *r, const char *variant, const char *host,
    int64_t build_id, size_t last)
{
	struct rrow *w;
	size_t i;

	for (i = last; i < r->nrows; i = (i + 1) % r->nrows) {
		w = &r->rows[i];
		if (w->build_id == build_id && strcmp(w->variant, variant) == 0 &&
		    strcmp(w->host, host) == 0)
			return i;
		if ((i + 1) % r->nrows == last)
			break;
	}
	r->rows = report_grow(r->rows, r->nrows, sizeof *w);
	w = &r->rows[r->nrows];
	w->variant = xstrdup(variant);
	w->host = xstrdup(host);
	w->build_id = build_id;
	return r->nrows++;
}

static void
row_add(struct rrow *w, int64_t steps, int64_t ns, int64_t pos, double clock)
{
	if ((size_t)w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->rates = xrealloc(w->rates, w->cap * sizeof *w->rates);
		w->ns = xrealloc(w->ns, w->cap * sizeof *w->ns);
		w->pos = xrealloc(w->pos, w->cap * sizeof *w->pos);
		w->clocks = xrealloc(w->clocks, w->cap * sizeof *w->clocks);
	}
	w->rates[w->n] = (double)steps * 1e9 / (double)ns;
	w->ns[w->n] = ns;
	w->pos[w->n] = pos;
	w->clocks[w->n++] = clock;
}

/* A sample with counted cycles: cycles per step, ipc, their source. */
static void
row_count(struct rrow *w, double pc, double ipc, const char *src)
{
	size_t n = (size_t)w->counted;

	/* Doubling room: 16, 32, 64... */
	if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
		w->pcs = xrealloc(w->pcs, (n ? 2 * n : 16) * sizeof *w->pcs);
		w->ipcs = xrealloc(w->ipcs, (n ? 2 * n : 16) *
		    sizeof *w->ipcs);
	}
	w->pcs[w->counted] = pc;
	w->ipcs[w->counted++] = ipc;
	if (src != NULL && (w->csrc == NULL || strcmp(src, w->csrc) > 0)) {
		free(w->csrc);
		w->csrc = xstrdup(src);
	}
}

static int
cmp_rows(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;
	int c;

	if ((c = strcmp(x->variant, y->variant)) != 0 ||
	    (c = strcmp(x->host, y->host)) != 0)
		return c;
	return x->build_id < y->build_id ? -1 : x->build_id > y->build_id;
}

/*
 * The rows: one per (variant, host, build) that left any sample, with
 * every valid rate, its position and its clock (the mean of the estimates
 * before and after; the one before alone where there is no after, as from
 * agents older than protocol 3), then the invalid counts.  The first
 * query reads only the index samples_valid, in its order; nothing is
 * sorted by SQLite.  A sample whose estimates before and after differ by
 * more than CLOCK_MOVED_PCT counts as moved.
 */
static int
load_rows(sqlite3 *db, struct rrun *r, struct so_err *err)
{
	static const char valid[] =
	    "SELECT variant, host, build_id, steps, ns, position, calib_mhz,"
	    " calib_after_mhz, cycles, instructions, cycles_source FROM samples"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 1 AND ns > 0";
	static const char invalid[] =
	    "SELECT variant, host, build_id, COUNT(*)"
	    " FROM samples INDEXED BY samples_digest"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 0"
	    " GROUP BY variant, host, build_id";
	sqlite3_stmt *st;
	struct rrow *w;
	const struct rbuild *b;
	double before, after;
	int64_t cycles;
	size_t i = 0;
	int rc, ret;

	if ((ret = prepare(db, valid, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		i = row_get(r, (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    sqlite3_column_int64(st, 2), i);
		w = &r->rows[i];
		before = col_double(st, 6);
		after = col_double(st, 7);
		if (before > 0 && after > 0) {
			r->clocked++;
			if (fabs(after - before) * 100 > CLOCK_MOVED_PCT *
			    fmax(before, after))
				w->moved++;
		}
		cycles = sqlite3_column_int64(st, 8);
		if (cycles > 0)
			row_count(w, (double)cycles /
			    (double)sqlite3_column_int64(st, 3),
			    (double)sqlite3_column_int64(st, 9) /
			    (double)cycles,
			    (const char *)sqlite3_column_text(st, 10));
		/* A counted sample's clock is what its cycles imply. */
		row_add(w, sqlite3_column_int64(st, 3),
		    sqlite3_column_int64(st, 4),
		    sqlite3_column_int64(st, 5), cycles > 0 ? (double)cycles *
		    1e3 / (double)sqlite3_column_int64(st, 4) :
		    !(before > 0) ? 0 : after > 0 ? (before + after) / 2 :
		    before);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "samples", err);
	sqlite3_finalize(st);
	if (ret != 0 || (ret = prepare(db, invalid, "samples", r->id,
	    r->study, &st, err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		i = row_get(r, (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    sqlite3_column_int64(st, 2), i);
		r->rows[i].invalid = sqlite3_column_int64(st, 3);
	}
	if (rc != SQLITE_DONE)
		ret = db_failed(db, "samples", err);
	sqlite3_finalize(st);
	if (r->nrows > 0)
		qsort(r->rows, r->nrows, sizeof *r->rows, cmp_rows);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		r->moved += w->moved;
		w->label = build_label(r, w->host, w->build_id);
		if ((b = report_find_build(r, w->build_id)) != NULL)
			w->compiler = b->compiler;
	}
	return ret;
}

/*
 * The smallest and largest value of col among the run's valid samples,
 * with steps and seed fixed when given: each is one probe of
 * samples_digest.  NULL (nothing) gives 0 and empty strings.
 */
static int
probe(sqlite3 *db, const struct rrun *r, const char *col, int64_t steps,
    const char *seed, char *lo, char *hi, size_t len, struct so_err *err)
{
	char *sql = xasprintf("SELECT (SELECT MIN(%s) FROM samples"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 1%s%s),"
	    " (SELECT MAX(%s) FROM samples"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 1%s%s)", col,
	    steps > 0 ? " AND steps = ?3" : "", seed ? " AND seed = ?4" : "",
	    col, steps > 0 ? " AND steps = ?3" : "", seed ? " AND seed = ?4" :
	    "");
	sqlite3_stmt *st;
	int ret;

	ret = prepare(db, sql, "samples", r->id, r->study, &st, err);
	free(sql);
	if (ret != 0)
		return ret;
	if ((steps > 0 && sqlite3_bind_int64(st, 3, steps) != SQLITE_OK) ||
	    (seed != NULL && sqlite3_bind_text(st, 4, seed, -1,
	    SQLITE_STATIC) != SQLITE_OK) || sqlite3_step(st) != SQLITE_ROW)
		ret = db_failed(db, "samples", err);
	else {
		snprintf(lo, len, "%s", sqlite3_column_type(st, 0) ==
		    SQLITE_NULL ? "" : (const char *)sqlite3_column_text(st, 0));
		snprintf(hi, len, "%s", sqlite3_column_type(st, 1) ==
		    SQLITE_NULL ? "" : (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * Digest agreement for rows and run.  Usually every valid sample of a run
 * has the run's steps, seed and one final digest: six index probes show
 * it, and then every row with valid samples shares them.  Otherwise the
 * rows are grouped by the full query below, which reads the run's
 * samples: a row's digest is ok when its valid samples end in one digest
 * per steps value and so does the whole run, so a variant that computes
 * something else shows even if its samples were wrongly marked valid.
 */
static int
load_digest_fields(sqlite3 *db, struct rrun *r, int *uniform,
    struct so_err *err)
{
	static const char sql[] =
	    "WITH d AS (SELECT steps, COUNT(DISTINCT digest) AS nd"
	    "  FROM samples WHERE run_id = ?1 AND study = ?2 AND valid = 1"
	    "  GROUP BY steps)"
	    " SELECT s.variant, s.host, s.build_id,"
	    "  COUNT(DISTINCT s.steps), COUNT(DISTINCT s.steps || ' ' ||"
	    "  s.digest), MAX(d.nd), COUNT(DISTINCT s.steps || ' ' || s.seed"
	    "  || ' ' || s.digest), MIN(s.steps), MIN(s.seed), MIN(s.digest)"
	    " FROM samples s JOIN d ON d.steps = s.steps"
	    " WHERE s.run_id = ?1 AND s.study = ?2 AND s.valid = 1"
	    " GROUP BY s.variant, s.host, s.build_id";
	char lo[160], hi[160], seed[160], digest[160];
	struct rdigest *d;
	struct rrow *w;
	sqlite3_stmt *st;
	int64_t steps, total = 0;
	size_t i;
	int rc, ret;

	*uniform = 0;
	if ((ret = probe(db, r, "steps", 0, NULL, lo, hi, sizeof lo,
	    err)) != 0)
		return ret;
	if (*lo == '\0')
		return 0;		/* no valid sample at all */
	steps = strtoll(lo, NULL, 10);
	if (strcmp(lo, hi) == 0 && (ret = probe(db, r, "seed", steps, NULL,
	    seed, hi, sizeof seed, err)) == 0 && strcmp(seed, hi) == 0 &&
	    (ret = probe(db, r, "digest", steps, seed, digest, hi,
	    sizeof digest, err)) == 0 && strcmp(digest, hi) == 0) {
		*uniform = 1;
		for (i = 0; i < r->nrows; i++) {
			w = &r->rows[i];
			total += w->n;
			if (w->n == 0)
				continue;
			w->digest = DIGEST_OK;
			w->steps = steps;
			w->seed = xstrdup(seed);
			w->final = xstrdup(digest);
		}
		r->digests = report_grow(r->digests, r->ndigests, sizeof *d);
		d = &r->digests[r->ndigests++];
		d->steps = steps;
		d->n = total;
		d->distinct = 1;
		d->digest = xstrdup(digest);
		return 0;
	}
	if (ret != 0)
		return ret;
	if ((ret = prepare(db, sql, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		i = row_get(r, (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    sqlite3_column_int64(st, 2), 0);
		w = &r->rows[i];
		w->digest = sqlite3_column_int64(st, 4) ==
		    sqlite3_column_int64(st, 3) &&
		    sqlite3_column_int64(st, 5) == 1 ? DIGEST_OK :
		    DIGEST_MISMATCH;
		w->mixed = sqlite3_column_int64(st, 6) > 1;
		w->steps = sqlite3_column_int64(st, 7);
		w->seed = col_dup(st, 8);
		w->final = col_dup(st, 9);
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
		r->digests = report_grow(r->digests, r->ndigests, sizeof *d);
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
	    " FROM samples INDEXED BY samples_digest"
	    " WHERE run_id = ?1 AND study = ?2 AND valid = 0"
	    " ORDER BY host, variant, build_id, sample_index";
	sqlite3_stmt *st;
	struct rinvalid *v;
	int rc, ret;

	if ((ret = prepare(db, sql, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->invalid = report_grow(r->invalid, r->ninvalid, sizeof *v);
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
		r->variants = report_grow(r->variants, r->nvariants, sizeof *v);
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
		r->events = report_grow(r->events, r->nevents, sizeof *e);
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

int
report_load_run(sqlite3 *db, int64_t id, struct rrun *r, struct so_err *err)
{
	int ret, uniform;

	memset(r, 0, sizeof *r);
	r->id = id;
	/* One snapshot for every query, even while a run is writing. */
	if (sqlite3_exec(db, "SAVEPOINT report_load", NULL, NULL, NULL) !=
	    SQLITE_OK)
		return db_failed(db, "the database", err);
	if ((ret = load_header(db, r, err)) != 0 ||
	    (ret = load_builds(db, r, err)) != 0 ||
	    (ret = load_rows(db, r, err)) != 0 ||
	    (ret = load_hosts(db, r, err)) != 0 ||
	    (ret = load_digest_fields(db, r, &uniform, err)) != 0 ||
	    (!uniform && (ret = load_digests(db, r, err)) != 0) ||
	    (ret = load_invalid(db, r, err)) != 0 ||
	    (ret = load_variants(db, r, err)) != 0 ||
	    (ret = load_events(db, r, err)) != 0)
		report_free_run(r);
	sqlite3_exec(db, "RELEASE report_load", NULL, NULL, NULL);
	if (ret == 0)
		report_stats(r);
	return ret;
}

int
report_each_sample(sqlite3 *db, const struct rrun *r,
    int (*fn)(const struct rsample *s, void *arg), void *arg,
    struct so_err *err)
{
	static const char sql[] =
	    "SELECT s.id, s.build_id, s.sample_index, s.position, s.steps,"
	    " s.ns, s.valid, s.cpu, s.host, s.study, s.variant, b.compiler,"
	    " s.digest, s.seed, s.invalid_reason, s.received_at, s.reason,"
	    " s.calib_mhz, s.calib_after_mhz, s.cycles, s.instructions,"
	    " s.cycles_source, s.openssl_cap"
	    " FROM samples s LEFT JOIN builds b ON b.id = s.build_id"
	    " WHERE s.run_id = ?1 AND s.study = ?2"
	    " ORDER BY s.host, s.build_id, s.variant, s.sample_index";
	sqlite3_stmt *st;
	struct rsample x;
	int rc, ret;

	if ((ret = prepare(db, sql, "samples", r->id, r->study, &st,
	    err)) != 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		x.id = sqlite3_column_int64(st, 0);
		x.build_id = sqlite3_column_int64(st, 1);
		x.sample_index = sqlite3_column_int64(st, 2);
		x.position = sqlite3_column_int64(st, 3);
		x.steps = sqlite3_column_int64(st, 4);
		x.ns = sqlite3_column_int64(st, 5);
		x.valid = sqlite3_column_int64(st, 6);
		x.has_cpu = sqlite3_column_type(st, 7) != SQLITE_NULL;
		x.cpu = sqlite3_column_int64(st, 7);
		x.host = (const char *)sqlite3_column_text(st, 8);
		x.study = (const char *)sqlite3_column_text(st, 9);
		x.variant = (const char *)sqlite3_column_text(st, 10);
		x.compiler = (const char *)sqlite3_column_text(st, 11);
		x.digest = (const char *)sqlite3_column_text(st, 12);
		x.seed = (const char *)sqlite3_column_text(st, 13);
		x.invalid_reason = (const char *)sqlite3_column_text(st, 14);
		x.received_at = (const char *)sqlite3_column_text(st, 15);
		x.reason = (const char *)sqlite3_column_text(st, 16);
		x.calib_mhz = sqlite3_column_type(st, 17) == SQLITE_NULL ? NAN :
		    sqlite3_column_double(st, 17);
		x.calib_after_mhz = sqlite3_column_type(st, 18) ==
		    SQLITE_NULL ? NAN : sqlite3_column_double(st, 18);
		x.cycles = sqlite3_column_type(st, 19) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 19);
		x.instructions = sqlite3_column_type(st, 20) == SQLITE_NULL ?
		    -1 : sqlite3_column_int64(st, 20);
		x.cycles_source = (const char *)sqlite3_column_text(st, 21);
		x.openssl_cap = (const char *)sqlite3_column_text(st, 22);
		if (fn(&x, arg) != 0)
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = db_failed(db, "samples", err);
	sqlite3_finalize(st);
	return ret;
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
		*ids = report_grow(*ids, *n, sizeof **ids);
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
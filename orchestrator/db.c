/*
 * results.db access.  The schema is schema.sql, embedded at build time
 * (build/schema.h) and applied section by section: "-- version: N" takes
 * PRAGMA user_version from N-1 to N inside one transaction.
 */
#include "db.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema.h"

#define VERSION_MARK "-- version: "

struct db {
	sqlite3 *h;
	/* Hosts run in threads; a write and its last_insert_rowid pair up. */
	pthread_mutex_t mu;
};

sqlite3 *
db_handle(struct db *db)
{
	return db->h;
}

int
db_schema_version(void)
{
	const char *p = schema_sql;
	int v = 0;

	while ((p = strstr(p, VERSION_MARK)) != NULL) {
		p += strlen(VERSION_MARK);
		v = (int)strtol(p, NULL, 10);
	}
	return v;
}

static int
dberr(struct db *db, struct so_err *err, const char *what)
{
	return so_error(err, SO_EDB, "database: %s: %s", what,
	    sqlite3_errmsg(db->h));
}

/* PRAGMA user_version into *v; 0, or -1 when it cannot be read. */
static int
user_version(struct db *db, int *v)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		*v = sqlite3_column_int(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * Apply every schema section numbered above the current user_version.
 * Each runs in BEGIN IMMEDIATE and re-reads the version inside it, since
 * another coordinator may be migrating the same file at the same moment.
 */
static int
migrate(struct db *db, struct so_err *err)
{
	const char *p = schema_sql;
	int cur = 0, latest = db_schema_version(), rc;

	if (user_version(db, &cur) != 0)
		return dberr(db, err, "cannot read schema version");
	if (cur < 0)
		return so_error(err, SO_EDB, "database: schema version %d was "
		    "not written by seqorch (versions run from 0 to %d)", cur,
		    latest);
	if (cur > latest)
		return so_error(err, SO_EDB, "database: schema version %d is "
		    "newer than this seqorch (%d); upgrade seqorch", cur,
		    latest);
	while ((p = strstr(p, VERSION_MARK)) != NULL) {
		const char *body = p + strlen(VERSION_MARK);
		const char *next = strstr(body, VERSION_MARK);
		int v = (int)strtol(body, NULL, 10);
		char *sql, *msg = NULL;
		size_t len;

		p = body;
		if (v <= cur)
			continue;
		if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
		    SQLITE_OK)
			return dberr(db, err, "cannot lock for migration");
		if (user_version(db, &cur) != 0) {
			rc = dberr(db, err, "cannot read schema version");
			sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		if (cur >= v) {
			sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
			continue;
		}
		len = next ? (size_t)(next - body) : strlen(body);
		sql = xasprintf(VERSION_MARK "%.*s\nPRAGMA user_version = %d;",
		    (int)len, body, v);
		if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(db->h, "COMMIT", NULL, NULL, &msg) !=
		    SQLITE_OK) {
			so_error(err, SO_EDB, "database: migration to schema "
			    "version %d failed: %s", v, msg ? msg : "?");
			sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_free(msg);
			free(sql);
			return SO_EDB;
		}
		free(sql);
		cur = v;
	}
	return 0;
}

int
db_open(const char *path, struct db **out, struct so_err *err)
{
	struct db *db = xcalloc(1, sizeof *db);
	int rc, tries;

	pthread_mutex_init(&db->mu, NULL);
	*out = NULL;
	/* SQLite would open a temporary or in-memory database: nothing kept. */
	if (path[0] == '\0' || strcmp(path, ":memory:") == 0) {
		rc = so_error(err, SO_EINVAL, "database path \"%s\" is not a "
		    "file: SQLite would keep nothing (%s)", path, path[0] ?
		    "in memory only" : "empty: is the variable unset?");
		goto fail;
	}
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "cannot open database \"%s\": %s",
		    path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(db->h, 10000);
	/*
	 * Two coordinators creating the same file both switch it to WAL;
	 * SQLite answers the loser SQLITE_BUSY at once (a lock upgrade the
	 * busy handler cannot wait for), so retry for up to 10 s.
	 */
	for (tries = 0; tries < 200; tries++) {
		rc = sqlite3_exec(db->h, "PRAGMA journal_mode = WAL", NULL,
		    NULL, NULL);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		usleep(50000);
	}
	if (rc != SQLITE_OK || sqlite3_exec(db->h, "PRAGMA foreign_keys = ON; "
	    "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "cannot use database \"%s\": %s",
		    path, sqlite3_errmsg(db->h));
		goto fail;
	}
	if ((rc = migrate(db, err)) != 0) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof err->msg - n, " (in \"%s\")",
		    path);
		goto fail;
	}
	*out = db;
	return 0;
fail:
	sqlite3_close(db->h);
	pthread_mutex_destroy(&db->mu);
	free(db);
	return rc;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	sqlite3_close(db->h);
	pthread_mutex_destroy(&db->mu);
	free(db);
}

/*
 * Prepare sql, bind the arguments described by fmt and step once.
 * fmt letters: s = const char * (NULL binds NULL), i = int64_t,
 * d = double, n = an int64_t that is bound as NULL.  Returns the sqlite step result code or -1.
 */
struct run_out {
	int64_t rowid;
	int changes;
};

static int
run(struct db *db, struct run_out *o, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int i, rc;

	pthread_mutex_lock(&db->mu);
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&db->mu);
		return -1;
	}
	va_start(ap, fmt);
	for (i = 0; fmt[i]; i++) {
		switch (fmt[i]) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (s == NULL)
				sqlite3_bind_null(st, i + 1);
			else
				sqlite3_bind_text(st, i + 1, s, -1,
				    SQLITE_TRANSIENT);
			break;
		}
		case 'i':
			sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
			break;
		case 'd':
			sqlite3_bind_double(st, i + 1, va_arg(ap, double));
			break;
		default:
			(void)va_arg(ap, int64_t);
			sqlite3_bind_null(st, i + 1);
			break;
		}
	}
	va_end(ap);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (o != NULL) {
		o->rowid = sqlite3_last_insert_rowid(db->h);
		o->changes = sqlite3_changes(db->h);
	}
	pthread_mutex_unlock(&db->mu);
	return rc;
}

static char coord_id[320], coord_host[256];
static pthread_once_t coord_once = PTHREAD_ONCE_INIT;

static void
coord_init(void)
{
	if (gethostname(coord_host, sizeof coord_host) != 0)
		snprintf(coord_host, sizeof coord_host, "?");
	coord_host[sizeof coord_host - 1] = '\0';
	snprintf(coord_id, sizeof coord_id, "%s pid %ld", coord_host,
	    (long)getpid());
}

const char *
db_coordinator_id(void)
{
	pthread_once(&coord_once, coord_init);
	return coord_id;
}

int
db_run_begin(struct db *db, const struct run_info *ri, int64_t *run_id,
    struct so_err *err)
{
	const char *coord = db_coordinator_id();
	char now[40];
	struct run_out o;

	iso_now(now, sizeof now);
	if (run(db, &o, "INSERT INTO runs (study, started_at, status, steps, "
	    "samples_per_variant, command, seed, variants, hosts, "
	    "exploratory, coordinator, version, openssl_cap) VALUES "
	    "(?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "ssiissssisss",
	    ri->study, now, (int64_t)ri->steps, (int64_t)ri->samples,
	    ri->command, ri->seed, ri->variants, ri->hosts,
	    (int64_t)ri->exploratory, coord, SEQORCH_VERSION,
	    ri->openssl_cap) != SQLITE_DONE)
		return dberr(db, err, "cannot record run");
	*run_id = o.rowid;
	return 0;
}

int
db_run_finish(struct db *db, int64_t run_id, const char *status,
    struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?",
	    "ssi", status, now, run_id) != SQLITE_DONE)
		return dberr(db, err, "cannot finish run");
	return 0;
}

int
db_run_host_begin(struct db *db, int64_t run_id, const char *host,
    struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "INSERT OR REPLACE INTO run_hosts (run_id, host, status, "
	    "started_at) VALUES (?, ?, 'running', ?)", "iss", run_id, host,
	    now) != SQLITE_DONE)
		return dberr(db, err, "cannot record host");
	return 0;
}

int
db_run_host_facts(struct db *db, int64_t run_id, const char *host,
    const struct host_facts *f, struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "UPDATE run_hosts SET pin_cpu = ?, pinned = ?, "
	    "pin_error = ?, governor = ?, calib_mhz = ?, openssl = ?, "
	    "facts = ?, cpu_choice = ?, counters = ?, counters_error = ? "
	    "WHERE run_id = ? AND host = ?",
	    f->pin_cpu >= 0 ? "iissdsssssis" : "nissdsssssis",
	    (int64_t)f->pin_cpu, (int64_t)f->pinned, f->pin_error,
	    f->governor, f->calib_mhz, f->openssl, f->json, f->cpu_choice,
	    f->counters, f->counters_error, run_id, host) != SQLITE_DONE)
		return dberr(db, err, "cannot record host facts");
	if (run(db, NULL, "INSERT INTO hosts (name, address, arch, os, kernel, "
	    "cpu_model, cores, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
	    "ON CONFLICT (name) DO UPDATE SET address = excluded.address, "
	    "arch = excluded.arch, os = excluded.os, kernel = "
	    "excluded.kernel, cpu_model = excluded.cpu_model, cores = "
	    "excluded.cores, updated_at = excluded.updated_at",
	    "ssssssis", host, f->address, f->arch, f->os, f->kernel,
	    f->cpu_model, (int64_t)f->cores, now) != SQLITE_DONE)
		return dberr(db, err, "cannot record host");
	return 0;
}

int
db_run_host_finish(struct db *db, int64_t run_id, const char *host,
    const char *status, const char *error, struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "UPDATE run_hosts SET status = ?, error = ?, "
	    "finished_at = ? WHERE run_id = ? AND host = ?", "sssis", status,
	    error, now, run_id, host) != SQLITE_DONE)
		return dberr(db, err, "cannot finish host");
	return 0;
}

int
db_build_insert(struct db *db, int64_t run_id, const struct build_info *b,
    int64_t *build_id, struct so_err *err)
{
	char now[40];
	struct run_out o;

	iso_now(now, sizeof now);
	if (run(db, &o, "INSERT INTO builds (run_id, host, compiler, "
	    "compiler_version, target, cflags, native, commands, log, status, "
	    "source_sha256, binary_sha256, openssl, created_at, targeting, "
	    "study, extra) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    "issssssssssssssss",
	    run_id, b->host, b->compiler, b->compiler_version, b->target,
	    b->cflags, b->native, b->commands, b->log, b->status,
	    b->source_sha256, b->binary_sha256, b->openssl, now, b->targeting,
	    b->study, b->extra) !=
	    SQLITE_DONE)
		return dberr(db, err, "cannot record build");
	*build_id = o.rowid;
	return 0;
}

int
db_variant_status(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, const char *study, const char *variant,
    const char *status, const char *reason, struct so_err *err)
{
	if (run(db, NULL, "INSERT OR REPLACE INTO variants (run_id, host, build_id, "
	    "study, variant, status, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
	    "isissss", run_id, host, build_id, study, variant, status,
	    reason) != SQLITE_DONE)
		return dberr(db, err, "cannot record variant");
	return 0;
}

int
db_sample_insert(struct db *db, int64_t run_id, const struct sample_row *s,
    struct so_err *err)
{
	char now[40];
	struct run_out o;
	int rc;

	iso_now(now, sizeof now);
	rc = run(db, &o, "INSERT INTO samples (run_id, host, build_id, study, "
	    "variant, sample_index, position, steps, ns, digest, seed, valid, "
	    "invalid_reason, calib_mhz, calib_after_mhz, cpu, received_at, "
	    "reason, cycles, instructions, cycles_source, openssl_cap) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
	    "ON CONFLICT DO NOTHING", s->counted ? "isissiiiissisddissiiss" :
	    "isissiiiissisddissnnss", run_id,
	    s->host, s->build_id, s->study, s->variant, s->sample_index,
	    s->position, (int64_t)s->steps, (int64_t)s->ns, s->digest,
	    s->seed, (int64_t)s->valid, s->invalid_reason, s->calib_mhz,
	    s->calib_after_mhz, (int64_t)s->cpu, now, s->reason, s->cycles,
	    s->instructions, s->cycles_source, s->openssl_cap);
	if (rc != SQLITE_DONE)
		return dberr(db, err, "cannot store sample");
	if (o.changes == 0)
		return so_error(err, SO_EBUSY, "sample %lld of \"%s\" on host "
		    "\"%s\" already stored", (long long)s->sample_index,
		    s->variant, s->host);
	return 0;
}

int
db_sample_metrics(struct db *db, int64_t run_id, const struct sample_row *s,
    const char *const *names, const double *values, size_t n,
    struct so_err *err)
{
	size_t i;

	/* One statement each: the connection is shared by the host threads,
	 * so a transaction here would take their samples in with it. */
	for (i = 0; i < n; i++)
		if (run(db, NULL, "INSERT OR REPLACE INTO sample_metrics "
		    "(sample_id, name, value) SELECT id, ?, ? FROM samples "
		    "WHERE run_id = ? AND host = ? AND build_id = ? AND "
		    "variant = ? AND sample_index = ?", "sdisisi", names[i],
		    values[i], run_id, s->host, s->build_id, s->variant,
		    s->sample_index) != SQLITE_DONE)
			return dberr(db, err, "cannot store sample metrics");
	return 0;
}

int
db_ref_get(struct db *db, const char *study, const char *seed,
    uint64_t steps, char *digest, size_t len, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->h, "SELECT digest FROM refs WHERE study = ? "
	    "AND seed = ? AND steps = ?", -1, &st, NULL) != SQLITE_OK)
		return dberr(db, err, "cannot read references");
	sqlite3_bind_text(st, 1, study, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, seed, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)steps);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(digest, len, "%s",
		    (const char *)sqlite3_column_text(st, 0));
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = SO_ENOTFOUND;
	else
		rc = dberr(db, err, "cannot read references");
	sqlite3_finalize(st);
	return rc;
}

int
db_ref_put(struct db *db, const char *study, const char *seed,
    uint64_t steps, const char *digest, const char *method,
    struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "INSERT OR REPLACE INTO refs (study, seed, steps, digest, "
	    "method, computed_at) VALUES (?, ?, ?, ?, ?, ?)", "ssisss", study,
	    seed, (int64_t)steps, digest, method, now) != SQLITE_DONE)
		return dberr(db, err, "cannot store reference");
	return 0;
}

int
db_event(struct db *db, int64_t run_id, const char *host, const char *level,
    const char *message, struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "INSERT INTO events (run_id, host, at, level, message) "
	    "VALUES (?, ?, ?, ?, ?)", run_id > 0 ? "issss" : "nssss",
	    run_id, host, now, level, message) != SQLITE_DONE)
		return dberr(db, err, "cannot record event");
	return 0;
}

static double
unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
db_holder_dead(const char *holder_host, long pid)
{
	pthread_once(&coord_once, coord_init);
	if (strcmp(holder_host, coord_host) != 0)
		return 0;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int
db_lease_try(struct db *db, const struct lease_req *req, int *took_over,
    char *prev, size_t prevlen, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char now[40];
	double t = unix_now();
	int rc = 0, free_to_take = 1;

	*took_over = 0;
	prev[0] = '\0';
	iso_now(now, sizeof now);
	pthread_mutex_lock(&db->mu);
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		rc = dberr(db, err, "cannot lock the lease table");
		goto unlock;
	}
	if (sqlite3_prepare_v2(db->h, "SELECT holder, holder_host, holder_pid, "
	    "heartbeat_unix FROM leases WHERE name = ?", -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = dberr(db, err, "cannot read leases");
		goto rollback;
	}
	sqlite3_bind_text(st, 1, req->name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *holder = (const char *)sqlite3_column_text(st, 0);
		const char *hhost = (const char *)sqlite3_column_text(st, 1);
		long pid = (long)sqlite3_column_int64(st, 2);
		double beat = sqlite3_column_double(st, 3);

		snprintf(prev, prevlen, "%s", holder);
		if (strcmp(holder, req->holder) == 0)
			prev[0] = '\0';
		else if (db_holder_dead(hhost, pid) ||
		    t - beat > (double)req->expiry_s)
			*took_over = 1;
		else
			free_to_take = 0;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (!free_to_take) {
		rc = SO_EBUSY;
		goto rollback;
	}
	if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO leases (name, "
	    "holder, holder_host, holder_pid, run_id, study, acquired_at, "
	    "heartbeat_at, heartbeat_unix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    -1, &st, NULL) != SQLITE_OK) {
		rc = dberr(db, err, "cannot write lease");
		goto rollback;
	}
	sqlite3_bind_text(st, 1, req->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, req->holder, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, req->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, req->pid);
	sqlite3_bind_int64(st, 5, req->run_id);
	sqlite3_bind_text(st, 6, req->study, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, now, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, now, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 9, t);
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = dberr(db, err, "cannot write lease");
		goto rollback;
	}
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = dberr(db, err, "cannot commit lease");
		goto rollback;
	}
	goto unlock;
rollback:
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
unlock:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

int
db_lease_heartbeat(struct db *db, const char *name, const char *holder,
    struct so_err *err)
{
	struct run_out o;
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, &o, "UPDATE leases SET heartbeat_at = ?, heartbeat_unix = ? "
	    "WHERE name = ? AND holder = ?", "sdss", now, unix_now(), name,
	    holder) != SQLITE_DONE)
		return dberr(db, err, "cannot refresh lease");
	if (o.changes == 0)
		return so_error(err, SO_ENOTFOUND, "lease \"%s\" was taken "
		    "over", name);
	return 0;
}

int
db_lease_event(struct db *db, const char *name, const char *event,
    const char *holder, const char *previous, int64_t run_id,
    const char *detail, struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "INSERT INTO lease_events (at, name, event, holder, "
	    "previous, run_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
	    run_id > 0 ? "sssssis" : "sssssns", now, name, event, holder,
	    previous, run_id, detail) != SQLITE_DONE)
		return dberr(db, err, "cannot record lease event");
	return 0;
}

int
db_lease_release(struct db *db, const char *name, const char *holder,
    int64_t run_id, struct so_err *err)
{
	struct run_out o;

	if (run(db, &o, "DELETE FROM leases WHERE name = ? AND holder = ?",
	    "ss", name, holder) != SQLITE_DONE)
		return dberr(db, err, "cannot release lease");
	if (o.changes == 0)
		return 0;
	return db_lease_event(db, name, "released", holder, NULL, run_id,
	    NULL, err);
}

int
db_window_begin(struct db *db, const struct window_open *w,
    int64_t *window_id, struct so_err *err)
{
	struct run_out o;

	if (run(db, &o, "INSERT INTO windows (run_id, study, host, build_id, "
	    "holder, started_at, before_state, verdict, preflight) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?)", "ississsss", w->run_id, w->study,
	    w->host, w->build_id, w->holder, w->at, w->state, w->verdict,
	    w->preflight) != SQLITE_DONE)
		return dberr(db, err, "cannot record window");
	*window_id = o.rowid;
	return 0;
}

int
db_window_end(struct db *db, int64_t window_id, const char *at,
    const char *state, const char *drift, struct so_err *err)
{
	if (run(db, NULL, "UPDATE windows SET finished_at = ?, after_state = ?, "
	    "drift = ? WHERE id = ?", "sssi", at, state, drift, window_id) !=
	    SQLITE_DONE)
		return dberr(db, err, "cannot close window");
	return 0;
}

static char *
col_dup(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s != NULL ? xstrdup(s) : NULL;
}

int
db_run_load(struct db *db, int64_t run_id, struct stored_run *out,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(db->h, "SELECT study, seed, variants, hosts, "
	    "status, steps, samples_per_variant, exploratory, openssl_cap "
	    "FROM runs WHERE "
	    "id = ?", -1, &st, NULL) != SQLITE_OK)
		return dberr(db, err, "cannot read runs");
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->study = col_dup(st, 0);
		out->seed = col_dup(st, 1);
		out->variants = col_dup(st, 2);
		out->hosts = col_dup(st, 3);
		out->status = col_dup(st, 4);
		out->steps = (uint64_t)sqlite3_column_int64(st, 5);
		out->samples = (uint64_t)sqlite3_column_int64(st, 6);
		out->exploratory = sqlite3_column_int(st, 7);
		out->openssl_cap = col_dup(st, 8);
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = so_error(err, SO_ENOTFOUND, "no run with id %lld",
		    (long long)run_id);
	else
		rc = dberr(db, err, "cannot read runs");
	sqlite3_finalize(st);
	return rc;
}

void
db_run_info_free(struct stored_run *r)
{
	free(r->openssl_cap);
	free(r->status);
	free(r->hosts);
	free(r->variants);
	free(r->seed);
	free(r->study);
	memset(r, 0, sizeof *r);
}

int
db_run_resume(struct db *db, int64_t run_id, struct so_err *err)
{
	if (run(db, NULL, "UPDATE runs SET status = 'running', finished_at = "
	    "NULL, resumes = resumes + 1 WHERE id = ?", "i", run_id) !=
	    SQLITE_DONE)
		return dberr(db, err, "cannot resume run");
	return 0;
}

int
db_build_find(struct db *db, int64_t run_id, const char *host,
    const char *compiler, const char *binary_sha256, int64_t *build_id,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->h, "SELECT id FROM builds WHERE run_id = ? "
	    "AND host = ? AND compiler = ? AND binary_sha256 = ? AND "
	    "status = 'ok' ORDER BY id LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return dberr(db, err, "cannot read builds");
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, compiler, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, binary_sha256 ? binary_sha256 : "", -1,
	    SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*build_id = sqlite3_column_int64(st, 0);
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = SO_ENOTFOUND;
	else
		rc = dberr(db, err, "cannot read builds");
	sqlite3_finalize(st);
	return rc;
}

/* Missing indices of one variant: updates the running totals. */
static int
missing_of(struct db *db, int64_t run_id, const char *host, int64_t build_id,
    const char *variant, uint64_t samples, uint64_t *first, uint64_t *last,
    uint64_t *count, int *any)
{
	sqlite3_stmt *st = NULL;
	uint64_t i;
	int rc = 0;

	if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM samples WHERE run_id = ? "
	    "AND host = ? AND build_id = ? AND variant = ? AND "
	    "sample_index = ?", -1, &st, NULL) != SQLITE_OK)
		return -1;
	*any = 0;
	for (i = 0; i < samples; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, build_id);
		sqlite3_bind_text(st, 4, variant, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (int64_t)i);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			continue;
		if (rc != SQLITE_DONE)
			break;
		rc = 0;
		if (*count == 0 || i < *first)
			*first = i;
		if (*count == 0 || i > *last)
			*last = i;
		(*count)++;
		*any = 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == 0 ? 0 : -1;
}

int
db_missing_cells(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, uint64_t samples, const char *const *want,
    char **variants, uint64_t *first, uint64_t *last, uint64_t *count,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char *list = NULL, *tmp;
	size_t i;
	int rc = 0, any, step;

	*variants = NULL;
	*first = *last = *count = 0;
	/*
	 * Every requested variant is expected, whether or not the first
	 * attempt got to record it: only one that this build tried and could
	 * not time (skipped, failed) has nothing to measure.
	 */
	if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM variants WHERE "
	    "run_id = ? AND host = ? AND build_id = ? AND variant = ? AND "
	    "status != 'ok'", -1, &st, NULL) != SQLITE_OK)
		return dberr(db, err, "cannot read variants");
	for (i = 0; want[i] != NULL; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, build_id);
		sqlite3_bind_text(st, 4, want[i], -1, SQLITE_STATIC);
		step = sqlite3_step(st);
		if (step == SQLITE_ROW)
			continue;
		if (step != SQLITE_DONE || missing_of(db, run_id, host,
		    build_id, want[i], samples, first, last, count,
		    &any) != 0) {
			rc = dberr(db, err, "cannot read samples");
			break;
		}
		if (!any)
			continue;
		tmp = xasprintf("%s%s%s", list ? list : "", list ? "," : "",
		    want[i]);
		free(list);
		list = tmp;
	}
	sqlite3_finalize(st);
	if (rc != 0)
		free(list);
	else
		*variants = list;
	return rc;
}

int
db_disasm_reuse(struct db *db, const char *host, const char *binary_sha256,
    int64_t build_id, unsigned *bad, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct run_out o;
	int rc;

	rc = run(db, &o, "INSERT INTO disasm (build_id, study, variant, "
	    "symbol, required, missing, status, tool, excerpt, forbidden, "
	    "present) SELECT ?1, study, variant, symbol, required, missing, "
	    "status, tool, excerpt, forbidden, present FROM disasm WHERE build_id = (SELECT b.id FROM "
	    "builds b WHERE b.host = ?2 AND b.binary_sha256 = ?3 AND "
	    "b.id != ?1 AND EXISTS (SELECT 1 FROM disasm d WHERE d.build_id "
	    "= b.id) AND NOT EXISTS (SELECT 1 FROM disasm d WHERE "
	    "d.build_id = b.id AND d.status = 'no-tool') ORDER BY b.id DESC "
	    "LIMIT 1)", "iss", build_id, host, binary_sha256);
	if (rc != SQLITE_DONE)
		return dberr(db, err, "cannot copy a disassembly check");
	if (o.changes == 0)
		return SO_ENOTFOUND;
	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT count(*) FROM disasm WHERE "
	    "build_id = ? AND (status IN ('missing', 'no-symbol') OR "
	    "missing IS NOT NULL)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, build_id);
		rc = sqlite3_step(st);
	}
	if (rc == SQLITE_ROW)
		*bad = (unsigned)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	return rc == SQLITE_ROW ? 0 : dberr(db, err,
	    "cannot read the disassembly check");
}

int
db_disasm_put(struct db *db, const struct disasm_row *d, struct so_err *err)
{
	if (run(db, NULL, "INSERT OR REPLACE INTO disasm (build_id, study, "
	    "variant, symbol, required, missing, status, tool, excerpt, "
	    "forbidden, present) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    "issssssssss", d->build_id, d->study, d->variant, d->symbol,
	    d->required, d->missing, d->status, d->tool, d->excerpt,
	    d->forbidden, d->present) != SQLITE_DONE)
		return dberr(db, err, "cannot record disassembly check");
	return 0;
}

int
db_disasm_forbidden(struct db *db, int64_t build_id, char **list,
    unsigned *n, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char *acc = NULL, *tmp;
	int rc;

	*list = NULL;
	*n = 0;
	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT study || '/' || variant || "
	    "' (' || present || ')' FROM disasm WHERE build_id = ? AND "
	    "status = 'forbidden' ORDER BY study, variant", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, build_id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			tmp = xasprintf("%s%s%s", acc ? acc : "",
			    acc ? ", " : "",
			    (const char *)sqlite3_column_text(st, 0));
			free(acc);
			acc = tmp;
			(*n)++;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (rc != SQLITE_DONE) {
		free(acc);
		*n = 0;
		return dberr(db, err, "cannot read the disassembly check");
	}
	*list = acc;
	return 0;
}

const char *
db_path(struct db *db)
{
	const char *p = sqlite3_db_filename(db->h, "main");

	return p != NULL ? p : "";
}

int
db_artifact_add(struct db *db, const char *sha256, uint64_t size,
    struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (run(db, NULL, "INSERT OR IGNORE INTO artifacts (sha256, size, "
	    "stored_at) VALUES (?, ?, ?)", "sis", sha256, (int64_t)size,
	    now) != SQLITE_DONE)
		return dberr(db, err, "cannot record an artifact");
	return 0;
}

int
db_artifact_have(struct db *db, const char *sha256, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT 1 FROM artifacts WHERE "
	    "sha256 = ?", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, sha256, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return dberr(db, err, "cannot look an artifact up");
}

int
db_artifact_ref(struct db *db, int64_t build_id, const char *kind,
    const char *name, const char *sha256, struct so_err *err)
{
	if (run(db, NULL, "INSERT OR IGNORE INTO artifact_refs (run_id, host, "
	    "build_id, kind, name, sha256) SELECT run_id, host, id, ?2, ?3, "
	    "?4 FROM builds WHERE id = ?1", "isss", build_id, kind, name,
	    sha256) != SQLITE_DONE)
		return dberr(db, err, "cannot record an artifact of a build");
	return 0;
}

int
db_artifact_ref_copy(struct db *db, const char *host,
    const char *binary_sha256, int64_t build_id, const char *kind,
    struct so_err *err)
{
	struct run_out o;

	if (run(db, &o, "INSERT OR IGNORE INTO artifact_refs (run_id, host, "
	    "build_id, kind, name, sha256) SELECT n.run_id, n.host, n.id, "
	    "r.kind, r.name, r.sha256 FROM artifact_refs r, builds n "
	    "WHERE n.id = ?1 AND r.kind = ?4 AND r.build_id = (SELECT b.id "
	    "FROM builds b WHERE b.host = ?2 AND b.binary_sha256 = ?3 AND "
	    "b.id != ?1 AND EXISTS (SELECT 1 FROM artifact_refs x WHERE "
	    "x.build_id = b.id AND x.kind = ?4) ORDER BY b.id DESC LIMIT 1)",
	    "isss", build_id, host, binary_sha256, kind) != SQLITE_DONE)
		return dberr(db, err, "cannot copy the artifacts of a build");
	return o.changes > 0 ? 0 : SO_ENOTFOUND;
}

int
db_artifact_list(struct db *db, int64_t run_id,
    int (*fn)(void *arg, const struct artifact_row *row), void *arg,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct artifact_row r;
	int rc, n = 0, stop = 0;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT r.build_id, r.host, r.kind, "
	    "r.name, r.sha256, a.size FROM artifact_refs r JOIN artifacts a "
	    "USING (sha256) WHERE r.run_id = ? ORDER BY r.host, r.build_id, "
	    "r.kind, r.name", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW && !stop) {
			r.build_id = sqlite3_column_int64(st, 0);
			r.host = (const char *)sqlite3_column_text(st, 1);
			r.kind = (const char *)sqlite3_column_text(st, 2);
			r.name = (const char *)sqlite3_column_text(st, 3);
			r.sha256 = (const char *)sqlite3_column_text(st, 4);
			r.size = sqlite3_column_int64(st, 5);
			n++;
			stop = fn(arg, &r);
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (stop)
		return stop;
	if (rc != SQLITE_DONE)
		return dberr(db, err, "cannot list the artifacts of a run");
	if (n == 0 && run(db, NULL, "SELECT 1 FROM runs WHERE id = ?", "i",
	    run_id) != SQLITE_ROW)
		return so_error(err, SO_ENOTFOUND, "no run %lld",
		    (long long)run_id);
	return 0;
}

int
db_artifact_gc(struct db *db, int dry_run,
    int (*fn)(void *arg, const char *sha256, int64_t size), void *arg,
    uint64_t *n, struct so_err *err)
{
	static const char unnamed[] = "FROM artifacts a WHERE NOT EXISTS "
	    "(SELECT 1 FROM artifact_refs r WHERE r.sha256 = a.sha256)";
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc, stop = 0;

	*n = 0;
	/* One transaction: a run naming an artifact meanwhile waits. */
	pthread_mutex_lock(&db->mu);
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		pthread_mutex_unlock(&db->mu);
		return dberr(db, err, "cannot lock the database for gc");
	}
	sql = xasprintf("SELECT sha256, size %s ORDER BY sha256", unnamed);
	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	free(sql);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		if ((rc = sqlite3_step(st)) != SQLITE_ROW)
			break;
		(*n)++;
		if ((stop = fn(arg, (const char *)sqlite3_column_text(st, 0),
		    sqlite3_column_int64(st, 1))) != 0)
			break;
	}
	sqlite3_finalize(st);
	if (!stop && rc == SQLITE_DONE && !dry_run) {
		sql = xasprintf("DELETE FROM artifacts WHERE sha256 IN (SELECT "
		    "sha256 %s)", unnamed);
		rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK ?
		    SQLITE_DONE : SQLITE_ERROR;
		free(sql);
	}
	if (!stop && rc == SQLITE_DONE &&
	    sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
		pthread_mutex_unlock(&db->mu);
		return 0;
	}
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&db->mu);
	return stop ? stop : dberr(db, err, "cannot collect artifacts");
}

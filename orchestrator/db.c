/*
 * results.db access.  The schema is schema.sql, embedded at build time
 * (build/schema.h) and applied section by section: "-- version: N" takes
 * PRAGMA user_version from N-1 to N inside one transaction.
 */
#include "db.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema.h"

#define VERSION_MARK "-- version: "
#define SEQORCH_VERSION "0.1.0"

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

/* Apply every schema section numbered above the current user_version. */
static int
migrate(struct db *db, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	const char *p = schema_sql;
	int cur, latest = db_schema_version(), rc = 0;

	if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL)
	    != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		rc = dberr(db, err, "cannot read schema version");
		goto out;
	}
	cur = sqlite3_column_int(st, 0);
	if (cur > latest) {
		rc = so_error(err, SO_EDB, "database: schema version %d is "
		    "newer than this seqorch (%d); upgrade seqorch", cur,
		    latest);
		goto out;
	}
	while ((p = strstr(p, VERSION_MARK)) != NULL) {
		const char *body = p + strlen(VERSION_MARK);
		const char *next = strstr(body, VERSION_MARK);
		int v = (int)strtol(body, NULL, 10);
		char *sql, *msg = NULL;
		size_t len;

		p = body;
		if (v <= cur)
			continue;
		len = next ? (size_t)(next - body) : strlen(body);
		sql = xasprintf("BEGIN IMMEDIATE;\n" VERSION_MARK "%.*s\n"
		    "PRAGMA user_version = %d;\nCOMMIT;", (int)len, body, v);
		if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
			rc = so_error(err, SO_EDB, "database: migration to "
			    "schema version %d failed: %s", v,
			    msg ? msg : "?");
			sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_free(msg);
			free(sql);
			goto out;
		}
		free(sql);
	}
out:
	sqlite3_finalize(st);
	return rc;
}

int
db_open(const char *path, struct db **out, struct so_err *err)
{
	struct db *db = xcalloc(1, sizeof *db);
	int rc;

	pthread_mutex_init(&db->mu, NULL);
	*out = NULL;
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "cannot open database \"%s\": %s",
		    path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(db->h, 10000);
	if (sqlite3_exec(db->h, "PRAGMA journal_mode = WAL; "
	    "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
	    NULL, NULL, NULL) != SQLITE_OK) {
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

int
db_run_begin(struct db *db, const struct run_info *ri, int64_t *run_id,
    struct so_err *err)
{
	char now[40], host[256], coord[320];
	struct run_out o;

	iso_now(now, sizeof now);
	if (gethostname(host, sizeof host) != 0)
		strcpy(host, "?");
	host[sizeof host - 1] = '\0';
	snprintf(coord, sizeof coord, "%s pid %ld", host, (long)getpid());
	if (run(db, &o, "INSERT INTO runs (study, started_at, status, steps, "
	    "samples_per_variant, command, seed, variants, hosts, "
	    "exploratory, coordinator, version) VALUES "
	    "(?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)", "ssiissssiss",
	    ri->study, now, (int64_t)ri->steps, (int64_t)ri->samples,
	    ri->command, ri->seed, ri->variants, ri->hosts,
	    (int64_t)ri->exploratory, coord, SEQORCH_VERSION) != SQLITE_DONE)
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
	    "facts = ? WHERE run_id = ? AND host = ?",
	    f->pin_cpu >= 0 ? "iissdssis" : "nissdssis",
	    (int64_t)f->pin_cpu, (int64_t)f->pinned, f->pin_error,
	    f->governor, f->calib_mhz, f->openssl, f->json, run_id,
	    host) != SQLITE_DONE)
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
	    "source_sha256, binary_sha256, openssl, created_at) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "isssssssssssss",
	    run_id, b->host, b->compiler, b->compiler_version, b->target,
	    b->cflags, b->native, b->commands, b->log, b->status,
	    b->source_sha256, b->binary_sha256, b->openssl, now) !=
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
	    "invalid_reason, calib_mhz, cpu, received_at) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
	    "ON CONFLICT DO NOTHING", "isissiiiissisdis", run_id, s->host,
	    s->build_id, s->study, s->variant, s->sample_index, s->position,
	    (int64_t)s->steps, (int64_t)s->ns, s->digest, s->seed,
	    (int64_t)s->valid, s->invalid_reason, s->calib_mhz,
	    (int64_t)s->cpu, now);
	if (rc != SQLITE_DONE)
		return dberr(db, err, "cannot store sample");
	if (o.changes == 0)
		return so_error(err, SO_EBUSY, "sample %lld of \"%s\" on host "
		    "\"%s\" already stored", (long long)s->sample_index,
		    s->variant, s->host);
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

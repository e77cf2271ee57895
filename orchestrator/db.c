/*
 * results.db access.  The schema is schema.sql, embedded at build time
 * (build/schema.h) and applied section by section: "-- version: N" takes
 * PRAGMA user_version from N-1 to N inside one transaction.
 */
#include "db-int.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schema.h"

#define VERSION_MARK "-- version: "

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

int
db_err(struct db *db, struct so_err *err, const char *what)
{
	int rc = so_error(err, SO_EDB, "database: %s: %s", what,
	    sqlite3_errmsg(db->h));

	/*
	 * Locked past the whole busy timeout: someone holds it for good.
	 * What follows (the events, the window's end, the host's outcome)
	 * then waits 1 s each to be stored or reported lost, not 10.
	 */
	if ((sqlite3_errcode(db->h) & 0xff) == SQLITE_BUSY)
		sqlite3_busy_timeout(db->h, 1000);
	return rc;
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
 * SO_EDB when path is another program's database: tables, and no schema
 * version of ours.  seqorch would add its tables to it (and switch it to
 * WAL) without a word.  A file SQLite cannot read passes, for the caller's
 * own error.
 */
static int
not_foreign(struct db *db, const char *path, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int n = 0;

	/*
	 * One statement, one snapshot: another coordinator creating the file
	 * commits its first tables and their version together, and two reads
	 * could see the tables without the version.
	 */
	if (sqlite3_prepare_v2(db->h, "SELECT (SELECT count(*) FROM "
	    "sqlite_master) FROM pragma_user_version WHERE user_version = 0",
	    -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (n == 0)
		return 0;
	return so_error(err, SO_EDB, "database \"%s\" holds another "
	    "program's tables and no seqorch schema: give --db a new file",
	    path);
}

/* SO_EDB unless version cur is one this binary can read or migrate. */
static int
version_known(int cur, int latest, struct so_err *err)
{
	if (cur < 0)
		return so_error(err, SO_EDB, "database: schema version %d was "
		    "not written by seqorch (versions run from 0 to %d)", cur,
		    latest);
	if (cur > latest)
		return so_error(err, SO_EDB, "database: schema version %d is "
		    "newer than this seqorch (%d); upgrade seqorch", cur,
		    latest);
	return 0;
}

/* Name the file at the end of err's message. */
static void
in_path(struct so_err *err, const char *path)
{
	size_t n = strlen(err->msg);

	snprintf(err->msg + n, sizeof err->msg - n, " (in \"%s\")", path);
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
		return db_err(db, err, "cannot read schema version");
	if ((rc = version_known(cur, latest, err)) != 0)
		return rc;
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
			return db_err(db, err, "cannot lock for migration");
		if (user_version(db, &cur) != 0) {
			rc = db_err(db, err, "cannot read schema version");
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

/*
 * The database and the files SQLite keeps beside it must be regular files
 * (or absent): SQLite would block opening or reading a FIFO planted there,
 * and every command would hang.  stat follows a link, which may name a
 * database elsewhere.
 */
static int
regular_or_absent(const char *path, struct so_err *err)
{
	static const char *const side[] = { "", "-wal", "-journal", "-shm" };
	struct strbuf p = STRBUF_INIT;
	struct stat sb;
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof side / sizeof side[0] && rc == 0; i++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s%s", path, side[i]);
		if (stat(p.buf, &sb) == 0 && !S_ISREG(sb.st_mode))
			rc = so_error(err, SO_EDB, "database \"%s\": \"%s\" "
			    "is not a regular file", path, p.buf);
	}
	strbuf_release(&p);
	return rc;
}

/*
 * A new connection to path with the open flags given; sqlite waits up to
 * 10 s for another process's lock.  Free with db_close.
 */
static int
db_connect(const char *path, int flags, struct db **out, struct so_err *err)
{
	struct db *db = xcalloc(1, sizeof *db);
	int rc;

	pthread_mutex_init(&db->mu, NULL);
	*out = NULL;
	/* SQLite would open a temporary or in-memory database: nothing kept. */
	if (path[0] == '\0' || strcmp(path, ":memory:") == 0) {
		rc = so_error(err, SO_EDB, "database path \"%s\" is not a "
		    "file: SQLite would keep nothing (%s)", path, path[0] ?
		    "in memory only" : "empty: is the variable unset?");
		goto fail;
	}
	if (!(flags & SQLITE_OPEN_URI) &&
	    (rc = regular_or_absent(path, err)) != 0)
		goto fail;
	/* A writer's handle is shared by the pool's threads. */
	flags |= flags & SQLITE_OPEN_READONLY ? SQLITE_OPEN_NOMUTEX :
	    SQLITE_OPEN_FULLMUTEX;
	if (sqlite3_open_v2(path, &db->h, flags, NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "cannot open database \"%s\": %s",
		    path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(db->h, DB_BUSY_MS);
	*out = db;
	return 0;
fail:
	db_close(db);
	return rc;
}

int
db_open(const char *path, struct db **out, struct so_err *err)
{
	struct db *db = NULL;
	int rc, tries;

	*out = NULL;
	if ((rc = db_connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
	    &db, err)) != 0)
		return rc;
	if ((rc = not_foreign(db, path, err)) != 0)
		goto fail;
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
		in_path(err, path);
		goto fail;
	}
	*out = db;
	return 0;
fail:
	db_close(db);
	return rc;
}

int
db_can_open(const char *path, struct so_err *err)
{
	char *copy = xstrdup(path), *dir = dirname(copy);
	struct db *db = NULL;
	struct stat sb;
	int cur = 0, rc;

	/* What db_connect refuses ("", ":memory:", a directory), its way. */
	if (path[0] == '\0' || strcmp(path, ":memory:") == 0 ||
	    regular_or_absent(path, NULL) != 0) {
		rc = db_connect(path, SQLITE_OPEN_READONLY, &db, err);
		goto out;
	}
	/* Both a new file and an existing one's journal are made there. */
	if (access(dir, W_OK | X_OK) != 0) {
		rc = so_error(err, SO_EDB, errno == ENOENT || errno == ENOTDIR ?
		    "cannot create database \"%s\": no directory \"%s\"" :
		    "cannot write database \"%s\" in directory \"%s\": %s",
		    path, dir, strerror(errno));
		goto out;
	}
	if (stat(path, &sb) != 0 || sb.st_size == 0) {
		rc = 0;		/* db_open creates its schema */
		goto out;
	}
	if (access(path, R_OK | W_OK) != 0) {
		rc = so_error(err, SO_EDB, "cannot write database \"%s\": %s",
		    path, strerror(errno));
		goto out;
	}
	if ((rc = db_connect(path, SQLITE_OPEN_READONLY, &db, err)) != 0 ||
	    (rc = not_foreign(db, path, err)) != 0)
		goto out;
	if (user_version(db, &cur) != 0)
		rc = db_err(db, err, "cannot read schema version");
	else
		rc = version_known(cur, db_schema_version(), err);
	if (rc != 0)
		in_path(err, path);
out:
	db_close(db);
	free(copy);
	return rc;
}

/* 1 when path has a -wal file beside it: someone may be writing. */
static int
has_wal(const char *path)
{
	struct strbuf wal = STRBUF_INIT;
	int rc;

	strbuf_addf(&wal, "%s-wal", path);
	rc = access(wal.buf, F_OK) == 0;
	strbuf_release(&wal);
	return rc;
}

/*
 * SQLite reads a WAL database through a -shm file it creates beside it;
 * in a directory we cannot write it cannot, and refuses.  With no -wal
 * file there no one is writing, so the file is opened as immutable.
 */
static int
connect_immutable(const char *path, struct db **out, struct so_err *err)
{
	struct strbuf uri = STRBUF_INIT;
	const char *p;
	int rc;

	strbuf_addstr(&uri, "file:");
	for (p = path; *p != '\0'; p++) {
		if (strchr("?#%", *p) != NULL)
			strbuf_addf(&uri, "%%%02X", (unsigned char)*p);
		else
			strbuf_addch(&uri, *p);
	}
	strbuf_addstr(&uri, "?immutable=1");
	rc = db_connect(uri.buf, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, out,
	    err);
	strbuf_release(&uri);
	return rc;
}

/*
 * A read-only connection to path in *out, and its user_version in *cur:
 * 0; else SO_EDB with *out NULL when it cannot be opened (err says why),
 * or with *out open when the version cannot be read (its sqlite3_errmsg
 * says why; the caller closes it).
 */
static int
connect_readonly(const char *path, struct db **out, int *cur,
    struct so_err *err)
{
	int rc;

	if ((rc = db_connect(path, SQLITE_OPEN_READONLY, out, err)) != 0)
		return rc;
	if (user_version(*out, cur) == 0)
		return 0;
	if (sqlite3_extended_errcode((*out)->h) != SQLITE_READONLY_DIRECTORY ||
	    has_wal(path))
		return SO_EDB;
	db_close(*out);
	if ((rc = connect_immutable(path, out, err)) != 0)
		return rc;
	return user_version(*out, cur) == 0 ? 0 : SO_EDB;
}

int
db_open_readonly(const char *path, struct db **out, struct so_err *err)
{
	struct db *db = NULL;
	int cur = 0, latest = db_schema_version(), rc;

	*out = NULL;
	rc = connect_readonly(path, &db, &cur, err);
	if (rc != 0 && db == NULL)
		return rc;
	if (rc != 0)
		rc = db_err(db, err, "cannot read schema version");
	/*
	 * No schema at all: an empty file or another program's.  Creating
	 * one is a writer's business, and a reader leaves the file as is.
	 */
	else if (cur == 0)
		rc = so_error(err, SO_EDB, "database: no seqorch schema, so no "
		    "results to read; `seqorch run` creates them");
	else if ((rc = version_known(cur, latest, err)) == 0 && cur < latest)
		rc = so_error(err, SO_ESTALE, "database: schema version %d is "
		    "older than this seqorch (%d) and is not migrated by a "
		    "command that only reads; `seqorch run` migrates it", cur,
		    latest);
	if (rc != 0) {
		in_path(err, path);
		db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/*
 * 1 when path is a regular file that begins as every SQLite database
 * does, 0 when it is anything else, SO_EIO when it cannot be read.
 * O_NONBLOCK: opening a FIFO must not hang.
 */
static int
sqlite_file(const char *path, struct so_err *err)
{
	static const char magic[16] = "SQLite format 3";
	char head[sizeof magic];
	struct stat sb;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : so_error(err, SO_EIO,
		    "cannot read \"%s\": %s", path, strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		rc = 0;
		goto out;
	}
	n = read(fd, head, sizeof head);
	if (n < 0)
		rc = so_error(err, SO_EIO, "cannot read \"%s\": %s", path,
		    strerror(errno));
	else
		rc = n == (ssize_t)sizeof head &&
		    memcmp(head, magic, sizeof magic) == 0;
out:
	close(fd);
	return rc;
}

int
db_open_any(const char *path, struct db **out, struct so_err *err)
{
	struct db *db = NULL;
	int cur, rc;

	*out = NULL;
	if ((rc = sqlite_file(path, err)) <= 0)
		return rc < 0 ? rc : so_error(err, SO_ENOTFOUND, "\"%s\" is not "
		    "an SQLite database", path);
	rc = connect_readonly(path, &db, &cur, err);
	if (rc != 0 && db != NULL) {
		int x = sqlite3_extended_errcode(db->h);

		/* SQLite's "attempt to write a readonly database" misleads. */
		rc = so_error(err, SO_EDB, "cannot read \"%s\": %s", path,
		    x == SQLITE_READONLY_ROLLBACK ||
		    x == SQLITE_READONLY_RECOVERY ? "a write was cut short and "
		    "must be rolled back, which a reader cannot do (opening it "
		    "with sqlite3 does)" : sqlite3_errmsg(db->h));
		db_close(db);
		return rc;
	}
	*out = db;
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

/* Bind the arguments fmt describes (see db_sql) to st's parameters. */
static void
bind_args(sqlite3_stmt *st, const char *fmt, va_list ap)
{
	char now[40];
	int i;

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
		case 't':
			iso_now(now, sizeof now);
			sqlite3_bind_text(st, i + 1, now, -1,
			    SQLITE_TRANSIENT);
			break;
		default:
			(void)va_arg(ap, int64_t);
			sqlite3_bind_null(st, i + 1);
			break;
		}
	}
}

static int
vsql(struct db *db, struct run_out *o, const char *sql, const char *fmt,
    va_list ap)
{
	sqlite3_stmt *st;
	int rc;

	pthread_mutex_lock(&db->mu);
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&db->mu);
		return -1;
	}
	bind_args(st, fmt, ap);
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
db_sql(struct db *db, struct run_out *o, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vsql(db, o, sql, fmt, ap);
	va_end(ap);
	return rc;
}

int
db_exec(struct db *db, struct so_err *err, const char *what,
    struct run_out *o, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vsql(db, o, sql, fmt, ap);
	va_end(ap);
	return rc == SQLITE_DONE ? 0 : db_err(db, err, what);
}

int
db_each(struct db *db, struct so_err *err, const char *what,
    int (*row)(sqlite3_stmt *st, void *ctx), void *ctx, const char *sql,
    const char *fmt, ...)
{
	sqlite3_stmt *st = NULL;
	va_list ap;
	int rc, stop = 0;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		va_start(ap, fmt);
		bind_args(st, fmt, ap);
		va_end(ap);
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
			stop = row(st, ctx);
	}
	sqlite3_finalize(st);
	if (stop == 0 && rc != SQLITE_DONE)
		stop = db_err(db, err, what);
	pthread_mutex_unlock(&db->mu);
	return stop;
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
db_holder_here(const char *holder_host)
{
	pthread_once(&coord_once, coord_init);
	return strcmp(holder_host, coord_host) == 0;
}

int
db_coordinator_parse(const char *coord, char *host, size_t len, long *pid)
{
	const char *at;

	if (coord == NULL || (at = strstr(coord, " pid ")) == NULL ||
	    (size_t)(at - coord) >= len || sscanf(at + 5, "%ld", pid) != 1)
		return -1;
	snprintf(host, len, "%.*s", (int)(at - coord), coord);
	return 0;
}

int
db_holder_dead(const char *holder_host, long pid)
{
	if (!db_holder_here(holder_host))
		return 0;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The command name of process pid ("self" for ours) into buf, or "". */
static void
proc_comm(const char *pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof path, "/proc/%s/comm", pid);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	fclose(f);
}

int
db_holder_may_expire(const char *holder_host, long pid)
{
	char id[24], theirs[64], ours[64];

	if (!db_holder_here(holder_host))
		return 1;
	snprintf(id, sizeof id, "%ld", pid);
	proc_comm(id, theirs, sizeof theirs);
	proc_comm("self", ours, sizeof ours);
	return theirs[0] == '\0' || ours[0] == '\0' ||
	    strcmp(theirs, ours) != 0;
}

char *
db_col_dup(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s != NULL ? xstrdup(s) : NULL;
}

const char *
db_path(struct db *db)
{
	const char *p = sqlite3_db_filename(db->h, "main");

	return p != NULL ? p : "";
}

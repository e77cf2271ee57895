/*
 * results.db: the measurement lease (leases, lease_events) and the
 * measurement windows it guards.
 */
#include "db-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Past this, a BEGIN IMMEDIATE waited for another writer (the busy
 * handler's first wait is 50 ms).
 */
#define LOOK_WAITED_S 0.05

/*
 * Whether a holder on another machine, whose heartbeat beat is older than
 * the expiry at now, is gone.  Its process cannot be asked, and a live one
 * cannot beat while another writer holds results.db (its writes wait for
 * it up to --db-wait): so it is gone only when the same heartbeat is still
 * there beat_s (its interval) after we first saw it so, results.db free
 * all along.  Our look holds the write lock, so results.db was free at
 * it; a look that had to wait for it (waited seconds) starts over, since
 * the holder waited too.  A live holder beats within that interval.
 */
static int
silent_twice(struct lease_look *look, const char *holder, double beat,
    double now, double waited, int beat_s)
{
	int same = look->since > 0 && waited < LOOK_WAITED_S &&
	    beat == look->beat && strcmp(holder, look->holder) == 0;

	if (same && now - look->since > beat_s)
		return 1;
	if (!same) {
		snprintf(look->holder, sizeof look->holder, "%s", holder);
		look->beat = beat;
		look->since = now;
	}
	look->looking = 1;
	return 0;
}

int
db_lease_try(struct db *db, const struct lease_req *req,
    struct lease_look *look, int *took_over, char *prev, size_t prevlen,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char now[40];
	double asked, t;
	int rc = 0, free_to_take = 1;

	*took_over = 0;
	look->looking = 0;
	prev[0] = '\0';
	pthread_mutex_lock(&db->mu);
	asked = unix_now();
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		rc = db_err(db, err, "cannot lock the lease table");
		goto unlock;
	}
	t = unix_now();
	iso_now(now, sizeof now);
	if (sqlite3_prepare_v2(db->h, "SELECT holder, holder_host, holder_pid, "
	    "heartbeat_unix FROM leases WHERE name = ?", -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = db_err(db, err, "cannot read leases");
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
		else if (db_holder_dead(hhost, pid))
			*took_over = LEASE_DEAD;
		else if (t - beat > (double)req->expiry_s &&
		    db_holder_may_expire(hhost, pid) &&
		    (db_holder_here(hhost) || silent_twice(look, holder, beat,
		    t, t - asked, req->beat_s)))
			*took_over = LEASE_SILENT;
		else
			free_to_take = 0;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (!free_to_take) {
		rc = SO_EBUSY;
		goto rollback;
	}
	if (req->dry)
		goto rollback;
	if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO leases (name, "
	    "holder, holder_host, holder_pid, run_id, study, acquired_at, "
	    "heartbeat_at, heartbeat_unix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, err, "cannot write lease");
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
		rc = db_err(db, err, "cannot write lease");
		goto rollback;
	}
	if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = db_err(db, err, "cannot commit lease");
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
	if (db_sql(db, &o, "UPDATE leases SET heartbeat_at = ?, heartbeat_unix = ? "
	    "WHERE name = ? AND holder = ?", "sdss", now, unix_now(), name,
	    holder) != SQLITE_DONE)
		return db_err(db, err, "cannot refresh lease");
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
	return db_exec(db, err, "cannot record lease event", NULL,
	    "INSERT INTO lease_events (at, name, event, holder, previous, "
	    "run_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
	    run_id > 0 ? "tssssis" : "tssssns", name, event, holder,
	    previous, run_id, detail);
}

int
db_lease_release(struct db *db, const char *name, const char *holder,
    int64_t run_id, struct so_err *err)
{
	struct run_out o;

	if (db_sql(db, &o, "DELETE FROM leases WHERE name = ? AND holder = ?",
	    "ss", name, holder) != SQLITE_DONE)
		return db_err(db, err, "cannot release lease");
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

	if (db_sql(db, &o, "INSERT INTO windows (run_id, study, host, build_id, "
	    "holder, started_at, before_state, verdict, preflight) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?)", "ississsss", w->run_id, w->study,
	    w->host, w->build_id, w->holder, w->at, w->state, w->verdict,
	    w->preflight) != SQLITE_DONE)
		return db_err(db, err, "cannot record window");
	*window_id = o.rowid;
	return 0;
}

static int
window_found_row(sqlite3_stmt *st, void *ctx)
{
	struct window_found *f = ctx;

	f->id = sqlite3_column_int64(st, 0);
	f->started = sqlite3_column_double(st, 1);
	f->open = sqlite3_column_int(st, 2);
	return 1;
}

int
db_window_find(struct db *db, int64_t run_id, const char *study,
    const char *host, const char *at, struct window_found *out,
    struct so_err *err)
{
	int rc;

	memset(out, 0, sizeof *out);
	/* An imported row's before_state need not be JSON. */
	rc = db_each(db, err, "cannot look up window", window_found_row, out,
	    "SELECT id, (julianday(started_at) - 2440587.5) * 86400.0, "
	    "finished_at IS NULL FROM windows WHERE run_id = ? AND study = ? "
	    "AND host = ? AND CASE WHEN json_valid(before_state) THEN "
	    "json_extract(before_state, '$.at') END = ? ORDER BY id DESC "
	    "LIMIT 1", "isss", run_id, study, host, at);
	return rc > 0 ? 0 : rc;
}

int
db_window_end(struct db *db, int64_t window_id, const char *at,
    const char *state, const char *drift, struct so_err *err)
{
	return db_exec(db, err, "cannot close window", NULL, "UPDATE windows "
	    "SET finished_at = ?, after_state = ?, drift = ? WHERE id = ?",
	    "sssi", at, state, drift, window_id);
}

/* Copy column col's text (or "-" for NULL) into dst, of size len. */
static void
col_copy(sqlite3_stmt *st, int col, char *dst, size_t len)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	snprintf(dst, len, "%s", s != NULL ? s : "-");
}

static int
lease_row(sqlite3_stmt *st, void *ctx)
{
	struct lease_state *l = ctx;

	col_copy(st, 0, l->holder, sizeof l->holder);
	col_copy(st, 1, l->holder_host, sizeof l->holder_host);
	l->pid = (long)sqlite3_column_int64(st, 2);
	l->run_id = sqlite3_column_int64(st, 3);
	col_copy(st, 4, l->study, sizeof l->study);
	col_copy(st, 5, l->acquired_at, sizeof l->acquired_at);
	l->age = sqlite3_column_double(st, 6);
	return 1;
}

int
db_lease_get(struct db *db, const char *name, struct lease_state *out,
    struct so_err *err)
{
	int rc;

	memset(out, 0, sizeof *out);
	rc = db_each(db, err, "cannot read leases", lease_row, out, "SELECT "
	    "holder, holder_host, holder_pid, run_id, study, acquired_at, "
	    "(julianday('now') - 2440587.5) * 86400.0 - heartbeat_unix FROM "
	    "leases WHERE name = ?", "s", name);
	return rc == 1 ? 0 : rc == 0 ? SO_ENOTFOUND : rc;
}

struct window_each {
	int (*fn)(void *arg, const struct window_row *w);
	void *arg;
};

static int
window_row(sqlite3_stmt *st, void *ctx)
{
	struct window_each *e = ctx;
	struct window_row w = {
		.id = sqlite3_column_int64(st, 0),
		.run_id = sqlite3_column_int64(st, 1),
		.study = (const char *)sqlite3_column_text(st, 2),
		.host = (const char *)sqlite3_column_text(st, 3),
		.holder = (const char *)sqlite3_column_text(st, 4),
		.started_at = (const char *)sqlite3_column_text(st, 5),
		.closed = sqlite3_column_type(st, 6) != SQLITE_NULL,
		.duration = sqlite3_column_double(st, 6),
		.drift = (const char *)sqlite3_column_text(st, 7),
	};

	return e->fn(e->arg, &w);
}

int
db_window_list(struct db *db, int64_t run_id,
    int (*fn)(void *arg, const struct window_row *w), void *arg,
    struct so_err *err)
{
	struct window_each e = { fn, arg };

	return db_each(db, err, "cannot read windows", window_row, &e,
	    "SELECT id, run_id, study, host, holder, started_at, "
	    "(julianday(finished_at) - julianday(started_at)) * 86400.0, "
	    "drift FROM windows WHERE (?1 = 0 OR run_id = ?1) "
	    "ORDER BY started_at, id", "i", run_id);
}

struct takeover_each {
	int (*fn)(void *arg, const struct lease_takeover *t);
	void *arg;
};

static int
takeover_row(sqlite3_stmt *st, void *ctx)
{
	struct takeover_each *e = ctx;
	struct lease_takeover t = {
		.at = (const char *)sqlite3_column_text(st, 0),
		.holder = (const char *)sqlite3_column_text(st, 1),
		.previous = (const char *)sqlite3_column_text(st, 2),
	};

	return e->fn(e->arg, &t);
}

int
db_lease_takeovers(struct db *db, int limit,
    int (*fn)(void *arg, const struct lease_takeover *t), void *arg,
    struct so_err *err)
{
	struct takeover_each e = { fn, arg };

	return db_each(db, err, "cannot read lease events", takeover_row, &e,
	    "SELECT at, holder, previous FROM lease_events WHERE event = "
	    "'takeover' ORDER BY id DESC LIMIT ?", "i", (int64_t)limit);
}

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
		rc = db_err(db, err, "cannot lock the lease table");
		goto unlock;
	}
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
	char now[40];

	iso_now(now, sizeof now);
	if (db_sql(db, NULL, "INSERT INTO lease_events (at, name, event, holder, "
	    "previous, run_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
	    run_id > 0 ? "sssssis" : "sssssns", now, name, event, holder,
	    previous, run_id, detail) != SQLITE_DONE)
		return db_err(db, err, "cannot record lease event");
	return 0;
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

int
db_window_end(struct db *db, int64_t window_id, const char *at,
    const char *state, const char *drift, struct so_err *err)
{
	if (db_sql(db, NULL, "UPDATE windows SET finished_at = ?, after_state = ?, "
	    "drift = ? WHERE id = ?", "sssi", at, state, drift, window_id) !=
	    SQLITE_DONE)
		return db_err(db, err, "cannot close window");
	return 0;
}

int
db_lease_get(struct db *db, const char *name, struct lease_state *out,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT holder, holder_host, "
	    "holder_pid, run_id, study, acquired_at, strftime('%s', 'now') - "
	    "heartbeat_unix FROM leases WHERE name = ?", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
	}
	if (rc == SQLITE_ROW) {
		out->holder = db_col_dup(st, 0);
		out->holder_host = db_col_dup(st, 1);
		out->pid = (long)sqlite3_column_int64(st, 2);
		out->run_id = sqlite3_column_int64(st, 3);
		out->study = db_col_dup(st, 4);
		out->acquired_at = db_col_dup(st, 5);
		out->age = sqlite3_column_double(st, 6);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? SO_ENOTFOUND : db_err(db, err,
	    "cannot read leases");
}

void
db_lease_state_free(struct lease_state *l)
{
	free(l->acquired_at);
	free(l->study);
	free(l->holder_host);
	free(l->holder);
	memset(l, 0, sizeof *l);
}

int
db_window_list(struct db *db, int64_t run_id,
    int (*fn)(void *arg, const struct window_row *w), void *arg,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct window_row w;
	int rc, stop = 0;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT id, run_id, study, host, "
	    "holder, started_at, (julianday(finished_at) - "
	    "julianday(started_at)) * 86400.0, drift FROM windows WHERE "
	    "(?1 = 0 OR run_id = ?1) ORDER BY started_at, id", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			w.id = sqlite3_column_int64(st, 0);
			w.run_id = sqlite3_column_int64(st, 1);
			w.study = (const char *)sqlite3_column_text(st, 2);
			w.host = (const char *)sqlite3_column_text(st, 3);
			w.holder = (const char *)sqlite3_column_text(st, 4);
			w.started_at = (const char *)sqlite3_column_text(st, 5);
			w.closed = sqlite3_column_type(st, 6) != SQLITE_NULL;
			w.duration = sqlite3_column_double(st, 6);
			w.drift = (const char *)sqlite3_column_text(st, 7);
			stop = fn(arg, &w);
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : db_err(db, err, "cannot read windows");
}

int
db_lease_takeovers(struct db *db, int limit,
    int (*fn)(void *arg, const struct lease_takeover *t), void *arg,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct lease_takeover t;
	int rc, stop = 0;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT at, holder, previous FROM "
	    "lease_events WHERE event = 'takeover' ORDER BY id DESC LIMIT ?",
	    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int(st, 1, limit);
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			t.at = (const char *)sqlite3_column_text(st, 0);
			t.holder = (const char *)sqlite3_column_text(st, 1);
			t.previous = (const char *)sqlite3_column_text(st, 2);
			stop = fn(arg, &t);
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? 0 : db_err(db, err,
	    "cannot read lease events");
}

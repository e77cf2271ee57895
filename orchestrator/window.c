/* The cross-coordinator measurement lease and window drift checks. */
#include "window.h"

#include "progress.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct lease {
	struct db *db;
	int64_t run_id;
	int expiry_s;
	pthread_t beat;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

/* A third of the expiry, so one late beat never loses the lease. */
int
lease_beat_s(int expiry_s)
{
	return expiry_s / 3 > 0 ? expiry_s / 3 : 1;
}

static void *
heartbeat(void *arg)
{
	struct lease *l = arg;
	struct so_err err;
	struct timespec ts;

	pthread_mutex_lock(&l->mu);
	while (!l->done) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += lease_beat_s(l->expiry_s);
		pthread_cond_timedwait(&l->cv, &l->mu, &ts);
		if (l->done)
			break;
		if (db_lease_heartbeat(l->db, LEASE_NAME,
		    db_coordinator_id(), &err) != 0)
			progress_note("warning: %s", err.msg);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* The lease is held either way; a lost history line is said. */
static void
lease_note(int rc, const struct so_err *err)
{
	if (rc != 0)
		progress_note("warning: lease event not stored: %s",
		    err->msg);
}

/*
 * db_lease_try until it is decided: while it looks again at a silent
 * holder on another machine (struct lease_look), say so once and retry.
 */
static int
lease_try(struct db *db, const struct lease_req *req, struct lease_look *look,
    volatile sig_atomic_t *stop, int *took_over, char *prev, size_t len,
    struct so_err *err)
{
	char said[sizeof look->holder] = "";
	int rc;

	for (;;) {
		rc = db_lease_try(db, req, look, took_over, prev, len, err);
		if (rc != SO_EBUSY || !look->looking)
			return rc;
		if (strcmp(said, prev) != 0) {
			progress_note("no heartbeat from %s for over %d s: it "
			    "runs on another machine, so the measurement "
			    "window is taken over only if it stays silent "
			    "%d s more with results.db free", prev,
			    req->expiry_s, req->beat_s);
			snprintf(said, sizeof said, "%s", prev);
		}
		if (*stop)
			return so_error(err, SO_EINTR, "interrupted while "
			    "waiting for the measurement window");
		usleep(250000);
	}
}

static void
lease_req_init(struct lease_req *req, char *host, size_t len, int64_t run_id,
    const char *study, int expiry_s)
{
	if (gethostname(host, len) != 0)
		snprintf(host, len, "?");
	host[len - 1] = '\0';
	*req = (struct lease_req){ .name = LEASE_NAME,
	    .holder = db_coordinator_id(), .host = host, .pid = (long)getpid(),
	    .run_id = run_id, .study = study, .expiry_s = expiry_s,
	    .beat_s = lease_beat_s(expiry_s) };
}

static int
held(struct so_err *err, const char *holder)
{
	return so_error(err, SO_EBUSY, "the measurement window is held by %s "
	    "(--no-wait given)", holder);
}

int
lease_check_free(struct db *db, int expiry_s, volatile sig_atomic_t *stop,
    struct so_err *err)
{
	char host[256], prev[512];
	struct lease_look look = { 0 };
	struct lease_req req;
	struct lease_state l;
	int took_over, rc = db_lease_get(db, LEASE_NAME, &l, err);

	if (rc == SO_ENOTFOUND)
		return 0;
	if (rc != 0)
		return rc;
	if (strcmp(l.holder, db_coordinator_id()) == 0 ||
	    db_holder_dead(l.holder_host, l.pid))
		return 0;
	if (l.age <= expiry_s || !db_holder_may_expire(l.holder_host, l.pid))
		return held(err, l.holder);
	if (db_holder_here(l.holder_host))
		return 0;
	/*
	 * Silent on another machine: lease_acquire's two looks decide, with
	 * results.db ours (so only here a locked results.db is waited for).
	 */
	lease_req_init(&req, host, sizeof host, 0, NULL, expiry_s);
	req.dry = 1;
	rc = lease_try(db, &req, &look, stop, &took_over, prev, sizeof prev,
	    err);
	return rc == SO_EBUSY ? held(err, prev) : rc;
}

int
lease_acquire(struct db *db, int64_t run_id, const char *study, int wait,
    int expiry_s, volatile sig_atomic_t *stop, struct lease **out,
    struct so_err *err)
{
	char host[256], prev[512], shown[512] = "";
	struct lease_look look = { 0 };
	struct lease_req req;
	struct lease *l;
	int took_over, rc, waited = 0;

	*out = NULL;
	lease_req_init(&req, host, sizeof host, run_id, study, expiry_s);
	for (;;) {
		rc = lease_try(db, &req, &look, stop, &took_over, prev,
		    sizeof prev, err);
		if (rc != SO_EBUSY)
			break;
		if (!wait)
			return held(err, prev);
		if (strcmp(prev, shown) != 0) {
			progress_note("waiting for the measurement window, "
			    "held by %s", prev);
			snprintf(shown, sizeof shown, "%s", prev);
			lease_note(db_lease_event(db, LEASE_NAME, "waited",
			    db_coordinator_id(), prev, run_id, NULL, err), err);
		}
		waited = 1;
		if (*stop)
			return so_error(err, SO_EINTR, "interrupted while "
			    "waiting for the measurement window");
		usleep(250000);
	}
	if (rc != 0)
		return rc;
	if (took_over) {
		if (took_over == LEASE_DEAD)
			progress_note("took over the measurement window from "
			    "%s (its process is gone)", prev);
		else
			progress_note("took over the measurement window from "
			    "%s (silent for over %d s)", prev, expiry_s);
		lease_note(db_lease_event(db, LEASE_NAME, "takeover",
		    db_coordinator_id(), prev, run_id, NULL, err), err);
	}
	lease_note(db_lease_event(db, LEASE_NAME, "acquired",
	    db_coordinator_id(), NULL, run_id, waited ? "after waiting" : NULL,
	    err), err);
	l = xcalloc(1, sizeof *l);
	l->db = db;
	l->run_id = run_id;
	l->expiry_s = expiry_s;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	if (pthread_create(&l->beat, NULL, heartbeat, l) != 0) {
		lease_note(db_lease_release(db, LEASE_NAME,
		    db_coordinator_id(), run_id, err), err);
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		free(l);
		return so_error(err, SO_ENOMEM, "cannot start the lease "
		    "heartbeat");
	}
	*out = l;
	return 0;
}

void
lease_release(struct lease *l)
{
	struct so_err err;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->done = 1;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->beat, NULL);
	if (db_lease_release(l->db, LEASE_NAME, db_coordinator_id(),
	    l->run_id, &err) != 0)
		progress_note("warning: %s", err.msg);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

static double
num(const cJSON *state, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(state, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* "comm(pid), ..." of the busy list, appended to buf. */
static void
busy_names(const cJSON *state, const char *when, char *buf, size_t len)
{
	const cJSON *busy = cJSON_GetObjectItemCaseSensitive(state,
	    "busy_on_cpu"), *p;
	size_t used = strlen(buf);

	if (!cJSON_IsArray(busy) || cJSON_GetArraySize(busy) == 0)
		return;
	used += (size_t)snprintf(buf + used, len - used, "%sbusy on the pinned "
	    "cpu %s:", used ? "; " : "", when);
	cJSON_ArrayForEach(p, busy) {
		const cJSON *comm = cJSON_GetObjectItemCaseSensitive(p, "comm");
		const cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "pid");

		if (used >= len)
			break;
		used += (size_t)snprintf(buf + used, len - used, " %s(%d)",
		    cJSON_IsString(comm) ? comm->valuestring : "?",
		    cJSON_IsNumber(pid) ? pid->valueint : -1);
	}
}

char *
window_drift(const char *before, const char *after, const char *skew)
{
	cJSON *b = cJSON_Parse(before ? before : "null");
	cJSON *a = cJSON_Parse(after ? after : "null");
	char buf[1024] = "";
	double f0 = num(b, "calib_mhz"), f1 = num(a, "calib_mhz");
	char *out = NULL;

	if (skew != NULL)
		snprintf(buf, sizeof buf, "%s", skew);
	if (f0 > 0 && f1 > 0 && fabs(f1 - f0) / f0 > 0.03)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
		    "%sclock estimate changed %.1f%% (%.0f -> %.0f MHz)",
		    buf[0] ? "; " : "", 100 * (f1 - f0) / f0, f0, f1);
	busy_names(b, "before", buf, sizeof buf);
	busy_names(a, "after", buf, sizeof buf);
	if (buf[0] != '\0')
		out = xstrdup(buf);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return out;
}

double
window_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds since the epoch of "2026-01-31T12:00:00.000Z", or NAN. */
static double
parse_at(const char *at)
{
	struct tm tm = { 0 };
	int ms, n = 0;

	if (sscanf(at, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year,
	    &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms,
	    &n) != 7 || n == 0 || at[n] != '\0')
		return NAN;
	tm.tm_year -= 1900;
	tm.tm_mon--;
	return (double)timegm(&tm) + ms / 1000.0;
}

char *
window_skew(const char *at, const char *phase, double launched, char *now,
    size_t nowlen)
{
	double t = parse_at(at), t_now = window_clock(), off;
	long s;

	if (isnan(t))
		return NULL;	/* proto.c checked the format */
	if (t > t_now + WINDOW_SKEW_S)
		off = t - t_now;
	else if (t < launched - WINDOW_SKEW_S)
		off = t - launched;
	else
		return NULL;
	iso_now(now, nowlen);
	s = (long)fabs(off);
	return xasprintf("the host's wall clock is at least %ldh%02ldm%02lds "
	    "%s the coordinator's: window %s at %s by the host, kept at the "
	    "coordinator's time", s / 3600, s / 60 % 60, s % 60, off > 0 ?
	    "ahead of" : "behind", phase, at);
}

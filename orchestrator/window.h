/*
 * Measurement windows (docs/windows.md).  One run of one study measures at
 * a time across every coordinator that shares a results.db: it holds the
 * "measure" lease row, refreshed by a heartbeat thread.  A lease whose
 * holder died (same machine, pid gone) or whose heartbeat is older than the
 * expiry (another machine; seen so twice, results.db free between) is
 * taken over, and the takeover is recorded.  Across databases the
 * agents' lock file in each host's workdir serializes the hosts themselves.
 */
#ifndef SEQORCH_WINDOW_H
#define SEQORCH_WINDOW_H

#include "db.h"

#include <signal.h>
#include <stdint.h>

#define LEASE_NAME "measure"
#define LEASE_EXPIRY_DEFAULT 30	/* seconds without a heartbeat */

struct lease;

/* The holder's heartbeat interval, in seconds, at expiry_s. */
int lease_beat_s(int expiry_s);

/*
 * Take the lease for run_id.  With wait, poll until it is free (saying
 * who holds it, through progress_note, when that changes); without, fail
 * with SO_EBUSY naming the holder, at once unless a silent holder on
 * another machine is being looked at again (one heartbeat interval).
 * SO_EINTR when stop is set while waiting.
 * The caller releases the lease with lease_release().
 */
int lease_acquire(struct db *db, int64_t run_id, const char *study,
    int wait, int expiry_s, volatile sig_atomic_t *stop, struct lease **out,
    struct so_err *err);
void lease_release(struct lease *l);

/*
 * Whether lease_acquire could take the lease now, without taking it:
 * 0 when it is free, ours, or its holder is dead or silent for over
 * expiry_s (one on another machine looked at twice, as lease_acquire
 * does); SO_EBUSY naming the live holder; SO_EINTR when stop is set
 * meanwhile; or a database error.  For --no-wait, before a run is created
 * (lease_acquire still decides).
 */
int lease_check_free(struct db *db, int expiry_s, volatile sig_atomic_t *stop,
    struct so_err *err);

/*
 * Compare a window's before and after snapshots (agent JSON objects): a
 * change of the clock estimate over 3% or other processes running on the
 * pinned CPU is drift, and so is skew (window_skew's text, or NULL).
 * Returns a new description, or NULL for none.
 */
char *window_drift(const char *before, const char *after, const char *skew);

/* The coordinator's wall clock, in seconds since the epoch. */
double window_clock(void);

/*
 * A window record's time at (the host's wall clock, as the agent wrote
 * it) can only lie between the agent's launch, at launched
 * (window_clock()), and now, by the coordinator's clock, give or take
 * WINDOW_SKEW_S.  Outside, the host's clock is off (or jumped): returns a
 * new description of how far, with phase ("begin", "end"), and sets now
 * (nowlen bytes) to the coordinator's time, which the window keeps
 * instead.  Else NULL.
 */
#define WINDOW_SKEW_S 2.0
char *window_skew(const char *at, const char *phase, double launched,
    char *now, size_t nowlen);

#endif

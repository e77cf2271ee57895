/*
 * The storage side of `seqorch reproduce` (db-repro.c): a reproduction,
 * the runs of its protocol and the seeds' machines its hosts stood for
 * (schema version 15), and what its published table reads back.
 *
 * Every function returns 0 or a negative SO_E* code with err filled.
 * Strings handed to a callback are valid during the call only.
 */
#ifndef SEQORCH_DB_REPRO_H
#define SEQORCH_DB_REPRO_H

#include "db.h"

#include <stdint.h>

/* Record reproduction name; steps_cap 0: the seed's own lengths. */
int db_repro_begin(struct db *db, const char *name, int64_t steps_cap,
    const char *command, int64_t *id, struct so_err *err);
/* Host host stood for the seeds' machine reference (NULL: none). */
int db_repro_host(struct db *db, int64_t id, const char *host,
    const char *reference, struct so_err *err);
/* Run run_id is part part of reproduction id. */
int db_repro_run(struct db *db, int64_t id, int64_t run_id, const char *part,
    struct so_err *err);

/*
 * The newest reproduction called name: its id (0 when there is none),
 * steps cap (0: none) and start.  started_at is a new string the caller
 * frees (NULL with id 0).
 */
int db_repro_latest(struct db *db, const char *name, int64_t *id,
    int64_t *steps_cap, char **started_at, struct so_err *err);

struct db_repro_run {
	const char	*part, *study, *status;
	int64_t		 run_id, steps, samples;
};
/* Its runs in the order they were made. */
int db_repro_runs(struct db *db, int64_t id,
    void (*fn)(const struct db_repro_run *r, void *arg), void *arg,
    struct so_err *err);

/* Its hosts, by name, with the machine each stood for (or NULL). */
int db_repro_hosts(struct db *db, int64_t id,
    void (*fn)(const char *host, const char *reference, void *arg),
    void *arg, struct so_err *err);

/*
 * Every valid sample of run_id, by host then variant, for seed 003's
 * cycles-per-byte table: its L (0: the study's own chain), steps, ns,
 * cycles (-1 when not counted), clock estimates and cycles_source.
 */
struct db_repro_sample {
	const char	*host, *variant, *cycles_source;
	int64_t		 msg_len, steps, ns, cycles;
	double		 calib_mhz, calib_after_mhz;	/* 0 when NULL */
};
int db_repro_samples(struct db *db, int64_t run_id,
    void (*fn)(const struct db_repro_sample *s, void *arg), void *arg,
    struct so_err *err);

/*
 * The hosts whose builds in the runs of reproduction id so far target
 * arch (`cc -dumpmachine`'s first field as kernels/ name it, through
 * study_arch): fn per host that had any build.
 */
int db_repro_targets(struct db *db, int64_t id,
    void (*fn)(const char *host, const char *target, void *arg), void *arg,
    struct so_err *err);

#endif

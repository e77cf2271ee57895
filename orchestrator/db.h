/*
 * results.db: open (schema + migrations from the embedded schema.sql, WAL),
 * and the writes the coordinator makes.  Every value is bound as a
 * parameter.  Each call that stores a sample commits on its own, so a
 * killed coordinator loses nothing it already received.
 *
 * All functions return 0 or a negative SO_E* code and fill err.  Strings
 * passed in are copied by SQLite; nothing returned needs freeing unless
 * stated.
 */
#ifndef SEQORCH_DB_H
#define SEQORCH_DB_H

#include "util.h"

#include <sqlite3.h>
#include <stdint.h>

struct db;

/* Schema version this binary writes (the last "-- version: N"). */
int db_schema_version(void);

/*
 * Open or create path, apply pending migrations, enable WAL and foreign
 * keys.  A database newer than this binary is refused.  Caller closes.
 */
int db_open(const char *path, struct db **out, struct so_err *err);
void db_close(struct db *db);

/* The raw handle for read-only queries (report, tests).  Owned by db. */
sqlite3 *db_handle(struct db *db);

struct run_info {
	const char *study;
	uint64_t steps;
	uint64_t samples;
	const char *command;
	const char *seed;
	const char *variants;	/* NULL = all */
	const char *hosts;
	int exploratory;
};

int db_run_begin(struct db *db, const struct run_info *ri, int64_t *run_id,
    struct so_err *err);
/* status: ok, partial, failed, interrupted. */
int db_run_finish(struct db *db, int64_t run_id, const char *status,
    struct so_err *err);

/* A host joins a run (status running). */
int db_run_host_begin(struct db *db, int64_t run_id, const char *host,
    struct so_err *err);
/*
 * Store the agent's facts record (verbatim JSON text plus the parsed
 * columns) in run_hosts and refresh the hosts row.
 */
struct host_facts {
	const char *address;
	const char *arch, *os, *kernel, *cpu_model, *governor, *openssl;
	const char *pin_error;
	int cores;
	int pin_cpu;		/* -1 = none */
	int pinned;
	double calib_mhz;
	const char *json;
};
int db_run_host_facts(struct db *db, int64_t run_id, const char *host,
    const struct host_facts *f, struct so_err *err);
/* status: ok, failed, interrupted; error may be NULL. */
int db_run_host_finish(struct db *db, int64_t run_id, const char *host,
    const char *status, const char *error, struct so_err *err);

struct build_info {
	const char *host;
	const char *compiler, *compiler_version, *target, *cflags, *native;
	const char *commands, *log, *status;
	const char *source_sha256, *binary_sha256, *openssl;
};
int db_build_insert(struct db *db, int64_t run_id, const struct build_info *b,
    int64_t *build_id, struct so_err *err);

int db_variant_status(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, const char *study, const char *variant,
    const char *status, const char *reason, struct so_err *err);

struct sample_row {
	const char *host;
	int64_t build_id;
	const char *study, *variant;
	int64_t sample_index, position;
	uint64_t steps, ns;
	const char *digest, *seed;
	int valid;
	const char *invalid_reason;	/* NULL when valid */
	double calib_mhz;
	int cpu;
};
/*
 * Store one sample in its own transaction.  A duplicate (same run, host,
 * build, variant, index) is ignored and reported as SO_EBUSY so the caller
 * can tell a re-sent record from a new one.
 */
int db_sample_insert(struct db *db, int64_t run_id, const struct sample_row *s,
    struct so_err *err);

/*
 * Look up the cached reference digest for (study, seed, steps).  Returns 0
 * and fills digest (>= 129 bytes), SO_ENOTFOUND if absent.
 */
int db_ref_get(struct db *db, const char *study, const char *seed,
    uint64_t steps, char *digest, size_t len, struct so_err *err);
int db_ref_put(struct db *db, const char *study, const char *seed,
    uint64_t steps, const char *digest, const char *method,
    struct so_err *err);

/* level: info, warning, error.  run_id <= 0 and host NULL are allowed. */
int db_event(struct db *db, int64_t run_id, const char *host,
    const char *level, const char *message, struct so_err *err);

#endif

/*
 * The report's storage side: every query the report, export and compare
 * make (issue 16: only the storage layer writes SQL).  Reading a run
 * costs in proportion to that run: each query is bound to one run id and
 * served by an index on samples (run_id, ...).  report-load.c builds the
 * model of report-model.h from what these return.
 *
 * Functions return 0 or SO_EDB ("cannot read <table>: <sqlite error>")
 * with err filled, and never exit.  Strings appended to a struct rrun are
 * owned by it (report_free_run); strings in a struct passed to a callback
 * are valid during the call only.
 */
#ifndef SEQORCH_DB_REPORT_H
#define SEQORCH_DB_REPORT_H

#include "report-model.h"

#include <sqlite3.h>
#include <stdint.h>

/*
 * One read snapshot for every query of a run, even while a run is
 * writing: begin (0 or SO_EDB) and end.
 */
int db_report_begin(sqlite3 *db, struct so_err *err);
void db_report_end(sqlite3 *db);

/*
 * Run r->id's header into r (study, status, times, command, seed, steps,
 * samples, exploratory, openssl_cap).  SO_ENOTFOUND when the run is gone.
 */
int db_report_header(sqlite3 *db, struct rrun *r, struct so_err *err);

/* The run_hosts rows of r with the decoded facts and window counts. */
int db_report_hosts(sqlite3 *db, struct rrun *r, struct so_err *err);

/*
 * Append to r one of its lists: its builds (by host, id); its warning and
 * error events (by id); its invalid samples (by host, variant, build,
 * index) and the variants of its study that did not run, both without
 * labels; its digests per steps value (by steps).
 */
enum db_report_list {
	DB_REPORT_BUILDS,
	DB_REPORT_EVENTS,
	DB_REPORT_INVALID,
	DB_REPORT_VARIANTS,
	DB_REPORT_DIGESTS,
};
int db_report_list(sqlite3 *db, struct rrun *r, enum db_report_list which,
    struct so_err *err);

/*
 * A valid sample of r (valid = 1, ns > 0); clocks 0 when NULL.
 * instructions and cycles_source are read only when cycles > 0 (0 and
 * NULL otherwise): a million uncounted samples skip two columns each.
 */
struct db_valid {
	const char	*variant, *host, *cycles_source;
	int64_t		 build_id, steps, ns, position;
	int64_t		 cycles, instructions;	/* 0 when NULL */
	double		 calib_mhz, calib_after_mhz;
};
/*
 * Every valid sample of r's study in r's run, in the order of the index
 * samples_valid (nothing is sorted by SQLite), to fn.
 */
int db_report_valid(sqlite3 *db, const struct rrun *r,
    void (*fn)(const struct db_valid *s, void *arg), void *arg,
    struct so_err *err);

/* The invalid samples of r per (variant, host, build), to fn. */
int db_report_invalid_counts(sqlite3 *db, const struct rrun *r,
    void (*fn)(const char *variant, const char *host, int64_t build_id,
    int64_t count, void *arg), void *arg, struct so_err *err);

/*
 * The smallest and largest value of col ("steps", "seed" or "digest")
 * among r's valid samples, with steps (> 0) and seed (non-NULL) fixed
 * when given: one probe of samples_digest each.  NULL (nothing) gives
 * empty strings.
 */
int db_report_range(sqlite3 *db, const struct rrun *r, const char *col,
    int64_t steps, const char *seed, char *lo, char *hi, size_t len,
    struct so_err *err);

/* Digest agreement of one (variant, host, build) over its valid samples. */
struct db_digest_group {
	const char	*variant, *host;
	int64_t		 build_id;
	int64_t		 nsteps;	/* distinct steps values */
	int64_t		 nfinals;	/* distinct (steps, digest) */
	int64_t		 run_finals;	/* most digests of one steps, run-wide */
	int64_t		 nkeys;		/* distinct (steps, seed, digest) */
	int64_t		 steps;		/* the smallest of each */
	const char	*seed, *digest;
};
int db_report_digest_groups(sqlite3 *db, const struct rrun *r,
    void (*fn)(const struct db_digest_group *g, void *arg), void *arg,
    struct so_err *err);

/*
 * Stream every sample of run r (valid or not) to fn in (host, build,
 * variant, index) order, the order of the samples' unique index, with the
 * build's compiler; fn returns 0 to go on.
 */
int db_report_samples(sqlite3 *db, const struct rrun *r,
    int (*fn)(const struct rsample *s, void *arg), void *arg,
    struct so_err *err);

/*
 * Run selection.  db_report_run_study: the study of run id in *study
 * (caller frees), or SO_ENOTFOUND.  db_report_recent_ids: "9, 8, 7", the
 * newest ids, for messages; NULL when there are none (caller frees).
 * db_report_latest: the newest run of each study (only study when not
 * NULL; exploratory runs only with explore), by study name, in *ids
 * (caller frees), possibly none.  db_report_absent: why none matched: the
 * exploratory runs (of study, when given) and the studies with runs, a
 * list or NULL (caller frees).
 */
int db_report_run_study(sqlite3 *db, int64_t id, char **study,
    struct so_err *err);
char *db_report_recent_ids(sqlite3 *db);
/*
 * SO_ENOTFOUND with "no run with id N (latest: 9, 8, 7)", or "(it has no
 * runs)", in err: what every command says of an unknown run id.
 */
int db_report_no_run(sqlite3 *db, int64_t id, struct so_err *err);
int db_report_latest(sqlite3 *db, const char *study, int explore,
    int64_t **ids, size_t *n, struct so_err *err);
int db_report_absent(sqlite3 *db, const char *study, int64_t *hidden,
    char **studies, struct so_err *err);
/*
 * The newest run of study after run `after` whose status is ok, in *ok_id
 * (0: none), and the runs newer than it that are not ok, "7 failed, 6
 * interrupted", in *skipped (NULL when none; caller frees).
 */
int db_report_newest_ok(sqlite3 *db, const char *study, int64_t after,
    int64_t *ok_id, char **skipped, struct so_err *err);

#endif

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

#include <cjson/cJSON.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>

struct rows_doc;
struct rows_doc_table;

struct db;

/*
 * From now on a statement that finds the database locked by another
 * writer waits for it up to wait_s seconds instead of the 10 s busy
 * timeout (wait_s 0: back to those 10 s), and once *stop is set, no longer
 * than those 10 s.  When one wait reaches 10 s, warn(path, holder) is
 * called once, in the waiting thread: holder is "sqlite3, pid 4242" when
 * this machine can tell who holds the lock (Linux's /proc/locks), else "".
 */
void db_wait_writers(struct db *db, int wait_s, volatile sig_atomic_t *stop,
    void (*warn)(const char *path, const char *holder));

/* Schema version this binary writes (the last "-- version: N"). */
int db_schema_version(void);

/*
 * Open or create path, apply pending migrations, enable WAL and foreign
 * keys.  A database newer than this binary is refused.  Caller closes.
 * Every failure is SO_EDB: SQLite's, the schema's, or a path SQLite would
 * keep nothing in or could hang on (not a regular file).
 */
int db_open(const char *path, struct db **out, struct so_err *err);
/*
 * Would db_open(path) open or create it, as far as can be told without
 * creating or changing anything: 0, or SO_EDB saying why not (not a
 * regular file, a directory that is missing or cannot be written, a file
 * that cannot be written, another program's database, a newer schema).
 * For a command that has a long check to make before it writes (import
 * verifies its bundle): it fails at once, not after the check.
 */
int db_can_open(const char *path, struct so_err *err);
/*
 * Open an existing path for reading only: no file is created, nothing is
 * migrated or written.  A schema newer than this binary's, not
 * seqorch's, or none (an empty file) is SO_EDB; an older one is SO_ESTALE (a command that may
 * write can then migrate it with db_open).  The handle is for one thread
 * (SQLite's own locking is off: it cost 6% of a 1M-sample report).  Caller
 * closes.
 */
int db_open_readonly(const char *path, struct db **out, struct so_err *err);
/*
 * Open path for reading only whatever its schema (none, older, newer or
 * another program's), as db_open_readonly does: for gc, which reads the
 * databases that share a store.  SO_ENOTFOUND when path is not an SQLite
 * database (a regular file that begins with "SQLite format 3\0"); SO_EIO
 * when it cannot be read; SO_EDB when SQLite cannot read it (locked,
 * corrupt, a FIFO beside it), err saying `cannot read "PATH": WHY`.
 * Caller closes.
 */
int db_open_any(const char *path, struct db **out, struct so_err *err);
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
	const char *openssl_cap;	/* --openssl-cap, or NULL */
	const char *openssl_cap_clear;	/* --openssl-cap-clear, or NULL */
	double max_cv;			/* --max-cv, --max-samples */
	uint64_t max_samples;
	uint64_t msg_len;		/* --msg-len, or 0 (stored NULL) */
	uint64_t warmup;		/* --warmup, or 0 (stored NULL) */
	int take_over;			/* --take-over: see db_run_resume */
};

int db_run_begin(struct db *db, const struct run_info *ri, int64_t *run_id,
    struct so_err *err);
/* status: ok, partial, failed, interrupted. */
int db_run_finish(struct db *db, int64_t run_id, const char *status,
    struct so_err *err);

/*
 * How samples.invalid_reason begins for a sample of the right digest
 * whose variant's disassembly holds instructions it forbids: the build's
 * warning names the variant, and the run does not count it invalid.
 */
#define SAMPLE_FORBIDDEN "its disassembly holds instructions it forbids"

/*
 * The whole run's samples, whichever coordinator stored them: the timed
 * ones, of them the valid ones, and the invalid ones as the collector
 * counts them (warmups too; not those SAMPLE_FORBIDDEN marks).
 */
struct run_tally {
	uint64_t samples, valid, invalid;
};
int db_run_tally(struct db *db, int64_t run_id, struct run_tally *t,
    struct so_err *err);

/*
 * A host joins a run (status running); one it had already (a resume)
 * keeps its facts.
 */
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
	const char *cpu_choice;		/* cpu = "auto": why; or NULL */
	const char *counters;		/* pmu, test-seam or none */
	const char *counters_error;	/* why none; or NULL */
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
	const char *targeting;	/* "default", "native"; NULL: not stated */
	const char *study;	/* whose prebuild.sh went in; or NULL */
	const char *extra;	/* prebuild's key=value lines; or NULL */
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
	int64_t host_position;	/* place in the host's whole order */
	int warmup;		/* a --warmup sample: no place, no rate */
	uint64_t steps, ns;
	const char *digest, *seed;
	int valid;
	const char *invalid_reason;	/* NULL when valid */
	double calib_mhz;	/* clock estimate before the sample */
	double calib_after_mhz;	/* and after it */
	int cpu;
	const char *reason;	/* why an extra (adaptive) sample; or NULL */
	int counted;		/* cycles and instructions are set */
	int64_t cycles, instructions;
	const char *cycles_source;	/* pmu, test-seam or calibration */
	const char *openssl_cap;	/* the agent's OpenSSL cap, or NULL */
	/* --openssl-cap-clear: the mask detected and the bits cleared
	 * (openssl_cap is then the mask applied), else NULL */
	const char *openssl_cap_detected, *openssl_cap_cleared;
	uint64_t msg_len;	/* --msg-len's L, or 0 (stored NULL) */
	int64_t window_id;	/* its launch's windows row, or 0 (NULL) */
};
/*
 * Store one sample in its own transaction.  A duplicate (same run, host,
 * build, variant, index) is ignored and reported as SO_EBUSY so the caller
 * can tell a re-sent record from a new one.
 */
int db_sample_insert(struct db *db, int64_t run_id, const struct sample_row *s,
    struct so_err *err);

/*
 * Store the n named metrics of a sample stored by db_sample_insert (found
 * by run, host, build, variant and index).
 */
int db_sample_metrics(struct db *db, int64_t run_id, const struct sample_row *s,
    const char *const *names, const double *values, size_t n,
    struct so_err *err);

/*
 * Look up the cached reference digest for (study, seed, steps, msg_len;
 * 0: the study's own chain).  Returns 0 and fills digest (>= 129 bytes),
 * SO_ENOTFOUND if absent.
 */
int db_ref_get(struct db *db, const char *study, const char *seed,
    uint64_t steps, uint64_t msg_len, char *digest, size_t len,
    struct so_err *err);
int db_ref_put(struct db *db, const char *study, const char *seed,
    uint64_t steps, uint64_t msg_len, const char *digest,
    const char *method, struct so_err *err);

/* level: info, warning, error.  run_id <= 0 and host NULL are allowed. */
int db_event(struct db *db, int64_t run_id, const char *host,
    const char *level, const char *message, struct so_err *err);


/*
 * The measurement lease (schema version 2).  db_lease_try takes the lease
 * `name` inside BEGIN IMMEDIATE if it is free, held by us already, held by
 * a dead process on this machine, or its heartbeat is older than
 * expiry_s and db_holder_may_expire (a holder on another machine: seen
 * so twice, see struct lease_look); then returns 0 and sets *took_over
 * when it replaced another holder (whose text is copied to prev):
 * LEASE_DEAD or LEASE_SILENT.  If someone else holds it, returns
 * SO_EBUSY and copies the holder's text to prev.  With req->dry it only
 * looks: the same answers, the lease left as it was.
 */
enum { LEASE_DEAD = 1, LEASE_SILENT };
struct lease_req {
	const char *name, *holder, *host;
	long pid;
	int64_t run_id;
	const char *study;
	int expiry_s;
	int beat_s;	/* the holders' heartbeat interval */
	int dry;
};
/*
 * A holder on another machine found silent past the expiry by the
 * caller's tries (zeroed before the first): its heartbeat, since when we
 * have seen it unchanged with results.db free (0: not yet), and whether
 * the last try is looking again before taking it over (SO_EBUSY then).
 */
struct lease_look {
	char holder[320];
	double beat, since;
	int looking;
};
int db_lease_try(struct db *db, const struct lease_req *req,
    struct lease_look *look, int *took_over, char *prev, size_t prevlen,
    struct so_err *err);
/* Refresh our heartbeat; SO_ENOTFOUND if the lease is no longer ours. */
int db_lease_heartbeat(struct db *db, const char *name, const char *holder,
    struct so_err *err);
/* Drop the lease if we hold it, and record the release. */
int db_lease_release(struct db *db, const char *name, const char *holder,
    int64_t run_id, struct so_err *err);
int db_lease_event(struct db *db, const char *name, const char *event,
    const char *holder, const char *previous, int64_t run_id,
    const char *detail, struct so_err *err);

/*
 * A host's measurement window opens (returns its id) and closes.  verdict
 * ("quiet", "noisy") and preflight (the agent's preflight record, JSON)
 * may be NULL when the agent sent none.
 */
struct window_open {
	int64_t run_id, build_id;
	const char *study, *host, *holder, *at, *state;
	const char *verdict, *preflight;
};
int db_window_begin(struct db *db, const struct window_open *w,
    int64_t *window_id, struct so_err *err);
int db_window_end(struct db *db, int64_t window_id, const char *at,
    const char *state, const char *drift, struct so_err *err);
/*
 * The window of run_id, study and host that began at `at` by the agent's
 * clock (its before_state's "at"): a launch an earlier coordinator
 * stored, read again at a resume.  out->id is 0 when none was stored.
 */
struct window_found {
	int64_t id;
	double started;		/* its started_at, seconds since the epoch */
	int open;		/* no end stored */
};
int db_window_find(struct db *db, int64_t run_id, const char *study,
    const char *host, const char *at, struct window_found *out,
    struct so_err *err);

/*
 * Reading them back (seqorch windows).  db_lease_get fills *out with the
 * lease `name` (strings cut to the buffers, "-" for NULL) or is
 * SO_ENOTFOUND when no one holds it.  db_window_list calls fn for each
 * window of run_id (0: of every run) in order of start, and
 * db_lease_takeovers for the newest `limit` takeovers of the lease; their
 * rows' strings point into SQLite's row (NULL when the column is) and
 * live until fn returns.  fn returning non-zero stops, and is returned.
 */
struct lease_state {
	char holder[320], holder_host[256], study[64], acquired_at[40];
	int64_t run_id;
	long pid;
	double age;	/* seconds since the last heartbeat */
};
int db_lease_get(struct db *db, const char *name, struct lease_state *out,
    struct so_err *err);

struct window_row {
	int64_t id, run_id;
	const char *study, *host, *holder, *started_at, *drift;
	int closed;		/* it has an end */
	double duration;	/* seconds, when closed */
};
int db_window_list(struct db *db, int64_t run_id,
    int (*fn)(void *arg, const struct window_row *w), void *arg,
    struct so_err *err);

struct lease_takeover {
	const char *at, *holder, *previous;
};
int db_lease_takeovers(struct db *db, int limit,
    int (*fn)(void *arg, const struct lease_takeover *t), void *arg,
    struct so_err *err);

/* A stored run, for --resume.  Strings are owned; db_run_info_free. */
struct stored_run {
	char *study, *seed, *variants, *hosts, *status, *openssl_cap;
	char *openssl_cap_clear;	/* --openssl-cap-clear, or NULL */
	uint64_t steps, samples;
	double max_cv;		/* its adaptive settings; 0 for older runs */
	uint64_t max_samples;
	uint64_t msg_len;		/* --msg-len, or 0 */
	uint64_t warmup;		/* --warmup, or 0 */
	int exploratory;
	/* An imported run: its origin coordinator and run; NULL, 0 if not. */
	char *imported_from;
	int64_t origin_run_id;
};
int db_run_load(struct db *db, int64_t run_id, struct stored_run *out,
    struct so_err *err);
void db_run_info_free(struct stored_run *r);
/*
 * One past the largest sample index of build build_id's timed samples (no
 * warmup) in run run_id on host into *end (0 when it has none): the index
 * a resumed build's extra rounds take next.  0, or SO_EDB.
 */
int db_build_index_end(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, int64_t *end, struct so_err *err);
/*
 * Each timed sample (no warmup) of build build_id in run run_id on host,
 * but those of sample index skip_lo to skip_hi, in the order the run took
 * them (host_position): row gets its variant, sample index and ns, and
 * stops the rows by returning non-zero.  Returns that value, 0 when the
 * rows ran out, or SO_EDB.
 */
int db_build_samples(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, int64_t skip_lo, int64_t skip_hi,
    int (*row)(void *arg, const char *variant, int64_t index, int64_t ns),
    void *arg, struct so_err *err);
/*
 * One past the largest host_position of build build_id's samples in run
 * run_id on host into *end (0 when it has none): where the host's next
 * build started in the run's order.  0, or SO_EDB.
 */
int db_build_end_position(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, int64_t *end, struct so_err *err);
/*
 * The database's identity (32 lowercase hex digits, made with it) into
 * id: it names the run directories left on hosts, so that one database's
 * never pass for another's.  0, or SO_EDB when it is missing or damaged.
 */
int db_identity(struct db *db, char id[33], struct so_err *err);
/*
 * What run run_id recorded of one host's settings, the reference a
 * resume is held to: each build's compiler and cflags in build order,
 * and, once an agent of the host reported its facts, the cpu it was asked
 * for.
 */
struct recorded_host {
	char **compiler, **cflags;	/* per build */
	size_t nbuilds;
	int facts;		/* 1: pin_cpu and cpu_auto hold */
	int64_t pin_cpu;	/* the cpu asked for, or chosen; -1: none */
	int cpu_auto;		/* cpu = "auto": the agent chose pin_cpu */
};
int db_run_host_recorded(struct db *db, int64_t run_id, const char *host,
    struct recorded_host *out, struct so_err *err);
void db_recorded_host_free(struct recorded_host *r);
/* The names of run run_id's hosts (run_hosts), a new list of new strings. */
int db_run_host_names(struct db *db, int64_t run_id, char ***names,
    size_t *n, struct so_err *err);

/*
 * Mark a stored run running again, by this coordinator, and count the
 * resume; SO_EBUSY when it is still running (its coordinator, on this
 * machine, lives; or runs on another machine, where none can tell,
 * unless take_over: the user knows it is gone).
 */
int db_run_resume(struct db *db, int64_t run_id, int take_over,
    struct so_err *err);

/*
 * The build of this run on host with the same compiler and binary, if any:
 * 0 and *build_id, or SO_ENOTFOUND.
 */
int db_build_find(struct db *db, int64_t run_id, const char *host,
    const char *compiler, const char *binary_sha256, int64_t *build_id,
    struct so_err *err);

/*
 * The cells (variant, sample index < samples) of a build that have no
 * stored sample.  Variants are all of `want` (NULL-terminated: the run's
 * variants that this build's architecture has) except those the build
 * recorded as skipped or failed.  Returns the variants
 * with a missing cell as a new comma list in *variants (NULL when none),
 * the lowest and highest missing index, and the number of missing cells.
 */
int db_missing_cells(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, uint64_t samples, const char *const *want,
    char **variants, uint64_t *first, uint64_t *last, uint64_t *count,
    struct so_err *err);

/*
 * One variant's disassembly check (schema versions 3 and 7): forbidden and
 * present (the forbidden mnemonics found) may be NULL.
 */
struct disasm_row {
	int64_t build_id;
	const char *study, *variant, *symbol, *required, *missing;
	const char *status, *tool, *excerpt, *forbidden, *present;
};
int db_disasm_put(struct db *db, const struct disasm_row *d,
    struct so_err *err);
/*
 * The variants of build_id whose binary holds instructions they forbid:
 * *n of them, and in *list (a new string the caller frees, NULL when
 * none) "study/variant (mnemonics)", comma separated.
 */
int db_disasm_forbidden(struct db *db, int64_t build_id, char **list,
    unsigned *n, struct so_err *err);
/*
 * The forbidden mnemonics the disassembly check found in study/variant of
 * build_id, in *present (a new string the caller frees), or NULL when it
 * found none or there was no check.
 */
int db_disasm_present(struct db *db, int64_t build_id, const char *study,
    const char *variant, char **present, struct so_err *err);
/*
 * The same binary on the same host was checked before: copy that check's
 * rows to build_id, and count in *bad its variants that lack an
 * instruction or their function.  SO_ENOTFOUND when there is no such
 * check (or it had no objdump to work with).  A build of an imported run
 * is never reused (its host is another coordinator's, its rows a
 * bundle's); nor by db_artifact_ref_copy.
 */
int db_disasm_reuse(struct db *db, const char *host,
    const char *binary_sha256, int64_t build_id, unsigned *bad,
    struct so_err *err);

/* 1 if a lease holder on this machine (holder_host) has no process pid. */
int db_holder_dead(const char *holder_host, long pid);
/* 1 if holder_host is this machine's name. */
int db_holder_here(const char *holder_host);
/*
 * 1 if a lease holder whose heartbeat is older than the expiry may be
 * taken for dead.  One on this machine whose process pid runs (and runs
 * our program, as far as /proc tells: not a reused pid) may not: a live
 * coordinator cannot beat while another writer holds results.db, which
 * its stores wait for up to --db-wait, and its agents go on measuring.
 */
int db_holder_may_expire(const char *holder_host, long pid);
/*
 * runs.coordinator, "HOST pid N", into host (len bytes) and *pid: 0, or -1
 * when it is not of that form.
 */
int db_coordinator_parse(const char *coord, char *host, size_t len,
    long *pid);

/*
 * Artifacts (schema version 5, orchestrator/artifact.h keeps the files).
 * db_artifact_add records a stored file (again: nothing changes);
 * db_artifact_have is 1 when sha is recorded, 0 when not.
 * db_artifact_ref names an artifact from a build (and so its run and
 * host); db_artifact_ref_copy gives build_id the refs of `kind` that an
 * earlier build of the same binary on host has (SO_ENOTFOUND: none).
 * Storing and naming a file go through artifact.h (artifact_keep,
 * artifact_name), under the store's lock that gc respects; ref_copy needs
 * no lock, its files being named already.
 */
int db_artifact_add(struct db *db, const char *sha256, uint64_t size,
    struct so_err *err);
int db_artifact_have(struct db *db, const char *sha256, struct so_err *err);
int db_artifact_ref(struct db *db, int64_t build_id, const char *kind,
    const char *name, const char *sha256, struct so_err *err);
int db_artifact_ref_copy(struct db *db, const char *host,
    const char *binary_sha256, int64_t build_id, const char *kind,
    struct so_err *err);

/* One artifact a run names; strings point into SQLite's row. */
struct artifact_row {
	int64_t build_id;
	const char *host, *kind, *name, *sha256;
	int64_t size;
};

/*
 * Call fn for every artifact that run_id names, by host, build, kind and
 * name; fn returning non-zero stops (and is returned).  SO_ENOTFOUND when
 * there is no such run.
 */
int db_artifact_list(struct db *db, int64_t run_id,
    int (*fn)(void *arg, const struct artifact_row *row), void *arg,
    struct so_err *err);

/*
 * Forget every recorded artifact no run names, in one transaction; once
 * it is committed, call fn with each one's sha to remove its file (never
 * before: a failed commit must leave no row naming a removed file), but
 * for one recorded again meanwhile.  fn returning non-zero stops and is
 * returned.  With dry_run nothing is forgotten and fn sees each.
 */
int db_artifact_gc(struct db *db, int dry_run,
    int (*fn)(void *arg, const char *sha256, int64_t size), void *arg,
    struct so_err *err);

/*
 * Call fn with every name db records (table artifacts) or names
 * (artifact_refs), each once, until it returns non-zero (returned).
 * SO_ENOTFOUND when db has not both tables: another program's database,
 * or seqorch's before schema version 5, names no artifact.  SO_EDB
 * (`cannot read "PATH": WHY`) when they cannot be read.
 */
int db_artifact_names(struct db *db, int (*fn)(void *arg,
    const char *sha256), void *arg, struct so_err *err);

/*
 * A run's rows (db-rows.c): every row of every table that leads to run_id
 * by foreign keys, with the artifacts and refs rows they name, one table
 * and one row at a time, as rows.json holds them ({"tables": {NAME:
 * {"columns": [...], "rows": [[...], ...]}}}): table() with the table's
 * name and its column names (a cJSON array), then row() with each row (a
 * cJSON array of its values, integers and reals as numbers, NULL as null);
 * both are freed after the call.  A callback's nonzero return stops the
 * walk and is returned.  SO_ENOTFOUND: no such run.
 */
struct db_rows_visitor {
	int (*table)(void *arg, const char *name, const cJSON *columns,
	    struct so_err *err);
	int (*row)(void *arg, const cJSON *row, struct so_err *err);
	void *arg;
};

int db_run_rows_each(struct db *db, int64_t run_id,
    const struct db_rows_visitor *v, struct so_err *err);

/* Where a bundle's runs came from (table imports). */
struct import_origin {
	const int64_t *runs;			/* the manifest's, in order */
	size_t nruns;
	const char *coordinator, *db_path;	/* as the bundle says */
	/* Of the verifying key; NULL: imported unsigned (imports.signed 0). */
	const char *key_fingerprint;
	const char *manifest_sha256;		/* the bundle's identity */
};

/*
 * A file of the bundle, stored by artifact_put and recorded by the import,
 * under artifact_lock from the one to the other.
 */
struct import_file {
	char sha256[65];
	uint64_t size;
};

/*
 * Check rows (a bundle's rows.json) without a database: only the tables
 * and columns an import writes (or knows to skip), every value of its
 * column's type (integers JSON integers, never "1"), artifact names 64
 * lowercase hex digits, no id twice, and every row reached from one of
 * runs[0..nruns) through the ids it names.  SO_EPROTO names the table,
 * row and column.  JS_SYNTAX (before any such finding): rows.json is not
 * JSON after all, its rows being checked here (rows-doc.h).
 */
int db_rows_check(struct rows_doc *rows, const int64_t *runs, size_t nruns,
    struct so_err *err);

/*
 * rows.json opened as db_rows_check and db_run_import read it (rows-doc.h,
 * with the tables an import knows): len bytes at off of fd, which d takes
 * over, or in memory.  JS_SYNTAX: not JSON.  Free d with rows_doc_free.
 */
int db_rows_open_fd(struct rows_doc *d, int fd, uint64_t off, uint64_t len,
    const char *name, struct so_err *err);
int db_rows_open_mem(struct rows_doc *d, const void *data, size_t len,
    const char *name, struct so_err *err);
/* Table name of d (NULL when absent) and its slot for rows_doc_each. */
const struct rows_doc_table *db_rows_table(const struct rows_doc *d,
    const char *name, size_t *slot);

/*
 * Import a bundle, all or nothing, in one transaction: record its stored
 * files (files[0..nfiles)), then insert the rows of each run of
 * o->runs (rows as db_rows_check accepts them) under new ids, and record
 * each one's origin.  new_ids[i] gets run o->runs[i]'s id here, and
 * earlier[i] is 1 when that run of the same bundle was imported before
 * (new_ids[i] is then the earlier import's, and nothing of it is written
 * again).  Nothing but the runs' own rows is written: never refs, hosts,
 * leases or imports rows of the bundle.  A bad value or table, and a row
 * this database's constraints refuse, are SO_EPROTO (one line naming the
 * table and row), with nothing written.
 */
int db_run_import(struct db *db, struct rows_doc *rows,
    const struct import_origin *o, const struct import_file *files,
    size_t nfiles, int64_t *new_ids, int *earlier, struct so_err *err);

/* The file results.db was opened from (absolute); static to db. */
const char *db_path(struct db *db);

/* Identity of this coordinator: "hostname pid N"; static storage. */
const char *db_coordinator_id(void);

#endif

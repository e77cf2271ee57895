/*
 * The report's storage side: every query the report, export and compare
 * make (issue 16: only the storage layer writes SQL).  Reading a run
 * costs in proportion to that run: each query is bound to one run id and
 * served by an index on samples (run_id, ...).  report-load.c builds the
 * report's model from what these return; this side knows nothing of it.
 *
 * Functions return 0 or SO_EDB ("cannot read <table>: <sqlite error>")
 * with err filled, and never exit.  Rows go to a callback, one call a
 * row, in the order each function names; strings in a struct passed to a
 * callback are valid during the call only (NULL for NULL).
 */
#ifndef SEQORCH_DB_REPORT_H
#define SEQORCH_DB_REPORT_H

#include "util.h"

#include <sqlite3.h>
#include <stdint.h>

/* The run a query reads: its id, and its study (the samples' index). */
struct db_report_run {
	int64_t		 id;
	const char	*study;
};

/*
 * One read snapshot for every query of a run, even while a run is
 * writing: begin (0 or SO_EDB) and end.
 */
int db_report_begin(sqlite3 *db, struct so_err *err);
void db_report_end(sqlite3 *db);

/* A run's header; steps and samples 0 when NULL. */
struct db_header {
	const char	*study, *status, *started_at, *finished_at, *command;
	const char	*seed, *openssl_cap;
	int64_t		 steps, samples;
	int64_t		 msg_len;	/* --msg-len L; 0: the study's own chain */
	int		 exploratory;
	/* Running, but its coordinator on this machine is gone: its pid. */
	long		 gone_pid;
	/* An imported run's origin (NULL: measured here) and signature. */
	const char	*imported_from;
	int64_t		 origin_run;
	int		 imported_signed;
};
/* Run id's header to fn.  SO_ENOTFOUND when the run is gone. */
int db_report_header(sqlite3 *db, int64_t id,
    void (*fn)(const struct db_header *h, void *arg), void *arg,
    struct so_err *err);

/*
 * A run_hosts row with its decoded facts (cpu_model ... cores, 0 when
 * unknown) and window counts (windows with a verdict, noisy ones).
 */
struct db_host {
	const char	*name, *status, *error;
	int		 has_pin_cpu;
	int64_t		 pin_cpu;
	int		 pinned;	/* 1, 0, or -1 when NULL */
	const char	*pin_error, *governor, *openssl;
	double		 calib_mhz;	/* 0 when NULL */
	const char	*cpu_model, *cpu_signature, *arch, *os, *kernel;
	int64_t		 cores;
	const char	*cpu_choice, *counters, *counters_error;
	int64_t		 windows, noisy;
	/*
	 * Another host of the run that reported the same hostname and had
	 * a window open at the same time as one of this one's, or NULL.
	 */
	const char	*shared_with;
	int64_t		 drifted;	/* windows whose state drifted */
};
/* The run_hosts rows of run to fn, in no particular order. */
int db_report_hosts(sqlite3 *db, const struct db_report_run *run,
    void (*fn)(const struct db_host *h, void *arg), void *arg,
    struct so_err *err);

/*
 * One of a run's lists, a row each: its builds (by host, id); its warning
 * and error events (by id); its invalid samples (by host, variant, build,
 * index); the variants of its study that did not run; its valid samples'
 * digests per steps value (by steps).
 */
enum db_report_list {
	DB_REPORT_BUILDS,
	DB_REPORT_EVENTS,
	DB_REPORT_INVALID,
	DB_REPORT_VARIANTS,
	DB_REPORT_DIGESTS,
};
struct db_build {
	int64_t		 id;
	const char	*host, *compiler, *compiler_version, *cflags, *native;
	const char	*status, *target, *source_sha256, *binary_sha256;
	const char	*openssl, *targeting;
	const char	*extra;		/* key=value lines, or NULL */
};
struct db_event {
	const char	*host, *at, *level, *message;
};
struct db_invalid {
	const char	*host, *variant;
	int64_t		 build_id, index;
	const char	*reason;
};
struct db_variant {
	const char	*host, *variant;
	int64_t		 build_id;
	const char	*status, *reason;
};
struct db_digest {
	int64_t		 steps, n, distinct;	/* samples, distinct digests */
	const char	*digest;		/* the smallest */
};
/* What a list row is: the member its enum db_report_list names. */
union db_report_row {
	struct db_build		build;
	struct db_event		event;
	struct db_invalid	invalid;
	struct db_variant	variant;
	struct db_digest	digest;
};
int db_report_list(sqlite3 *db, const struct db_report_run *run,
    enum db_report_list which,
    void (*fn)(const union db_report_row *row, void *arg), void *arg,
    struct so_err *err);

/*
 * A valid sample of the run (valid = 1, ns > 0); clocks 0 when NULL.
 * instructions and cycles_source are read only when cycles > 0 (0 and
 * NULL otherwise): a million uncounted samples skip two columns each.
 */
struct db_valid {
	int64_t		 steps, ns, position;
	int64_t		 cycles;		/* 0 when NULL */
	double		 calib_mhz, calib_after_mhz;
};
/* A valid sample with counted cycles (cycles > 0). */
struct db_counted {
	const char	*cycles_source;
	int64_t		 steps, cycles, instructions;	/* 0 when NULL */
};
/* What db_report_valid hands each cell and sample to, with arg. */
struct db_valid_fns {
	void	(*cell)(const char *variant, const char *host,
		    int64_t build_id, void *arg);
	void	(*sample)(const struct db_valid *s, void *arg);
	void	(*counted)(const struct db_counted *c, void *arg);
};
/*
 * Every valid sample of the run's study, cell by cell in the order of the
 * index samples_valid (host, variant, build), a cell in parts, one per
 * steps value, ascending: cell() at each part with the cell's names
 * (valid during the call), then sample() for each of its samples in the
 * index's ns order (nothing is sorted by SQLite), then, when the part has
 * counted samples, counted() for each of them.
 */
int db_report_valid(sqlite3 *db, const struct db_report_run *run,
    const struct db_valid_fns *fns, void *arg, struct so_err *err);

/* The invalid samples of the run per (variant, host, build), to fn. */
int db_report_invalid_counts(sqlite3 *db, const struct db_report_run *run,
    void (*fn)(const char *variant, const char *host, int64_t build_id,
    int64_t count, void *arg), void *arg, struct so_err *err);

/*
 * The smallest and largest value of col ("steps", "seed" or "digest")
 * among the run's valid samples, with steps (> 0) and seed (non-NULL) fixed
 * when given: one probe of samples_digest each.  NULL (nothing) gives
 * empty strings.
 */
int db_report_range(sqlite3 *db, const struct db_report_run *run, const char *col,
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
int db_report_digest_groups(sqlite3 *db, const struct db_report_run *run,
    void (*fn)(const struct db_digest_group *g, void *arg), void *arg,
    struct so_err *err);

/* A sample as db_report_samples streams it. */
struct db_sample {
	int64_t		 id, build_id, sample_index, position, steps, ns;
	int64_t		 valid, cpu;
	const char	*host, *study, *variant, *compiler, *digest, *seed;
	const char	*invalid_reason, *received_at, *reason;
	double		 calib_mhz, calib_after_mhz;	/* NAN when NULL */
	int64_t		 cycles, instructions;	/* counted; -1 when NULL */
	const char	*cycles_source, *openssl_cap;
	const char	*openssl_cap_detected, *openssl_cap_cleared;
	int		 has_cpu;
	int64_t		 host_position;	/* -1 when NULL (before schema 14) */
	int64_t		 msg_len;	/* --msg-len's L; -1 when NULL */
	int64_t		 window_id;	/* its launch's window; -1 when NULL */
};
/*
 * Stream every sample of the run (valid or not) to fn in (host, build,
 * variant, index) order, the order of the samples' unique index, with the
 * build's compiler; fn returns 0 to go on.
 */
int db_report_samples(sqlite3 *db, const struct db_report_run *run,
    int (*fn)(const struct db_sample *s, void *arg), void *arg,
    struct so_err *err);

/*
 * The per-build sections (db-builds.c), by run id.  db_report_build_rates:
 * for each build that states its targeting, per host, build and variant,
 * the summary view's n and median, min and max rate, by host, variant,
 * compiler, targeting.  db_report_targeting: per host, compiler and
 * variant with a native and a default build, native's median over
 * default's, and both builds' min and max rates.
 */
struct db_build_rate {
	const char	*host, *compiler, *targeting, *variant;
	int64_t		 build_id, n;
	double		 median, min, max;
};
int db_report_build_rates(sqlite3 *db, int64_t run_id,
    void (*fn)(const struct db_build_rate *b, void *arg), void *arg,
    struct so_err *err);
struct db_targeting {
	const char	*host, *compiler, *variant;
	double		 ratio;
	double		 native_min, native_max, default_min, default_max;
};
int db_report_targeting(sqlite3 *db, int64_t run_id,
    void (*fn)(const struct db_targeting *t, void *arg), void *arg,
    struct so_err *err);
/*
 * The phase metrics (sample_metrics named "phase_*", whatever the study
 * calls them) of the run's valid samples, per host, build, variant and
 * name, by host, variant, build and name: the samples with that metric,
 * the sum of its values (ns), the sum of those samples' ns, and its first
 * row (the order the agent recorded the phases in).
 */
struct db_phase_sum {
	const char	*host, *targeting, *variant, *name;
	int64_t		 build_id, n;
	double		 value, ns;
	int64_t		 first;
};
int db_report_phases(sqlite3 *db, int64_t run_id,
    void (*fn)(const struct db_phase_sum *p, void *arg), void *arg,
    struct so_err *err);
/*
 * Paired samples of a run's builds: for each host, variant and two ok
 * builds a and b of it (b the older row), the rate ratios a / b of their
 * valid samples of the same index and steps taken in one window (one
 * agent launch), sorted ascending; a_later (b_later) counts a's (b's)
 * samples whose partner of the same index was taken in an earlier
 * window, which are in no pair.  fn sees every (a, b) with a pair or
 * such a sample.  Strings and ratios are valid during fn only.
 */
struct db_pair_row {
	const char	*host, *variant;
	int64_t		 a_id, b_id;
	const char	*a_compiler, *a_targeting, *b_compiler, *b_targeting;
	int		 b_baseline;	/* b is the host's first build at the
					   default targeting or none */
	size_t		 n;
	const double	*ratios;
	size_t		 a_later, b_later;
};
int db_report_pairs(sqlite3 *db, int64_t run_id,
    void (*fn)(const struct db_pair_row *p, void *arg), void *arg,
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
 * The newest run of study after run `after` measured by this database's
 * coordinator, whatever its status (a gate judges what was measured last,
 * a failed run included), in *id (0: none); the newer runs passed over,
 * imported or --explore ones, "8 imported, 7 exploratory", in *passed
 * (NULL when none; caller frees).
 */
int db_report_newest_measured(sqlite3 *db, const char *study,
    int64_t after, int64_t *id, char **passed, struct so_err *err);

#endif

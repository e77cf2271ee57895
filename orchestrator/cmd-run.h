/*
 * seqorch run's one study, for the commands that make runs (run, and
 * reproduce, whose protocols are runs of their own): the options a run
 * takes, and the run itself.
 */
#ifndef SEQORCH_CMD_RUN_H
#define SEQORCH_CMD_RUN_H

#include "fetch.h"
#include "hostsel.h"

#include <stddef.h>
#include <stdint.h>

struct config;
struct db;
struct host;

/*
 * How long a run waits for results.db while another writer holds it (a
 * sqlite3 shell in a transaction, seqorch gc) before failing the host:
 * what the agents finish meanwhile stays on their hosts, so a lock that
 * outlasts the 10 s busy timeout need not end a measurement; one left
 * held for good still ends it, and `run --resume` stores the rest.
 */
#define DB_WAIT_DEFAULT 600

struct run_opts {
	const char *studies, *variants, *db, *seed;
	struct hostsel sel;	/* --hosts (all by default), --config... */
	const char *cache_opt;	/* --cache */
	char *cache;		/* the artifact cache in use */
	int64_t steps, samples, max_samples, lease_expiry;
	int64_t db_wait;	/* --db-wait S; 0: DB_WAIT_DEFAULT */
	double max_cv;
	int explore, no_wait, require_quiet;
	int64_t resume;		/* run id to resume, 0 for a new run */
	int take_over;		/* --take-over: see db_run_resume */
	const char *fixed;	/* an option --resume takes from the run */
	const char *openssl_cap;	/* OPENSSL_ia32cap / _armcap value */
	const char *openssl_cap_clear;	/* capability names to clear */
	int64_t msg_len;	/* --msg-len L (kernel.h), 0: none */
	int64_t warmup;		/* --warmup K: warmup samples per cell */
	/*
	 * Fetch the artifacts variants are generated from even when
	 * variants names none (reproduce: every variant, openssl-* too).
	 */
	int fetch_generated;
	/* --openssl-version, --sha256: fetched and built from instead. */
	struct fetch_choice source;
};

/*
 * Measure study on hosts[0..n) as one run with o's settings (o->steps 0:
 * the study's default), stored with command; prints its progress and
 * summary to stderr.  Returns an EXIT_* code; *run_id (may be NULL) is
 * the run's id once it is recorded, and is left alone before.
 */
int cmd_run_study(struct db *db, const char *study, struct host **hosts,
    size_t n, const struct run_opts *o, const char *command,
    int64_t *run_id);

/*
 * What the commands that make runs open first: o's hosts.toml
 * (*cfg), the hosts it selects, the artifact cache (o->cache) and the
 * database.  From then on SIGINT and SIGTERM stop the runs
 * (cmd_run_stopped says so, and the run in progress ends "interrupted");
 * SIGPIPE is ignored.  EXIT_OK, or an EXIT_* code having said why; the
 * caller frees what was opened either way.
 */
int cmd_run_open(struct run_opts *o, struct config **cfg,
    struct host ***hosts, size_t *n, struct db **db);
int cmd_run_stopped(void);

/*
 * Fold r, one run's EXIT_* code, into *rc, the worst so far (an
 * interrupt wins); nonzero when the runs should stop there (interrupted,
 * or the database failed).
 */
int cmd_run_outcome(int *rc, int r);

/* The command line as run, each argument quoted, for the runs table. */
char *cmd_command_line(int argc, char **argv);

#endif

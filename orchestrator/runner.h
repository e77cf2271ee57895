/*
 * Runs one study on a set of hosts: per host (in the host pool, at most
 * --parallel preparing at once) connect, upload, build with every
 * compiler, then, every host at once, stream the
 * agent's records into results.db as they arrive, checking each sample's
 * digest against the coordinator's reference.
 */
#ifndef SEQORCH_RUNNER_H
#define SEQORCH_RUNNER_H

#include "config.h"
#include "db.h"
#include "generate.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

struct run_params {
	const char *study;
	const char *variants;	/* comma list or NULL */
	const char *seed;	/* hex */
	const char *cache;	/* artifact cache dir (the study's fetched) */
	uint64_t steps, samples;
	int parallel;		/* hosts prepared at once */
	int64_t run_id;
	const char *ref_digest;	/* reference after `steps` steps */
	const char *ref_selftest;	/* reference after the self-test chain */
	volatile sig_atomic_t *stop;
	int explore;		/* no lease, no host lock, no windows */
	int no_wait;		/* fail instead of waiting for the window */
	int lease_expiry;	/* seconds */
	const char *holder;	/* shown to whoever waits for our host lock */
	const char *db_id;	/* db_identity: names our run directories */
	int resume;		/* fill only the run's missing cells */
	int require_quiet;	/* agents refuse to measure on noisy hosts */
	double max_cv;		/* adaptive sampling; 0 = off */
	uint64_t max_samples;
	/*
	 * --openssl-cap: the agent runs with OPENSSL_ia32cap (x86-64) or
	 * OPENSSL_armcap (aarch64) set to this; NULL leaves both alone.
	 */
	const char *openssl_cap;
	/*
	 * --openssl-cap-clear: the capability names (kernels/openssl-caps.h)
	 * each agent clears from the mask libcrypto detects; NULL: none.
	 */
	const char *openssl_cap_clear;
	/* --msg-len: each step hashes an L-byte message (kernel.h); 0 none */
	uint64_t msg_len;
	/* --warmup: samples per cell before the timed ones, in no rate */
	uint64_t warmup;
	/*
	 * The sources generated from the study's artifacts (generate.h), or
	 * NULL: the variants needing them are skipped with the reason.
	 */
	const struct generated *gen;
};

struct run_outcome {
	unsigned hosts_ok, hosts_failed;
	unsigned hosts_interrupted;	/* of the failed: stopped by a signal */
	uint64_t samples, invalid;
	int interrupted;
	int no_window;		/* the lease could not be had (--no-wait) */
};

/*
 * Run on hosts[0..n).  Per-host failures are recorded (run_hosts, events)
 * and counted in out, not returned; a negative return means the run could
 * not proceed at all.
 */
int runner_run(struct db *db, struct host *const *hosts, size_t n,
    const struct run_params *p, struct run_outcome *out, struct so_err *err);

/*
 * The run's ends around runner_run.  runner_begin records run ri, or with
 * resume > 0 takes run resume up again as it was stored (ri is then not
 * read); *run_id is the run's.  runner_finish stores the run's status and
 * sets *status to it (static), over the whole run's samples, those stored
 * before a resume too (db_run_tally, into *t unless t is NULL):
 * "interrupted"; "ok" when every host succeeded (out NULL: runner_run
 * could not proceed) and no sample is invalid; "partial" when some
 * samples are valid; else "failed".  Both return 0 or a negative SO_E*
 * code (runner_finish's then leaves the run "running", resumable).
 */
int runner_begin(struct db *db, const struct run_info *ri, int64_t resume,
    int64_t *run_id, struct so_err *err);
int runner_finish(struct db *db, int64_t run_id, const struct run_outcome *out,
    struct run_tally *t, const char **status, struct so_err *err);

/*
 * Before a resume changes anything: hosts[0..n), as hosts.toml has them
 * now, against what run run_id recorded.  SO_EINVAL, naming the host, the
 * setting, its value now and the run's, when they are not the run's
 * hosts, or one's compilers, cflags or cpu differ from its record: a
 * resumed run is never quietly a different one.  0, or a negative SO_E*.
 */
int runner_resume_check(struct db *db, int64_t run_id,
    struct host *const *hosts, size_t n, struct so_err *err);

/*
 * After run run_id ended with status: its best variant per host (median,
 * min-max, cv), its warnings, and `next: seqorch report --run N` (with
 * `resume: seqorch run --resume N` when interrupted), to out, each hint
 * followed by the options it must repeat: db_opts for the report
 * (" --db FILE"), run_opts for the run (--config, --ssh-config as well).
 * host_opts, when every host failed, makes `seqorch hosts check` with
 * them (--config, --ssh-config) the next step.  A run that cannot be
 * loaded gets a line saying why.
 */
void runner_summary(struct db *db, int64_t run_id, const char *db_opts,
    const char *run_opts, const char *host_opts, const char *status,
    FILE *out);

#endif

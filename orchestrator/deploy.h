/*
 * Deploy the agent to a host and build it there: the sources embedded in
 * the coordinator are uploaded into WORKDIR/src/<sha256>/ (content
 * addressed: unchanged sources upload nothing) and built with each of the
 * host's compilers into WORKDIR/build/<sha>-<config hash>/ (an existing
 * build is reused).  The local host goes through the same path.
 */
#ifndef SEQORCH_DEPLOY_H
#define SEQORCH_DEPLOY_H

#include "conn.h"
#include "db.h"
#include "generate.h"
#include "util.h"

#include <stdint.h>

struct deploy_stats {
	uint64_t bytes_uploaded;
	unsigned files_uploaded;
	unsigned builds_run;	/* builds not found in the cache */
};

/* SHA-256 (hex) of the embedded sources; static storage. */
const char *deploy_source_sha256(void);

/* Upload the sources unless WORKDIR/src/<sha>/ is complete already. */
int deploy_sources(struct conn *c, struct deploy_stats *st,
    struct so_err *err);

/*
 * Upload study's artifacts (kernels/<study>/artifacts) from the local
 * cache directory cache (filled by http_fetch) into WORKDIR/artifacts/
 * <sha256>, unless there already (the name is the content's hash; uploads
 * are atomic).  A study without artifacts uploads nothing.  An artifact
 * missing from the cache is SO_ENOTFOUND (run `seqorch fetch`).
 */
int deploy_artifacts(struct conn *c, const char *study, const char *cache,
    struct deploy_stats *st, struct so_err *err);

/*
 * The embedded source file path ("kernels/sha3/generate.pl"), *len its
 * length, or NULL; static storage.
 */
const void *deploy_shipped_file(const char *path, size_t *len);

/*
 * Upload the generated sources g (generate.h) into WORKDIR/generated/
 * <key>/ unless complete there already.  g may be NULL: nothing to do.
 */
int deploy_generated(struct conn *c, const struct generated *g,
    struct deploy_stats *st, struct so_err *err);

/*
 * A build_wrapper with every "{workdir}" replaced by workdir, shell-quoted:
 * the command prefix builds run under.  Caller frees.
 */
char *deploy_wrapper(const char *wrapper, const char *workdir);

struct build_result {
	int64_t build_id;	/* builds row (0 when no db was given) */
	char *agent;		/* absolute path on the host; owned */
	char *target;		/* `cc -dumpmachine` there ("" unknown); owned */
	char *binary_sha256;	/* the agent's hash, checked at launch; owned */
	int ok;			/* 0: the build failed, see its row */
	char *log_tail;		/* end of the build log when it failed */
	char *reason;		/* then its line that says why, for one line */
};

/*
 * Build with compiler cc (one of host->cc) and record the build in db
 * (if db != NULL) under run_id; with reuse, a build row of that run with
 * the same compiler and binary is reused instead (--resume).  A compiler
 * error is not a failure of this call: it returns 0 with res->ok = 0.
 * Free res with deploy_result_free.
 */
int deploy_build(struct conn *c, const char *cc, struct db *db,
    int64_t run_id, int reuse, struct build_result *res,
    struct deploy_stats *st, struct so_err *err);

/*
 * Called, on the thread that builds, with each step a cold build reports
 * as it goes ("compiling 3/41 agent/facts.c", "randomx [ 23%] compiling
 * aes_hash.cpp"): text from the host, control characters replaced,
 * borrowed for the call.
 */
typedef void (*deploy_step_fn)(void *arg, const char *step);

/*
 * deploy_build for a study that builds something of its own (kernels/
 * <study>/prebuild.sh, with its artifacts uploaded by deploy_artifacts)
 * and/or is built at a targeting ("default", "native": kernels/<study>/
 * targetings) and/or builds variants from generated sources (gen, which
 * deploy_generated uploaded: agent/build.sh's GENERATED; its files are
 * kept with the build's sources).  study, targeting and gen may be NULL:
 * deploy_build.  on_step (may be NULL) hears the build's steps, with arg.
 */
int deploy_build_for(struct conn *c, const char *cc, const char *study,
    const char *targeting, const struct generated *gen, struct db *db,
    int64_t run_id, int reuse, deploy_step_fn on_step, void *arg,
    struct build_result *res, struct deploy_stats *st, struct so_err *err);
void deploy_result_free(struct build_result *res);

#endif

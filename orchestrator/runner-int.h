/*
 * What runner.c, runner-collect.c (an agent's records into the database)
 * and runner-launch.c (the agent on its host) share; nothing outside the
 * runner includes this.
 */
#ifndef SEQORCH_RUNNER_INT_H
#define SEQORCH_RUNNER_INT_H

#include "runner.h"

#include "conn.h"
#include "deploy.h"
#include "proto.h"
#include "strbuf.h"

#include "../agent/spread.h"

#include <stdint.h>

struct hostrun {
	const struct host *host;
	size_t index;
	const struct run_params *p;
	struct db *db;
	struct conn *conn;
	struct build_result *builds;	/* per compiler and targeting */
	char **labels;			/* "cc" or "cc, native", per build */
	size_t nlabels;
	size_t nbuilds;
	int failed;
	char error[SO_ERR_MAX];
	uint64_t samples, invalid;
	/*
	 * Samples counted in the whole run's progress before its agents
	 * said which variants they run (run_plan), not yet claimed by one.
	 */
	uint64_t planned;
	const char *abort;		/* non-empty: do not measure, this is why */
	int64_t window_id;		/* open window, 0 when none */
	/*
	 * The window of the launch whose samples are stored now: window_id,
	 * or the stored one of an earlier launch read again at a resume; 0
	 * when none was stored (its samples' window_id is then NULL).
	 */
	int64_t sample_window;
};

/*
 * What a resumed --max-cv run stored of one build (runner-adapt.c): each
 * variant's spread, and the index its extra rounds take next.
 */
struct stored_build {
	char **variants;	/* n names, each with its spread */
	struct spread *spread;
	size_t n;
	uint64_t next;		/* past every stored index, at least --samples */
};

/* State while one agent's output is streamed in. */
struct stream {
	struct hostrun *hr;
	struct build_result *build;
	const char *cc;
	struct line_reader lr;
	uint64_t first, nsamples;	/* indices asked of this agent */
	uint64_t expected, got;
	int saw_hello, saw_done;
	char token[33];		/* this launch's run token, 128 random bits */
	/* window_clock() at the launch; a replay's: its window's start */
	double launched;
	int collected;		/* every record of the launch was read */
	/*
	 * The records of an earlier launch of this run, collected by a
	 * resume: its samples are stored, what it said then is not said
	 * again (events, windows), and its hello says how many it was asked.
	 */
	int replay;
	char **want;		/* variants asked of this agent */
	char **seen;		/* variants it sent a record for */
	size_t nseen;
	char **ok_variants;
	char **forbidden;	/* per ok variant: forbidden instructions its
				 * disassembly holds, or NULL */
	unsigned char **cells;	/* per ok variant: indices received */
	size_t nok;
	/*
	 * The variants that did not pass, as 'variant "x" skipped: why'
	 * joined by "; " (cut to fit): why an agent timed nothing.
	 */
	char unready[512];
	uint64_t span;		/* indices first .. first + span - 1 */
	uint64_t records;	/* sample records received */
	int window;		/* 0 before begin, 1 open, 2 ended */
	int waits;
	char build_id[24];	/* as given to the agent */
	char *window_before;	/* the open window's first snapshot */
	int64_t replay_window;	/* a replay's window, found at its begin */
	char *preflight;	/* the preflight record for the next window */
	char verdict[8];	/* its verdict: quiet or noisy */
	/* --openssl-cap-clear: the masks its facts name, stored per sample */
	char *cap_detected, *cap_cleared, *cap_applied;
	/*
	 * A conductor's stream (agent --conduct): one stream per build
	 * whose agent it drives, owned here, and whose records follow (a
	 * build record switches; NULL: the conductor's own).  gone: that
	 * build's agent sent its error, which err holds; the others go on.
	 * refused: gone, for a record of it the coordinator refused; the
	 * conductor, which cannot know, goes on relaying its records, and
	 * they are only counted.
	 */
	struct stream **kids;
	size_t nkids;
	struct stream *cur;
	int gone, refused;
	struct so_err err;
	/*
	 * A resumed --max-cv build's agent: what the run stored, for its
	 * --stored-spread (NULL: none), and with extra_from, where its extra
	 * rounds go on: index extra_first, place extra_order of its order.
	 */
	const struct stored_build *stored;
	int extra_from;
	uint64_t extra_first;
	int64_t extra_order;
};

/* A write the database refused: say it, and fail the host. */
void run_db_lost(struct hostrun *hr, const char *what, const char *why);
/*
 * Store an event.  One the database refuses is not dropped: it goes to
 * stderr with the reason, and the host fails (its record is incomplete).
 */
void run_note(struct hostrun *hr, const char *level, const char *msg);
/* Fail the host with msg (the first failure is the one kept). */
void run_fail(struct hostrun *hr, const char *msg);

/*
 * n samples of hr are expected (a variant its agent runs): taken from
 * what run_plan counted for hr, else added to the whole run's count.
 */
void run_expect(struct hostrun *hr, uint64_t n);

/*
 * The variants this run measures: its --variants, or all of the study's;
 * with target (a build's -dumpmachine), only those built for its
 * architecture.  A NULL-terminated list of new strings; the caller frees
 * each and the list.
 */
const char **run_variants(const struct run_params *p, const char *target);
/*
 * The cells of build b still missing in the run being resumed: the
 * variants with a gap as a new comma list in *variants (replacing the one
 * there), and the span of sample indices.  A failure fails the host.
 */
int run_missing(struct hostrun *hr, struct build_result *b, char **variants,
    uint64_t *first, uint64_t *last, uint64_t *count);

/*
 * Build b's stored timed samples, but those of indices skip_lo..skip_hi
 * (which its resumed agent times again; none when skip_lo > skip_hi),
 * into sb (zeroed first; run_stored_free frees it).  0, or a negative
 * code with the host failed.
 */
int run_stored(struct hostrun *hr, const struct build_result *b,
    uint64_t skip_lo, uint64_t skip_hi, struct stored_build *sb);
/*
 * The variants of sb that the agent's --max-cv test finds too spread out,
 * with fewer than --max-samples: a new comma list, or NULL when none.
 */
char *run_stored_unsteady(const struct run_params *p,
    const struct stored_build *sb);
/*
 * Append a --stored-spread for each variant of sb in the comma list
 * variants (each of sb when NULL) to cmd; a conductor's name build (its
 * id), a plain agent's (build NULL) none.
 */
void run_stored_args(const struct stored_build *sb, const char *build,
    const char *variants, struct strbuf *cmd);
void run_stored_free(struct stored_build *sb);

/*
 * The environment variable that sets libcrypto's capabilities on a build's
 * target ("x86_64-linux-gnu"), or NULL for an architecture without one.
 */
const char *run_openssl_cap_var(const char *target);
/* exec_io's on_stdout for an agent's output: arg is the struct stream. */
int run_on_stdout(void *arg, const char *buf, size_t len);

/* Run the agent of build b and stream its records into the database. */
void run_measure(struct hostrun *hr, struct build_result *b, const char *cc);
/*
 * Run every working build of the host in one alternating order: one
 * conductor agent (the first build's binary, --conduct) drives each
 * build's agent (--serve), and its records go into the database as
 * run_measure's do.  A build whose agent fails is an error event and
 * fails the host once the others are done.
 */
void run_conduct(struct hostrun *hr);

#endif

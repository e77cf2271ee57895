/*
 * The agent's command line (usage: opts_usage).  opts_parse never exits
 * and never prints but for getopt's own message on an unknown option: it
 * says what it found in its return value and err, and main decides.
 *
 * Ownership: every string in struct opts points into argv (or is a
 * literal); nothing is allocated, nothing is freed.
 */
#ifndef SEQORCH_AGENT_OPTS_H
#define SEQORCH_AGENT_OPTS_H

#include "kernel.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_SAMPLES 100000
#define MAX_HOLDER 1024
#define MAX_TOKEN 64
#define MAX_BUILDS 16
#define CPU_AUTO (-2)		/* --cpu auto: topology_auto picks */
#define MAX_STORED 1024	/* --stored-spread: one per (build,) variant */
#define MAX_BUILD_ID 24		/* a --build's id, NUL included */
#define MAX_STORED_NAME 64	/* its variant's name, NUL included */

/*
 * --stored-spread V:N:MEAN:M2: what a resumed run stored of variant V
 * before this agent (spread.h's three numbers), where its --max-cv
 * spread starts; a conductor's, BUILD:V:N:MEAN:M2, of build BUILD's V.
 */
struct stored_spread {
	char build[MAX_BUILD_ID];	/* "" but a conductor's */
	char variant[MAX_STORED_NAME];
	uint64_t n;
	double mean, m2;
};

struct opts {
	const char *study;
	const char *variants;
	const char *build_id;
	const char *token;	/* the coordinator's run token, echoed */
	const char *out;
	const char *lock;
	const char *holder;
	int no_wait;
	uint64_t steps;		/* 0: the study's default */
	uint64_t samples;
	uint64_t first_sample;
	uint64_t max_samples;
	double max_cv;		/* 0: no adaptive samples */
	uint64_t warmup;	/* --warmup K: K warmup rounds first */
	struct stored_spread stored[MAX_STORED];
	size_t nstored;
	/*
	 * --extra-from S:P (a resume): extra rounds from index S, and from
	 * place P of the build's order on, past what the run stored
	 */
	int extra_from;
	uint64_t extra_first, extra_order;
	int cpu;		/* -1 none, CPU_AUTO: topology_pick */
	int reverse;
	int list;
	int openssl;		/* --openssl: the libcrypto loaded */
	int preflight;		/* --preflight: the verdict alone */
	int require_quiet;
	int serve;		/* --serve: self-test, then sample on request */
	int conduct;		/* --conduct: drive the --build agents */
	/*
	 * --msg-len L: each step hashes the previous digest and zeros up to
	 * L bytes (kernel.h, KERNEL_MAX_MSG); 0: the study's own chain
	 */
	uint64_t msg_len;
	/* --openssl-cap-clear NAMES: libcrypto without them (osslcap.h) */
	const char *openssl_cap_clear;
	const char *builds[MAX_BUILDS];	/* --build ID:SHA256:PATH */
	size_t nbuilds;
	/* --selftest-digest: the reference's self-test chain (conductor) */
	const char *selftest_digest;
	uint64_t order;		/* next place in the host's whole order */
	uint8_t seed[KERNEL_MAX_STATE];
	size_t seed_len;
	int have_seed;
};

enum opts_result {
	OPTS_OK,
	OPTS_HELP,		/* --help: the usage to stdout, exit 0 */
	OPTS_USAGE,		/* getopt said why: usage to stderr, exit 2 */
	OPTS_ERROR,		/* err says why: exit 2 */
};

/*
 * Parse argv into o (defaults first), checking each value and the
 * options that go together; on OPTS_ERROR err (len bytes, NUL
 * terminated) holds the message.  getopt's state (optind) is used as is.
 */
enum opts_result opts_parse(int argc, char **argv, struct opts *o,
    char *err, size_t len);
void opts_usage(FILE *f);

#endif

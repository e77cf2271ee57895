/*
 * The conductor: its build agents (children started with --serve, two
 * pipes each), the relay of their records and the order of their
 * samples.
 */
#include "conduct.h"
#include "emit.h"
#include "jsonl.h"
#include "pin.h"
#include "protocol.h"
#include "registry.h"
#include "sha256.h"
#include "spread.h"
#include "topology.h"
#include "variant.h"
#include "window.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINE 65536		/* a record, as the coordinator bounds it */
#define EXCERPT 200		/* bytes of an offending line its error keeps */
#define QUOTED 32		/* bytes of a type or variant a check quotes */
/*
 * A build's agent hangs, and leaves the order, when it sends nothing for
 * a floor and HANG_TIMES times what it should take, with room for a
 * loaded host: a sample, its longest sample (before its first, the other
 * builds'; before any, its setup and self-test scaled to a sample's
 * steps); its setup and self-test, the longest of the builds set up
 * before it (a RandomX dataset on one slow core takes minutes).
 * HANG_FLOOR_ENV sets both floors, so that tests see a hang in seconds.
 */
#define HANG_FLOOR_MS 10000
#define SETUP_FLOOR_MS 1800000
#define HANG_TIMES 10
#define HANG_FLOOR_ENV "SEQORCH_HANG_FLOOR_MS"

static long long hang_floor_ms = HANG_FLOOR_MS, setup_floor_ms =
    SETUP_FLOOR_MS;
static double sample_scale;	/* a sample's steps over a self-test's, >= 1 */

/* What a build's agent may send next. */
enum expect { EXP_SETUP, EXP_SAMPLE, EXP_DONE };

/* child_line's ends other than a line. */
enum { LINE_END = -1, LINE_LONG = -2, LINE_LATE = -3 };

/* When a build's agent must have sent its next line, and why then. */
struct deadline {
	long long t0, at;	/* since when it waited, until when (now_ms) */
	const char *after;	/* what it was sent; NULL: it sets up */
	char rule[160];		/* the deadline in words */
};

/* A build's agent, started by the conductor with --serve. */
struct child {
	char id[24];
	pid_t pid;		/* 0 once it is gone */
	FILE *in;		/* its requests */
	int rd;			/* its records; -1 once closed */
	char *buf;		/* what was read of them: MAX_LINE + 1 bytes */
	size_t len;
	char *ok[MAX_VARIANTS];	/* its variants that passed */
	size_t nok;
	int ready;		/* self-tested, waiting for requests */
	int said_error;		/* its last record was an error */
	int said_hello;
	long long setup_ms;	/* its setup and self-test; -1: not done */
	long long longest_ms;	/* its longest sample, asked to relayed */
};

static struct child kids[MAX_BUILDS];
static size_t nkids;

/* Stopped (the coordinator's TERM): the build agents go first. */
static void
on_term(int sig)
{
	size_t i;

	for (i = 0; i < nkids; i++)
		if (kids[i].pid > 0)
			kill(kids[i].pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One of build k's record lines, as it wrote it, after a build record. */
static void
relay(size_t k, const char *line)
{
	emit_relay((int)k, kids[k].id, line);
}

static long long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * The next record line of c into line (MAX_LINE + 1 bytes), its newline
 * cut: its length.  LINE_END at the end of c's records, LINE_LONG when
 * the line is longer than MAX_LINE (line holds its start), LINE_LATE
 * when none came by deadline (of now_ms).
 */
static int
child_line(struct child *c, char *line, long long deadline)
{
	struct pollfd p;
	long long left;
	ssize_t n;
	size_t len;
	char *nl;

	for (;;) {
		if ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
			len = (size_t)(nl - c->buf);
			memcpy(line, c->buf, len);
			line[len] = '\0';
			c->len -= len + 1;
			memmove(c->buf, nl + 1, c->len);
			return (int)len;
		}
		if (c->len > MAX_LINE) {
			memcpy(line, c->buf, MAX_LINE);
			line[MAX_LINE] = '\0';
			return LINE_LONG;
		}
		if (c->rd < 0)
			return LINE_END;
		if ((left = deadline - now_ms()) <= 0)
			return LINE_LATE;
		p.fd = c->rd;
		p.events = POLLIN;
		n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n == 0 || (n < 0 && errno == EINTR))
			continue;	/* the deadline, or a chunk of it */
		if (n < 0)
			return LINE_END;
		n = read(c->rd, c->buf + c->len, MAX_LINE + 1 - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return LINE_END;
		c->len += (size_t)n;
	}
}

/* Send an error record for build k: msg, as if its agent had said it. */
static void
say_error(size_t k, const char *msg)
{
	struct jsonl *rec = emit_new(PROTO_T_ERROR);
	const char *line, *err;

	jsonl_str(rec, PROTO_F_MESSAGE, msg);
	if ((line = jsonl_finish(rec, &err)) == NULL)
		fatal(AG_FAIL, "%s", err);
	relay(k, line);
	jsonl_free(rec);
	kids[k].said_error = 1;
}

/* Reap build k's agent, stopped first when kill_it (it broke the rules). */
static int
reap(size_t k, int kill_it)
{
	struct child *c = &kids[k];
	int status = 0;

	if (c->in != NULL)
		fclose(c->in);
	c->in = NULL;
	if (kill_it)
		kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	if (c->rd >= 0)
		close(c->rd);
	c->rd = -1;
	free(c->buf);
	c->buf = NULL;
	c->pid = 0;
	c->ready = 0;
	return status;
}

/*
 * Build k's agent has ended, or is ended (why: it stopped taking
 * requests or its records ended): reap it, and unless its own error
 * record said why, say it in one for it, with how it ended.
 */
static void
child_gone(size_t k, const char *why)
{
	struct child *c = &kids[k];
	char msg[512];
	int status;

	if (c->pid == 0)
		return;
	status = reap(k, why != NULL);
	if (why == NULL || c->said_error)
		return;
	snprintf(msg, sizeof msg, "the agent of build %s %s (%s %d)", c->id,
	    why, WIFSIGNALED(status) ? "signal" : "exit status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	say_error(k, msg);
}

/*
 * Build k's agent broke the protocol with line (len bytes; NULL: it
 * sent nothing in time): it is stopped and leaves the order, with an
 * error record that says what it did and holds the line's start.
 */
static void
child_bad(size_t k, const char *what, const char *line, size_t len)
{
	char msg[4 * EXCERPT + 512], ex[4 * EXCERPT + 1];

	if (kids[k].pid == 0)
		return;
	reap(k, 1);
	if (line == NULL)
		snprintf(msg, sizeof msg, "the agent of build %s %s, and was "
		    "stopped", kids[k].id, what);
	else {
		jsonl_excerpt(line, len, EXCERPT, ex);
		snprintf(msg, sizeof msg, "the agent of build %s %s, and was "
		    "stopped; the line%s: \"%s\"", kids[k].id, what,
		    len > EXCERPT ? "'s first 200 bytes" : "", ex);
	}
	say_error(k, msg);
}

/* The floors of HANG_FLOOR_ENV, when it is set. */
static void
hang_floors(void)
{
	const char *e = getenv(HANG_FLOOR_ENV);
	char ex[4 * 40 + 1], *end;
	long long v;

	if (e == NULL)
		return;
	errno = 0;
	v = strtoll(e, &end, 10);
	if (errno != 0 || end == e || *end != '\0' || v < 1 || v > 86400000) {
		jsonl_excerpt(e, strlen(e), 40, ex);
		fatal(AG_USAGE, "%s=\"%s\": expected milliseconds, 1 to "
		    "86400000", HANG_FLOOR_ENV, ex);
	}
	hang_floor_ms = setup_floor_ms = v;
}

/* Is v a variant of the conducted study that was asked for? */
static int
asked(const struct opts *o, const char *v)
{
	size_t i;

	for (i = 0; registry_kernels[i].study != NULL; i++)
		if (strcmp(registry_kernels[i].study, o->study) == 0 &&
		    strcmp(registry_kernels[i].variant, v) == 0)
			return variant_in_list(o->variants, v);
	return 0;
}

/*
 * Check line (len bytes), which build k's agent sent when exp was due
 * (v: the variant asked for), before it is relayed: one record, of a
 * type a build's agent sends then, of its own build and run, of a
 * variant asked for, its self-test ending in the reference's chain; a
 * line the coordinator would refuse fails the host, not the build.
 * Returns 0 with its type, variant and status (*ok) copied out; else
 * -1 with what was wrong in why.
 */
static int
check_line(size_t k, const struct opts *o, const char *line, size_t len,
    enum expect exp, const char *v, char *type, char *variant, int *ok,
    char *why, size_t wlen)
{
	struct child *c = &kids[k];
	char status[16], build[24], token[MAX_TOKEN + 1], digest[2 *
	    KERNEL_MAX_STATE + 1], err[128], ex[4 * QUOTED + 1];
	struct jsonl_field f[] = {
		{ PROTO_F_TYPE, type, 16, 0, 0 },
		{ PROTO_F_VARIANT, variant, 128, 0, 0 },
		{ PROTO_F_STATUS, status, sizeof status, 0, 0 },
		{ PROTO_F_BUILD_ID, build, sizeof build, 0, 0 },
		{ PROTO_F_TOKEN, token, sizeof token, 0, 0 },
		{ PROTO_F_DIGEST, digest, sizeof digest, 0, 0 },
	};
	int is_error, is_hello;

	if (jsonl_read(line, len, f, 6, err, sizeof err) != 0) {
		snprintf(why, wlen, "sent a line that is not a record (%s)",
		    err);
		return -1;
	}
	if (f[0].found != 1) {
		snprintf(why, wlen, "sent a line that is not a record (no "
		    "\"type\" of at most 15 bytes)");
		return -1;
	}
	jsonl_excerpt(type, strlen(type), QUOTED, ex);
	*ok = f[2].found == 1 && strcmp(status, PROTO_V_OK) == 0;
	if (f[1].found != 1)
		variant[0] = '\0';
	is_error = strcmp(type, PROTO_T_ERROR) == 0;
	is_hello = strcmp(type, PROTO_T_HELLO) == 0;
	if (strcmp(type, PROTO_T_BUILD) == 0 ||
	    strcmp(type, PROTO_T_WINDOW) == 0 ||
	    strcmp(type, PROTO_T_WAIT) == 0 ||
	    strcmp(type, PROTO_T_PREFLIGHT) == 0) {
		/* A build record would pass what follows as another's. */
		snprintf(why, wlen, "sent a \"%s\" record, which only a "
		    "conductor sends", ex);
		return -1;
	}
	if (!is_error && (exp == EXP_SETUP ? (c->said_hello ? is_hello ||
	    strcmp(type, PROTO_T_SAMPLE) == 0 : !is_hello) :
	    strcmp(type, exp == EXP_SAMPLE ? PROTO_T_SAMPLE : PROTO_T_DONE)
	    != 0)) {
		snprintf(why, wlen, "sent a \"%s\" record where %s was due",
		    ex, exp == EXP_SAMPLE ? "a sample record" : exp ==
		    EXP_DONE ? "its done record" : c->said_hello ?
		    "a setup record" : "its hello");
		return -1;
	}
	if (f[3].found != 0 && (f[3].found != 1 || strcmp(build, c->id) !=
	    0)) {
		snprintf(why, wlen, "sent a \"%s\" record of another build",
		    ex);
		return -1;
	}
	if (is_hello && (f[4].found != 1 || strcmp(token, o->token) != 0)) {
		snprintf(why, wlen, "sent a hello of another run (its token)");
		return -1;
	}
	if (strcmp(type, PROTO_T_VARIANT) == 0 && !asked(o, variant)) {
		jsonl_excerpt(variant, strlen(variant), QUOTED, ex);
		snprintf(why, wlen, "sent a variant record for \"%s\"%s, "
		    "which was not asked for", ex, strlen(variant) > QUOTED ?
		    " (its first 32 bytes)" : "");
		return -1;
	}
	if (exp == EXP_SAMPLE && !is_error && strcmp(variant, v) != 0) {
		jsonl_excerpt(variant, strlen(variant), QUOTED, ex);
		snprintf(why, wlen, "sent a sample of \"%s\"%s when one of "
		    "\"%s\" was asked for", ex, strlen(variant) > QUOTED ?
		    " (its first 32 bytes)" : "", v);
		return -1;
	}
	if (strcmp(type, PROTO_T_SELFTEST) == 0 && o->selftest_digest !=
	    NULL && (f[5].found != 1 || strcmp(digest, o->selftest_digest)
	    != 0)) {
		snprintf(why, wlen, "sent a self-test chain that is not the "
		    "reference's (%.128s)", o->selftest_digest);
		return -1;
	}
	c->said_hello |= is_hello;
	return 0;
}

/*
 * The deadline of build k's agent over a sample (or its done), asked at
 * t0 (after: what it was sent): see HANG_FLOOR_MS.
 */
static void
sample_deadline(size_t k, long long t0, const char *after,
    struct deadline *d)
{
	long long longest = kids[k].longest_ms;
	const char *whose = "its longest sample";
	double est;
	size_t i;

	if (longest < 0) {
		whose = "the other builds' longest sample";
		for (i = 0; i < nkids; i++)
			if (kids[i].longest_ms > longest)
				longest = kids[i].longest_ms;
	}
	if (longest < 0) {
		/* Its setup ran each variant's self-test chain at least once. */
		whose = "its setup and self-test scaled to a sample's steps";
		est = (double)(kids[k].setup_ms > 0 ? kids[k].setup_ms : 0) *
		    sample_scale;
		longest = est > 1e12 ? (long long)1e12 : (long long)est;
	}
	d->t0 = t0;
	d->at = t0 + hang_floor_ms + HANG_TIMES * longest;
	d->after = after;
	snprintf(d->rule, sizeof d->rule, "%g s and %d times %s, %.3f s",
	    (double)hang_floor_ms / 1000, HANG_TIMES, whose,
	    (double)longest / 1000);
}

/* The deadline of build k's setup and self-test, begun at t0. */
static void
setup_deadline(size_t k, long long t0, struct deadline *d)
{
	long long longest = -1;
	size_t i;

	for (i = 0; i < k; i++)
		if (kids[i].setup_ms > longest)
			longest = kids[i].setup_ms;
	d->t0 = t0;
	d->at = t0 + setup_floor_ms + HANG_TIMES * (longest < 0 ? 0 :
	    longest);
	d->after = NULL;
	if (longest < 0)
		snprintf(d->rule, sizeof d->rule, "%g s, no build set up "
		    "before it", (double)setup_floor_ms / 1000);
	else
		snprintf(d->rule, sizeof d->rule, "%g s and %d times the "
		    "longest setup of the builds before it, %.3f s",
		    (double)setup_floor_ms / 1000, HANG_TIMES,
		    (double)longest / 1000);
}

/*
 * The next line of build k's agent, checked (check_line) when exp was
 * due, waiting until d: its length, the line, its type, variant and
 * status out; -1 when none came (the agent is then gone, and said why).
 */
static int
next_record(size_t k, const struct opts *o, char *line,
    const struct deadline *d, enum expect exp, const char *v, char *type,
    char *variant, int *ok)
{
	char why[384];
	int n;

	n = child_line(&kids[k], line, d->at);
	if (n == LINE_LONG) {
		snprintf(why, sizeof why, "sent a line longer than %d bytes",
		    MAX_LINE);
		child_bad(k, why, line, MAX_LINE);
		return -1;
	}
	if (n == LINE_LATE) {
		if (d->after == NULL)
			snprintf(why, sizeof why, "did not end its setup and "
			    "self-test in %.1f s (the deadline: %s)",
			    (double)(now_ms() - d->t0) / 1000, d->rule);
		else
			snprintf(why, sizeof why, "sent nothing for %.1f s "
			    "after %s (the deadline: %s)",
			    (double)(now_ms() - d->t0) / 1000, d->after,
			    d->rule);
		child_bad(k, why, NULL, 0);
		return -1;
	}
	if (n < 0) {
		child_gone(k, exp == EXP_SETUP ? "ended during its setup" :
		    exp == EXP_SAMPLE ? "ended during a sample" :
		    "ended before its done record");
		return -1;
	}
	if (check_line(k, o, line, (size_t)n, exp, v, type, variant, ok, why,
	    sizeof why) != 0) {
		child_bad(k, why, line, (size_t)n);
		return -1;
	}
	return n;
}

/*
 * Start build k's agent (spec "ID:SHA256:PATH") with --serve and the
 * conductor's own options, then relay its records up to its self-test:
 * its setup happens here, before any window.
 */
static void
start_child(size_t k, const char *spec, const struct opts *o, int cpu)
{
	struct child *c = &kids[k];
	const char *p1 = strchr(spec, ':'), *p2 = p1 ? strchr(p1 + 1, ':') :
	    NULL, *path;
	char sum[65], seed[2 * KERNEL_MAX_STATE + 1], steps[24], samples[24];
	char first[24], cpus[16], type[16], variant[128], msg_len[24], *line;
	char warmup[24];
	const char *argv[28];
	struct deadline d;
	int in[2], rd[2], ok;
	size_t a = 0;

	if (p1 == NULL || p2 == NULL || (size_t)(p1 - spec) >= sizeof c->id ||
	    p1 == spec || p2 - p1 - 1 != 64)
		fatal(AG_USAGE, "invalid --build \"%s\": expected "
		    "ID:SHA256:PATH", spec);
	snprintf(c->id, sizeof c->id, "%.*s", (int)(p1 - spec), spec);
	path = p2 + 1;
	if (sha256_file(path, sum) != 0 || strncmp(sum, p1 + 1, 64) != 0)
		fatal(AG_FAIL, "agent binary \"%s\" of build %s is not the one "
		    "built (sha256 %s); refusing to run it", path, c->id,
		    sha256_file(path, sum) == 0 ? sum : "unreadable");
	emit_hex(o->seed, o->seed_len, seed);
	snprintf(steps, sizeof steps, "%llu", (unsigned long long)o->steps);
	snprintf(samples, sizeof samples, "%llu",
	    (unsigned long long)o->samples);
	snprintf(first, sizeof first, "%llu",
	    (unsigned long long)o->first_sample);
	snprintf(cpus, sizeof cpus, "%d", cpu);
	argv[a++] = path;
	argv[a++] = "--serve";
	argv[a++] = "--study"; argv[a++] = o->study;
	argv[a++] = "--steps"; argv[a++] = steps;
	argv[a++] = "--samples"; argv[a++] = samples;
	argv[a++] = "--first-sample"; argv[a++] = first;
	argv[a++] = "--cpu"; argv[a++] = cpu >= 0 ? cpus : "none";
	argv[a++] = "--seed"; argv[a++] = seed;
	argv[a++] = "--build-id"; argv[a++] = c->id;
	argv[a++] = "--token"; argv[a++] = o->token;
	if (o->msg_len > 0) {
		snprintf(msg_len, sizeof msg_len, "%llu",
		    (unsigned long long)o->msg_len);
		argv[a++] = "--msg-len";
		argv[a++] = msg_len;
	}
	if (o->warmup > 0) {
		snprintf(warmup, sizeof warmup, "%llu",
		    (unsigned long long)o->warmup);
		argv[a++] = "--warmup";
		argv[a++] = warmup;
	}
	if (o->openssl_cap_clear != NULL) {
		argv[a++] = "--openssl-cap-clear";
		argv[a++] = o->openssl_cap_clear;
	}
	if (o->variants != NULL) {
		argv[a++] = "--variants";
		argv[a++] = o->variants;
	}
	argv[a] = NULL;
	c->setup_ms = -1;
	setup_deadline(k, now_ms(), &d);
	/* Close-on-exec: no other build's agent holds this one's pipes. */
	if (pipe(in) != 0 || pipe(rd) != 0 ||
	    fcntl(in[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(in[1], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(rd[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(rd[1], F_SETFD, FD_CLOEXEC) != 0)
		fatal(AG_FAIL, "cannot make pipes: %s", strerror(errno));
	if ((c->pid = fork()) < 0)
		fatal(AG_FAIL, "cannot start build %s: %s", c->id,
		    strerror(errno));
	if (c->pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (dup2(in[0], 0) < 0 || dup2(rd[1], 1) < 0)
			_exit(127);
		execv(path, (char *const *)argv);
		fprintf(stderr, "seqorch-agent: cannot run \"%s\": %s\n", path,
		    strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(rd[1]);
	c->rd = rd[0];
	c->len = 0;
	c->longest_ms = -1;
	if ((c->in = fdopen(in[1], "w")) == NULL ||
	    (c->buf = malloc(MAX_LINE + 1)) == NULL ||
	    (line = malloc(MAX_LINE + 1)) == NULL)
		fatal(AG_FAIL, "out of memory");
	while (next_record(k, o, line, &d, EXP_SETUP, NULL, type, variant,
	    &ok) >= 0) {
		relay(k, line);
		if (strcmp(type, PROTO_T_VARIANT) == 0 && ok &&
		    c->nok < MAX_VARIANTS &&
		    (c->ok[c->nok++] = strdup(variant)) == NULL)
			fatal(AG_FAIL, "out of memory");
		if (strcmp(type, PROTO_T_SELFTEST) == 0) {
			c->setup_ms = now_ms() - d.t0;
			c->ready = 1;
			break;
		}
		if (strcmp(type, PROTO_T_DONE) == 0 ||
		    strcmp(type, PROTO_T_ERROR) == 0) {
			/* No variant passed, or it said why it stopped. */
			c->said_error = strcmp(type, PROTO_T_ERROR) == 0;
			child_gone(k, NULL);
			break;
		}
	}
	free(line);
}

/*
 * A (build, variant) cell: build k's agent times variant v.  Its spread
 * (of ns, for --max-cv) starts from what a resume stored of it, and more
 * says why its next sample is an extra one.
 */
struct cell {
	size_t k;
	const char *v;
	struct spread ns;
	uint64_t stored;	/* of ns.n: stored before the resume */
	char more[128];
};

static struct cell cells[MAX_BUILDS * MAX_VARIANTS];

/*
 * Ask cell c's build for one sample (a warmup: --warmup's round s; with
 * c->more, an extra one, which its record says why) and relay its
 * record; 1 when one came.  A timed sample's ns goes into c's spread.
 */
static int
ask(struct cell *c, const struct opts *o, uint64_t s, size_t pos,
    uint64_t order, int warmup, char *line)
{
	size_t k = c->k;
	struct child *ch = &kids[k];
	long long t0 = now_ms();
	char type[16], variant[128], ns[32], err[128];
	struct jsonl_field f = { PROTO_F_NS, ns, sizeof ns, 0, 1 };
	struct deadline d;
	int ok, n;

	if (fprintf(ch->in, "%s %llu %zu %llu %s%s%s\n", warmup ? "warmup" :
	    "sample", (unsigned long long)s, pos, (unsigned long long)order,
	    c->v, !warmup && c->more[0] ? " " : "", !warmup ? c->more : "") <
	    0 || fflush(ch->in) != 0) {
		child_gone(k, "stopped taking requests");
		return 0;
	}
	sample_deadline(k, t0, "a sample request", &d);
	if ((n = next_record(k, o, line, &d, EXP_SAMPLE, c->v, type, variant,
	    &ok)) < 0)
		return 0;
	if (strcmp(type, PROTO_T_SAMPLE) != 0) {
		relay(k, line);
		ch->said_error = 1;	/* its error record */
		child_gone(k, "sent no sample record");
		return 0;
	}
	/* check_line read it whole: only whether ns is a number is left. */
	if (jsonl_read(line, (size_t)n, &f, 1, err, sizeof err) != 0 ||
	    f.found != 1) {
		child_bad(k, "sent a sample record without a number \"ns\"",
		    line, (size_t)n);
		return 0;
	}
	relay(k, line);
	if (!warmup)
		spread_add(&c->ns, strtod(ns, NULL));
	if (now_ms() - t0 > ch->longest_ms)
		ch->longest_ms = now_ms() - t0;
	return 1;
}

/* Has build k's agent passed variant v? */
static int
child_has(const struct child *c, const char *v)
{
	size_t i;

	for (i = 0; i < c->nok; i++)
		if (strcmp(c->ok[i], v) == 0)
			return 1;
	return 0;
}

/*
 * Round s of the n cells of run (a warmup round of --warmup when
 * warmup), in places *order on (one each, taken or not): the samples
 * that came.  The cells are variant by variant, each variant's builds
 * side by side; a variant's builds sample so, the first of them first
 * in all but one round of n: the next n rounds turn them by one, so
 * that none is always the first of a pair.
 */
static uint64_t
conduct_round(struct cell **run, size_t n, uint64_t s, int warmup,
    uint64_t *order, const struct opts *o, char *line)
{
	size_t pos, idx, g, m, bpos[MAX_BUILDS] = { 0 };
	struct cell *c;
	uint64_t got = 0;

	for (pos = 0; pos < n; pos++, (*order)++) {
		if (o->reverse)
			idx = (s & 1) ? n - 1 - pos : pos;
		else
			idx = (size_t)((pos + s) % n);
		/* Its variant's cells: run[g .. g + m - 1]. */
		for (g = idx; g > 0 && run[g - 1]->v == run[idx]->v; g--)
			;
		for (m = idx + 1 - g; g + m < n && run[g + m]->v ==
		    run[idx]->v; m++)
			;
		c = run[g + (idx - g + s / n) % m];
		if (kids[c->k].ready)
			got += (uint64_t)ask(c, o, s, bpos[c->k]++, *order,
			    warmup, line);
	}
	return got;
}

/*
 * --max-cv's extra rounds, after the planned ones (from --extra-from's
 * index and place when later): each round, the variants with a cell
 * whose spread is still above --max-cv, with fewer than --max-samples,
 * take one sample in each of their builds below --max-samples, in round
 * s's alternating order among them, until none is left.  A steady build
 * of such a variant samples too, so that the builds' samples stay pairs
 * (the report pairs builds by index); its reason names the build it
 * pairs.  A variant once steady stays so (its spreads no longer move),
 * so a cell still asked at round s took every round before: s stays
 * below --max-samples (past the stored ones on a resume).
 */
static uint64_t
conduct_extra(size_t n, uint64_t s, uint64_t order, const struct opts *o,
    char *line)
{
	struct cell *run[MAX_BUILDS * MAX_VARIANTS];
	int wide[MAX_BUILDS * MAX_VARIANTS];
	uint64_t got = 0;
	size_t i, j, m, len;

	if (o->extra_from) {
		s = o->extra_first;
		if (o->samples == 0 || order < o->extra_order)
			order = o->extra_order;
	}
	for (;; s++) {
		for (i = 0; i < n; i++) {
			struct cell *c = &cells[i];

			wide[i] = kids[c->k].ready &&
			    c->ns.n < o->max_samples &&
			    spread_too_wide(&c->ns, o->max_cv, c->more,
			    sizeof c->more);
			len = strlen(c->more);
			if (wide[i] && c->stored > 0)
				snprintf(c->more + len, sizeof c->more - len,
				    " (%llu stored before the resume)",
				    (unsigned long long)c->stored);
		}
		/* Cells are variant by variant: a steady one joins a wide one
		 * of its variant. */
		for (i = m = 0; i < n; i++) {
			struct cell *c = &cells[i];

			if (!kids[c->k].ready || c->ns.n >= o->max_samples)
				continue;
			for (j = 0; j < n && !(wide[j] && cells[j].v == c->v);
			    j++)
				;
			if (j == n)
				continue;
			if (!wide[i])
				snprintf(c->more, sizeof c->more, "pairs build "
				    "\"%s\"'s extra sample: %s",
				    kids[cells[j].k].id, cells[j].more);
			run[m++] = c;
		}
		if (m == 0)
			return got;
		got += conduct_round(run, m, s, 0, &order, o, line);
	}
}

/*
 * The cells' spreads start from --stored-spread's, each of its build
 * and variant (a cell whose variant did not pass has none to start).
 */
static void
seed_cells(size_t n, const struct opts *o)
{
	size_t i, j;

	for (i = 0; i < o->nstored; i++)
		for (j = 0; j < n; j++)
			if (strcmp(kids[cells[j].k].id, o->stored[i].build) ==
			    0 && strcmp(cells[j].v, o->stored[i].variant) == 0) {
				cells[j].ns.n = cells[j].stored =
				    o->stored[i].n;
				cells[j].ns.mean = o->stored[i].mean;
				cells[j].ns.m2 = o->stored[i].m2;
			}
}

/* Is every --stored-spread's build one of --build's? */
static void
check_stored_builds(const struct opts *o)
{
	size_t i, j, len;

	for (i = 0; i < o->nstored; i++) {
		len = strlen(o->stored[i].build);
		for (j = 0; j < o->nbuilds; j++)
			if (strncmp(o->builds[j], o->stored[i].build, len) ==
			    0 && o->builds[j][len] == ':')
				break;
		if (j == o->nbuilds)
			fatal(AG_USAGE, "--stored-spread: build \"%s\" is not "
			    "one of --build", o->stored[i].build);
	}
}

/*
 * --conduct: every build of the host in one alternating order.  Each
 * --build's agent is started with --serve and sets up and self-tests
 * (one after the other, all before the window); then, inside one window,
 * the cells (variant, build) take their samples in an order that depends
 * only on the sample index, as time_round's does for variants: the cells
 * are variant by variant, each variant's builds side by side, so the
 * builds alternate at every step and two builds of a variant sample next
 * to each other; which of them goes first turns every n rounds (n cells).
 * With --max-cv the extra rounds follow in the same window
 * (conduct_extra).  A build that fails leaves the others measuring.
 */
int
conduct(struct opts *o, const struct study *st, const char *study)
{
	struct cell *run[MAX_BUILDS * MAX_VARIANTS];
	uint64_t s, order, total = 0, last = o->first_sample + o->samples;
	size_t i, k, n = 0;
	char why[TOPOLOGY_WHY_LEN + 32], *line;
	int pinned;
	struct jsonl *rec;

	emit_conducting();
	hang_floors();
	check_stored_builds(o);
	sample_scale = (double)o->steps / (double)STUDY_SELFTEST_STEPS(st);
	if (sample_scale < 1)
		sample_scale = 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	if (fcntl(fileno(emit_stream()), F_SETFD, FD_CLOEXEC) != 0)
		fatal(AG_IO, "cannot keep the records file from the builds' "
		    "agents: %s", strerror(errno));
	/* Relaying happens between samples, on the CPU they are timed on. */
	pinned = o->cpu >= 0 && pin_to_cpu(o->cpu, why, sizeof why) == 0;
	o->seed_len = st->state_len;
	o->study = study;
	for (k = 0; k < o->nbuilds; k++) {
		nkids++;
		start_child(k, o->builds[k], o, o->cpu);
	}
	for (i = 0; registry_kernels[i].study != NULL; i++) {
		const struct registry_kernel *r = &registry_kernels[i];

		if (strcmp(r->study, study) != 0 ||
		    !variant_in_list(o->variants, r->variant))
			continue;
		for (k = 0; k < nkids; k++)
			if (kids[k].ready && child_has(&kids[k], r->variant)) {
				cells[n].k = k;
				cells[n].v = r->variant;
				run[n] = &cells[n];
				n++;
			}
	}
	seed_cells(n, o);
	if ((line = malloc(MAX_LINE + 1)) == NULL)
		fatal(AG_FAIL, "out of memory");
	if (n > 0) {
		if (o->lock != NULL)
			window_lock(o);
		window_preflight(o, pinned ? o->cpu : -1, NULL);
		window_record(PROTO_V_BEGIN, pinned ? o->cpu : -1);
		/* done counts every sample record relayed, warmups too. */
		for (s = 0; s < o->warmup; s++) {
			order = s * n;
			total += conduct_round(run, n, s, 1, &order, o, line);
		}
		for (s = o->first_sample; s < last; s++) {
			order = s * n;
			total += conduct_round(run, n, s, 0, &order, o, line);
		}
		if (o->max_cv > 0)
			total += conduct_extra(n, last, last * n, o, line);
		window_record(PROTO_V_END, pinned ? o->cpu : -1);
	}
	/* Each build's agent ends with its done record. */
	for (k = 0; k < nkids; k++) {
		struct child *c = &kids[k];
		char type[16], variant[128];
		struct deadline d;
		int ok;

		if (c->pid == 0)
			continue;
		if (fputs("quit\n", c->in) < 0 || fflush(c->in) != 0) {
			child_gone(k, "stopped taking requests");
			continue;
		}
		/* Its done, or its error: either is its last record. */
		sample_deadline(k, now_ms(), "quit", &d);
		if (next_record(k, o, line, &d, EXP_DONE, NULL, type, variant,
		    &ok) >= 0) {
			relay(k, line);
			child_gone(k, NULL);
		}
	}
	free(line);
	for (k = 0; k < nkids; k++)
		for (i = 0; i < kids[k].nok; i++)
			free(kids[k].ok[i]);
	rec = emit_new(PROTO_T_DONE);
	jsonl_num(rec, PROTO_F_SAMPLES, (double)total);
	emit(rec);
	return total > 0 ? AG_OK : AG_FAIL;
}

/*
 * The conductor: its build agents (children started with --serve, two
 * pipes each), the relay of their records and the order of their
 * samples.
 */
#include "conduct.h"
#include "emit.h"
#include "pin.h"
#include "protocol.h"
#include "registry.h"
#include "sha256.h"
#include "topology.h"
#include "variant.h"
#include "window.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LINE 65536		/* a record, as the coordinator bounds it */

/* A build's agent, started by the conductor with --serve. */
struct child {
	char id[24];
	pid_t pid;		/* 0 once it is gone */
	FILE *in, *rd;		/* its requests, its records */
	char *ok[MAX_VARIANTS];	/* its variants that passed */
	size_t nok;
	int ready;		/* self-tested, waiting for requests */
	int said_error;		/* its last record was an error */
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

/* The next record line of c, its newline cut; -1 at its end or too long. */
static int
child_line(struct child *c, char *buf, size_t size)
{
	size_t len;

	if (c->rd == NULL || fgets(buf, (int)size, c->rd) == NULL)
		return -1;
	len = strlen(buf);
	if (len == 0 || buf[len - 1] != '\n')
		return -1;
	buf[len - 1] = '\0';
	return 0;
}

/*
 * Build k's agent has ended, or is ended (it broke the protocol): reap
 * it, and unless its own error record said why, say it in one for it.
 */
static void
child_gone(size_t k, const char *why)
{
	struct child *c = &kids[k];
	char msg[512];
	const char *line, *err;
	int status = 0;
	struct jsonl *rec;

	if (c->pid == 0)
		return;
	if (c->in != NULL)
		fclose(c->in);
	c->in = NULL;
	if (why != NULL)
		kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	if (c->rd != NULL)
		fclose(c->rd);
	c->rd = NULL;
	c->pid = 0;
	c->ready = 0;
	if (why == NULL || c->said_error)
		return;
	snprintf(msg, sizeof msg, "the agent of build %s %s (%s %d)", c->id,
	    why, WIFSIGNALED(status) ? "signal" : "exit status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	rec = emit_new(PROTO_T_ERROR);
	jsonl_str(rec, PROTO_F_MESSAGE, msg);
	if ((line = jsonl_finish(rec, &err)) == NULL)
		fatal(AG_FAIL, "%s", err);
	relay(k, line);
	jsonl_free(rec);
	c->said_error = 1;
}

/* The type of a record line (into type), and its variant and status. */
static int
line_type(const char *line, char *type, size_t tlen, char *variant,
    size_t vlen, int *ok)
{
	char status[16], why[128];
	struct jsonl_field f[] = {
		{ PROTO_F_TYPE, type, tlen, 0 },
		{ PROTO_F_VARIANT, variant, vlen, 0 },
		{ PROTO_F_STATUS, status, sizeof status, 0 },
	};

	if (jsonl_read(line, strlen(line), f, 3, why, sizeof why) != 0 ||
	    f[0].found != 1)
		return -1;
	if (f[1].found != 1)
		variant[0] = '\0';
	*ok = f[2].found == 1 && strcmp(status, PROTO_V_OK) == 0;
	return 0;
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
	const char *argv[24];
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
	if (o->openssl_cap_clear != NULL) {
		argv[a++] = "--openssl-cap-clear";
		argv[a++] = o->openssl_cap_clear;
	}
	if (o->variants != NULL) {
		argv[a++] = "--variants";
		argv[a++] = o->variants;
	}
	argv[a] = NULL;
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
	if ((c->in = fdopen(in[1], "w")) == NULL ||
	    (c->rd = fdopen(rd[0], "r")) == NULL)
		fatal(AG_FAIL, "out of memory");
	if ((line = malloc(MAX_LINE + 2)) == NULL)
		fatal(AG_FAIL, "out of memory");
	for (;;) {
		if (child_line(c, line, MAX_LINE + 2) != 0) {
			child_gone(k, "ended during its setup");
			break;
		}
		if (line_type(line, type, sizeof type, variant,
		    sizeof variant, &ok) != 0) {
			child_gone(k, "wrote a line that is not a record");
			break;
		}
		relay(k, line);
		if (strcmp(type, PROTO_T_VARIANT) == 0 && ok &&
		    c->nok < MAX_VARIANTS &&
		    (c->ok[c->nok++] = strdup(variant)) == NULL)
			fatal(AG_FAIL, "out of memory");
		if (strcmp(type, PROTO_T_SELFTEST) == 0) {
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

/* Ask build k for one sample and relay its record; 1 when one came. */
static int
ask(size_t k, uint64_t s, size_t pos, uint64_t order, const char *v,
    char *line)
{
	struct child *c = &kids[k];
	char type[16], variant[128];
	int ok;

	if (fprintf(c->in, "sample %llu %zu %llu %s\n", (unsigned long long)s,
	    pos, (unsigned long long)order, v) < 0 || fflush(c->in) != 0) {
		child_gone(k, "stopped taking requests");
		return 0;
	}
	if (child_line(c, line, MAX_LINE + 2) != 0 ||
	    line_type(line, type, sizeof type, variant, sizeof variant,
	    &ok) != 0) {
		child_gone(k, "ended during a sample");
		return 0;
	}
	relay(k, line);
	if (strcmp(type, PROTO_T_SAMPLE) == 0)
		return 1;
	c->said_error = strcmp(type, PROTO_T_ERROR) == 0;
	child_gone(k, "sent no sample record");
	return 0;
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
 * --conduct: every build of the host in one alternating order.  Each
 * --build's agent is started with --serve and sets up and self-tests
 * (one after the other, all before the window); then, inside one window,
 * the cells (variant, build) take their samples in an order that depends
 * only on the sample index, as time_round's does for variants: the cells
 * are variant by variant, each variant's builds side by side, so the
 * builds alternate at every step and two builds of a variant sample next
 * to each other; which of them goes first turns every n rounds (n cells).
 * A build that fails leaves the others measuring.
 */
int
conduct(struct opts *o, const struct study *st, const char *study)
{
	/* A variant's cells are cells[g .. g + m - 1], one per build. */
	struct cell { size_t k, g, m; const char *v; } cells[MAX_BUILDS *
	    MAX_VARIANTS], *c;
	uint64_t s, total = 0, last = o->first_sample + o->samples;
	size_t i, k, n = 0, pos, idx, bpos[MAX_BUILDS];
	char why[TOPOLOGY_WHY_LEN + 32], *line;
	int pinned;
	struct jsonl *rec;

	emit_conducting();
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
		size_t g = n;

		for (k = 0; k < nkids; k++)
			if (kids[k].ready && child_has(&kids[k], r->variant)) {
				cells[n].k = k;
				cells[n].g = g;
				cells[n++].v = r->variant;
			}
		for (k = g; k < n; k++)
			cells[k].m = n - g;
	}
	if ((line = malloc(MAX_LINE + 2)) == NULL)
		fatal(AG_FAIL, "out of memory");
	if (n > 0) {
		if (o->lock != NULL)
			window_lock(o);
		window_preflight(o, pinned ? o->cpu : -1, NULL);
		window_record(PROTO_V_BEGIN, pinned ? o->cpu : -1);
		for (s = o->first_sample; s < last; s++) {
			memset(bpos, 0, sizeof bpos);
			for (pos = 0; pos < n; pos++) {
				if (o->reverse)
					idx = (s & 1) ? n - 1 - pos : pos;
				else
					idx = (size_t)((pos + s) % n);
				/*
				 * A variant's builds sample side by side, the
				 * first of them first in all but one round of
				 * n: the next n rounds turn them by one, so
				 * that none is always the first of a pair.
				 */
				c = &cells[idx];
				c = &cells[c->g + (idx - c->g + s / n) % c->m];
				k = c->k;
				if (kids[k].ready)
					total += (uint64_t)ask(k, s, bpos[k]++,
					    s * n + pos, c->v, line);
			}
		}
		window_record(PROTO_V_END, pinned ? o->cpu : -1);
	}
	/* Each build's agent ends with its done record. */
	for (k = 0; k < nkids; k++) {
		struct child *c = &kids[k];

		if (c->pid == 0)
			continue;
		if (fputs("quit\n", c->in) < 0 || fflush(c->in) != 0) {
			child_gone(k, "stopped taking requests");
			continue;
		}
		while (child_line(c, line, MAX_LINE + 2) == 0) {
			char type[16], variant[128];
			int ok;

			relay(k, line);
			if (line_type(line, type, sizeof type, variant,
			    sizeof variant, &ok) == 0 &&
			    strcmp(type, PROTO_T_DONE) == 0)
				break;
		}
		child_gone(k, NULL);
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

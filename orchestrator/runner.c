/* Per-host preparation and measurement, in the host pool (pool.h). */
#include "runner.h"

#include "affinity.h"
#include "artifact.h"
#include "conn.h"
#include "deploy.h"
#include "pool.h"
#include "progress.h"
#include "proto.h"
#include "report.h"
#include "study.h"
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define AGENT_ERR_MAX 4096

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
	const char *abort;		/* non-empty: do not measure, this is why */
	int64_t window_id;		/* open window, 0 when none */
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
	int collected;		/* every record of the launch was read */
	char **want;		/* variants asked of this agent */
	char **seen;		/* variants it sent a record for */
	size_t nseen;
	char **ok_variants;
	unsigned char **cells;	/* per ok variant: indices received */
	size_t nok;
	uint64_t span;		/* indices first .. first + span - 1 */
	uint64_t records;	/* sample records received */
	int window;		/* 0 before begin, 1 open, 2 ended */
	int waits;
	char build_id[24];	/* as given to the agent */
	char *window_before;	/* the open window's first snapshot */
	char *preflight;	/* the preflight record for the next window */
	char verdict[8];	/* its verdict: quiet or noisy */
	struct so_err err;
};

/* A write the database refused: say it, and fail the host. */
static void
db_lost(struct hostrun *hr, const char *what, const char *why)
{
	fprintf(stderr, "seqorch: host \"%s\": %s not stored: %s\n",
	    hr->host->name, what, why);
	if (!hr->failed) {
		hr->failed = 1;
		snprintf(hr->error, sizeof hr->error, "%.200s not stored: "
		    "%.600s", what, why);
	}
}

/*
 * Store an event.  One the database refuses is not dropped: it goes to
 * stderr with the reason, and the host fails (its record is incomplete).
 */
static void
note(struct hostrun *hr, const char *level, const char *msg)
{
	struct so_err e;
	char *what;

	if (db_event(hr->db, hr->p->run_id, hr->host->name, level, msg,
	    &e) == 0)
		return;
	what = xasprintf("%s \"%s\"", level, msg);
	db_lost(hr, what, e.msg);
	free(what);
}

static void
host_fail(struct hostrun *hr, const char *msg)
{
	if (!hr->failed) {
		hr->failed = 1;
		snprintf(hr->error, sizeof hr->error, "%.*s",
		    (int)sizeof hr->error - 1, msg);
	}
	note(hr, "error", msg);
	progress_set(hr->index, "failed: %s", msg);
}

/* Index of v among the variants that passed, or -1. */
static int
variant_ok(struct stream *s, const char *v)
{
	size_t i;

	for (i = 0; i < s->nok; i++)
		if (strcmp(s->ok_variants[i], v) == 0)
			return (int)i;
	return -1;
}

static int
in_list(char *const *list, size_t n, const char *v)
{
	size_t i;

	for (i = 0; i < n && list[i] != NULL; i++)
		if (strcmp(list[i], v) == 0)
			return 1;
	return 0;
}

/*
 * A variant record: one per variant asked for, and only those.  An ok
 * variant gets its table of received sample indices.
 */
static int
check_variant(struct stream *s, const struct record *r)
{
	if (!in_list(s->want, (size_t)-1, r->variant))
		return so_error(&s->err, SO_EPROTO, "variant record for "
		    "\"%s\", which was not asked for", r->variant);
	if (in_list(s->seen, s->nseen, r->variant))
		return so_error(&s->err, SO_EPROTO, "second variant record for "
		    "\"%s\" (status %s)", r->variant, r->status);
	s->seen = xrealloc(s->seen, (s->nseen + 1) * sizeof *s->seen);
	s->seen[s->nseen++] = xstrdup(r->variant);
	if (strcmp(r->status, "ok") != 0)
		return 0;
	s->ok_variants = xrealloc(s->ok_variants,
	    (s->nok + 1) * sizeof *s->ok_variants);
	s->cells = xrealloc(s->cells, (s->nok + 1) * sizeof *s->cells);
	s->ok_variants[s->nok] = xstrdup(r->variant);
	s->cells[s->nok] = xcalloc(s->span, 1);
	s->nok++;
	s->expected += s->nsamples;
	return 0;
}

/*
 * The environment variable that sets libcrypto's capabilities on a build's
 * target ("x86_64-linux-gnu"), or NULL for an architecture without one.
 */
static const char *
openssl_cap_var(const char *target)
{
	size_t n = strcspn(target, "-");

	if (n == 6 && strncmp(target, "x86_64", n) == 0)
		return "OPENSSL_ia32cap";
	if ((n == 7 && strncmp(target, "aarch64", n) == 0) ||
	    (n == 5 && strncmp(target, "arm64", n) == 0))
		return "OPENSSL_armcap";
	return NULL;
}

/*
 * With --openssl-cap the agent must have run with the value: its facts
 * say what it found in its environment (facts.c).  Without it, a mask the
 * agent inherited (a local host shares the coordinator's environment) is
 * not an error but must not pass unseen.
 */
static int
check_openssl_cap(struct stream *s, const cJSON *facts)
{
	const char *want = s->hr->p->openssl_cap;
	const char *var = openssl_cap_var(s->build->target);
	const cJSON *v;
	char msg[400];

	if (var == NULL)
		return 0;
	v = cJSON_GetObjectItemCaseSensitive(facts,
	    strcmp(var, "OPENSSL_armcap") == 0 ? "openssl_armcap" :
	    "openssl_ia32cap");
	if (want == NULL) {
		if (!cJSON_IsString(v))
			return 0;
		snprintf(msg, sizeof msg, "agent ran with %s=\"%.200s\" from "
		    "its environment, not from --openssl-cap: libcrypto's code "
		    "paths were restricted", var, v->valuestring);
		return db_event(s->hr->db, s->hr->p->run_id,
		    s->hr->host->name, "warning", msg, &s->err);
	}
	if (cJSON_IsString(v) && strcmp(v->valuestring, want) == 0)
		return 0;
	return so_error(&s->err, SO_EPROTO, "agent did not run with %s=\"%s\" "
	    "(its facts say %.200s)", var, want, cJSON_IsString(v) ?
	    v->valuestring : "it was not set");
}

/*
 * A local agent pinned itself to cpu: keep our threads off it, and say
 * so in events either way (a failure is recorded, not fatal).
 */
static int
avoid_agent_cpu(struct stream *s, int cpu)
{
	struct so_err e = { 0 };
	char left[256], *msg;
	int rc;

	if (affinity_avoid(cpu, left, sizeof left, &e) == 0)
		msg = xasprintf("coordinator threads kept off the agent's cpu "
		    "%d (now on cpus %s)", cpu, left);
	else
		msg = xasprintf("coordinator threads may share the agent's "
		    "cpu %d: %s", cpu, e.msg);
	rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name, "info",
	    msg, &s->err);
	free(msg);
	return rc;
}

static int
store_facts(struct stream *s, const struct record *r)
{
	const cJSON *j = r->json;
	struct host_facts f = { 0 };
	char *text = cJSON_PrintUnformatted(j);
	const cJSON *v;
	int rc;

#define STR(k) (cJSON_IsString(v = cJSON_GetObjectItem(j, k)) ? \
	v->valuestring : NULL)
	f.address = s->hr->host->address;
	f.arch = STR("arch");
	f.os = STR("os");
	f.kernel = STR("kernel");
	f.cpu_model = STR("cpu_model");
	f.governor = STR("governor");
	f.openssl = STR("openssl");
	f.pin_error = STR("pin_error");
	f.cpu_choice = STR("cpu_choice");
	f.counters = STR("counters");
	f.counters_error = STR("counters_error");
#undef STR
	v = cJSON_GetObjectItem(j, "cores");
	f.cores = v->valueint;
	v = cJSON_GetObjectItem(j, "pin_cpu");
	f.pin_cpu = cJSON_IsNumber(v) ? v->valueint : -1;
	f.pinned = cJSON_IsTrue(cJSON_GetObjectItem(j, "pinned"));
	f.calib_mhz = r->calib_mhz;
	f.json = text;
	rc = db_run_host_facts(s->hr->db, s->hr->p->run_id,
	    s->hr->host->name, &f, &s->err);
	free(text);
	if (rc == 0)
		rc = check_openssl_cap(s, j);
	if (rc == 0 && f.pinned && s->hr->host->transport == TRANSPORT_LOCAL)
		rc = avoid_agent_cpu(s, f.pin_cpu);
	return rc;
}

static int
store_sample(struct stream *s, const struct record *r)
{
	const struct run_params *p = s->hr->p;
	struct sample_row row = { 0 };
	const char *why = NULL;
	char rate[16];
	int rc, v;

	s->records++;
	if (strcmp(r->study, p->study) != 0)
		return so_error(&s->err, SO_EPROTO, "sample of study \"%s\", "
		    "expected \"%s\"", r->study, p->study);
	if ((v = variant_ok(s, r->variant)) < 0)
		return so_error(&s->err, SO_EPROTO, "sample of variant \"%s\" "
		    "that was not asked for or did not pass its self-test",
		    r->variant);
	if (s->window != 1)
		return so_error(&s->err, SO_EPROTO, "sample outside the "
		    "measurement window (%s)", s->window == 0 ?
		    "no window begin yet" : "after its end");
	if (strcmp(r->build_id, s->build_id) != 0)
		return so_error(&s->err, SO_EPROTO, "sample of build \"%s\", "
		    "but the agent was started as build %s", r->build_id,
		    s->build_id);
	if ((uint64_t)r->steps != p->steps)
		return so_error(&s->err, SO_EPROTO, "sample of %lld steps, "
		    "expected %llu", (long long)r->steps,
		    (unsigned long long)p->steps);
	if ((uint64_t)r->sample < s->first ||
	    (uint64_t)r->sample >= s->first + s->span)
		return so_error(&s->err, SO_EPROTO, "sample index %lld out of "
		    "range", (long long)r->sample);
	if (s->cells[v][r->sample - (int64_t)s->first]++ != 0)
		return so_error(&s->err, SO_EPROTO, "second sample %lld of "
		    "\"%s\" (ns %lld): each index is timed once",
		    (long long)r->sample, r->variant, (long long)r->ns);
	if (strcmp(r->seed, p->seed) != 0)
		why = "seed differs from the run's seed";
	else if (strcmp(r->digest, p->ref_digest) != 0)
		why = "digest differs from the reference";
	row.host = s->hr->host->name;
	row.build_id = s->build->build_id;
	row.study = r->study;
	row.variant = r->variant;
	row.sample_index = r->sample;
	row.position = r->position;
	row.steps = (uint64_t)r->steps;
	row.ns = (uint64_t)r->ns;
	row.digest = r->digest;
	row.seed = r->seed;
	row.valid = why == NULL;
	row.invalid_reason = why;
	row.calib_mhz = r->calib_mhz;
	row.calib_after_mhz = r->calib_after_mhz;
	row.cpu = (int)r->cpu;
	row.reason = r->reason;
	row.openssl_cap = p->openssl_cap;
	row.counted = r->counted;
	row.cycles = r->cycles;
	row.instructions = r->instructions;
	row.cycles_source = r->cycles_source;
	rc = db_sample_insert(s->hr->db, p->run_id, &row, &s->err);
	/*
	 * Stored by an earlier launch of this run: a resume re-times the
	 * span between its gaps, and the first timing of a cell is kept.
	 */
	if (rc == SO_EBUSY)
		return 0;
	if (rc == 0 && r->nmetrics > 0)
		rc = db_sample_metrics(s->hr->db, p->run_id, &row,
		    r->metric_name, r->metric_value, r->nmetrics, &s->err);
	if (rc != 0)
		return rc;
	s->got++;
	s->hr->samples++;
	if (why != NULL) {
		char msg[512];

		s->hr->invalid++;
		snprintf(msg, sizeof msg, "sample %lld of \"%s\" (%s) is "
		    "invalid: %s (got %s)", (long long)r->sample, r->variant,
		    s->cc, why, r->digest);
		note(s->hr, "error", msg);
	}
	/* A RandomX hash takes milliseconds, a SHA3 one nanoseconds. */
	report_format_rate((double)r->steps * 1e9 / (double)r->ns, rate,
	    sizeof rate);
	progress_set(s->hr->index, "%s: sample %lld/%llu of %s (%s/s)",
	    s->cc, (long long)r->sample + 1, (unsigned long long)p->samples,
	    r->variant, rate);
	return 0;
}

/*
 * The noise verdict before a window: kept for the window record that
 * follows, and a noisy one is a warning with its reasons.
 */
static int
store_preflight(struct stream *s, const struct record *r)
{
	const cJSON *item;
	char *msg, *t;
	int rc = 0;

	free(s->preflight);
	s->preflight = cJSON_PrintUnformatted(r->json);
	snprintf(s->verdict, sizeof s->verdict, "%s", r->verdict);
	if (strcmp(r->verdict, "noisy") != 0)
		return 0;
	msg = xasprintf("host is noisy before the window (%s):", s->cc);
	cJSON_ArrayForEach(item, cJSON_GetObjectItem(r->json, "reasons")) {
		t = xasprintf("%s %s;", msg, item->valuestring);
		free(msg);
		msg = t;
	}
	msg[strlen(msg) - 1] = '\0';
	progress_set(s->hr->index, "%s", msg);
	rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name,
	    "warning", msg, &s->err);
	free(msg);
	return rc;
}

/* A window opens or closes on this host; exploratory runs keep none. */
static int
store_window(struct stream *s, const struct record *r)
{
	struct hostrun *hr = s->hr;
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(r->state, "at");
	char *state = cJSON_PrintUnformatted(r->state), *drift = NULL;
	int rc = 0;

	if (!cJSON_IsString(at)) {
		rc = so_error(&s->err, SO_EPROTO, "window record without a "
		    "time");
		goto out;
	}
	if (strcmp(r->phase, "begin") == 0 ? s->window != 0 :
	    s->window != 1) {
		rc = so_error(&s->err, SO_EPROTO, "window %s %s", r->phase,
		    s->window == 0 ? "before its begin" : s->window == 1 ?
		    "while the window is open" : "after the window ended");
		goto out;
	}
	s->window++;
	if (hr->p->explore)
		goto out;
	if (strcmp(r->phase, "begin") == 0) {
		struct window_open w = { .run_id = hr->p->run_id,
		    .build_id = s->build->build_id, .study = hr->p->study,
		    .host = hr->host->name, .holder = db_coordinator_id(),
		    .at = at->valuestring, .state = state,
		    .verdict = s->preflight ? s->verdict : NULL,
		    .preflight = s->preflight };

		free(s->window_before);
		s->window_before = xstrdup(state);
		rc = db_window_begin(hr->db, &w, &hr->window_id, &s->err);
		free(s->preflight);
		s->preflight = NULL;
	} else if (hr->window_id != 0) {
		drift = window_drift(s->window_before, state);
		rc = db_window_end(hr->db, hr->window_id, at->valuestring,
		    state, drift, &s->err);
		hr->window_id = 0;
		if (rc == 0 && drift != NULL) {
			char *msg = xasprintf("measurement window drifted: %s",
			    drift);

			rc = db_event(hr->db, hr->p->run_id, hr->host->name,
			    "warning", msg, &s->err);
			free(msg);
		}
	}
out:
	free(drift);
	free(state);
	return rc;
}

static int
handle_record(struct stream *s, const struct record *r)
{
	const struct run_params *p = s->hr->p;
	char msg[SO_ERR_MAX];
	int rc;

	if (s->saw_done)
		return so_error(&s->err, SO_EPROTO, "\"%s\" record after done",
		    proto_type_name(r->type));
	if (!s->saw_hello && r->type != REC_HELLO && r->type != REC_ERROR)
		return so_error(&s->err, SO_EPROTO, "first record is \"%s\", "
		    "expected \"hello\"", proto_type_name(r->type));
	switch (r->type) {
	case REC_HELLO:
		if (s->saw_hello)
			return so_error(&s->err, SO_EPROTO, "second hello");
		/* Records of another launch (a reused directory) are not ours. */
		if (strcmp(r->token, s->token) != 0)
			return so_error(&s->err, SO_EPROTO, "hello carries run "
			    "token \"%.40s\", expected \"%s\": these records "
			    "belong to another run", r->token, s->token);
		s->saw_hello = 1;
		if (strcmp(r->build_id, s->build_id) != 0)
			return so_error(&s->err, SO_EPROTO, "hello of build "
			    "\"%s\", but the agent was started as build %s",
			    r->build_id, s->build_id);
		if (strcmp(r->study, p->study) != 0 ||
		    (uint64_t)r->steps != p->steps ||
		    (uint64_t)r->samples != s->nsamples)
			return so_error(&s->err, SO_EPROTO, "agent runs study "
			    "\"%s\" with %lld steps x %lld samples, not what "
			    "was asked", r->study, (long long)r->steps,
			    (long long)r->samples);
		return 0;
	case REC_FACTS:
		return store_facts(s, r);
	case REC_VARIANT:
		if ((rc = check_variant(s, r)) != 0)
			return rc;
		if (r->warning != NULL) {
			snprintf(msg, sizeof msg, "build %lld (%s): variant "
			    "\"%s\" %s", (long long)s->build->build_id, s->cc,
			    r->variant, r->warning);
			if (db_event(s->hr->db, p->run_id, s->hr->host->name,
			    "warning", msg, &s->err) != 0)
				return s->err.code;
		}
		return db_variant_status(s->hr->db, p->run_id,
		    s->hr->host->name, s->build->build_id, r->study,
		    r->variant, r->status, r->reason, &s->err);
	case REC_SELFTEST:
		/* Variants that agree on a wrong chain are all wrong. */
		if ((uint64_t)r->steps !=
		    STUDY_SELFTEST_STEPS(study_find(p->study)->study) ||
		    strcmp(r->digest, p->ref_selftest) != 0)
			return so_error(&s->err, SO_EPROTO, "self-test chain "
			    "of %lld steps ends in %.128s, the reference's in "
			    "%s", (long long)r->steps, r->digest,
			    p->ref_selftest);
		progress_set(s->hr->index, "%s: self-test passed, measuring",
		    s->cc);
		return 0;
	case REC_SAMPLE:
		return store_sample(s, r);
	case REC_WINDOW:
		return store_window(s, r);
	case REC_PREFLIGHT:
		return store_preflight(s, r);
	case REC_WAIT:
		/* Sent at most once: a stream of them is not a wait. */
		if (++s->waits > 1 || s->window != 0)
			return so_error(&s->err, SO_EPROTO, "wait record %s",
			    s->window != 0 ? "after the window began" :
			    "repeated (one at most)");
		snprintf(msg, sizeof msg, "waiting for the host lock, held by "
		    "%s", r->holder);
		progress_set(s->hr->index, "%s", msg);
		return db_event(s->hr->db, p->run_id, s->hr->host->name,
		    "info", msg, &s->err);
	case REC_DONE:
		if ((uint64_t)r->samples != s->records)
			return so_error(&s->err, SO_EPROTO, "done counts %lld "
			    "samples, %llu were sent", (long long)r->samples,
			    (unsigned long long)s->records);
		if (s->nok > 0 && s->window != 2)
			return so_error(&s->err, SO_EPROTO, "done %s",
			    s->window == 0 ? "without window records" :
			    "before the window's end");
		s->saw_done = 1;
		return 0;
	case REC_ERROR:
		return so_error(&s->err, SO_EAGENT, "%s", r->message);
	}
	return 0;
}

/* One line of agent output; line_feed says which line a failure is on. */
static int
on_line(void *arg, char *line, size_t len)
{
	struct stream *s = arg;
	struct record r;
	int rc;

	if (len == 0)
		return 0;
	if ((rc = proto_parse(line, len, &r, &s->err)) != 0)
		return rc;
	rc = handle_record(s, &r);
	proto_record_free(&r);
	return rc;
}

static int
on_stdout(void *arg, const char *buf, size_t len)
{
	struct stream *s = arg;

	return line_feed(&s->lr, buf, len, on_line, s, &s->err);
}

/*
 * The agent runs detached on the host (nohup, records appended to a file
 * in the workdir), so a dropped connection loses nothing: the coordinator
 * reconnects and streams the file again from the last complete line it
 * stored.  These are the files of one agent run, in RUNDIR:
 *   records   the agent's JSON lines        pid   the agent's pid
 *   stderr    the agent's stderr            exit  its exit status, last
 */
#define RECONNECT_TRIES 5	/* attempts after one drop */
#define MAX_DROPS 10		/* drops in one measurement */
#define POLL_SECONDS "1"

/*
 * The agent is hashed in the command that starts it: a binary replaced
 * since its build was recorded (the warm path reads the build's meta
 * file, not the binary) is refused with status 3 and its hash on stderr.
 */
#define LAUNCH_BAD_SUM 3

static char *
launch_cmd(const char *qdir, const char *qagent, const char *sum,
    const char *agent_cmd)
{
	char *inner = xasprintf("%s --out %s/records 2>%s/stderr & "
	    "echo $! > %s/pid; wait $!; echo $? > %s/exit.tmp && "
	    "mv %s/exit.tmp %s/exit", agent_cmd, qdir, qdir, qdir, qdir, qdir,
	    qdir);
	char *qinner = sh_quote(inner), *qsum = sh_quote(sum);
	/* mkdir is the guard: a launch repeated after a drop starts nothing. */
	char *cmd = xasprintf("mkdir -p \"$(dirname %s)\" || exit 1; "
	    "mkdir %s 2>/dev/null || exit 0; "
	    "h=$( (sha256sum %s 2>/dev/null || shasum -a 256 %s) | "
	    "cut -d ' ' -f 1); [ \"$h\" = %s ] || { rm -rf %s; "
	    "echo \"$h\" >&2; exit %d; }; "
	    ": > %s/records && nohup sh -c %s </dev/null >/dev/null 2>&1 &",
	    qdir, qdir, qagent, qagent, qsum, qdir, LAUNCH_BAD_SUM, qdir,
	    qinner);

	free(qsum);
	free(qinner);
	free(inner);
	return cmd;
}

/*
 * Stream RUNDIR/records from byte offset, then exit with the agent's
 * status.  GNU tail follows the file by inotify (records arrive at once)
 * and wakes once a second only to see whether the agent's pid is gone:
 * the fewer wake-ups on the measured host the better, and a second at the
 * end of a run costs nothing.  Elsewhere a loop checks the size once a
 * second (the exit file is checked before the size, so every byte
 * written before the agent exited is sent).
 */
static char *
stream_cmd(const char *qdir, uint64_t offset)
{
	return xasprintf("cd %s || exit 125; off=%llu; "
	    "if tail --version 2>/dev/null | grep -q GNU; then "
	    "while [ ! -s pid ] && [ ! -f exit ]; do sleep 0.1; done; "
	    "[ -s pid ] && tail -s " POLL_SECONDS " -c +$((off + 1)) -f "
	    "--pid=\"$(cat pid)\" "
	    "records; while [ ! -f exit ]; do sleep 0.1; done; "
	    "else while :; do fin=0; [ -f exit ] && fin=1; "
	    "size=$(wc -c < records); if [ \"$size\" -gt \"$off\" ]; then "
	    "tail -c +$((off + 1)) records | head -c $((size - off)); "
	    "off=$size; fi; [ $fin = 1 ] && break; sleep " POLL_SECONDS "; "
	    "done; fi; cat stderr >&2; exit $(cat exit)", qdir,
	    (unsigned long long)offset);
}

/*
 * Commands that must run after an interrupt (stopping the agent, reading
 * what it finished) cannot use the run's stop flag, which is set by then:
 * they get this one, never set, and a time limit instead.
 */
static volatile sig_atomic_t never_stop;
#define AFTER_STOP_MS 30000

/*
 * Stop a detached agent: TERM, up to 10 s for its exit file, then KILL.
 * 0 once the agent is known to have exited (or never started); the host
 * may be gone, then err says why.
 */
static int
stop_agent(struct hostrun *hr, const char *qdir, struct so_err *err)
{
	struct exec_io io = { .timeout_ms = AFTER_STOP_MS,
	    .stop = &never_stop };
	char *cmd = xasprintf("cd %s 2>/dev/null || exit 0; i=0; "
	    "while [ ! -s pid ] && [ ! -f exit ] && [ $i -lt 50 ]; do "
	    "sleep 0.1; i=$((i + 1)); done; [ -f exit ] && exit 0; "
	    "kill $(cat pid) 2>/dev/null; i=0; "
	    "while [ ! -f exit ] && [ $i -lt 100 ]; do sleep 0.1; "
	    "i=$((i + 1)); done; [ -f exit ] && exit 0; "
	    "kill -9 $(cat pid) 2>/dev/null; i=0; "
	    "while [ ! -f exit ] && [ $i -lt 50 ]; do sleep 0.1; "
	    "i=$((i + 1)); done; [ -f exit ]", qdir);
	int status = 0, rc = 0;

	if (hr->conn == NULL && (rc = conn_open(hr->host, 0, &hr->conn,
	    err)) != 0)
		goto out;
	rc = conn_exec(hr->conn, cmd, &io, &status, err);
	if (rc == 0 && status != 0)
		rc = so_error(err, SO_EAGENT, "the agent did not exit, even "
		    "after SIGKILL");
out:
	free(cmd);
	return rc;
}

/*
 * Once every record of a launch is stored, its run directory goes: it is
 * never used again.  Not by the stream command itself, as a stream cut
 * off by a frozen connection may still run there and would pull the
 * directory from under the stream that replaced it.  Best effort.
 */
static void
remove_rundir(struct hostrun *hr, const char *qdir)
{
	struct exec_io io = { .timeout_ms = AFTER_STOP_MS,
	    .stop = &never_stop };
	char *cmd = xasprintf("rm -rf %s", qdir);
	struct so_err e;
	int status;

	if (hr->conn != NULL)
		conn_exec(hr->conn, cmd, &io, &status, &e);
	free(cmd);
}

/*
 * The agent has exited: read what it wrote past the last record taken in,
 * so that every sample it finished is stored.
 */
static int
collect_rest(struct hostrun *hr, struct stream *s, const char *qdir,
    struct so_err *err)
{
	char errbuf[256];
	struct exec_io io = { .on_stdout = on_stdout, .arg = s,
	    .errbuf = errbuf, .errlen = sizeof errbuf,
	    .timeout_ms = AFTER_STOP_MS, .stop = &never_stop };
	char *cmd = stream_cmd(qdir, s->lr.offset);
	int status, rc;

	s->lr.len = 0;
	rc = conn_exec(hr->conn, cmd, &io, &status, &s->err);
	if (rc == SO_EAGENT)
		so_error(err, rc, "agent output line %llu: agent reported: %s",
		    (unsigned long long)s->lr.lineno, s->err.msg);
	else if (rc != 0)
		so_error(err, rc, "%s", s->err.msg);
	free(cmd);
	return rc;
}

/*
 * The user interrupted the run: the agent is stopped before the lease is
 * released, what it finished is stored, and an event says how many
 * samples were kept or that some may be lost.  An open window is closed
 * at the coordinator's time, with the reason as its drift.
 */
static void
interrupted(struct hostrun *hr, struct stream *s, const char *qdir,
    const char *cc)
{
	struct so_err e = { 0 };
	char msg[SO_ERR_MAX + 256], at[32];
	uint64_t before = s->got;
	int rc;

	if ((rc = stop_agent(hr, qdir, &e)) == 0 &&
	    (rc = collect_rest(hr, s, qdir, &e)) == 0)
		s->collected = 1;
	if (rc == 0)
		snprintf(msg, sizeof msg, "interrupted: the agent (%s) was "
		    "stopped; all %llu samples it finished are stored (%llu "
		    "of them read after the interrupt)", cc,
		    (unsigned long long)s->got,
		    (unsigned long long)(s->got - before));
	else
		snprintf(msg, sizeof msg, "interrupted: the agent (%s) could "
		    "not be stopped and read: %.600s; %llu samples are "
		    "stored, any it finished after them are lost", cc, e.msg,
		    (unsigned long long)s->got);
	note(hr, "warning", msg);
	if (hr->window_id != 0) {
		iso_now(at, sizeof at);
		if (db_window_end(hr->db, hr->window_id, at, NULL,
		    "interrupted: the agent was stopped", &e) != 0)
			db_lost(hr, "the window's end", e.msg);
		hr->window_id = 0;
	}
	snprintf(hr->error, sizeof hr->error, "interrupted");
	hr->failed = 1;
}

/* Reconnect after a dropped connection; 0 or the last error. */
static int
reconnect(struct hostrun *hr, struct so_err *err)
{
	int i, rc = SO_ESSH;

	for (i = 0; i < RECONNECT_TRIES && !*hr->p->stop; i++) {
		conn_close(hr->conn);
		hr->conn = NULL;
		progress_set(hr->index, "connection lost, reconnecting "
		    "(%d/%d)", i + 1, RECONNECT_TRIES);
		sleep((unsigned)i + 1);
		if ((rc = conn_open(hr->host, 0, &hr->conn, err)) == 0) {
			hr->conn->stop = hr->p->stop;
			note(hr, "warning", "connection lost during "
			    "measurement; reconnected and resumed streaming");
			return 0;
		}
	}
	return rc;
}

/*
 * Options for the window protocol: the host lock in the workdir (with our
 * identity for whoever waits on it) and adaptive sampling.
 */
static char *
agent_extra_args(struct hostrun *hr)
{
	const struct run_params *p = hr->p;
	char *lock = xasprintf("%s/window.lock", hr->conn->workdir);
	char *qlock = sh_quote(lock), *qholder = sh_quote(p->holder);
	char *cv = xstrdup(""), *out;

	if (p->max_cv > 0) {
		free(cv);
		cv = xasprintf(" --max-cv %.17g --max-samples %llu%s",
		    p->max_cv, (unsigned long long)p->max_samples,
		    p->require_quiet ? " --require-quiet" : "");
	} else if (p->require_quiet) {
		free(cv);
		cv = xstrdup(" --require-quiet");
	}
	if (p->explore)
		out = xstrdup(cv);
	else
		out = xasprintf(" --lock %s --holder %s%s%s", qlock, qholder,
		    p->no_wait ? " --no-wait" : "", cv);
	free(cv);
	free(qholder);
	free(qlock);
	free(lock);
	return out;
}

/*
 * The variants this run measures: its --variants, or all of the study's;
 * with target (a build's -dumpmachine), only those built for its
 * architecture.  A NULL-terminated list of new strings.
 */
static const char **
run_variants(const struct run_params *p, const char *target)
{
	const struct variant_entry *ve;
	const char **list;
	char *copy = p->variants ? xstrdup(p->variants) : NULL, *q = copy, *v;
	size_t n = 0, i, alen = strcspn(target ? target : "", "-");

	for (i = 0; variant_table[i].study != NULL; i++)
		;
	list = xcalloc(i + (copy ? strlen(copy) : 0) + 2, sizeof *list);
	for (i = 0; ; i++) {
		if (copy != NULL && (v = strsep(&q, ",")) == NULL)
			break;
		if (copy == NULL) {
			if (variant_table[i].study == NULL)
				break;
			if (strcmp(variant_table[i].study, p->study) != 0)
				continue;
			v = (char *)variant_table[i].variant;
		}
		ve = study_variant(p->study, v);
		if (target != NULL && ve != NULL &&
		    strcmp(ve->arch, "any") != 0 &&
		    (strlen(ve->arch) != alen ||
		    strncmp(ve->arch, target, alen) != 0))
			continue;
		list[n++] = xstrdup(v);
	}
	free(copy);
	return list;
}

/*
 * The cells of this build still missing in the run being resumed: the
 * variants with a gap as a comma list, and the span of sample indices.
 */
static int
missing(struct hostrun *hr, struct build_result *b, char **variants,
    uint64_t *first, uint64_t *last, uint64_t *count)
{
	const struct run_params *p = hr->p;
	const char **want = run_variants(p, b->target);
	struct so_err err;
	size_t i;
	int rc;

	free(*variants);
	*variants = NULL;
	rc = db_missing_cells(hr->db, p->run_id, hr->host->name, b->build_id,
	    p->samples, want, variants, first, last, count, &err);
	if (rc != 0)
		host_fail(hr, err.msg);
	for (i = 0; want[i] != NULL; i++)
		free((char *)want[i]);
	free(want);
	return rc;
}

/*
 * Resuming: the run directories an earlier coordinator of this run left
 * (it was killed before it read them all) may hold samples never stored.
 * They are reported as lost, and their cells measured again; the
 * directories of agents that have ended are removed.  Best effort: a host that cannot
 * say is measured all the same.
 */
static void
left_behind(struct hostrun *hr, struct build_result *b, const char *cc)
{
	char *qruns = NULL, *cmd, *out = NULL, *runs;
	char msg[256];
	struct so_err e;
	unsigned long long n = 0;
	int status;

	runs = xasprintf("%s/runs", hr->conn->workdir);
	qruns = sh_quote(runs);
	cmd = xasprintf("cd %s 2>/dev/null || exit 0; n=0; "
	    "for d in %lld-%lld-*; do [ -f \"$d/exit\" ] || continue; "
	    "n=$((n + $(cat \"$d/records\" 2>/dev/null | "
	    "grep -c '\"type\":\"sample\"'))); rm -rf \"$d\"; done; "
	    "echo $n", qruns,
	    (long long)hr->p->run_id, (long long)b->build_id);
	if (conn_capture(hr->conn, cmd, 64, &out, &status, &e) == 0 &&
	    status == 0)
		n = strtoull(out, NULL, 10);
	if (n > 0) {
		snprintf(msg, sizeof msg, "agent (%s): an earlier coordinator "
		    "of this run stopped before reading all of its agent's "
		    "records (%llu samples finished there); those not stored "
		    "are lost, and their cells measured again", cc, n);
		note(hr, "warning", msg);
	}
	free(out);
	free(cmd);
	free(qruns);
	free(runs);
}

/*
 * Keep the agent's records file exactly as it wrote it (one SFTP read for
 * ssh hosts).  A failure is an event, not a failed host: the samples are
 * stored already.
 */
static void
keep_raw(struct hostrun *hr, struct build_result *b, const char *dir,
    const char *token)
{
	char *path = xasprintf("%s/records", dir), *data = NULL, *msg;
	struct so_err e = { 0 };
	size_t len;

	if (hr->conn == NULL || conn_read(hr->conn, path, ARTIFACT_MAX + 1,
	    &data, &len, &e) != 0 || artifact_keep(hr->db, b->build_id, "raw",
	    token, data, len, NULL, &e) != 0) {
		msg = xasprintf("raw agent output not kept: %s", e.msg);
		db_event(hr->db, hr->p->run_id, hr->host->name, "warning", msg,
		    &e);
		free(msg);
	}
	free(data);
	free(path);
}

/* Run the agent of one build and stream its records into the db. */
static void
measure(struct hostrun *hr, struct build_result *b, const char *cc)
{
	const struct run_params *p = hr->p;
	struct stream *s = xcalloc(1, sizeof *s);
	char errbuf[AGENT_ERR_MAX] = "", cpu[16];
	unsigned char rnd[16];
	char msg[SO_ERR_MAX + AGENT_ERR_MAX + 128];
	char *qa = sh_quote(b->agent), *qs = sh_quote(p->study), *qv = NULL;
	char *qseed = sh_quote(p->seed), *agent_cmd = NULL, *cmd, *dir = NULL;
	char *qdir = NULL, *extra = NULL, *env = NULL, *variants;
	struct exec_io io = { .on_stdout = on_stdout, .arg = s,
	    .errbuf = errbuf, .errlen = sizeof errbuf, .stop = p->stop };
	struct exec_io lio = { .errbuf = errbuf, .errlen = sizeof errbuf };
	struct so_err e;
	int status = 0, rc, drops = 0;
	size_t i;

	s->hr = hr;
	s->build = b;
	s->cc = cc;
	s->nsamples = p->samples;
	variants = p->variants ? xstrdup(p->variants) : NULL;
	if (p->resume) {
		uint64_t last, count;

		left_behind(hr, b, cc);
		if (missing(hr, b, &variants, &s->first, &last, &count) != 0)
			goto out;
		if (count == 0) {
			progress_set(hr->index, "%s: nothing missing", cc);
			goto out;
		}
		s->nsamples = last - s->first + 1;
	}
	s->span = p->max_samples > s->nsamples ? p->max_samples :
	    s->nsamples;
	snprintf(s->build_id, sizeof s->build_id, "%lld",
	    (long long)b->build_id);
	if (variants != NULL) {
		char *copy = xstrdup(variants), *q = copy, *v;
		size_t n = 0;

		s->want = xcalloc(strlen(variants) + 2, sizeof *s->want);
		while ((v = strsep(&q, ",")) != NULL)
			s->want[n++] = xstrdup(v);
		free(copy);
	} else
		s->want = (char **)run_variants(p, b->target);
	qv = variants ? sh_quote(variants) : NULL;
	if (p->openssl_cap != NULL) {
		const char *var = openssl_cap_var(b->target);
		char *qcap;

		if (var == NULL) {
			snprintf(msg, sizeof msg, "agent (%s): --openssl-cap "
			    "sets OPENSSL_ia32cap (x86-64) or OPENSSL_armcap "
			    "(aarch64); this build's target is \"%s\"", cc,
			    b->target);
			host_fail(hr, msg);
			goto out;
		}
		/* Read by libcrypto when it loads, so it goes before exec. */
		qcap = sh_quote(p->openssl_cap);
		env = xasprintf("%s=%s ", var, qcap);
		free(qcap);
	}
	if (hr->host->cpu >= 0)
		snprintf(cpu, sizeof cpu, "%d", hr->host->cpu);
	else if (hr->host->cpu == HOST_CPU_AUTO)
		snprintf(cpu, sizeof cpu, "auto");
	else
		snprintf(cpu, sizeof cpu, "none");
	/*
	 * Unique across coordinators, hosts, containers and reboots: the
	 * directory names the launch, and hello must echo the token.
	 */
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		host_fail(hr, "cannot read random bytes for a run token");
		goto out;
	}
	hex_encode(rnd, sizeof rnd, s->token);
	dir = xasprintf("%s/runs/%lld-%lld-%s", hr->conn->workdir,
	    (long long)p->run_id, (long long)b->build_id, s->token);
	qdir = sh_quote(dir);
	extra = agent_extra_args(hr);
	agent_cmd = xasprintf("%s%s --study %s --steps %llu --samples %llu "
	    "--first-sample %llu --cpu %s --seed %s --build-id %lld "
	    "--token %s%s%s%s", env ? env : "", qa, qs,
	    (unsigned long long)p->steps,
	    (unsigned long long)s->nsamples, (unsigned long long)s->first,
	    cpu, qseed, (long long)b->build_id, s->token,
	    qv ? " --variants " : "", qv ? qv : "", extra);
	progress_set(hr->index, "%s: self-test", cc);
	cmd = launch_cmd(qdir, qa, b->binary_sha256, agent_cmd);
	/* The connection may have idled out while the host waited for the
	 * window; the launch is safe to repeat. */
	while ((rc = conn_exec(hr->conn, cmd, &lio, &status, &s->err)) ==
	    SO_ESSH && ++drops <= MAX_DROPS &&
	    (rc = reconnect(hr, &s->err)) == 0)
		;
	free(cmd);
	errbuf[strcspn(errbuf, "\n")] = '\0';
	if (rc == 0 && status == LAUNCH_BAD_SUM)
		rc = so_error(&s->err, SO_EAGENT, "agent binary \"%s\" is "
		    "not the one built: its sha256 is \"%.64s\", the build "
		    "recorded %s; refusing to run it", b->agent, errbuf,
		    b->binary_sha256);
	else if (rc == 0 && status != 0)
		rc = so_error(&s->err, SO_EAGENT, "cannot start the agent in "
		    "\"%s\"", dir);
	errbuf[0] = '\0';
	while (rc == 0) {
		cmd = stream_cmd(qdir, s->lr.offset);
		/* A re-read starts at the last complete line. */
		s->lr.len = 0;
		rc = conn_exec(hr->conn, cmd, &io, &status, &s->err);
		free(cmd);
		if (rc == SO_ESSH && s->saw_done) {
			/* Every record is in; only the exit status was lost. */
			note(hr, "warning", "connection lost after the "
			    "agent's done record; its exit status is unknown");
			rc = 0;
			status = 0;
			break;
		}
		if (rc != SO_ESSH)
			break;
		/* A link that keeps dropping is given up, not chased forever. */
		if (++drops > MAX_DROPS) {
			rc = so_error(&s->err, SO_ESSH, "host \"%s\": connection "
			    "lost %d times during one measurement; giving up",
			    hr->host->name, drops);
			break;
		}
		if ((rc = reconnect(hr, &s->err)) != 0)
			break;
	}
	if (rc == 0 && s->saw_done)
		s->collected = 1;
	if (rc == SO_EINTR || (rc != 0 && *p->stop)) {
		interrupted(hr, s, qdir, cc);
	} else if (rc == SO_EAGENT) {
		/*
		 * The agent said why it stopped (--require-quiet, a failed
		 * variant...) and exited: its records before the error are in.
		 */
		stop_agent(hr, qdir, &e);
		snprintf(msg, sizeof msg, "agent (%s): %.900s", cc,
		    s->err.msg);
		host_fail(hr, msg);
	} else if (rc != 0) {
		/* What the agent finished past this point is not read. */
		if (stop_agent(hr, qdir, &e) == 0)
			snprintf(msg, sizeof msg, "agent (%s): %.900s (%llu "
			    "samples stored; the agent was stopped, and any "
			    "other sample it finished is lost)", cc,
			    s->err.msg, (unsigned long long)s->got);
		else
			snprintf(msg, sizeof msg, "agent (%s): %.900s (%llu "
			    "samples stored; the agent could not be stopped: "
			    "%.300s; it may go on measuring, and what it "
			    "finishes is lost)", cc, s->err.msg,
			    (unsigned long long)s->got, e.msg);
		host_fail(hr, msg);
	} else if (status != 0 || !s->saw_done) {
		errbuf[strcspn(errbuf, "\n")] = '\0';
		strip_ctrl(errbuf);
		snprintf(msg, sizeof msg, "agent (%s) %s %d%s%.900s", cc,
		    status > 128 ? "died of signal" : "exited with status",
		    status > 128 ? status - 128 : status,
		    errbuf[0] ? ": " : " before its done record", errbuf);
		host_fail(hr, msg);
	} else if (p->resume) {
		uint64_t first, last, count;
		char *left = NULL;

		if (missing(hr, b, &left, &first, &last, &count) == 0 &&
		    count > 0) {
			snprintf(msg, sizeof msg, "agent (%s): %llu cells still "
			    "missing after resuming", cc,
			    (unsigned long long)count);
			host_fail(hr, msg);
		}
		free(left);
	} else if (s->got < s->expected) {
		snprintf(msg, sizeof msg, "agent (%s) sent %llu of %llu "
		    "samples", cc, (unsigned long long)s->got,
		    (unsigned long long)s->expected);
		host_fail(hr, msg);
	}
	if (s->lr.offset > 0)
		keep_raw(hr, b, dir, s->token);
	if (s->collected)
		remove_rundir(hr, qdir);
out:
	for (i = 0; i < s->nok; i++) {
		free(s->cells[i]);
		free(s->ok_variants[i]);
	}
	free(s->cells);
	free(s->ok_variants);
	for (i = 0; i < s->nseen; i++)
		free(s->seen[i]);
	free(s->seen);
	for (i = 0; s->want != NULL && s->want[i] != NULL; i++)
		free(s->want[i]);
	free(s->want);
	free(s->window_before);
	free(s->preflight);
	free(extra);
	free(env);
	free(agent_cmd);
	free(qdir);
	free(dir);
	free(qseed);
	free(qv);
	free(variants);
	free(qs);
	free(qa);
	free(s);
}

#define MAX_TARGETINGS 8

/*
 * The targetings a study's agent is built at (kernels/<study>/targetings,
 * e.g. default and native), as static words into tg; one NULL (as
 * configured) for a study that states none.
 */
static size_t
targetings(const struct study_entry *e, const char *tg[MAX_TARGETINGS])
{
	static const char *const known[] = { "default", "native" };
	size_t n = 0, i;

	tg[0] = NULL;
	if (e->targetings == NULL)
		return 1;
	for (i = 0; i < sizeof known / sizeof known[0]; i++) {
		const char *p = strstr(e->targetings, known[i]);
		size_t len = strlen(known[i]);

		if (p != NULL && (p == e->targetings || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\0'))
			tg[n++] = known[i];
	}
	return n > 0 ? n : 1;
}

/* Connect, upload and build: everything that happens outside timing. */
static void
prepare(struct hostrun *hr)
{
	const struct host *h = hr->host;
	const struct study_entry *e = study_find(hr->p->study);
	const char *tg[MAX_TARGETINGS];
	struct so_err err = { 0 };
	char msg[SO_ERR_MAX + 64];
	size_t i, ntg;

	progress_set(hr->index, "connecting");
	if (conn_open(h, 0, &hr->conn, &err) != 0) {
		host_fail(hr, err.msg);
		return;
	}
	hr->conn->stop = hr->p->stop;
	progress_set(hr->index, "uploading");
	if (deploy_sources(hr->conn, NULL, &err) != 0 ||
	    deploy_artifacts(hr->conn, hr->p->study, hr->p->cache, NULL,
	    &err) != 0) {
		host_fail(hr, err.msg);
		return;
	}
	ntg = targetings(e, tg);
	hr->builds = xcalloc(h->ncc * ntg, sizeof *hr->builds);
	hr->labels = xcalloc(h->ncc * ntg, sizeof *hr->labels);
	for (i = 0; i < h->ncc * ntg && !*hr->p->stop; i++) {
		struct build_result *b = &hr->builds[i];
		const char *cc = h->cc[i / ntg], *t = tg[i % ntg];

		hr->labels[hr->nlabels++] = t ? xasprintf("%s, %s", cc, t) :
		    xstrdup(cc);
		progress_set(hr->index, "building with %s", hr->labels[i]);
		if (deploy_build_for(hr->conn, cc, e->prebuild ? e->name :
		    NULL, t, hr->db, hr->p->run_id, hr->p->resume, b, NULL,
		    &err) != 0) {
			host_fail(hr, err.msg);
			return;
		}
		hr->nbuilds++;
		if (!b->ok) {
			const char **vs = run_variants(hr->p, NULL);
			size_t j;

			snprintf(msg, sizeof msg, "build with \"%s\" failed: "
			    "%.900s", hr->labels[i], b->log_tail ?
			    b->log_tail : "");
			note(hr, "error", msg);
			for (j = 0; vs[j] != NULL; j++) {
				if (db_variant_status(hr->db, hr->p->run_id,
				    h->name, b->build_id, hr->p->study, vs[j],
				    "unavailable", "build failed", &err) != 0)
					db_lost(hr, "a variant's status",
					    err.msg);
				free((char *)vs[j]);
			}
			free(vs);
		}
	}
}

/* Phase one, at most --parallel hosts at once: everything before timing. */
static void
prepare_one(void *arg, size_t i)
{
	struct hostrun *hr = (struct hostrun *)arg + i;

	prepare(hr);
	if (!hr->failed)
		progress_set(hr->index, "ready, waiting for the window");
}

/*
 * Phase two, every host at once once the window is ours (or could not be
 * had: abort says why): measure each build, then record the outcome.
 */
static void
measure_one(void *arg, size_t k)
{
	struct hostrun *hr = (struct hostrun *)arg + k;
	const struct run_params *p = hr->p;
	struct so_err err;
	size_t i;
	int any = 0;

	if (hr->abort[0] != '\0' && !hr->failed)
		host_fail(hr, hr->abort);
	for (i = 0; i < hr->nbuilds && !hr->failed && !*p->stop; i++) {
		if (!hr->builds[i].ok)
			continue;
		any = 1;
		measure(hr, &hr->builds[i], hr->labels[i]);
	}
	if (!hr->failed && !any && !*p->stop)
		host_fail(hr, "no compiler produced a working agent");
	if (*p->stop && !hr->failed) {
		hr->failed = 1;
		snprintf(hr->error, sizeof hr->error, "interrupted");
	}
	if (db_run_host_finish(hr->db, p->run_id, hr->host->name,
	    !hr->failed ? "ok" : *p->stop ? "interrupted" : "failed",
	    hr->failed ? hr->error : NULL, &err) != 0)
		db_lost(hr, "the host's outcome", err.msg);
	if (!hr->failed)
		progress_set(hr->index, "done: %llu samples%s",
		    (unsigned long long)hr->samples,
		    hr->invalid ? ", some INVALID" : "");
	conn_close(hr->conn);
	hr->conn = NULL;
}

int
runner_run(struct db *db, struct host *const *hosts, size_t n,
    const struct run_params *p, struct run_outcome *out, struct so_err *err)
{
	struct hostrun *hr = xcalloc(n, sizeof *hr);
	const char **names = xcalloc(n, sizeof *names);
	struct lease *lease = NULL;
	struct so_err lerr = { 0 };
	size_t i, j;
	int rc = 0;

	memset(out, 0, sizeof *out);
	for (i = 0; i < n; i++)
		names[i] = hosts[i]->name;
	progress_start(names, n);
	for (i = 0; i < n; i++) {
		hr[i].host = hosts[i];
		hr[i].index = i;
		hr[i].p = p;
		hr[i].db = db;
		hr[i].abort = lerr.msg;
		if ((rc = db_run_host_begin(db, p->run_id, hosts[i]->name,
		    err)) != 0)
			goto out;
	}
	pool_run(n, p->parallel, prepare_one, hr);
	/* Everything outside timing is done; now take the window. */
	if (!p->explore && !*p->stop &&
	    lease_acquire(db, p->run_id, p->study, !p->no_wait,
	    p->lease_expiry, p->stop, &lease, &lerr) != 0)
		out->no_window = 1;
	else
		lerr.msg[0] = '\0';
	pool_run(n, (int)n, measure_one, hr);
	lease_release(lease);
	for (i = 0; i < n; i++) {
		if (!hr[i].failed)
			out->hosts_ok++;
		else
			out->hosts_failed++;
		out->samples += hr[i].samples;
		out->invalid += hr[i].invalid;
		for (j = 0; j < hr[i].nbuilds; j++)
			deploy_result_free(&hr[i].builds[j]);
		for (j = 0; j < hr[i].nlabels; j++)
			free(hr[i].labels[j]);
		free(hr[i].labels);
		free(hr[i].builds);
	}
	out->interrupted = *p->stop != 0;
	/* Live lines were cut to the terminal: say each failure whole. */
	for (i = 0; progress_live() && i < n; i++)
		if (hr[i].failed && strcmp(hr[i].error, "interrupted") != 0)
			fprintf(stderr, "seqorch: host \"%s\" failed: %s\n",
			    hosts[i]->name, hr[i].error);
out:
	progress_end();
	free(names);
	free(hr);
	return rc;
}

/*
 * The agent on its host: started detached, its records streamed back
 * across dropped connections, stopped on an interrupt, its run directory
 * removed once read.
 */
#include "runner-int.h"

#include "artifact.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define AGENT_ERR_MAX 4096

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
	struct exec_io io = { .on_stdout = run_on_stdout, .arg = s,
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
	run_note(hr, "warning", msg);
	if (hr->window_id != 0) {
		iso_now(at, sizeof at);
		if (db_window_end(hr->db, hr->window_id, at, NULL,
		    "interrupted: the agent was stopped", &e) != 0)
			run_db_lost(hr, "the window's end", e.msg);
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
			run_note(hr, "warning", "connection lost during "
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
		run_note(hr, "warning", msg);
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
void
run_measure(struct hostrun *hr, struct build_result *b, const char *cc)
{
	const struct run_params *p = hr->p;
	struct stream *s = xcalloc(1, sizeof *s);
	char errbuf[AGENT_ERR_MAX] = "", cpu[16];
	unsigned char rnd[16];
	char msg[SO_ERR_MAX + AGENT_ERR_MAX + 128];
	char *qa = sh_quote(b->agent), *qs = sh_quote(p->study), *qv = NULL;
	char *qseed = sh_quote(p->seed), *agent_cmd = NULL, *cmd, *dir = NULL;
	char *qdir = NULL, *extra = NULL, *env = NULL, *variants;
	struct exec_io io = { .on_stdout = run_on_stdout, .arg = s,
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
		if (run_missing(hr, b, &variants, &s->first, &last, &count) != 0)
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
		const char *var = run_openssl_cap_var(b->target);
		char *qcap;

		if (var == NULL) {
			snprintf(msg, sizeof msg, "agent (%s): --openssl-cap "
			    "sets OPENSSL_ia32cap (x86-64) or OPENSSL_armcap "
			    "(aarch64); this build's target is \"%s\"", cc,
			    b->target);
			run_fail(hr, msg);
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
		run_fail(hr, "cannot read random bytes for a run token");
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
			run_note(hr, "warning", "connection lost after the "
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
		run_fail(hr, msg);
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
		run_fail(hr, msg);
	} else if (status != 0 || !s->saw_done) {
		errbuf[strcspn(errbuf, "\n")] = '\0';
		strip_ctrl(errbuf);
		snprintf(msg, sizeof msg, "agent (%s) %s %d%s%.900s", cc,
		    status > 128 ? "died of signal" : "exited with status",
		    status > 128 ? status - 128 : status,
		    errbuf[0] ? ": " : " before its done record", errbuf);
		run_fail(hr, msg);
	} else if (p->resume) {
		uint64_t first, last, count;
		char *left = NULL;

		if (run_missing(hr, b, &left, &first, &last, &count) == 0 &&
		    count > 0) {
			snprintf(msg, sizeof msg, "agent (%s): %llu cells still "
			    "missing after resuming", cc,
			    (unsigned long long)count);
			run_fail(hr, msg);
		}
		free(left);
	} else if (s->got < s->expected) {
		snprintf(msg, sizeof msg, "agent (%s) sent %llu of %llu "
		    "samples", cc, (unsigned long long)s->got,
		    (unsigned long long)s->expected);
		run_fail(hr, msg);
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


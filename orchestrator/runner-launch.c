/*
 * The agent on its host: started detached, its records streamed back
 * across dropped connections, stopped on an interrupt, its run directory
 * removed once read.
 */
#include "runner-int.h"

#include "artifact.h"
#include "progress.h"
#include "remote-scripts.h"
#include "remote.h"
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define AGENT_ERR_MAX 4096

/*
 * The agent runs detached on the host (rscript_launch), so a dropped
 * connection loses nothing: the coordinator reconnects and streams its
 * records file again from the last complete line it stored.
 */
#define RECONNECT_TRIES 5	/* attempts after one drop */
#define MAX_DROPS 10		/* drops in one measurement */
#define POLL_SECONDS "1"

/* rscript_launch's status for an agent binary that is not the one built. */
#define LAUNCH_BAD_SUM 3
/*
 * rscript_stream's deadlines: an agent whose pid file is not there within
 * START_SECONDS did not start; one gone without its exit file that long
 * lost its wrapper.  Neither is the agent's own status.
 */
#define START_SECONDS "30"
#define STREAM_NO_START 124
#define STREAM_NO_EXIT 123

static char *
launch_cmd(const char *dir, const char *agent, const char *sum,
    const char *agent_cmd)
{
	struct strbuf inner = STRBUF_INIT, cmd = STRBUF_INIT;
	char bad[8];

	snprintf(bad, sizeof bad, "%d", LAUNCH_BAD_SUM);
	rcmd_script(&inner, rscript_agent_wrapper, (const char *const[]){
	    "agent_cmd", agent_cmd, "dir", dir, NULL });
	rcmd_script(&cmd, rscript_launch, (const char *const[]){
	    "dir", dir, "agent", agent, "sum", sum, "bad_sum", bad,
	    "wrapper", inner.buf, NULL });
	strbuf_release(&inner);
	return strbuf_detach(&cmd);
}

/* rscript_stream: the records of dir from byte offset on. */
static char *
stream_cmd(const char *dir, uint64_t offset)
{
	struct strbuf cmd = STRBUF_INIT;
	char off[24], no_start[8], no_exit[8];

	snprintf(off, sizeof off, "%llu", (unsigned long long)offset);
	snprintf(no_start, sizeof no_start, "%d", STREAM_NO_START);
	snprintf(no_exit, sizeof no_exit, "%d", STREAM_NO_EXIT);
	rcmd_script(&cmd, rscript_stream, (const char *const[]){ "dir", dir,
	    "offset", off, "poll", POLL_SECONDS, "start_s", START_SECONDS,
	    "no_start", no_start, "no_exit", no_exit, NULL });
	return strbuf_detach(&cmd);
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
stop_agent(struct hostrun *hr, const char *dir, struct so_err *err)
{
	struct exec_io io = { .timeout_ms = AFTER_STOP_MS,
	    .stop = &never_stop };
	struct strbuf cmd = STRBUF_INIT;
	int status = 0, rc = 0;

	rcmd_script(&cmd, rscript_stop, (const char *const[]){ "dir", dir,
	    NULL });
	if (hr->conn == NULL && (rc = conn_open(hr->host, 0, &hr->conn,
	    err)) != 0)
		goto out;
	rc = conn_exec(hr->conn, cmd.buf, &io, &status, err);
	if (rc == 0 && status != 0)
		rc = so_error(err, SO_EAGENT, "the agent did not exit, even "
		    "after SIGKILL");
out:
	strbuf_release(&cmd);
	return rc;
}

/*
 * Once every record of a launch is stored, its run directory goes: it is
 * never used again.  Not by the stream command itself, as a stream cut
 * off by a frozen connection may still run there and would pull the
 * directory from under the stream that replaced it.  Best effort.
 */
static void
remove_rundir(struct hostrun *hr, const char *dir)
{
	struct exec_io io = { .timeout_ms = AFTER_STOP_MS,
	    .stop = &never_stop };
	struct strbuf cmd = STRBUF_INIT;
	struct so_err e;
	int status;

	rcmd_raw(&cmd, "rm -rf");
	rcmd_arg(&cmd, dir);
	if (hr->conn != NULL)
		conn_exec(hr->conn, cmd.buf, &io, &status, &e);
	strbuf_release(&cmd);
}

/*
 * The agent has exited: read what it wrote past the last record taken in,
 * so that every sample it finished is stored.
 */
static int
collect_rest(struct hostrun *hr, struct stream *s, const char *dir,
    struct so_err *err)
{
	char errbuf[256];
	struct exec_io io = { .on_stdout = run_on_stdout, .arg = s,
	    .errbuf = errbuf, .errlen = sizeof errbuf,
	    .timeout_ms = AFTER_STOP_MS, .stop = &never_stop };
	char *cmd = stream_cmd(dir, s->lr.offset);
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
 * A window s's agent opened and never ended (it was interrupted or
 * stopped inside it) ends now, by the coordinator's clock, with why in
 * its drift so that `seqorch windows` does not take it for a cut one; a
 * replay's is the earlier launch's window it found.
 */
static void
end_window(struct hostrun *hr, struct stream *s, const char *why)
{
	int64_t *id = s->replay ? &s->replay_window : &hr->window_id;
	struct so_err e = { 0 };
	char at[32];

	if (*id == 0)
		return;
	iso_now(at, sizeof at);
	if (db_window_end(hr->db, *id, at, NULL, why, &e) != 0)
		run_db_lost(hr, "the window's end", e.msg);
	*id = 0;
}

/* Samples stored from this launch: a conductor's are its builds'. */
static uint64_t
stream_got(const struct stream *s)
{
	uint64_t n = s->got;
	size_t i;

	for (i = 0; i < s->nkids; i++)
		n += s->kids[i]->got;
	return n;
}

/*
 * Does rc, from reading an agent's records, mean the records are at
 * fault?  Those past the bad one cannot be read later either.  Any other
 * failure is this side's (the database, the link): the records stay in
 * the run directory, and a resume stores them.
 */
static int
records_fault(int rc)
{
	return rc == SO_EPROTO || rc == SO_EPARSE || rc == SO_EINVAL ||
	    rc == SO_EAGENT;
}

/* Where what the agent of dir finished stays, and what stores it. */
static void
kept_for_resume(const struct hostrun *hr, const char *dir, char *buf,
    size_t len)
{
	snprintf(buf, len, "stays in \"%.300s\": `seqorch run --resume %lld` "
	    "stores it", dir, (long long)hr->p->run_id);
}

/*
 * The user interrupted the run: the agent is stopped before the lease is
 * released, what it finished is stored, and an event says how many
 * samples were kept, or where the rest stays, or that some are lost.  An
 * open window is closed at the coordinator's time, with the reason as its
 * drift.
 */
static void
interrupted(struct hostrun *hr, struct stream *s, const char *dir,
    const char *cc)
{
	struct so_err e = { 0 };
	char msg[SO_ERR_MAX + 1024], kept[512];
	uint64_t before = stream_got(s);
	int rc, stopped;

	if ((stopped = (rc = stop_agent(hr, dir, &e)) == 0) &&
	    (rc = collect_rest(hr, s, dir, &e)) == 0)
		s->collected = 1;
	kept_for_resume(hr, dir, kept, sizeof kept);
	if (rc == 0)
		snprintf(msg, sizeof msg, "interrupted: the agent (%s) was "
		    "stopped; all %llu samples it finished are stored (%llu "
		    "of them read after the interrupt)", cc,
		    (unsigned long long)stream_got(s),
		    (unsigned long long)(stream_got(s) - before));
	else if (records_fault(rc))
		snprintf(msg, sizeof msg, "interrupted: the agent (%s) was "
		    "stopped, and its records cannot be read: %.600s; %llu "
		    "samples are stored, any it finished after them are lost",
		    cc, e.msg, (unsigned long long)stream_got(s));
	else if (stopped)
		snprintf(msg, sizeof msg, "interrupted: the agent (%s) was "
		    "stopped, and its records cannot be stored now: %.600s; "
		    "%llu samples are stored, any other it finished %s", cc,
		    e.msg, (unsigned long long)stream_got(s), kept);
	else
		snprintf(msg, sizeof msg, "interrupted: the agent (%s) could "
		    "not be stopped: %.600s; %llu samples are stored, what "
		    "it finishes %s", cc, e.msg,
		    (unsigned long long)stream_got(s), kept);
	run_note(hr, "warning", msg);
	end_window(hr, s, "interrupted: the agent was stopped");
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
 * identity for whoever waits on it) and adaptive sampling, for s's agent
 * asked for variants: a resumed one's spreads start from what the run
 * stored of them (a conductor's, of each of its builds), so that
 * --max-samples is the whole run's.
 */
static void
agent_extra_args(struct hostrun *hr, const struct stream *s,
    const char *variants, struct strbuf *cmd)
{
	const struct run_params *p = hr->p;
	size_t i;

	if (!p->explore) {
		rcmd_raw(cmd, " --lock");
		rcmd_argf(cmd, "%s/window.lock", hr->conn->workdir);
		rcmd_raw(cmd, " --holder");
		rcmd_arg(cmd, p->holder);
		if (p->no_wait)
			rcmd_raw(cmd, " --no-wait");
	}
	if (p->max_cv > 0)
		rcmd_raw(cmd, " --max-cv %.17g --max-samples %llu", p->max_cv,
		    (unsigned long long)p->max_samples);
	if (s->stored != NULL)
		run_stored_args(s->stored, NULL, variants, cmd);
	for (i = 0; i < s->nkids; i++)
		if (s->kids[i]->stored != NULL)
			run_stored_args(s->kids[i]->stored,
			    s->kids[i]->build_id, variants, cmd);
	if (s->extra_from)
		rcmd_raw(cmd, " --extra-from %llu:%lld",
		    (unsigned long long)s->extra_first,
		    (long long)s->extra_order);
	if (p->require_quiet)
		rcmd_raw(cmd, " --require-quiet");
	if (p->warmup > 0)
		rcmd_raw(cmd, " --warmup %llu", (unsigned long long)p->warmup);
}

/*
 * Keep the agent's records file exactly as it wrote it (one SFTP read for
 * ssh hosts): 0, or a negative code once a warning said that the file
 * stays on the host (its run directory is then not removed).  Not a
 * failed host: the samples are stored already.
 */
static int
keep_raw(struct hostrun *hr, struct build_result *b, const char *dir,
    const char *token)
{
	char *path = xasprintf("%s/records", dir), *data = NULL, *msg;
	struct so_err e = { 0 };
	size_t len;
	int rc;

	if (hr->conn == NULL)
		rc = so_error(&e, SO_ESSH, "host \"%s\": not connected",
		    hr->host->name);
	else if ((rc = conn_read(hr->conn, path, ARTIFACT_MAX + 1, &data,
	    &len, &e)) == 0)
		rc = artifact_keep(hr->db, b->build_id, "raw", token, data,
		    len, NULL, &e);
	if (rc != 0) {
		msg = xasprintf("raw agent output not kept: %s; it stays in "
		    "\"%s\" on the host", e.msg, path);
		run_note(hr, "warning", msg);
		free(msg);
	}
	free(data);
	free(path);
	return rc;
}

/*
 * The agent's command line for build b, or NULL when --openssl-cap has no
 * variable on the build's target (then the host has failed).  A
 * conductor's (s->kids) is build b's binary with --conduct and a --build
 * for each build it drives.
 */
static char *
agent_command(struct hostrun *hr, const struct stream *s,
    const struct build_result *b, const char *variants)
{
	const struct run_params *p = hr->p;
	struct strbuf cmd = STRBUF_INIT;
	char cpu[16], msg[SO_ERR_MAX];
	size_t i;

	if (p->openssl_cap != NULL) {
		const char *var = run_openssl_cap_var(b->target);

		if (var == NULL) {
			snprintf(msg, sizeof msg, "agent (%s): --openssl-cap "
			    "sets OPENSSL_ia32cap (x86-64) or OPENSSL_armcap "
			    "(aarch64); this build's target is \"%.200s\"",
			    s->cc, b->target);
			run_fail(hr, msg);
			return NULL;
		}
		/* Read by libcrypto when it loads, so it goes before exec. */
		rcmd_raw(&cmd, "%s=", var);
		strbuf_add_shquoted(&cmd, p->openssl_cap);
	}
	rcmd_arg(&cmd, b->agent);
	rcmd_raw(&cmd, " --study");
	rcmd_arg(&cmd, p->study);
	rcmd_raw(&cmd, " --steps %llu --samples %llu --first-sample %llu "
	    "--cpu %s --seed", (unsigned long long)p->steps,
	    (unsigned long long)s->nsamples, (unsigned long long)s->first,
	    rcmd_cpu(hr->host, cpu, sizeof cpu));
	rcmd_arg(&cmd, p->seed);
	if (p->msg_len > 0)
		rcmd_raw(&cmd, " --msg-len %llu",
		    (unsigned long long)p->msg_len);
	if (p->openssl_cap_clear != NULL) {
		rcmd_raw(&cmd, " --openssl-cap-clear");
		rcmd_arg(&cmd, p->openssl_cap_clear);
	}
	if (s->kids == NULL)
		rcmd_raw(&cmd, " --build-id %lld", (long long)b->build_id);
	else {
		/* Each build's self-test is checked before it joins the order. */
		rcmd_raw(&cmd, " --conduct --selftest-digest");
		rcmd_arg(&cmd, p->ref_selftest);
	}
	for (i = 0; i < s->nkids; i++) {
		const struct build_result *k = s->kids[i]->build;

		rcmd_raw(&cmd, " --build");
		rcmd_argf(&cmd, "%lld:%s:%s", (long long)k->build_id,
		    k->binary_sha256, k->agent);
	}
	rcmd_raw(&cmd, " --token %s", s->token);
	if (variants != NULL) {
		rcmd_raw(&cmd, " --variants");
		rcmd_arg(&cmd, variants);
	}
	agent_extra_args(hr, s, variants, &cmd);
	return strbuf_detach(&cmd);
}

/* The variants asked of an agent: variants (a comma list) or b's. */
static char **
wanted(const struct run_params *p, const struct build_result *b,
    const char *variants)
{
	char *copy, *q, *v, **want;
	size_t n = 0;

	if (variants == NULL)
		return (char **)run_variants(p, b->target);
	copy = q = xstrdup(variants);
	want = xcalloc(strlen(variants) + 2, sizeof *want);
	while ((v = strsep(&q, ",")) != NULL)
		want[n++] = xstrdup(v);
	free(copy);
	return want;
}

/* After a clean end: every cell asked of s's agent was stored. */
static void
check_complete(struct hostrun *hr, struct stream *s)
{
	char msg[SO_ERR_MAX + 128];

	if (hr->p->resume) {
		uint64_t first, last, count;
		char *left = NULL;

		if (run_missing(hr, s->build, &left, &first, &last,
		    &count) == 0 && count > 0) {
			snprintf(msg, sizeof msg, "agent (%s): %llu cells still "
			    "missing after resuming", s->cc,
			    (unsigned long long)count);
			run_fail(hr, msg);
		}
		free(left);
	} else if (s->got < s->expected) {
		snprintf(msg, sizeof msg, "agent (%s) sent %llu of %llu "
		    "samples", s->cc, (unsigned long long)s->got,
		    (unsigned long long)s->expected);
		run_fail(hr, msg);
	}
}

static void
stream_free(struct stream *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nkids; i++)
		stream_free(s->kids[i]);
	free(s->kids);
	for (i = 0; i < s->nok; i++) {
		free(s->cells[i]);
		free(s->forbidden[i]);
		free(s->ok_variants[i]);
	}
	free(s->cells);
	free(s->forbidden);
	free(s->ok_variants);
	for (i = 0; i < s->nseen; i++)
		free(s->seen[i]);
	free(s->seen);
	for (i = 0; s->want != NULL && s->want[i] != NULL; i++)
		free(s->want[i]);
	free(s->want);
	free(s->window_before);
	free(s->preflight);
	free(s->cap_detected);
	free(s->cap_cleared);
	free(s->cap_applied);
	free(s);
}

/*
 * Start build b's agent detached in dir, with its command agent_cmd.  The
 * connection may have idled out while the host waited for the window; the
 * launch is safe to repeat, so a drop reconnects (counted in *drops) and
 * launches again.  0, or a negative SO_E* code with s->err filled.
 */
static int
launch_agent(struct hostrun *hr, struct stream *s,
    const struct build_result *b, const char *dir, const char *agent_cmd,
    int *drops)
{
	char errbuf[AGENT_ERR_MAX] = "";
	struct exec_io lio = { .errbuf = errbuf, .errlen = sizeof errbuf };
	char *cmd = launch_cmd(dir, b->agent, b->binary_sha256, agent_cmd);
	int status = 0, rc;

	while ((rc = conn_exec(hr->conn, cmd, &lio, &status, &s->err)) ==
	    SO_ESSH && ++*drops <= MAX_DROPS &&
	    (rc = reconnect(hr, &s->err)) == 0)
		;
	free(cmd);
	errbuf[strcspn(errbuf, "\n")] = '\0';
	if (rc == 0 && status == LAUNCH_BAD_SUM)
		rc = so_error(&s->err, SO_EAGENT, "agent binary \"%s\" is "
		    "not the one built: its sha256 is \"%.64s\", the build "
		    "recorded %s; refusing to run it", b->agent, errbuf,
		    b->binary_sha256);
	else if (rc == 0 && status != 0) {
		strip_ctrl(errbuf);
		rc = so_error(&s->err, SO_EAGENT, "cannot start the agent in "
		    "\"%s\"%s%.900s", dir, errbuf[0] ? ": " : "", errbuf);
	}
	return rc;
}

/*
 * Stream the records of the agent running in dir into the database until
 * it ends, reconnecting after a drop (MAX_DROPS in all, with the
 * launch's *drops): *status gets its exit status, errbuf (errlen bytes)
 * its stderr.  0, or a negative SO_E* code with s->err filled.
 */
static int
stream_records(struct hostrun *hr, struct stream *s, const char *dir,
    int *drops, int *status, char *errbuf, size_t errlen)
{
	struct exec_io io = { .on_stdout = run_on_stdout, .arg = s,
	    .errbuf = errbuf, .errlen = errlen, .stop = hr->p->stop };
	char *cmd;
	int rc;

	for (;;) {
		cmd = stream_cmd(dir, s->lr.offset);
		/* A re-read starts at the last complete line. */
		s->lr.len = 0;
		rc = conn_exec(hr->conn, cmd, &io, status, &s->err);
		free(cmd);
		if (rc == SO_ESSH && s->saw_done) {
			/* Every record is in; only the exit status was lost. */
			run_note(hr, "warning", "connection lost after the "
			    "agent's done record; its exit status is unknown");
			*status = 0;
			return 0;
		}
		if (rc != SO_ESSH)
			return rc;
		/* A link that keeps dropping is given up, not chased forever. */
		if (++*drops > MAX_DROPS)
			return so_error(&s->err, SO_ESSH, "host \"%s\": "
			    "connection lost %d times during one measurement; "
			    "giving up", hr->host->name, *drops);
		if ((rc = reconnect(hr, &s->err)) != 0)
			return rc;
	}
}

/*
 * What the end of the agent in dir means (rc from launching and streaming
 * it, its exit status and stderr in errbuf): a failure of the host, said
 * as the agent's, or its records checked complete.  Then a window it left
 * open is ended, its raw output kept, and its run directory removed once
 * every record was read.
 */
static void
classify_end(struct hostrun *hr, struct stream *s, struct build_result *b,
    const char *dir, int rc, int status, char *errbuf)
{
	char msg[SO_ERR_MAX + AGENT_ERR_MAX + 128], kept[512];
	const char *cc = s->cc;
	struct so_err e;
	int ended = 0;
	size_t i;

	if (rc == 0 && s->saw_done)
		s->collected = 1;
	if (rc == SO_EINTR || (rc != 0 && *hr->p->stop)) {
		interrupted(hr, s, dir, cc);
	} else if (rc == SO_EAGENT) {
		/*
		 * The agent said why it stopped (--require-quiet, a failed
		 * variant...) and exited: its records before the error are in.
		 */
		stop_agent(hr, dir, &e);
		snprintf(msg, sizeof msg, "agent (%s): %.900s", cc,
		    s->err.msg);
		run_fail(hr, msg);
		ended = 1;
	} else if (records_fault(rc)) {
		if ((ended = stop_agent(hr, dir, &e) == 0))
			snprintf(msg, sizeof msg, "agent (%s): %.900s (%llu "
			    "samples stored; the agent was stopped, and any "
			    "other sample it finished is lost)", cc,
			    s->err.msg, (unsigned long long)stream_got(s));
		else
			snprintf(msg, sizeof msg, "agent (%s): %.900s (%llu "
			    "samples stored; the agent could not be stopped: "
			    "%.300s; it may go on measuring, and what it "
			    "finishes is lost)", cc, s->err.msg,
			    (unsigned long long)stream_got(s), e.msg);
		run_fail(hr, msg);
	} else if (rc != 0) {
		kept_for_resume(hr, dir, kept, sizeof kept);
		if ((ended = stop_agent(hr, dir, &e) == 0))
			snprintf(msg, sizeof msg, "agent (%s): %.900s (%llu "
			    "samples stored; the agent was stopped, and any "
			    "other sample it finished %s)", cc, s->err.msg,
			    (unsigned long long)stream_got(s), kept);
		else
			snprintf(msg, sizeof msg, "agent (%s): %.900s (%llu "
			    "samples stored; the agent could not be stopped: "
			    "%.300s; it may go on measuring, and what it "
			    "finishes %s)", cc, s->err.msg,
			    (unsigned long long)stream_got(s), e.msg, kept);
		run_fail(hr, msg);
	} else if (!s->saw_done && (status == STREAM_NO_START ||
	    status == STREAM_NO_EXIT)) {
		errbuf[strcspn(errbuf, "\n")] = '\0';
		strip_ctrl(errbuf);
		snprintf(msg, sizeof msg, "agent (%s) in \"%.300s\": %.900s", cc,
		    dir, errbuf);
		/* Nothing runs there to stop: it never started, or is gone. */
		run_fail(hr, msg);
		ended = 1;
	} else if (status != 0 && s->saw_done && s->nok == 0 &&
	    s->unready[0] != '\0') {
		/* Exit 1 after done: no variant passed (docs/protocol.md). */
		snprintf(msg, sizeof msg, "no variant asked for can run with "
		    "%s: %s", cc, s->unready);
		run_fail(hr, msg);
		ended = 1;
	} else if (status != 0 || !s->saw_done) {
		errbuf[strcspn(errbuf, "\n")] = '\0';
		strip_ctrl(errbuf);
		snprintf(msg, sizeof msg, "agent (%s) %s %d%s%.900s", cc,
		    status > 128 ? "died of signal" : "exited with status",
		    status > 128 ? status - 128 : status,
		    errbuf[0] ? ": " : s->saw_done ? " after its done record" :
		    " before its done record", errbuf);
		run_fail(hr, msg);
		ended = 1;
	} else if (s->kids == NULL) {
		check_complete(hr, s);
	} else {
		for (i = 0; i < s->nkids; i++)
			if (s->kids[i]->gone) {
				snprintf(msg, sizeof msg, "agent (%s): %.900s "
				    "(the other builds went on)",
				    s->kids[i]->cc, s->kids[i]->err.msg);
				run_fail(hr, msg);
			} else
				check_complete(hr, s->kids[i]);
	}
	/* An agent out of reach may still be measuring: its window stays. */
	if (ended && hr->window_id != 0) {
		snprintf(msg, sizeof msg, "the agent stopped inside the "
		    "window: %.900s", hr->error);
		end_window(hr, s, msg);
	}
	if ((s->lr.offset == 0 || keep_raw(hr, b, dir, s->token) == 0) &&
	    s->collected)
		remove_rundir(hr, dir);
}

/*
 * Launch the agent of s (build b's binary) in a new run directory named
 * after tag, stream its records in until it ends, and classify its end;
 * any failure fails the host.
 */
static void
launch_stream(struct hostrun *hr, struct stream *s, struct build_result *b,
    const char *tag, const char *variants)
{
	const struct run_params *p = hr->p;
	char errbuf[AGENT_ERR_MAX] = "";
	unsigned char rnd[16];
	char *agent_cmd = NULL, *dir = NULL;
	int status = 0, rc, drops = 0;
	size_t i;

	/*
	 * Unique across coordinators, hosts, containers and reboots: the
	 * directory names the launch, and hello must echo the token.
	 */
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
		run_fail(hr, "cannot read random bytes for a run token");
		goto out;
	}
	hex_encode(rnd, sizeof rnd, s->token);
	s->launched = window_clock();
	for (i = 0; i < s->nkids; i++) {
		memcpy(s->kids[i]->token, s->token, sizeof s->token);
		s->kids[i]->launched = s->launched;
	}
	dir = xasprintf("%s/runs/%s-%lld-%s-%s", hr->conn->workdir,
	    p->db_id, (long long)p->run_id, tag, s->token);
	if ((agent_cmd = agent_command(hr, s, b, variants)) == NULL)
		goto out;
	progress_set(hr->index, "%s: self-test", s->cc);
	if ((rc = launch_agent(hr, s, b, dir, agent_cmd, &drops)) == 0)
		rc = stream_records(hr, s, dir, &drops, &status, errbuf,
		    sizeof errbuf);
	classify_end(hr, s, b, dir, rc, status, errbuf);
out:
	free(agent_cmd);
	free(dir);
}

/* A stream for build b's agent, asked for nsamples from first. */
static struct stream *
stream_new(struct hostrun *hr, struct build_result *b, const char *cc,
    uint64_t first, uint64_t nsamples, const char *variants)
{
	const struct run_params *p = hr->p;
	struct stream *s = xcalloc(1, sizeof *s);

	s->hr = hr;
	s->build = b;
	s->cc = cc;
	s->first = first;
	s->nsamples = nsamples;
	s->span = p->max_samples > nsamples ? p->max_samples : nsamples;
	snprintf(s->build_id, sizeof s->build_id, "%lld",
	    (long long)b->build_id);
	s->want = wanted(p, b, variants);
	return s;
}

/*
 * A stream for the records an earlier launch of this run left in a run
 * directory: build b's agent, or with b NULL a conductor's of every
 * working build.  Any index of the run is taken; its hello says how many
 * it was asked for.
 */
static struct stream *
replay_new(struct hostrun *hr, struct build_result *b, const char *cc)
{
	const struct run_params *p = hr->p;
	struct stream *s;
	size_t i;

	if (b != NULL) {
		s = stream_new(hr, b, cc, 0, p->samples, NULL);
	} else {
		s = xcalloc(1, sizeof *s);
		s->hr = hr;
		s->cc = cc;
		for (i = 0; i < hr->nbuilds; i++) {
			if (!hr->builds[i].ok)
				continue;
			if (s->build == NULL)
				s->build = &hr->builds[i];
			s->kids = xrealloc(s->kids, (s->nkids + 1) *
			    sizeof *s->kids);
			s->kids[s->nkids++] = replay_new(hr, &hr->builds[i],
			    hr->labels[i]);
		}
	}
	s->replay = 1;
	s->span = p->samples + p->max_samples;
	/*
	 * A resumed --max-cv launch took its extra rounds past the indices
	 * stored then, which are stored now; a conductor's, past every
	 * build's.
	 */
	if (b != NULL && p->max_cv > 0) {
		struct so_err e;
		int64_t end;

		if (db_build_index_end(hr->db, p->run_id, hr->host->name,
		    b->build_id, &end, &e) == 0 && (uint64_t)end > p->samples)
			s->span = (uint64_t)end + p->max_samples;
	}
	for (i = 0; b == NULL && i < s->nkids; i++)
		if (s->kids[i]->span > s->span)
			s->span = s->kids[i]->span;
	for (i = 0; b == NULL && i < s->nkids; i++)
		s->kids[i]->span = s->span;
	return s;
}

/* Sample records seen in s's stream, its builds' for a conductor. */
static uint64_t
stream_seen(const struct stream *s)
{
	uint64_t n = s->kids == NULL ? s->records : 0;
	size_t i;

	for (i = 0; i < s->nkids; i++)
		n += s->kids[i]->records;
	return n;
}

/*
 * Store the records an earlier coordinator of this run left unread in
 * run directory name (under runs/): an agent still running there is
 * followed to its end (it holds the host lock, and the cells it measures
 * are not measured again).  Then the directory goes, once its agent has
 * ended; a warning says what was stored, or lost.  Records this
 * coordinator could not take in (its database failed, the host dropped)
 * are not the records' fault: the directory stays for the next resume,
 * and the host fails, so that no cell of it is timed again meanwhile.
 */
static void
collect_dir(struct hostrun *hr, struct build_result *b, const char *cc,
    const char *name, int running)
{
	struct stream *s = replay_new(hr, b, cc);
	char errbuf[AGENT_ERR_MAX] = "", msg[2 * SO_ERR_MAX + 512];
	char *dir = xasprintf("%s/runs/%s", hr->conn->workdir, name);
	struct so_err e = { 0 };
	int rc, status = 0, drops = 0, stopped = 1, bad;
	size_t i;

	snprintf(s->token, sizeof s->token, "%s", strrchr(name, '-') + 1);
	for (i = 0; i < s->nkids; i++)
		memcpy(s->kids[i]->token, s->token, sizeof s->token);
	if (running) {
		snprintf(msg, sizeof msg, "agent (%s): an agent of this run "
		    "that an earlier coordinator started is still running in "
		    "\"%.300s\": its records are stored as it writes them, and "
		    "its cells are not measured again", cc, dir);
		run_note(hr, "info", msg);
		progress_set(hr->index, "%s: reading an earlier agent of this "
		    "run", cc);
	}
	rc = stream_records(hr, s, dir, &drops, &status, errbuf,
	    sizeof errbuf);
	if (rc == SO_EINTR || (rc != 0 && *hr->p->stop)) {
		interrupted(hr, s, dir, cc);
		goto out;
	}
	/* Its own error record ended it: everything it wrote is read. */
	if (rc == 0 || rc == SO_EAGENT)
		s->collected = 1;
	else
		stopped = stop_agent(hr, dir, &e) == 0;
	bad = records_fault(rc);
	if (s->collected && stream_got(s) > 0)
		snprintf(msg, sizeof msg, "agent (%s): an earlier coordinator "
		    "of this run stopped before reading all of its agent's "
		    "records (%llu samples finished there); the %llu it had "
		    "not stored are stored now, with the agent's own numbers",
		    cc, (unsigned long long)stream_seen(s),
		    (unsigned long long)stream_got(s));
	else if (!s->collected && !bad)
		snprintf(msg, sizeof msg, "agent (%s): cannot store the "
		    "records an earlier coordinator of this run left in "
		    "\"%.300s\": %.600s%s%.300s; %llu of its samples are "
		    "stored now, the rest stay there and `seqorch run --resume "
		    "%lld` stores them", cc, dir, s->err.msg,
		    stopped ? "" : "; the agent could not be stopped: ",
		    stopped ? "" : e.msg, (unsigned long long)stream_got(s),
		    (long long)hr->p->run_id);
	else if (!s->collected)
		snprintf(msg, sizeof msg, "agent (%s): an earlier coordinator "
		    "of this run stopped before reading all of its agent's "
		    "records (%llu samples finished there, %llu stored now); "
		    "the rest cannot be read: %.900s%s%.300s; those are lost, "
		    "and their cells measured again", cc,
		    (unsigned long long)stream_seen(s),
		    (unsigned long long)stream_got(s), s->err.msg,
		    stopped ? "" : "; the agent could not be stopped: ",
		    stopped ? "" : e.msg);
	if (!s->collected && !bad) {
		run_fail(hr, msg);
		goto out;	/* the next resume keeps the raw output whole */
	}
	if (!s->collected || stream_got(s) > 0)
		run_note(hr, "warning", msg);
	/* One that cannot be stopped may still be writing there. */
	if ((s->lr.offset == 0 || s->build == NULL ||
	    keep_raw(hr, s->build, dir, s->token) == 0) && stopped)
		remove_rundir(hr, dir);
out:
	stream_free(s);
	free(dir);
}

/*
 * Resuming: collect the run directories an earlier coordinator of this
 * run left for build b (tag its id), or with b NULL a conductor's (tag
 * "c").  Only this database's run's directories are looked at: their
 * names start with its identity and the run id.  Best effort: a host
 * that cannot say is measured all the same.
 */
static void
collect_left(struct hostrun *hr, struct build_result *b, const char *tag,
    const char *cc)
{
	struct strbuf cmd = STRBUF_INIT;
	char *out = NULL, *runs, *prefix, *line, *next;
	struct so_err e;
	size_t plen;
	int status;

	runs = xasprintf("%s/runs", hr->conn->workdir);
	prefix = xasprintf("%s-%lld-%s", hr->p->db_id,
	    (long long)hr->p->run_id, tag);
	plen = strlen(prefix);
	rcmd_script(&cmd, rscript_left_behind, (const char *const[]){
	    "runs", runs, "prefix", prefix, NULL });
	if (conn_capture(hr->conn, cmd.buf, 1 << 16, &out, &status, &e) != 0 ||
	    status != 0)
		goto out;
	for (line = out; line != NULL && *line != '\0' && !hr->failed;
	    line = next) {
		char *sp = strchr(line, ' ');

		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		/* PREFIX-TOKEN, the token 32 hex digits: nothing else. */
		if (sp == NULL || (size_t)(sp - line) != plen + 33 ||
		    strncmp(line, prefix, plen) != 0 || line[plen] != '-' ||
		    strspn(line + plen + 1, "0123456789abcdef") != 32)
			continue;
		*sp = '\0';
		collect_dir(hr, b, cc, line, strcmp(sp + 1, "running") == 0);
	}
out:
	free(out);
	strbuf_release(&cmd);
	free(prefix);
	free(runs);
}

/*
 * Resuming a --max-cv run, build b: what the run stored of it, but the
 * cells its agent times again (the planned indices from first, when
 * count cells are missing), into sb, and with nothing missing, the
 * variants that still need extra rounds into *unsteady (NULL: none).
 * Its extra rounds go on after every stored index and place: *extra
 * says whether they must be told so, at index sb->next and place *order
 * of the agent's order.  0, or a negative code with the host failed.
 */
static int
resume_adaptive(struct hostrun *hr, struct build_result *b, uint64_t first,
    uint64_t count, struct stored_build *sb, char **unsteady, int *extra,
    int64_t *order)
{
	const struct run_params *p = hr->p;
	struct so_err e;
	int64_t end;
	int rc;

	*unsteady = NULL;
	*extra = 0;
	*order = 0;
	if ((rc = run_stored(hr, b, count > 0 ? first : p->samples,
	    p->samples - 1, sb)) != 0)
		return rc;
	if (count == 0 && (*unsteady = run_stored_unsteady(p, sb)) == NULL)
		return 0;
	/* After the planned rounds, which were all of the places before. */
	if (count > 0 && sb->next == p->samples)
		return 0;
	if ((rc = db_build_end_position(hr->db, p->run_id, hr->host->name,
	    b->build_id, &end, &e)) != 0) {
		run_fail(hr, e.msg);
		return rc;
	}
	*extra = 1;
	*order = end;
	return 0;
}

/* Run the agent of one build and stream its records into the db. */
void
run_measure(struct hostrun *hr, struct build_result *b, const char *cc)
{
	const struct run_params *p = hr->p;
	struct stored_build sb = { 0 };
	struct stream *s = NULL;
	char *left = NULL, *unsteady = NULL, tag[24];
	const char *variants = p->variants;
	uint64_t first = 0, nsamples = p->samples;
	int64_t order = 0;
	int extra = 0;

	snprintf(tag, sizeof tag, "%lld", (long long)b->build_id);
	if (p->resume) {
		uint64_t last, count;

		collect_left(hr, b, tag, cc);
		if (hr->failed || run_missing(hr, b, &left, &first, &last,
		    &count) != 0)
			goto out;
		if (p->max_cv > 0 && resume_adaptive(hr, b, first, count, &sb,
		    &unsteady, &extra, &order) != 0)
			goto out;
		if (count == 0 && unsteady == NULL) {
			progress_set(hr->index, "%s: nothing missing", cc);
			goto out;
		}
		/*
		 * Every variant from the first missing index to the last, as
		 * the run's cells were: the agent's order is a function of the
		 * variants and the index, and a resumed sample takes the place
		 * the uninterrupted run gave it (what is stored is timed again
		 * and not kept).  Adaptive, to the last planned index: extra
		 * rounds come after it, as they did.  Every planned cell
		 * stored, the variants still too spread out take extra rounds
		 * alone.
		 */
		if (count > 0)
			nsamples = (p->max_cv > 0 ? p->samples - 1 : last) -
			    first + 1;
		else {
			first = sb.next;
			nsamples = 0;
			variants = unsteady;
		}
	}
	s = stream_new(hr, b, cc, first, nsamples, variants);
	if (p->resume && p->max_cv > 0) {
		s->stored = &sb;
		s->extra_from = extra;
		s->extra_first = sb.next;
		s->extra_order = order;
		s->span = sb.next + p->max_samples - first;
	}
	launch_stream(hr, s, b, tag, variants);
out:
	stream_free(s);
	run_stored_free(&sb);
	free(unsteady);
	free(left);
}

/*
 * Resuming a --max-cv run with a conductor (s, its builds' streams
 * made): each build's spreads of what the run stored, but the planned
 * indices from first on, which the conductor times again, for its
 * --stored-spread (sb, one per build, run_stored_free's to free); its
 * extra rounds go on past every build's stored index and the host's
 * stored places.  *any becomes 1 when a cell is still too spread out.
 * 0, or a negative code with the host failed.
 */
static int
conduct_stored(struct hostrun *hr, struct stream *s, uint64_t first,
    struct stored_build *sb, int *any)
{
	const struct run_params *p = hr->p;
	struct so_err e;
	char *unsteady;
	int64_t end;
	size_t i;
	int rc;

	s->extra_from = 1;
	s->extra_first = p->samples;
	for (i = 0; i < s->nkids; i++) {
		const struct build_result *b = s->kids[i]->build;

		if ((rc = run_stored(hr, b, first, p->samples - 1, &sb[i])) !=
		    0)
			return rc;
		s->kids[i]->stored = &sb[i];
		if (sb[i].next > s->extra_first)
			s->extra_first = sb[i].next;
		if ((unsteady = run_stored_unsteady(p, &sb[i])) != NULL)
			*any = 1;
		free(unsteady);
		if ((rc = db_build_end_position(hr->db, p->run_id,
		    hr->host->name, b->build_id, &end, &e)) != 0) {
			run_fail(hr, e.msg);
			return rc;
		}
		if (end > s->extra_order)
			s->extra_order = end;
	}
	return 0;
}

void
run_conduct(struct hostrun *hr)
{
	const struct run_params *p = hr->p;
	struct stream *s = xcalloc(1, sizeof *s);
	struct build_result *base = NULL;
	struct stored_build *sb = NULL;
	struct strbuf label = STRBUF_INIT;
	const char *variants = p->variants;
	uint64_t first = 0, last = p->samples - 1;
	size_t i;
	int any = !p->resume, missing = 0;

	s->hr = hr;
	if (p->resume) {
		collect_left(hr, NULL, "c", "conductor");
		if (hr->failed)
			goto out;
		first = UINT64_MAX;
		last = 0;
	}
	/*
	 * Resuming, every build and variant is driven from the first missing
	 * index to the last, as the run's cells were: the order is a function
	 * of the cells and the index, and a resumed sample must take the place
	 * the uninterrupted run gave it.  What is stored already is timed
	 * again and not kept (the first timing of a cell is).
	 */
	for (i = 0; i < hr->nbuilds; i++) {
		struct build_result *b = &hr->builds[i];
		uint64_t f, l, count;
		char *left = NULL, tag[24];

		if (!b->ok)
			continue;
		if (p->resume) {
			snprintf(tag, sizeof tag, "%lld", (long long)b->build_id);
			collect_left(hr, b, tag, hr->labels[i]);
			if (hr->failed)
				goto out;
			if (run_missing(hr, b, &left, &f, &l, &count) != 0)
				goto out;
			free(left);
			if (count > 0) {
				first = f < first ? f : first;
				last = l > last ? l : last;
				any = missing = 1;
			}
		}
		if (base == NULL)
			base = b;
		s->kids = xrealloc(s->kids, (s->nkids + 1) * sizeof *s->kids);
		s->kids[s->nkids++] = stream_new(hr, b, hr->labels[i], 0, 0,
		    NULL);
		strbuf_addf(&label, "%s%s", label.len ? " + " : "",
		    hr->labels[i]);
	}
	/*
	 * Adaptive: to the last planned index, the extra rounds after it, on
	 * the whole run's spreads; every planned cell stored, the extra
	 * rounds alone, if a cell still needs them.
	 */
	if (p->resume && p->max_cv > 0) {
		sb = xcalloc(s->nkids + 1, sizeof *sb);
		if (conduct_stored(hr, s, missing ? first : p->samples, sb,
		    &any) != 0)
			goto out;
		if (missing)
			last = p->samples - 1;
		else
			first = s->extra_first;
	}
	if (!any || s->nkids == 0) {
		progress_set(hr->index, "nothing missing");
		goto out;
	}
	s->build = base;
	s->cc = label.buf;
	s->first = first;
	s->nsamples = p->resume && p->max_cv > 0 && !missing ? 0 :
	    last - first + 1;
	/* --max-cv: a cell takes at most --max-samples in all. */
	s->span = p->max_cv == 0 ? s->nsamples : p->resume ?
	    s->extra_first + p->max_samples - first : p->max_samples;
	for (i = 0; i < s->nkids; i++) {
		struct stream *k = s->kids[i];

		for (size_t j = 0; k->want[j] != NULL; j++)
			free(k->want[j]);
		free(k->want);
		k->want = wanted(p, k->build, variants);
		k->first = s->first;
		k->nsamples = s->nsamples;
		k->span = s->span;
	}
	launch_stream(hr, s, base, "c", variants);
out:
	for (i = 0; sb != NULL && i < s->nkids; i++)
		run_stored_free(&sb[i]);
	free(sb);
	stream_free(s);
	strbuf_release(&label);
}

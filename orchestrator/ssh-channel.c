/*
 * Channels of an SSH session, as OpenSSH's channels.c: a session channel
 * per command (exec under /bin/sh, its output, keepalives and timeouts),
 * and the direct-tcpip channel a jump host relays to the next hop.
 */
#include "ssh-int.h"
#include "remote.h"
#include "strbuf.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

int
ssh_tunnel_open(struct conn *c, const struct host *next, int *fd,
    struct relay **relay, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_CHANNEL *ch = NULL;
	int64_t deadline = ssh_now_ms() +
	    (int64_t)c->host->connect_timeout * 1000;
	char buf[256];
	int rc = 0, w = 0;

	do {
		ch = libssh2_channel_direct_tcpip_ex(s->session, next->address,
		    next->port, "127.0.0.1", 0);
		rc = ch != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, deadline, &w));
	if (ch == NULL && rc == LIBSSH2_ERROR_EAGAIN)
		return so_error(err, SO_ETIMEOUT, "jump host \"%s\" (%s): "
		    "cannot reach %s:%d: timed out after %d s", c->host->name,
		    s->peer, next->address, next->port,
		    c->host->connect_timeout);
	if (ch == NULL)
		return so_error(err, SO_ESSH, "jump host \"%s\" (%s): cannot "
		    "reach %s:%d: %s", c->host->name, s->peer, next->address,
		    next->port, ssh_lasterr(s, buf, sizeof buf));
	/* From here the relay thread alone drives this session. */
	if ((rc = relay_start(s->session, s->fd, ch, c->host->name, fd, relay,
	    err)) != 0)
		libssh2_channel_free(ch);
	return rc;
}

/*
 * Free a channel.  After a timeout or an abort the command may still run
 * (libssh2 1.10 cannot signal it) and the server answers our close only
 * when it exits: such a channel is parked and freed later, and the session
 * goes on.  A close that cannot even be sent means a dead session.
 */
static void
free_channel(struct ssh *s, LIBSSH2_CHANNEL *ch)
{
	int rc = libssh2_channel_free(ch);

	if (rc == 0)
		return;
	if (rc == LIBSSH2_ERROR_EAGAIN && s->nparked < MAX_PARKED &&
	    !(libssh2_session_block_directions(s->session) &
	    LIBSSH2_SESSION_BLOCK_OUTBOUND)) {
		s->parked[s->nparked++] = ch;
		return;
	}
	s->dead = 1;
}

/* Free the parked channels whose commands have ended meanwhile. */
static void
reap_parked(struct ssh *s)
{
	size_t i = 0;
	int rc;

	while (i < s->nparked && !s->dead) {
		rc = libssh2_channel_free(s->parked[i]);
		if (rc == LIBSSH2_ERROR_EAGAIN &&
		    !(libssh2_session_block_directions(s->session) &
		    LIBSSH2_SESSION_BLOCK_OUTBOUND)) {
			i++;
			continue;
		}
		if (rc != 0)
			s->dead = 1;
		s->parked[i] = s->parked[--s->nparked];
	}
}

int
ssh_check_alive(struct conn *c, struct so_err *err)
{
	struct ssh *s = c->impl;

	reap_parked(s);
	if (!s->dead)
		return 0;
	return so_error(err, SO_ESSH, "host \"%s\": connection to %s was lost; "
	    "reconnect", c->host->name, s->peer);
}

/* Keep the start of stderr, bounded by the caller's buffer. */
static void
keep_stderr(const struct exec_io *io, size_t *used, const char *buf,
    size_t len)
{
	size_t room;

	if (io->errbuf == NULL || io->errlen == 0 || *used >= io->errlen - 1)
		return;
	room = io->errlen - 1 - *used;
	if (len > room)
		len = room;
	memcpy(io->errbuf + *used, buf, len);
	*used += len;
	io->errbuf[*used] = '\0';
}

/*
 * The login shell prints this line just before it hands the command to
 * /bin/sh.  Whatever comes before it on stdout is the shell's startup
 * files speaking (a .zshenv or .bashrc that echoes): it is kept out of the
 * command's output, and its first line is kept for messages.
 */
#define BEGIN_MARK_WORD "@@seqorch:begin"
#define BEGIN_MARK BEGIN_MARK_WORD "\n"

struct preamble {
	size_t matched;		/* bytes of BEGIN_MARK seen at a line start */
	int line_start;		/* the next byte starts a line */
	int begun;		/* the mark was seen: the command's own bytes */
	char *banner;		/* its first line that is not empty */
	size_t len, max;
	int whole;		/* that line has ended */
};

/* One byte of the shell's own output, for its first line. */
static void
banner_add(struct preamble *p, char ch)
{
	if (p->whole)
		return;
	if (ch == '\n')
		p->whole = p->len > 0;
	else if (p->len + 1 < p->max)
		p->banner[p->len++] = ch;
	p->banner[p->len] = '\0';
}

/*
 * Read buf[0..n) up to and including the mark; returns how many bytes
 * that was, the rest being the command's output.
 */
static size_t
preamble_feed(struct preamble *p, const char *buf, size_t n)
{
	const size_t mlen = strlen(BEGIN_MARK);
	size_t i, j;

	for (i = 0; i < n && !p->begun; i++) {
		if (p->line_start && buf[i] == BEGIN_MARK[p->matched]) {
			if (++p->matched == mlen)
				p->begun = 1;
			continue;
		}
		/* Not the mark after all: what matched was the shell's. */
		for (j = 0; j < p->matched; j++)
			banner_add(p, BEGIN_MARK[j]);
		banner_add(p, buf[i]);
		p->matched = 0;
		p->line_start = buf[i] == '\n';
	}
	return i;
}

/* Exit status of a command killed by the named signal ("TERM"). */
static int
signal_status(const char *name)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
		{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
		{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
		{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
		{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
		{ "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "SYS", SIGSYS },
	};
	size_t i;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (strcmp(name, sigs[i].name) == 0)
			return 128 + sigs[i].sig;
	/* A signal we cannot name locally still must not look like success. */
	return 128 + 64;
}

/* The deadline for one protocol step: the command's, or the stall limit. */
static int64_t
step_deadline(struct ssh *s, int64_t cmd_deadline)
{
	int64_t stall = ssh_now_ms() + s->stall_ms;

	return cmd_deadline != 0 && cmd_deadline < stall ? cmd_deadline : stall;
}

/* Drive a channel request (EOF, close, ...) to its end or the deadline. */
static int
channel_call(struct ssh *s, LIBSSH2_CHANNEL *ch, int (*fn)(LIBSSH2_CHANNEL *),
    int64_t deadline)
{
	int rc, w = 0;

	do
		rc = fn(ch);
	while (ssh_again(s, rc, deadline, &w));
	return rc;
}

/*
 * A failed protocol step (rc) while doing "what".  A timeout is the
 * command's own limit when that is what passed (the session is still
 * fine), otherwise a stalled connection.
 */
static int
step_fail(struct conn *c, const struct exec_io *io, int64_t cmd_deadline,
    const char *cmd, int rc, const char *what, struct so_err *err)
{
	if (rc != LIBSSH2_ERROR_EAGAIN)
		return ssh_fail(c, rc, what, err);
	if (cmd_deadline != 0 && ssh_now_ms() >= cmd_deadline)
		return so_error(err, SO_ETIMEOUT, "host \"%s\": command timed "
		    "out after %d ms: %.80s", c->host->name, io->timeout_ms,
		    cmd);
	return ssh_fail(c, LIBSSH2_ERROR_EAGAIN, "running a command", err);
}

int
ssh_exec(struct conn *c, const char *cmd, const struct exec_io *io,
    int *status, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_CHANNEL *ch = NULL;
	int64_t deadline = io->timeout_ms > 0 ?
	    ssh_now_ms() + io->timeout_ms : 0;
	int64_t step;
	struct strbuf line = STRBUF_INIT, prog = STRBUF_INIT;
	char buf[32768], *sig = NULL;
	struct preamble pre = { .line_start = 1, .banner = s->banner,
	    .max = sizeof s->banner };
	size_t errused = 0, skip;
	ssize_t n, m;
	int rc, w = 0, next;

	*status = -1;
	if (io->errbuf != NULL && io->errlen > 0)
		io->errbuf[0] = '\0';
	if ((rc = ssh_check_alive(c, err)) != 0)
		return rc;
	/* Silence counts from now: nothing was asked of the host before. */
	if (s->last_rx < ssh_now_ms())
		s->last_rx = ssh_now_ms();
	/*
	 * The contract is /bin/sh, whatever the user's login shell is, in the
	 * C locale (rcmd_sh); the mark before it ends what that shell's
	 * startup files print.
	 */
	s->banner[0] = '\0';
	strbuf_addstr(&line, "echo " BEGIN_MARK_WORD "; exec /bin/sh -c ");
	rcmd_sh(&prog, cmd);
	strbuf_add_shquoted(&line, prog.buf);
	step = step_deadline(s, deadline);
	do {
		ch = libssh2_channel_open_session(s->session);
		rc = ch != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, step, &w));
	if (ch == NULL) {
		rc = step_fail(c, io, deadline, cmd, rc, "opening a channel",
		    err);
		goto out;
	}
	step = step_deadline(s, deadline);
	do
		rc = libssh2_channel_exec(ch, line.buf);
	while (ssh_again(s, rc, step, &w));
	/* The command gets an empty stdin, as with ssh -n. */
	if (rc == 0)
		rc = channel_call(s, ch, libssh2_channel_send_eof, step);
	if (rc != 0) {
		rc = step_fail(c, io, deadline, cmd, rc, "starting a command",
		    err);
		goto out;
	}
	for (;;) {
		n = libssh2_channel_read(ch, buf, sizeof buf);
		skip = n > 0 ? preamble_feed(&pre, buf, (size_t)n) : 0;
		if (n > (ssize_t)skip && io->on_stdout != NULL) {
			if ((rc = io->on_stdout(io->arg, buf + skip,
			    (size_t)n - skip)) != 0)
				goto out;
			/*
			 * No keepalive was read while it stored (results.db
			 * locked, --db-wait): silence counts from now.
			 */
			if (s->last_rx < ssh_now_ms())
				s->last_rx = ssh_now_ms();
		}
		m = libssh2_channel_read_stderr(ch, buf, sizeof buf);
		if (m > 0)
			keep_stderr(io, &errused, buf, (size_t)m);
		if ((n < 0 && n != LIBSSH2_ERROR_EAGAIN) ||
		    (m < 0 && m != LIBSSH2_ERROR_EAGAIN)) {
			rc = ssh_fail(c, (int)(n < 0 && n !=
			    LIBSSH2_ERROR_EAGAIN ? n : m), "running a command",
			    err);
			goto out;
		}
		if (libssh2_channel_eof(ch))
			break;
		if (n > 0 || m > 0)
			continue;
		if (io->stop != NULL && *io->stop) {
			rc = so_error(err, SO_EINTR, "host \"%s\": command "
			    "interrupted: %.80s", c->host->name, cmd);
			goto out;
		}
		if ((rc = libssh2_keepalive_send(s->session, &next)) != 0) {
			rc = ssh_fail(c, rc, "running a command", err);
			goto out;
		}
		if (ssh_now_ms() - s->last_rx > (int64_t)SILENT_KEEPALIVES *
		    s->keepalive_s * 1000) {
			s->dead = 1;
			rc = so_error(err, SO_ESSH, "host \"%s\": connection "
			    "to %s lost (running a command): no answer to "
			    "keepalives for %d s", c->host->name, s->peer,
			    SILENT_KEEPALIVES * s->keepalive_s);
			goto out;
		}
		if (ssh_wait(s, deadline, SLICE_MS) != 0) {
			rc = step_fail(c, io, deadline, cmd,
			    LIBSSH2_ERROR_EAGAIN, "running a command", err);
			goto out;
		}
	}
	step = step_deadline(s, deadline);
	if ((rc = channel_call(s, ch, libssh2_channel_close, step)) == 0)
		rc = channel_call(s, ch, libssh2_channel_wait_closed, step);
	if (rc != 0) {
		rc = step_fail(c, io, deadline, cmd, rc, "finishing a command",
		    err);
		goto out;
	}
	libssh2_channel_get_exit_signal(ch, &sig, NULL, NULL, NULL, NULL,
	    NULL);
	*status = sig != NULL ? signal_status(sig) :
	    libssh2_channel_get_exit_status(ch);
	strip_ctrl(s->banner);
	/* No mark: the login shell ended before it got to the command. */
	if (!pre.begun)
		rc = so_error(err, SO_EIO, "host \"%s\": the command did not "
		    "start: the login shell exited with status %d before "
		    "running it%s%s%s", c->host->name, *status,
		    s->banner[0] ? " (it printed \"" : "", s->banner,
		    s->banner[0] ? "\")" : "");
out:
	if (sig != NULL)
		libssh2_free(s->session, sig);
	if (ch != NULL)
		free_channel(s, ch);
	strbuf_release(&prog);
	strbuf_release(&line);
	return rc;
}


/*
 * The SSH transport (transport = "ssh"): one libssh2 session per
 * connection, in non-blocking mode over a non-blocking TCP socket, driven
 * by poll() against deadlines, so that a host that is down, refuses or
 * stalls costs at most its connect_timeout and never hangs a thread.
 *
 * Each connection owns its socket, session and SFTP handle and nothing
 * else is shared between connections except the once-only libssh2_init(),
 * so one thread per host can drive its own connection.
 */
#include "ssh-int.h"
#include "ssh.h"
#include "strbuf.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void ssh_close(struct conn *);

/* Commands over session channels, files over SFTP (see ssh-int.h). */
static const struct conn_ops ssh_ops = {
	.exec = ssh_exec, .close = ssh_close,
	.put = ssh_put, .read = ssh_read, .stat = ssh_stat,
	.workdir = ssh_workdir,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

/* libssh2_init() is not thread-safe and must precede every session. */
static void
init_libssh2(void)
{
	init_rc = libssh2_init(0);
}

int64_t
ssh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *
ssh_errtext(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(e));
	buf[0] = tolower((unsigned char)buf[0]);
	return buf;
}

const char *
ssh_lasterr(struct ssh *s, char *buf, size_t len)
{
	char *msg = NULL;

	libssh2_session_last_error(s->session, &msg, NULL, 0);
	snprintf(buf, len, "%s", msg != NULL && *msg ? msg : "unknown error");
	buf[0] = tolower((unsigned char)buf[0]);
	return buf;
}

int
ssh_session_lost(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_NONE:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_TIMEOUT:
	case LIBSSH2_ERROR_DECRYPT:
	case LIBSSH2_ERROR_INVALID_MAC:
	case LIBSSH2_ERROR_PROTO:
	case LIBSSH2_ERROR_KEX_FAILURE:
	case LIBSSH2_ERROR_EAGAIN:
		return 1;
	}
	return 0;
}

int
ssh_wait(struct ssh *s, int64_t deadline, int slice_ms)
{
	struct pollfd pfd = { .fd = s->fd };
	int dir = libssh2_session_block_directions(s->session);
	int64_t left;
	int ms = slice_ms;

	if (deadline != 0) {
		if ((left = deadline - ssh_now_ms()) <= 0)
			return SO_ETIMEOUT;
		if (left < ms)
			ms = (int)left;
	}
	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		pfd.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		pfd.events |= POLLOUT;
	if (pfd.events == 0)
		pfd.events = POLLIN;
	if (poll(&pfd, 1, ms) == -1 && errno != EINTR)
		return SO_EIO;
	return 0;
}

int
ssh_again(struct ssh *s, int rc, int64_t deadline, int *werr)
{
	if (rc != LIBSSH2_ERROR_EAGAIN)
		return 0;
	*werr = ssh_wait(s, deadline, SLICE_MS);
	return *werr == 0;
}

int
ssh_fail(struct conn *c, int rc, const char *what, struct so_err *err)
{
	struct ssh *s = c->impl;
	char buf[256];

	if (ssh_session_lost(rc))
		s->dead = 1;
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return so_error(err, SO_ESSH, "host \"%s\": connection to %s "
		    "lost (%s): no response for %d s", c->host->name, s->peer,
		    what, s->stall_ms / 1000);
	/* libssh2 says "transport read" for a connection the host closed. */
	if (rc == LIBSSH2_ERROR_SOCKET_RECV ||
	    rc == LIBSSH2_ERROR_SOCKET_DISCONNECT)
		return so_error(err, SO_ESSH, "host \"%s\": connection to %s "
		    "lost (%s): closed by the host or the network",
		    c->host->name, s->peer, what);
	if (s->dead)
		return so_error(err, SO_ESSH, "host \"%s\": connection to %s "
		    "lost (%s): %s", c->host->name, s->peer, what,
		    ssh_lasterr(s, buf, sizeof buf));
	return so_error(err, SO_ESSH, "host \"%s\": %s: %s", c->host->name,
	    what, ssh_lasterr(s, buf, sizeof buf));
}

/* Wait for a non-blocking connect(); 0 or the errno it failed with. */
static int
wait_connected(int fd, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int64_t left;
	int e = 0, n;

	for (;;) {
		if ((left = deadline - ssh_now_ms()) <= 0)
			return ETIMEDOUT;
		n = poll(&pfd, 1, (int)left);
		if (n > 0)
			break;
		if (n == -1 && errno != EINTR)
			return errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
		return errno;
	return e;
}

/*
 * Socket options for long sessions: a peer that stops acknowledging data
 * breaks the connection instead of leaving us waiting, and a write to a
 * closed socket is an error rather than SIGPIPE.
 */
static void
tune_socket(int fd)
{
	int one = 1;
#ifdef TCP_USER_TIMEOUT
	unsigned int ms = TCP_TIMEOUT_MS;

	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
#endif
#ifdef SO_NOSIGPIPE
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Connect to every address of the host in turn until the deadline. */
static int
tcp_connect(struct conn *c, int64_t deadline, struct so_err *err)
{
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	struct addrinfo hints, *res = NULL, *ai;
	char port[16], buf[128];
	int fd = -1, e = 0, gai;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof port, "%d", h->port);
	if ((gai = getaddrinfo(h->address, port, &hints, &res)) != 0)
		return so_error(err, SO_ESSH, "host \"%s\": cannot resolve "
		    "\"%s\": %s", h->name, h->address, gai_strerror(gai));
	for (ai = res; ai != NULL && e != ETIMEDOUT; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype,
		    ai->ai_protocol)) == -1) {
			e = errno;
			continue;
		}
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ||
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1)
			e = errno;
		else if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			e = 0;
		else if (errno == EINPROGRESS)
			e = wait_connected(fd, deadline);
		else
			e = errno;
		if (e == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1 && e == ETIMEDOUT)
		return so_error(err, SO_ETIMEOUT, "host \"%s\": connect to "
		    "%s: timed out after %d s", h->name, s->peer,
		    h->connect_timeout);
	if (fd == -1)
		return so_error(err, SO_ESSH, "host \"%s\": connect to %s: %s",
		    h->name, s->peer, ssh_errtext(e, buf, sizeof buf));
	tune_socket(fd);
	s->fd = fd;
	return 0;
}

/*
 * recv() for libssh2 that notes when the host last sent anything.  A
 * keepalive reply counts, so a host that stays silent much longer than the
 * keepalive interval is gone even when TCP cannot tell (a frozen sshd, a
 * paused VM whose kernel still acknowledges).
 */
static ssize_t
ssh_recv(libssh2_socket_t fd, void *buf, size_t len, int flags,
    void **abstract)
{
	struct ssh *s = *abstract;
	ssize_t n = recv(fd, buf, len, flags);
#ifdef TCP_QUICKACK
	int one = 1;
#endif

	if (n > 0) {
		s->last_rx = ssh_now_ms();
#ifdef TCP_QUICKACK
		/*
		 * sshd leaves Nagle on for non-interactive sessions, so its
		 * second small packet waits for our ACK; Linux delays that
		 * ACK by up to 40 ms unless asked again after each read.  A
		 * relay's socketpair has no ACKs.
		 */
		if (!s->tunneled)
			setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one,
			    sizeof one);
#endif
	}
	if (n >= 0)
		return n;
	return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

/* Session setup up to a verified host key. */
static int
handshake(struct conn *c, int flags, int64_t deadline, struct so_err *err)
{
	struct ssh *s = c->impl;
	struct known *kh = NULL;
	int rc, w = 0;

	if ((s->session = libssh2_session_init_ex(NULL, NULL, NULL, s)) ==
	    NULL)
		return so_error(err, SO_ENOMEM, "host \"%s\": cannot create an "
		    "ssh session", c->host->name);
#if LIBSSH2_VERSION_NUM >= 0x010b01
	libssh2_session_callback_set2(s->session, LIBSSH2_CALLBACK_RECV,
	    (libssh2_cb_generic *)ssh_recv);
#else
	libssh2_session_callback_set(s->session, LIBSSH2_CALLBACK_RECV,
	    (void *)ssh_recv);
#endif
	libssh2_session_set_blocking(s->session, 0);
	if ((rc = ssh_load_known(c, &kh, err)) != 0)
		return rc;
	do
		rc = libssh2_session_handshake(s->session, s->fd);
	while (ssh_again(s, rc, deadline, &w));
	if (rc == LIBSSH2_ERROR_EAGAIN)
		rc = so_error(err, SO_ETIMEOUT, "host \"%s\": ssh handshake "
		    "with %s: timed out after %d s", c->host->name, s->peer,
		    c->host->connect_timeout);
	else if (rc != 0)
		rc = ssh_fail(c, rc, "ssh handshake", err);
	else
		rc = ssh_check_hostkey(c, kh, flags, err);
	ssh_known_free(kh);
	return rc;
}

/*
 * One SSH session to h: over fd, a relay's socketpair end, or when fd is
 * -1 over a new TCP connection; then the strict host key check and
 * authentication.  The session owns fd from here on, also on failure.
 * via names the jump host in front (NULL for none), for messages;
 * trust_name is the host that `hosts trust` would be run for.
 */
static int
session_open(const struct host *h, int flags, int fd, const char *via,
    const char *trust_name, struct conn **out, struct so_err *err)
{
	int64_t deadline = ssh_now_ms() + (int64_t)h->connect_timeout * 1000;
	struct strbuf peer = STRBUF_INIT;
	struct conn *c;
	struct ssh *s;
	int rc;

	*out = NULL;
	c = xcalloc(1, sizeof *c);
	s = xcalloc(1, sizeof *s);
	c->ops = &ssh_ops;
	c->host = h;
	c->impl = s;
	s->fd = fd;
	s->tunneled = fd != -1;
	s->trust_name = trust_name;
	s->stall_ms = h->connect_timeout * 1000 > STALL_MIN_MS ?
	    h->connect_timeout * 1000 : STALL_MIN_MS;
	strbuf_addf(&peer, strchr(h->address, ':') != NULL ? "[%s]:%d" :
	    "%s:%d", h->address, h->port);
	if (via != NULL)
		strbuf_addf(&peer, " via jump host \"%s\"", via);
	s->peer = strbuf_detach(&peer);
	if ((fd == -1 && (rc = tcp_connect(c, deadline, err)) != 0) ||
	    (rc = handshake(c, flags, deadline, err)) != 0 ||
	    (rc = ssh_authenticate(c, deadline, err)) != 0)
		goto fail;
	s->keepalive_s = h->connect_timeout < KEEPALIVE_MIN_S ?
	    KEEPALIVE_MIN_S : h->connect_timeout > KEEPALIVE_MAX_S ?
	    KEEPALIVE_MAX_S : h->connect_timeout;
	libssh2_keepalive_config(s->session, 1, (unsigned)s->keepalive_s);
	*out = c;
	return 0;
fail:
	s->dead = 1;
	ssh_close(c);
	return rc;
}

/*
 * Close jump hosts, the last one first: each one's relay must stop before
 * its session is closed, and its session must close while the hops in
 * front of it still carry its goodbye.
 */
static void
hops_close(struct hop *hops, size_t n)
{
	while (n > 0) {
		n--;
		relay_stop(hops[n].relay);
		if (hops[n].conn != NULL)
			ssh_close(hops[n].conn);
	}
	free(hops);
}

/*
 * A jump host's failure, said for the target: "host T: jump host J: ...".
 * Its own message already names it as a host; that prefix is dropped.
 */
static int
hop_error(const struct host *h, const struct host *j, const struct so_err *e,
    struct so_err *err)
{
	char *prefix = xasprintf("host \"%s\": ", j->name);
	const char *msg = e->msg;
	int rc;

	if (strncmp(msg, prefix, strlen(prefix)) == 0)
		msg += strlen(prefix);
	rc = so_error(err, e->code, "host \"%s\": jump host \"%s\": %s",
	    h->name, j->name, msg);
	free(prefix);
	return rc;
}

/*
 * ProxyJump: a session to each jump host in turn, each over a channel of
 * the one before, and the target's session over the last one's channel.
 * Every hop's key is checked against its own known_hosts.
 */
static int
chain_open(const struct host *h, int flags, struct conn **out,
    struct so_err *err)
{
	struct hop *hops = xcalloc(h->njumps, sizeof *hops);
	struct so_err e = { 0 };
	const struct host *next;
	size_t i, n = 0;
	int fd = -1, rc;

	for (i = 0; i < h->njumps; i++) {
		next = i + 1 < h->njumps ? &h->jumps[i + 1] : h;
		rc = session_open(&h->jumps[i], flags, fd, i > 0 ?
		    h->jumps[i - 1].name : NULL, h->name, &hops[i].conn, &e);
		fd = -1;
		if (rc != 0) {
			rc = hop_error(h, &h->jumps[i], &e, err);
			goto fail;
		}
		n++;
		if ((rc = ssh_tunnel_open(hops[i].conn, next, &fd,
		    &hops[i].relay, &e)) != 0) {
			rc = so_error(err, rc, "host \"%s\": %s", h->name,
			    e.msg);
			goto fail;
		}
	}
	if ((rc = session_open(h, flags, fd, h->jumps[h->njumps - 1].name,
	    h->name, out, err)) != 0)
		goto fail;
	((struct ssh *)(*out)->impl)->hops = hops;
	((struct ssh *)(*out)->impl)->nhops = n;
	return 0;
fail:
	hops_close(hops, n);
	return rc;
}

int
ssh_open(const struct host *h, int flags, struct conn **out,
    struct so_err *err)
{
	*out = NULL;
	pthread_once(&init_once, init_libssh2);
	if (init_rc != 0)
		return so_error(err, SO_ESSH, "host \"%s\": cannot initialise "
		    "libssh2", h->name);
	if (h->njumps > 0)
		return chain_open(h, flags, out, err);
	return session_open(h, flags, -1, NULL, h->name, out, err);
}

const char *
ssh_host_fingerprint(const struct conn *c, const char **type, int *recorded)
{
	const struct ssh *s = c->impl;

	if (c->ops != &ssh_ops)
		return NULL;
	if (type != NULL)
		*type = s->keytype;
	if (recorded != NULL)
		*recorded = s->recorded;
	return s->fingerprint;
}

const char *
ssh_jump_fingerprint(const struct conn *c, size_t i, const char **type,
    int *recorded)
{
	const struct ssh *s = c->impl;

	if (c->ops != &ssh_ops || i >= s->nhops)
		return NULL;
	return ssh_host_fingerprint(s->hops[i].conn, type, recorded);
}

static void
ssh_close(struct conn *c)
{
	struct ssh *s = c->impl;

	if (s->session != NULL) {
		/*
		 * Blocking, with a timeout, for the goodbye: a dead host
		 * cannot hold us, and libssh2 cannot leave a half-done free
		 * (non-blocking session_free may return EAGAIN).
		 */
		libssh2_session_set_timeout(s->session, CLOSE_MS);
		libssh2_session_set_blocking(s->session, 1);
		if (s->sftp != NULL)
			libssh2_sftp_shutdown(s->sftp);
		if (!s->dead)
			libssh2_session_disconnect(s->session, "done");
		/*
		 * Parked channels would wait for their commands to end: with
		 * the socket shut down, libssh2 sees a closed connection and
		 * frees them at once.  The fd stays ours until close(), so no
		 * other thread's new socket can get its number meanwhile.
		 */
		if (s->fd != -1)
			shutdown(s->fd, SHUT_RDWR);
		libssh2_session_free(s->session);
	}
	if (s->fd != -1)
		close(s->fd);
	hops_close(s->hops, s->nhops);
	free(s->peer);
	free(s);
	free(c);
}

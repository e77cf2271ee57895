/*
 * The relay between a direct-tcpip channel on a jump host and a local
 * socketpair (ssh-int.h).  One thread per hop; each direction has one
 * bounded buffer, so a slow reader on either side holds the other back
 * instead of growing memory.
 */
#include "ssh-int.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define RELAY_BUF	32768
/* How often an idle relay looks at its stop flag. */
#define RELAY_POLL_MS	1000

struct relay {
	LIBSSH2_SESSION *session;
	LIBSSH2_CHANNEL *ch;
	int session_fd;
	int fd;			/* our end of the socketpair */
	pthread_t thread;
	atomic_int stop;
	/* up: from the next session to the jump host; down: back. */
	char up[RELAY_BUF], down[RELAY_BUF];
	size_t up_off, up_len, down_off, down_len;
};

/* errno values that only mean "not now". */
static int
transient(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/*
 * Move what can be moved without waiting.  Returns 1 if bytes moved, 0 if
 * nothing could, -1 when the relay is over (either side closed or
 * failed).
 */
static int
relay_step(struct relay *r, int *fd_eof)
{
	ssize_t n;
	int moved = 0;

	if (r->down_off == r->down_len) {
		n = libssh2_channel_read(r->ch, r->down, sizeof r->down);
		if (n > 0) {
			r->down_off = 0;
			r->down_len = (size_t)n;
			moved = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			return -1;
		else if (libssh2_channel_eof(r->ch))
			return -1;
	}
	if (r->down_off < r->down_len) {
		n = send(r->fd, r->down + r->down_off, r->down_len - r->down_off,
		    MSG_NOSIGNAL);
		if (n > 0) {
			r->down_off += (size_t)n;
			moved = 1;
		} else if (n < 0 && !transient(errno))
			return -1;
	}
	if (r->up_off == r->up_len && !*fd_eof) {
		n = recv(r->fd, r->up, sizeof r->up, 0);
		if (n > 0) {
			r->up_off = 0;
			r->up_len = (size_t)n;
			moved = 1;
		} else if (n == 0)
			*fd_eof = 1;
		else if (!transient(errno))
			return -1;
	}
	if (r->up_off < r->up_len) {
		n = libssh2_channel_write(r->ch, r->up + r->up_off,
		    r->up_len - r->up_off);
		if (n > 0) {
			r->up_off += (size_t)n;
			moved = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			return -1;
	}
	/* The next session closed its end and all it sent is delivered. */
	if (*fd_eof && r->up_off == r->up_len)
		return -1;
	return moved;
}

static void *
relay_main(void *arg)
{
	struct relay *r = arg;
	struct pollfd pfd[2];
	int fd_eof = 0, rc, dir;

	while (!atomic_load(&r->stop)) {
		if ((rc = relay_step(r, &fd_eof)) < 0)
			break;
		if (rc > 0)
			continue;
		pfd[0].fd = r->fd;
		pfd[0].events = (r->up_off == r->up_len && !fd_eof ? POLLIN : 0) |
		    (r->down_off < r->down_len ? POLLOUT : 0);
		pfd[1].fd = r->session_fd;
		dir = libssh2_session_block_directions(r->session);
		pfd[1].events = (r->down_off == r->down_len ||
		    r->up_off < r->up_len || (dir &
		    LIBSSH2_SESSION_BLOCK_INBOUND) ? POLLIN : 0) |
		    (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND ? POLLOUT : 0);
		if (poll(pfd, 2, RELAY_POLL_MS) == -1 && errno != EINTR)
			break;
	}
	/* The session on the other end now sees a closed connection. */
	shutdown(r->fd, SHUT_RDWR);
	return NULL;
}

int
relay_start(LIBSSH2_SESSION *session, int session_fd, LIBSSH2_CHANNEL *ch,
    const char *name, int *fd, struct relay **out, struct so_err *err)
{
	struct relay *r;
	char buf[128];
	int sv[2], i, e;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return so_error(err, SO_EIO, "jump host \"%s\": cannot make a "
		    "socketpair: %s", name, ssh_errtext(errno, buf, sizeof buf));
	for (i = 0; i < 2; i++)
		if (fcntl(sv[i], F_SETFD, FD_CLOEXEC) == -1 ||
		    fcntl(sv[i], F_SETFL, fcntl(sv[i], F_GETFL) |
		    O_NONBLOCK) == -1) {
			e = errno;
			close(sv[0]);
			close(sv[1]);
			return so_error(err, SO_EIO, "jump host \"%s\": cannot "
			    "set up a socketpair: %s", name,
			    ssh_errtext(e, buf, sizeof buf));
		}
	r = xcalloc(1, sizeof *r);
	r->session = session;
	r->ch = ch;
	r->session_fd = session_fd;
	r->fd = sv[0];
	atomic_init(&r->stop, 0);
	if ((e = pthread_create(&r->thread, NULL, relay_main, r)) != 0) {
		close(sv[0]);
		close(sv[1]);
		free(r);
		return so_error(err, SO_EIO, "jump host \"%s\": cannot start "
		    "a relay thread: %s", name, ssh_errtext(e, buf, sizeof buf));
	}
	*fd = sv[1];
	*out = r;
	return 0;
}

void
relay_stop(struct relay *r)
{
	if (r == NULL)
		return;
	atomic_store(&r->stop, 1);
	/* Wakes a relay waiting in poll() at once. */
	shutdown(r->fd, SHUT_RDWR);
	pthread_join(r->thread, NULL);
	close(r->fd);
	free(r);
}

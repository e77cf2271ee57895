/*
 * What the pieces of the SSH transport share, and nothing else includes:
 * the per-connection state and the helpers that drive a non-blocking
 * libssh2 session against deadlines.
 *
 *   ssh.c          session open and close, TCP, ProxyJump chains, ssh.h
 *   ssh-hostfile.c known_hosts: strict host key check, `hosts trust`
 *   ssh-auth.c     public key authentication (ssh-agent, key files)
 *   ssh-channel.c  exec on a session channel, direct-tcpip for jump hosts
 *   ssh-sftp.c     uploads, reads, stat and the workdir over SFTP
 *   ssh-relay.c    the ProxyJump relay: a jump host's channel to a socketpair
 *
 * A struct ssh belongs to its struct conn (c->impl) and is freed by
 * ssh_close(); the strings in it belong to it.
 */
#ifndef SEQORCH_SSH_INT_H
#define SEQORCH_SSH_INT_H

#include "conn.h"

#include <stdint.h>

#include <libssh2.h>
#include <libssh2_sftp.h>

/* Poll slice: how often a waiting exec looks at io->stop. */
#define SLICE_MS	200
/* A session that moves no byte for this long (or connect_timeout) is dead. */
#define STALL_MIN_MS	10000
/* Closing a session may take this long before we drop the socket. */
#define CLOSE_MS	2000
/*
 * During a command, a keepalive asking for a reply goes out every
 * connect_timeout seconds (within these bounds), and a host silent for
 * SILENT_KEEPALIVES intervals is taken for gone.
 */
#define KEEPALIVE_MIN_S	2
#define KEEPALIVE_MAX_S	15
#define SILENT_KEEPALIVES 4
/* Unacknowledged data older than this breaks the TCP connection. */
#define TCP_TIMEOUT_MS	60000
/* Channels of abandoned commands waiting for the server to close them. */
#define MAX_PARKED	8
/* Bytes kept of what a login shell prints before a command (a banner). */
#define SSH_BANNER_MAX	128

struct relay;

/* A jump host on the way to the target: its session and relay. */
struct hop {
	struct conn *conn;
	struct relay *relay;		/* carries the next hop's session */
};

struct ssh {
	int fd;				/* TCP, or a relay's socketpair end */
	int tunneled;			/* fd is a relay's */
	LIBSSH2_SESSION *session;
	LIBSSH2_SFTP *sftp;		/* started on first use */
	/* "addr:port", and "via jump host NAME" behind one, for messages */
	char *peer;
	const char *trust_name;		/* the host `hosts trust` takes */
	struct hop *hops;		/* jump hosts, the first one first */
	size_t nhops;
	char fingerprint[64];		/* "SHA256:..." of the host key */
	const char *keytype;		/* "ssh-ed25519", ... */
	int recorded;			/* conn_open added it to known_hosts */
	int dead;			/* the session cannot be used again */
	int stall_ms;
	int keepalive_s;
	int64_t last_rx;		/* when the host last sent a byte */
	unsigned tmpseq;		/* temporary names for put */
	LIBSSH2_CHANNEL *parked[MAX_PARKED];	/* see ssh-channel.c */
	size_t nparked;
	/* What the login shell printed before the last command: its first
	 * line, control characters made printable (ssh-channel.c). */
	char banner[SSH_BANNER_MAX];
};

/* ssh.c: helpers for every piece. */

/* Monotonic milliseconds, for deadlines. */
int64_t ssh_now_ms(void);

/* strerror(e) with a lowercase first letter, as our messages want. */
const char *ssh_errtext(int e, char *buf, size_t len);

/* The last libssh2 error of the session, lowercased like ssh_errtext(). */
const char *ssh_lasterr(struct ssh *s, char *buf, size_t len);

/*
 * Errors after which the session is out of step with its peer.  EAGAIN
 * here means we gave up waiting in the middle of a packet exchange.
 */
int ssh_session_lost(int rc);

/*
 * Wait for the socket in the direction libssh2 is blocked on, for at most
 * slice_ms.  Returns SO_ETIMEOUT once deadline (monotonic ms, 0 for none)
 * has passed, SO_EIO if poll fails.
 */
int ssh_wait(struct ssh *s, int64_t deadline, int slice_ms);

/*
 * For the loops that drive a libssh2 call: true when rc asks to call again
 * and the socket became ready before the deadline.  On false with rc still
 * EAGAIN, *werr says why (SO_ETIMEOUT, SO_EIO).
 */
int ssh_again(struct ssh *s, int rc, int64_t deadline, int *werr);

/*
 * Turn a failed libssh2 call (rc; EAGAIN means the deadline passed) made
 * while doing "what" into a message, and mark the session dead when the
 * failure leaves it unusable so that callers reconnect.
 */
int ssh_fail(struct conn *c, int rc, const char *what, struct so_err *err);

/*
 * ssh-hostfile.c: read what known_hosts holds for the host into *out (the
 * caller frees it with ssh_known_free; NULL on error) and prefer the host
 * key algorithms it knows; then, after the handshake, the strict check of
 * the key the host presented (recording it with CONN_TRUST_NEW).
 */
struct known;
int ssh_load_known(struct conn *c, struct known **out, struct so_err *err);
int ssh_check_hostkey(struct conn *c, struct known *k, int flags,
    struct so_err *err);
void ssh_known_free(struct known *k);

/* ssh-auth.c: public key authentication, by deadline.  0 or SO_E*. */
int ssh_authenticate(struct conn *c, int64_t deadline, struct so_err *err);

/*
 * ssh-channel.c.  ssh_check_alive refuses a session that failed before
 * (the caller must reconnect) and frees parked channels meanwhile done.
 * ssh_tunnel_open opens a direct-tcpip channel from jump host session c
 * to next and starts relaying it: *fd gets the end the next session runs
 * over, *relay the relay (ssh-relay.c).
 */
int ssh_check_alive(struct conn *c, struct so_err *err);
int ssh_tunnel_open(struct conn *c, const struct host *next, int *fd,
    struct relay **relay, struct so_err *err);

/*
 * ssh-relay.c, ProxyJump's plumbing: a relay thread that carries the bytes of a libssh2
 * direct-tcpip channel (opened on a jump host's session towards the next
 * host) to and from one end of a local socketpair.  The next SSH session
 * runs over the other end as if it were a TCP socket, so every hop, and
 * the target, goes through the same ssh.c code.
 *
 * Once started, the relay thread is the only user of the jump session:
 * the caller must not touch it again until relay_stop() has returned.
 * When the jump host drops or closes the channel, the relay closes its
 * end, and the session over the other end sees a closed connection, just
 * as when a directly connected host drops.  The relay sends no keepalives
 * of its own: the target's keepalives cross every hop, so silence anywhere
 * on the path shows as silence of the target.
 *
 * Start relaying channel ch of session (non-blocking, over socket
 * session_fd).  Returns 0 with *fd set to the caller's end of the
 * socketpair (non-blocking, close-on-exec; the caller closes it) and *out
 * to the relay, or SO_EIO with err filled (name is the jump host, for the
 * message).  The channel stays owned by the session.
 */
int relay_start(LIBSSH2_SESSION *session, int session_fd,
    LIBSSH2_CHANNEL *ch, const char *name, int *fd, struct relay **out,
    struct so_err *err);

/*
 * Stop the relay and wait for its thread; frees r.  After this the
 * session is the caller's again (to disconnect and free).  NULL is
 * allowed.
 */
void relay_stop(struct relay *r);

/*
 * The operations of struct conn_ops (conn.h states their contracts):
 * exec in ssh-channel.c, the file operations in ssh-sftp.c.
 */
int ssh_exec(struct conn *, const char *, const struct exec_io *, int *,
    struct so_err *);
int ssh_put(struct conn *, const char *, const void *, size_t, int,
    struct so_err *);
int ssh_read(struct conn *, const char *, size_t, char **, size_t *,
    struct so_err *);
int ssh_stat(struct conn *, const char *, int *, struct so_err *);
int ssh_workdir(struct conn *, const char *, char **, struct so_err *);

#endif

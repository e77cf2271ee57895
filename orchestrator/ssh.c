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
#include "conn.h"
#include "jump.h"
#include "ssh.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>
#include <libssh2_sftp.h>
#include <openssl/evp.h>

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
	char peer[400];
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
	LIBSSH2_CHANNEL *parked[MAX_PARKED];	/* see free_channel() */
	size_t nparked;
};

/* Host key types we accept, in the order we prefer them. */
static const struct keytype {
	int hostkey;			/* LIBSSH2_HOSTKEY_TYPE_* */
	int known;			/* LIBSSH2_KNOWNHOST_KEY_* */
	const char *name;		/* as in known_hosts */
	const char *methods;		/* host key algorithms using it */
} keytypes[] = {
	{ LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519,
	    "ssh-ed25519", "ssh-ed25519" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
	    "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
	    "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
	    "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521" },
	{ LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA,
	    "ssh-rsa", "rsa-sha2-512,rsa-sha2-256,ssh-rsa" },
};
#define NKEYTYPES (sizeof keytypes / sizeof keytypes[0])

static void ssh_close(struct conn *);
static void hops_close(struct hop *, size_t);
static int ssh_exec(struct conn *, const char *, const struct exec_io *,
    int *, struct so_err *);
static int ssh_put(struct conn *, const char *, const void *, size_t, int,
    struct so_err *);

static int ssh_read(struct conn *, const char *, size_t, char **, size_t *,
    struct so_err *);
static int ssh_stat(struct conn *, const char *, int *, struct so_err *);
static int ssh_workdir(struct conn *, const char *, char **,
    struct so_err *);

static const struct conn_ops ssh_ops = {
	.exec = ssh_exec,
	.put = ssh_put,
	.read = ssh_read,
	.stat = ssh_stat,
	.workdir = ssh_workdir,
	.close = ssh_close,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

/* libssh2_init() is not thread-safe and must precede every session. */
static void
init_libssh2(void)
{
	init_rc = libssh2_init(0);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* strerror(e) with a lowercase first letter, as our messages want. */
static const char *
errtext(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(e));
	buf[0] = tolower((unsigned char)buf[0]);
	return buf;
}

/* The last libssh2 error of the session, lowercased like errtext(). */
static const char *
sshtext(struct ssh *s, char *buf, size_t len)
{
	char *msg = NULL;

	libssh2_session_last_error(s->session, &msg, NULL, 0);
	snprintf(buf, len, "%s", msg != NULL && *msg ? msg : "unknown error");
	buf[0] = tolower((unsigned char)buf[0]);
	return buf;
}

/*
 * Errors after which the session is out of step with its peer.  EAGAIN
 * here means we gave up waiting in the middle of a packet exchange.
 */
static int
session_lost(int rc)
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

/*
 * Wait for the socket in the direction libssh2 is blocked on, for at most
 * slice_ms.  Returns SO_ETIMEOUT once deadline (monotonic ms, 0 for none)
 * has passed, SO_EIO if poll fails.
 */
static int
ssh_wait(struct ssh *s, int64_t deadline, int slice_ms)
{
	struct pollfd pfd = { .fd = s->fd };
	int dir = libssh2_session_block_directions(s->session);
	int64_t left;
	int ms = slice_ms;

	if (deadline != 0) {
		if ((left = deadline - now_ms()) <= 0)
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

/*
 * For the loops that drive a libssh2 call: true when rc asks to call again
 * and the socket became ready before the deadline.  On false with rc still
 * EAGAIN, *werr says why (SO_ETIMEOUT, SO_EIO).
 */
static int
ssh_again(struct ssh *s, int rc, int64_t deadline, int *werr)
{
	if (rc != LIBSSH2_ERROR_EAGAIN)
		return 0;
	*werr = ssh_wait(s, deadline, SLICE_MS);
	return *werr == 0;
}

/*
 * Turn a failed libssh2 call (rc; EAGAIN means the deadline passed) made
 * while doing "what" into a message, and mark the session dead when the
 * failure leaves it unusable so that callers reconnect.
 */
static int
ssh_fail(struct conn *c, int rc, const char *what, struct so_err *err)
{
	struct ssh *s = c->impl;
	char buf[256];

	if (session_lost(rc))
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
		    sshtext(s, buf, sizeof buf));
	return so_error(err, SO_ESSH, "host \"%s\": %s: %s", c->host->name,
	    what, sshtext(s, buf, sizeof buf));
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
		if ((left = deadline - now_ms()) <= 0)
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
		    h->name, s->peer, errtext(e, buf, sizeof buf));
	tune_socket(fd);
	s->fd = fd;
	return 0;
}

/* "SHA256:" and the unpadded base64 of the SHA-256 of a key blob. */
static void
fingerprint(const unsigned char *blob, size_t len, char *out, size_t outlen)
{
	unsigned char md[EVP_MAX_MD_SIZE], b64[4 * EVP_MAX_MD_SIZE / 3 + 4];
	unsigned int mdlen = 0;
	int n;

	if (!EVP_Digest(blob, len, md, &mdlen, EVP_sha256(), NULL)) {
		snprintf(out, outlen, "SHA256:(unavailable)");
		return;
	}
	n = EVP_EncodeBlock(b64, md, (int)mdlen);
	while (n > 0 && b64[n - 1] == '=')
		n--;
	snprintf(out, outlen, "SHA256:%.*s", n, (const char *)b64);
}

/* Fingerprint of a known_hosts entry, whose key is a base64 key blob. */
static void
known_fingerprint(const char *b64, char *out, size_t outlen)
{
	size_t len = strlen(b64);
	unsigned char *blob;
	int n;

	while (len > 0 && isspace((unsigned char)b64[len - 1]))
		len--;
	blob = xmalloc(len / 4 * 3 + 3);
	n = EVP_DecodeBlock(blob, (const unsigned char *)b64, (int)len);
	if (n < 0 || len % 4 != 0)
		snprintf(out, outlen, "(unreadable key)");
	else {
		/* EVP_DecodeBlock counts the padding as zero bytes. */
		if (len >= 1 && b64[len - 1] == '=')
			n--;
		if (len >= 2 && b64[len - 2] == '=')
			n--;
		fingerprint(blob, (size_t)n, out, outlen);
	}
	free(blob);
}

/* The known_hosts name of the host: OpenSSH's "[addr]:port" unless 22. */
static char *
known_name(const struct host *h)
{
	if (h->port == 22)
		return xstrdup(h->address);
	return xasprintf("[%s]:%d", h->address, h->port);
}

/*
 * Append to the comma list in buf those of the comma list methods that
 * this libssh2 supports.  libssh2 1.10 would drop the others itself, but
 * with an overlapping memcpy (undefined behaviour), so we never pass any.
 */
static void
add_methods(char *buf, size_t len, const char *methods,
    const char **supported, int nsupported)
{
	char *copy = xstrdup(methods), *p = copy, *m;
	int i;

	while ((m = strsep(&p, ",")) != NULL)
		for (i = 0; i < nsupported; i++)
			if (strcmp(m, supported[i]) == 0)
				snprintf(buf + strlen(buf), len - strlen(buf),
				    "%s%s", *buf ? "," : "", m);
	free(copy);
}

/*
 * Load known_hosts (a missing file is an empty one) and offer first the
 * host key algorithms of the keys it already has for this host, as OpenSSH
 * does: otherwise a server with an RSA and an Ed25519 key could present the
 * one we do not know and be refused as unknown.
 */
static int
load_known(struct conn *c, LIBSSH2_KNOWNHOSTS **out, struct so_err *err)
{
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	LIBSSH2_KNOWNHOSTS *kh;
	const char **algs = NULL;
	char known[512] = "", rest[512] = "", buf[256];
	size_t i;
	int rc, r, nalgs;

	if ((kh = libssh2_knownhost_init(s->session)) == NULL)
		return so_error(err, SO_ENOMEM, "host \"%s\": cannot set up "
		    "known hosts", h->name);
	if (access(h->known_hosts, F_OK) == 0 &&
	    (rc = libssh2_knownhost_readfile(kh, h->known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH)) < 0) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot read "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    sshtext(s, buf, sizeof buf));
		libssh2_knownhost_free(kh);
		return rc;
	}
	if ((nalgs = libssh2_session_supported_algs(s->session,
	    LIBSSH2_METHOD_HOSTKEY, &algs)) <= 0) {
		*out = kh;
		return 0;
	}
	for (i = 0; i < NKEYTYPES; i++) {
		/*
		 * A probe with a key that cannot be right: MISMATCH means
		 * there is an entry of this type for the host (hashed names
		 * included), NOTFOUND that there is none.
		 */
		r = libssh2_knownhost_checkp(kh, h->address, h->port, "?", 1,
		    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
		    keytypes[i].known, NULL);
		if (r == LIBSSH2_KNOWNHOST_CHECK_MISMATCH)
			add_methods(known, sizeof known, keytypes[i].methods,
			    algs, nalgs);
		else
			add_methods(rest, sizeof rest, keytypes[i].methods,
			    algs, nalgs);
	}
	libssh2_free(s->session, algs);
	/* Known types first; rest is cut if both would not fit. */
	if (*known && *rest)
		strncat(known, ",", sizeof known - strlen(known) - 1);
	strncat(known, rest, sizeof known - strlen(known) - 1);
	if (*known)
		libssh2_session_method_pref(s->session, LIBSSH2_METHOD_HOSTKEY,
		    known);
	*out = kh;
	return 0;
}

/* Append the host's key to known_hosts as one OpenSSH line. */
static int
record_key(struct conn *c, LIBSSH2_KNOWNHOSTS *kh, const char *key,
    size_t keylen, int known, struct so_err *err)
{
	const struct host *h = c->host;
	struct libssh2_knownhost *entry = NULL;
	static const char comment[] = "added by seqorch hosts trust";
	char *name = known_name(h), *dir = NULL, line[16384], last = '\n';
	char buf[128];
	const char *slash;
	size_t len = 0;
	ssize_t n;
	int fd = -1, rc = 0;

	if (libssh2_knownhost_addc(kh, name, NULL, key, keylen, comment,
	    sizeof comment - 1, LIBSSH2_KNOWNHOST_TYPE_PLAIN |
	    LIBSSH2_KNOWNHOST_KEYENC_RAW | known, &entry) != 0 ||
	    libssh2_knownhost_writeline(kh, entry, line, sizeof line, &len,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot format "
		    "a known_hosts line for %s", h->name, name);
		goto out;
	}
	fd = open(h->known_hosts, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600);
	/* Like ssh, make a missing ~/.ssh (one level, private) on first use. */
	if (fd == -1 && errno == ENOENT && (slash = strrchr(h->known_hosts,
	    '/')) != NULL && slash != h->known_hosts) {
		dir = xasprintf("%.*s", (int)(slash - h->known_hosts),
		    h->known_hosts);
		if (mkdir(dir, 0700) == 0)
			fd = open(h->known_hosts, O_RDWR | O_APPEND | O_CREAT |
			    O_CLOEXEC, 0600);
		else
			errno = ENOENT;
	}
	if (fd == -1) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot open "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    errtext(errno, buf, sizeof buf));
		goto out;
	}
	/* An existing last line without its newline must not be joined. */
	if (lseek(fd, -1, SEEK_END) != -1 && read(fd, &last, 1) != 1)
		last = '\n';
	if (last != '\n' && write(fd, "\n", 1) != 1)
		n = -1;
	else
		n = write(fd, line, len);
	if (n != (ssize_t)len || fsync(fd) == -1)
		rc = so_error(err, SO_EIO, "host \"%s\": cannot write "
		    "known_hosts \"%s\": %s", h->name, h->known_hosts,
		    n >= 0 && n < (ssize_t)len ? "short write" :
		    errtext(errno, buf, sizeof buf));
out:
	if (fd != -1)
		close(fd);
	free(dir);
	free(name);
	return rc;
}

/*
 * True if known_hosts lists the key as "@revoked".  libssh2 1.10 does not
 * know the marker (it reads such a line as an entry for a host named
 * "@revoked"), so the check is ours.
 */
static int
revoked(const char *path, const char *key, size_t keylen)
{
	char *b64, line[16384];
	const char *p;
	size_t n;
	FILE *f;
	int hit = 0;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	b64 = xmalloc(4 * (keylen / 3 + 1) + 1);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)key,
	    (int)keylen);
	n = strlen(b64);
	while (!hit && fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "@revoked", 8) != 0 ||
		    !isspace((unsigned char)line[8]))
			continue;
		for (p = line; !hit && (p = strstr(p, b64)) != NULL; p += n)
			hit = isspace((unsigned char)p[-1]) &&
			    (p[n] == '\0' || isspace((unsigned char)p[n]));
	}
	fclose(f);
	free(b64);
	return hit;
}

/*
 * A key of another type that known_hosts holds for the host, if any:
 * the host known by one key type that now presents only another.  Returns
 * the type and sets *entry, or NULL.
 */
static const struct keytype *
other_known_type(struct conn *c, LIBSSH2_KNOWNHOSTS *kh,
    const struct keytype *t, struct libssh2_knownhost **entry)
{
	const struct host *h = c->host;
	size_t i;

	for (i = 0; i < NKEYTYPES; i++) {
		if (&keytypes[i] == t)
			continue;
		/* As in load_known(): MISMATCH means an entry of this type. */
		if (libssh2_knownhost_checkp(kh, h->address, h->port, "?", 1,
		    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
		    keytypes[i].known, entry) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH)
			return &keytypes[i];
	}
	return NULL;
}

/*
 * Strict host key check.  An unknown key is refused with the command that
 * would trust it, unless flags has CONN_TRUST_NEW; a changed key is always
 * refused, with both fingerprints, and so is a host known by a key of
 * another type (load_known() asked for that type first, so the host has
 * none any more): trusting the new key would hide a replaced host.
 */
static int
check_hostkey(struct conn *c, LIBSSH2_KNOWNHOSTS *kh, int flags,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	struct libssh2_knownhost *k = NULL;
	const struct keytype *t = NULL, *other;
	const char *key;
	char known[64], *name;
	size_t len, i;
	int type, rc;

	if ((key = libssh2_session_hostkey(s->session, &len, &type)) == NULL)
		return so_error(err, SO_EHOSTKEY, "host \"%s\": %s presented "
		    "no host key", h->name, s->peer);
	for (i = 0; i < NKEYTYPES; i++)
		if (keytypes[i].hostkey == type)
			t = &keytypes[i];
	if (t == NULL)
		return so_error(err, SO_EHOSTKEY, "host \"%s\": %s presented "
		    "a host key of an unsupported type", h->name, s->peer);
	s->keytype = t->name;
	fingerprint((const unsigned char *)key, len, s->fingerprint,
	    sizeof s->fingerprint);
	name = known_name(h);
	if (revoked(h->known_hosts, key, len)) {
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "(%s %s) is marked @revoked in known_hosts \"%s\"; "
		    "refusing to connect", h->name, name, t->name,
		    s->fingerprint, h->known_hosts);
		goto out;
	}
	rc = libssh2_knownhost_checkp(kh, h->address, h->port, key, len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    t->known, &k);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		rc = 0;
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		known_fingerprint(k->key, known, sizeof known);
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "has changed: known_hosts \"%s\" has %s %s, the server "
		    "presented %s %s; refusing to connect (if the host was "
		    "reinstalled, remove its old line from known_hosts)",
		    h->name, name, h->known_hosts, t->name, known, t->name,
		    s->fingerprint);
		break;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		if ((other = other_known_type(c, kh, t, &k)) != NULL) {
			known_fingerprint(k->key, known, sizeof known);
			rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key "
			    "for %s changed type: known_hosts \"%s\" has %s %s, "
			    "and the server offers no %s key but %s %s; "
			    "refusing to connect (if the host's keys were "
			    "replaced, remove the old one first: ssh-keygen -R "
			    "'%s' -f '%s')", h->name, name, h->known_hosts,
			    other->name, known, other->name, t->name,
			    s->fingerprint, name, h->known_hosts);
			break;
		}
		if (flags & CONN_TRUST_NEW) {
			rc = record_key(c, kh, key, len, t->known, err);
			s->recorded = rc == 0;
			break;
		}
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": host key for %s "
		    "is not in known_hosts \"%s\" (%s %s); if that fingerprint "
		    "is right, run \"seqorch hosts trust %s\"", h->name, name,
		    h->known_hosts, t->name, s->fingerprint, s->trust_name);
		break;
	default:
		rc = so_error(err, SO_EHOSTKEY, "host \"%s\": cannot check the "
		    "host key for %s against \"%s\"", h->name, name,
		    h->known_hosts);
		break;
	}
out:
	free(name);
	return rc;
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
		s->last_rx = now_ms();
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
	LIBSSH2_KNOWNHOSTS *kh = NULL;
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
	if ((rc = load_known(c, &kh, err)) != 0)
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
		rc = check_hostkey(c, kh, flags, err);
	libssh2_knownhost_free(kh);
	return rc;
}

/* True if the comma-separated list has the word w. */
static int
has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = list; (p = strstr(p, w)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

/*
 * Try the keys of ssh-agent.  Returns 1 when one was accepted, 0 when none
 * was, or a negative SO_E* code when the session failed meanwhile.
 */
static int
auth_agent(struct conn *c, const char *user, int64_t deadline, int *nkeys,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_AGENT *agent;
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	int rc = 0, r, w = 0;

	*nkeys = 0;
	if ((agent = libssh2_agent_init(s->session)) == NULL)
		return 0;
	if (libssh2_agent_connect(agent) != 0 ||
	    libssh2_agent_list_identities(agent) != 0)
		goto out;
	while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
		(*nkeys)++;
		do
			r = libssh2_agent_userauth(agent, user, id);
		while (ssh_again(s, r, deadline, &w));
		if (r == 0) {
			rc = 1;
			break;
		}
		if (r == LIBSSH2_ERROR_EAGAIN || session_lost(r)) {
			rc = r == LIBSSH2_ERROR_EAGAIN ? so_error(err,
			    SO_ETIMEOUT, "host \"%s\": authentication at %s: "
			    "timed out after %d s", c->host->name, s->peer,
			    c->host->connect_timeout) :
			    ssh_fail(c, r, "authenticating", err);
			break;
		}
		prev = id;
	}
	libssh2_agent_disconnect(agent);
out:
	libssh2_agent_free(agent);
	return rc;
}

/*
 * Try one private key file.  Returns 1 when accepted, 0 when the server
 * refused it, or a negative SO_E* code (unusable file, failed session).
 */
static int
auth_file(struct conn *c, const char *user, const char *path,
    int64_t deadline, struct so_err *err)
{
	struct ssh *s = c->impl;
	char buf[128];
	int r, w = 0;

	if (access(path, R_OK) == -1)
		return so_error(err, SO_ESSH, "host \"%s\": cannot read "
		    "identity \"%s\": %s", c->host->name, path,
		    errtext(errno, buf, sizeof buf));
	do
		r = libssh2_userauth_publickey_fromfile_ex(s->session, user,
		    (unsigned int)strlen(user), NULL, path, NULL);
	while (ssh_again(s, r, deadline, &w));
	switch (r) {
	case 0:
		return 1;
	case LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
	case LIBSSH2_ERROR_AUTHENTICATION_FAILED:
		return 0;
	case LIBSSH2_ERROR_FILE:
		return so_error(err, SO_ESSH, "host \"%s\": cannot use "
		    "identity \"%s\": not a private key libssh2 can read, or "
		    "protected by a passphrase (load such keys into ssh-agent)",
		    c->host->name, path);
	case LIBSSH2_ERROR_EAGAIN:
		return so_error(err, SO_ETIMEOUT, "host \"%s\": authentication "
		    "at %s: timed out after %d s", c->host->name, s->peer,
		    c->host->connect_timeout);
	}
	return ssh_fail(c, r, "authenticating", err);
}

/* The local user name, the default login name on the host. */
static char *
local_user(void)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) != 0 ||
	    res == NULL)
		return NULL;
	return xstrdup(pw.pw_name);
}

/*
 * Public key authentication only: ssh-agent, then the identity file (or,
 * without one, OpenSSH's default key files).  Passwords are never sent.
 */
static int
authenticate(struct conn *c, int64_t deadline, struct so_err *err)
{
	static const char *const defaults[] = { "id_ed25519", "id_ecdsa",
	    "id_rsa" };
	struct ssh *s = c->impl;
	const struct host *h = c->host;
	char *user, *list = NULL, *path = NULL, tried[1024] = "";
	const char *home = getenv("HOME"), *sock = getenv("SSH_AUTH_SOCK");
	size_t i, nfiles;
	int rc = 0, w = 0, nkeys = 0, ok = 0;

	if ((user = h->user != NULL ? xstrdup(h->user) : local_user()) ==
	    NULL)
		return so_error(err, SO_ESSH, "host \"%s\": no user given and "
		    "no name for uid %ld", h->name, (long)geteuid());
	do {
		list = libssh2_userauth_list(s->session, user,
		    (unsigned int)strlen(user));
		rc = list != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, deadline, &w));
	if (list == NULL && libssh2_userauth_authenticated(s->session))
		goto out;
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		rc = so_error(err, SO_ETIMEOUT, "host \"%s\": authentication "
		    "at %s: timed out after %d s", h->name, s->peer,
		    h->connect_timeout);
		goto out;
	}
	if (list == NULL) {
		rc = ssh_fail(c, rc, "asking for authentication methods", err);
		goto out;
	}
	if (!has_word(list, "publickey")) {
		rc = so_error(err, SO_ESSH, "host \"%s\": %s offers only "
		    "\"%s\" authentication for \"%s\" and seqorch never sends "
		    "passwords: use a key (identity in hosts.toml, or "
		    "ssh-agent) and enable PubkeyAuthentication on the host",
		    h->name, s->peer, list, user);
		goto out;
	}
	/* IdentitiesOnly: only the configured files, as ssh does. */
	if (sock != NULL && *sock != '\0' && !h->identities_only) {
		if ((ok = auth_agent(c, user, deadline, &nkeys, err)) < 0) {
			rc = ok;
			goto out;
		}
		snprintf(tried, sizeof tried, "ssh-agent (%d key%s)", nkeys,
		    nkeys == 1 ? "" : "s");
	}
	/*
	 * hosts.toml's identity must exist; ssh_config's IdentityFile list
	 * and the default files are skipped when missing, as ssh does.
	 */
	nfiles = h->identity != NULL ? 1 : h->nssh_identities > 0 ?
	    h->nssh_identities : 3;
	for (i = 0; !ok && i < nfiles; i++) {
		free(path);
		if (h->identity != NULL)
			path = xstrdup(h->identity);
		else if (h->nssh_identities > 0)
			path = xstrdup(h->ssh_identities[i]);
		else if (home != NULL)
			path = xasprintf("%s/.ssh/%s", home, defaults[i]);
		else
			break;
		if (h->identity == NULL && access(path, F_OK) == -1)
			continue;
		if ((ok = auth_file(c, user, path, deadline, err)) < 0) {
			rc = ok;
			goto out;
		}
		snprintf(tried + strlen(tried), sizeof tried - strlen(tried),
		    "%s\"%s\"", *tried ? ", " : "", path);
	}
	if (!ok)
		rc = so_error(err, SO_ESSH, "host \"%s\": authentication as "
		    "\"%s\" at %s failed: no key was accepted (tried: %s)",
		    h->name, user, s->peer, *tried ? tried : "no ssh-agent, "
		    "no identity in hosts.toml, no ~/.ssh/id_* key");
out:
	free(path);
	free(user);
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
	int64_t deadline = now_ms() + (int64_t)h->connect_timeout * 1000;
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
	snprintf(s->peer, sizeof s->peer, strchr(h->address, ':') != NULL ?
	    "[%s]:%d" : "%s:%d", h->address, h->port);
	if (via != NULL)
		snprintf(s->peer + strlen(s->peer), sizeof s->peer -
		    strlen(s->peer), " via jump host \"%s\"", via);
	if ((fd == -1 && (rc = tcp_connect(c, deadline, err)) != 0) ||
	    (rc = handshake(c, flags, deadline, err)) != 0 ||
	    (rc = authenticate(c, deadline, err)) != 0)
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
 * Open a direct-tcpip channel from jump host session c to next and start
 * relaying it: *fd gets the end the next session runs over.
 */
static int
tunnel_open(struct conn *c, const struct host *next, int *fd,
    struct relay **relay, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_CHANNEL *ch = NULL;
	int64_t deadline = now_ms() + (int64_t)c->host->connect_timeout * 1000;
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
		    next->port, sshtext(s, buf, sizeof buf));
	/* From here the relay thread alone drives this session. */
	if ((rc = relay_start(s->session, s->fd, ch, c->host->name, fd, relay,
	    err)) != 0)
		libssh2_channel_free(ch);
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
		if ((rc = tunnel_open(hops[i].conn, next, &fd, &hops[i].relay,
		    &e)) != 0) {
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

/* Refuse to use a session that failed before: the caller must reconnect. */
static int
check_alive(struct conn *c, struct so_err *err)
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
	int64_t stall = now_ms() + s->stall_ms;

	return cmd_deadline != 0 && cmd_deadline < stall ? cmd_deadline : stall;
}

/*
 * A timeout in a protocol step: the command's own limit when that is what
 * passed (the session is still fine), otherwise a stalled connection.
 */
static int
step_timeout(struct conn *c, const struct exec_io *io, int64_t cmd_deadline,
    const char *cmd, struct so_err *err)
{
	if (cmd_deadline != 0 && now_ms() >= cmd_deadline)
		return so_error(err, SO_ETIMEOUT, "host \"%s\": command timed "
		    "out after %d ms: %.80s", c->host->name, io->timeout_ms,
		    cmd);
	return ssh_fail(c, LIBSSH2_ERROR_EAGAIN, "running a command", err);
}

static int
ssh_exec(struct conn *c, const char *cmd, const struct exec_io *io,
    int *status, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_CHANNEL *ch = NULL;
	int64_t deadline = io->timeout_ms > 0 ? now_ms() + io->timeout_ms : 0;
	int64_t step;
	char buf[32768], *q = NULL, *line = NULL, *sig = NULL;
	size_t errused = 0;
	ssize_t n, m;
	int rc, w = 0, next;

	*status = -1;
	if (io->errbuf != NULL && io->errlen > 0)
		io->errbuf[0] = '\0';
	if ((rc = check_alive(c, err)) != 0)
		return rc;
	/* Silence counts from now: nothing was asked of the host before. */
	if (s->last_rx < now_ms())
		s->last_rx = now_ms();
	/* The contract is /bin/sh, whatever the user's login shell is. */
	q = sh_quote(cmd);
	line = xasprintf("exec /bin/sh -c %s", q);
	step = step_deadline(s, deadline);
	do {
		ch = libssh2_channel_open_session(s->session);
		rc = ch != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, step, &w));
	if (ch == NULL) {
		rc = rc == LIBSSH2_ERROR_EAGAIN ? step_timeout(c, io, deadline,
		    cmd, err) : ssh_fail(c, rc, "opening a channel", err);
		goto out;
	}
	step = step_deadline(s, deadline);
	do
		rc = libssh2_channel_exec(ch, line);
	while (ssh_again(s, rc, step, &w));
	/* The command gets an empty stdin, as with ssh -n. */
	if (rc == 0)
		do
			rc = libssh2_channel_send_eof(ch);
		while (ssh_again(s, rc, step, &w));
	if (rc != 0) {
		rc = rc == LIBSSH2_ERROR_EAGAIN ? step_timeout(c, io, deadline,
		    cmd, err) : ssh_fail(c, rc, "starting a command", err);
		goto out;
	}
	for (;;) {
		n = libssh2_channel_read(ch, buf, sizeof buf);
		if (n > 0 && io->on_stdout != NULL &&
		    (rc = io->on_stdout(io->arg, buf, (size_t)n)) != 0)
			goto out;
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
		if (now_ms() - s->last_rx > (int64_t)SILENT_KEEPALIVES *
		    s->keepalive_s * 1000) {
			s->dead = 1;
			rc = so_error(err, SO_ESSH, "host \"%s\": connection "
			    "to %s lost (running a command): no answer to "
			    "keepalives for %d s", c->host->name, s->peer,
			    SILENT_KEEPALIVES * s->keepalive_s);
			goto out;
		}
		if (ssh_wait(s, deadline, SLICE_MS) != 0) {
			rc = step_timeout(c, io, deadline, cmd, err);
			goto out;
		}
	}
	step = step_deadline(s, deadline);
	do
		rc = libssh2_channel_close(ch);
	while (ssh_again(s, rc, step, &w));
	if (rc == 0)
		do
			rc = libssh2_channel_wait_closed(ch);
		while (ssh_again(s, rc, step, &w));
	if (rc != 0) {
		rc = rc == LIBSSH2_ERROR_EAGAIN ? step_timeout(c, io, deadline,
		    cmd, err) : ssh_fail(c, rc, "finishing a command", err);
		goto out;
	}
	libssh2_channel_get_exit_signal(ch, &sig, NULL, NULL, NULL, NULL,
	    NULL);
	*status = sig != NULL ? signal_status(sig) :
	    libssh2_channel_get_exit_status(ch);
out:
	if (sig != NULL)
		libssh2_free(s->session, sig);
	if (ch != NULL)
		free_channel(s, ch);
	free(line);
	free(q);
	return rc;
}

/* SFTP status codes, for messages. */
static const char *
sftp_text(unsigned long code)
{
	switch (code) {
	case LIBSSH2_FX_NO_SUCH_FILE:
	case LIBSSH2_FX_NO_SUCH_PATH:
		return "no such file or directory";
	case LIBSSH2_FX_PERMISSION_DENIED:
		return "permission denied";
	case LIBSSH2_FX_FILE_ALREADY_EXISTS:
		return "file exists";
	case LIBSSH2_FX_WRITE_PROTECT:
		return "read-only file system";
	case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM:
		return "no space left on device";
	case LIBSSH2_FX_QUOTA_EXCEEDED:
		return "disk quota exceeded";
	case LIBSSH2_FX_NOT_A_DIRECTORY:
		return "not a directory";
	case LIBSSH2_FX_OP_UNSUPPORTED:
		return "operation not supported";
	}
	return "failure";
}

/*
 * Start SFTP on first use.  When the host has no SFTP subsystem and the
 * session is still fine, *absent (if given) is set: callers with a shell
 * fallback take it, the others report the message.
 */
static int
sftp_start(struct conn *c, int *absent, struct so_err *err)
{
	struct ssh *s = c->impl;
	int64_t deadline = now_ms() + s->stall_ms;
	char buf[256];
	int rc = 0, w = 0;

	if ((rc = check_alive(c, err)) != 0)
		return rc;
	while (s->sftp == NULL) {
		s->sftp = libssh2_sftp_init(s->session);
		rc = s->sftp != NULL ? 0 :
		    libssh2_session_last_errno(s->session);
		if (!ssh_again(s, rc, deadline, &w))
			break;
	}
	if (s->sftp != NULL)
		return 0;
	if (session_lost(rc))
		return ssh_fail(c, rc, "starting sftp", err);
	if (absent != NULL)
		*absent = 1;
	return so_error(err, SO_ESSH, "host \"%s\": cannot start sftp: %s "
	    "(uploads need a \"Subsystem sftp\" line in the host's "
	    "sshd_config)", c->host->name, sshtext(s, buf, sizeof buf));
}

/* A failed SFTP call on path: the server's status, or the session's. */
static int
sftp_fail(struct conn *c, int rc, const char *what, const char *path,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	char buf[600];

	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL)
		return so_error(err, SO_EIO, "host \"%s\": %s \"%s\": %s",
		    c->host->name, what, path,
		    sftp_text(libssh2_sftp_last_error(s->sftp)));
	snprintf(buf, sizeof buf, "%s \"%s\"", what, path);
	return ssh_fail(c, rc, buf, err);
}

/*
 * Rename over an existing file.  Where libssh2 has posix-rename (1.11) and
 * the server offers it, that replaces atomically.  Otherwise: OpenSSH's
 * SFTP rename refuses to replace, so on failure the target is removed and
 * the rename tried once more; the window in between is harmless for
 * content-addressed files, which are the same bytes either way.
 */
static int
sftp_replace(struct ssh *s, const char *from, const char *to)
{
	int64_t deadline = now_ms() + s->stall_ms;
	int rc, w = 0;

#if LIBSSH2_VERSION_NUM >= 0x010b00
	do
		rc = libssh2_sftp_posix_rename_ex(s->sftp, from, strlen(from),
		    to, strlen(to));
	while (ssh_again(s, rc, deadline, &w));
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return rc;
#endif
	do
		rc = libssh2_sftp_rename_ex(s->sftp, from,
		    (unsigned int)strlen(from), to, (unsigned int)strlen(to),
		    LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
		    LIBSSH2_SFTP_RENAME_NATIVE);
	while (ssh_again(s, rc, deadline, &w));
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return rc;
	do
		rc = libssh2_sftp_unlink_ex(s->sftp, to,
		    (unsigned int)strlen(to));
	while (ssh_again(s, rc, deadline, &w));
	if (rc != 0 && rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return rc;
	do
		rc = libssh2_sftp_rename_ex(s->sftp, from,
		    (unsigned int)strlen(from), to, (unsigned int)strlen(to),
		    LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
		    LIBSSH2_SFTP_RENAME_NATIVE);
	while (ssh_again(s, rc, deadline, &w));
	return rc;
}

/* After a failed put: close the handle and remove the temporary file. */
static void
sftp_discard(struct ssh *s, LIBSSH2_SFTP_HANDLE *fh, const char *tmp)
{
	int64_t deadline = now_ms() + CLOSE_MS;
	int rc = 0, w = 0;

	if (s->dead)
		return;
	if (fh != NULL)
		do
			rc = libssh2_sftp_close_handle(fh);
		while (ssh_again(s, rc, deadline, &w));
	if (tmp != NULL && (rc == 0 || rc == LIBSSH2_ERROR_SFTP_PROTOCOL))
		do
			rc = libssh2_sftp_unlink_ex(s->sftp, tmp,
			    (unsigned int)strlen(tmp));
		while (ssh_again(s, rc, deadline, &w));
	if (session_lost(rc))
		s->dead = 1;
}

static int
ssh_put(struct conn *c, const char *path, const void *data, size_t len,
    int mode, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_HANDLE *fh = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	char *tmp = NULL;
	int64_t deadline = now_ms() + s->stall_ms;
	size_t off = 0;
	ssize_t n;
	int rc, w = 0, created = 0;

	if ((rc = sftp_start(c, NULL, err)) != 0)
		return rc;
	tmp = xasprintf("%s.tmp-%ld-%u", path, (long)getpid(), ++s->tmpseq);
	do {
		fh = libssh2_sftp_open_ex(s->sftp, tmp,
		    (unsigned int)strlen(tmp), LIBSSH2_FXF_WRITE |
		    LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC | LIBSSH2_FXF_EXCL,
		    mode & 07777, LIBSSH2_SFTP_OPENFILE);
		rc = fh != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, deadline, &w));
	if (fh == NULL) {
		rc = sftp_fail(c, rc, "cannot create", path, err);
		goto out;
	}
	created = 1;
	while (off < len) {
		n = libssh2_sftp_write(fh, (const char *)data + off, len - off);
		if (n > 0) {
			off += (size_t)n;
			deadline = now_ms() + s->stall_ms;
		} else if (n < 0 && !ssh_again(s, (int)n, deadline, &w)) {
			rc = sftp_fail(c, (int)n, "cannot write", path, err);
			goto out;
		}
	}
	/* The server's umask applies at open; the mode must be exact. */
	memset(&attrs, 0, sizeof attrs);
	attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	attrs.permissions = (unsigned long)(mode & 07777);
	do
		rc = libssh2_sftp_fsetstat(fh, &attrs);
	while (ssh_again(s, rc, deadline, &w));
	if (rc != 0) {
		rc = sftp_fail(c, rc, "cannot set the mode of", path, err);
		goto out;
	}
	do
		rc = libssh2_sftp_close_handle(fh);
	while (ssh_again(s, rc, deadline, &w));
	fh = NULL;
	if (rc != 0) {
		rc = sftp_fail(c, rc, "cannot write", path, err);
		goto out;
	}
	if ((rc = sftp_replace(s, tmp, path)) != 0) {
		rc = sftp_fail(c, rc, "cannot rename into place", path, err);
		goto out;
	}
	created = 0;
out:
	if (fh != NULL || created)
		sftp_discard(s, fh, created ? tmp : NULL);
	free(tmp);
	return rc;
}

/* The server said the path does not exist. */
static int
sftp_missing(struct ssh *s, int rc)
{
	unsigned long e;

	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return 0;
	e = libssh2_sftp_last_error(s->sftp);
	return e == LIBSSH2_FX_NO_SUCH_FILE || e == LIBSSH2_FX_NO_SUCH_PATH;
}

static int
sftp_stat(struct ssh *s, const char *path, LIBSSH2_SFTP_ATTRIBUTES *attrs)
{
	int64_t deadline = now_ms() + s->stall_ms;
	int rc, w = 0;

	do
		rc = libssh2_sftp_stat_ex(s->sftp, path,
		    (unsigned int)strlen(path), LIBSSH2_SFTP_STAT, attrs);
	while (ssh_again(s, rc, deadline, &w));
	return rc;
}

static int
ssh_stat(struct conn *c, const char *path, int *mode, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int rc;

	if ((rc = sftp_start(c, NULL, err)) != 0)
		return rc;
	if ((rc = sftp_stat(s, path, &attrs)) != 0)
		return sftp_missing(s, rc) ? SO_ENOTFOUND :
		    sftp_fail(c, rc, "cannot look at", path, err);
	*mode = (int)(attrs.permissions & 07777);
	return 0;
}

static int
ssh_read(struct conn *c, const char *path, size_t max, char **out,
    size_t *len, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_HANDLE *fh = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int64_t deadline = now_ms() + s->stall_ms;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int rc, w = 0;

	if ((rc = sftp_start(c, NULL, err)) != 0)
		return rc;
	do {
		fh = libssh2_sftp_open_ex(s->sftp, path,
		    (unsigned int)strlen(path), LIBSSH2_FXF_READ, 0,
		    LIBSSH2_SFTP_OPENFILE);
		rc = fh != NULL ? 0 : libssh2_session_last_errno(s->session);
	} while (ssh_again(s, rc, deadline, &w));
	if (fh == NULL) {
		rc = sftp_missing(s, rc) ? SO_ENOTFOUND :
		    sftp_fail(c, rc, "cannot read", path, err);
		goto out;
	}
	do
		rc = libssh2_sftp_fstat_ex(fh, &attrs, 0);
	while (ssh_again(s, rc, deadline, &w));
	if (rc != 0) {
		rc = sftp_fail(c, rc, "cannot read", path, err);
		goto out;
	}
	/* Only the tail is wanted from a longer file. */
	if ((attrs.flags & LIBSSH2_SFTP_ATTR_SIZE) && attrs.filesize > max)
		libssh2_sftp_seek64(fh, attrs.filesize - max);
	buf = xmalloc(max + 1);
	while (got < max) {
		n = libssh2_sftp_read(fh, buf + got, max - got);
		if (n > 0) {
			got += (size_t)n;
			deadline = now_ms() + s->stall_ms;
		} else if (n == 0)
			break;
		else if (!ssh_again(s, (int)n, deadline, &w)) {
			rc = sftp_fail(c, (int)n, "cannot read", path, err);
			goto out;
		}
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	buf = NULL;
out:
	if (fh != NULL) {
		int crc;

		do
			crc = libssh2_sftp_close_handle(fh);
		while (ssh_again(s, crc, deadline, &w));
		if (session_lost(crc))
			s->dead = 1;
	}
	free(buf);
	return rc;
}

/*
 * mkdir -p wd over SFTP ("~/x" is relative to the directory the server
 * starts in, the login directory), then its real path.  An existing
 * workdir costs two requests; a new one a stat and a mkdir per level.
 */
static int
ssh_workdir(struct conn *c, const char *wd, char **abs, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int64_t deadline = now_ms() + s->stall_ms;
	char *path, *p, real[4096], save;
	int rc, w = 0, absent = 0;

	if ((rc = sftp_start(c, &absent, err)) != 0)
		return absent ? 1 : rc;
	/* SFTP resolves relative paths against the login directory. */
	path = xstrdup(wd[0] == '~' ? (wd[1] ? wd + 2 : ".") : wd);
	if (sftp_stat(s, path, &attrs) != 0) {
		for (p = path + 1; ; p++) {
			if (*p != '/' && *p != '\0')
				continue;
			save = *p;
			*p = '\0';
			if ((rc = sftp_stat(s, path, &attrs)) != 0) {
				if (!sftp_missing(s, rc))
					goto fail;
				do
					rc = libssh2_sftp_mkdir_ex(s->sftp,
					    path, (unsigned int)strlen(path),
					    0755);
				while (ssh_again(s, rc, deadline, &w));
				/* Another coordinator may have made it. */
				if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
				    sftp_stat(s, path, &attrs) == 0)
					rc = 0;
				else if (rc == 0)
					attrs.permissions =
					    LIBSSH2_SFTP_S_IFDIR | 0755;
				if (rc != 0)
					goto fail;
			}
			*p = save;
			if (save == '\0')
				break;
		}
	}
	/* attrs now describe wd itself (stat follows links). */
	if (!LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
		rc = so_error(err, SO_EIO, "host \"%s\": workdir \"%s\" is "
		    "not a directory", c->host->name, wd);
		goto out;
	}
	do
		rc = libssh2_sftp_symlink_ex(s->sftp, path,
		    (unsigned int)strlen(path), real, sizeof real - 1,
		    LIBSSH2_SFTP_REALPATH);
	while (ssh_again(s, rc, deadline, &w));
	if (rc <= 0 || real[0] != '/') {
		rc = rc < 0 ? rc : LIBSSH2_ERROR_SFTP_PROTOCOL;
		goto fail;
	}
	real[rc] = '\0';
	*abs = xstrdup(real);
	rc = 0;
	goto out;
fail:
	rc = sftp_fail(c, rc, "cannot create workdir", wd, err);
out:
	free(path);
	return rc;
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
	free(s);
	free(c);
}

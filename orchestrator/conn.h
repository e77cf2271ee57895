/*
 * A connection to one host, whatever the transport: the local machine
 * (local.c: fork/exec, plain files) or SSH (ssh.c: libssh2 exec + SFTP).
 * Deploy, build and run code talks only to this interface, so the local
 * host goes through the same code path as a remote one.
 *
 * conn_open returns a connection owned by the caller (conn_close frees it).
 * Every command given to conn_exec is a shell command line run by the
 * host's /bin/sh, in the C locale (rcmd_sh); remote.c builds them, every
 * argument quoted with strbuf_add_shquoted().
 */
#ifndef SEQORCH_CONN_H
#define SEQORCH_CONN_H

#include "config.h"
#include "util.h"

#include <signal.h>
#include <stddef.h>

struct conn;

struct exec_io {
	/*
	 * Called with each chunk of standard output as it arrives (chunks
	 * are not line aligned).  Return 0 to go on, non-zero to stop the
	 * command (conn_exec then returns that value).  May be NULL.
	 */
	int (*on_stdout)(void *arg, const char *buf, size_t len);
	void *arg;
	/* Standard error is kept here, truncated to errlen - 1 bytes. */
	char *errbuf;
	size_t errlen;
	int timeout_ms;			/* whole command; 0 = no limit */
	volatile sig_atomic_t *stop;	/* set by a signal handler: stop */
};

struct conn_ops {
	int (*exec)(struct conn *c, const char *cmd, const struct exec_io *io,
	    int *status, struct so_err *err);
	int (*put)(struct conn *c, const char *path, const void *data,
	    size_t len, int mode, struct so_err *err);
	int (*read)(struct conn *c, const char *path, size_t max, char **out,
	    size_t *len, struct so_err *err);
	int (*stat)(struct conn *c, const char *path, int *mode,
	    struct so_err *err);
	/* Returns 1 when only a shell command can do it (no SFTP). */
	int (*workdir)(struct conn *c, const char *wd, char **abs,
	    struct so_err *err);
	void (*close)(struct conn *c);
};

struct conn {
	const struct conn_ops *ops;
	const struct host *host;	/* borrowed from the config */
	char *workdir;			/* absolute, owned */
	void *impl;			/* transport state, owned */
	/* Set by a signal handler: stops any command on this connection
	 * whose exec_io has no stop of its own.  May be NULL. */
	volatile sig_atomic_t *stop;
};

/* Flags for conn_open. */
#define CONN_TRUST_NEW	0x1	/* `hosts trust`: record an unknown host key */

/*
 * Connect to h (for ssh: host key check, authentication) and resolve its
 * workdir to an absolute path, creating it (over SFTP where the host has
 * it, else with one shell command).  On failure *out is NULL and
 * err names the host and the cause.
 */
int conn_open(const struct host *h, int flags, struct conn **out,
    struct so_err *err);

/*
 * Run cmd; *status gets the exit status (128 + signal if killed).  Returns
 * 0 when the command ran (whatever its status), a negative SO_E* code when
 * it could not be run or was cut off (SO_ETIMEOUT, SO_EINTR), or the
 * non-zero value returned by io->on_stdout.
 */
int conn_exec(struct conn *c, const char *cmd, const struct exec_io *io,
    int *status, struct so_err *err);

/*
 * Write a file atomically (temp name, then rename) with mode.  path must be
 * absolute and inside the workdir, without ".." components; anything else
 * is refused with SO_EINVAL.  Parent directories must exist.
 */
int conn_put(struct conn *c, const char *path, const void *data, size_t len,
    int mode, struct so_err *err);

/*
 * Read a file without running a command (SFTP for ssh hosts, so no login
 * shell starts): all of it, or its last max bytes when it is longer, into
 * a new NUL-terminated string the caller frees; *len gets its length.
 * SO_ENOTFOUND when path does not exist.  path must be inside the workdir.
 */
int conn_read(struct conn *c, const char *path, size_t max, char **out,
    size_t *len, struct so_err *err);

/*
 * The permission bits of path (which must be inside the workdir) in
 * *mode; SO_ENOTFOUND when it does not exist.  No command runs.
 */
int conn_stat(struct conn *c, const char *path, int *mode,
    struct so_err *err);

/*
 * Run cmd and capture its stdout (at most max bytes; more is SO_EPROTO)
 * into a new string the caller frees.  conn_capture allows 60 s;
 * conn_capture_ex takes the limit and keeps stderr in errbuf (may be NULL).
 */
int conn_capture(struct conn *c, const char *cmd, size_t max, char **out,
    int *status, struct so_err *err);
int conn_capture_ex(struct conn *c, const char *cmd, size_t max,
    int timeout_ms, char *errbuf, size_t errlen, char **out, int *status,
    struct so_err *err);

void conn_close(struct conn *c);

/* Transports, for conn_open only. */
int local_open(const struct host *h, struct conn **out, struct so_err *err);
int ssh_open(const struct host *h, int flags, struct conn **out,
    struct so_err *err);

#endif

/*
 * Files over SFTP for the SSH transport, as OpenSSH's sftp-client.c:
 * atomic uploads (a temporary name, the exact mode, then a rename),
 * reads of a file's tail, stat, and creating the workdir, all without
 * starting a shell on the host.  SFTP starts on first use.
 */
#include "ssh-int.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	int64_t deadline = ssh_now_ms() + s->stall_ms;
	struct exec_io probe = { .timeout_ms = s->stall_ms };
	struct so_err perr;
	char buf[256];
	int rc = 0, w = 0, status;

	if ((rc = ssh_check_alive(c, err)) != 0)
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
	if (ssh_session_lost(rc))
		return ssh_fail(c, rc, "starting sftp", err);
	/*
	 * sshd starts an sftp-server through the login shell too, so what its
	 * startup files print lands in the SFTP stream and breaks it (OpenSSH's
	 * sftp: "received message too long").  A command says whether they do.
	 */
	if (ssh_exec(c, "true", &probe, &status, &perr) == 0 &&
	    s->banner[0] != '\0')
		return so_error(err, SO_ESSH, "host \"%s\": cannot start sftp: "
		    "the login shell prints \"%s\" before every command, which "
		    "corrupts the sftp stream (make its startup files print "
		    "nothing when the shell is not interactive; docs/ssh.md)",
		    c->host->name, s->banner);
	if (absent != NULL)
		*absent = 1;
	return so_error(err, SO_ESSH, "host \"%s\": cannot start sftp: %s "
	    "(uploads need a \"Subsystem sftp\" line in the host's "
	    "sshd_config)", c->host->name, ssh_lasterr(s, buf, sizeof buf));
}

/* A failed SFTP call on path: the server's status, or the session's. */
static int
sftp_fail(struct conn *c, int rc, const char *what, const char *path,
    struct so_err *err)
{
	struct ssh *s = c->impl;
	struct strbuf doing = STRBUF_INIT;

	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL)
		return so_error(err, SO_EIO, "host \"%s\": %s \"%s\": %s",
		    c->host->name, what, path,
		    sftp_text(libssh2_sftp_last_error(s->sftp)));
	strbuf_addf(&doing, "%s \"%s\"", what, path);
	rc = ssh_fail(c, rc, doing.buf, err);
	strbuf_release(&doing);
	return rc;
}

/*
 * SFTP's rename, with the flags that ask to replace where the protocol
 * version has them (OpenSSH speaks version 3, whose rename never does).
 */
static int
sftp_rename(struct ssh *s, const char *from, const char *to,
    int64_t deadline)
{
	int rc, w = 0;

	do
		rc = libssh2_sftp_rename_ex(s->sftp, from,
		    (unsigned int)strlen(from), to, (unsigned int)strlen(to),
		    LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
		    LIBSSH2_SFTP_RENAME_NATIVE);
	while (ssh_again(s, rc, deadline, &w));
	return rc;
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
	int64_t deadline = ssh_now_ms() + s->stall_ms;
	int rc, w = 0;

#if LIBSSH2_VERSION_NUM >= 0x010b00
	do
		rc = libssh2_sftp_posix_rename_ex(s->sftp, from, strlen(from),
		    to, strlen(to));
	while (ssh_again(s, rc, deadline, &w));
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return rc;
#endif
	if ((rc = sftp_rename(s, from, to, deadline)) !=
	    LIBSSH2_ERROR_SFTP_PROTOCOL)
		return rc;
	do
		rc = libssh2_sftp_unlink_ex(s->sftp, to,
		    (unsigned int)strlen(to));
	while (ssh_again(s, rc, deadline, &w));
	if (rc != 0 && rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return rc;
	return sftp_rename(s, from, to, deadline);
}

/* After a failed put: close the handle and remove the temporary file. */
static void
sftp_discard(struct ssh *s, LIBSSH2_SFTP_HANDLE *fh, const char *tmp)
{
	int64_t deadline = ssh_now_ms() + CLOSE_MS;
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
	if (ssh_session_lost(rc))
		s->dead = 1;
}

int
ssh_put(struct conn *c, const char *path, const void *data, size_t len,
    int mode, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_HANDLE *fh = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	char *tmp = NULL;
	int64_t deadline = ssh_now_ms() + s->stall_ms;
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
			deadline = ssh_now_ms() + s->stall_ms;
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
	int64_t deadline = ssh_now_ms() + s->stall_ms;
	int rc, w = 0;

	do
		rc = libssh2_sftp_stat_ex(s->sftp, path,
		    (unsigned int)strlen(path), LIBSSH2_SFTP_STAT, attrs);
	while (ssh_again(s, rc, deadline, &w));
	return rc;
}

int
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

int
ssh_read(struct conn *c, const char *path, size_t max, char **out,
    size_t *len, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_HANDLE *fh = NULL;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int64_t deadline = ssh_now_ms() + s->stall_ms;
	char *buf = NULL, *grown;
	size_t got = 0, cap = 0;
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
	/*
	 * Sized by the file, not by max (64 MiB were allocated to read back
	 * a few KiB), and grown if the file grows or has no size.
	 */
	if (attrs.flags & LIBSSH2_SFTP_ATTR_SIZE)
		cap = attrs.filesize < max ? (size_t)attrs.filesize : max;
	buf = malloc(cap + 1);
	for (;;) {
		if (buf != NULL && got == cap && cap < max) {
			cap = grow_size(cap, cap + 1, max);
			grown = realloc(buf, cap + 1);
			if (grown == NULL)
				free(buf);
			buf = grown;
		}
		if (buf == NULL) {
			rc = so_error(err, SO_ENOMEM, "host \"%s\": no memory "
			    "for the %zu bytes of \"%s\"", c->host->name,
			    cap + 1, path);
			goto out;
		}
		if (got == cap)
			break;
		n = libssh2_sftp_read(fh, buf + got, cap - got);
		if (n > 0) {
			got += (size_t)n;
			deadline = ssh_now_ms() + s->stall_ms;
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
		if (ssh_session_lost(crc))
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
int
ssh_workdir(struct conn *c, const char *wd, char **abs, struct so_err *err)
{
	struct ssh *s = c->impl;
	LIBSSH2_SFTP_ATTRIBUTES attrs;
	int64_t deadline = ssh_now_ms() + s->stall_ms;
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

/*
 * Transport-independent connection helpers: open/close dispatch, workdir
 * resolution, the confinement rule for remote writes.
 */
#include "conn.h"
#include "remote-scripts.h"
#include "remote.h"
#include "strbuf.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

/*
 * A command's output, grown as it arrives up to max: most commands print
 * a line or two, and allocating max (up to 8 MiB) up front for each, on
 * every host at once, cost memory that was never used.
 */
struct capture {
	char *buf;
	size_t len, room, max;
};

static int
capture_out(void *arg, const char *buf, size_t len)
{
	struct capture *c = arg;
	size_t room;
	char *grown;

	if (len > c->max - c->len)
		return SO_EPROTO;
	if (c->len + len + 1 > c->room) {
		room = grow_size(c->room, c->len + len + 1, c->max + 1);
		if ((grown = realloc(c->buf, room)) == NULL)
			return SO_ENOMEM;
		c->buf = grown;
		c->room = room;
	}
	memcpy(c->buf + c->len, buf, len);
	c->len += len;
	c->buf[c->len] = '\0';
	return 0;
}

int
conn_capture_ex(struct conn *c, const char *cmd, size_t max, int timeout_ms,
    char *errbuf, size_t errlen, char **out, int *status, struct so_err *err)
{
	struct capture cap = { NULL, 0, 0, max };
	char own[512] = "";
	struct exec_io io = { .on_stdout = capture_out, .arg = &cap,
	    .errbuf = errbuf ? errbuf : own,
	    .errlen = errbuf ? errlen : sizeof own, .timeout_ms = timeout_ms };
	int rc;

	rc = conn_exec(c, cmd, &io, status, err);
	if (rc == SO_EPROTO)
		rc = so_error(err, SO_EPROTO, "host \"%s\": output of \"%.200s\" "
		    "is longer than %zu bytes", c->host->name, cmd, max);
	else if (rc == SO_ENOMEM)
		rc = so_error(err, SO_ENOMEM, "host \"%s\": no memory for the "
		    "output of \"%.200s\" (%zu bytes so far)", c->host->name,
		    cmd, cap.len);
	if (rc != 0) {
		free(cap.buf);
		return rc;
	}
	*out = cap.buf != NULL ? cap.buf : xstrdup("");
	return 0;
}

int
conn_capture(struct conn *c, const char *cmd, size_t max, char **out,
    int *status, struct so_err *err)
{
	return conn_capture_ex(c, cmd, max, 60000, NULL, 0, out, status, err);
}

/*
 * Resolve the workdir to an absolute path and create it: "~/x" is taken
 * relative to the host's home directory.  The transport does it without a
 * shell where it can (a login shell's rc files may cost more than all the
 * rest of a warm deploy); otherwise one shell command does.
 */
static int
resolve_workdir(struct conn *c, struct so_err *err)
{
	const char *wd = c->host->workdir;
	struct strbuf cmd = STRBUF_INIT;
	char *out = NULL;
	int status, rc;

	if (strcmp(wd, "~") != 0 && strncmp(wd, "~/", 2) != 0 && wd[0] != '/')
		return so_error(err, SO_EINVAL, "host \"%s\": workdir \"%s\" "
		    "must be absolute or start with ~/", c->host->name, wd);
	if ((rc = c->ops->workdir(c, wd, &c->workdir, err)) <= 0)
		return rc;
	if (wd[0] == '~')
		rcmd_script(&cmd, rscript_workdir_home, (const char *const[]){
		    "dir", wd[1] ? wd + 2 : ".", NULL });
	else
		rcmd_script(&cmd, rscript_workdir_abs, (const char *const[]){
		    "dir", wd, NULL });
	rc = conn_capture(c, cmd.buf, 4096, &out, &status, err);
	if (rc == 0 && (status != 0 || out[0] != '/'))
		rc = so_error(err, SO_EIO, "host \"%s\": cannot create "
		    "workdir \"%s\"", c->host->name, wd);
	if (rc == 0) {
		out[strcspn(out, "\n")] = '\0';
		c->workdir = xstrdup(out);
	}
	free(out);
	strbuf_release(&cmd);
	return rc;
}

int
conn_open(const struct host *h, int flags, struct conn **out,
    struct so_err *err)
{
	struct conn *c = NULL;
	int rc;

	*out = NULL;
	double t0 = trace_now_ms();

	if (h->transport == TRANSPORT_LOCAL)
		rc = local_open(h, &c, err);
	else
		rc = ssh_open(h, flags, &c, err);
	trace_op(h->name, "connect", h->transport == TRANSPORT_LOCAL ?
	    "(local)" : h->address ? h->address : "", t0, rc, -1, err->msg);
	if (rc != 0)
		return rc;
	if ((rc = resolve_workdir(c, err)) != 0) {
		conn_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int
conn_exec(struct conn *c, const char *cmd, const struct exec_io *io,
    int *status, struct so_err *err)
{
	struct exec_io own = { 0 };
	double t0 = trace_now_ms();
	int rc;

	if (io != NULL)
		own = *io;
	if (own.stop == NULL)
		own.stop = c->stop;
	rc = c->ops->exec(c, cmd, &own, status, err);
	trace_op(c->host->name, "exec", cmd, t0, rc, rc == 0 ? *status : -1,
	    err->msg);
	return rc;
}

/*
 * Inside the workdir, absolute, and no ".." component; else SO_EINVAL
 * saying that we refuse to do what (write, read, look at) with path.
 */
static int
confined(struct conn *c, const char *path, const char *what,
    struct so_err *err)
{
	size_t n = strlen(c->workdir);
	const char *p;

	if (strncmp(path, c->workdir, n) != 0 || path[n] != '/')
		goto refuse;
	for (p = path; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			goto refuse;
	return 0;
refuse:
	return so_error(err, SO_EINVAL, "host \"%s\": refusing to %s \"%s\" "
	    "outside workdir \"%s\"", c->host->name, what, path, c->workdir);
}

int
conn_put(struct conn *c, const char *path, const void *data, size_t len,
    int mode, struct so_err *err)
{
	double t0 = trace_now_ms();
	int rc;

	if ((rc = confined(c, path, "write", err)) != 0)
		return rc;
	rc = c->ops->put(c, path, data, len, mode, err);
	trace_op(c->host->name, "put", path, t0, rc, -1, err->msg);
	return rc;
}

int
conn_read(struct conn *c, const char *path, size_t max, char **out,
    size_t *len, struct so_err *err)
{
	double t0 = trace_now_ms();
	int rc;

	if ((rc = confined(c, path, "read", err)) != 0)
		return rc;
	rc = c->ops->read(c, path, max, out, len, err);
	trace_op(c->host->name, "read", path, t0, rc, -1, err->msg);
	return rc;
}

int
conn_stat(struct conn *c, const char *path, int *mode, struct so_err *err)
{
	double t0 = trace_now_ms();
	int rc;

	if ((rc = confined(c, path, "look at", err)) != 0)
		return rc;
	rc = c->ops->stat(c, path, mode, err);
	/* A missing file is an answer, not a failure. */
	trace_op(c->host->name, "stat", path, t0, rc == SO_ENOTFOUND ? 0 : rc,
	    -1, err->msg);
	return rc;
}

void
conn_close(struct conn *c)
{
	char *wd;

	if (c == NULL)
		return;
	wd = c->workdir;
	c->ops->close(c);
	free(wd);
}

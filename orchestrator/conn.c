/*
 * Transport-independent connection helpers: open/close dispatch, workdir
 * resolution, the confinement rule for remote writes, shell quoting.
 */
#include "conn.h"

#include <stdlib.h>
#include <string.h>

char *
sh_quote(const char *s)
{
	size_t n = 2, i, j = 0;
	char *q;

	for (i = 0; s[i]; i++)
		n += s[i] == '\'' ? 4 : 1;
	q = xmalloc(n + 1);
	q[j++] = '\'';
	for (i = 0; s[i]; i++) {
		if (s[i] == '\'') {
			memcpy(q + j, "'\\''", 4);
			j += 4;
		} else
			q[j++] = s[i];
	}
	q[j++] = '\'';
	q[j] = '\0';
	return q;
}

struct capture {
	char *buf;
	size_t len, max;
};

static int
capture_out(void *arg, const char *buf, size_t len)
{
	struct capture *c = arg;

	if (c->len + len > c->max)
		return SO_EPROTO;
	memcpy(c->buf + c->len, buf, len);
	c->len += len;
	c->buf[c->len] = '\0';
	return 0;
}

int
conn_capture(struct conn *c, const char *cmd, size_t max, char **out,
    int *status, struct so_err *err)
{
	struct capture cap = { xmalloc(max + 1), 0, max };
	char errbuf[512] = "";
	struct exec_io io = { .on_stdout = capture_out, .arg = &cap,
	    .errbuf = errbuf, .errlen = sizeof errbuf, .timeout_ms = 60000 };
	int rc;

	cap.buf[0] = '\0';
	rc = conn_exec(c, cmd, &io, status, err);
	if (rc == SO_EPROTO)
		rc = so_error(err, SO_EPROTO, "host \"%s\": output of \"%s\" "
		    "is longer than %zu bytes", c->host->name, cmd, max);
	if (rc != 0) {
		free(cap.buf);
		return rc;
	}
	*out = cap.buf;
	return 0;
}

/* Expand a leading "~/" against the host's $HOME and create the dir. */
static int
resolve_workdir(struct conn *c, struct so_err *err)
{
	const char *wd = c->host->workdir;
	char *home = NULL, *q = NULL, *cmd = NULL;
	int status, rc;

	if (strncmp(wd, "~/", 2) == 0 || strcmp(wd, "~") == 0) {
		rc = conn_capture(c, "printf '%s' \"$HOME\"", 4096, &home,
		    &status, err);
		if (rc != 0)
			goto out;
		if (status != 0 || home[0] != '/') {
			rc = so_error(err, SO_EINVAL, "host \"%s\": cannot "
			    "resolve \"~\" in workdir \"%s\"",
			    c->host->name, wd);
			goto out;
		}
		c->workdir = xasprintf("%s%s", home, wd + 1);
	} else if (wd[0] == '/')
		c->workdir = xstrdup(wd);
	else {
		rc = so_error(err, SO_EINVAL, "host \"%s\": workdir \"%s\" "
		    "must be absolute or start with ~/", c->host->name, wd);
		goto out;
	}
	q = sh_quote(c->workdir);
	cmd = xasprintf("mkdir -p -- %s", q);
	rc = conn_exec(c, cmd, NULL, &status, err);
	if (rc == 0 && status != 0)
		rc = so_error(err, SO_EIO, "host \"%s\": cannot create "
		    "workdir \"%s\"", c->host->name, c->workdir);
out:
	free(cmd);
	free(q);
	free(home);
	return rc;
}

int
conn_open(const struct host *h, int flags, struct conn **out,
    struct so_err *err)
{
	struct conn *c = NULL;
	int rc;

	*out = NULL;
	if (h->transport == TRANSPORT_LOCAL)
		rc = local_open(h, &c, err);
	else
		rc = ssh_open(h, flags, &c, err);
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
	static const struct exec_io none;

	return c->ops->exec(c, cmd, io != NULL ? io : &none, status, err);
}

/* Inside the workdir, absolute, and no ".." component. */
static int
confined(const char *workdir, const char *path)
{
	size_t n = strlen(workdir);
	const char *p;

	if (strncmp(path, workdir, n) != 0 || path[n] != '/')
		return 0;
	for (p = path; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return 0;
	return 1;
}

int
conn_put(struct conn *c, const char *path, const void *data, size_t len,
    int mode, struct so_err *err)
{
	if (!confined(c->workdir, path))
		return so_error(err, SO_EINVAL, "host \"%s\": refusing to "
		    "write \"%s\" outside workdir \"%s\"", c->host->name,
		    path, c->workdir);
	return c->ops->put(c, path, data, len, mode, err);
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

/*
 * The local transport: commands through /bin/sh in their own process
 * group (so a timeout or Ctrl-C stops the whole tree), files written
 * directly.  It mirrors ssh.c so the local host is deployed, built and run
 * exactly like a remote one.
 */
#include "conn.h"
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Stop the command's process group: TERM, a grace period, then KILL. */
static void
stop_group(pid_t pid)
{
	int i;

	kill(-pid, SIGTERM);
	for (i = 0; i < 20; i++) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		usleep(50000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int
local_exec(struct conn *c, const char *cmd, const struct exec_io *io,
    int *status, struct so_err *err)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	struct pollfd pfd[2];
	long long deadline = io->timeout_ms > 0 ? now_ms() + io->timeout_ms : 0;
	size_t errused = 0;
	char buf[16384];
	struct strbuf prog = STRBUF_INIT;
	pid_t pid = -1;
	int rc = 0, open_fds = 2, wst;

	/* Built before the fork: the child only execs it. */
	rcmd_sh(&prog, cmd);
	if (pipe(out) != 0 || pipe(errp) != 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": pipe: %s",
		    c->host->name, strerror(errno));
		goto out;
	}
	if ((pid = fork()) < 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": fork: %s",
		    c->host->name, strerror(errno));
		goto out;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(out[1], 1);
		dup2(errp[1], 2);
		close(out[0]);
		close(errp[0]);
		close(out[1]);
		close(errp[1]);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", prog.buf, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(out[1]);
	close(errp[1]);
	out[1] = errp[1] = -1;
	if (io->errbuf != NULL && io->errlen > 0)
		io->errbuf[0] = '\0';

	pfd[0].fd = out[0];
	pfd[1].fd = errp[0];
	pfd[0].events = pfd[1].events = POLLIN;
	while (open_fds > 0) {
		int i, wait = 200;

		if (io->stop != NULL && *io->stop) {
			stop_group(pid);
			pid = -1;
			rc = so_error(err, SO_EINTR, "host \"%s\": "
			    "interrupted", c->host->name);
			goto out;
		}
		if (deadline && now_ms() >= deadline) {
			stop_group(pid);
			pid = -1;
			rc = so_error(err, SO_ETIMEOUT, "host \"%s\": command "
			    "timed out after %d ms", c->host->name,
			    io->timeout_ms);
			goto out;
		}
		if (poll(pfd, 2, wait) < 0 && errno != EINTR) {
			rc = so_error(err, SO_EIO, "poll: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (pfd[i].fd < 0 ||
			    !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pfd[i].fd, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				if (i == 0)
					out[0] = -1;
				else
					errp[0] = -1;
				open_fds--;
				continue;
			}
			if (i == 0 && io->on_stdout != NULL &&
			    (rc = io->on_stdout(io->arg, buf, (size_t)n)) != 0) {
				stop_group(pid);
				pid = -1;
				goto out;
			}
			if (i == 1 && io->errbuf != NULL &&
			    errused + 1 < io->errlen) {
				size_t k = (size_t)n;

				if (k > io->errlen - 1 - errused)
					k = io->errlen - 1 - errused;
				memcpy(io->errbuf + errused, buf, k);
				errused += k;
				io->errbuf[errused] = '\0';
			}
		}
	}
	while (waitpid(pid, &wst, 0) < 0) {
		if (errno != EINTR) {
			rc = so_error(err, SO_EIO, "waitpid: %s",
			    strerror(errno));
			goto out;
		}
	}
	pid = -1;
	*status = WIFEXITED(wst) ? WEXITSTATUS(wst) :
	    128 + WTERMSIG(wst);
out:
	if (pid > 0)
		stop_group(pid);
	if (out[0] >= 0)
		close(out[0]);
	if (out[1] >= 0)
		close(out[1]);
	if (errp[0] >= 0)
		close(errp[0]);
	if (errp[1] >= 0)
		close(errp[1]);
	strbuf_release(&prog);
	return rc;
}

static int
local_put(struct conn *c, const char *path, const void *data, size_t len,
    int mode, struct so_err *err)
{
	static unsigned seq;	/* threads of one process write too */
	char *tmp = xasprintf("%s.tmp.%ld.%u", path, (long)getpid(),
	    __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	const char *p = data;
	int fd, rc = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot create \"%s\": "
		    "%s", c->host->name, tmp, strerror(errno));
		goto out;
	}
	/* The umask applies at open; the mode must be exact, as over SFTP. */
	if (fchmod(fd, (mode_t)mode) != 0)
		rc = so_error(err, SO_EIO, "host \"%s\": chmod \"%s\": %s",
		    c->host->name, tmp, strerror(errno));
	while (rc == 0 && len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = so_error(err, SO_EIO, "host \"%s\": write \"%s\": "
			    "%s", c->host->name, tmp, strerror(errno));
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0 && rc == 0)
		rc = so_error(err, SO_EIO, "host \"%s\": close \"%s\": %s",
		    c->host->name, tmp, strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0)
		rc = so_error(err, SO_EIO, "host \"%s\": rename to \"%s\": %s",
		    c->host->name, path, strerror(errno));
	if (rc != 0)
		unlink(tmp);
out:
	free(tmp);
	return rc;
}

static int
local_read(struct conn *c, const char *path, size_t max, char **out,
    size_t *len, struct so_err *err)
{
	struct stat st;
	char *buf = NULL, *grown;
	size_t got = 0, cap;
	off_t from;
	int fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return errno == ENOENT ? SO_ENOTFOUND : so_error(err, SO_EIO,
		    "host \"%s\": cannot read \"%s\": %s", c->host->name, path,
		    strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot read \"%s\": "
		    "%s", c->host->name, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot read \"%s\": "
		    "not a regular file", c->host->name, path);
		goto out;
	}
	from = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
	/*
	 * Sized by the file, not by max (a limit of 64 MiB was allocated
	 * whole to read back a few KiB), and grown if the file grows.
	 */
	cap = (size_t)(st.st_size - from);
	if ((buf = malloc(cap + 1)) == NULL)
		goto nomem;
	for (;;) {
		ssize_t n;

		if (got == cap) {
			if (cap == max)
				break;
			cap = grow_size(cap, cap + 1, max);
			if ((grown = realloc(buf, cap + 1)) == NULL)
				goto nomem;
			buf = grown;
		}
		n = pread(fd, buf + got, cap - got, from + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = so_error(err, SO_EIO, "host \"%s\": cannot read "
			    "\"%s\": %s", c->host->name, path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	buf = NULL;
	goto out;
nomem:
	rc = so_error(err, SO_ENOMEM, "host \"%s\": no memory for the %zu "
	    "bytes of \"%s\"", c->host->name, cap + 1, path);
out:
	free(buf);
	close(fd);
	return rc;
}

static int
local_stat(struct conn *c, const char *path, int *mode, struct so_err *err)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno == ENOENT ? SO_ENOTFOUND : so_error(err, SO_EIO,
		    "host \"%s\": cannot look at \"%s\": %s", c->host->name,
		    path, strerror(errno));
	*mode = (int)(st.st_mode & 07777);
	return 0;
}

/* mkdir -p wd ("~/x" under $HOME, as a shell's cd would), then realpath. */
static int
local_workdir(struct conn *c, const char *wd, char **abs, struct so_err *err)
{
	struct stat st;
	char *path, *p, real[PATH_MAX], save, *home;
	int rc = 0;

	if (wd[0] == '~') {
		if ((home = user_home()) == NULL)
			return so_error(err, SO_EINVAL, "host \"%s\": no home "
			    "directory for workdir \"%s\"", c->host->name, wd);
		path = xasprintf("%s/%s", home, wd[1] ? wd + 2 : "");
		free(home);
	} else
		path = xstrdup(wd);
	for (p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		save = *p;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			rc = so_error(err, SO_EIO, "host \"%s\": cannot create "
			    "workdir \"%s\": %s: %s", c->host->name, wd, path,
			    strerror(errno));
			goto out;
		}
		*p = save;
		if (save == '\0')
			break;
	}
	if (realpath(path, real) == NULL || stat(real, &st) != 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot create workdir "
		    "\"%s\": %s", c->host->name, wd, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = so_error(err, SO_EIO, "host \"%s\": workdir \"%s\" is "
		    "not a directory", c->host->name, wd);
		goto out;
	}
	*abs = xstrdup(real);
out:
	free(path);
	return rc;
}

static void
local_close(struct conn *c)
{
	free(c);
}

static const struct conn_ops local_ops = {
	.exec = local_exec,
	.put = local_put,
	.read = local_read,
	.stat = local_stat,
	.workdir = local_workdir,
	.close = local_close,
};

int
local_open(const struct host *h, struct conn **out, struct so_err *err)
{
	struct conn *c = xcalloc(1, sizeof *c);

	(void)err;
	c->ops = &local_ops;
	c->host = h;
	*out = c;
	return 0;
}

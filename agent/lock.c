/*
 * Host lock (lock.h).  The holder text is written as one line: the text
 * and its newline first, then the file is cut to that length, so a reader
 * racing with a new holder reads up to the first newline and sees one
 * whole name, never a mix of two.
 */
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* A new holder writes its name right after flock(): wait up to 0.5 s. */
#define HOLDER_TRIES 50
#define HOLDER_PAUSE_NS 10000000L

int
lock_open(const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		snprintf(why, whylen, "%s", strerror(errno));
	return fd;
}

/* Holder text up to its newline: 1 when the line is whole, 0 if not yet. */
static int
read_holder(int fd, char *holder, size_t len)
{
	ssize_t n = pread(fd, holder, len - 1, 0);
	size_t line;

	if (n < 0)
		return -1;
	holder[n] = '\0';
	line = strcspn(holder, "\n");
	if (holder[line] != '\n')
		return 0;
	holder[line] = '\0';
	return 1;
}

int
lock_try(int fd, char *holder, size_t holderlen, char *why, size_t whylen)
{
	struct timespec pause = { 0, HOLDER_PAUSE_NS };
	int rc, i;

	while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
		continue;
	if (rc == 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		snprintf(why, whylen, "flock: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < HOLDER_TRIES; i++) {
		if ((rc = read_holder(fd, holder, holderlen)) < 0) {
			snprintf(why, whylen, "cannot read the holder: %s",
			    strerror(errno));
			return -1;
		}
		if (rc == 1)
			break;
		nanosleep(&pause, NULL);
	}
	return 1;
}

int
lock_wait(int fd, char *why, size_t whylen)
{
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			snprintf(why, whylen, "flock: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
lock_claim(int fd, const char *holder, char *why, size_t whylen)
{
	size_t n = strlen(holder);
	char *line = malloc(n + 1);
	ssize_t w;
	int rc = -1;

	if (line == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	memcpy(line, holder, n);
	line[n] = '\n';
	w = pwrite(fd, line, n + 1, 0);
	if (w >= 0 && (size_t)w != n + 1) {
		snprintf(why, whylen, "short write");
		goto out;
	}
	if (w < 0 || ftruncate(fd, (off_t)(n + 1)) != 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(line);
	return rc;
}

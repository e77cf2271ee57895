/*
 * The host lock: an exclusive flock() on a file in the workdir, held by
 * the agent from just before its measurement window until it exits, so
 * that agents started by different coordinators never time at the same
 * time on one host.  The kernel drops the lock when the holder dies, so a
 * crashed or killed agent never leaves a stale lock behind.
 */
#ifndef SEQORCH_AGENT_LOCK_H
#define SEQORCH_AGENT_LOCK_H

#include <stddef.h>

/* Open or create path (mode 0644).  Returns the fd, or -1 with why set. */
int lock_open(const char *path, char *why, size_t whylen);

/*
 * Try to take the lock without blocking.  Returns 0 when it is now held,
 * 1 when another process holds it (its holder text, as it wrote it with
 * lock_claim, is then copied to holder; empty when it wrote none), or -1
 * with why set.
 */
int lock_try(int fd, char *holder, size_t holderlen, char *why,
    size_t whylen);

/* Block until the lock is ours.  Returns 0, or -1 with why set. */
int lock_wait(int fd, char *why, size_t whylen);

/*
 * Write holder (one line, no newline) into the held lock file for those
 * who wait on it.  Returns 0, or -1 with why set.
 */
int lock_claim(int fd, const char *holder, char *why, size_t whylen);

#endif

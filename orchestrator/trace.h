/*
 * SEQORCH_TRACE, like GIT_TRACE: every operation on a host (connect,
 * command, upload, read, stat) with its duration and outcome, one line
 * each.  SEQORCH_TRACE=1 (or "true") writes to stderr; an absolute path
 * appends to that file; unset, empty or "0" traces nothing.  Safe from any
 * thread.
 */
#ifndef SEQORCH_TRACE_H
#define SEQORCH_TRACE_H

#include <stdint.h>

/* Is tracing on?  (Read from the environment once.) */
int trace_enabled(void);

/* Monotonic milliseconds, for durations. */
double trace_now_ms(void);

/*
 * One line: host, operation ("exec", "put"...), its subject (a command or
 * a path; cut and made printable), and the outcome: rc < 0 is an error
 * (msg says which), else status is the command's exit status (ignored
 * with status < 0).
 */
void trace_op(const char *host, const char *op, const char *subject,
    double started_ms, int rc, int status, const char *msg);

#endif

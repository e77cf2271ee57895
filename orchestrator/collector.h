/*
 * POST a signed bundle to a collector over HTTPS (libcurl), for `seqorch
 * publish`.  TLS verification is always on; a token, when given, goes in
 * an Authorization: Bearer header.  5xx answers and connection errors are
 * retried with exponential backoff; 4xx are not; a redirect is followed
 * only to the same scheme, host and port (a redirect elsewhere would carry
 * the token there).
 *
 * A 2xx status is the end: the collector has the bundle, so nothing is
 * sent again, even when the connection drops before the answer's body
 * ends.  Each wait is capped at COLLECTOR_BACKOFF_MAX seconds.
 *
 * Returns 0 on a 2xx answer (its status in res), else a negative SO_E*
 * code with err naming the URL, the status and the first line of the body
 * (as collector_shown makes it: bounded, without the token).
 */
#ifndef SEQORCH_COLLECTOR_H
#define SEQORCH_COLLECTOR_H

#include "util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define COLLECTOR_BACKOFF_MAX 30.0	/* seconds, the longest wait */
#define COLLECTOR_SHOWN_MAX 200		/* bytes of an answer shown */

struct collector_opts {
	const char *url;		/* https:// only */
	const char *token;		/* or NULL */
	const char *cacert;		/* CA bundle file, or NULL: the system's */
	int attempts;			/* tries in all, at least 1 */
	double backoff;			/* seconds before the 2nd try; doubles */
	FILE *log;			/* progress, or NULL */
};

struct collector_result {
	long status;			/* HTTP status of the last answer */
	int attempts;			/* tries made */
	char body[512];			/* collector_shown of the answer's body */
	int cut;			/* a 2xx answer's body was cut short */
};

/*
 * The wait in seconds before try number retry + 1 (retry >= 1): first,
 * then doubled each time, never more than COLLECTOR_BACKOFF_MAX.
 */
double collector_backoff(double first, int retry);

/*
 * What is shown of an answer (body, len bytes, not NUL terminated): its
 * first line, control bytes as '?', at most COLLECTOR_SHOWN_MAX bytes
 * ("..." marks a cut), with token (when not NULL) and whatever follows
 * "Bearer " or "Authorization:" replaced by "[redacted]": collectors
 * that echo a request would otherwise put the token in a CI log.
 */
void collector_shown(const char *body, size_t len, const char *token,
    char *out, size_t outlen);

/*
 * POST the len bytes of fd from its start (read with pread, again from
 * the start for each try), as application/x-tar.
 */
int collector_post(const struct collector_opts *o, int fd, uint64_t len,
    struct collector_result *res, struct so_err *err);

#endif

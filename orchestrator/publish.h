/*
 * POST a signed bundle to a collector over HTTPS (libcurl), for `seqorch
 * publish`.  TLS verification is always on; a token, when given, goes in
 * an Authorization: Bearer header.  5xx answers and connection errors are
 * retried with exponential backoff; 4xx are not; a redirect is followed
 * only to the same scheme, host and port (a redirect elsewhere would carry
 * the token there).
 *
 * Returns 0 on a 2xx answer (its status in res), else a negative SO_E*
 * code with err naming the URL, the status and the first line of the body.
 */
#ifndef SEQORCH_PUBLISH_H
#define SEQORCH_PUBLISH_H

#include "util.h"

#include <stddef.h>
#include <stdio.h>

struct publish_opts {
	const char *url;		/* https:// only */
	const char *token;		/* or NULL */
	const char *cacert;		/* CA bundle file, or NULL: the system's */
	int attempts;			/* tries in all, at least 1 */
	double backoff;			/* seconds before the 2nd try; doubles */
	FILE *log;			/* progress, or NULL */
};

struct publish_result {
	long status;			/* HTTP status of the last answer */
	int attempts;			/* tries made */
	char body[512];			/* first line of the answer's body */
};

int publish_post(const struct publish_opts *o, const void *data, size_t len,
    struct publish_result *res, struct so_err *err);

#endif

/* SEQORCH_TRACE: one line per operation on a host (trace.h). */
#include "trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SUBJECT_MAX 300

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

static void
setup(void)
{
	const char *v = getenv("SEQORCH_TRACE");

	if (v == NULL || *v == '\0' || strcmp(v, "0") == 0 ||
	    strcmp(v, "false") == 0)
		return;
	if (v[0] == '/') {
		/* A trace file that cannot be opened must not stop a run. */
		if ((out = fopen(v, "a")) == NULL)
			fprintf(stderr, "seqorch: cannot open SEQORCH_TRACE "
			    "file \"%s\": tracing to stderr\n", v);
		else
			setvbuf(out, NULL, _IOLBF, 0);
	}
	if (out == NULL)
		out = stderr;
}

int
trace_enabled(void)
{
	pthread_once(&once, setup);
	return out != NULL;
}

double
trace_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void
trace_op(const char *host, const char *op, const char *subject,
    double started_ms, int rc, int status, const char *msg)
{
	char s[SUBJECT_MAX + 4];
	size_t i;

	if (!trace_enabled())
		return;
	snprintf(s, sizeof s, "%.*s%s", SUBJECT_MAX, subject,
	    strlen(subject) > SUBJECT_MAX ? "..." : "");
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = ' ';
	pthread_mutex_lock(&mu);
	if (rc < 0)
		fprintf(out, "seqorch trace: %s: %s %s -> error after %.1f ms: "
		    "%s\n", host, op, s, trace_now_ms() - started_ms,
		    msg ? msg : "?");
	else if (status >= 0)
		fprintf(out, "seqorch trace: %s: %s %s -> exit %d after %.1f "
		    "ms\n", host, op, s, status, trace_now_ms() - started_ms);
	else
		fprintf(out, "seqorch trace: %s: %s %s -> ok after %.1f ms\n",
		    host, op, s, trace_now_ms() - started_ms);
	pthread_mutex_unlock(&mu);
}

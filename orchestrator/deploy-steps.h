/*
 * The cold build's output as it arrives (rscript_build's stdout): the
 * steps the build reports on the way ("@@seqorch:step TEXT" lines, which
 * agent/build.sh and a study's prebuild.sh write to their fd 3) are handed
 * to a callback, one line at a time; everything else is kept, byte for
 * byte, as the build's report (deploy.c's parse_report reads it).
 *
 * A struct build_stream owns its report buffer until build_stream_report
 * hands it over; build_stream_release frees what is left.
 */
#ifndef SEQORCH_DEPLOY_STEPS_H
#define SEQORCH_DEPLOY_STEPS_H

#include "deploy.h"
#include "strbuf.h"

#include <stddef.h>

/* A step line's text is cut to this many bytes (it comes from a host). */
#define STEP_MAX 160

struct build_stream {
	struct strbuf report;
	size_t max;			/* more report bytes: SO_EPROTO */
	char line[STEP_MAX + 16];	/* the line so far, while it may be a step */
	size_t nline;
	int skipping;	/* in a step line longer than line[]: drop to '\n' */
	int verbatim;	/* in a line that is not a step, or past the sections' start */
	deploy_step_fn on_step;		/* may be NULL */
	void *arg;
};

void build_stream_init(struct build_stream *s, size_t max,
    deploy_step_fn on_step, void *arg);
/* An exec_io on_stdout: 0, or SO_EPROTO when the report exceeds max. */
int build_stream_out(void *arg, const char *buf, size_t len);
/* The report (a partial last line included); the caller frees it. */
char *build_stream_report(struct build_stream *s);
void build_stream_release(struct build_stream *s);

#endif

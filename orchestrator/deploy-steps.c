/*
 * Splits a cold build's stdout into its steps (for the live progress) and
 * its report.  Steps come before the report's first section, each a line
 * of its own; from "@@seqorch:meta " on, the host's files follow and no
 * byte of them is read as a step (a build log may hold anything).
 */
#include "deploy-steps.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

#define STEP_MARK "@@seqorch:step "
#define SECTIONS_MARK "@@seqorch:meta "

void
build_stream_init(struct build_stream *s, size_t max, deploy_step_fn on_step,
    void *arg)
{
	memset(s, 0, sizeof *s);
	strbuf_init(&s->report);
	s->max = max;
	s->on_step = on_step;
	s->arg = arg;
}

static int
keep(struct build_stream *s, const char *buf, size_t len)
{
	if (s->report.len + len > s->max)
		return SO_EPROTO;
	strbuf_add(&s->report, buf, len);
	return 0;
}

/* A whole line in s->line (without its '\n'): a step, or report text. */
static int
end_line(struct build_stream *s)
{
	size_t mlen = strlen(STEP_MARK);
	int rc;

	if (s->nline >= mlen && memcmp(s->line, STEP_MARK, mlen) == 0) {
		s->line[s->nline] = '\0';
		strip_ctrl(s->line + mlen);
		if (s->on_step != NULL && s->line[mlen] != '\0')
			s->on_step(s->arg, s->line + mlen);
		s->nline = 0;
		return 0;
	}
	/* A line that ended while it could still have been a mark. */
	rc = keep(s, s->line, s->nline);
	s->nline = 0;
	return rc != 0 ? rc : keep(s, "\n", 1);
}

/* Is line[0..n) the start of mark? */
static int
starts(const char *line, size_t n, const char *mark)
{
	size_t mlen = strlen(mark);

	return memcmp(line, mark, n < mlen ? n : mlen) == 0;
}

int
build_stream_out(void *arg, const char *buf, size_t len)
{
	struct build_stream *s = arg;
	size_t mlen = strlen(STEP_MARK), i;
	int rc;

	for (i = 0; i < len; i++) {
		char ch = buf[i];

		if (s->verbatim == 2)	/* the sections: the rest, as it is */
			return keep(s, buf + i, len - i);
		if (s->verbatim == 1) {	/* a line that is no step, to its end */
			if ((rc = keep(s, &ch, 1)) != 0)
				return rc;
			s->verbatim = ch != '\n';
			continue;
		}
		if (s->skipping) {	/* past a long step's STEP_MAX bytes */
			s->skipping = ch != '\n';
			continue;
		}
		if (ch == '\n') {
			if ((rc = end_line(s)) != 0)
				return rc;
			continue;
		}
		s->line[s->nline++] = ch;
		if (s->nline > mlen || starts(s->line, s->nline, STEP_MARK)) {
			if (s->nline == mlen + STEP_MAX) {
				if ((rc = end_line(s)) != 0)
					return rc;
				s->skipping = 1;
			}
			continue;
		}
		/* Held back while it could be a step; it is not one. */
		if (starts(s->line, s->nline, SECTIONS_MARK) &&
		    s->nline < strlen(SECTIONS_MARK))
			continue;
		s->verbatim = s->nline == strlen(SECTIONS_MARK) &&
		    starts(s->line, s->nline, SECTIONS_MARK) ? 2 : 1;
		rc = keep(s, s->line, s->nline);
		s->nline = 0;
		if (rc != 0)
			return rc;
	}
	return 0;
}

char *
build_stream_report(struct build_stream *s)
{
	size_t mlen = strlen(STEP_MARK);

	/* Output that ended inside a line held back as a possible mark: it
	 * is report text unless it is a step cut short. */
	if (s->nline > 0 && !(s->nline >= mlen &&
	    memcmp(s->line, STEP_MARK, mlen) == 0))
		strbuf_add(&s->report, s->line, s->nline);
	s->nline = 0;
	return strbuf_detach(&s->report);
}

void
build_stream_release(struct build_stream *s)
{
	strbuf_release(&s->report);
}

/*
 * The agent's output stream: records, the conductor's build records
 * between its builds' and its own, and the error record of fatal().
 */
#include "emit.h"
#include "protocol.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;		/* NULL: stdout */
/*
 * While conducting, cur_build is the index of the build whose records
 * were written last, -1 for the conductor's own.
 */
static int conducting;
static int cur_build = -1;

int
emit_open(const char *path)
{
	FILE *f = fopen(path, "a");

	if (f == NULL)
		return -1;
	out = f;
	return 0;
}

FILE *
emit_stream(void)
{
	return out != NULL ? out : stdout;
}

void
emit_hex(const uint8_t *p, size_t n, char *buf)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		buf[2 * i] = d[p[i] >> 4];
		buf[2 * i + 1] = d[p[i] & 15];
	}
	buf[2 * n] = '\0';
}

/* line and a newline, flushed; a failed write ends the agent. */
static void
put_line(const char *line)
{
	FILE *f = emit_stream();

	if (line == NULL || fprintf(f, "%s\n", line) < 0 || fflush(f) != 0) {
		fprintf(stderr, "seqorch-agent: cannot write record: %s\n",
		    strerror(errno));
		exit(AG_IO);
	}
}

void
emit(struct jsonl *rec)
{
	const char *line, *why;

	/* A conductor's own record after a build's: say it is its own. */
	if (conducting && cur_build != -1) {
		struct jsonl *b = emit_new(PROTO_T_BUILD);

		cur_build = -1;
		jsonl_str(b, PROTO_F_BUILD_ID, "");
		emit(b);
	}
	if ((line = jsonl_finish(rec, &why)) == NULL) {
		/* fatal's own record is short: this does not recurse twice. */
		jsonl_free(rec);
		fatal(AG_FAIL, "cannot write a record: %s", why);
	}
	put_line(line);
	jsonl_free(rec);
}

struct jsonl *
emit_new(const char *type)
{
	struct jsonl *j = jsonl_new(type);

	if (j == NULL) {
		fprintf(stderr, "seqorch-agent: out of memory\n");
		exit(AG_FAIL);
	}
	return j;
}

void
emit_conducting(void)
{
	conducting = 1;
}

void
emit_relay(int k, const char *build_id, const char *line)
{
	if (cur_build != k) {
		struct jsonl *b = emit_new(PROTO_T_BUILD);

		jsonl_str(b, PROTO_F_BUILD_ID, build_id);
		cur_build = -1;		/* emit's check is for other records */
		emit(b);
		cur_build = k;
	}
	put_line(line);
}

void
fatal(int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	struct jsonl *o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "seqorch-agent: %s\n", msg);
	o = emit_new(PROTO_T_ERROR);
	jsonl_str(o, PROTO_F_MESSAGE, msg);
	emit(o);
	exit(code);
}

/*
 * libFuzzer target: agent output (orchestrator/proto.c).  The input is a
 * byte stream as an agent would send it: cut into lines by line_feed and
 * each line validated by proto_parse (and typed by proto_peek_type), as
 * the runner does.
 */
#include "proto.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static int
on_line(void *arg, char *line, size_t len)
{
	struct record r;
	struct so_err err;
	enum rec_type t;

	(void)arg;
	/* A refused build's lines are only typed (runner-collect.c). */
	if (proto_peek_type(line, len, &t) == 0 && proto_type_name(t)[0] ==
	    '?')
		__builtin_trap();
	if (proto_parse(line, len, &r, &err) == 0)
		proto_record_free(&r);
	else if (memchr(err.msg, '\0', sizeof err.msg) == NULL)
		__builtin_trap();	/* an unterminated message */
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct line_reader lr;
	struct so_err err;

	memset(&lr, 0, sizeof lr);
	line_feed(&lr, (const char *)data, size, on_line, NULL, &err);
	return 0;
}

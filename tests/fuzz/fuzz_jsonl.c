/*
 * libFuzzer target: the agent's bounded JSON-lines reader (jsonl_read,
 * agent/jsonl.c, linked as the agent links it), with the fields and
 * sizes the conductor asks for (agent/conduct.c).  Beyond memory errors
 * it traps when a refusal comes without its message, when a field it
 * found is not NUL-terminated within its buffer, or when the agent's own
 * writer, given the strings that fit, writes a record that the reader
 * then refuses or reads back differently.
 */
#include "jsonl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NFIELDS 3

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *keys[NFIELDS] = { "type", "variant", "status" };
	static const size_t sizes[NFIELDS] = { 16, 128, 16 };
	char vals[NFIELDS][128], again[NFIELDS][128], why[128];
	struct jsonl_field f[NFIELDS], g[NFIELDS];
	struct jsonl *j;
	const char *line, *err;
	size_t i;

	if (size > JSONL_MAX)
		return 0;
	for (i = 0; i < NFIELDS; i++) {
		f[i] = (struct jsonl_field){ keys[i], vals[i], sizes[i], 7 };
		g[i] = (struct jsonl_field){ keys[i], again[i], sizes[i], 7 };
	}
	memset(why, 'x', sizeof why);
	if (jsonl_read((const char *)data, size, f, NFIELDS, why,
	    sizeof why) != 0) {
		if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
			__builtin_trap();
		return 0;
	}
	for (i = 0; i < NFIELDS; i++) {
		if (f[i].found < -1 || f[i].found > 1 ||
		    memchr(vals[i], '\0', sizes[i]) == NULL)
			__builtin_trap();
	}
	/* What was read, written by the agent's writer, reads back as it. */
	if ((j = jsonl_new("x")) == NULL)
		return 0;
	for (i = 1; i < NFIELDS; i++) {
		if (f[i].found == 1)
			jsonl_str(j, keys[i], vals[i]);
	}
	if ((line = jsonl_finish(j, &err)) == NULL)
		__builtin_trap();
	if (jsonl_read(line, strlen(line), g, NFIELDS, why, sizeof why) != 0 ||
	    g[0].found != 1 || strcmp(again[0], "x") != 0)
		__builtin_trap();
	for (i = 1; i < NFIELDS; i++) {
		if (g[i].found != (f[i].found == 1) || (f[i].found == 1 &&
		    strcmp(again[i], vals[i]) != 0))
			__builtin_trap();
	}
	jsonl_free(j);
	return 0;
}

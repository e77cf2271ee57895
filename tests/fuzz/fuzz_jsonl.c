/*
 * libFuzzer target: the agent's bounded JSON-lines reader (jsonl_read,
 * agent/jsonl.c, linked as the agent links it), with the fields and
 * sizes the conductor's line check asks for (check_line, agent/conduct.c:
 * type, variant, status, build_id, token, digest), and jsonl_excerpt, the
 * excerpt of an offending line that the conductor's and the coordinator's
 * errors quote.  Beyond memory errors it traps when a refusal comes
 * without its message, when a field it found is not NUL-terminated
 * within its buffer, when the agent's own writer, given the strings that
 * fit, writes a record that the reader then refuses or reads back
 * differently, or when an excerpt (of the line, and of each field, as
 * check_line quotes them) holds anything but printable ASCII, is longer
 * than its bound or does not decode back to the bytes it shows.
 */
#include "jsonl.h"
#include "kernel.h"
#include "opts.h"
#include "protocol.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NFIELDS 6
#define EXCERPT 200		/* as agent/conduct.c's */
#define BIGGEST (2 * KERNEL_MAX_STATE + 1)

/*
 * Trap unless out (from jsonl_excerpt of s, len bytes, max) is printable
 * ASCII that decodes (\\ and \xNN) to the first min(len, max) bytes of s.
 */
static void
check_excerpt(const char *s, size_t len, size_t max)
{
	char *out = malloc(4 * max + 1);	/* exactly: ASan sees an overrun */
	size_t i = 0, n = 0, want = len < max ? len : max;
	unsigned char b;

	if (out == NULL)
		return;
	jsonl_excerpt(s, len, max, out);
	while (out[i] != '\0') {
		b = (unsigned char)out[i];
		if (b < 0x20 || b >= 0x7f || n >= want)
			__builtin_trap();
		if (b != '\\') {
			if ((unsigned char)s[n++] != b)
				__builtin_trap();
			i++;
			continue;
		}
		if (out[i + 1] == '\\') {
			if (s[n++] != '\\')
				__builtin_trap();
			i += 2;
			continue;
		}
		if (out[i + 1] != 'x' || out[i + 2] == '\0' ||
		    out[i + 3] == '\0' ||
		    (unsigned char)s[n++] != strtoul((char[]){ out[i + 2],
		    out[i + 3], '\0' }, NULL, 16))
			__builtin_trap();
		i += 4;
	}
	if (n != want || i > 4 * max)
		__builtin_trap();
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *keys[NFIELDS] = {
		PROTO_F_TYPE, PROTO_F_VARIANT, PROTO_F_STATUS,
		PROTO_F_BUILD_ID, PROTO_F_TOKEN, PROTO_F_DIGEST,
	};
	static const size_t sizes[NFIELDS] = {
		16, 128, 16, 24, MAX_TOKEN + 1, BIGGEST,
	};
	char vals[NFIELDS][BIGGEST], again[NFIELDS][BIGGEST], why[128];
	struct jsonl_field f[NFIELDS], g[NFIELDS];
	struct jsonl *j;
	const char *line, *err;
	size_t i;

	if (size > JSONL_MAX)
		return 0;
	/* An offending line's excerpt, as child_bad quotes it. */
	check_excerpt((const char *)data, size, EXCERPT);
	for (i = 0; i < NFIELDS; i++) {
		f[i] = (struct jsonl_field){ keys[i], vals[i], sizes[i], 7, 0 };
		g[i] = (struct jsonl_field){ keys[i], again[i], sizes[i], 7,
		    0 };
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
		/* check_line quotes a type and a variant so (QUOTED). */
		if (f[i].found == 1)
			check_excerpt(vals[i], strlen(vals[i]), 32);
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

/*
 * libFuzzer target: a bundle's .tar read back (bundle_untar, as `import`
 * and `verify` read a .tar bundle).  Beyond memory errors it traps when an
 * accepted archive holds a path that could leave the bundle (absolute, a
 * ".." part, a control character) or when writing the files again and
 * reading them back does not give the same files.
 */
#include "bundle.h"

#include <stdlib.h>
#include <string.h>

static int
unsafe(const char *p)
{
	const char *s;

	if (*p == '/' || strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
	    strstr(p, "/../") != NULL ||
	    (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
		return 1;
	for (s = p; *s; s++)
		if ((unsigned char)*s < 0x20)
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle b, again;
	struct so_err err;
	unsigned char *tar;
	size_t i, len;

	if (bundle_untar(data, size, "fuzz.tar", &b, &err) != 0) {
		if (b.n != 0 || memchr(err.msg, '\0', sizeof err.msg) == NULL)
			__builtin_trap();
		return 0;
	}
	for (i = 0; i < b.n; i++)
		if (unsafe(b.files[i].path))
			__builtin_trap();
	if (bundle_tar(&b, &tar, &len, &err) != 0)
		__builtin_trap();
	if (bundle_untar(tar, len, "again.tar", &again, &err) != 0 ||
	    again.n != b.n)
		__builtin_trap();
	for (i = 0; i < b.n; i++)
		if (strcmp(again.files[i].path, b.files[i].path) != 0 ||
		    again.files[i].len != b.files[i].len ||
		    memcmp(again.files[i].data, b.files[i].data,
		    b.files[i].len) != 0)
			__builtin_trap();
	free(tar);
	bundle_free(&again);
	bundle_free(&b);
	return 0;
}

/*
 * libFuzzer target: the hosts.toml front end (orchestrator/config.c over
 * toml.cc).  The input is written to a file, loaded with config_load as
 * `seqorch` does, and every host selection form is tried on it.
 */
#include "config.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof path, "/tmp/seqorch-fuzz-%ld.toml",
	    (long)getpid());
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *specs[] = { "all", "a", "@x", "a,b", "@" };
	struct config *cfg = NULL;
	struct host **hosts;
	struct so_err err;
	FILE *f = fopen(path, "wb");
	size_t i, n;

	if (f == NULL || fwrite(data, 1, size, f) != size) {
		if (f != NULL)
			fclose(f);
		return 0;
	}
	fclose(f);
	/* No ssh_config: the user's own is not part of the input. */
	if (config_load(path, "/dev/null", &cfg, &err) != 0)
		return 0;
	for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		if (config_select(cfg, specs[i], &hosts, &n, &err) == 0)
			free(hosts);
	}
	config_free(cfg);
	return 0;
}

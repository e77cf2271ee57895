/*
 * libFuzzer target: the agent's option parser (opts_parse, agent/opts.c,
 * linked as the agent links it).  The input is split at NUL bytes into
 * argv.  Beyond memory errors it traps when a refusal comes without its
 * message or with an unterminated one, or when a result breaks a rule
 * the parser promises (the options that go together).
 */
#include "opts.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *argv[MAX_ARGS + 2];
	static struct opts o;
	char *copy = malloc(size + 1), err[512];
	int argc = 1;
	size_t i;

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "seqorch-agent";
	argv[argc++] = copy;
	for (i = 0; i < size && argc <= MAX_ARGS; i++) {
		if (copy[i] == '\0')
			argv[argc++] = copy + i + 1;
	}
	argv[argc] = NULL;
	/* GNU getopt starts over, without messages, when optind is 0. */
	optind = 0;
	opterr = 0;
	memset(err, 'x', sizeof err);
	switch (opts_parse(argc, argv, &o, err, sizeof err)) {
	case OPTS_ERROR:
		if (memchr(err, '\0', sizeof err) == NULL || err[0] == '\0')
			__builtin_trap();
		break;
	case OPTS_OK:
		if ((o.lock == NULL) != (o.holder == NULL) ||
		    (o.max_cv > 0) != (o.max_samples > 0) ||
		    (o.nbuilds > 0) != o.conduct || o.nbuilds > MAX_BUILDS ||
		    o.seed_len > KERNEL_MAX_STATE || (o.serve && o.conduct) ||
		    (!o.list && !o.openssl && !o.preflight && o.study == NULL) ||
		    ((o.nstored > 0 || o.extra_from) && o.max_cv == 0) ||
		    o.nstored > MAX_STORED || (o.samples == 0 && !o.extra_from))
			__builtin_trap();
		break;
	case OPTS_HELP:
	case OPTS_USAGE:
		break;
	}
	free(copy);
	return 0;
}

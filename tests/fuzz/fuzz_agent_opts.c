/*
 * libFuzzer target: the agent's option parser (parse_args in
 * agent/agent.c).  The input is split at NUL bytes into argv.  agent.c is
 * included whole with its main renamed; its exit() calls come back here
 * with longjmp, since a usage error exits the agent.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf back;

static void __attribute__((noreturn))
fuzz_exit(int code)
{
	longjmp(back, code + 1);
}

#define exit(code) fuzz_exit(code)
#define main agent_main
#include "../../agent/agent.c"
#undef main
#undef exit

/* Options are parsed before any study is looked up: no kernels needed. */
const struct registry_study registry_studies[] = { { NULL, NULL } };
const struct registry_kernel registry_kernels[] = { { NULL, NULL, NULL } };

const struct registry_study *
registry_study(const char *name)
{
	(void)name;
	return NULL;
}

#define MAX_ARGS 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *argv[MAX_ARGS + 2];
	static struct opts o;
	char *copy = malloc(size + 1);
	volatile int argc = 1;
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
	if (setjmp(back) == 0)
		parse_args(argc, argv, &o);
	free(copy);
	return 0;
}

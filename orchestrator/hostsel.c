/* The host selection options of fan-out commands (hostsel.h). */
#include "hostsel.h"

#include "cmd.h"
#include "util.h"

#include <stdio.h>

int
hostsel_opt(struct hostsel *s, int c, const char *arg)
{
	switch (c) {
	case 'H':
		s->spec = arg;
		return 1;
	case 'c':
		s->config = arg;
		return 1;
	case 'F':
		s->ssh_config = arg;
		return 1;
	case 'j':
		return cmd_int_arg("--parallel", arg, 256, &s->parallel) == 0 ?
		    1 : -1;
	}
	return 0;
}

int
hostsel_select(const struct hostsel *s, const struct config *cfg,
    struct host ***hosts, size_t *n)
{
	struct so_err err = { 0 };

	if (config_select(cfg, s->spec ? s->spec : "all", hosts, n,
	    &err) != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* The host selection options of fan-out commands (hostsel.h). */
#include "hostsel.h"

#include "cmd.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

int
hostsel_opt(struct hostsel *s, int c, const char *arg)
{
	switch (c) {
	case HOSTSEL_OPT_HOSTS:
		s->spec = arg;
		return 1;
	case HOSTSEL_OPT_CONFIG:
		s->config = arg;
		return 1;
	case HOSTSEL_OPT_SSH_CONFIG:
		s->ssh_config = arg;
		return 1;
	case HOSTSEL_OPT_PARALLEL:
		return cmd_int_arg("--parallel", arg, 256, &s->parallel) == 0 ?
		    1 : -1;
	}
	return 0;
}

/*
 * Open files for k hosts at once: the database, the store and the
 * terminal, and per host its connection, pipes and files.  Below that,
 * whatever runs out first (a pipe, a compiler's file) fails under a
 * misleading name, or an agent never starts and the run waits for it.
 */
#define FILES_BASE 12
#define FILES_PER_HOST 4

/* Raise the soft open-file limit if need be; say why if it cannot be. */
static int
files_enough(size_t k, struct so_err *err)
{
	rlim_t need = FILES_BASE + FILES_PER_HOST * (rlim_t)k;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return 0;
	}
	return so_error(err, SO_EIO, "too many open files: the open-file "
	    "limit (ulimit -n) is %llu, and %zu host%s at once need%s %llu; "
	    "raise the limit or lower --parallel",
	    (unsigned long long)rl.rlim_cur, k, k == 1 ? "" : "s",
	    k == 1 ? "s" : "", (unsigned long long)need);
}

int
hostsel_select(const struct hostsel *s, const struct config *cfg,
    struct host ***hosts, size_t *n, struct so_err *err)
{
	int rc;

	if (config_select(cfg, s->spec ? s->spec : "all", hosts, n, err) != 0)
		return err->code = SO_EINVAL;
	rc = files_enough(*n < (size_t)s->parallel ? *n : (size_t)s->parallel,
	    err);
	if (rc != 0) {
		free(*hosts);
		*hosts = NULL;
		*n = 0;
	}
	return rc;
}

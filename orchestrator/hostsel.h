/*
 * The options of the commands that fan out over hosts (deploy, hosts
 * check, run): --hosts, --config, --ssh-config and --parallel, parsed and
 * applied in one place.  The strings are borrowed from argv.
 */
#ifndef SEQORCH_HOSTSEL_H
#define SEQORCH_HOSTSEL_H

#include "config.h"

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#define HOSTSEL_PARALLEL 16	/* hosts at once unless --parallel says */

struct hostsel {
	const char *spec;	/* --hosts; NULL: not given (all) */
	const char *config;	/* --config */
	const char *ssh_config;	/* --ssh-config; NULL: ~/.ssh/config */
	int64_t parallel;	/* --parallel */
};

#define HOSTSEL_INIT { NULL, "hosts.toml", NULL, HOSTSEL_PARALLEL }

/* Their entries in a getopt_long table. */
#define HOSTSEL_LONGOPTS \
	{ "hosts", required_argument, NULL, 'H' }, \
	{ "config", required_argument, NULL, 'c' }, \
	{ "ssh-config", required_argument, NULL, 'F' }, \
	{ "parallel", required_argument, NULL, 'j' }

/*
 * Take option c from getopt_long with its arg: 1 when it is one of these,
 * 0 when it is not, -1 for a bad --parallel (said on stderr).
 */
int hostsel_opt(struct hostsel *s, int c, const char *arg);

/*
 * The hosts of cfg that --hosts selects (all without it) in *hosts, a new
 * array the caller frees, and their number in *n.  Returns EXIT_OK, or
 * EXIT_USAGE after saying why on stderr, or EXIT_FAIL when the open-file
 * limit is too low for --parallel hosts at once (it is raised up to the
 * hard limit first).
 */
int hostsel_select(const struct hostsel *s, const struct config *cfg,
    struct host ***hosts, size_t *n);

#endif

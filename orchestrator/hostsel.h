/*
 * The options of the commands that fan out over hosts (deploy, hosts
 * check, run): --hosts, --config, --ssh-config and --parallel, parsed and
 * applied in one place.  The strings are borrowed from argv.
 */
#ifndef SEQORCH_HOSTSEL_H
#define SEQORCH_HOSTSEL_H

#include "cmd.h"
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#define HOSTSEL_PARALLEL 16	/* hosts at once unless --parallel says */

struct hostsel {
	const char *spec;	/* --hosts; NULL: not given (all) */
	const char *config;	/* --config; NULL: config_find() searches */
	const char *ssh_config;	/* --ssh-config; NULL: ~/.ssh/config */
	int64_t parallel;	/* --parallel */
};

#define HOSTSEL_INIT { NULL, NULL, NULL, HOSTSEL_PARALLEL }

/*
 * The vals of their struct cmd_opt rows in each command's table (each
 * command words their help its own way).
 */
enum {
	HOSTSEL_OPT_HOSTS = 'H',
	HOSTSEL_OPT_CONFIG = 'c',
	HOSTSEL_OPT_SSH_CONFIG = 'F',
	HOSTSEL_OPT_PARALLEL = 'j',
};

/* Rows of those options that read alike in every command's table. */
#define HOSTSEL_ROW_HOSTS \
	{ "hosts", HOSTSEL_OPT_HOSTS, 0, "SPEC", \
	    "all (default), host names, or @group", CMD_VALUE_HOSTS, NULL }
#define HOSTSEL_ROW_CONFIG \
	{ "config", HOSTSEL_OPT_CONFIG, 0, "FILE", \
	    "the host inventory (default: $SEQORCH_CONFIG,\n" \
	    "./hosts.toml, ~/.config/seqorch/hosts.toml)", \
	    CMD_VALUE_ANY, NULL }
#define HOSTSEL_ROW_SSH_CONFIG \
	{ "ssh-config", HOSTSEL_OPT_SSH_CONFIG, 0, "FILE", \
	    "where \"ssh\" aliases and jump hosts are\n" \
	    "resolved (default ~/.ssh/config)", CMD_VALUE_ANY, NULL }

/*
 * Take option c from cmd_getopt with its arg: 1 when it is one of these,
 * 0 when it is not, -1 for a bad --parallel (said on stderr).
 */
int hostsel_opt(struct hostsel *s, int c, const char *arg);

/*
 * The hosts of cfg that --hosts selects (all without it) in *hosts, a new
 * array the caller frees, and their number in *n.  Returns 0, SO_EINVAL
 * for a selection that names no host of cfg, or SO_EIO when the open-file
 * limit is too low for --parallel hosts at once (it is raised up to the
 * hard limit first), with the reason in err.
 */
int hostsel_select(const struct hostsel *s, const struct config *cfg,
    struct host ***hosts, size_t *n, struct so_err *err);

#endif

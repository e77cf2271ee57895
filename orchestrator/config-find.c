/*
 * Where the inventory is when --config does not say: the search installed
 * tools make (git's and pip's config files, XDG's base directories), so
 * that `seqorch` works from any directory once `seqorch init` has run.
 */
#include "config-int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *
config_user_path(const char **from)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	char *home, *path;

	/* XDG: a relative $XDG_CONFIG_HOME is invalid and is ignored. */
	if (xdg != NULL && xdg[0] == '/') {
		if (from != NULL)
			*from = "$XDG_CONFIG_HOME";
		return xasprintf("%s/seqorch/hosts.toml", xdg);
	}
	if ((home = user_home()) == NULL)
		return NULL;
	if (from != NULL)
		*from = "~/.config";
	path = xasprintf("%s/.config/seqorch/hosts.toml", home);
	free(home);
	return path;
}

int
config_find(const char *given, char **path, const char **from,
    struct so_err *err)
{
	const char *env = getenv("SEQORCH_CONFIG");
	char *user;

	if (given != NULL) {
		*from = "--config";
		*path = xstrdup(given);
		return 0;
	}
	if (env != NULL && *env != '\0') {
		*from = "$SEQORCH_CONFIG";
		*path = xstrdup(env);
		return 0;
	}
	if (access("hosts.toml", F_OK) == 0) {
		*from = "the current directory";
		*path = xstrdup("hosts.toml");
		return 0;
	}
	user = config_user_path(from);
	if (user != NULL && access(user, F_OK) == 0) {
		*path = user;
		return 0;
	}
	so_error(err, SO_ENOTFOUND, "no host inventory: neither \"hosts.toml\""
	    " here nor \"%s\" exists (run \"seqorch init\" to write one, or "
	    "give --config FILE or $SEQORCH_CONFIG)",
	    user != NULL ? user : "~/.config/seqorch/hosts.toml");
	free(user);
	return SO_ENOTFOUND;
}

int
config_host_name_ok(const char *s)
{
	return cfg_valid_name(s);
}

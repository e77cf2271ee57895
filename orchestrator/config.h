/*
 * The host inventory (hosts.toml, documented in docs/hosts.md).
 *
 * config_load() checks the whole file before returning, so every later
 * module can trust a struct host: names are safe to use in paths and
 * commands, required keys are present and values are in range.
 */
#ifndef SEQORCH_CONFIG_H
#define SEQORCH_CONFIG_H

#include <stddef.h>

struct so_err;

enum transport {
	TRANSPORT_SSH,
	TRANSPORT_LOCAL,
};

/*
 * The connection settings whose source `hosts list -v` shows: hosts.toml,
 * its [defaults], ssh_config, or seqorch's default.
 */
enum host_field {
	HOST_ADDRESS,
	HOST_PORT,
	HOST_USER,
	HOST_IDENTITY,
	HOST_KNOWN_HOSTS,
	HOST_CONNECT_TIMEOUT,
	HOST_PROXY_JUMP,
	HOST_NFIELDS
};

/* Every string and array belongs to the struct config holding the host. */
struct host {
	char *name;		/* NAME in [hosts.NAME]; a jump host's name */
	enum transport transport;	/* "ssh" (default) or "local" */
	char *ssh_alias;	/* "ssh": an ssh_config alias; may be NULL */
	/*
	 * Required for ssh (from "address", or HostName or the alias of
	 * "ssh"); NULL for local.
	 */
	char *address;
	int port;		/* 22 */
	char *user;		/* NULL: the current user name */
	char *identity;		/* key file, ~ expanded; may be NULL */
	/* ssh_config's IdentityFile list, tried when identity is NULL. */
	char **ssh_identities;
	size_t nssh_identities;
	int identities_only;	/* ssh_config IdentitiesOnly: no ssh-agent */
	/* proxy_jump or ProxyJump as written ("a,b"); NULL: direct. */
	char *proxy_jump;
	/*
	 * The jump hosts, in the order they are connected: each is a
	 * host of its own (name, address, port, user, keys, known_hosts,
	 * connect_timeout), taken from the hosts.toml host of that name or
	 * resolved through ssh_config.  njumps is 0 for a direct host.
	 */
	struct host *jumps;
	size_t njumps;
	/* Where each value came from: "hosts.toml:12", "default", ... */
	char *origin[HOST_NFIELDS];
	/* Default ~/.ssh/known_hosts, ~ expanded; NULL for local. */
	char *known_hosts;
	/*
	 * Absolute or under "~/"; default "~/.seqorch".  For ssh the ~ is
	 * kept, as it names the remote home that the host resolves; for
	 * local it is expanded.
	 */
	char *workdir;
	char **cc;		/* compilers to build with; default {"cc"} */
	size_t ncc;		/* >= 1 */
	char *cflags;		/* default "-O3" */
	int cpu;		/* CPU to pin the agent to, HOST_CPU_*; 0 */
	char **groups;		/* may be NULL when ngroups is 0 */
	size_t ngroups;
	char *build_wrapper;	/* may contain {workdir}; NULL if unset */
	int connect_timeout;	/* seconds, 1 to 3600; default 10 */
	/*
	 * The seeds' machine this host is ("graviton5", "m4", "genoa":
	 * reference/seeds.json's "seed:NAME" ids), for the published table
	 * of `seqorch reproduce`; NULL if unset.
	 */
	char *reference;
	int line;		/* line of the [hosts.NAME] header */
	/*
	 * What a command pasted from a hint about this host must repeat to
	 * find it again (" --config FILE"), owned by the command; NULL.
	 */
	const char *hint;
};

/* host->cpu besides a CPU number: no pin, or the agent's own choice. */
#define HOST_CPU_NONE (-1)
#define HOST_CPU_AUTO (-2)

struct config {
	char *path;		/* as given to config_load() */
	/* How cmd_load_config found path (config_find's *from); NULL. */
	const char *from;
	/* Every host's hint, set by cmd_load_config; NULL. */
	char *hint;
	struct host *hosts;	/* in file order */
	char *cache;		/* [defaults] cache: artifact cache dir, or NULL */
	size_t nhosts;		/* >= 1 */
	/*
	 * ssh_config directives that would change a connection and that
	 * seqorch does not do: "host \"NAME\": FILE:LINE: ...".  The
	 * commands print them.
	 */
	char **warnings;
	size_t nwarnings;
};

/*
 * Load and check the inventory at path.  Hosts that give an ssh_config
 * alias ("ssh") or jump hosts that are not hosts.toml hosts are resolved
 * in the ssh_config file ssh_config (NULL: ~/.ssh/config, see
 * sshconfig.h); hosts.toml keys win over ssh_config.  Returns 0 and stores
 * in *out a config that the caller frees with config_free(), or a
 * negative SO_E* code with err filled in and *out untouched: SO_EIO
 * (unreadable file), SO_EPARSE (not TOML) or SO_EINVAL (unknown key, wrong
 * type or range, missing address, no hosts, bad ssh_config value, ...).
 * Messages start with "PATH:LINE:COL: ".
 */
int config_load(const char *path, const char *ssh_config,
    struct config **out, struct so_err *err);

/*
 * The inventory to load: given (--config) when not NULL, else
 * $SEQORCH_CONFIG, else ./hosts.toml ("hosts.toml") if it exists, else
 * config_user_path()'s if it exists.  Returns 0 with *path, a new string
 * the caller frees, and *from, a static phrase naming the rule that chose
 * it ("--config", "$SEQORCH_CONFIG", "the current directory",
 * "$XDG_CONFIG_HOME", "~/.config"); SO_ENOTFOUND, saying where it looked
 * and that `seqorch init` writes one, when neither file exists.
 */
int config_find(const char *given, char **path, const char **from,
    struct so_err *err);

/*
 * The user's inventory, $XDG_CONFIG_HOME/seqorch/hosts.toml (an absolute
 * $XDG_CONFIG_HOME), else ~/.config/seqorch/hosts.toml, as a new string
 * the caller frees, with the rule in *from (if not NULL); NULL when there
 * is no home directory.
 */
char *config_user_path(const char **from);

/* 1 when s may be a host's NAME in [hosts.NAME], else 0. */
int config_host_name_ok(const char *s);

/* Free cfg and every host in it; NULL is allowed. */
void config_free(struct config *cfg);

/*
 * Resolve a --hosts spec: "all", host names and "@group" separated by
 * commas, e.g. "genoa,@arm".  Returns 0 and stores in *out an array of *n
 * pointers into cfg, in config order and without duplicates; the caller
 * frees the array (not the hosts) with free().  On failure returns
 * SO_ENOTFOUND for an unknown host or group, with a message listing the
 * valid ones, or SO_EINVAL for an empty spec or name.
 */
int config_select(const struct config *cfg, const char *spec,
    struct host ***out, size_t *n, struct so_err *err);

#endif

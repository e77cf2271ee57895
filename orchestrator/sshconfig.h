/*
 * OpenSSH client configuration (ssh_config(5)), read the way ssh reads it
 * for one host alias: first value wins, Host patterns with '*', '?' and
 * '!', Include (glob, relative to ~/.ssh), and %-token and ~ expansion.
 * Only the keys that decide how seqorch connects are kept (enum
 * sshcfg_key); directives that would change the connection but that
 * seqorch does not do (Match, ProxyCommand, ControlMaster) become
 * warnings, and every other directive is ignored.
 *
 * As in OpenSSH, "~" is the home directory of the user in the password
 * database (not $HOME), and Host patterns match the alias case-sensitively.
 */
#ifndef SEQORCH_SSHCONFIG_H
#define SEQORCH_SSHCONFIG_H

#include <stddef.h>

struct so_err;

enum sshcfg_key {
	SSHCFG_HOSTNAME,
	SSHCFG_USER,
	SSHCFG_PORT,
	SSHCFG_IDENTITYFILE,
	SSHCFG_IDENTITIESONLY,
	SSHCFG_USERKNOWNHOSTSFILE,
	SSHCFG_CONNECTTIMEOUT,
	SSHCFG_PROXYJUMP,
	SSHCFG_NKEYS
};

/* Every string belongs to the struct sshcfg. */
struct sshcfg {
	char *alias;		/* as asked for */
	/*
	 * "FILE:LINE" of the line each key came from, NULL when no line
	 * set it (then the field below holds OpenSSH's default, if any).
	 * For IdentityFile, the first line that gave one.
	 */
	char *origin[SSHCFG_NKEYS];
	char *hostname;		/* HostName with %h done, else the alias;
				 * lowercased as ssh does unless it holds
				 * ':' or '%' */
	char *user;		/* NULL: not set */
	int port;		/* 0: not set */
	char **identities;	/* IdentityFile, every one, expanded */
	char **identities_raw;	/* the same as written (ssh -G shows these) */
	size_t nidentities;
	int identities_only;	/* 1 yes, 0 no (also when not set) */
	char **known_hosts;	/* UserKnownHostsFile, expanded; NULL if unset */
	size_t nknown_hosts;
	int connect_timeout;	/* seconds; 0: not set or "none" */
	char *proxy_jump;	/* NULL: not set or "none" */
	/* "FILE:LINE: ..." for unsupported directives that apply. */
	char **warnings;
	size_t nwarnings;
};

/*
 * Resolve alias in the ssh_config file path (NULL: ~/.ssh/config; a
 * missing default file is an empty one, a missing named file an error).
 * user and port, when given (non-NULL, > 0), override User and Port as
 * ssh's -l and -p do, including in %r and %p.  Returns 0 and stores a
 * struct the caller frees with sshcfg_free(), or a negative SO_E* code
 * with err naming the file and line: SO_EIO (unreadable file), SO_EINVAL
 * (a bad value, an unknown %-token, Include nested too deep).
 */
int sshcfg_resolve(const char *path, const char *alias, const char *user,
    int port, struct sshcfg **out, struct so_err *err);

void sshcfg_free(struct sshcfg *cfg);

/*
 * The aliases the Host lines of the ssh_config file path (NULL:
 * ~/.ssh/config, absent or not) name, patterns left out, each once, in
 * file order, in *out (n strings; the caller frees each and the array).
 * Included files are not read.  Returns 0, or SO_EIO or SO_EINVAL with
 * err naming the file and line.
 */
int sshcfg_aliases(const char *path, char ***out, size_t *n,
    struct so_err *err);

/* The name of a key as ssh_config spells it ("HostName"). */
const char *sshcfg_key_name(enum sshcfg_key key);

/*
 * ~/.ssh/config of the user in the password database, as a new string the
 * caller frees; NULL if there is no home directory.
 */
char *sshcfg_default_path(void);

#endif

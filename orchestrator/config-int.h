/*
 * Inside the hosts.toml front end only (config*.c): the key table, the
 * checking context and the helpers the files share.  config.c loads the
 * file and its hosts, config-keys.c checks keys and values,
 * config-ssh.c resolves ssh_config aliases and jump hosts, and
 * config-select.c picks hosts for --hosts.
 */
#ifndef SEQORCH_CONFIG_INT_H
#define SEQORCH_CONFIG_INT_H

#include "config.h"
#include "sshconfig.h"
#include "toml.h"
#include "util.h"

#include <stddef.h>

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Host and group names end up in paths and remote commands: a leading
 * '.' could make "." or "..", a leading '-' an option.
 */
#define NAME_MAX_LEN 64
#define NAME_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define NAME_RULE \
	"use up to 64 letters, digits, '_', '.' and '-', not starting " \
	"with '.' or '-'"
/* Host names, IPv4 and IPv6 addresses (with an optional %zone). */
#define ADDRESS_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-:%"

enum key_type {
	KEY_TRANSPORT,
	KEY_ADDRESS,
	KEY_WORD,		/* a string without spaces or leading '-' */
	KEY_STRING,
	KEY_PATH,		/* a path on this machine: ~ is expanded */
	KEY_INT,
	KEY_CPU,		/* an integer or "none" */
	KEY_COMMANDS,		/* a string or a list of strings */
	KEY_NAMES,		/* a list of group names */
	KEY_REFERENCE,		/* a published machine of the seeds */
};

#define KEY_SSH_ONLY	0x1	/* meaningless with transport "local" */
#define KEY_MAY_BE_EMPTY 0x2
/*
 * A path on the host, absolute or under "~/": the connection resolves a
 * remote "~" against the remote $HOME, so it is only expanded here for
 * transport "local".
 */
#define KEY_REMOTE	0x4

struct key_def {
	const char *name;
	enum key_type type;
	int flags;
	size_t off;		/* the field of struct host */
	size_t count_off;	/* lists: the field holding the length */
	int min, max;		/* integers */
};

/* Where messages come from while one file is checked. */
struct ctx {
	const char *path;
	const char *ssh_config;	/* NULL: ~/.ssh/config */
	const struct toml_doc *doc;
	const cJSON *hosts, *defaults;	/* for jump hosts named in hosts */
	struct config *cfg;	/* collects ssh_config warnings */
	struct so_err *err;
	/* "host \"NAME\"", "defaults", or "" for the top level. */
	char subject[NAME_MAX_LEN + 16];
};

enum { AT_VALUE, AT_KEY };

/*
 * Fill err with "PATH:LINE:COL: SUBJECT: message", the position being
 * that of item's value (AT_VALUE) or key (AT_KEY); items without one
 * (NULL, the root) get just "PATH: ".  Returns code.
 */
int cfg_fail(const struct ctx *c, int code, const cJSON *item, int at,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Every key a host table may hold, in the order they are applied. */
extern const struct key_def cfg_keys[];
extern const size_t cfg_nkeys;

/* config-keys.c */
/* The value of key has the wrong type: say what was wanted and found. */
int cfg_wrong(const struct ctx *c, const cJSON *item, const char *key,
    const char *want);
/* Append ", name" (or "name" when buf is empty), truncating quietly. */
void cfg_append_name(char *buf, size_t len, const char *name);
int cfg_valid_name(const char *s);
/*
 * "~" and "~user" at the start of path become a home directory.  Returns
 * a new string the caller frees, or NULL if the home directory is unknown.
 */
char *cfg_expand_tilde(const char *path);
void cfg_free_list(char **list, size_t n);
/* Check item as the value of key k and store it into h. */
int cfg_set_key(const struct ctx *c, const struct key_def *k,
    const cJSON *item, struct host *h);
/* Every key of a host table or of [defaults] must be one we know. */
int cfg_check_keys(const struct ctx *c, const cJSON *table);

/* config-ssh.c */
/* The enum host_field of key, or -1 if `hosts list -v` does not show it. */
int cfg_field_of(const char *key);
/* h->origin[field] becomes origin (freed when field < 0). */
void cfg_set_origin(struct host *h, int field, char *origin);
/* "hosts.toml:12", or "hosts.toml:3 [defaults]", for the item of a key. */
char *cfg_toml_origin(const struct ctx *c, const cJSON *item, int own);
/* Resolve h->ssh_alias (from item) and fill what the table left unset. */
int cfg_resolve_alias(const struct ctx *c, const cJSON *item, struct host *h);
/* h->proxy_jump, "a,b,...", into h->jumps (the first is connected first). */
int cfg_load_jumps(struct ctx *c, const cJSON *at, struct host *h);

/* config.c */
/*
 * One [hosts.NAME] table, with defaults (which may be NULL) beneath it.
 * A host loaded as a jump host (as_jump) does not follow its own
 * proxy_jump.
 */
int cfg_load_host(struct ctx *c, const cJSON *table, const cJSON *defaults,
    struct host *h, int as_jump);
/* What neither the host nor [defaults] set, and what depends on transport. */
int cfg_finish_host(const struct ctx *c, const cJSON *table, struct host *h);

#endif

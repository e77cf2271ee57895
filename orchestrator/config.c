/*
 * hosts.toml front end.  toml.cc turns the file into a cJSON tree that
 * remembers source positions; this file checks it against key_defs[] and
 * fills struct host, so that a typo is reported with its file:line:col
 * before anything connects anywhere.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sshconfig.h"
#include "toml.h"
#include "util.h"

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

#define FIELD(f) offsetof(struct host, f)

static const struct key_def key_defs[] = {
	/* First, because it decides how the other keys apply. */
	{ .name = "transport", .type = KEY_TRANSPORT },
	/* Next: ssh_config fills what the host's own table leaves unset. */
	{ .name = "ssh", .type = KEY_WORD, .flags = KEY_SSH_ONLY,
	  .off = FIELD(ssh_alias) },
	{ .name = "address", .type = KEY_ADDRESS, .flags = KEY_SSH_ONLY,
	  .off = FIELD(address) },
	{ .name = "port", .type = KEY_INT, .flags = KEY_SSH_ONLY,
	  .off = FIELD(port), .min = 1, .max = 65535 },
	{ .name = "user", .type = KEY_WORD, .flags = KEY_SSH_ONLY,
	  .off = FIELD(user) },
	{ .name = "identity", .type = KEY_PATH, .flags = KEY_SSH_ONLY,
	  .off = FIELD(identity) },
	{ .name = "known_hosts", .type = KEY_PATH, .flags = KEY_SSH_ONLY,
	  .off = FIELD(known_hosts) },
	{ .name = "workdir", .type = KEY_PATH, .flags = KEY_REMOTE,
	  .off = FIELD(workdir) },
	{ .name = "cc", .type = KEY_COMMANDS, .off = FIELD(cc),
	  .count_off = FIELD(ncc) },
	{ .name = "cflags", .type = KEY_STRING, .flags = KEY_MAY_BE_EMPTY,
	  .off = FIELD(cflags) },
	{ .name = "cpu", .type = KEY_CPU, .off = FIELD(cpu) },
	{ .name = "groups", .type = KEY_NAMES, .off = FIELD(groups),
	  .count_off = FIELD(ngroups) },
	{ .name = "build_wrapper", .type = KEY_STRING,
	  .off = FIELD(build_wrapper) },
	{ .name = "connect_timeout", .type = KEY_INT, .flags = KEY_SSH_ONLY,
	  .off = FIELD(connect_timeout), .min = 1, .max = 3600 },
	{ .name = "proxy_jump", .type = KEY_WORD, .flags = KEY_SSH_ONLY,
	  .off = FIELD(proxy_jump) },
};

/* The keys whose source `hosts list -v` shows, and ssh_config can set. */
static const struct {
	const char *key;
	enum host_field field;
} origin_keys[] = {
	{ "address", HOST_ADDRESS },
	{ "port", HOST_PORT },
	{ "user", HOST_USER },
	{ "identity", HOST_IDENTITY },
	{ "known_hosts", HOST_KNOWN_HOSTS },
	{ "connect_timeout", HOST_CONNECT_TIMEOUT },
	{ "proxy_jump", HOST_PROXY_JUMP },
};

/* Keys people reach for that seqorch refuses, and what to do instead. */
static const struct {
	const char *name;
	const char *instead;
} secret_keys[] = {
	{ "password", "use a key file (\"identity\") or ssh-agent" },
	{ "passphrase", "load the key into ssh-agent instead" },
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

static int fail(const struct ctx *, int, const cJSON *, int, const char *,
    ...) __attribute__((format(printf, 5, 6)));

/*
 * Fill err with "PATH:LINE:COL: SUBJECT: message", the position being
 * that of item's value or key; items without one (NULL, the root) get
 * just "PATH: ".  Returns code.
 */
static int
fail(const struct ctx *c, int code, const cJSON *item, int at,
    const char *fmt, ...)
{
	char msg[SO_ERR_MAX];
	const char *sep = *c->subject != '\0' ? ": " : "";
	va_list ap;
	int line, col, r;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (at == AT_KEY)
		r = toml_key_pos(c->doc, item, &line, &col);
	else
		r = toml_pos(c->doc, item, &line, &col);
	if (r < 0)
		return so_error(c->err, code, "%s: %s%s%s", c->path,
		    c->subject, sep, msg);
	return so_error(c->err, code, "%s:%d:%d: %s%s%s", c->path, line, col,
	    c->subject, sep, msg);
}

/* The value of key has the wrong type: say what was wanted and found. */
static int
wrong(const struct ctx *c, const cJSON *item, const char *key,
    const char *want)
{
	return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" must be %s, "
	    "got %s", key, want, toml_type_name(toml_type(c->doc, item)));
}

/* An integer item: is it within [min, max]?  Else say what it was. */
static int
check_range(const struct ctx *c, const cJSON *item, const char *key,
    const char *want, double min, double max)
{
	const char *text = toml_int_text(c->doc, item);

	if (item->valuedouble >= min && item->valuedouble <= max)
		return 0;
	return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" must be %s, "
	    "got %s", key, want, text != NULL ? text : "?");
}

static size_t
min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Optimal string alignment distance: typos are mostly one edit or swap. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), w = lb + 1, i, j, v;
	size_t *d = xcalloc((la + 1) * w, sizeof *d);

#define D(i, j) d[(i) * w + (j)]
	for (i = 0; i <= la; i++)
		D(i, 0) = i;
	for (j = 0; j <= lb; j++)
		D(0, j) = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			v = D(i - 1, j - 1) + (a[i - 1] != b[j - 1]);
			v = min_size(v, D(i - 1, j) + 1);
			v = min_size(v, D(i, j - 1) + 1);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1])
				v = min_size(v, D(i - 2, j - 2) + 1);
			D(i, j) = v;
		}
	}
	v = D(la, lb);
#undef D
	free(d);
	return v;
}

/*
 * Keep in *best the candidate nearest to word, if near enough to be a
 * typo of it: one edit for short words, one per three letters for longer.
 */
static void
consider(const char *word, const char *candidate, const char **best,
    size_t *best_distance)
{
	size_t limit = strlen(word) / 3, d;

	if (limit < 1)
		limit = 1;
	d = edit_distance(word, candidate);
	if (d <= limit && d < *best_distance) {
		*best = candidate;
		*best_distance = d;
	}
}

/* Append ", name" (or "name" when buf is empty), truncating quietly. */
static void
append_name(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
		    name);
}

static const struct key_def *
find_key(const char *name)
{
	size_t i;

	for (i = 0; i < nitems(key_defs); i++)
		if (strcmp(key_defs[i].name, name) == 0)
			return &key_defs[i];
	return NULL;
}

static int
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NAME_MAX_LEN || s[0] == '.' || s[0] == '-')
		return 0;
	return strspn(s, NAME_CHARS) == n;
}

/* Control characters would break the lines and commands values reach. */
static int
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/*
 * "~" and "~user" at the start of path become a home directory.  Returns
 * a new string the caller frees, or NULL if the home directory is unknown.
 */
static char *
expand_tilde(const char *path)
{
	const char *rest, *home;
	struct passwd *pw;
	char *user;

	if (path[0] != '~')
		return xstrdup(path);
	rest = path + 1 + strcspn(path + 1, "/");
	if (rest == path + 1) {
		home = getenv("HOME");
		if (home == NULL || *home == '\0') {
			pw = getpwuid(getuid());
			home = pw != NULL ? pw->pw_dir : NULL;
		}
	} else {
		user = xasprintf("%.*s", (int)(rest - path - 1), path + 1);
		pw = getpwnam(user);
		free(user);
		home = pw != NULL ? pw->pw_dir : NULL;
	}
	if (home == NULL)
		return NULL;
	return xasprintf("%s%s", home, rest);
}

/*
 * Check that item is a usable string for key and point *out at it (owned
 * by the document); want names the type in the message if it is not.
 */
static int
get_string(const struct ctx *c, const cJSON *item, const char *key,
    const char *want, int may_be_empty, const char **out)
{
	if (toml_type(c->doc, item) != TOML_STRING)
		return wrong(c, item, key, want);
	if (!may_be_empty && *item->valuestring == '\0')
		return fail(c, SO_EINVAL, item, AT_VALUE,
		    "key \"%s\" must not be empty", key);
	if (has_control(item->valuestring))
		return fail(c, SO_EINVAL, item, AT_VALUE,
		    "key \"%s\" must not contain control characters", key);
	*out = item->valuestring;
	return 0;
}

static void
free_list(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/*
 * KEY_COMMANDS and KEY_NAMES.  The list grows one checked entry at a time
 * with its length kept current, so a host freed after a failure here
 * frees exactly what was stored.
 */
static int
set_list(const struct ctx *c, const struct key_def *k, const cJSON *item,
    struct host *h)
{
	char ***list = (char ***)((char *)h + k->off);
	size_t *count = (size_t *)((char *)h + k->count_off);
	const char *want = k->type == KEY_COMMANDS ?
	    "a string or a list of strings" : "a list of strings";
	const cJSON *elem;
	const char *s;
	size_t i;
	int r;

	if (k->type == KEY_COMMANDS &&
	    toml_type(c->doc, item) == TOML_STRING) {
		if ((r = get_string(c, item, k->name, want, 0, &s)) < 0)
			return r;
		*list = xcalloc(1, sizeof **list);
		(*list)[0] = xstrdup(s);
		*count = 1;
		return 0;
	}
	if (toml_type(c->doc, item) != TOML_ARRAY)
		return wrong(c, item, k->name, want);
	if (k->type == KEY_COMMANDS && cJSON_GetArraySize(item) == 0)
		return fail(c, SO_EINVAL, item, AT_VALUE,
		    "key \"%s\" must name at least one compiler", k->name);
	*list = xcalloc((size_t)cJSON_GetArraySize(item), sizeof **list);
	cJSON_ArrayForEach(elem, item) {
		if ((r = get_string(c, elem, k->name, want, 0, &s)) < 0)
			return r;
		if (k->type == KEY_NAMES) {
			if (!valid_name(s))
				return fail(c, SO_EINVAL, elem, AT_VALUE,
				    "invalid group name \"%s\" (%s)", s,
				    NAME_RULE);
			for (i = 0; i < *count; i++)
				if (strcmp((*list)[i], s) == 0)
					return fail(c, SO_EINVAL, elem,
					    AT_VALUE, "group \"%s\" is listed "
					    "twice", s);
		}
		(*list)[(*count)++] = xstrdup(s);
	}
	return 0;
}

#define CPU_WANT "an integer >= 0, \"none\" or \"auto\""

/* Check item as the value of key k and store it into h. */
static int
set_key(const struct ctx *c, const struct key_def *k, const cJSON *item,
    struct host *h)
{
	const char *s;
	char want[64];
	char *expanded;
	int *num;
	int r;

	switch (k->type) {
	case KEY_TRANSPORT:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		if (strcmp(s, "ssh") == 0)
			h->transport = TRANSPORT_SSH;
		else if (strcmp(s, "local") == 0)
			h->transport = TRANSPORT_LOCAL;
		else
			return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must be \"ssh\" or \"local\", got \"%s\"",
			    k->name, s);
		return 0;
	case KEY_ADDRESS:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		if (strchr(s, '@') != NULL)
			return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must not contain a user name: set \"user\"",
			    k->name);
		if (s[0] == '-' || strspn(s, ADDRESS_CHARS) != strlen(s))
			return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must be a host name or IP address, got \"%s\"",
			    k->name, s);
		*(char **)((char *)h + k->off) = xstrdup(s);
		return 0;
	case KEY_WORD:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		if (s[0] == '-' || strchr(s, ' ') != NULL)
			return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must not contain spaces or start with '-', got "
			    "\"%s\"", k->name, s);
		*(char **)((char *)h + k->off) = xstrdup(s);
		return 0;
	case KEY_STRING:
		if ((r = get_string(c, item, k->name, "a string",
		    k->flags & KEY_MAY_BE_EMPTY, &s)) < 0)
			return r;
		*(char **)((char *)h + k->off) = xstrdup(s);
		return 0;
	case KEY_PATH:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		if ((k->flags & KEY_REMOTE) && s[0] != '/' &&
		    strcmp(s, "~") != 0 && strncmp(s, "~/", 2) != 0)
			return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must be an absolute path or start with \"~/\", "
			    "got \"%s\"", k->name, s);
		if ((k->flags & KEY_REMOTE) && h->transport != TRANSPORT_LOCAL)
			expanded = xstrdup(s);
		else if ((expanded = expand_tilde(s)) == NULL)
			return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\": "
			    "cannot expand \"%s\": unknown user or no home "
			    "directory", k->name, s);
		*(char **)((char *)h + k->off) = expanded;
		return 0;
	case KEY_INT:
		snprintf(want, sizeof want, "an integer from %d to %d",
		    k->min, k->max);
		if (toml_type(c->doc, item) != TOML_INTEGER)
			return wrong(c, item, k->name, want);
		if ((r = check_range(c, item, k->name, want, k->min,
		    k->max)) < 0)
			return r;
		num = (int *)((char *)h + k->off);
		*num = (int)item->valuedouble;
		return 0;
	case KEY_CPU:
		num = (int *)((char *)h + k->off);
		if (toml_type(c->doc, item) == TOML_STRING) {
			if (strcmp(item->valuestring, "none") == 0)
				*num = HOST_CPU_NONE;
			else if (strcmp(item->valuestring, "auto") == 0)
				*num = HOST_CPU_AUTO;
			else
				return fail(c, SO_EINVAL, item, AT_VALUE,
				    "key \"%s\" must be %s, got \"%s\"",
				    k->name, CPU_WANT, item->valuestring);
			return 0;
		}
		if (toml_type(c->doc, item) != TOML_INTEGER)
			return wrong(c, item, k->name, CPU_WANT);
		if ((r = check_range(c, item, k->name, CPU_WANT, 0,
		    INT_MAX)) < 0)
			return r;
		*num = (int)item->valuedouble;
		return 0;
	case KEY_COMMANDS:
	case KEY_NAMES:
		return set_list(c, k, item, h);
	}
	return 0;
}

/* Every key of a host table or of [defaults] must be one we know. */
static int
check_keys(const struct ctx *c, const cJSON *table)
{
	const cJSON *item;
	const char *best;
	char valid[SO_ERR_MAX / 2];
	size_t i, best_distance;

	cJSON_ArrayForEach(item, table) {
		/* The coordinator's own setting: [defaults] only. */
		if (strcmp(item->string, "cache") == 0) {
			if (strcmp(c->subject, "defaults") == 0)
				continue;
			return fail(c, SO_EINVAL, item, AT_KEY, "key \"cache\" "
			    "belongs in [defaults]: the coordinator has one "
			    "artifact cache");
		}
		for (i = 0; i < nitems(secret_keys); i++)
			if (strcmp(item->string, secret_keys[i].name) == 0)
				return fail(c, SO_EINVAL, item, AT_KEY,
				    "key \"%s\" is not allowed: seqorch keeps "
				    "no secrets; %s", item->string,
				    secret_keys[i].instead);
		if (find_key(item->string) != NULL)
			continue;
		best = NULL;
		best_distance = SIZE_MAX;
		for (i = 0; i < nitems(key_defs); i++)
			consider(item->string, key_defs[i].name, &best,
			    &best_distance);
		if (best != NULL)
			return fail(c, SO_EINVAL, item, AT_KEY, "unknown key "
			    "\"%s\" (did you mean \"%s\"?)", item->string,
			    best);
		*valid = '\0';
		for (i = 0; i < nitems(key_defs); i++)
			append_name(valid, sizeof valid, key_defs[i].name);
		return fail(c, SO_EINVAL, item, AT_KEY, "unknown key \"%s\" "
		    "(valid keys: %s)", item->string, valid);
	}
	return 0;
}

static void
host_clear(struct host *h)
{
	size_t i;

	for (i = HOST_NFIELDS; i > 0; i--)
		free(h->origin[i - 1]);
	for (i = h->njumps; i > 0; i--)
		host_clear(&h->jumps[i - 1]);
	free(h->jumps);
	free(h->proxy_jump);
	free_list(h->ssh_identities, h->nssh_identities);
	free(h->build_wrapper);
	free_list(h->groups, h->ngroups);
	free(h->cflags);
	free_list(h->cc, h->ncc);
	free(h->workdir);
	free(h->known_hosts);
	free(h->identity);
	free(h->user);
	free(h->address);
	free(h->ssh_alias);
	free(h->name);
}

/*
 * [defaults] on its own: known keys with valid values.  Checking it once
 * here reports its mistakes against "defaults" rather than against
 * whichever host happened to inherit them first.
 */
static int
check_defaults(struct ctx *c, const cJSON *defaults)
{
	struct host scratch;
	const cJSON *item;
	size_t i;
	int r;

	memset(&scratch, 0, sizeof scratch);
	snprintf(c->subject, sizeof c->subject, "defaults");
	if ((r = check_keys(c, defaults)) < 0)
		goto out;
	for (i = 0; i < nitems(key_defs); i++) {
		item = cJSON_GetObjectItemCaseSensitive(defaults,
		    key_defs[i].name);
		if (item != NULL &&
		    (r = set_key(c, &key_defs[i], item, &scratch)) < 0)
			goto out;
	}
out:
	host_clear(&scratch);
	return r;
}

/* The origin_keys[] field of key, or -1. */
static int
field_of(const char *key)
{
	size_t i;

	for (i = 0; i < nitems(origin_keys); i++)
		if (strcmp(origin_keys[i].key, key) == 0)
			return (int)origin_keys[i].field;
	return -1;
}

static void
set_origin(struct host *h, int field, char *origin)
{
	if (field < 0) {
		free(origin);
		return;
	}
	free(h->origin[field]);
	h->origin[field] = origin;
}

/* "hosts.toml:12", or "hosts.toml:3 [defaults]", for the item of a key. */
static char *
toml_origin(const struct ctx *c, const cJSON *item, int own)
{
	int line = 0, col = 0;

	if (toml_key_pos(c->doc, item, &line, &col) < 0)
		return xasprintf("%s%s", c->path, own ? "" : " [defaults]");
	return xasprintf("%s:%d%s", c->path, line, own ? "" : " [defaults]");
}

/* Pass ssh_config's warnings on to the commands, naming the host. */
static void
keep_warnings(const struct ctx *c, const struct host *h,
    const struct sshcfg *sc)
{
	struct config *cfg = c->cfg;
	size_t i;

	for (i = 0; i < sc->nwarnings; i++) {
		cfg->warnings = xrealloc(cfg->warnings, (cfg->nwarnings + 1) *
		    sizeof *cfg->warnings);
		cfg->warnings[cfg->nwarnings++] = xasprintf("host \"%s\": %s",
		    h->name, sc->warnings[i]);
	}
}

/* "ssh_config FILE:LINE" for the line that set key. */
static char *
ssh_origin(const struct sshcfg *sc, enum sshcfg_key key)
{
	return xasprintf("ssh_config %s", sc->origin[key]);
}

/*
 * Fill what is still unset in h from the resolved ssh_config sc.  at is
 * the item errors point to.  known_hosts takes the first file of
 * UserKnownHostsFile: the one ssh also records new keys in.
 */
static int
apply_sshcfg(const struct ctx *c, const cJSON *at, struct host *h,
    const struct sshcfg *sc)
{
	size_t i;

	if (h->address == NULL) {
		if (sc->hostname[0] == '-' || strspn(sc->hostname,
		    ADDRESS_CHARS) != strlen(sc->hostname))
			return fail(c, SO_EINVAL, at, AT_VALUE, "ssh_config "
			    "%s: \"HostName\" must be a host name or IP "
			    "address, got \"%s\"", sc->origin[SSHCFG_HOSTNAME] ?
			    sc->origin[SSHCFG_HOSTNAME] : "alias",
			    sc->hostname);
		h->address = xstrdup(sc->hostname);
		set_origin(h, HOST_ADDRESS, sc->origin[SSHCFG_HOSTNAME] ?
		    ssh_origin(sc, SSHCFG_HOSTNAME) :
		    xasprintf("ssh_config alias \"%s\"", sc->alias));
	}
	if (h->origin[HOST_PORT] == NULL && sc->origin[SSHCFG_PORT]) {
		h->port = sc->port;
		set_origin(h, HOST_PORT, ssh_origin(sc, SSHCFG_PORT));
	}
	if (h->user == NULL && sc->origin[SSHCFG_USER]) {
		h->user = xstrdup(sc->user);
		set_origin(h, HOST_USER, ssh_origin(sc, SSHCFG_USER));
	}
	if (h->identity == NULL && sc->nidentities > 0) {
		h->ssh_identities = xcalloc(sc->nidentities,
		    sizeof *h->ssh_identities);
		for (i = 0; i < sc->nidentities; i++)
			h->ssh_identities[h->nssh_identities++] =
			    xstrdup(sc->identities[i]);
		set_origin(h, HOST_IDENTITY, ssh_origin(sc,
		    SSHCFG_IDENTITYFILE));
	}
	h->identities_only = sc->identities_only;
	if (h->known_hosts == NULL && sc->nknown_hosts > 0) {
		h->known_hosts = xstrdup(sc->known_hosts[0]);
		set_origin(h, HOST_KNOWN_HOSTS, ssh_origin(sc,
		    SSHCFG_USERKNOWNHOSTSFILE));
	}
	if (h->origin[HOST_CONNECT_TIMEOUT] == NULL && sc->connect_timeout > 0) {
		h->connect_timeout = sc->connect_timeout > 3600 ? 3600 :
		    sc->connect_timeout;
		set_origin(h, HOST_CONNECT_TIMEOUT, ssh_origin(sc,
		    SSHCFG_CONNECTTIMEOUT));
	}
	if (h->proxy_jump == NULL && sc->proxy_jump != NULL) {
		h->proxy_jump = xstrdup(sc->proxy_jump);
		set_origin(h, HOST_PROXY_JUMP, ssh_origin(sc,
		    SSHCFG_PROXYJUMP));
	}
	return 0;
}

/* Resolve h->ssh_alias (from item) and fill what the table left unset. */
static int
resolve_alias(const struct ctx *c, const cJSON *item, struct host *h)
{
	struct sshcfg *sc = NULL;
	struct so_err e = { 0 };
	int r;

	if (sshcfg_resolve(c->ssh_config, h->ssh_alias, h->origin[HOST_USER] ?
	    h->user : NULL, h->origin[HOST_PORT] ? h->port : 0, &sc, &e) != 0)
		return fail(c, e.code, item, AT_VALUE, "%s", e.msg);
	keep_warnings(c, h, sc);
	r = apply_sshcfg(c, item, h, sc);
	sshcfg_free(sc);
	return r;
}

/* What neither the host nor [defaults] set, and what depends on transport. */
static int
finish_host(const struct ctx *c, const cJSON *table, struct host *h)
{
	char *expanded;
	size_t i;

	if (h->transport == TRANSPORT_SSH) {
		if (h->address == NULL)
			return fail(c, SO_EINVAL, table, AT_VALUE,
			    "missing key \"address\" or \"ssh\" (one is "
			    "required with transport \"ssh\")");
		if (h->known_hosts == NULL &&
		    (h->known_hosts = expand_tilde("~/.ssh/known_hosts")) ==
		    NULL)
			return fail(c, SO_EINVAL, table, AT_VALUE, "cannot "
			    "find the home directory for the default "
			    "\"known_hosts\"");
		for (i = 0; i < HOST_NFIELDS; i++)
			if (h->origin[i] == NULL && i != HOST_PROXY_JUMP &&
			    (i != HOST_IDENTITY || h->identity == NULL))
				h->origin[i] = xstrdup("default");
	}
	if (h->workdir == NULL) {
		if (h->transport == TRANSPORT_SSH)
			h->workdir = xstrdup("~/.seqorch");
		else if ((expanded = expand_tilde("~/.seqorch")) == NULL)
			return fail(c, SO_EINVAL, table, AT_VALUE, "cannot "
			    "find the home directory for the default "
			    "\"workdir\"");
		else
			h->workdir = expanded;
	}
	if (h->cc == NULL) {
		h->cc = xcalloc(1, sizeof *h->cc);
		h->cc[h->ncc++] = xstrdup("cc");
	}
	if (h->cflags == NULL)
		h->cflags = xstrdup("-O3");
	return 0;
}

static int load_host(struct ctx *, const cJSON *, const cJSON *,
    struct host *, int);

/*
 * One jump of a ProxyJump list, "[user@]host[:port]" (IPv6 in brackets).
 * A bare name of a hosts.toml ssh host is that host; anything else is
 * resolved in ssh_config as OpenSSH does, with the target's known_hosts,
 * identity and connect_timeout where ssh_config sets none.  The jump's own
 * proxy_jump is not followed: the list gives the whole chain.
 */
static int
load_jump(struct ctx *c, const cJSON *at, const char *spec,
    const struct host *target, struct host *hop)
{
	struct sshcfg *sc = NULL;
	struct so_err e = { 0 };
	const cJSON *table = NULL;
	char *copy = xstrdup(spec), *name = copy, *user = NULL, *port = NULL;
	char *p, subject[sizeof c->subject];
	int64_t n = 0;
	size_t i;
	int r = 0;

	if ((p = strrchr(name, '@')) != NULL) {
		*p = '\0';
		user = name;
		name = p + 1;
	}
	if (*name == '[' && (p = strchr(name, ']')) != NULL) {
		*p++ = '\0';
		name++;
		port = *p == ':' ? p + 1 : NULL;
		if (*p != '\0' && port == NULL)
			name = "";
	} else if ((p = strchr(name, ':')) != NULL &&
	    strchr(p + 1, ':') == NULL) {
		*p = '\0';
		port = p + 1;
	}
	if (*name == '\0' || (user != NULL && *user == '\0') ||
	    (port != NULL && parse_int64(port, 1, 65535, &n) != 0)) {
		r = fail(c, SO_EINVAL, at, AT_VALUE, "jump host \"%s\" must be "
		    "[user@]host[:port]", spec);
		goto out;
	}
	if (user == NULL && port == NULL && c->hosts != NULL)
		table = cJSON_GetObjectItemCaseSensitive(c->hosts, name);
	if (table != NULL && strcmp(name, target->name) == 0) {
		r = fail(c, SO_EINVAL, at, AT_VALUE, "host \"%s\" cannot be "
		    "its own jump host", name);
		goto out;
	}
	if (table != NULL && toml_type(c->doc, table) == TOML_TABLE) {
		memcpy(subject, c->subject, sizeof subject);
		r = load_host(c, table, c->defaults, hop, 1);
		memcpy(c->subject, subject, sizeof subject);
		if (r == 0 && hop->transport != TRANSPORT_SSH)
			r = fail(c, SO_EINVAL, at, AT_VALUE, "jump host \"%s\" "
			    "has transport \"local\"", name);
		goto out;
	}
	hop->name = xstrdup(name);
	hop->transport = TRANSPORT_SSH;
	hop->port = port != NULL ? (int)n : 22;
	if (port != NULL)
		hop->origin[HOST_PORT] = xasprintf("jump host \"%s\"", spec);
	if (user != NULL) {
		hop->user = xstrdup(user);
		hop->origin[HOST_USER] = xasprintf("jump host \"%s\"", spec);
	}
	hop->connect_timeout = target->connect_timeout;
	if (sshcfg_resolve(c->ssh_config, name, user, port ? (int)n : 0, &sc,
	    &e) != 0) {
		r = fail(c, e.code, at, AT_VALUE, "jump host \"%s\": %s", name,
		    e.msg);
		goto out;
	}
	keep_warnings(c, target, sc);
	if ((r = apply_sshcfg(c, at, hop, sc)) != 0)
		goto out;
	/* The jump goes with the host it leads to: same keys and trust. */
	if (hop->known_hosts == NULL) {
		hop->known_hosts = xstrdup(target->known_hosts);
		hop->origin[HOST_KNOWN_HOSTS] = xasprintf("host \"%s\"",
		    target->name);
	}
	if (hop->nssh_identities == 0 && (target->identity != NULL ||
	    target->nssh_identities > 0)) {
		if (target->identity != NULL)
			hop->identity = xstrdup(target->identity);
		hop->ssh_identities = xcalloc(target->nssh_identities + 1,
		    sizeof *hop->ssh_identities);
		for (i = 0; i < target->nssh_identities; i++)
			hop->ssh_identities[hop->nssh_identities++] =
			    xstrdup(target->ssh_identities[i]);
		hop->origin[HOST_IDENTITY] = xasprintf("host \"%s\"",
		    target->name);
	}
	if (hop->origin[HOST_CONNECT_TIMEOUT] == NULL)
		hop->origin[HOST_CONNECT_TIMEOUT] = xasprintf("host \"%s\"",
		    target->name);
	free(hop->proxy_jump);
	hop->proxy_jump = NULL;
	r = finish_host(c, at, hop);
out:
	sshcfg_free(sc);
	free(copy);
	return r;
}

/* h->proxy_jump, "a,b,...", into h->jumps (the first is connected first). */
static int
load_jumps(struct ctx *c, const cJSON *at, struct host *h)
{
	char *copy = xstrdup(h->proxy_jump), *rest = copy, *spec;
	size_t n = 1;
	int r = 0;

	for (spec = copy; *spec != '\0'; spec++)
		n += *spec == ',';
	h->jumps = xcalloc(n, sizeof *h->jumps);
	while (r == 0 && (spec = strsep(&rest, ",")) != NULL) {
		if (*spec == '\0') {
			r = fail(c, SO_EINVAL, at, AT_VALUE, "empty jump host "
			    "in \"%s\"", h->proxy_jump);
			break;
		}
		/* Counted first, so that host_clear() frees a partial one. */
		r = load_jump(c, at, spec, h, &h->jumps[h->njumps++]);
	}
	free(copy);
	return r;
}

/*
 * One [hosts.NAME] table, with defaults (which may be NULL) beneath it.
 * The host's own keys come first, then ssh_config for an "ssh" alias,
 * then [defaults] for what is still unset.  A host loaded as a jump host
 * (as_jump) does not follow its own proxy_jump.
 */
static int
load_host(struct ctx *c, const cJSON *table, const cJSON *defaults,
    struct host *h, int as_jump)
{
	const struct key_def *k;
	const cJSON *item, *alias = NULL, *jump_at = NULL;
	int col, own, pass, f, r;

	snprintf(c->subject, sizeof c->subject, "host \"%s\"", table->string);
	h->name = xstrdup(table->string);
	h->transport = TRANSPORT_SSH;
	h->port = 22;
	h->connect_timeout = 10;
	(void)toml_pos(c->doc, table, &h->line, &col);
	if ((r = check_keys(c, table)) < 0)
		return r;
	/*
	 * Pass 0: the host's own keys, and [defaults] for keys ssh_config
	 * cannot set.  Pass 1, after ssh_config: [defaults] for the rest.
	 */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && alias != NULL &&
		    (r = resolve_alias(c, alias, h)) < 0)
			return r;
		for (k = key_defs; k < key_defs + nitems(key_defs); k++) {
			item = cJSON_GetObjectItemCaseSensitive(table, k->name);
			own = item != NULL;
			if (item == NULL && defaults != NULL)
				item = cJSON_GetObjectItemCaseSensitive(
				    defaults, k->name);
			if (item == NULL)
				continue;
			f = field_of(k->name);
			if (own || f < 0 ? pass != 0 :
			    pass != 1 || h->origin[f] != NULL)
				continue;
			if ((k->flags & KEY_SSH_ONLY) &&
			    h->transport == TRANSPORT_LOCAL) {
				/* [defaults] serve ssh hosts too. */
				if (!own)
					continue;
				return fail(c, SO_EINVAL, item, AT_KEY, "key "
				    "\"%s\" only applies to transport \"ssh\"",
				    k->name);
			}
			if ((r = set_key(c, k, item, h)) < 0)
				return r;
			set_origin(h, f, toml_origin(c, item, own));
			if (strcmp(k->name, "ssh") == 0)
				alias = item;
			if (strcmp(k->name, "proxy_jump") == 0)
				jump_at = item;
		}
	}
	if ((r = finish_host(c, table, h)) < 0)
		return r;
	if (as_jump || h->proxy_jump == NULL)
		return 0;
	return load_jumps(c, jump_at != NULL ? jump_at : alias, h);
}

static int
load_root(struct ctx *c, const cJSON *root, struct config *cfg)
{
	const cJSON *item, *defaults = NULL, *hosts = NULL;
	const char *best;
	size_t best_distance;
	int n, r;

	cJSON_ArrayForEach(item, root) {
		if (strcmp(item->string, "defaults") == 0) {
			defaults = item;
			continue;
		}
		if (strcmp(item->string, "hosts") == 0) {
			hosts = item;
			continue;
		}
		best = NULL;
		best_distance = SIZE_MAX;
		consider(item->string, "defaults", &best, &best_distance);
		consider(item->string, "hosts", &best, &best_distance);
		if (toml_type(c->doc, item) != TOML_TABLE)
			return fail(c, SO_EINVAL, item, AT_KEY, "unknown "
			    "top-level key \"%s\" (keys belong in [defaults] "
			    "or [hosts.NAME])", item->string);
		if (best != NULL)
			return fail(c, SO_EINVAL, item, AT_KEY, "unknown table "
			    "\"%s\" (did you mean \"%s\"?)", item->string,
			    best);
		return fail(c, SO_EINVAL, item, AT_KEY, "unknown table \"%s\" "
		    "(expected [defaults] or [hosts.NAME])", item->string);
	}
	if (defaults != NULL) {
		if (toml_type(c->doc, defaults) != TOML_TABLE)
			return fail(c, SO_EINVAL, defaults, AT_VALUE,
			    "\"defaults\" must be a table, got %s",
			    toml_type_name(toml_type(c->doc, defaults)));
		if ((r = check_defaults(c, defaults)) < 0)
			return r;
		item = cJSON_GetObjectItemCaseSensitive(defaults, "cache");
		if (item != NULL && toml_type(c->doc, item) != TOML_STRING)
			return wrong(c, item, "cache", "a directory path");
		if (item != NULL && (item->valuestring[0] == '\0' ||
		    (cfg->cache = expand_tilde(item->valuestring)) == NULL))
			return fail(c, SO_EINVAL, item, AT_VALUE, "key "
			    "\"cache\": cannot use \"%s\" as a directory",
			    item->valuestring);
		*c->subject = '\0';
	}
	if (hosts != NULL && toml_type(c->doc, hosts) != TOML_TABLE)
		return fail(c, SO_EINVAL, hosts, AT_VALUE, "\"hosts\" must be "
		    "a table of [hosts.NAME] tables, got %s",
		    toml_type_name(toml_type(c->doc, hosts)));
	c->hosts = hosts;
	c->defaults = defaults;
	n = cJSON_GetArraySize(hosts);
	if (n == 0)
		return fail(c, SO_EINVAL, hosts, AT_VALUE, "no hosts defined "
		    "(add a [hosts.NAME] table)");
	cfg->hosts = xcalloc((size_t)n, sizeof *cfg->hosts);
	cJSON_ArrayForEach(item, hosts) {
		*c->subject = '\0';
		if (!valid_name(item->string))
			return fail(c, SO_EINVAL, item, AT_KEY, "invalid host "
			    "name \"%s\" (%s)", item->string, NAME_RULE);
		if (strcmp(item->string, "all") == 0)
			return fail(c, SO_EINVAL, item, AT_KEY, "host name "
			    "\"all\" is reserved: --hosts all selects every "
			    "host");
		if (toml_type(c->doc, item) != TOML_TABLE)
			return fail(c, SO_EINVAL, item, AT_VALUE, "host \"%s\" "
			    "must be a table [hosts.%s], got %s", item->string,
			    item->string,
			    toml_type_name(toml_type(c->doc, item)));
		/* Counted first, so that config_free() sees partial hosts. */
		if ((r = load_host(c, item, defaults,
		    &cfg->hosts[cfg->nhosts++], 0)) < 0)
			return r;
	}
	return 0;
}

int
config_load(const char *path, const char *ssh_config, struct config **out,
    struct so_err *err)
{
	struct toml_doc *doc = NULL;
	struct config *cfg = NULL;
	struct ctx c;
	int r;

	if ((r = toml_load(path, &doc, err)) < 0)
		goto out;
	cfg = xcalloc(1, sizeof *cfg);
	cfg->path = xstrdup(path);
	memset(&c, 0, sizeof c);
	c.path = path;
	c.ssh_config = ssh_config;
	c.doc = doc;
	c.cfg = cfg;
	c.err = err;
	if ((r = load_root(&c, toml_root(doc), cfg)) < 0)
		goto out;
	*out = cfg;
	cfg = NULL;
out:
	/* Keys and values of the file are echoed: no terminal escapes. */
	if (r < 0 && err != NULL)
		strip_ctrl(err->msg);
	config_free(cfg);
	toml_free(doc);
	return r;
}

void
config_free(struct config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = cfg->nwarnings; i > 0; i--)
		free(cfg->warnings[i - 1]);
	free(cfg->warnings);
	for (i = cfg->nhosts; i > 0; i--)
		host_clear(&cfg->hosts[i - 1]);
	free(cfg->hosts);
	free(cfg->cache);
	free(cfg->path);
	free(cfg);
}

static int
has_group(const struct host *h, const char *group)
{
	size_t i;

	for (i = 0; i < h->ngroups; i++)
		if (strcmp(h->groups[i], group) == 0)
			return 1;
	return 0;
}

/* Mark the hosts of group in chosen; SO_ENOTFOUND if it has none. */
static int
select_group(const struct config *cfg, const char *group,
    unsigned char *chosen, struct so_err *err)
{
	char valid[SO_ERR_MAX / 2];
	size_t i, j, found = 0;

	for (i = 0; i < cfg->nhosts; i++) {
		if (has_group(&cfg->hosts[i], group)) {
			chosen[i] = 1;
			found++;
		}
	}
	if (found > 0)
		return 0;
	/* Each group once, in the order it first appears. */
	*valid = '\0';
	for (i = 0; i < cfg->nhosts; i++) {
		for (j = 0; j < cfg->hosts[i].ngroups; j++) {
			const char *g = cfg->hosts[i].groups[j];
			size_t k;

			for (k = 0; k < i && !has_group(&cfg->hosts[k], g); k++)
				;
			if (k == i)
				append_name(valid, sizeof valid, g);
		}
	}
	if (*valid == '\0')
		return so_error(err, SO_ENOTFOUND, "unknown group \"@%s\" "
		    "(%s defines no groups)", group, cfg->path);
	return so_error(err, SO_ENOTFOUND, "unknown group \"@%s\" (groups in "
	    "%s: %s)", group, cfg->path, valid);
}

static int
select_host(const struct config *cfg, const char *name,
    unsigned char *chosen, struct so_err *err)
{
	char valid[SO_ERR_MAX / 2];
	size_t i;

	for (i = 0; i < cfg->nhosts; i++) {
		if (strcmp(cfg->hosts[i].name, name) == 0) {
			chosen[i] = 1;
			return 0;
		}
	}
	*valid = '\0';
	for (i = 0; i < cfg->nhosts; i++)
		append_name(valid, sizeof valid, cfg->hosts[i].name);
	return so_error(err, SO_ENOTFOUND, "unknown host \"%s\" (hosts in %s: "
	    "%s)", name, cfg->path, valid);
}

/* Strip the spaces people leave after commas ("a, b"); in place. */
static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int
config_select(const struct config *cfg, const char *spec,
    struct host ***out, size_t *n, struct so_err *err)
{
	unsigned char *chosen;
	char *copy, *rest, *name;
	struct host **list;
	size_t i, count = 0;
	int r = 0;

	chosen = xcalloc(cfg->nhosts, 1);
	copy = rest = xstrdup(spec);
	if (*trim(copy) == '\0') {
		r = so_error(err, SO_EINVAL, "empty host selection");
		goto out;
	}
	while ((name = strsep(&rest, ",")) != NULL) {
		name = trim(name);
		if (*name == '\0' || strcmp(name, "@") == 0) {
			r = so_error(err, SO_EINVAL, "empty name in host "
			    "selection \"%s\"", spec);
			goto out;
		}
		if (strcmp(name, "all") == 0)
			memset(chosen, 1, cfg->nhosts);
		else if (*name == '@')
			r = select_group(cfg, name + 1, chosen, err);
		else
			r = select_host(cfg, name, chosen, err);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < cfg->nhosts; i++)
		count += chosen[i];
	list = xcalloc(count, sizeof *list);
	for (i = 0, count = 0; i < cfg->nhosts; i++)
		if (chosen[i])
			list[count++] = &cfg->hosts[i];
	*out = list;
	*n = count;
out:
	/* Names typed by the user are echoed: no terminal escapes. */
	if (r < 0 && err != NULL)
		strip_ctrl(err->msg);
	free(copy);
	free(chosen);
	return r;
}

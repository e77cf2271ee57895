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
	const struct toml_doc *doc;
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
	if (item->valuedouble >= min && item->valuedouble <= max)
		return 0;
	return fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" must be %s, "
	    "got %.0f", key, want, item->valuedouble);
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
	free(h->build_wrapper);
	free_list(h->groups, h->ngroups);
	free(h->cflags);
	free_list(h->cc, h->ncc);
	free(h->workdir);
	free(h->known_hosts);
	free(h->identity);
	free(h->user);
	free(h->address);
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

/* What neither the host nor [defaults] set, and what depends on transport. */
static int
finish_host(const struct ctx *c, const cJSON *table, struct host *h)
{
	char *expanded;

	if (h->transport == TRANSPORT_SSH) {
		if (h->address == NULL)
			return fail(c, SO_EINVAL, table, AT_VALUE,
			    "missing key \"address\" (required with "
			    "transport \"ssh\")");
		if (h->known_hosts == NULL &&
		    (h->known_hosts = expand_tilde("~/.ssh/known_hosts")) ==
		    NULL)
			return fail(c, SO_EINVAL, table, AT_VALUE, "cannot "
			    "find the home directory for the default "
			    "\"known_hosts\"");
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

/* One [hosts.NAME] table, with defaults (which may be NULL) beneath it. */
static int
load_host(struct ctx *c, const cJSON *table, const cJSON *defaults,
    struct host *h)
{
	const struct key_def *k;
	const cJSON *item;
	int col, own, r;

	snprintf(c->subject, sizeof c->subject, "host \"%s\"", table->string);
	h->name = xstrdup(table->string);
	h->transport = TRANSPORT_SSH;
	h->port = 22;
	h->connect_timeout = 10;
	(void)toml_pos(c->doc, table, &h->line, &col);
	if ((r = check_keys(c, table)) < 0)
		return r;
	for (k = key_defs; k < key_defs + nitems(key_defs); k++) {
		item = cJSON_GetObjectItemCaseSensitive(table, k->name);
		own = item != NULL;
		if (item == NULL && defaults != NULL)
			item = cJSON_GetObjectItemCaseSensitive(defaults,
			    k->name);
		if (item == NULL)
			continue;
		if ((k->flags & KEY_SSH_ONLY) &&
		    h->transport == TRANSPORT_LOCAL) {
			/* [defaults] serve ssh hosts too: not a mistake. */
			if (!own)
				continue;
			return fail(c, SO_EINVAL, item, AT_KEY, "key \"%s\" "
			    "only applies to transport \"ssh\"", k->name);
		}
		if ((r = set_key(c, k, item, h)) < 0)
			return r;
	}
	return finish_host(c, table, h);
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
		*c->subject = '\0';
	}
	if (hosts != NULL && toml_type(c->doc, hosts) != TOML_TABLE)
		return fail(c, SO_EINVAL, hosts, AT_VALUE, "\"hosts\" must be "
		    "a table of [hosts.NAME] tables, got %s",
		    toml_type_name(toml_type(c->doc, hosts)));
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
		    &cfg->hosts[cfg->nhosts++])) < 0)
			return r;
	}
	return 0;
}

int
config_load(const char *path, struct config **out, struct so_err *err)
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
	c.doc = doc;
	c.err = err;
	if ((r = load_root(&c, toml_root(doc), cfg)) < 0)
		goto out;
	*out = cfg;
	cfg = NULL;
out:
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
	for (i = cfg->nhosts; i > 0; i--)
		host_clear(&cfg->hosts[i - 1]);
	free(cfg->hosts);
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
	free(copy);
	free(chosen);
	return r;
}

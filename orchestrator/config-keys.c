/*
 * hosts.toml's keys (key_defs) and the checks of their values: each
 * value is checked and stored into struct host, and a mistake is reported
 * with its file:line:col and, for a typo, the key that was meant.
 */
#include "config-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#define FIELD(f) offsetof(struct host, f)

const struct key_def cfg_keys[] = {
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
	{ .name = "reference", .type = KEY_REFERENCE,
	  .off = FIELD(reference) },
};

/*
 * The machines of the seeds' published figures, as reference/seeds.json
 * names them ("seed:genoa"); tests/test_57_reproduce.py checks that the
 * two lists agree.
 */
static const char *const published_machines[] = {
	"graviton5", "m4", "genoa", NULL
};

const size_t cfg_nkeys = nitems(cfg_keys);

/* Keys people reach for that seqorch refuses, and what to do instead. */
static const struct {
	const char *name;
	const char *instead;
} secret_keys[] = {
	{ "password", "use a key file (\"identity\") or ssh-agent" },
	{ "passphrase", "load the key into ssh-agent instead" },
};

/*
 * Fill err with "PATH:LINE:COL: SUBJECT: message", the position being
 * that of item's value or key; items without one (NULL, the root) get
 * just "PATH: ".  Returns code.
 */
int
cfg_fail(const struct ctx *c, int code, const cJSON *item, int at,
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
int
cfg_wrong(const struct ctx *c, const cJSON *item, const char *key,
    const char *want)
{
	return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" must be %s, "
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
	return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" must be %s, "
	    "got %s", key, want, text != NULL ? text : "?");
}

/* Append ", name" (or "name" when buf is empty), truncating quietly. */
void
cfg_append_name(char *buf, size_t len, const char *name)
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

	for (i = 0; i < cfg_nkeys; i++)
		if (strcmp(cfg_keys[i].name, name) == 0)
			return &cfg_keys[i];
	return NULL;
}

int
cfg_valid_name(const char *s)
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
char *
cfg_expand_tilde(const char *path)
{
	const char *rest;
	char *user, *home, *out;

	if (path[0] != '~')
		return xstrdup(path);
	rest = path + 1 + strcspn(path + 1, "/");
	if (rest == path + 1)
		home = user_home();
	else {
		user = xasprintf("%.*s", (int)(rest - path - 1), path + 1);
		home = pw_home(user);
		free(user);
	}
	if (home == NULL)
		return NULL;
	out = xasprintf("%s%s", home, rest);
	free(home);
	return out;
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
		return cfg_wrong(c, item, key, want);
	if (!may_be_empty && *item->valuestring == '\0')
		return cfg_fail(c, SO_EINVAL, item, AT_VALUE,
		    "key \"%s\" must not be empty", key);
	if (has_control(item->valuestring))
		return cfg_fail(c, SO_EINVAL, item, AT_VALUE,
		    "key \"%s\" must not contain control characters", key);
	*out = item->valuestring;
	return 0;
}

void
cfg_free_list(char **list, size_t n)
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
		return cfg_wrong(c, item, k->name, want);
	if (k->type == KEY_COMMANDS && cJSON_GetArraySize(item) == 0)
		return cfg_fail(c, SO_EINVAL, item, AT_VALUE,
		    "key \"%s\" must name at least one compiler", k->name);
	*list = xcalloc((size_t)cJSON_GetArraySize(item), sizeof **list);
	cJSON_ArrayForEach(elem, item) {
		if ((r = get_string(c, elem, k->name, want, 0, &s)) < 0)
			return r;
		if (k->type == KEY_NAMES && !cfg_valid_name(s))
			return cfg_fail(c, SO_EINVAL, elem, AT_VALUE,
			    "invalid group name \"%s\" (%s)", s, NAME_RULE);
		/* A compiler twice would build and time everything twice. */
		for (i = 0; i < *count; i++)
			if (strcmp((*list)[i], s) == 0)
				return cfg_fail(c, SO_EINVAL, elem, AT_VALUE,
				    "%s \"%s\" is listed twice",
				    k->type == KEY_NAMES ? "group" : "compiler",
				    s);
		(*list)[(*count)++] = xstrdup(s);
	}
	return 0;
}

/*
 * The rule a string value s of type t breaks (for the message after
 * "key \"NAME\" "), or NULL; *shown says whether the message quotes s.
 */
static const char *
broken_rule(enum key_type t, const char *s, int *shown)
{
	*shown = 1;
	if (t == KEY_ADDRESS && strchr(s, '@') != NULL) {
		*shown = 0;
		return "must not contain a user name: set \"user\"";
	}
	if (t == KEY_ADDRESS && (s[0] == '-' ||
	    strspn(s, ADDRESS_CHARS) != strlen(s)))
		return "must be a host name or IP address";
	if (t == KEY_WORD && (s[0] == '-' || strchr(s, ' ') != NULL))
		return "must not contain spaces or start with '-'";
	return NULL;
}

#define CPU_WANT "an integer >= 0, \"none\" or \"auto\""

/* Check item as the value of key k and store it into h. */
int
cfg_set_key(const struct ctx *c, const struct key_def *k, const cJSON *item,
    struct host *h)
{
	const char *s, *rule;
	char want[64];
	char *expanded;
	int *num;
	int r, shown;

	switch (k->type) {
	case KEY_TRANSPORT:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		if (strcmp(s, "ssh") == 0)
			h->transport = TRANSPORT_SSH;
		else if (strcmp(s, "local") == 0)
			h->transport = TRANSPORT_LOCAL;
		else
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must be \"ssh\" or \"local\", got \"%s\"",
			    k->name, s);
		return 0;
	case KEY_ADDRESS:
	case KEY_WORD:
	case KEY_STRING:
		if ((r = get_string(c, item, k->name, "a string",
		    k->flags & KEY_MAY_BE_EMPTY, &s)) < 0)
			return r;
		if ((rule = broken_rule(k->type, s, &shown)) != NULL)
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "%s%s%s%s", k->name, rule, shown ? ", got \"" : "",
			    shown ? s : "", shown ? "\"" : "");
		*(char **)((char *)h + k->off) = xstrdup(s);
		return 0;
	case KEY_PATH:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		if ((k->flags & KEY_REMOTE) && s[0] != '/' &&
		    strcmp(s, "~") != 0 && strncmp(s, "~/", 2) != 0)
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must be an absolute path or start with \"~/\", "
			    "got \"%s\"", k->name, s);
		if ((k->flags & KEY_REMOTE) && h->transport != TRANSPORT_LOCAL)
			expanded = xstrdup(s);
		else if ((expanded = cfg_expand_tilde(s)) == NULL)
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\": "
			    "cannot expand \"%s\": unknown user or no home "
			    "directory", k->name, s);
		*(char **)((char *)h + k->off) = expanded;
		return 0;
	case KEY_INT:
		snprintf(want, sizeof want, "an integer from %d to %d",
		    k->min, k->max);
		if (toml_type(c->doc, item) != TOML_INTEGER)
			return cfg_wrong(c, item, k->name, want);
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
				return cfg_fail(c, SO_EINVAL, item, AT_VALUE,
				    "key \"%s\" must be %s, got \"%s\"",
				    k->name, CPU_WANT, item->valuestring);
			return 0;
		}
		if (toml_type(c->doc, item) != TOML_INTEGER)
			return cfg_wrong(c, item, k->name, CPU_WANT);
		if ((r = check_range(c, item, k->name, CPU_WANT, 0,
		    INT_MAX)) < 0)
			return r;
		*num = (int)item->valuedouble;
		return 0;
	case KEY_REFERENCE:
		if ((r = get_string(c, item, k->name, "a string", 0, &s)) < 0)
			return r;
		/* As --reference writes it, too. */
		if (strncmp(s, "seed:", 5) == 0)
			s += 5;
		for (r = 0; published_machines[r] != NULL &&
		    strcmp(published_machines[r], s) != 0; r++)
			;
		if (published_machines[r] == NULL)
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key \"%s\" "
			    "must be \"graviton5\", \"m4\" or \"genoa\" (the "
			    "seeds' machines), got \"%s\"", k->name, s);
		*(char **)((char *)h + k->off) = xstrdup(s);
		return 0;
	case KEY_COMMANDS:
	case KEY_NAMES:
		return set_list(c, k, item, h);
	}
	return 0;
}

/* Every key of a host table or of [defaults] must be one we know. */
int
cfg_check_keys(const struct ctx *c, const cJSON *table)
{
	const cJSON *item;
	struct nearest near;
	char valid[SO_ERR_MAX / 2];
	size_t i;

	cJSON_ArrayForEach(item, table) {
		/* The coordinator's own setting: [defaults] only. */
		if (strcmp(item->string, "cache") == 0) {
			if (strcmp(c->subject, "defaults") == 0)
				continue;
			return cfg_fail(c, SO_EINVAL, item, AT_KEY, "key \"cache\" "
			    "belongs in [defaults]: the coordinator has one "
			    "artifact cache");
		}
		for (i = 0; i < nitems(secret_keys); i++)
			if (strcmp(item->string, secret_keys[i].name) == 0)
				return cfg_fail(c, SO_EINVAL, item, AT_KEY,
				    "key \"%s\" is not allowed: seqorch keeps "
				    "no secrets; %s", item->string,
				    secret_keys[i].instead);
		if (find_key(item->string) != NULL)
			continue;
		near = (struct nearest)NEAREST_INIT(item->string);
		for (i = 0; i < cfg_nkeys; i++)
			nearest_try(&near, cfg_keys[i].name);
		if (nearest_word(&near) != NULL)
			return cfg_fail(c, SO_EINVAL, item, AT_KEY, "unknown key "
			    "\"%s\" (did you mean \"%s\"?)", item->string,
			    nearest_word(&near));
		*valid = '\0';
		for (i = 0; i < cfg_nkeys; i++)
			cfg_append_name(valid, sizeof valid, cfg_keys[i].name);
		if (strcmp(c->subject, "defaults") == 0)
			cfg_append_name(valid, sizeof valid, "cache");
		return cfg_fail(c, SO_EINVAL, item, AT_KEY, "unknown key \"%s\" "
		    "(valid keys: %s)", item->string, valid);
	}
	return 0;
}

/*
 * hosts.toml front end.  toml.cc turns the file into a cJSON tree that
 * remembers source positions; config-keys.c checks it against its table of
 * keys and this file fills struct host, so that a typo is reported with its file:line:col
 * before anything connects anywhere.
 */
#include "config-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	cfg_free_list(h->ssh_identities, h->nssh_identities);
	free(h->build_wrapper);
	free(h->reference);
	cfg_free_list(h->groups, h->ngroups);
	free(h->cflags);
	cfg_free_list(h->cc, h->ncc);
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
	if ((r = cfg_check_keys(c, defaults)) < 0)
		goto out;
	for (i = 0; i < cfg_nkeys; i++) {
		item = cJSON_GetObjectItemCaseSensitive(defaults,
		    cfg_keys[i].name);
		if (item != NULL &&
		    (r = cfg_set_key(c, &cfg_keys[i], item, &scratch)) < 0)
			goto out;
	}
out:
	host_clear(&scratch);
	return r;
}

/* What neither the host nor [defaults] set, and what depends on transport. */
int
cfg_finish_host(const struct ctx *c, const cJSON *table, struct host *h)
{
	char *expanded;
	size_t i;

	if (h->transport == TRANSPORT_SSH) {
		if (h->address == NULL)
			return cfg_fail(c, SO_EINVAL, table, AT_VALUE,
			    "missing key \"address\" or \"ssh\" (one is "
			    "required with transport \"ssh\")");
		if (h->known_hosts == NULL &&
		    (h->known_hosts = cfg_expand_tilde("~/.ssh/known_hosts")) ==
		    NULL)
			return cfg_fail(c, SO_EINVAL, table, AT_VALUE, "cannot "
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
		else if ((expanded = cfg_expand_tilde("~/.seqorch")) == NULL)
			return cfg_fail(c, SO_EINVAL, table, AT_VALUE, "cannot "
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

/*
 * One [hosts.NAME] table, with defaults (which may be NULL) beneath it.
 * The host's own keys come first, then ssh_config for an "ssh" alias,
 * then [defaults] for what is still unset.  A host loaded as a jump host
 * (as_jump) does not follow its own proxy_jump.
 */
int
cfg_load_host(struct ctx *c, const cJSON *table, const cJSON *defaults,
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
	if ((r = cfg_check_keys(c, table)) < 0)
		return r;
	/*
	 * Pass 0: the host's own keys, and [defaults] for keys ssh_config
	 * cannot set.  Pass 1, after ssh_config: [defaults] for the rest.
	 */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && alias != NULL &&
		    (r = cfg_resolve_alias(c, alias, h)) < 0)
			return r;
		for (k = cfg_keys; k < cfg_keys + cfg_nkeys; k++) {
			item = cJSON_GetObjectItemCaseSensitive(table, k->name);
			own = item != NULL;
			if (item == NULL && defaults != NULL)
				item = cJSON_GetObjectItemCaseSensitive(
				    defaults, k->name);
			if (item == NULL)
				continue;
			f = cfg_field_of(k->name);
			if (own || f < 0 ? pass != 0 :
			    pass != 1 || h->origin[f] != NULL)
				continue;
			if ((k->flags & KEY_SSH_ONLY) &&
			    h->transport == TRANSPORT_LOCAL) {
				/* [defaults] serve ssh hosts too. */
				if (!own)
					continue;
				return cfg_fail(c, SO_EINVAL, item, AT_KEY, "key "
				    "\"%s\" only applies to transport \"ssh\"",
				    k->name);
			}
			if ((r = cfg_set_key(c, k, item, h)) < 0)
				return r;
			cfg_set_origin(h, f, cfg_toml_origin(c, item, own));
			if (strcmp(k->name, "ssh") == 0)
				alias = item;
			if (strcmp(k->name, "proxy_jump") == 0)
				jump_at = item;
		}
	}
	if ((r = cfg_finish_host(c, table, h)) < 0)
		return r;
	if (as_jump || h->proxy_jump == NULL)
		return 0;
	return cfg_load_jumps(c, jump_at != NULL ? jump_at : alias, h);
}

static int
load_root(struct ctx *c, const cJSON *root, struct config *cfg)
{
	const cJSON *item, *defaults = NULL, *hosts = NULL;
	struct nearest near;
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
		near = (struct nearest)NEAREST_INIT(item->string);
		nearest_try(&near, "defaults");
		nearest_try(&near, "hosts");
		if (toml_type(c->doc, item) != TOML_TABLE)
			return cfg_fail(c, SO_EINVAL, item, AT_KEY, "unknown "
			    "top-level key \"%s\" (keys belong in [defaults] "
			    "or [hosts.NAME])", item->string);
		if (nearest_word(&near) != NULL)
			return cfg_fail(c, SO_EINVAL, item, AT_KEY, "unknown table "
			    "\"%s\" (did you mean \"%s\"?)", item->string,
			    nearest_word(&near));
		return cfg_fail(c, SO_EINVAL, item, AT_KEY, "unknown table \"%s\" "
		    "(expected [defaults] or [hosts.NAME])", item->string);
	}
	if (defaults != NULL) {
		if (toml_type(c->doc, defaults) != TOML_TABLE)
			return cfg_fail(c, SO_EINVAL, defaults, AT_VALUE,
			    "\"defaults\" must be a table, got %s",
			    toml_type_name(toml_type(c->doc, defaults)));
		if ((r = check_defaults(c, defaults)) < 0)
			return r;
		item = cJSON_GetObjectItemCaseSensitive(defaults, "cache");
		if (item != NULL && toml_type(c->doc, item) != TOML_STRING)
			return cfg_wrong(c, item, "cache", "a directory path");
		if (item != NULL && (item->valuestring[0] == '\0' ||
		    (cfg->cache = cfg_expand_tilde(item->valuestring)) == NULL))
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "key "
			    "\"cache\": cannot use \"%s\" as a directory",
			    item->valuestring);
		*c->subject = '\0';
	}
	if (hosts != NULL && toml_type(c->doc, hosts) != TOML_TABLE)
		return cfg_fail(c, SO_EINVAL, hosts, AT_VALUE, "\"hosts\" must be "
		    "a table of [hosts.NAME] tables, got %s",
		    toml_type_name(toml_type(c->doc, hosts)));
	c->hosts = hosts;
	c->defaults = defaults;
	n = cJSON_GetArraySize(hosts);
	if (n == 0)
		return cfg_fail(c, SO_EINVAL, hosts, AT_VALUE, "no hosts defined "
		    "(add a [hosts.NAME] table)");
	cfg->hosts = xcalloc((size_t)n, sizeof *cfg->hosts);
	cJSON_ArrayForEach(item, hosts) {
		*c->subject = '\0';
		if (!cfg_valid_name(item->string))
			return cfg_fail(c, SO_EINVAL, item, AT_KEY, "invalid host "
			    "name \"%s\" (%s)", item->string, NAME_RULE);
		if (strcmp(item->string, "all") == 0)
			return cfg_fail(c, SO_EINVAL, item, AT_KEY, "host name "
			    "\"all\" is reserved: --hosts all selects every "
			    "host");
		if (toml_type(c->doc, item) != TOML_TABLE)
			return cfg_fail(c, SO_EINVAL, item, AT_VALUE, "host \"%s\" "
			    "must be a table [hosts.%s], got %s", item->string,
			    item->string,
			    toml_type_name(toml_type(c->doc, item)));
		/* Counted first, so that config_free() sees partial hosts. */
		if ((r = cfg_load_host(c, item, defaults,
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
	free(cfg->hint);
	free(cfg->path);
	free(cfg);
}

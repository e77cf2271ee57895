/*
 * hosts.toml meets ssh_config: an "ssh" alias and proxy_jump hops are
 * resolved as OpenSSH would, and where each connection setting came from
 * is kept for `hosts list -v`.
 */
#include "config-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

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

/* The origin_keys[] field of key, or -1. */
int
cfg_field_of(const char *key)
{
	size_t i;

	for (i = 0; i < nitems(origin_keys); i++)
		if (strcmp(origin_keys[i].key, key) == 0)
			return (int)origin_keys[i].field;
	return -1;
}

void
cfg_set_origin(struct host *h, int field, char *origin)
{
	if (field < 0) {
		free(origin);
		return;
	}
	free(h->origin[field]);
	h->origin[field] = origin;
}

/* "hosts.toml:12", or "hosts.toml:3 [defaults]", for the item of a key. */
char *
cfg_toml_origin(const struct ctx *c, const cJSON *item, int own)
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
			return cfg_fail(c, SO_EINVAL, at, AT_VALUE, "ssh_config "
			    "%s: \"HostName\" must be a host name or IP "
			    "address, got \"%s\"", sc->origin[SSHCFG_HOSTNAME] ?
			    sc->origin[SSHCFG_HOSTNAME] : "alias",
			    sc->hostname);
		h->address = xstrdup(sc->hostname);
		cfg_set_origin(h, HOST_ADDRESS, sc->origin[SSHCFG_HOSTNAME] ?
		    ssh_origin(sc, SSHCFG_HOSTNAME) :
		    xasprintf("ssh_config alias \"%s\"", sc->alias));
	}
	if (h->origin[HOST_PORT] == NULL && sc->origin[SSHCFG_PORT]) {
		h->port = sc->port;
		cfg_set_origin(h, HOST_PORT, ssh_origin(sc, SSHCFG_PORT));
	}
	if (h->user == NULL && sc->origin[SSHCFG_USER]) {
		h->user = xstrdup(sc->user);
		cfg_set_origin(h, HOST_USER, ssh_origin(sc, SSHCFG_USER));
	}
	if (h->identity == NULL && sc->nidentities > 0) {
		h->ssh_identities = xcalloc(sc->nidentities,
		    sizeof *h->ssh_identities);
		for (i = 0; i < sc->nidentities; i++)
			h->ssh_identities[h->nssh_identities++] =
			    xstrdup(sc->identities[i]);
		cfg_set_origin(h, HOST_IDENTITY, ssh_origin(sc,
		    SSHCFG_IDENTITYFILE));
	}
	h->identities_only = sc->identities_only;
	if (h->known_hosts == NULL && sc->nknown_hosts > 0) {
		h->known_hosts = xstrdup(sc->known_hosts[0]);
		cfg_set_origin(h, HOST_KNOWN_HOSTS, ssh_origin(sc,
		    SSHCFG_USERKNOWNHOSTSFILE));
	}
	if (h->origin[HOST_CONNECT_TIMEOUT] == NULL && sc->connect_timeout > 0) {
		h->connect_timeout = sc->connect_timeout > 3600 ? 3600 :
		    sc->connect_timeout;
		cfg_set_origin(h, HOST_CONNECT_TIMEOUT, ssh_origin(sc,
		    SSHCFG_CONNECTTIMEOUT));
	}
	if (h->proxy_jump == NULL && sc->proxy_jump != NULL) {
		h->proxy_jump = xstrdup(sc->proxy_jump);
		cfg_set_origin(h, HOST_PROXY_JUMP, ssh_origin(sc,
		    SSHCFG_PROXYJUMP));
	}
	return 0;
}

/* Resolve h->ssh_alias (from item) and fill what the table left unset. */
int
cfg_resolve_alias(const struct ctx *c, const cJSON *item, struct host *h)
{
	struct sshcfg *sc = NULL;
	struct so_err e = { 0 };
	int r;

	if (sshcfg_resolve(c->ssh_config, h->ssh_alias, h->origin[HOST_USER] ?
	    h->user : NULL, h->origin[HOST_PORT] ? h->port : 0, &sc, &e) != 0)
		return cfg_fail(c, e.code, item, AT_VALUE, "%s", e.msg);
	keep_warnings(c, h, sc);
	r = apply_sshcfg(c, item, h, sc);
	sshcfg_free(sc);
	return r;
}

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
		r = cfg_fail(c, SO_EINVAL, at, AT_VALUE, "jump host \"%s\" must be "
		    "[user@]host[:port]", spec);
		goto out;
	}
	if (user == NULL && port == NULL && c->hosts != NULL)
		table = cJSON_GetObjectItemCaseSensitive(c->hosts, name);
	if (table != NULL && strcmp(name, target->name) == 0) {
		r = cfg_fail(c, SO_EINVAL, at, AT_VALUE, "host \"%s\" cannot be "
		    "its own jump host", name);
		goto out;
	}
	if (table != NULL && toml_type(c->doc, table) == TOML_TABLE) {
		memcpy(subject, c->subject, sizeof subject);
		r = cfg_load_host(c, table, c->defaults, hop, 1);
		memcpy(c->subject, subject, sizeof subject);
		if (r == 0 && hop->transport != TRANSPORT_SSH)
			r = cfg_fail(c, SO_EINVAL, at, AT_VALUE, "jump host \"%s\" "
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
		r = cfg_fail(c, e.code, at, AT_VALUE, "jump host \"%s\": %s", name,
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
	r = cfg_finish_host(c, at, hop);
out:
	sshcfg_free(sc);
	free(copy);
	return r;
}

/* h->proxy_jump, "a,b,...", into h->jumps (the first is connected first). */
int
cfg_load_jumps(struct ctx *c, const cJSON *at, struct host *h)
{
	char *copy = xstrdup(h->proxy_jump), *rest = copy, *spec;
	size_t n = 1;
	int r = 0;

	for (spec = copy; *spec != '\0'; spec++)
		n += *spec == ',';
	h->jumps = xcalloc(n, sizeof *h->jumps);
	while (r == 0 && (spec = strsep(&rest, ",")) != NULL) {
		if (*spec == '\0') {
			r = cfg_fail(c, SO_EINVAL, at, AT_VALUE, "empty jump host "
			    "in \"%s\"", h->proxy_jump);
			break;
		}
		/* Counted first, so that host_clear() frees a partial one. */
		r = load_jump(c, at, spec, h, &h->jumps[h->njumps++]);
	}
	free(copy);
	return r;
}

/*
 * ssh_config(5) for one host alias, with OpenSSH's rules (readconf.c):
 * lines are "Keyword args" or "Keyword=args", keywords are
 * case-insensitive, arguments may be double-quoted, the first value of a
 * key that applies wins, and a Host line decides whether the lines after
 * it apply.  Values are kept raw while the files are read and expanded at
 * the end, because %h, %p and %r depend on values a later line may set.
 */
#include "sshconfig.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"

/* OpenSSH's limits: Include depth, IdentityFile count, argument count. */
#define MAX_DEPTH	16
#define MAX_IDENTITIES	100
#define MAX_ARGS	64
#define LINE_MAX_LEN	4096

static const char *const key_names[SSHCFG_NKEYS] = {
	[SSHCFG_HOSTNAME] = "HostName",
	[SSHCFG_USER] = "User",
	[SSHCFG_PORT] = "Port",
	[SSHCFG_IDENTITYFILE] = "IdentityFile",
	[SSHCFG_IDENTITIESONLY] = "IdentitiesOnly",
	[SSHCFG_USERKNOWNHOSTSFILE] = "UserKnownHostsFile",
	[SSHCFG_CONNECTTIMEOUT] = "ConnectTimeout",
	[SSHCFG_PROXYJUMP] = "ProxyJump",
};

/* Directives that change how ssh connects and that seqorch does not do. */
static const struct {
	const char *name;
	const char *off;	/* the value that turns it off */
	int is_proxy;		/* competes with ProxyJump: first one wins */
	const char *why;
} unsupported[] = {
	{ "ProxyCommand", "none", 1, "seqorch connects directly or through "
	    "ProxyJump hosts, never through a command" },
	{ "ControlMaster", "no", 0, "seqorch opens its own connections and "
	    "shares no master connection" },
};
#define NUNSUPPORTED (sizeof unsupported / sizeof unsupported[0])

/* The raw values while the files are read. */
struct state {
	struct sshcfg *cfg;
	struct so_err *err;
	char *raw[SSHCFG_NKEYS];	/* first value of each key (joined) */
	char **known_raw;		/* UserKnownHostsFile arguments */
	size_t nknown_raw;
	int proxy_taken;	/* ProxyCommand or ProxyJump was set first */
	int unsupported_taken[NUNSUPPORTED];
};

const char *
sshcfg_key_name(enum sshcfg_key key)
{
	return key_names[key];
}

static char *
home_dir(void)
{
	return pw_home(NULL);
}

static char *
local_user(void)
{
	char *name = pw_login();

	return name != NULL ? name : xstrdup("");
}

char *
sshcfg_default_path(void)
{
	char *home = home_dir(), *path;

	if (home == NULL)
		return NULL;
	path = xasprintf("%s/.ssh/config", home);
	free(home);
	return path;
}

/*
 * "~/x" and "~user/x" as OpenSSH's tilde_expand_filename: from the
 * password database.  NULL when the user or home directory is unknown.
 */
static char *
expand_tilde(const char *path)
{
	const char *rest;
	char *user, *home, *out;

	if (path[0] != '~')
		return xstrdup(path);
	rest = path + 1 + strcspn(path + 1, "/");
	if (rest == path + 1)
		home = home_dir();
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

/* Shell-style '*' and '?' matching, case-sensitive as OpenSSH's Host. */
static int
match_pattern(const char *s, const char *p)
{
	for (; *p != '\0'; p++, s++) {
		if (*p == '*') {
			while (p[1] == '*')
				p++;
			if (p[1] == '\0')
				return 1;
			for (; *s != '\0'; s++)
				if (match_pattern(s, p + 1))
					return 1;
			return 0;
		}
		if (*s == '\0' || (*p != '?' && *p != *s))
			return 0;
	}
	return *s == '\0';
}

/*
 * A Host line applies when a pattern matches and no negated one does;
 * a negated match rules the line out whatever else matches.
 */
static int
host_matches(const char *alias, char **args, int nargs)
{
	int i, hit = 0;

	for (i = 0; i < nargs; i++) {
		if (args[i][0] == '!') {
			if (match_pattern(alias, args[i] + 1))
				return 0;
		} else if (match_pattern(alias, args[i]))
			hit = 1;
	}
	return hit;
}

/*
 * Split a line into a keyword and arguments, in place.  Returns the
 * number of arguments, 0 for a blank or comment line (*kw NULL), or -1
 * for an unterminated quote.
 */
static int
split_line(char *line, char **kw, char **args, int max)
{
	char *p = line, *start;
	int n = 0;

	*kw = NULL;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	*kw = p;
	while (*p != '\0' && !isspace((unsigned char)*p) && *p != '=')
		p++;
	if (*p != '\0') {
		/* "Key=value", "Key = value" and "Key value" are all valid. */
		while (isspace((unsigned char)*p))
			*p++ = '\0';
		if (*p == '=')
			*p++ = '\0';
	}
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || n == max)
			break;
		if (*p == '"') {
			start = ++p;
			if ((p = strchr(p, '"')) == NULL)
				return -1;
		} else {
			start = p;
			while (*p != '\0' && !isspace((unsigned char)*p))
				p++;
		}
		args[n++] = start;
		if (*p == '\0')
			break;
		*p++ = '\0';
	}
	return n;
}

static void
add_warning(struct sshcfg *cfg, const char *where, const char *directive,
    const char *why)
{
	cfg->warnings = xrealloc(cfg->warnings, (cfg->nwarnings + 1) *
	    sizeof *cfg->warnings);
	cfg->warnings[cfg->nwarnings++] = xasprintf("%s: \"%s\" is not "
	    "supported: %s", where, directive, why);
}

/* Join arguments with single spaces, as ssh -G shows a multi-word value. */
static char *
join_args(char **args, int nargs)
{
	char *s = xstrdup(""), *t;
	int i;

	for (i = 0; i < nargs; i++) {
		t = xasprintf("%s%s%s", s, i ? " " : "", args[i]);
		free(s);
		s = t;
	}
	return s;
}

static int
key_index(const char *kw)
{
	int i;

	for (i = 0; i < SSHCFG_NKEYS; i++)
		if (strcasecmp(kw, key_names[i]) == 0)
			return i;
	return -1;
}

/* One of our keys on a line that applies: keep it if it is the first. */
static int
take_key(struct state *st, int key, char **args, int nargs,
    const char *where)
{
	struct sshcfg *cfg = st->cfg;
	const char *p;
	int i;

	if (nargs == 0)
		return so_error(st->err, SO_EINVAL, "%s: \"%s\" needs a value",
		    where, key_names[key]);
	/* Values reach messages and the terminal: no control characters. */
	for (i = 0; i < nargs; i++)
		for (p = args[i]; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return so_error(st->err, SO_EINVAL, "%s: \"%s\" "
				    "must not contain control characters",
				    where, key_names[key]);
	if (key == SSHCFG_IDENTITYFILE) {
		if (cfg->nidentities >= MAX_IDENTITIES)
			return so_error(st->err, SO_EINVAL, "%s: more than %d "
			    "\"IdentityFile\" lines", where, MAX_IDENTITIES);
		cfg->identities_raw = xrealloc(cfg->identities_raw,
		    (cfg->nidentities + 1) * sizeof *cfg->identities_raw);
		cfg->identities_raw[cfg->nidentities++] = xstrdup(args[0]);
		if (cfg->origin[key] == NULL)
			cfg->origin[key] = xstrdup(where);
		return 0;
	}
	if (key == SSHCFG_PROXYJUMP) {
		if (st->proxy_taken)
			return 0;
		st->proxy_taken = 1;
	}
	if (cfg->origin[key] != NULL)
		return 0;
	cfg->origin[key] = xstrdup(where);
	if (key == SSHCFG_USERKNOWNHOSTSFILE) {
		st->known_raw = xcalloc((size_t)nargs, sizeof *st->known_raw);
		for (i = 0; i < nargs; i++)
			st->known_raw[st->nknown_raw++] = xstrdup(args[i]);
	}
	st->raw[key] = join_args(args, nargs);
	return 0;
}

static int read_file(struct state *, const char *, const char *, int);

/*
 * Include: each argument is a glob, relative to ~/.ssh when not absolute;
 * matching files are read in glob order, and a pattern that matches
 * nothing is no error, as in OpenSSH.
 */
static int
include(struct state *st, char **args, int nargs, const char *where,
    int depth)
{
	glob_t g;
	char *path, *home;
	size_t j;
	int i, r = 0, gr;

	for (i = 0; i < nargs && r == 0; i++) {
		if (args[i][0] == '~')
			path = expand_tilde(args[i]);
		else if (args[i][0] == '/')
			path = xstrdup(args[i]);
		else if ((home = home_dir()) != NULL) {
			path = xasprintf("%s/.ssh/%s", home, args[i]);
			free(home);
		} else
			path = NULL;
		if (path == NULL)
			return so_error(st->err, SO_EINVAL, "%s: cannot expand "
			    "Include \"%s\": no home directory", where,
			    args[i]);
		memset(&g, 0, sizeof g);
		gr = glob(path, 0, NULL, &g);
		if (gr == 0)
			for (j = 0; j < g.gl_pathc && r == 0; j++)
				r = read_file(st, g.gl_pathv[j], where,
				    depth + 1);
		else if (gr != GLOB_NOMATCH)
			r = so_error(st->err, SO_EIO, "%s: cannot expand "
			    "Include \"%s\"", where, args[i]);
		globfree(&g);
		free(path);
	}
	return r;
}

/* One line; *active says whether the lines of this block apply. */
static int
do_line(struct state *st, char *line, const char *where, int *active,
    int depth)
{
	char *kw, *args[MAX_ARGS];
	size_t i;
	int n, key, saved, r;

	if ((n = split_line(line, &kw, args, MAX_ARGS)) < 0)
		return so_error(st->err, SO_EINVAL, "%s: unterminated quote",
		    where);
	if (kw == NULL)
		return 0;
	if (strcasecmp(kw, "host") == 0) {
		*active = host_matches(st->cfg->alias, args, n);
		return 0;
	}
	if (strcasecmp(kw, "match") == 0) {
		/* We cannot evaluate its criteria, so its block never applies. */
		add_warning(st->cfg, where, "Match",
		    "the settings of its block are ignored");
		*active = 0;
		return 0;
	}
	if (!*active)
		return 0;
	if (strcasecmp(kw, "include") == 0) {
		saved = *active;
		r = include(st, args, n, where, depth);
		*active = saved;
		return r;
	}
	if ((key = key_index(kw)) >= 0)
		return take_key(st, key, args, n, where);
	for (i = 0; i < NUNSUPPORTED; i++) {
		if (strcasecmp(kw, unsupported[i].name) != 0 ||
		    st->unsupported_taken[i])
			continue;
		st->unsupported_taken[i] = 1;
		if (unsupported[i].is_proxy) {
			if (st->proxy_taken)
				return 0;
			st->proxy_taken = 1;
		}
		if (n > 0 && strcasecmp(args[0], unsupported[i].off) != 0)
			add_warning(st->cfg, where, unsupported[i].name,
			    unsupported[i].why);
	}
	return 0;
}

static int
read_file(struct state *st, const char *path, const char *from, int depth)
{
	char line[LINE_MAX_LEN + 2], where[LINE_MAX_LEN + 32], buf[128];
	FILE *f;
	int lineno = 0, active = 1, r = 0;

	if (depth > MAX_DEPTH)
		return so_error(st->err, SO_EINVAL, "%s: Include nested more "
		    "than %d deep", from, MAX_DEPTH);
	if ((f = fopen(path, "re")) == NULL) {
		snprintf(buf, sizeof buf, "%s", strerror(errno));
		buf[0] = (char)tolower((unsigned char)buf[0]);
		return so_error(st->err, SO_EIO, "%s%scannot read ssh_config "
		    "\"%s\": %s", from ? from : "", from ? ": " : "", path,
		    buf);
	}
	while (r == 0 && fgets(line, sizeof line, f) != NULL) {
		lineno++;
		snprintf(where, sizeof where, "%s:%d", path, lineno);
		if (strlen(line) > LINE_MAX_LEN) {
			r = so_error(st->err, SO_EINVAL, "%s: line longer than "
			    "%d bytes", where, LINE_MAX_LEN);
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		r = do_line(st, line, where, &active, depth);
	}
	fclose(f);
	return r;
}

/*
 * Expand the %-tokens of raw; allowed lists the letters this key takes.
 * vals[c - 'a'] is the value of %c.  Returns a new string, or NULL with
 * err set when a token is unknown here.
 */
static char *
expand_tokens(const char *raw, const char *allowed, char *const vals[26],
    const char *key, const char *where, struct so_err *err)
{
	size_t cap = strlen(raw) + 1, len = 0, n;
	char *out = xmalloc(cap);
	const char *p, *v;

	for (p = raw; *p != '\0'; p++) {
		if (*p != '%') {
			v = p;
			n = 1;
		} else if (p[1] == '%') {
			v = ++p;
			n = 1;
		} else if (p[1] >= 'a' && p[1] <= 'z' &&
		    strchr(allowed, p[1]) != NULL && vals[p[1] - 'a'] != NULL) {
			v = vals[*++p - 'a'];
			n = strlen(v);
		} else {
			so_error(err, SO_EINVAL, "%s: %s \"%s\": unsupported "
			    "token \"%%%.1s\" (seqorch knows %%%% and %%%s)",
			    where, key, raw, p + 1, allowed);
			free(out);
			return NULL;
		}
		if (len + n + 1 > cap) {
			cap = 2 * (len + n + 1);
			out = xrealloc(out, cap);
		}
		memcpy(out + len, v, n);
		len += n;
	}
	out[len] = '\0';
	return out;
}

/* ~ and then %-tokens, in the order OpenSSH does them for file names. */
static char *
expand_path(const char *raw, char *const vals[26], const char *key,
    const char *where, struct so_err *err)
{
	char *tilde = expand_tilde(raw), *out;

	if (tilde == NULL) {
		so_error(err, SO_EINVAL, "%s: %s \"%s\": unknown user or no "
		    "home directory", where, key, raw);
		return NULL;
	}
	out = expand_tokens(tilde, "dhnpru", vals, key, where, err);
	free(tilde);
	return out;
}

/* ConnectTimeout as OpenSSH's convtime: "30", "30s", "1m30s", ... */
static int
parse_time(const char *s, int *out)
{
	long total = 0, n, mult;
	char *end;

	if (*s == '\0')
		return -1;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return -1;
		errno = 0;
		n = strtol(s, &end, 10);
		if (errno != 0 || n > 1000000)
			return -1;
		switch (tolower((unsigned char)*end)) {
		case '\0': mult = 1; break;
		case 's': mult = 1; end++; break;
		case 'm': mult = 60; end++; break;
		case 'h': mult = 3600; end++; break;
		case 'd': mult = 86400; end++; break;
		case 'w': mult = 604800; end++; break;
		default: return -1;
		}
		total += n * mult;
		if (total > 1000000)
			return -1;
		s = end;
	}
	*out = (int)total;
	return 0;
}

/* The values that need no other value: port, user, flags, timeout. */
static int
finish_plain(struct state *st, const char *user, int port)
{
	struct sshcfg *cfg = st->cfg;
	const char *v;
	int64_t n;

	if (port > 0)
		cfg->port = port;
	else if ((v = st->raw[SSHCFG_PORT]) != NULL) {
		if (parse_int64(v, 1, 65535, &n) != 0)
			return so_error(st->err, SO_EINVAL, "%s: \"Port\" must "
			    "be a number from 1 to 65535, got \"%s\"",
			    cfg->origin[SSHCFG_PORT], v);
		cfg->port = (int)n;
	}
	if (user != NULL)
		cfg->user = xstrdup(user);
	else if (st->raw[SSHCFG_USER] != NULL)
		cfg->user = xstrdup(st->raw[SSHCFG_USER]);
	if ((v = st->raw[SSHCFG_IDENTITIESONLY]) != NULL) {
		if (strcasecmp(v, "yes") == 0 || strcasecmp(v, "true") == 0)
			cfg->identities_only = 1;
		else if (strcasecmp(v, "no") != 0 &&
		    strcasecmp(v, "false") != 0)
			return so_error(st->err, SO_EINVAL, "%s: "
			    "\"IdentitiesOnly\" must be yes or no, got \"%s\"",
			    cfg->origin[SSHCFG_IDENTITIESONLY], v);
	}
	if ((v = st->raw[SSHCFG_CONNECTTIMEOUT]) != NULL &&
	    strcasecmp(v, "none") != 0 &&
	    parse_time(v, &cfg->connect_timeout) != 0)
		return so_error(st->err, SO_EINVAL, "%s: \"ConnectTimeout\" "
		    "must be a time in seconds (\"30\", \"1m\") or \"none\", "
		    "got \"%s\"", cfg->origin[SSHCFG_CONNECTTIMEOUT], v);
	if ((v = st->raw[SSHCFG_PROXYJUMP]) != NULL &&
	    strcasecmp(v, "none") != 0)
		cfg->proxy_jump = xstrdup(v);
	return 0;
}

/*
 * HostName (%h is the alias), lowercased as ssh does for names, then
 * the file names, whose %h, %p and %r are the final host, port and user.
 */
static int
finish_expanded(struct state *st)
{
	struct sshcfg *cfg = st->cfg;
	char *vals[26] = { 0 }, port[16], *p;
	size_t i;
	int r = 0;

	vals['h' - 'a'] = cfg->alias;
	if (st->raw[SSHCFG_HOSTNAME] != NULL) {
		if ((cfg->hostname = expand_tokens(st->raw[SSHCFG_HOSTNAME],
		    "h", vals, "HostName", cfg->origin[SSHCFG_HOSTNAME],
		    st->err)) == NULL)
			return SO_EINVAL;
	} else
		cfg->hostname = xstrdup(cfg->alias);
	if (strpbrk(cfg->hostname, ":%") == NULL)
		for (p = cfg->hostname; *p != '\0'; p++)
			*p = (char)tolower((unsigned char)*p);
	snprintf(port, sizeof port, "%d", cfg->port > 0 ? cfg->port : 22);
	vals['d' - 'a'] = home_dir();
	vals['h' - 'a'] = cfg->hostname;
	vals['n' - 'a'] = cfg->alias;
	vals['p' - 'a'] = port;
	vals['u' - 'a'] = local_user();
	vals['r' - 'a'] = cfg->user != NULL ? cfg->user : vals['u' - 'a'];
	cfg->identities = xcalloc(cfg->nidentities + 1,
	    sizeof *cfg->identities);
	for (i = 0; i < cfg->nidentities && r == 0; i++)
		if ((cfg->identities[i] = expand_path(cfg->identities_raw[i],
		    vals, "IdentityFile", cfg->origin[SSHCFG_IDENTITYFILE],
		    st->err)) == NULL)
			r = SO_EINVAL;
	if (r == 0 && st->nknown_raw > 0) {
		cfg->known_hosts = xcalloc(st->nknown_raw,
		    sizeof *cfg->known_hosts);
		for (i = 0; i < st->nknown_raw && r == 0; i++) {
			if ((cfg->known_hosts[i] = expand_path(st->known_raw[i],
			    vals, "UserKnownHostsFile",
			    cfg->origin[SSHCFG_USERKNOWNHOSTSFILE],
			    st->err)) == NULL)
				r = SO_EINVAL;
			else
				cfg->nknown_hosts++;
		}
	}
	free(vals['u' - 'a']);
	free(vals['d' - 'a']);
	return r;
}

int
sshcfg_resolve(const char *path, const char *alias, const char *user,
    int port, struct sshcfg **out, struct so_err *err)
{
	struct state st;
	char *deflt = NULL;
	size_t i;
	int r = 0;

	memset(&st, 0, sizeof st);
	st.err = err;
	st.cfg = xcalloc(1, sizeof *st.cfg);
	st.cfg->alias = xstrdup(alias);
	if (path == NULL) {
		/* Like ssh: no ~/.ssh/config is an empty configuration. */
		deflt = sshcfg_default_path();
		if (deflt != NULL && access(deflt, F_OK) == 0)
			r = read_file(&st, deflt, NULL, 0);
	} else
		r = read_file(&st, path, NULL, 0);
	if (r == 0)
		r = finish_plain(&st, user, port);
	if (r == 0)
		r = finish_expanded(&st);
	for (i = 0; i < SSHCFG_NKEYS; i++)
		free(st.raw[i]);
	for (i = 0; i < st.nknown_raw; i++)
		free(st.known_raw[i]);
	free(st.known_raw);
	free(deflt);
	if (r != 0) {
		sshcfg_free(st.cfg);
		return r;
	}
	*out = st.cfg;
	return 0;
}

void
sshcfg_free(struct sshcfg *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->nwarnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	free(cfg->proxy_jump);
	for (i = 0; i < cfg->nknown_hosts; i++)
		free(cfg->known_hosts[i]);
	free(cfg->known_hosts);
	for (i = 0; i < cfg->nidentities; i++) {
		if (cfg->identities != NULL)
			free(cfg->identities[i]);
		free(cfg->identities_raw[i]);
	}
	free(cfg->identities);
	free(cfg->identities_raw);
	free(cfg->user);
	free(cfg->hostname);
	for (i = 0; i < SSHCFG_NKEYS; i++)
		free(cfg->origin[i]);
	free(cfg->alias);
	free(cfg);
}

/* Add each name of a Host line that is an alias, not a pattern, once. */
static void
add_aliases(char **args, int n, char ***out, size_t *nout)
{
	size_t j;
	int i;

	for (i = 0; i < n; i++) {
		if (strpbrk(args[i], "*?!") != NULL)
			continue;
		for (j = 0; j < *nout && strcmp((*out)[j], args[i]) != 0; j++)
			;
		if (j < *nout)
			continue;
		ALLOC_GROW(*out, *nout);
		(*out)[(*nout)++] = xstrdup(args[i]);
	}
}

int
sshcfg_aliases(const char *path, char ***out, size_t *n, struct so_err *err)
{
	char line[LINE_MAX_LEN + 2], *kw, *args[MAX_ARGS], *deflt = NULL;
	FILE *f = NULL;
	int lineno = 0, nargs, r = 0;

	*out = NULL;
	*n = 0;
	if (path == NULL) {
		deflt = sshcfg_default_path();
		/* Like ssh: no ~/.ssh/config is an empty configuration. */
		if (deflt == NULL || access(deflt, F_OK) != 0)
			goto out;
		path = deflt;
	}
	if ((f = fopen(path, "re")) == NULL) {
		r = so_error(err, SO_EIO, "cannot read ssh_config \"%s\": %s",
		    path, strerror(errno));
		goto out;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		lineno++;
		if (strlen(line) > LINE_MAX_LEN) {
			r = so_error(err, SO_EINVAL, "%s:%d: line longer than "
			    "%d bytes", path, lineno, LINE_MAX_LEN);
			goto out;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if ((nargs = split_line(line, &kw, args, MAX_ARGS)) < 0) {
			r = so_error(err, SO_EINVAL, "%s:%d: unterminated quote",
			    path, lineno);
			goto out;
		}
		if (kw != NULL && strcasecmp(kw, "host") == 0)
			add_aliases(args, nargs, out, n);
	}
out:
	if (f != NULL)
		fclose(f);
	free(deflt);
	if (r != 0) {
		while (*n > 0)
			free((*out)[--*n]);
		free(*out);
		*out = NULL;
	}
	return r;
}

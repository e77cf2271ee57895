/* Artifact cache location, URL overrides and per-study fetching. */
#include "fetch.h"

#include "http.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
fetch_cache_dir(const char *opt, const char *conf, const char *db)
{
	const char *slash;

	if (opt != NULL)
		return xstrdup(opt);
	if (conf != NULL)
		return xstrdup(conf);
	slash = strrchr(db, '/');
	if (slash == NULL)
		return xstrdup("seqorch-cache");
	return xasprintf("%.*s/seqorch-cache", (int)(slash - db), db);
}

char *
fetch_hint(const char *study, const char *cache)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "seqorch fetch --study %s", study);
	if (strcmp(cache, "seqorch-cache") != 0) {
		strbuf_addstr(&sb, " --cache ");
		strbuf_add_shquoted(&sb, cache);
	}
	return strbuf_detach(&sb);
}

const char *
fetch_url(const struct artifact_entry *a)
{
	char var[64];
	const char *v;
	size_t i;

	snprintf(var, sizeof var, "SEQORCH_URL_%s", a->name);
	for (i = strlen("SEQORCH_URL_"); var[i] != '\0'; i++)
		var[i] = var[i] == '-' ? '_' :
		    (char)toupper((unsigned char)var[i]);
	v = getenv(var);
	return v != NULL && v[0] != '\0' ? v : a->url;
}

int
fetch_choice_opt(struct fetch_choice *c, int opt, const char *arg)
{
	switch (opt) {
	case FETCH_OPT_OPENSSL_VERSION:
		c->name = "openssl";
		c->version = arg;
		return 1;
	case FETCH_OPT_SHA256:
		c->sha256 = arg;
		return 1;
	}
	return 0;
}

int
fetch_choice_check(const struct fetch_choice *c, struct so_err *err)
{
	const struct artifact_entry *a;
	const char *v = c->version, *h = c->sha256;

	if (c->name == NULL) {
		if (h != NULL)
			return so_error(err, SO_EINVAL, "--sha256 is the hash "
			    "of a version named by --openssl-version: give "
			    "both");
		return 0;
	}
	for (a = artifact_table; a->study != NULL; a++)
		if (strcmp(a->name, c->name) == 0 && a->version != NULL)
			break;
	if (a->study == NULL)
		return so_error(err, SO_EINVAL, "no study fetches \"%s\" by "
		    "version", c->name);
	if (v[0] == '\0' || strlen(v) > 32 || strspn(v, "0123456789"
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-") !=
	    strlen(v) || v[0] == '.' || v[0] == '-')
		return so_error(err, SO_EINVAL, "invalid --%s-version \"%s\": "
		    "expected a release such as %s", c->name, v, a->version);
	if (h != NULL && (strlen(h) != 64 ||
	    strspn(h, "0123456789abcdef") != 64))
		return so_error(err, SO_EINVAL, "invalid --sha256 \"%s\": "
		    "expected 64 lowercase hex digits", h);
	if (strcmp(v, a->version) == 0) {
		if (h != NULL && strcmp(h, a->sha256) != 0)
			return so_error(err, SO_EINVAL, "--sha256 %s is not "
			    "the SHA-256 pinned for %s %s: %s", h, c->name, v,
			    a->sha256);
		return 0;
	}
	if (h == NULL)
		return so_error(err, SO_EINVAL, "%s %s has no pinned SHA-256 "
		    "(only %s has): give --sha256 HEX, computed from a copy "
		    "you trust, to fetch it", c->name, v, a->version);
	return 0;
}

void
fetch_choose(const struct artifact_entry *a, const struct fetch_choice *c,
    struct artifact_entry *out, char **url)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p, *hit;

	*out = *a;
	*url = NULL;
	if (c == NULL || c->name == NULL || a->version == NULL ||
	    strcmp(a->name, c->name) != 0 || strcmp(a->version, c->version) == 0)
		return;
	/* The registry checked that the URL names the pinned version. */
	for (p = a->url; (hit = strstr(p, a->version)) != NULL;
	    p = hit + strlen(a->version)) {
		strbuf_add(&sb, p, (size_t)(hit - p));
		strbuf_addstr(&sb, c->version);
	}
	strbuf_addstr(&sb, p);
	*url = strbuf_detach(&sb);
	out->url = *url;
	out->sha256 = c->sha256;
	out->size = 0;
	out->version = c->version;
}

int
fetch_study_from(const char *study, const struct fetch_choice *c,
    const char *file, const char *cache, const char **name,
    struct so_err *err)
{
	const struct artifact_entry *a;
	struct artifact_entry e, want = { 0 };
	unsigned long long size;
	char got[65], *path, *url;
	int rc;

	if ((rc = http_file_sha256(file, got, &size, err)) != 0)
		return rc;
	for (a = artifact_table; a->study != NULL; a++) {
		if (strcmp(a->study, study) != 0)
			continue;
		fetch_choose(a, c, &e, &url);
		free(url);
		if (want.study == NULL || ((e.size == 0 || e.size == size) &&
		    strcmp(e.sha256, got) == 0))
			want = e;
	}
	if (want.study == NULL)
		return so_error(err, SO_ENOTFOUND, "study \"%s\" fetches no "
		    "upstream artifacts: --from has nothing to stand for",
		    study);
	/* Checked again on the copy; a wrong file is named with the want. */
	if ((rc = http_import(file, want.sha256, want.size, cache, &path,
	    err)) != 0)
		return rc;
	free(path);
	*name = want.name;
	return 0;
}

int
fetch_study(const char *study, const struct fetch_choice *c,
    const char *cache, int generate, volatile sig_atomic_t *stop,
    unsigned *fetched, unsigned *cached, struct so_err *err)
{
	const struct artifact_entry *a;
	struct artifact_entry e;
	struct http_stats st;
	char *path, *url;
	int rc;

	*fetched = *cached = 0;
	for (a = artifact_table; a->study != NULL; a++) {
		if (strcmp(a->study, study) != 0 || (a->generate && !generate))
			continue;
		fetch_choose(a, c, &e, &url);
		rc = http_fetch(fetch_url(&e), e.sha256, e.size, cache, stop,
		    &path, &st, err);
		free(url);
		if (rc != 0)
			return rc;
		free(path);
		if (st.cached)
			(*cached)++;
		else
			(*fetched)++;
	}
	return 0;
}

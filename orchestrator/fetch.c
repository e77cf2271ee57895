/* Artifact cache location, URL overrides and per-study fetching. */
#include "fetch.h"

#include "http.h"

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
fetch_study_from(const char *study, const char *file, const char *cache,
    const char **name, struct so_err *err)
{
	const struct artifact_entry *a, *want = NULL;
	unsigned long long size;
	char got[65], *path;
	int rc;

	if ((rc = http_file_sha256(file, got, &size, err)) != 0)
		return rc;
	for (a = artifact_table; a->study != NULL; a++) {
		if (strcmp(a->study, study) != 0)
			continue;
		if (want == NULL || (a->size == size &&
		    strcmp(a->sha256, got) == 0))
			want = a;
	}
	if (want == NULL)
		return so_error(err, SO_ENOTFOUND, "study \"%s\" fetches no "
		    "upstream artifacts: --from has nothing to stand for",
		    study);
	/* Checked again on the copy; a wrong file is named with the want. */
	if ((rc = http_import(file, want->sha256, want->size, cache, &path,
	    err)) != 0)
		return rc;
	free(path);
	*name = want->name;
	return 0;
}

int
fetch_study(const char *study, const char *cache, int generate,
    volatile sig_atomic_t *stop, unsigned *fetched, unsigned *cached,
    struct so_err *err)
{
	const struct artifact_entry *a;
	struct http_stats st;
	char *path;
	int rc;

	*fetched = *cached = 0;
	for (a = artifact_table; a->study != NULL; a++) {
		if (strcmp(a->study, study) != 0 || (a->generate && !generate))
			continue;
		rc = http_fetch(fetch_url(a), a->sha256, a->size, cache, stop,
		    &path, &st, err);
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

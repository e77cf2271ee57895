/*
 * A study's upstream artifacts (kernels/<study>/artifacts): where the
 * coordinator caches them and from which URL it fetches them (http.h does
 * the download).  Used by `seqorch fetch` and, before any host is
 * contacted, by `seqorch run`.
 */
#ifndef SEQORCH_FETCH_H
#define SEQORCH_FETCH_H

#include "study.h"
#include "util.h"

#include <signal.h>

/*
 * The cache directory: opt (--cache) if given, else conf ([defaults]
 * cache in hosts.toml) if given, else "seqorch-cache" beside the
 * database file db.  Caller frees.
 */
char *fetch_cache_dir(const char *opt, const char *conf, const char *db);

/*
 * The URL of an artifact: the environment variable SEQORCH_URL_<NAME>
 * (the artifact's name in upper case, dashes as underscores:
 * SEQORCH_URL_RANDOMX) when set and not empty, else its default.
 * Points into the environment or the static table.
 */
const char *fetch_url(const struct artifact_entry *a);

/*
 * Every artifact of study into cache (already there: checked, not
 * downloaded), those marked "generate" only with generate (a run without
 * them skips the variants that need them).  *fetched and *cached count
 * them.  Errors as http_fetch's, naming the artifact's URL.
 */
int fetch_study(const char *study, const char *cache, int generate,
    volatile sig_atomic_t *stop, unsigned *fetched, unsigned *cached,
    struct so_err *err);
/*
 * The offline path: file is one of study's artifacts (the one whose size
 * and SHA-256 it has), copied into cache and checked as a download is.
 * *name is the artifact's name (static).  SO_ECHECKSUM when file is none
 * of them (the message names what is expected), SO_ENOTFOUND when the
 * study has no artifacts, http_import's codes.
 */
int fetch_study_from(const char *study, const char *file, const char *cache,
    const char **name, struct so_err *err);

#endif

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
 * The command a hint gives to fetch study's artifacts into cache, so that
 * it works when pasted: "seqorch fetch --study S", with " --cache DIR"
 * (shell-quoted) unless cache is the default beside ./results.db, since
 * --db, --config and --cache all only say where the cache is.  Caller
 * frees.
 */
char *fetch_hint(const char *study, const char *cache);

/*
 * The URL of an artifact: the environment variable SEQORCH_URL_<NAME>
 * (the artifact's name in upper case, dashes as underscores:
 * SEQORCH_URL_RANDOMX) when set and not empty, else its default.
 * Points into the environment or the static table.
 */
const char *fetch_url(const struct artifact_entry *a);

/*
 * Another version of an artifact than the one pinned in its study's
 * artifacts file (--openssl-version V [--sha256 HEX], the artifact
 * "openssl").  All NULL: every artifact as pinned.  It is never trusted
 * without a hash: a version not pinned needs sha256, computed by the user
 * from bytes they trust; nothing here pins one.
 */
struct fetch_choice {
	const char *name;	/* the artifact; NULL: none named */
	const char *version;	/* V */
	const char *sha256;	/* --sha256, or NULL */
};

/* The options that fill a fetch_choice, for fetch, run and reproduce. */
enum {
	FETCH_OPT_OPENSSL_VERSION = 'V',
	FETCH_OPT_SHA256 = 'Z',
};
#define FETCH_ROW_OPENSSL_VERSION \
	{ "openssl-version", FETCH_OPT_OPENSSL_VERSION, 0, "V", \
	    "sha3's OpenSSL release V instead of the pinned\n" \
	    "one (kernels/sha3/artifacts); one not pinned needs\n" \
	    "--sha256", CMD_VALUE_ANY, NULL }
#define FETCH_ROW_SHA256 \
	{ "sha256", FETCH_OPT_SHA256, 0, "HEX", \
	    "the SHA-256 of --openssl-version's tarball, as\n" \
	    "you computed it: a download with another is\n" \
	    "refused and deleted", CMD_VALUE_ANY, NULL }

/*
 * Take opt (cmd_getopt's value) with its arg into c: 1 when it is one of
 * FETCH_OPT_*, else 0.
 */
int fetch_choice_opt(struct fetch_choice *c, int opt, const char *arg);

/*
 * Check c before anything is downloaded: --sha256 only with a version,
 * the version plain (digits, letters, dots, dashes), the hash 64 hex
 * digits, a version not pinned with a hash and the pinned one with its
 * pinned hash if any.  0, or SO_EINVAL with the message.
 */
int fetch_choice_check(const struct fetch_choice *c, struct so_err *err);

/*
 * a as c names it, into *out: *a itself unless c names a's other
 * version, then c's hash, size 0 (not known: http.h checks the hash
 * alone) and a's URL with its pinned version replaced by c's (*url,
 * caller frees; NULL when none was made).
 */
void fetch_choose(const struct artifact_entry *a, const struct fetch_choice *c,
    struct artifact_entry *out, char **url);

/*
 * Every artifact of study into cache (already there: checked, not
 * downloaded), those marked "generate" only with generate (a run without
 * them skips the variants that need them), as c (may be NULL) names
 * them.  *fetched and *cached count them.  Errors as http_fetch's,
 * naming the artifact's URL.
 */
int fetch_study(const char *study, const struct fetch_choice *c,
    const char *cache, int generate, volatile sig_atomic_t *stop,
    unsigned *fetched, unsigned *cached, struct so_err *err);
/*
 * The offline path: file is one of study's artifacts as c names them
 * (the one whose size and SHA-256 it has), copied into cache and checked as a download is.
 * *name is the artifact's name (static).  SO_ECHECKSUM when file is none
 * of them (the message names what is expected), SO_ENOTFOUND when the
 * study has no artifacts, http_import's codes.
 */
int fetch_study_from(const char *study, const struct fetch_choice *c,
    const char *file, const char *cache, const char **name,
    struct so_err *err);

#endif

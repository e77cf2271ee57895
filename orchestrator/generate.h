/*
 * Sources the coordinator generates from a study's "generate" artifacts
 * (kernels/<study>/artifacts): the study's kernels/<study>/generate.pl,
 * embedded in this binary, run with perl over the cached artifact (sha3:
 * OpenSSL's perlasm, so that hosts need no perl), once per artifact and
 * script into CACHE/generated/<key>/<name>/.  deploy_generated uploads
 * them; agent/build.sh builds the variants that need them (a variant's
 * `needs` file) and records their meta file with the build.
 */
#ifndef SEQORCH_GENERATE_H
#define SEQORCH_GENERATE_H

#include "util.h"

struct fetch_choice;

#include <stddef.h>

struct gen_file {
	char *path;		/* "<artifact name>/<file>" */
	char *data;
	size_t len;
};

struct generated {
	char key[17];		/* hash of the artifacts and the script */
	char **names;		/* artifacts generated from ("openssl") */
	size_t nnames;
	struct gen_file *files;	/* every file, by path */
	size_t nfiles;
};

/*
 * Generate (or find generated) the sources of each of study's "generate"
 * artifacts that the cache holds, as c (may be NULL) names them; a
 * versioned artifact's sources must name its version (SO_EINVAL).  *out is NULL when none does (nothing
 * to build: the variants needing them are skipped), else owned by the
 * caller (generated_free).  SO_EBUILD naming the artifact when the
 * script fails (its message went to stderr), SO_EIO.
 */
int generate_study(const char *study, const struct fetch_choice *c,
    const char *cache, struct generated **out, struct so_err *err);

/* 1 when g (may be NULL) holds the sources generated from name. */
int generated_has(const struct generated *g, const char *name);

void generated_free(struct generated *g);

#endif

/*
 * What bundle.c writes a bundle through (bundle-io.c): a directory or a
 * .tar, a file at a time, in the order the caller gives (a .tar's members
 * must come in order of path, as bundle_sort puts them).
 *
 * bundle_out_open makes dest (a new directory, or the temporary file of a
 * .tar beside it); bundle_out_file adds a file held in memory;
 * bundle_out_spool starts one too large to hold, written piece by piece
 * with bundle_spool_write (hashed as it goes; bundle_spool_done gives its
 * SHA-256), which a directory gets at once and a .tar only when
 * bundle_out_put_spool places it (until then it waits in an unlinked
 * temporary file of spool_dir).  bundle_out_close finishes dest (a .tar
 * is renamed over dest; o->size is then the .tar's size); bundle_out_abort
 * removes whatever was made.
 * Each returns 0 or a negative SO_E* code naming the file, and sets
 * o->failed when writing dest was what failed; after an error the caller
 * calls bundle_out_abort (close does on its own failure).
 */
#ifndef SEQORCH_BUNDLE_INT_H
#define SEQORCH_BUNDLE_INT_H

#include "util.h"

#include <openssl/evp.h>
#include <stdint.h>

struct bundle_out {
	char *dest;			/* as given, for messages */
	int tar;			/* a .tar rather than a directory */
	int own;			/* af is ours (dest is a .tar path) */
	struct atomic_file af;
	int fd;				/* the .tar's descriptor */
	uint64_t size;			/* bytes of the .tar, or files, so far */
	char *spool_dir;
	char **made;			/* a directory's files and dirs made */
	size_t nmade;
	int failed;
};

struct bundle_spool {
	char *path;			/* in the bundle */
	char *name;			/* on disk, for messages */
	int fd;
	EVP_MD_CTX *md;
	uint64_t len;
	char sha256[65];		/* after bundle_spool_done */
};

int bundle_out_open(struct bundle_out *o, const char *dest,
    struct so_err *err);
/* A .tar written to fd (not closed here), name in messages. */
void bundle_out_open_fd(struct bundle_out *o, int fd, const char *name,
    const char *spool_dir);
int bundle_out_file(struct bundle_out *o, const char *path, const void *data,
    size_t len, struct so_err *err);
int bundle_out_spool(struct bundle_out *o, const char *path,
    struct bundle_spool *sp, struct so_err *err);
int bundle_spool_write(struct bundle_spool *sp, const void *data, size_t len,
    struct so_err *err);
void bundle_spool_done(struct bundle_spool *sp);
int bundle_out_put_spool(struct bundle_out *o, struct bundle_spool *sp,
    struct so_err *err);
void bundle_spool_free(struct bundle_spool *sp);
int bundle_out_close(struct bundle_out *o, struct so_err *err);
void bundle_out_abort(struct bundle_out *o);

#endif

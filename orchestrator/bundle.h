/*
 * Result bundles (docs/provenance.md): one run as files that someone else
 * can check without our database.
 *
 *   manifest.json   format, origin (coordinator, database), runs, the
 *                   signer's key fingerprint, and every other file with its
 *                   SHA-256 and size
 *   manifest.sig    Ed25519 signature of manifest.json's bytes (hex), made
 *                   through OpenSSL's EVP API; absent when not signed
 *   summary.json    the run's summary (seqorch export)
 *   rows.json       every row of the run (db_run_rows_each): samples,
 *                   builds, windows, events..., for `seqorch import`
 *   artifacts/<sha256>  every artifact the run names (raw agent output,
 *                   binaries, disassembly, build logs, sources)
 *
 * written as a directory or, for a name ending in ".tar", a POSIX ustar
 * archive with fixed dates and modes (the same run gives the same bytes).
 *
 * Functions return 0 or a negative SO_E* code and fill err; on error the
 * message names the file or item.  A struct bundle owns its files; free it
 * with bundle_free.  Making, checking and importing a bundle hold a
 * bounded part of it at a time (rows.json is read row by row: rows-doc.h).
 */
#ifndef SEQORCH_BUNDLE_H
#define SEQORCH_BUNDLE_H

#include "db.h"
#include "rows-doc.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#define BUNDLE_MAX_FILES 100000
/*
 * What verify and import read, and so what export writes: a bound on
 * time (hours of import, about 230M samples), since they hold a
 * row at a time and an artifact at most (ARTIFACT_MAX).
 */
#define BUNDLE_MAX_BYTES (64ull << 30)
#define BUNDLE_MAX_MANIFEST (64u * 1024 * 1024)	/* manifest.json, .sig */

/*
 * A file of a bundle: its bytes in data (bundle_untar, bundle_add), or,
 * for a bundle_load, where they are on disk (data NULL: len bytes at off
 * in src, the .tar or the file of the directory), read when needed
 * through bundle_file_read and bundle_file_open, never all at once.
 */
struct bundle_file {
	char *path;			/* relative, "/"-separated */
	unsigned char *data;
	size_t len;
	char *src;			/* owned, or NULL */
	uint64_t off;
};

struct bundle {
	struct bundle_file *files;
	size_t n;
};

/*
 * Write the bundle of run_id to dest (a new directory, or a .tar file,
 * replaced whole through a temporary file beside it): summary (taken
 * over, freed here), the run's rows and artifacts from db, and the
 * manifest, signed with the Ed25519 private key in PEM file key_path when
 * it is not NULL.  rows.json goes from SQLite to the file row by row and a
 * .tar's members are written as they come, so memory holds one artifact
 * (and summary.json) at a time, never the run.  On error nothing is left
 * at dest, and *output_failed (may be NULL) says whether writing dest
 * was what failed.
 */
int bundle_write(struct db *db, int64_t run_id, cJSON *summary,
    const char *key_path, const char *dest, int *output_failed,
    struct so_err *err);
/*
 * The same bundle as a .tar written to fd (publish's spool; spool_dir
 * holds the temporary copy of rows.json); *len is the archive's size.
 */
int bundle_write_tar_fd(struct db *db, int64_t run_id, cJSON *summary,
    const char *key_path, int fd, const char *spool_dir, uint64_t *len,
    struct so_err *err);

/* b as the bytes of its .tar file: a new buffer the caller frees. */
int bundle_tar(const struct bundle *b, unsigned char **out, size_t *len,
    struct so_err *err);

/*
 * Read a bundle directory or .tar file, bounded by BUNDLE_MAX_*; anything
 * else (a FIFO, a device) is refused without being opened for reading.
 * Only the tar's headers are read here; each file's bytes stay on disk.
 */
int bundle_load(const char *src, struct bundle *out, struct so_err *err);
/*
 * The files of a ustar archive's len bytes (src names it in messages):
 * plain files with safe relative paths, each once, every header's size and
 * checksum a terminated octal field; a name may start with "./", and
 * directory entries ("./", "./artifacts/") are passed over, as GNU tar
 * writes a directory bundle.  On error out is empty.
 */
int bundle_untar(const unsigned char *tar, size_t len, const char *src,
    struct bundle *out, struct so_err *err);

void bundle_free(struct bundle *b);

/* Add a file to b, which takes data over (it was allocated). */
void bundle_add(struct bundle *b, const char *path, void *data, size_t len);
/* Put b's files in order of path, as manifests list them. */
void bundle_sort(struct bundle *b);

/*
 * f's bytes in a new buffer (NUL-terminated, the caller frees), when f is
 * at most max bytes; else SO_EPARSE naming f.
 */
int bundle_file_read(const struct bundle_file *f, size_t max,
    unsigned char **data, struct so_err *err);
/*
 * A descriptor to read f from, at offset f->off (the caller closes it); a
 * file of a directory is checked again to be a regular file of f->len
 * bytes.  -1 for a file held in memory.
 */
int bundle_file_open(const struct bundle_file *f, int *fd,
    struct so_err *err);
/* The SHA-256 of f's bytes, read in pieces, as hex. */
int bundle_file_sha256(const struct bundle_file *f, char out[65],
    struct so_err *err);

/* What a verified bundle says of itself; strings point into manifest. */
struct bundle_info {
	cJSON *manifest;		/* owned: cJSON_Delete */
	char manifest_sha256[65];
	char key_fingerprint[65];
	const char *coordinator, *db_path;
	struct rows_doc *rows;		/* rows.json, owned */
	int64_t runs[64];
	size_t nruns;
	uint64_t samples_checked;
};

/*
 * Check b: the signature of manifest.json with the Ed25519 public key in
 * PEM file pubkey_path (NULL: no signature is checked, and
 * info->key_fingerprint stays empty), every listed file's hash and size, no file left
 * unlisted, and every sample's digest recomputed with its study's
 * independent reference (nothing is rebuilt).  Progress goes to log (may
 * be NULL).  On success info is filled (free with bundle_info_free).
 */
int bundle_verify(const struct bundle *b, const char *pubkey_path,
    struct bundle_info *info, FILE *log, struct so_err *err);
void bundle_info_free(struct bundle_info *info);

/* The bundle's file at path, or NULL. */
const struct bundle_file *bundle_get(const struct bundle *b,
    const char *path);

#endif

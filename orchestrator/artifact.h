/*
 * The artifact store: files kept by content beside results.db, in
 * <directory of results.db>/artifacts/<sha256>, each recorded in table
 * artifacts and named by builds in artifact_refs (docs/provenance.md).
 * Every database in that directory shares the store.
 * A file is written to a temporary name, synced and renamed before it is
 * recorded, so a recorded artifact is always whole.
 *
 * Functions return 0 or a negative SO_E* code and fill err.
 */
#ifndef SEQORCH_ARTIFACT_H
#define SEQORCH_ARTIFACT_H

#include "db.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Largest artifact kept (a binary, a raw output); larger is SO_EINVAL. */
#define ARTIFACT_MAX (64u * 1024 * 1024)

/* The SHA-256 of data in hex, the name it is stored under (65 bytes). */
void artifact_sha256(const void *data, size_t len, char out[65]);

/* The store directory of db, as a new string the caller frees. */
char *artifact_dir(struct db *db);

/* The path of artifact sha in db's store, as a new string (caller frees). */
char *artifact_path(struct db *db, const char *sha256);

/*
 * The store's lock, <store>/.lock (flock), so that gc never removes a file
 * that a run or an import is about to name: a writer holds it shared from
 * storing (or finding) the file until the row that names it is committed,
 * gc exclusive from reading the databases until it has removed what none
 * of them names.  A lock held the other way is waited for, with a line on
 * stderr saying so, up to ARTIFACT_LOCK_WAIT_S seconds for a writer and
 * ARTIFACT_GC_WAIT_S for gc: then SO_EBUSY.  A writer makes the store
 * directory first, gc never does.  *fd is what artifact_unlock releases,
 * or -1 when there is no store, or a read-only one with no lock file:
 * nobody can add or remove a file there, so there is nothing to exclude.
 * A lock file this user cannot open is SO_EIO for gc; a writer says so
 * once (progress_note) and goes on without it, *fd -1.
 */
#define ARTIFACT_LOCK_WAIT_S 600
#define ARTIFACT_GC_WAIT_S 60
int artifact_lock(struct db *db, int exclusive, int *fd, struct so_err *err);
void artifact_unlock(int fd);

/*
 * Store data's file (if not stored yet), not recorded: a file no row
 * records is removed by gc once ten minutes old, so an import stores its
 * files first and records them with its rows, in one transaction
 * (db_run_import), holding artifact_lock shared from the first file to
 * the commit.  sha256, when not NULL, gets the hex digest (65 bytes).
 */
int artifact_put(struct db *db, const void *data, size_t len, char *sha256,
    struct so_err *err);

/*
 * Store data (if not stored yet) and name it from build_id as (kind,
 * name), under artifact_lock.  sha256, when not NULL, gets the hex digest
 * (65 bytes).
 */
int artifact_keep(struct db *db, int64_t build_id, const char *kind,
    const char *name, const void *data, size_t len, char *sha256,
    struct so_err *err);

/*
 * Name artifact sha256, already recorded, from build_id as (kind, name),
 * under artifact_lock (gc could otherwise remove it between the look-up
 * and the name): 0 when named, SO_ENOTFOUND when this database does not
 * record it (then store it with artifact_keep).
 */
int artifact_name(struct db *db, int64_t build_id, const char *kind,
    const char *name, const char *sha256, struct so_err *err);

/*
 * Read artifact sha back, checking its digest: a new buffer the caller
 * frees, its length in *len.  SO_ENOTFOUND when the file is missing,
 * SO_EPROTO when its content no longer matches its name.
 */
int artifact_load(struct db *db, const char *sha256, char **data,
    size_t *len, struct so_err *err);

/*
 * Remove recorded artifacts that no run names, then files in the store
 * that are not recorded and older than ten minutes (a run may be between
 * writing one and naming it), but for any that another database sharing
 * the store records or names.  Each removed artifact is printed to out
 * (sha and size); with dry_run nothing is removed.  *n and *bytes count
 * them.  When one of those databases cannot be read, nothing is removed
 * and err names it ("gc: cannot read ...: nothing removed").  All of it
 * under artifact_lock, exclusive, but for a dry run, which changes
 * nothing.
 */
int artifact_gc(struct db *db, int dry_run, FILE *out, uint64_t *n,
    uint64_t *bytes, struct so_err *err);

/*
 * 1 when name is an artifact's name, 64 lowercase hex digits and nothing
 * else; 0 otherwise.  A name read from a database or a bundle is checked
 * before it becomes a path: "../results.db" must never be one.
 */
int artifact_name_ok(const char *name);

#endif

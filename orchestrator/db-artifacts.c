/*
 * results.db: disassembly checks of builds, and the artifacts (files in
 * the store, orchestrator/artifact.h) that builds name.
 */
#include "db-int.h"
#include "db-report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
db_disasm_reuse(struct db *db, const char *host, const char *binary_sha256,
    int64_t build_id, unsigned *bad, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	struct run_out o;
	int rc;

	rc = db_sql(db, &o, "INSERT INTO disasm (build_id, study, variant, "
	    "symbol, required, missing, status, tool, excerpt, forbidden, "
	    "present) SELECT ?1, study, variant, symbol, required, missing, "
	    "status, tool, excerpt, forbidden, present FROM disasm WHERE build_id = (SELECT b.id FROM "
	    "builds b WHERE b.host = ?2 AND b.binary_sha256 = ?3 AND "
	    "b.id != ?1 AND b.run_id NOT IN (SELECT run_id FROM imports) AND "
	    "EXISTS (SELECT 1 FROM disasm d WHERE d.build_id "
	    "= b.id) AND NOT EXISTS (SELECT 1 FROM disasm d WHERE "
	    "d.build_id = b.id AND d.status = 'no-tool') ORDER BY b.id DESC "
	    "LIMIT 1)", "iss", build_id, host, binary_sha256);
	if (rc != SQLITE_DONE)
		return db_err(db, err, "cannot copy a disassembly check");
	if (o.changes == 0)
		return SO_ENOTFOUND;
	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT count(*) FROM disasm WHERE "
	    "build_id = ? AND (status IN ('missing', 'no-symbol') OR "
	    "missing IS NOT NULL)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, build_id);
		rc = sqlite3_step(st);
	}
	if (rc == SQLITE_ROW)
		*bad = (unsigned)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	return rc == SQLITE_ROW ? 0 : db_err(db, err,
	    "cannot read the disassembly check");
}

int
db_disasm_put(struct db *db, const struct disasm_row *d, struct so_err *err)
{
	return db_exec(db, err, "cannot record disassembly check", NULL,
	    "INSERT OR REPLACE INTO disasm (build_id, study, variant, "
	    "symbol, required, missing, status, tool, excerpt, forbidden, "
	    "present) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "issssssssss",
	    d->build_id, d->study, d->variant, d->symbol, d->required,
	    d->missing, d->status, d->tool, d->excerpt, d->forbidden,
	    d->present);
}

int
db_disasm_present(struct db *db, int64_t build_id, const char *study,
    const char *variant, char **present, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*present = NULL;
	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT present FROM disasm WHERE "
	    "build_id = ? AND study = ? AND variant = ? AND status = "
	    "'forbidden'", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, build_id);
		sqlite3_bind_text(st, 2, study, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, variant, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 0);

			*present = xstrdup(t != NULL ? t : "?");
			rc = SQLITE_DONE;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (rc != SQLITE_DONE)
		return db_err(db, err, "cannot read the disassembly check");
	return 0;
}

int
db_disasm_forbidden(struct db *db, int64_t build_id, char **list,
    unsigned *n, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char *acc = NULL, *tmp;
	int rc;

	*list = NULL;
	*n = 0;
	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT study || '/' || variant || "
	    "' (' || present || ')' FROM disasm WHERE build_id = ? AND "
	    "status = 'forbidden' ORDER BY study, variant", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, build_id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			tmp = xasprintf("%s%s%s", acc ? acc : "",
			    acc ? ", " : "",
			    (const char *)sqlite3_column_text(st, 0));
			free(acc);
			acc = tmp;
			(*n)++;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (rc != SQLITE_DONE) {
		free(acc);
		*n = 0;
		return db_err(db, err, "cannot read the disassembly check");
	}
	*list = acc;
	return 0;
}

int
db_artifact_add(struct db *db, const char *sha256, uint64_t size,
    struct so_err *err)
{
	return db_exec(db, err, "cannot record an artifact", NULL,
	    "INSERT OR IGNORE INTO artifacts (sha256, size, stored_at) "
	    "VALUES (?, ?, ?)", "sit", sha256, (int64_t)size);
}

int
db_artifact_have(struct db *db, const char *sha256, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT 1 FROM artifacts WHERE "
	    "sha256 = ?", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, sha256, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_err(db, err, "cannot look an artifact up");
}

int
db_artifact_ref(struct db *db, int64_t build_id, const char *kind,
    const char *name, const char *sha256, struct so_err *err)
{
	return db_exec(db, err, "cannot record an artifact of a build", NULL,
	    "INSERT OR IGNORE INTO artifact_refs (run_id, host, build_id, "
	    "kind, name, sha256) SELECT run_id, host, id, ?2, ?3, ?4 FROM "
	    "builds WHERE id = ?1", "isss", build_id, kind, name, sha256);
}

int
db_artifact_ref_copy(struct db *db, const char *host,
    const char *binary_sha256, int64_t build_id, const char *kind,
    struct so_err *err)
{
	struct run_out o;

	if (db_sql(db, &o, "INSERT OR IGNORE INTO artifact_refs (run_id, host, "
	    "build_id, kind, name, sha256) SELECT n.run_id, n.host, n.id, "
	    "r.kind, r.name, r.sha256 FROM artifact_refs r, builds n "
	    "WHERE n.id = ?1 AND r.kind = ?4 AND r.build_id = (SELECT b.id "
	    "FROM builds b WHERE b.host = ?2 AND b.binary_sha256 = ?3 AND "
	    "b.id != ?1 AND b.run_id NOT IN (SELECT run_id FROM imports) AND "
	    "EXISTS (SELECT 1 FROM artifact_refs x WHERE "
	    "x.build_id = b.id AND x.kind = ?4) ORDER BY b.id DESC LIMIT 1)",
	    "isss", build_id, host, binary_sha256, kind) != SQLITE_DONE)
		return db_err(db, err, "cannot copy the artifacts of a build");
	return o.changes > 0 ? 0 : SO_ENOTFOUND;
}

struct artifact_each {
	int (*fn)(void *arg, const struct artifact_row *row);
	void *arg;
	int n;
};

static int
artifact_row(sqlite3_stmt *st, void *ctx)
{
	struct artifact_each *e = ctx;
	struct artifact_row r = {
		.build_id = sqlite3_column_int64(st, 0),
		.host = (const char *)sqlite3_column_text(st, 1),
		.kind = (const char *)sqlite3_column_text(st, 2),
		.name = (const char *)sqlite3_column_text(st, 3),
		.sha256 = (const char *)sqlite3_column_text(st, 4),
		.size = sqlite3_column_int64(st, 5),
	};

	e->n++;
	return e->fn(e->arg, &r);
}

int
db_artifact_list(struct db *db, int64_t run_id,
    int (*fn)(void *arg, const struct artifact_row *row), void *arg,
    struct so_err *err)
{
	struct artifact_each e = { fn, arg, 0 };
	int rc;

	rc = db_each(db, err, "cannot list the artifacts of a run",
	    artifact_row, &e, "SELECT r.build_id, r.host, r.kind, r.name, "
	    "r.sha256, a.size FROM artifact_refs r JOIN artifacts a USING "
	    "(sha256) WHERE r.run_id = ? ORDER BY r.host, r.build_id, r.kind, "
	    "r.name", "i", run_id);
	if (rc != 0)
		return rc;
	if (e.n == 0 && db_sql(db, NULL, "SELECT 1 FROM runs WHERE id = ?", "i",
	    run_id) != SQLITE_ROW)
		return db_report_no_run(db->h, run_id, err);
	return 0;
}

/* An artifact row that no run names: what gc forgets, then removes. */
struct gc_row {
	char	sha256[80];
	int64_t	size;
};

int
db_artifact_gc(struct db *db, int dry_run,
    int (*fn)(void *arg, const char *sha256, int64_t size), void *arg,
    struct so_err *err)
{
	static const char unnamed[] = "FROM artifacts a WHERE NOT EXISTS "
	    "(SELECT 1 FROM artifact_refs r WHERE r.sha256 = a.sha256)";
	struct gc_row *rows = NULL;
	sqlite3_stmt *st = NULL;
	size_t nrows = 0, i;
	char *sql;
	int rc, ret = 0;

	/* One transaction: a run naming an artifact meanwhile waits. */
	pthread_mutex_lock(&db->mu);
	if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		pthread_mutex_unlock(&db->mu);
		return db_err(db, err, "cannot lock the database for gc");
	}
	sql = xasprintf("SELECT sha256, size %s ORDER BY sha256", unnamed);
	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	free(sql);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		if ((rc = sqlite3_step(st)) != SQLITE_ROW)
			break;
		ALLOC_GROW(rows, nrows);
		snprintf(rows[nrows].sha256, sizeof rows[nrows].sha256, "%s",
		    (const char *)sqlite3_column_text(st, 0));
		rows[nrows++].size = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && !dry_run) {
		sql = xasprintf("DELETE FROM artifacts WHERE sha256 IN (SELECT "
		    "sha256 %s)", unnamed);
		rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK ?
		    SQLITE_DONE : SQLITE_ERROR;
		free(sql);
	}
	if (rc != SQLITE_DONE ||
	    sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		/* The message first: after ROLLBACK SQLite says "not an error". */
		ret = db_err(db, err, "cannot collect artifacts");
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	}
	pthread_mutex_unlock(&db->mu);
	/*
	 * Files go only once no row names them: a failed commit leaves rows
	 * and files as they were.  A file whose removal fails stays, named by
	 * nothing, for the next gc's sweep of unrecorded files.
	 */
	for (i = 0; ret == 0 && i < nrows; i++) {
		if (!dry_run && db_artifact_have(db, rows[i].sha256, err) != 0)
			continue;	/* recorded again since: kept */
		ret = fn(arg, rows[i].sha256, rows[i].size);
	}
	free(rows);
	return ret;
}

int
db_artifact_names(struct db *db, int (*fn)(void *arg, const char *sha256),
    void *arg, struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	pthread_mutex_lock(&db->mu);
	rc = sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_master "
	    "WHERE type = 'table' AND name IN ('artifacts', 'artifact_refs')",
	    -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW &&
	    sqlite3_column_int(st, 0) != 2) {
		ret = so_error(err, SO_ENOTFOUND, "\"%s\" names no artifact",
		    db_path(db));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_ROW)
		rc = sqlite3_prepare_v2(db->h, "SELECT sha256 FROM artifacts "
		    "UNION SELECT sha256 FROM artifact_refs", -1, &st, NULL);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		if ((rc = sqlite3_step(st)) != SQLITE_ROW)
			break;
		if ((ret = fn(arg, (const char *)sqlite3_column_text(st, 0)))
		    != 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = so_error(err, SO_EDB, "cannot read \"%s\": %s",
		    db_path(db), sqlite3_errmsg(db->h));
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db->mu);
	return ret;
}

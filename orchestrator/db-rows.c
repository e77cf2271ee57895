/*
 * A run's rows as data, and back: what a signed bundle carries so that
 * another database can hold the same run (docs/provenance.md).  The set of
 * rows is found from the schema itself: the runs row, then every row of
 * every table whose foreign keys lead to a row already taken (builds,
 * samples, windows, events, artifact_refs, and whatever later schema
 * versions add), plus the artifacts and refs rows those name.  So a new
 * table that references a run travels without a change here.
 */
#include "db-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TABLES 64
#define MAX_FKS 8

struct fk {
	char parent[64], from[64], to[64];
};

struct table {
	char name[64];
	struct fk fks[MAX_FKS];
	int nfks;
	int has_id;		/* an INTEGER PRIMARY KEY named id */
	char *where;		/* selection of the run's rows; NULL: none */
};

struct schema {
	struct table t[MAX_TABLES];
	int n;
};

static struct table *
find_table(struct schema *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->t[i].name, name) == 0)
			return &s->t[i];
	return NULL;
}

static void
schema_free(struct schema *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->t[i].where);
}

/* Tables, their foreign keys and id columns, in creation order. */
static int
schema_read(sqlite3 *h, struct schema *s, struct so_err *err)
{
	sqlite3_stmt *st = NULL, *fk = NULL;
	int rc;

	memset(s, 0, sizeof *s);
	rc = sqlite3_prepare_v2(h, "SELECT name FROM sqlite_master WHERE "
	    "type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid", -1,
	    &st, NULL);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    s->n < MAX_TABLES) {
		struct table *t = &s->t[s->n++];
		char *sql;

		snprintf(t->name, sizeof t->name, "%s",
		    (const char *)sqlite3_column_text(st, 0));
		sql = sqlite3_mprintf("SELECT \"table\", \"from\", \"to\" FROM "
		    "pragma_foreign_key_list(%Q)", t->name);
		if (sqlite3_prepare_v2(h, sql, -1, &fk, NULL) == SQLITE_OK)
			while (sqlite3_step(fk) == SQLITE_ROW &&
			    t->nfks < MAX_FKS) {
				struct fk *f = &t->fks[t->nfks++];

				snprintf(f->parent, sizeof f->parent, "%s",
				    sqlite3_column_text(fk, 0));
				snprintf(f->from, sizeof f->from, "%s",
				    sqlite3_column_text(fk, 1));
				snprintf(f->to, sizeof f->to, "%s",
				    sqlite3_column_text(fk, 2) ?
				    (const char *)sqlite3_column_text(fk, 2) :
				    "id");
			}
		sqlite3_finalize(fk);
		fk = NULL;
		sqlite3_free(sql);
		sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q) "
		    "WHERE name = 'id' AND pk = 1 AND upper(type) = 'INTEGER'",
		    t->name);
		if (sqlite3_prepare_v2(h, sql, -1, &fk, NULL) == SQLITE_OK)
			t->has_id = sqlite3_step(fk) == SQLITE_ROW;
		sqlite3_finalize(fk);
		fk = NULL;
		sqlite3_free(sql);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return so_error(err, SO_EDB, "database: cannot read the schema: "
		    "%s", sqlite3_errmsg(h));
	return 0;
}

/*
 * Give each table that belongs to run_id its WHERE clause: children by
 * their foreign keys, until nothing changes; then the parents that are
 * not the run's own (artifacts) by what the children name.
 */
static void
select_rows(struct schema *s, int64_t run_id)
{
	struct table *runs = find_table(s, "runs"), *t, *p;
	int changed = 1, i, j;
	char *w;

	if (runs == NULL)
		return;
	runs->where = xasprintf("id = %lld", (long long)run_id);
	while (changed) {
		changed = 0;
		for (i = 0; i < s->n; i++) {
			t = &s->t[i];
			/* Where a run came from is this database's own fact. */
			if (t->where != NULL || strcmp(t->name, "imports") == 0)
				continue;
			for (j = 0; j < t->nfks; j++) {
				p = find_table(s, t->fks[j].parent);
				if (p == NULL || p->where == NULL ||
				    strcmp(p->name, "artifacts") == 0)
					continue;
				w = xasprintf("%s%s\"%s\" IN (SELECT \"%s\" FROM "
				    "\"%s\" WHERE %s)", t->where ? t->where : "",
				    t->where ? " OR " : "", t->fks[j].from,
				    t->fks[j].to, p->name, p->where);
				free(t->where);
				t->where = w;
				changed = 1;
			}
		}
	}
	if ((t = find_table(s, "artifacts")) != NULL &&
	    (p = find_table(s, "artifact_refs")) != NULL && p->where != NULL)
		t->where = xasprintf("sha256 IN (SELECT sha256 FROM "
		    "artifact_refs WHERE %s)", p->where);
	if ((t = find_table(s, "refs")) != NULL &&
	    (p = find_table(s, "samples")) != NULL && p->where != NULL)
		t->where = xasprintf("(study, seed, steps) IN (SELECT study, "
		    "seed, steps FROM samples WHERE %s)", p->where);
}

static cJSON *
column_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		/* Exact in a double up to 2^53: ids, ns, counts. */
		return cJSON_CreateNumber((double)sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return cJSON_CreateNumber(sqlite3_column_double(st, i));
	case SQLITE_NULL:
		return cJSON_CreateNull();
	default:
		return cJSON_CreateString((const char *)
		    sqlite3_column_text(st, i));
	}
}

int
db_run_rows(struct db *db, int64_t run_id, cJSON **out, struct so_err *err)
{
	sqlite3 *h = db->h;
	struct schema s;
	cJSON *root = NULL, *tables;
	int i, c, rc, nruns = 0;

	*out = NULL;
	if ((rc = schema_read(h, &s, err)) != 0)
		return rc;
	select_rows(&s, run_id);
	root = cJSON_CreateObject();
	tables = cJSON_AddObjectToObject(root, "tables");
	for (i = 0; i < s.n && rc == 0; i++) {
		struct table *t = &s.t[i];
		sqlite3_stmt *st = NULL;
		cJSON *tj, *cols, *rows;
		char *sql;

		if (t->where == NULL)
			continue;
		sql = xasprintf("SELECT * FROM \"%s\" WHERE %s ORDER BY rowid",
		    t->name, t->where);
		if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
			rc = so_error(err, SO_EDB, "database: cannot read table "
			    "\"%s\": %s", t->name, sqlite3_errmsg(h));
			free(sql);
			break;
		}
		free(sql);
		tj = cJSON_AddObjectToObject(tables, t->name);
		cols = cJSON_AddArrayToObject(tj, "columns");
		rows = cJSON_AddArrayToObject(tj, "rows");
		for (c = 0; c < sqlite3_column_count(st); c++)
			cJSON_AddItemToArray(cols, cJSON_CreateString(
			    sqlite3_column_name(st, c)));
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			cJSON *row = cJSON_CreateArray();

			for (c = 0; c < sqlite3_column_count(st); c++)
				cJSON_AddItemToArray(row, column_json(st, c));
			cJSON_AddItemToArray(rows, row);
			nruns += strcmp(t->name, "runs") == 0;
		}
		rc = rc == SQLITE_DONE ? 0 : so_error(err, SO_EDB, "database: "
		    "cannot read table \"%s\": %s", t->name, sqlite3_errmsg(h));
		sqlite3_finalize(st);
	}
	schema_free(&s);
	if (rc == 0 && nruns == 0)
		rc = so_error(err, SO_ENOTFOUND, "no run %lld",
		    (long long)run_id);
	if (rc != 0) {
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return 0;
}

/* Old id -> new id of one table's rows, as a small sorted-free list. */
struct idmap {
	char table[64];
	int64_t *from, *to;
	size_t n;
};

static int
map_get(struct idmap *maps, int nmaps, const char *table, int64_t from,
    int64_t *to)
{
	int i;
	size_t j;

	for (i = 0; i < nmaps; i++) {
		if (strcmp(maps[i].table, table) != 0)
			continue;
		for (j = 0; j < maps[i].n; j++)
			if (maps[i].from[j] == from) {
				*to = maps[i].to[j];
				return 1;
			}
		return 0;
	}
	return 0;
}

static void
bind_json(sqlite3_stmt *st, int i, const cJSON *v)
{
	if (cJSON_IsNull(v) || v == NULL)
		sqlite3_bind_null(st, i);
	else if (cJSON_IsString(v))
		sqlite3_bind_text(st, i, v->valuestring, -1, SQLITE_TRANSIENT);
	else if (cJSON_IsNumber(v) && v->valuedouble == (double)(int64_t)
	    v->valuedouble && v->valuedouble < 9007199254740992.0 &&
	    v->valuedouble > -9007199254740992.0)
		sqlite3_bind_int64(st, i, (int64_t)v->valuedouble);
	else if (cJSON_IsNumber(v))
		sqlite3_bind_double(st, i, v->valuedouble);
	else
		sqlite3_bind_null(st, i);
}

/* Columns of table in this database, to check the bundle's against. */
static int
has_column(sqlite3 *h, const char *table, const char *col)
{
	sqlite3_stmt *st = NULL;
	char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q) "
	    "WHERE name = %Q", table, col);
	int ok = sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	sqlite3_free(sql);
	return ok;
}

static int
import_table(sqlite3 *h, struct table *t, const cJSON *tj,
    struct idmap *maps, int nmaps, struct idmap *mine, struct so_err *err)
{
	const cJSON *cols = cJSON_GetObjectItemCaseSensitive(tj, "columns");
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(tj, "rows");
	const cJSON *row, *c;
	sqlite3_stmt *st = NULL;
	char *names = xstrdup(""), *marks = xstrdup(""), *tmp, *sql;
	int ncol = cJSON_GetArraySize(cols), i, k, id_col = -1, rc = 0;
	int keep[256];
	int nkeep = 0;

	if (!cJSON_IsArray(cols) || !cJSON_IsArray(rows) || ncol > 256)
		return so_error(err, SO_EPROTO, "table \"%s\": malformed",
		    t->name);
	for (i = 0; i < ncol; i++) {
		c = cJSON_GetArrayItem(cols, i);
		if (!cJSON_IsString(c))
			return so_error(err, SO_EPROTO, "table \"%s\": column %d "
			    "is not a name", t->name, i);
		if (t->has_id && strcmp(c->valuestring, "id") == 0) {
			id_col = i;
			continue;
		}
		if (!has_column(h, t->name, c->valuestring)) {
			rc = so_error(err, SO_EPROTO, "table \"%s\": column "
			    "\"%s\" is unknown to this seqorch (a newer "
			    "schema?)", t->name, c->valuestring);
			goto out;
		}
		keep[nkeep++] = i;
		tmp = xasprintf("%s%s\"%s\"", names, *names ? ", " : "",
		    c->valuestring);
		free(names);
		names = tmp;
		tmp = xasprintf("%s%s?", marks, *marks ? ", " : "");
		free(marks);
		marks = tmp;
	}
	/* Rows this database may have already (artifacts, refs) stay. */
	sql = xasprintf("INSERT OR IGNORE INTO \"%s\" (%s) VALUES (%s)",
	    t->name, names, marks);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		rc = so_error(err, SO_EDB, "database: %s", sqlite3_errmsg(h));
	free(sql);
	cJSON_ArrayForEach(row, rows) {
		if (rc != 0)
			break;
		if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != ncol) {
			rc = so_error(err, SO_EPROTO, "table \"%s\": a row has "
			    "the wrong width", t->name);
			break;
		}
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		for (k = 0; k < nkeep; k++) {
			const cJSON *v = cJSON_GetArrayItem(row, keep[k]);
			const char *col = cJSON_GetArrayItem(cols,
			    keep[k])->valuestring;
			int64_t to;
			int f;

			for (f = 0; f < t->nfks; f++)
				if (strcmp(t->fks[f].from, col) == 0 &&
				    cJSON_IsNumber(v))
					break;
			if (f < t->nfks && strcmp(t->fks[f].to, "id") == 0) {
				if (!map_get(maps, nmaps, t->fks[f].parent,
				    (int64_t)v->valuedouble, &to)) {
					rc = so_error(err, SO_EPROTO, "table "
					    "\"%s\": \"%s\" %.0f names no %s "
					    "row of the bundle", t->name, col,
					    v->valuedouble, t->fks[f].parent);
					break;
				}
				sqlite3_bind_int64(st, k + 1, to);
			} else
				bind_json(st, k + 1, v);
		}
		if (rc != 0)
			break;
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = so_error(err, SO_EDB, "database: cannot import into "
			    "\"%s\": %s", t->name, sqlite3_errmsg(h));
			break;
		}
		if (id_col >= 0) {
			const cJSON *v = cJSON_GetArrayItem(row, id_col);

			mine->from = xrealloc(mine->from, (mine->n + 1) *
			    sizeof *mine->from);
			mine->to = xrealloc(mine->to, (mine->n + 1) *
			    sizeof *mine->to);
			mine->from[mine->n] = (int64_t)v->valuedouble;
			mine->to[mine->n] = sqlite3_last_insert_rowid(h);
			mine->n++;
		}
	}
	sqlite3_finalize(st);
out:
	free(marks);
	free(names);
	return rc;
}

int
db_run_import(struct db *db, const cJSON *rows, const struct import_origin *o,
    int64_t *new_run_id, struct so_err *err)
{
	sqlite3 *h = db->h;
	const cJSON *tables = cJSON_GetObjectItemCaseSensitive(rows, "tables");
	struct idmap maps[MAX_TABLES];
	struct schema s;
	sqlite3_stmt *st = NULL;
	int nmaps = 0, i, rc, progress;
	char done[MAX_TABLES] = { 0 };
	int64_t run;

	*new_run_id = 0;
	memset(maps, 0, sizeof maps);
	if (!cJSON_IsObject(tables))
		return so_error(err, SO_EPROTO, "rows: no \"tables\" object");
	if ((rc = schema_read(h, &s, err)) != 0)
		return rc;
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "database: cannot lock for import: "
		    "%s", sqlite3_errmsg(h));
		goto out;
	}
	/* Importing the same run of the same bundle twice changes nothing. */
	if (sqlite3_prepare_v2(h, "SELECT run_id FROM imports WHERE "
	    "manifest_sha256 = ? AND origin_run_id = ?", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, o->manifest_sha256, -1,
		    SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, o->origin_run_id);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*new_run_id = sqlite3_column_int64(st, 0);
			rc = SO_EEXIST;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != 0)
		goto rollback;
	for (i = 0; i < s.n; i++)
		if (cJSON_GetObjectItemCaseSensitive(tables, s.t[i].name) ==
		    NULL)
			done[i] = 1;
	{
		const cJSON *tj;

		cJSON_ArrayForEach(tj, tables)
			if (find_table(&s, tj->string) == NULL) {
				rc = so_error(err, SO_EPROTO, "rows: table "
				    "\"%s\" is unknown to this seqorch",
				    tj->string);
				goto rollback;
			}
	}
	/* Parents first: a table waits until every table it names is in. */
	do {
		progress = 0;
		for (i = 0; i < s.n && rc == 0; i++) {
			struct table *t = &s.t[i];
			int f, ready = 1;

			if (done[i])
				continue;
			for (f = 0; f < t->nfks; f++) {
				struct table *p = find_table(&s,
				    t->fks[f].parent);

				if (p != NULL && p != t && !done[p - s.t])
					ready = 0;
			}
			if (!ready)
				continue;
			snprintf(maps[nmaps].table, sizeof maps[nmaps].table,
			    "%s", t->name);
			rc = import_table(h, t, cJSON_GetObjectItemCaseSensitive(
			    tables, t->name), maps, nmaps, &maps[nmaps], err);
			nmaps++;
			done[i] = 1;
			progress = 1;
		}
	} while (progress && rc == 0);
	if (rc != 0)
		goto rollback;
	if (!map_get(maps, nmaps, "runs", o->origin_run_id, &run)) {
		rc = so_error(err, SO_EPROTO, "rows: run %lld is not in the "
		    "bundle", (long long)o->origin_run_id);
		goto rollback;
	}
	if (sqlite3_prepare_v2(h, "INSERT INTO imports (run_id, "
	    "origin_run_id, origin_coordinator, origin_db, key_fingerprint, "
	    "manifest_sha256, imported_at) VALUES (?, ?, ?, ?, ?, ?, "
	    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = so_error(err, SO_EDB, "database: %s", sqlite3_errmsg(h));
		goto rollback;
	}
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, o->origin_run_id);
	sqlite3_bind_text(st, 3, o->coordinator, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, o->db_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, o->key_fingerprint, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, o->manifest_sha256, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : so_error(err, SO_EDB,
	    "database: cannot record the import: %s", sqlite3_errmsg(h));
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) ==
	    SQLITE_OK) {
		*new_run_id = run;
		goto out;
	}
	if (rc == 0)
		rc = so_error(err, SO_EDB, "database: cannot commit the "
		    "import: %s", sqlite3_errmsg(h));
rollback:
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
out:
	for (i = 0; i < nmaps; i++) {
		free(maps[i].from);
		free(maps[i].to);
	}
	schema_free(&s);
	return rc;
}

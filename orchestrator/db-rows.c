/*
 * A run's rows as data, and back: what a signed bundle carries so that
 * another database can hold the same run (docs/provenance.md).  Export
 * finds the set of rows from the schema itself: the runs row, then every
 * row of every table whose foreign keys lead to a row already taken
 * (builds, samples, windows, events, artifact_refs, and whatever later
 * schema versions add), plus the artifacts and refs rows those name.
 * Import trusts none of that: it takes only the tables and columns of its
 * own list (itables), each value of its column's type, and only rows whose
 * every reference leads to the run being imported, renumbered here.
 */
#include "db-int.h"

#include "artifact.h"
#include "rows-doc.h"
#include "strbuf.h"

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
			/*
			 * Where a run came from, and which reproduction made
			 * it, are this database's own facts.
			 */
			if (t->where != NULL || strcmp(t->name, "imports") == 0 ||
			    strcmp(t->name, "reproduction_runs") == 0)
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
		t->where = xasprintf("(study, seed, steps, msg_len) IN (SELECT "
		    "study, seed, steps, COALESCE(msg_len, 0) FROM samples "
		    "WHERE %s)", p->where);
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
db_run_rows_each(struct db *db, int64_t run_id,
    const struct db_rows_visitor *v, struct so_err *err)
{
	sqlite3 *h = db->h;
	struct schema s;
	int i, c, rc, nruns = 0;

	if ((rc = schema_read(h, &s, err)) != 0)
		return rc;
	select_rows(&s, run_id);
	for (i = 0; i < s.n && rc == 0; i++) {
		struct table *t = &s.t[i];
		sqlite3_stmt *st = NULL;
		cJSON *cols;
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
		cols = cJSON_CreateArray();
		for (c = 0; c < sqlite3_column_count(st); c++)
			cJSON_AddItemToArray(cols, cJSON_CreateString(
			    sqlite3_column_name(st, c)));
		rc = v->table(v->arg, t->name, cols, err);
		cJSON_Delete(cols);
		/* One row at a time: a run of millions never is a tree. */
		while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			cJSON *row = cJSON_CreateArray();

			for (c = 0; c < sqlite3_column_count(st); c++)
				cJSON_AddItemToArray(row, column_json(st, c));
			rc = v->row(v->arg, row, err);
			cJSON_Delete(row);
			nruns += strcmp(t->name, "runs") == 0;
		}
		if (rc == SQLITE_DONE)
			rc = 0;
		else if (rc > 0)
			rc = so_error(err, SO_EDB, "database: cannot read table "
			    "\"%s\": %s", t->name, sqlite3_errmsg(h));
		sqlite3_finalize(st);
	}
	schema_free(&s);
	if (rc == 0 && nruns == 0)
		rc = so_error(err, SO_ENOTFOUND, "no run %lld",
		    (long long)run_id);
	return rc;
}

/*
 * What an import may write (docs/provenance.md): these tables, parents
 * first, with these columns and types.  Nothing else in a bundle is
 * written.  refs rows are skipped (this database computes its own
 * references), artifacts rows are only checked (the store records each
 * file by the hash of its bytes as it is stored), and any other table
 * (hosts, leases, lease_events, imports: this database's own state)
 * refuses the bundle.  A schema version that gives a run a new table or
 * column adds it here.
 */
enum { T_WRITE, T_CHECK, T_SKIP };

struct icol {
	const char *name;
	char type;		/* i integer, r number, t text on one line,
				 * x free text (newlines and tabs), a
				 * artifact name */
	char null;		/* 1: may be null; 0: not null, and a column
				 * every bundle has (schema.sql's NOT NULL
				 * without a DEFAULT); 2: not null, but a
				 * bundle may leave it out (NOT NULL
				 * DEFAULT ...: the database fills it in) */
	const char *parent;	/* the table whose (renumbered) id this names */
	const char *in;		/* the values it may hold, blank separated
				 * (schema.sql's CHECK ... IN); NULL: any */
	char positive;		/* 1: over 0 (CHECK (... > 0), or a time) */
};

#define MAX_KEYS 2
#define MAX_KEY_COLS 8

struct itable {
	const char *name;
	int mode;		/* T_* */
	int has_id;		/* its own id column, renumbered here */
	struct icol cols[32];	/* up to a NULL name (one at least) */
	/*
	 * Its UNIQUE keys but id (schema.sql's UNIQUE and composite
	 * PRIMARY KEY), columns blank separated, the last integer one the
	 * one that varies from row to row (struct keyset).
	 */
	const char *keys[MAX_KEYS];
};

#define COL(n, type, null, parent, in, pos) { n, type, null, parent, in, pos }
#define RUN COL("run_id", 'i', 0, "runs", NULL, 0)
#define BUILD COL("build_id", 'i', 0, "builds", NULL, 0)
#define T(n) COL(n, 't', 0, NULL, NULL, 0)
#define TN(n) COL(n, 't', 1, NULL, NULL, 0)
#define X(n) COL(n, 'x', 0, NULL, NULL, 0)
#define XN(n) COL(n, 'x', 1, NULL, NULL, 0)
#define I(n) COL(n, 'i', 0, NULL, NULL, 0)
#define IN(n) COL(n, 'i', 1, NULL, NULL, 0)
#define RN(n) COL(n, 'r', 1, NULL, NULL, 0)
#define A(n) COL(n, 'a', 0, NULL, NULL, 0)
/* One of the values in, or over 0, as schema.sql's CHECKs require. */
#define TE(n, in) COL(n, 't', 0, NULL, in, 0)
#define TNE(n, in) COL(n, 't', 1, NULL, in, 0)
#define IE(n, in) COL(n, 'i', 0, NULL, in, 0)
#define IP(n) COL(n, 'i', 0, NULL, NULL, 1)
/* NOT NULL DEFAULT ...: a bundle of before the column may leave it out. */
#define ID(n) COL(n, 'i', 2, NULL, NULL, 0)
#define IED(n, in) COL(n, 'i', 2, NULL, in, 0)

/*
 * Every CHECK of schema.sql on a column written here is mirrored in its
 * column, and every UNIQUE key in keys (test_51 holds each to it), so
 * that verify, which has no database, refuses what import's INSERT would.  samples' steps and ns
 * are over 0 as the agent protocol has them (a sample of no time has no
 * rate).
 */
static const struct itable itables[] = {
	{ "runs", T_WRITE, 1, { I("id"), T("study"), T("started_at"),
	    TN("finished_at"),
	    TE("status", "running ok partial failed interrupted"),
	    IP("steps"), IP("samples_per_variant"), X("command"), T("seed"),
	    TN("variants"), T("hosts"), ID("exploratory"), T("coordinator"),
	    T("version"), ID("resumes"), TN("openssl_cap"),
	    TN("openssl_cap_clear"), RN("max_cv"), IN("max_samples"),
	    IN("msg_len"), IN("warmup") }, { NULL } },
	{ "run_hosts", T_WRITE, 0, { RUN, T("host"),
	    TE("status", "running ok failed interrupted"), XN("error"),
	    IN("pin_cpu"), IN("pinned"), XN("pin_error"), TN("governor"),
	    RN("calib_mhz"), XN("openssl"), XN("facts"), T("started_at"),
	    TN("finished_at"), TN("cpu_choice"), XN("counters"),
	    XN("counters_error") }, { "host run_id" } },
	{ "builds", T_WRITE, 1, { I("id"), RUN, T("host"), T("compiler"),
	    XN("compiler_version"), TN("target"), X("cflags"), XN("native"),
	    XN("commands"), XN("log"), TE("status", "ok failed"),
	    TN("source_sha256"), TN("binary_sha256"), XN("openssl"),
	    T("created_at"), TN("targeting"), TN("study"), XN("extra") },
	    { NULL } },
	{ "variants", T_WRITE, 0, { RUN, T("host"), BUILD, T("study"),
	    T("variant"), TE("status", "ok skipped failed unavailable"),
	    XN("reason") }, { "run_id host study variant build_id" } },
	{ "windows", T_WRITE, 1, { I("id"), RUN, T("study"), T("host"),
	    COL("build_id", 'i', 1, "builds", NULL, 0), T("holder"),
	    T("started_at"), TN("finished_at"), XN("before_state"),
	    XN("after_state"), XN("drift"), TNE("verdict", "quiet noisy"),
	    XN("preflight") }, { NULL } },
	{ "samples", T_WRITE, 1, { I("id"), RUN, T("host"), BUILD, T("study"),
	    T("variant"), I("sample_index"), I("position"), IP("steps"),
	    IP("ns"), T("digest"), T("seed"), IE("valid", "0 1"),
	    XN("invalid_reason"), RN("calib_mhz"), IN("cpu"),
	    T("received_at"), XN("reason"), RN("calib_after_mhz"),
	    IN("cycles"), IN("instructions"),
	    TNE("cycles_source", "pmu calibration test-seam"),
	    TN("openssl_cap"), IN("host_position"),
	    TN("openssl_cap_detected"), TN("openssl_cap_cleared"),
	    IN("msg_len"), IED("warmup", "0 1"),
	    COL("window_id", 'i', 1, "windows", NULL, 0) },
	    { "run_id host build_id study variant sample_index" } },
	{ "sample_metrics", T_WRITE, 0, { COL("sample_id", 'i', 0, "samples",
	    NULL, 0), T("name"), COL("value", 'r', 0, NULL, NULL, 0) },
	    { "name sample_id" } },
	{ "events", T_WRITE, 1, { I("id"), RUN, TN("host"), T("at"),
	    TE("level", "info warning error"), X("message") }, { NULL } },
	{ "disasm", T_WRITE, 0, { BUILD, T("study"), T("variant"), T("symbol"),
	    X("required"), XN("missing"),
	    TE("status", "ok missing forbidden no-symbol no-tool"),
	    XN("tool"), XN("excerpt"), XN("forbidden"), XN("present") },
	    { "study variant build_id" } },
	{ "artifacts", T_CHECK, 0, { A("sha256"), I("size"),
	    T("stored_at") }, { NULL } },
	{ "artifact_refs", T_WRITE, 0, { RUN, T("host"), BUILD,
	    TE("kind", "raw binary disasm build-log build-commands source"),
	    T("name"), A("sha256") }, { "run_id host kind name build_id" } },
	{ "refs", T_SKIP, 0, { COL(NULL, 0, 0, NULL, NULL, 0) }, { NULL } },
};

#define NITABLES (sizeof itables / sizeof itables[0])

/*
 * Old ids of one table's rows taken so far and their new ones, as runs of
 * ids that follow each other on both sides, sorted by old id: exported
 * rows come in id order and are inserted in it, so a table of a million
 * rows is one run or a few, not 16 MB.
 */
struct idrun {
	int64_t from, to, n;
};

struct idmap {
	struct idrun *r;
	size_t n;
};

/* The first run that ends after from; m->n when there is none. */
static size_t
map_find(const struct idmap *m, int64_t from)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->r[mid].from + m->r[mid].n <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
map_get(const struct idmap *m, int64_t from, int64_t *to)
{
	size_t i = map_find(m, from);

	if (i == m->n || m->r[i].from > from)
		return 0;
	*to = m->r[i].to + (from - m->r[i].from);
	return 1;
}

/* 0, or -1 when from is there already (the same id twice). */
static int
map_add(struct idmap *m, int64_t from, int64_t to)
{
	size_t i = map_find(m, from);
	struct idrun *p = i > 0 ? &m->r[i - 1] : NULL;

	if (i < m->n && m->r[i].from <= from)
		return -1;
	if (p != NULL && p->from + p->n == from && p->to + p->n == to) {
		p->n++;
		return 0;
	}
	ALLOC_GROW(m->r, m->n);
	memmove(m->r + i + 1, m->r + i, (m->n - i) * sizeof *m->r);
	m->r[i].from = from;
	m->r[i].to = to;
	m->r[i].n = 1;
	m->n++;
	return 0;
}

static int
is_integer(const cJSON *v)
{
	/*
	 * Exact in a double: what db_run_rows_each gives, never "1" or 1.5.
	 * The range first: casting 1e999 (inf) or NaN to an integer is
	 * undefined.
	 */
	return cJSON_IsNumber(v) && v->valuedouble < 9007199254740992.0 &&
	    v->valuedouble > -9007199254740992.0 &&
	    v->valuedouble == (double)(int64_t)v->valuedouble;
}

/* NULL when v suits column c, else what c wanted. */
static const char *
value_wanted(const struct icol *c, const cJSON *v)
{
	if (cJSON_IsNull(v))
		return c->null == 1 ? NULL : "a value, not null";
	switch (c->type) {
	case 'i':
		return is_integer(v) ? NULL : "an integer";
	case 'r':
		return cJSON_IsNumber(v) ? NULL : "a number";
	case 'a':
		return cJSON_IsString(v) && artifact_name_ok(v->valuestring) ?
		    NULL : "a sha256 (64 lowercase hex digits)";
	case 'x':
		return cJSON_IsString(v) ? NULL : "text";
	default:
		return cJSON_IsString(v) ? NULL : "a string";
	}
}

/*
 * 1 when v, of column c's type, is a value c may hold; else 0, with what
 * c wants in want ("0 or 1", "\"ok\" or \"failed\"").
 */
static int
value_allowed(const struct icol *c, const cJSON *v, struct strbuf *want)
{
	const char *p, *e;
	char num[32];
	const char *s = num;
	size_t n = 0;

	if (cJSON_IsNull(v))
		return 1;
	if (c->positive && v->valuedouble < 1) {
		strbuf_addstr(want, "an integer over 0");
		return 0;
	}
	if (c->in == NULL)
		return 1;
	if (cJSON_IsString(v))
		s = v->valuestring;
	else
		snprintf(num, sizeof num, "%lld", (long long)v->valuedouble);
	for (p = c->in; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		e = p + strcspn(p, " ");
		if ((size_t)(e - p) == strlen(s) && strncmp(p, s, e - p) == 0)
			return 1;
		n++;
	}
	for (p = c->in; *p != '\0'; p = *e != '\0' ? e + 1 : e, n--) {
		e = p + strcspn(p, " ");
		strbuf_addf(want, "%s%s%.*s%s", n == 1 && p != c->in ? " or " :
		    p != c->in ? ", " : "", c->type == 'i' ? "" : "\"",
		    (int)(e - p), p, c->type == 'i' ? "" : "\"");
	}
	return 0;
}

static const char *
json_kind(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return is_integer(v) ? "an integer" : "a number";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "a boolean";
	return cJSON_IsArray(v) ? "an array" : "an object";
}

static const struct itable *
itable_find(const char *name)
{
	size_t i;

	for (i = 0; i < NITABLES; i++)
		if (strcmp(itables[i].name, name) == 0)
			return &itables[i];
	return NULL;
}

static int
itable_index(const char *name)
{
	const struct itable *t = itable_find(name);

	return t != NULL ? (int)(t - itables) : -1;
}

int
db_rows_open_fd(struct rows_doc *d, int fd, uint64_t off, uint64_t len,
    const char *name, struct so_err *err)
{
	return rows_doc_open_fd(d, fd, off, len, name, NITABLES, itable_index,
	    err);
}

int
db_rows_open_mem(struct rows_doc *d, const void *data, size_t len,
    const char *name, struct so_err *err)
{
	return rows_doc_open_mem(d, data, len, name, NITABLES, itable_index,
	    err);
}

const struct rows_doc_table *
db_rows_table(const struct rows_doc *d, const char *name, size_t *slot)
{
	int i = itable_index(name);

	if (i < 0 || !d->t[i].present)
		return NULL;
	*slot = (size_t)i;
	return &d->t[i];
}

/* A bundle's table as read: which of our columns each of its columns is. */
struct header {
	const struct icol *col[ROWS_DOC_MAX_COLUMNS];
	int ncol, id_col;
};

static int
read_header(const struct itable *t, const struct rows_doc_table *tj,
    struct header *hd, struct so_err *err)
{
	const cJSON *cols = tj->columns;
	const struct icol *c;
	int i, j;

	memset(hd, 0, sizeof *hd);
	hd->id_col = -1;
	if (!tj->is_object || tj->ncolumns < 0 || !tj->has_rows)
		return so_error(err, SO_EPROTO, "rows.json: table \"%s\": no "
		    "\"columns\" and \"rows\" arrays", t->name);
	hd->ncol = tj->ncolumns;
	if (hd->ncol > (int)(sizeof hd->col / sizeof hd->col[0]))
		return so_error(err, SO_EPROTO, "rows.json: table \"%s\": %d "
		    "columns", t->name, hd->ncol);
	for (i = 0; i < hd->ncol; i++) {
		const cJSON *n = cJSON_GetArrayItem(cols, i);

		for (c = t->cols; c->name != NULL; c++)
			if (cJSON_IsString(n) &&
			    strcmp(c->name, n->valuestring) == 0)
				break;
		if (c->name == NULL)
			return so_error(err, SO_EPROTO, "rows.json: table "
			    "\"%s\": column %d%s%.64s%s is unknown to this "
			    "seqorch", t->name, i + 1, cJSON_IsString(n) ?
			    " \"" : "", cJSON_IsString(n) ? n->valuestring : "",
			    cJSON_IsString(n) ? "\"" : "");
		for (j = 0; j < i; j++)
			if (hd->col[j] == c)
				return so_error(err, SO_EPROTO, "rows.json: "
				    "table \"%s\": column \"%s\" twice",
				    t->name, c->name);
		hd->col[i] = c;
		if (t->has_id && strcmp(c->name, "id") == 0)
			hd->id_col = i;
	}
	/*
	 * What ties a row to its run must be there, and what the database
	 * takes only with a value: a column left out is its DEFAULT, or
	 * NULL, which a NOT NULL column refuses.  A reference that may be
	 * NULL may be left out (samples.window_id, in bundles made before
	 * it).
	 */
	for (c = t->cols; c->name != NULL; c++) {
		if ((c->parent == NULL || c->null == 1) && c->type != 'a' &&
		    !(t->has_id && strcmp(c->name, "id") == 0) &&
		    !(t->mode == T_WRITE && c->null == 0))
			continue;
		for (j = 0; j < hd->ncol; j++)
			if (hd->col[j] == c)
				break;
		if (j == hd->ncol)
			return so_error(err, SO_EPROTO, "rows.json: table "
			    "\"%s\" has no column \"%s\"", t->name, c->name);
	}
	return 0;
}

/* The INSERT of t's columns as hd has them (its own id left out). */
static int
prepare_insert(sqlite3 *h, const struct itable *t, const struct header *hd,
    sqlite3_stmt **st, struct so_err *err)
{
	struct strbuf sql = STRBUF_INIT;
	int k, first = 1, rc = 0;

	strbuf_addf(&sql, "INSERT INTO \"%s\" (", t->name);
	for (k = 0; k < hd->ncol; k++)
		if (k != hd->id_col) {
			strbuf_addf(&sql, "%s\"%s\"", first ? "" : ", ",
			    hd->col[k]->name);
			first = 0;
		}
	strbuf_addstr(&sql, ") VALUES (");
	for (first = 1, k = 0; k < hd->ncol; k++)
		if (k != hd->id_col) {
			strbuf_addstr(&sql, first ? "?" : ", ?");
			first = 0;
		}
	strbuf_addstr(&sql, ")");
	if (sqlite3_prepare_v2(h, sql.buf, -1, st, NULL) != SQLITE_OK)
		rc = so_error(err, SO_EDB, "database: table \"%s\": %s",
		    t->name, sqlite3_errmsg(h));
	strbuf_release(&sql);
	return rc;
}

/*
 * The offset of the first control character (C0, DEL) in string v, or -1.
 * Text from a bundle is refused here, in one place, rather than escaped
 * by each renderer: every report format, compare and windows print names
 * (hosts, variants, compilers) as they are stored, so an escape sequence
 * in one would reach the terminal.  Free text (build logs, messages,
 * facts) keeps its newlines and tabs; the renderers print it as blanks.
 */
static long
control_at(const struct icol *c, const cJSON *v)
{
	const unsigned char *s;

	if (!cJSON_IsString(v) || c->type == 'a')
		return -1;
	for (s = (const unsigned char *)v->valuestring; *s != '\0'; s++) {
		if (c->type == 'x' && (*s == '\n' || *s == '\t'))
			continue;
		if (*s < 0x20 || *s == 0x7f)
			return (long)(s - (const unsigned char *)v->valuestring);
	}
	return -1;
}

/* Every value of row of its column's type. */
static int
check_types(const struct itable *t, const struct header *hd,
    const cJSON *row, long rown, struct so_err *err)
{
	const cJSON *v;
	const char *wanted;
	struct strbuf want = STRBUF_INIT;
	long ctl;
	int k, rc;

	if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != hd->ncol)
		return so_error(err, SO_EPROTO, "rows.json: table \"%s\", row "
		    "%ld: not an array of %d values", t->name, rown, hd->ncol);
	/* Along the list: cJSON_GetArrayItem walks it from the start. */
	for (k = 0, v = row->child; k < hd->ncol; k++, v = v->next) {

		if ((wanted = value_wanted(hd->col[k], v)) != NULL)
			return so_error(err, SO_EPROTO, "rows.json: table "
			    "\"%s\", row %ld, column \"%s\": expected %s, not "
			    "%s", t->name, rown, hd->col[k]->name, wanted,
			    json_kind(v));
		if ((ctl = control_at(hd->col[k], v)) >= 0)
			return so_error(err, SO_EPROTO, "rows.json: table "
			    "\"%s\", row %ld, column \"%s\": control "
			    "character 0x%02x at byte %ld", t->name, rown,
			    hd->col[k]->name,
			    (unsigned char)v->valuestring[ctl], ctl);
		if (!value_allowed(hd->col[k], v, &want)) {
			if (cJSON_IsString(v))
				rc = so_error(err, SO_EPROTO, "rows.json: table "
				    "\"%s\", row %ld, column \"%s\": expected "
				    "%s, not \"%.64s\"", t->name, rown,
				    hd->col[k]->name, want.buf, v->valuestring);
			else
				rc = so_error(err, SO_EPROTO, "rows.json: table "
				    "\"%s\", row %ld, column \"%s\": expected "
				    "%s, not %lld", t->name, rown,
				    hd->col[k]->name, want.buf,
				    (long long)v->valuedouble);
			strbuf_release(&want);
			return rc;
		}
	}
	return 0;
}

/* The new id of the parent row that column k of row names, or 0. */
static int
parent_id(const struct header *hd, const cJSON *row, int k,
    const struct idmap *maps, int64_t *to)
{
	const struct itable *p = itable_find(hd->col[k]->parent);

	return map_get(&maps[p - itables], (int64_t)cJSON_GetArrayItem(row,
	    k)->valuedouble, to);
}

/*
 * 1 when row is one of runs' own: a runs row listed there, or a row every
 * id of which (one at least) names a row taken already.
 */
static int
reached(const struct itable *t, const struct header *hd, const cJSON *row,
    const int64_t *runs, size_t nruns, const struct idmap *maps)
{
	int k, linked = 0;
	int64_t id, to;
	size_t i;

	if (strcmp(t->name, "runs") == 0) {
		id = (int64_t)cJSON_GetArrayItem(row, hd->id_col)->valuedouble;
		for (i = 0; i < nruns; i++)
			if (runs[i] == id)
				return 1;
		return 0;
	}
	for (k = 0; k < hd->ncol; k++) {
		if (hd->col[k]->parent == NULL ||
		    cJSON_IsNull(cJSON_GetArrayItem(row, k)))
			continue;
		if (!parent_id(hd, row, k, maps, &to))
			return 0;
		linked = 1;
	}
	return linked;
}

/* s with each run of blanks (newlines, tabs) one space, cut to len. */
static const char *
one_line(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s != '\0' && n + 1 < len; s++) {
		if (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') {
			if (n > 0 && buf[n - 1] == ' ')
				continue;
			buf[n++] = ' ';
		} else
			buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/* Bind row's values to st, each id as renumbered here, and insert it. */
static int
insert_row(sqlite3 *h, sqlite3_stmt *st, const struct itable *t,
    const struct header *hd, const cJSON *row, long rown,
    const struct idmap *maps, struct so_err *err)
{
	const cJSON *v;
	char msg[200];
	int k, bind = 1;
	int64_t to;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	for (k = 0, v = row->child; k < hd->ncol; k++, v = v->next) {
		const struct icol *c = hd->col[k];

		if (k == hd->id_col)
			continue;
		if (cJSON_IsNull(v))
			sqlite3_bind_null(st, bind);
		else if (c->parent != NULL && parent_id(hd, row, k, maps, &to))
			sqlite3_bind_int64(st, bind, to);
		else if (c->type == 'i')
			sqlite3_bind_int64(st, bind, (int64_t)v->valuedouble);
		else if (c->type == 'r')
			sqlite3_bind_double(st, bind, v->valuedouble);
		else
			sqlite3_bind_text(st, bind, v->valuestring, -1,
			    SQLITE_TRANSIENT);
		bind++;
	}
	if (sqlite3_step(st) == SQLITE_DONE)
		return 0;
	/*
	 * A row this database's constraints refuse (a UNIQUE key twice, a
	 * CHECK itables does not mirror yet) is the bundle's fault: refused,
	 * on one line (SQLite quotes a CHECK as schema.sql spells it).
	 */
	if ((sqlite3_extended_errcode(h) & 0xff) == SQLITE_CONSTRAINT)
		return so_error(err, SO_EPROTO, "rows.json: table \"%s\", row "
		    "%ld: this database refuses it: %s", t->name, rown,
		    one_line(sqlite3_errmsg(h), msg, sizeof msg));
	return so_error(err, SO_EDB, "database: cannot import table \"%s\", "
	    "row %ld: %s", t->name, rown, sqlite3_errmsg(h));
}

/*
 * The values of one UNIQUE key that verify met in a table: under each
 * distinct prefix (the key's values but its counter, its last integer
 * column) the counters met, as runs of consecutive values the way struct
 * idmap keeps ids.  A cell's samples are indexes 0..n-1 under one prefix,
 * so a million samples are a few prefixes of one run each, not a million
 * keys: verify's memory stays that of a row.
 */
struct prefix {
	char *key;			/* NULL: a free slot */
	struct idmap seen;		/* counters, each mapped to itself */
};

struct keyset {
	const char *names;		/* the key, as itables has it */
	int col[MAX_KEY_COLS];		/* its columns in the header */
	int ncol, counter;		/* how many; which one is the counter */
	struct prefix *slot;		/* open addressing, a power of 2 */
	size_t nslot, used;
	struct strbuf buf;		/* the row's prefix, reused */
};

/* Resolve key names in hd: 0, or -1 when a column of it is not there. */
static int
keyset_init(struct keyset *k, const char *names, const struct header *hd)
{
	const char *p, *e;
	int j;

	memset(k, 0, sizeof *k);
	strbuf_init(&k->buf);
	k->names = names;
	k->counter = -1;
	for (p = names; *p != '\0' && k->ncol < MAX_KEY_COLS;
	    p = *e != '\0' ? e + 1 : e) {
		e = p + strcspn(p, " ");
		for (j = 0; j < hd->ncol; j++)
			if (strlen(hd->col[j]->name) == (size_t)(e - p) &&
			    strncmp(hd->col[j]->name, p, e - p) == 0)
				break;
		/*
		 * A column the bundle leaves out is its default (NULL) in
		 * every row: NULLs are never equal, so no row repeats it.
		 */
		if (j == hd->ncol)
			return -1;
		if (hd->col[j]->type == 'i')
			k->counter = k->ncol;
		k->col[k->ncol++] = j;
	}
	return 0;
}

static void
keyset_free(struct keyset *k)
{
	size_t i;

	for (i = 0; i < k->nslot; i++) {
		free(k->slot[i].key);
		free(k->slot[i].seen.r);
	}
	free(k->slot);
	strbuf_release(&k->buf);
	memset(k, 0, sizeof *k);
}

/*
 * Append v, checked already, and a 0x01, which no checked text holds (a
 * control character): values of different columns never run together.
 * By hand, not strbuf_addf: this is every row of a million.
 */
static void
key_value(struct strbuf *sb, const cJSON *v)
{
	char digits[24], *p = digits + sizeof digits;
	int64_t n;
	uint64_t u;

	if (cJSON_IsString(v)) {
		strbuf_addstr(sb, v->valuestring);
	} else {
		n = (int64_t)v->valuedouble;
		u = n < 0 ? -(uint64_t)n : (uint64_t)n;
		do
			*--p = (char)('0' + u % 10);
		while ((u /= 10) != 0);
		if (n < 0)
			*--p = '-';
		strbuf_add(sb, p, (size_t)(digits + sizeof digits - p));
	}
	strbuf_addch(sb, 1);
}

static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of prefix key: its own, or the free one it would take. */
static struct prefix *
keyset_slot(struct prefix *slot, size_t nslot, const char *key)
{
	size_t i = (size_t)fnv1a(key) & (nslot - 1);

	while (slot[i].key != NULL && strcmp(slot[i].key, key) != 0)
		i = (i + 1) & (nslot - 1);
	return &slot[i];
}

/* The counters met under prefix key, a new set the first time. */
static struct idmap *
keyset_prefix(struct keyset *k, const char *key)
{
	struct prefix *old = k->slot, *p;
	size_t i, n = k->nslot;

	if (2 * (k->used + 1) > k->nslot) {
		k->nslot = n > 0 ? 2 * n : 16;
		k->slot = xcalloc(k->nslot, sizeof *k->slot);
		for (i = 0; i < n; i++)
			if (old[i].key != NULL)
				*keyset_slot(k->slot, k->nslot, old[i].key) =
				    old[i];
		free(old);
	}
	p = keyset_slot(k->slot, k->nslot, key);
	if (p->key == NULL) {
		p->key = xstrdup(key);
		k->used++;
	}
	return &p->seen;
}

/*
 * 0 when row's values of key k were not met before in its table (or one
 * is NULL, which SQLite never finds equal), SO_EPROTO naming them when
 * they were: import's INSERT would fail on the database's UNIQUE.
 */
static int
keyset_add(struct keyset *k, const struct itable *t, const cJSON *row,
    long rown, struct so_err *err)
{
	struct strbuf shown = STRBUF_INIT;
	const cJSON *v[MAX_KEY_COLS];
	int64_t counter = 0;
	int i, rc = 0;

	strbuf_reset(&k->buf);
	for (i = 0; i < k->ncol; i++) {
		v[i] = cJSON_GetArrayItem(row, k->col[i]);
		if (cJSON_IsNull(v[i]))
			goto out;
		if (i == k->counter)
			counter = (int64_t)v[i]->valuedouble;
		else
			key_value(&k->buf, v[i]);
	}
	if (map_add(keyset_prefix(k, k->buf.buf), counter, counter) == 0)
		goto out;
	for (i = 0; i < k->ncol; i++)
		if (cJSON_IsString(v[i]))
			strbuf_addf(&shown, "%s\"%.64s\"", i > 0 ? ", " : "",
			    v[i]->valuestring);
		else
			strbuf_addf(&shown, "%s%.17g", i > 0 ? ", " : "",
			    v[i]->valuedouble);
	rc = so_error(err, SO_EPROTO, "rows.json: table \"%s\", row %ld: "
	    "key (%s) = (%s) is there twice", t->name, rown, k->names,
	    shown.buf);
out:
	strbuf_release(&shown);
	return rc;
}

/* What walk_row needs of the table being walked. */
struct walk_table {
	sqlite3 *h;
	sqlite3_stmt *st;		/* the INSERT, NULL: only checked */
	const struct itable *t;
	const struct header *hd;
	const int64_t *runs;
	size_t nruns;
	struct idmap *maps, *map;
	struct keyset keys[MAX_KEYS];	/* verify's, of t->keys */
	int nkeys;
	struct so_err *err;
};

static int
walk_row(void *arg, const cJSON *row, long rown)
{
	struct walk_table *w = arg;
	int64_t old_id;
	int i, rc;

	if ((rc = check_types(w->t, w->hd, row, rown, w->err)) != 0)
		return rc;
	if (w->t->mode == T_CHECK)
		return 0;
	if (!reached(w->t, w->hd, row, w->runs, w->nruns, w->maps)) {
		if (w->h != NULL)
			return 0;
		return so_error(w->err, SO_EPROTO, "rows.json: table \"%s\", "
		    "row %ld belongs to none of the manifest's runs",
		    w->t->name, rown);
	}
	if (w->st != NULL && (rc = insert_row(w->h, w->st, w->t, w->hd, row,
	    rown, w->maps, w->err)) != 0)
		return rc;
	for (i = 0; i < w->nkeys; i++)
		if ((rc = keyset_add(&w->keys[i], w->t, row, rown,
		    w->err)) != 0)
			return rc;
	if (w->hd->id_col < 0)
		return 0;
	old_id = (int64_t)cJSON_GetArrayItem(row, w->hd->id_col)->valuedouble;
	if (map_add(w->map, old_id, w->st != NULL ?
	    sqlite3_last_insert_rowid(w->h) : old_id) != 0)
		return so_error(w->err, SO_EPROTO, "rows.json: table \"%s\", "
		    "row %ld: id %lld is there twice", w->t->name, rown,
		    (long long)old_id);
	return 0;
}

/*
 * The walk both db_rows_check and db_run_import take over rows.json, the
 * tables in itables' order, each read a row at a time, each row's ids
 * looked up in maps (one per table of itables: old id to new).  With h
 * NULL, a row reached from none of runs is an error; with h, such a row
 * is someone else's (another run of the same bundle) and skipped, and
 * every row reached is inserted.
 */
static int
walk(sqlite3 *h, struct rows_doc *doc, const int64_t *runs, size_t nruns,
    struct idmap *maps, struct so_err *err)
{
	size_t ti;
	int rc = 0;

	if (doc->tables != 2)
		return so_error(err, SO_EPROTO, "rows.json: no \"tables\" "
		    "object");
	if (doc->has_unknown)
		return so_error(err, SO_EPROTO, "rows.json: table \"%s\" is "
		    "never imported (only a run's own rows are)", doc->unknown);
	for (ti = 0; ti < NITABLES && rc == 0; ti++) {
		const struct itable *t = &itables[ti];
		struct walk_table w = { h, NULL, t, NULL, runs, nruns, maps,
		    &maps[ti], { { 0 } }, 0, err };
		struct header hd;
		int k;

		if (!doc->t[ti].present || t->mode == T_SKIP)
			continue;
		if ((rc = read_header(t, &doc->t[ti], &hd, err)) != 0)
			break;
		if (h != NULL && t->mode == T_WRITE &&
		    (rc = prepare_insert(h, t, &hd, &w.st, err)) != 0)
			break;
		/* Import's database holds its keys itself. */
		for (k = 0; h == NULL && k < MAX_KEYS && t->keys[k] != NULL;
		    k++)
			if (keyset_init(&w.keys[w.nkeys], t->keys[k], &hd) == 0)
				w.nkeys++;
		w.hd = &hd;
		doc->err = err;
		rc = rows_doc_each(doc, ti, walk_row, &w);
		sqlite3_finalize(w.st);
		for (k = 0; k < w.nkeys; k++)
			keyset_free(&w.keys[k]);
	}
	return rc;
}

static void
maps_free(struct idmap *maps)
{
	size_t i;

	for (i = 0; i < NITABLES; i++)
		free(maps[i].r);
}

int
db_rows_check(struct rows_doc *rows, const int64_t *runs, size_t nruns,
    struct so_err *err)
{
	struct idmap maps[NITABLES];
	int rc, vrc;

	memset(maps, 0, sizeof maps);
	rc = walk(NULL, rows, runs, nruns, maps, err);
	/* Rows the walk did not read must be JSON too, before any finding. */
	if ((vrc = rows_doc_check(rows)) != 0)
		rc = vrc;
	maps_free(maps);
	return rc;
}

/*
 * Run o->runs[i]'s rows and its imports row, in the caller's transaction:
 * 0 with new_ids[i] set, or earlier[i] 1 when this bundle's run is here
 * already.
 */
static int
import_one(sqlite3 *h, struct rows_doc *rows, const struct import_origin *o,
    size_t i, int64_t *new_ids, int *earlier, struct so_err *err)
{
	struct idmap maps[NITABLES];
	sqlite3_stmt *st = NULL;
	int64_t run;
	int rc = 0;

	memset(maps, 0, sizeof maps);
	/*
	 * Importing the same run of the same bundle twice changes nothing;
	 * a check that cannot be made is an error, not "not imported yet".
	 */
	if (sqlite3_prepare_v2(h, "SELECT run_id FROM imports WHERE "
	    "manifest_sha256 = ? AND origin_run_id = ?", -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = so_error(err, SO_EDB, "database: cannot look for an "
		    "earlier import: %s", sqlite3_errmsg(h));
		goto out;
	}
	sqlite3_bind_text(st, 1, o->manifest_sha256, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, o->runs[i]);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW:
		new_ids[i] = sqlite3_column_int64(st, 0);
		earlier[i] = 1;
		goto out;
	case SQLITE_DONE:
		break;
	default:
		rc = so_error(err, SO_EDB, "database: cannot look for an "
		    "earlier import: %s", sqlite3_errmsg(h));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = walk(h, rows, &o->runs[i], 1, maps, err)) != 0)
		goto out;
	if (!map_get(&maps[0], o->runs[i], &run)) {
		rc = so_error(err, SO_EPROTO, "rows.json: run %lld is not in "
		    "the bundle", (long long)o->runs[i]);
		goto out;
	}
	if (sqlite3_prepare_v2(h, "INSERT INTO imports (run_id, "
	    "origin_run_id, origin_coordinator, origin_db, key_fingerprint, "
	    "manifest_sha256, imported_at, signed) VALUES (?, ?, ?, ?, ?, ?, "
	    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?5 IS NOT NULL)", -1, &st,
	    NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "database: %s", sqlite3_errmsg(h));
		goto out;
	}
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, o->runs[i]);
	sqlite3_bind_text(st, 3, o->coordinator, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, o->db_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, o->key_fingerprint, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, o->manifest_sha256, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = so_error(err, SO_EDB, "database: cannot record the import: "
		    "%s", sqlite3_errmsg(h));
		goto out;
	}
	new_ids[i] = run;
out:
	sqlite3_finalize(st);
	maps_free(maps);
	return rc;
}

int
db_run_import(struct db *db, struct rows_doc *rows,
    const struct import_origin *o, const struct import_file *files,
    size_t nfiles, int64_t *new_ids, int *earlier, struct so_err *err)
{
	sqlite3 *h = db->h;
	sqlite3_stmt *st = NULL;
	int64_t cache = 0;
	size_t i;
	int rc = 0;

	memset(new_ids, 0, o->nruns * sizeof *new_ids);
	memset(earlier, 0, o->nruns * sizeof *earlier);
	/*
	 * A run of a million rows in one transaction: with SQLite's 2 MB of
	 * cache its pages spill to the WAL and are looked up there again, a
	 * third of the import's time; 32 MB keep them (restored after).
	 */
	if (sqlite3_prepare_v2(h, "PRAGMA cache_size", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		cache = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_exec(h, "PRAGMA cache_size = -32768", NULL, NULL, NULL);
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = so_error(err, SO_EDB, "database: cannot lock for import: "
		    "%s", sqlite3_errmsg(h));
		goto out;
	}
	/*
	 * One transaction for the files' rows and every run: a bundle
	 * refused at its last row leaves nothing, not its first runs, nor
	 * artifacts rows that name files of no run (the files themselves,
	 * stored before, are unrecorded ones gc removes).
	 */
	for (i = 0; i < nfiles && rc == 0; i++)
		rc = db_artifact_add(db, files[i].sha256, files[i].size, err);
	for (i = 0; i < o->nruns && rc == 0; i++)
		rc = import_one(h, rows, o, i, new_ids, earlier, err);
	if (rc == 0 && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) ==
	    SQLITE_OK)
		goto out;
	if (rc == 0)
		rc = so_error(err, SO_EDB, "database: cannot commit the "
		    "import: %s", sqlite3_errmsg(h));
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	memset(new_ids, 0, o->nruns * sizeof *new_ids);
	memset(earlier, 0, o->nruns * sizeof *earlier);
out:
	if (cache != 0) {
		char *sql = sqlite3_mprintf("PRAGMA cache_size = %lld",
		    (long long)cache);

		sqlite3_exec(h, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	return rc;
}

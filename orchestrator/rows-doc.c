/*
 * rows.json read a row at a time (rows-doc.h).  The document's outer
 * objects and each table's arrays are walked here (json-stream.c); cJSON
 * parses a row, a column name or any other value whole.  A table's rows
 * are parsed once on the way (the first reading of them checks them), so
 * checking rows.json and reading it cost one pass of cJSON, not two.  The depths below
 * are the containers around each value: the document 0, "tables" 1, a
 * table 2, its "columns" and "rows" 3, a row 4.
 */
#include "rows-doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A table's members as they are read. */
struct table_walk {
	struct rows_doc *d;
	struct rows_doc_table *t;
	int seen_columns, seen_rows;
};

static int
column(void *arg, long index, int depth)
{
	struct table_walk *w = arg;
	cJSON *v;
	int rc;

	(void)index;
	/* Only a count past the limit: read_header refuses the table. */
	if (++w->t->ncolumns > ROWS_DOC_MAX_COLUMNS)
		return js_skip(&w->d->js, depth);
	if ((rc = js_value(&w->d->js, depth, &v)) == 0)
		cJSON_AddItemToArray(w->t->columns, v);
	return rc;
}

static int
check_row(void *arg, long index, int depth)
{
	(void)index;
	return js_value(arg, depth, NULL);
}

static int
table_member(void *arg, const char *key, int depth)
{
	struct table_walk *w = arg;
	struct jstream *js = &w->d->js;
	int c, rc;

	if ((rc = js_ws(js, &c)) != 0)
		return rc;
	if (strcmp(key, "columns") == 0 && !w->seen_columns++ && c == '[') {
		w->t->ncolumns = 0;
		w->t->columns = cJSON_CreateArray();
		return js_array(js, depth, column, w);
	}
	/*
	 * The rows are only passed over here: each is parsed when it is
	 * read (rows_doc_each) or checked (rows_doc_check), not twice.
	 */
	if (strcmp(key, "rows") == 0 && !w->seen_rows++ && c == '[') {
		w->t->has_rows = 1;
		w->t->rows_at = js_tell(js);
		return js_pass(js);
	}
	return js_skip(js, depth);
}

static int
tables_member(void *arg, const char *key, int depth)
{
	struct rows_doc *d = arg;
	struct table_walk w = { d, NULL, 0, 0 };
	int i = d->table_index(key), c, rc;

	if (i < 0 && !d->has_unknown) {
		d->has_unknown = 1;
		snprintf(d->unknown, sizeof d->unknown, "%.64s", key);
	}
	if (i < 0 || d->t[i].present)
		return js_skip(&d->js, depth);
	d->t[i].present = 1;
	if ((rc = js_ws(&d->js, &c)) != 0)
		return rc;
	if (c != '{')
		return js_skip(&d->js, depth);
	d->t[i].is_object = 1;
	w.t = &d->t[i];
	return js_object(&d->js, depth, table_member, &w);
}

static int
root_member(void *arg, const char *key, int depth)
{
	struct rows_doc *d = arg;
	int c, rc;

	if (strcmp(key, "tables") != 0 || d->tables != 0)
		return js_skip(&d->js, depth);
	if ((rc = js_ws(&d->js, &c)) != 0)
		return rc;
	if (c != '{') {
		d->tables = 1;
		return js_skip(&d->js, depth);
	}
	d->tables = 2;
	return js_object(&d->js, depth, tables_member, d);
}

/* The document as cJSON_ParseWithLength takes it: what follows is left. */
static int
index_doc(struct rows_doc *d)
{
	unsigned char bom[3];
	int c, rc;

	if (d->js.len == 0)
		return JS_SYNTAX;
	if (d->js.len >= 5) {
		if (d->js.fd < 0)
			memcpy(bom, d->js.buf, 3);
		else if (pread(d->js.fd, bom, 3, (off_t)d->js.off) != 3)
			return so_error(d->err, SO_EIO, "cannot read \"%s\"",
			    d->js.name);
		if (memcmp(bom, "\xef\xbb\xbf", 3) == 0 &&
		    (rc = js_seek(&d->js, 3)) != 0)
			return rc;
	}
	if ((rc = js_ws(&d->js, &c)) != 0)
		return rc;
	if (c != '{')
		return js_skip(&d->js, 0);
	return js_object(&d->js, 0, root_member, d);
}

static int
open_doc(struct rows_doc *d, size_t ntables,
    int (*table_index)(const char *name), struct so_err *err)
{
	size_t i;
	int rc;

	d->nt = ntables;
	d->t = xcalloc(ntables, sizeof *d->t);
	for (i = 0; i < ntables; i++)
		d->t[i].ncolumns = -1;
	d->table_index = table_index;
	d->err = err;
	if ((rc = index_doc(d)) != 0)
		rows_doc_free(d);
	return rc;
}

int
rows_doc_open_fd(struct rows_doc *d, int fd, uint64_t off, uint64_t len,
    const char *name, size_t ntables, int (*table_index)(const char *name),
    struct so_err *err)
{
	memset(d, 0, sizeof *d);
	d->fd = fd;
	js_init_fd(&d->js, fd, off, len, name, err);
	return open_doc(d, ntables, table_index, err);
}

int
rows_doc_open_mem(struct rows_doc *d, const void *data, size_t len,
    const char *name, size_t ntables, int (*table_index)(const char *name),
    struct so_err *err)
{
	memset(d, 0, sizeof *d);
	d->fd = -1;
	js_init_mem(&d->js, data, len, name, err);
	return open_doc(d, ntables, table_index, err);
}

void
rows_doc_free(struct rows_doc *d)
{
	size_t i;

	for (i = 0; d->t != NULL && i < d->nt; i++)
		cJSON_Delete(d->t[i].columns);
	free(d->t);
	d->t = NULL;
	d->nt = 0;
	js_free(&d->js);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

struct each {
	struct rows_doc *d;
	int (*row)(void *arg, const cJSON *row, long rown);
	void *arg;
};

static int
each_row(void *arg, long index, int depth)
{
	struct each *e = arg;
	cJSON *row;
	int rc;

	if ((rc = js_value(&e->d->js, depth, &row)) != 0)
		return rc;
	rc = e->row(e->arg, row, index + 1);
	cJSON_Delete(row);
	return rc;
}

int
rows_doc_each(struct rows_doc *d, size_t i,
    int (*row)(void *arg, const cJSON *row, long rown), void *arg)
{
	struct each e = { d, row, arg };
	int c, rc;

	if (i >= d->nt || !d->t[i].has_rows)
		return 0;
	d->js.err = d->err;
	if ((rc = js_seek(&d->js, d->t[i].rows_at)) != 0 ||
	    (rc = js_ws(&d->js, &c)) != 0)
		return rc;
	if (c == '[')
		rc = js_array(&d->js, 3, each_row, &e);
	if (c == '[' && rc == 0)
		d->t[i].checked = 1;
	if ((c == '[' && rc != JS_SYNTAX) || !d->t[i].checked)
		return c == '[' ? rc : JS_SYNTAX;
	/* It was JSON when checked: the file changed under us. */
	return so_error(d->err, SO_EIO, "bundle: %s changed while read",
	    d->js.name);
}

int
rows_doc_check(struct rows_doc *d)
{
	size_t i;
	int c, rc;

	d->js.err = d->err;
	for (i = 0; i < d->nt; i++) {
		if (!d->t[i].has_rows || d->t[i].checked)
			continue;
		if ((rc = js_seek(&d->js, d->t[i].rows_at)) != 0 ||
		    (rc = js_ws(&d->js, &c)) != 0)
			return rc;
		if (c != '[')
			return JS_SYNTAX;
		if ((rc = js_array(&d->js, 3, check_row, &d->js)) != 0)
			return rc;
		d->t[i].checked = 1;
	}
	return 0;
}

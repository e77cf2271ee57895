/*
 * A bundle's rows.json ({"tables": {NAME: {"columns": [...], "rows":
 * [[...], ...]}}}, db_run_rows_each's shape) read without holding it:
 * rows_doc_open checks the whole document with cJSON's grammar (as
 * cJSON_ParseWithLength would) and notes where each table of the caller's
 * list is, as cJSON_GetObjectItemCaseSensitive would find it (the first
 * member of a name); rows_doc_each then gives one table's rows one at a
 * time, read again from the file.  Memory holds one row (and the columns
 * of each table), never the run.
 */
#ifndef SEQORCH_ROWS_DOC_H
#define SEQORCH_ROWS_DOC_H

#include "json-stream.h"

#include <cjson/cJSON.h>
#include <stdint.h>

#define ROWS_DOC_MAX_COLUMNS 32

struct rows_doc_table {
	int present;			/* a member of "tables" of its name */
	int is_object;			/* ... whose value is an object */
	int ncolumns;			/* its "columns" array's size, or -1 */
	cJSON *columns;			/* that array's first values, at most
					 * ROWS_DOC_MAX_COLUMNS (owned) */
	int has_rows;			/* its "rows" is an array ... */
	uint64_t rows_at;		/* ... at this offset */
};

struct rows_doc {
	struct jstream js;
	int fd;				/* owned, or -1 */
	int tables;			/* "tables": 0 absent, 1 not an object,
					 * 2 an object */
	int has_unknown;		/* a table not in the caller's list ... */
	char unknown[65];		/* ... its name, cut at 64 bytes */
	struct rows_doc_table *t;	/* by the index table_index gives */
	size_t nt;
	int (*table_index)(const char *name);
	struct so_err *err;
};

/*
 * Check and note rows.json, len bytes at off of fd (taken over: closed by
 * rows_doc_free) or in memory (kept by the caller while d is used); name
 * is for messages.  table_index maps a table's name to its slot in
 * 0..ntables-1, or -1 for a table not on the list.  0, JS_SYNTAX when the
 * document is not JSON (cJSON would not parse it), or SO_EIO.  rows_doc_free
 * in any case.
 */
int rows_doc_open_fd(struct rows_doc *d, int fd, uint64_t off, uint64_t len,
    const char *name, size_t ntables, int (*table_index)(const char *name),
    struct so_err *err);
int rows_doc_open_mem(struct rows_doc *d, const void *data, size_t len,
    const char *name, size_t ntables, int (*table_index)(const char *name),
    struct so_err *err);
void rows_doc_free(struct rows_doc *d);

/*
 * row(arg, row, rown) for each row of table slot i (has_rows), rown from
 * 1; the row is deleted after the call.  A nonzero return of row stops
 * the walk and is returned; SO_EIO if the file changed since it was
 * checked.
 */
int rows_doc_each(struct rows_doc *d, size_t i,
    int (*row)(void *arg, const cJSON *row, long rown), void *arg);

#endif

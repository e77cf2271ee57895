/*
 * A bundle's rows.json ({"tables": {NAME: {"columns": [...], "rows":
 * [[...], ...]}}}, db_run_rows_each's shape) read without holding it:
 * rows_doc_open checks the document with cJSON's grammar (as
 * cJSON_ParseWithLength would) but for the tables' rows, which it only
 * passes over, and notes where each table of the caller's list is, as
 * cJSON_GetObjectItemCaseSensitive would find it (the first member of a
 * name); rows_doc_each then gives one table's rows one at a time, read
 * again from the file and checked as they are parsed, and rows_doc_check
 * checks whatever rows no rows_doc_each has read whole.  The document is
 * JSON when both rows_doc_open and rows_doc_check say so; a caller that
 * reports what it found in the rows checks that first.  Memory holds one
 * row (and the columns of each table), never the run.
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
	int checked;			/* ... whose rows were all parsed */
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
 * document is not JSON (cJSON would not parse it; its rows are checked
 * later), or SO_EIO.  rows_doc_free in any case.
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
 * the walk and is returned; JS_SYNTAX when the rows are not JSON, SO_EIO
 * when the file changed since they were checked.
 */
int rows_doc_each(struct rows_doc *d, size_t i,
    int (*row)(void *arg, const cJSON *row, long rown), void *arg);
/* Check the rows not yet parsed whole: 0, JS_SYNTAX or SO_EIO. */
int rows_doc_check(struct rows_doc *d);

#endif

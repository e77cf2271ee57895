/*
 * libFuzzer target: rows.json import (orchestrator/db-rows.c).  The input
 * is a bundle's rows.json, read as verify reads it: from a file, a value at
 * a time (rows-doc.c, here through windows of 16 bytes, so that values
 * cross a window's end); it traps unless that takes exactly what
 * cJSON_ParseWithLength takes of the whole.  Then it goes through
 * db_rows_check for manifest run
 * 1, as verify does, and when that accepts it through db_run_import into
 * a real results.db (in a new directory under the current one, which
 * `make fuzz` makes build-fuzz/), as import does; one artifact is stored
 * there already, so that rows naming it can go in.  Beyond memory errors
 * it traps when an import wrote anything but its own run: a run without
 * its imports row, a row in refs, leases, lease_events or hosts, or an
 * artifact name that is not a sha256, or a control character stored in
 * a name or (but for newlines and tabs) an event's message (looked up
 * through a second, read-only connection).
 */
#include "db.h"
#include "rows-doc.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct db *db;
static sqlite3 *look;		/* a second connection, to check db's rows */

static int64_t
count(const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	if (sqlite3_prepare_v2(look, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (n < 0)
		__builtin_trap();
	return n;
}

static void
open_db(void)
{
	char dir[] = "rows-db.XXXXXX", *path;
	struct so_err err;

	if (mkdtemp(dir) == NULL)
		abort();
	path = xasprintf("%s/results.db", dir);
	if (db_open(path, &db, &err) != 0) {
		fprintf(stderr, "fuzz_rows: %s\n", err.msg);
		abort();
	}
	if (sqlite3_open_v2(path, &look, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		abort();
	free(path);
	/* The empty file's: a bundle's artifact_refs may name it. */
	if (db_artifact_add(db, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b"
	    "934ca495991b7852b855", 0, &err) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long long serial;
	static const int64_t runs[] = { 1 };
	struct import_origin o = {
		.runs = runs,
		.nruns = 1,
		.coordinator = "fuzz pid 1",
		.db_path = "fuzz.db",
		.key_fingerprint = "00",
	};
	struct so_err err;
	struct rows_doc rows;
	char manifest[65];
	int64_t before, id;
	cJSON *whole;
	int fd, rc, earlier;

	if (db == NULL) {
		open_db();
		js_set_window(16);
	}
	if ((fd = memfd_create("rows.json", 0)) < 0 ||
	    (size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();
	whole = cJSON_ParseWithLength((const char *)data, size);
	/* Not JSON: the open says so, or the check of the rows after it. */
	if ((rc = db_rows_open_fd(&rows, fd, 0, size, "rows.json",
	    &err)) == 0)
		rc = db_rows_check(&rows, runs, 1, &err);
	if ((rc == JS_SYNTAX) != (whole == NULL))
		__builtin_trap();
	cJSON_Delete(whole);
	if (rc != 0) {
		if (rc != JS_SYNTAX &&
		    memchr(err.msg, '\0', sizeof err.msg) == NULL)
			__builtin_trap();
		rows_doc_free(&rows);
		return 0;
	}
	/* Each input is a new bundle: never "already here". */
	snprintf(manifest, sizeof manifest, "%064llx", ++serial);
	o.manifest_sha256 = manifest;
	before = count("SELECT count(*) FROM runs");
	rc = db_run_import(db, &rows, &o, NULL, 0, &id, &earlier, &err);
	if (count("SELECT count(*) FROM runs") != before + (rc == 0))
		__builtin_trap();
	if (count("SELECT count(*) FROM runs WHERE id NOT IN (SELECT run_id "
	    "FROM imports)") != 0 ||
	    count("SELECT (SELECT count(*) FROM refs) + (SELECT count(*) FROM "
	    "leases) + (SELECT count(*) FROM lease_events) + (SELECT count(*) "
	    "FROM hosts)") != 0 ||
	    count("SELECT count(*) FROM artifact_refs WHERE length(sha256) != "
	    "64 OR sha256 GLOB '*[^0-9a-f]*'") != 0 ||
	    count("SELECT (SELECT count(*) FROM run_hosts WHERE host GLOB "
	    "'*[' || char(1) || '-' || char(31) || char(127) || ']*') + "
	    "(SELECT count(*) FROM samples WHERE host || variant GLOB "
	    "'*[' || char(1) || '-' || char(31) || char(127) || ']*') + "
	    "(SELECT count(*) FROM events WHERE message GLOB '*[' || char(1) "
	    "|| '-' || char(8) || char(11) || '-' || char(31) || char(127) || "
	    "']*')") != 0)
		__builtin_trap();
	rows_doc_free(&rows);
	return 0;
}

/*
 * What an import accepts of a bundle's rows.json (db-rows.c's
 * db_rows_check) and which artifact names are names (artifact.c): the
 * forms of issue 20's hostile bundles, each refused with its table, row
 * and column named, beside a small run that passes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact.h"
#include "db.h"
#include "rows-doc.h"
#include "strbuf.h"

#include <unistd.h>

#define SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/*
 * A run 1 with a build, a sample and an artifact; %s is spliced in.  Each
 * table has every column schema.sql needs a value for (NOT NULL without
 * a DEFAULT); a runs row is [ID, "sha3", 300 RUN_REST].
 */
#define RUN_REST \
    ", \"t\", \"ok\", 1, \"c\", \"5eed\", \"h\", \"co\", \"v\""
static const char run_fmt[] =
    "{\"tables\": {"
    "\"runs\": {\"columns\": [\"id\", \"study\", \"steps\", \"started_at\","
    " \"status\", \"samples_per_variant\", \"command\", \"seed\", \"hosts\","
    " \"coordinator\", \"version\"],"
    " \"rows\": [[1, \"sha3\", 300" RUN_REST "]%s]},"
    "\"builds\": {\"columns\": [\"id\", \"run_id\", \"host\", \"compiler\","
    " \"cflags\", \"status\", \"created_at\"],"
    " \"rows\": [[4, 1, \"local\", \"cc\", \"-O2\", \"ok\", \"t\"]]},"
    "\"samples\": {\"columns\": [\"id\", \"run_id\", \"build_id\", \"ns\","
    " \"valid\", \"calib_mhz\", \"host\", \"study\", \"variant\","
    " \"sample_index\", \"position\", \"steps\", \"digest\", \"seed\","
    " \"received_at\"],"
    " \"rows\": [[9, %s, 4, %s, 1, 3600, \"local\", \"sha3\", \"c\", 0, 0,"
    " 300, \"d\", \"5eed\", \"t\"]]},"
    "\"artifacts\": {\"columns\": [\"sha256\", \"size\", \"stored_at\"],"
    " \"rows\": [[\"%s\", 0, \"t\"]]},"
    "\"refs\": {\"columns\": [\"digest\"], \"rows\": [[\"anything\"]]}%s"
    "}}";

struct variant {
	const char *extra_run, *run_id, *ns, *sha, *extra_table;
};

/*
 * text opened as verify opens rows.json: from a file, through a window of
 * window bytes (0: the default), so that small ones make every value cross
 * the window's end.
 */
static int
open_text(struct rows_doc *d, const char *text, size_t window,
    struct so_err *err)
{
	FILE *f = tmpfile();
	int fd;

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fflush(f), 0);
	assert_true((fd = dup(fileno(f))) >= 0);
	fclose(f);
	js_set_window(window);
	return db_rows_open_fd(d, fd, 0, strlen(text), "rows.json", err);
}

static int
check(const struct variant *v, const int64_t *runs, size_t nruns,
    struct so_err *err)
{
	struct rows_doc d;
	char buf[2048];
	int rc;

	snprintf(buf, sizeof buf, run_fmt, v->extra_run, v->run_id, v->ns,
	    v->sha, v->extra_table);
	assert_int_equal(open_text(&d, buf, 7, err), 0);
	rc = db_rows_check(&d, runs, nruns, err);
	rows_doc_free(&d);
	return rc;
}

static const int64_t run1[] = { 1 };

static void
test_a_run_passes(void **state)
{
	struct variant v = { "", "1", "1000", SHA, "" };
	struct so_err err = { 0 };

	(void)state;
	assert_int_equal(check(&v, run1, 1, &err), 0);
}

static void
test_types(void **state)
{
	struct variant v = { "", "\"1\"", "1000", SHA, "" };
	struct so_err err = { 0 };

	(void)state;
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"samples\", row 1, "
	    "column \"run_id\": expected an integer, not a string");
	v.run_id = "1";
	v.ns = "1.5";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "column \"ns\": expected an integer, "
	    "not a number"));
	/* Infinity is no integer (and never cast to one). */
	v.ns = "1e999";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "column \"ns\": expected an integer"));
	v.ns = "null";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "expected a value, not null"));
}

static void
test_artifact_names(void **state)
{
	struct variant v = { "", "1", "1000", "../results.db", "" };
	struct so_err err = { 0 };
	char upper[] = SHA;

	(void)state;
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"artifacts\", row 1, "
	    "column \"sha256\": expected a sha256 (64 lowercase hex digits), "
	    "not a string");
	assert_true(artifact_name_ok(SHA));
	assert_false(artifact_name_ok(SHA "0"));
	assert_false(artifact_name_ok(SHA + 1));
	assert_false(artifact_name_ok(""));
	assert_false(artifact_name_ok(NULL));
	upper[10] = 'A';
	assert_false(artifact_name_ok(upper));
	upper[10] = '/';
	assert_false(artifact_name_ok(upper));
}

static void
test_only_the_runs_own_rows(void **state)
{
	struct variant v = { ", [2, \"sha3\", 300" RUN_REST "]", "1", "1000",
	    SHA, "" };
	struct so_err err = { 0 };
	static const int64_t both[] = { 1, 2 }, three[] = { 1, 2, 3 };

	(void)state;
	/* A run the manifest does not list. */
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"runs\", row 2 "
	    "belongs to none of the manifest's runs");
	assert_int_equal(check(&v, both, 2, &err), 0);
	/* A sample of a run that is not the bundle's. */
	v.extra_run = "";
	v.run_id = "7";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"samples\", row 1 "
	    "belongs to none of the manifest's runs");
	/* The same id twice. */
	v.extra_run = ", [1, \"sha3\", 300" RUN_REST "]";
	v.run_id = "1";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"runs\", row 2: id 1 "
	    "is there twice");
	/*
	 * ... when it is not the table's last row: before issue 29 the next
	 * row's checks overwrote the refusal.
	 */
	v.extra_run = ", [1, \"sha3\", 300" RUN_REST "], "
	    "[2, \"sha3\", 300" RUN_REST "]";
	assert_int_equal(check(&v, both, 2, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"runs\", row 2: id 1 "
	    "is there twice");
	/* Out of order (the map keeps runs of ids), then 3 again. */
	v.extra_run = ", [3, \"sha3\", 300" RUN_REST "], "
	    "[2, \"sha3\", 300" RUN_REST "]";
	assert_int_equal(check(&v, three, 3, &err), 0);
	v.extra_run = ", [3, \"sha3\", 300" RUN_REST "], "
	    "[2, \"sha3\", 300" RUN_REST "], [3, \"sha3\", 300" RUN_REST "]";
	assert_int_equal(check(&v, three, 3, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"runs\", row 4: id 3 "
	    "is there twice");
}

/*
 * Control characters from a bundle never reach a terminal: a name (host,
 * variant, compiler...) holding any is refused, naming the byte; free text
 * (build logs, event messages) keeps newlines and tabs and nothing else.
 * Before issue 29 an ESC in a crafted host name was imported and printed
 * raw by the paired ratios, `windows`, CSV and Markdown.
 */
static void
test_control_characters(void **state)
{
	struct variant v = { "", "1", "1000", SHA, "" };
	struct so_err err = { 0 };
	char extra[256];

	(void)state;
	v.extra_table = ", \"events\": {\"columns\": [\"id\", \"run_id\", "
	    "\"host\", \"at\", \"level\", \"message\"], \"rows\": [[3, 1, "
	    "\"lo\\u001b[2Jcal\", \"t\", \"info\", \"m\"]]}";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"events\", row 1, "
	    "column \"host\": control character 0x1b at byte 2");
	/* A newline in a name is refused too: it would forge a line. */
	v.extra_table = ", \"events\": {\"columns\": [\"id\", \"run_id\", "
	    "\"host\", \"at\", \"level\", \"message\"], \"rows\": [[3, 1, "
	    "\"local\\n\", \"t\", \"info\", \"m\"]]}";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "control character 0x0a at byte 5"));
	/* A build log's newlines and tabs are what it is. */
	snprintf(extra, sizeof extra, ", \"events\": {\"columns\": [\"id\", "
	    "\"run_id\", \"host\", \"at\", \"level\", \"message\"], "
	    "\"rows\": [[3, 1, \"local\", \"t\", \"warning\", \"%s\"]]}",
	    "a.c:1: warning\\n\\tint x;");
	v.extra_table = extra;
	assert_int_equal(check(&v, run1, 1, &err), 0);
	snprintf(extra, sizeof extra, ", \"events\": {\"columns\": [\"id\", "
	    "\"run_id\", \"host\", \"at\", \"level\", \"message\"], "
	    "\"rows\": [[3, 1, \"local\", \"t\", \"warning\", \"%s\"]]}",
	    "\\u001b]0;owned\\u0007");
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"events\", row 1, "
	    "column \"message\": control character 0x1b at byte 0");
}

/*
 * An import whose check for an earlier import of the same bundle cannot be
 * made (here the imports table is gone) fails on that check, with nothing
 * written, rather than going on as if the bundle were new.
 */
static void
test_import_check_unmade(void **state)
{
	char dir[] = "/tmp/seqorch-test-rows.XXXXXX", *path, *cmd, buf[2048];
	struct variant v = { "", "1", "1000", SHA, "" };
	static const int64_t runs[] = { 1 };
	struct import_origin o = { .runs = runs, .nruns = 1,
	    .coordinator = "c", .db_path = "d.db", .key_fingerprint = "00",
	    .manifest_sha256 = SHA };
	struct so_err err;
	struct rows_doc rows;
	struct db *db;
	sqlite3_stmt *st;
	int64_t id;
	int earlier;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/results.db", dir);
	assert_int_equal(db_open(path, &db, &err), 0);
	assert_int_equal(db_artifact_add(db, SHA, 0, &err), 0);
	assert_int_equal(sqlite3_exec(db_handle(db), "DROP TABLE imports",
	    NULL, NULL, NULL), SQLITE_OK);
	snprintf(buf, sizeof buf, run_fmt, v.extra_run, v.run_id, v.ns, v.sha,
	    v.extra_table);
	assert_int_equal(open_text(&rows, buf, 0, &err), 0);
	assert_int_equal(db_run_import(db, &rows, &o, NULL, 0, &id, &earlier,
	    &err), SO_EDB);
	assert_string_equal(err.msg, "database: cannot look for an earlier "
	    "import: no such table: imports");
	assert_int_equal(sqlite3_prepare_v2(db_handle(db), "SELECT count(*) "
	    "FROM runs", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0), 0);
	sqlite3_finalize(st);
	rows_doc_free(&rows);
	db_close(db);
	cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
}

static void
test_tables_never_imported(void **state)
{
	static const char *const tables[] = { "leases", "imports", "hosts",
	    "lease_events", "sqlite_master" };
	struct variant v = { "", "1", "1000", SHA, "" };
	struct so_err err = { 0 };
	char extra[128], want[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		snprintf(extra, sizeof extra, ", \"%s\": {\"columns\": [], "
		    "\"rows\": []}", tables[i]);
		v.extra_table = extra;
		assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
		snprintf(want, sizeof want, "rows.json: table \"%s\" is never "
		    "imported", tables[i]);
		assert_non_null(strstr(err.msg, want));
	}
	/* A column import does not know. */
	v.extra_table = ", \"events\": {\"columns\": [\"id\", \"run_id\", "
	    "\"rowid\"], \"rows\": []}";
	assert_int_equal(check(&v, run1, 1, &err), SO_EPROTO);
	assert_string_equal(err.msg, "rows.json: table \"events\": column 3 "
	    "\"rowid\" is unknown to this seqorch");
}

/*
 * Is text JSON, as verify finds out: opened through windows of window
 * bytes, then its rows checked alone (rows_doc_check) or as db_rows_check
 * reads them (when walk is 1: JS_SYNTAX is its "not JSON").
 */
static int
is_json(const char *text, size_t window, int walk)
{
	static const int64_t run[] = { 1 };
	struct so_err err;
	struct rows_doc d;
	int rc;

	if ((rc = open_text(&d, text, window, &err)) == 0)
		rc = walk ? db_rows_check(&d, run, 1, &err) :
		    rows_doc_check(&d);
	rows_doc_free(&d);
	assert_true(rc <= 0 || rc == JS_SYNTAX);
	return rc != JS_SYNTAX;
}

/*
 * rows.json is read a value at a time (json-stream.c), yet takes what
 * cJSON takes of the whole document and nothing else: each of these is
 * opened through windows of 1 to 40 bytes and must be accepted exactly
 * when cJSON_ParseWithLength accepts it.
 */
static void
test_stream_is_cjson(void **state)
{
	static const char *const docs[] = {
		"{\"tables\": {}}", "{\"tables\": {}} trailing bytes",
		"\xef\xbb\xbf{\"tables\": {}}", "{\"tables\": \xef\xbb\xbf{}}",
		"{\"tables\": {\"runs\": {\"columns\": [\"id\"], \"rows\": "
		"[[1e5], [12345678901234567890], [-0.5e-3], [1.], [\"a\\\"b\"]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[1e], [2]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[1 2]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[nul]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[null, true, false]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[\"\\u00e9\\ud83d\\ude00\"]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[\"\\x\"]]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[1],]}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[1]]}, }}",
		"{\"tables\": {\"runs\": {\"rows\": [[1]]}}",
		"{\"a\": [1, {\"b\": [2, 3]}], \"tables\": []}",
		"{\"tables\" {}}", "{1: 2}", "[1, 2]", "\"tables\"", "  ", "",
		"{\"tables\": {\"runs\": {\"rows\": [[1]], \"rows\": 5}}}",
		"{\"tables\": {\"runs\": {\"rows\": [[1]]}}}\x01\x02",
		"{\"tables\":\x01{\"runs\":\x1f{}}}",
		/* A finding in a row, then a row that is not JSON. */
		"{\"tables\": {\"runs\": {\"columns\": [\"id\"], \"rows\": "
		"[[\"x\"], [1 2]]}}}",
		"{\"tables\": {\"runs\": {\"columns\": [\"id\"], \"rows\": "
		"[[\"x\"], [\"[\\\"]\"]]}}}",
		"{\"tables\": {\"refs\": {\"columns\": [], \"rows\": [[1 2]]},"
		" \"runs\": {\"columns\": [\"id\"], \"rows\": [[1]]}}}",
		"{\"tables\": {\"runs\": {\"columns\": [\"id\"], \"rows\": "
		"[[1]], \"rows\": [[1 2]]}}}",
		"{\"tables\": {\"runs\": {\"columns\": [\"id\"], \"rows\": "
		"[[1, \"]\"], [2]]}}}",
	};
	char *deep;
	size_t i, w, n;
	cJSON *j;

	(void)state;
	for (i = 0; i < sizeof docs / sizeof docs[0]; i++)
		for (w = 1; w <= 40; w++) {
			if (strlen(docs[i]) == 0)
				continue;
			j = cJSON_ParseWithLength(docs[i], strlen(docs[i]));
			assert_int_equal(is_json(docs[i], w, 0), j != NULL);
			assert_int_equal(is_json(docs[i], w, 1), j != NULL);
			cJSON_Delete(j);
		}
	/* cJSON's nesting limit holds of the whole document. */
	for (n = 990; n <= 1000; n += 5) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "{\"tables\": {\"runs\": {\"rows\": [");
		for (i = 0; i < n; i++)
			strbuf_addch(&sb, '[');
		for (i = 0; i < n; i++)
			strbuf_addch(&sb, ']');
		strbuf_addstr(&sb, "]}}}");
		deep = sb.buf;
		j = cJSON_ParseWithLength(deep, strlen(deep));
		assert_int_equal(is_json(deep, 64, 0), j != NULL);
		assert_int_equal(is_json(deep, 64, 1), j != NULL);
		cJSON_Delete(j);
		strbuf_release(&sb);
	}
	js_set_window(0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_run_passes),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_artifact_names),
		cmocka_unit_test(test_only_the_runs_own_rows),
		cmocka_unit_test(test_tables_never_imported),
		cmocka_unit_test(test_control_characters),
		cmocka_unit_test(test_import_check_unmade),
		cmocka_unit_test(test_stream_is_cjson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

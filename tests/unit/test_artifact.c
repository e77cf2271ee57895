/*
 * The artifact store's gc (artifact.c over db-artifacts.c): a file goes
 * only once the transaction that forgets its row has committed.  Before
 * issue 29 gc unlinked inside the transaction, so a commit that failed
 * left rows naming deleted files.  A commit hook makes the COMMIT fail.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact.h"
#include "db.h"
#include "util.h"
#include "unit-tmp.h"

static char tmpdir[] = "/tmp/seqorch-test-artifact.XXXXXX";
static struct db *db;

static int
setup(void **state)
{
	(void)state;
	return unit_db_open(tmpdir, &db);
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	unit_rmtree(tmpdir);
	return 0;
}

static int
refuse_commit(void *arg)
{
	(void)arg;
	return 1;		/* non-zero: the COMMIT becomes a ROLLBACK */
}

static void
test_gc_unlinks_after_commit(void **state)
{
	char sha[65], *path;
	uint64_t n, bytes;
	struct so_err err;
	FILE *out = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(out);
	assert_int_equal(artifact_put(db, "orphan", 6, sha, &err), 0);
	assert_int_equal(db_artifact_add(db, sha, 6, &err), 0);
	path = artifact_path(db, sha);
	assert_int_equal(access(path, F_OK), 0);

	sqlite3_commit_hook(db_handle(db), refuse_commit, NULL);
	assert_int_not_equal(artifact_gc(db, 0, out, &n, &bytes, &err), 0);
	sqlite3_commit_hook(db_handle(db), NULL, NULL);
	assert_non_null(strstr(err.msg, "cannot collect artifacts"));
	/* The row is still there, and so is the file it names. */
	assert_int_equal(db_artifact_have(db, sha, &err), 1);
	assert_int_equal(access(path, F_OK), 0);

	/* Committed, both go. */
	assert_int_equal(artifact_gc(db, 0, out, &n, &bytes, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(bytes, 6);
	assert_int_equal(db_artifact_have(db, sha, &err), 0);
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	fclose(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gc_unlinks_after_commit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

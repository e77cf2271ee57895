/*
 * What the cmocka tests of the db, bundle and fetch modules share: a
 * private temporary directory (a mkdtemp template the test owns) and a
 * results.db made in it with db_open.  Header-only: each test binary
 * links its own modules (the Makefile's UNIT_* lists), not a test library.
 */
#ifndef SEQORCH_UNIT_TMP_H
#define SEQORCH_UNIT_TMP_H

#include <stdio.h>
#include <stdlib.h>

#include "util.h"

/* Remove dir and all below it; a failure is said, not fatal. */
static inline void
unit_rmtree(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(cmd);
}

#ifdef SEQORCH_DB_H
/* mkdtemp(tmpl), then DIR/results.db opened into *db: 0, or -1 said. */
static inline int
unit_db_open(char *tmpl, struct db **db)
{
	struct so_err err;
	char *path;
	int rc = 0;

	if (mkdtemp(tmpl) == NULL)
		return -1;
	path = xasprintf("%s/results.db", tmpl);
	if (db_open(path, db, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		rc = -1;
	}
	free(path);
	return rc;
}
#endif

#endif

/*
 * seqorch gc: remove from the artifact store what no run names any more.
 */
#include "artifact.h"
#include "cmd.h"
#include "db.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int
gc_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *path = "results.db";
	struct so_err err = { 0 };
	struct db *db = NULL;
	uint64_t n = 0, bytes = 0;
	int c, done, rc, dry_run = 0;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case 'd': path = optarg; break;
		case 'n': dry_run = 1; break;
		}
	}
	if (done >= 0)
		return done;
	if (cmd_open_existing_db_rw(path, &db) != EXIT_OK)
		return EXIT_DB;
	rc = artifact_gc(db, dry_run, stdout, &n, &bytes, &err);
	db_close(db);
	if (rc != 0) {
		cmd_error(err.msg);
		return EXIT_DB;
	}
	fprintf(stderr, "seqorch: %s %llu artifact%s, %llu bytes\n",
	    dry_run ? "would remove" : "removed", (unsigned long long)n,
	    n == 1 ? "" : "s", (unsigned long long)bytes);
	return EXIT_OK;
}

const struct cmd_entry cmd_gc_entry = {
	.name = "gc",
	.summary = "remove artifacts no run names",
	.usage =
	    "usage: seqorch gc [--dry-run] [--db results.db]\n"
	    "\n"
	    "Removes from the artifact store beside the database every artifact\n"
	    "that no run names (none is, as long as its run's rows exist), and\n"
	    "files that were never recorded and are over ten minutes old (left\n"
	    "by a coordinator killed while storing).  Every database in that\n"
	    "directory shares the store: what any of them records or names\n"
	    "stays, and if one of them cannot be read (locked, damaged) nothing\n"
	    "is removed.  It holds the store's lock (artifacts/.lock) from its\n"
	    "first read to its last removal: a run or an import storing into\n"
	    "the store waits for it, and it waits for them, up to 60 s (then it\n"
	    "removes nothing).  A lock file it cannot open, or a store it\n"
	    "cannot write while a file is to go, also stops it before it\n"
	    "changes anything.  Prints each, sha256 and size.  --dry-run only\n"
	    "prints, and takes no lock.\n",
	.notes =
	    "exit: 0 done, 2 usage, 3 the database, or one beside it, cannot be\n"
	    "      read or changed; the store stayed in use, its lock cannot\n"
	    "      be opened, or a file in it cannot be removed\n",
	.opts = (const struct cmd_opt[]){
		{ "dry-run", 'n', 0, NULL, "print what would be removed, "
		    "remove nothing", CMD_VALUE_ANY, NULL },
		CMD_OPT_DB("FILE"),
		CMD_OPT_END,
	},
	.optcol = 14,
	.exec = gc_exec,
};

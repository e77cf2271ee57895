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
gc_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "results.db";
	struct so_err err = { 0 };
	struct db *db = NULL;
	uint64_t n = 0, bytes = 0;
	int c, done, rc, dry_run = 0;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, "", longopts, &done)) != -1) {
		switch (c) {
		case 'd': path = optarg; break;
		case 'n': dry_run = 1; break;
		}
	}
	if (done >= 0)
		return done;
	if (cmd_extra_args(argc, argv) != 0)
		return EXIT_USAGE;
	if (cmd_open_existing_db_rw(path, &db) != EXIT_OK)
		return EXIT_DB;
	rc = artifact_gc(db, dry_run, stdout, &n, &bytes, &err);
	db_close(db);
	if (rc != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
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
	    "by a coordinator killed while storing).  Prints each, sha256 and\n"
	    "size.  --dry-run only prints.\n",
	.exec = gc_exec,
};

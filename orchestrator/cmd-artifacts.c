/*
 * seqorch artifacts: what a run keeps in the artifact store beside
 * results.db (raw agent output, binaries, disassembly, build logs and
 * commands, sources), one line each, with the file's path.
 */
#include "artifact.h"
#include "cmd.h"
#include "db.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct list_state {
	struct db *db;
	int verify;
	unsigned bad;
	uint64_t n, bytes;
	int wh, wk, wn;		/* the widest host, kind and name */
};

/* The first pass: columns as wide as their widest value, as ls -l. */
static int
measure_one(void *arg, const struct artifact_row *r)
{
	struct list_state *ls = arg;
	int n;

	if ((n = (int)strlen(r->host)) > ls->wh)
		ls->wh = n;
	if ((n = (int)strlen(r->kind)) > ls->wk)
		ls->wk = n;
	if ((n = (int)strlen(r->name)) > ls->wn)
		ls->wn = n;
	return 0;
}

static int
print_one(void *arg, const struct artifact_row *r)
{
	struct list_state *ls = arg;
	char *path, *data = NULL;
	const char *state = "";
	struct so_err err;
	size_t len;

	/* Never a path from a name that is not a sha256 ("../results.db"). */
	if (!artifact_name_ok(r->sha256)) {
		fprintf(stderr, "seqorch: run names artifact \"%.80s\", which "
		    "is not a sha256\n", r->sha256);
		ls->bad++;
		ls->n++;
		return 0;
	}
	path = artifact_path(ls->db, r->sha256);
	if (ls->verify) {
		state = artifact_load(ls->db, r->sha256, &data, &len, &err) == 0 ?
		    "  ok" : "  BAD";
		if (data == NULL) {
			ls->bad++;
			cmd_error(err.msg);
		}
		free(data);
	}
	if (ls->n == 0)
		printf("%-*s %-*s %6s  %-*s %10s  %s%s\n", ls->wh, "host",
		    ls->wk, "kind", "build", ls->wn, "name", "bytes", "path",
		    ls->verify ? "  check" : "");
	printf("%-*s %-*s %6lld  %-*s %10lld  %s%s\n", ls->wh, r->host,
	    ls->wk, r->kind, (long long)r->build_id, ls->wn, r->name,
	    (long long)r->size, path, state);
	ls->n++;
	ls->bytes += (uint64_t)r->size;
	free(path);
	return 0;
}

static int
artifacts_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *path = "results.db";
	struct list_state ls = { 0 };
	struct so_err err = { 0 };
	struct db *db = NULL;
	int64_t run_id = 0;
	int c, done, rc;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case 'r':
			if (cmd_run_id_arg("--run", optarg, &run_id) != 0)
				return EXIT_USAGE;
			break;
		case 'd': path = optarg; break;
		case 'v': ls.verify = 1; break;
		}
	}
	if (done >= 0)
		return done;
	if (run_id == 0) {
		fprintf(stderr, "seqorch: artifacts: --run is required\n");
		return EXIT_USAGE;
	}
	if (cmd_open_existing_db(path, &db) != EXIT_OK)
		return EXIT_DB;
	ls.db = db;
	/* At least as wide as the headers (and as the columns were). */
	ls.wh = 10;
	ls.wk = 14;
	ls.wn = 28;
	if ((rc = db_artifact_list(db, run_id, measure_one, &ls, &err)) == 0)
		rc = db_artifact_list(db, run_id, print_one, &ls, &err);
	db_close(db);
	if (rc != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	if (ls.n == 0)
		fprintf(stderr, "seqorch: run %lld keeps no artifacts (it "
		    "predates the artifact store)\n", (long long)run_id);
	else
		printf("total: %llu artifact%s, %llu bytes%s\n",
		    (unsigned long long)ls.n, ls.n == 1 ? "" : "s",
		    (unsigned long long)ls.bytes, !ls.verify ? "" :
		    ls.bad > 0 ? ", some BAD" : ", all ok");
	return ls.bad > 0 ? EXIT_FAIL : EXIT_OK;
}

const struct cmd_entry cmd_artifacts_entry = {
	.name = "artifacts",
	.summary = "list the artifacts a run keeps",
	.usage =
	    "usage: seqorch artifacts --run ID [--verify] [--db results.db]\n"
	    "\n"
	    "Lists what run ID keeps in the artifact store beside the database\n"
	    "(artifacts/<sha256>): per host and build, the raw agent output,\n"
	    "the binary fetched back from the host, its disassembly, the build\n"
	    "log and commands, and every uploaded source file.  Columns: host,\n"
	    "kind, build id, name, bytes, path.  --verify rehashes each file.\n",
	.notes =
	    "exit: 0 listed, 1 a file is missing or changed (--verify) or a\n"
	    "      name is not a sha256, 2 usage or no such run, 3 database\n",
	.opts = (const struct cmd_opt[]){
		{ "run", 'r', 0, "ID", "the run whose artifacts to list "
		    "(required)", CMD_VALUE_RUN, NULL },
		{ "verify", 'v', 0, NULL, "rehash each file and say which is "
		    "missing or changed", CMD_VALUE_ANY, NULL },
		CMD_OPT_DB("FILE"),
		CMD_OPT_END,
	},
	.optcol = 14,
	.exec = artifacts_exec,
};

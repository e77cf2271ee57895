/*
 * seqorch export: one run's summary.json or its hyperfine --export-json
 * shape (export.c builds both) to stdout or a file.
 * docs/summary.schema.json is summary.json's schema.
 */
#include "bundle.h"
#include "cmd.h"
#include "db.h"
#include "report-opts.h"
#include "export.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --format: the documents export writes. */
static const struct export_format {
	const char	*name;
	int		(*build)(sqlite3 *db, int64_t run_id, const char *db_path,
			    cJSON **out, struct so_err *err);
} formats[] = {
	{ "summary", export_summary },
	{ "hyperfine", export_hyperfine },
	{ NULL, NULL },
};

/* Write text to path through a temporary file, so a reader never sees half. */
static int
write_output(const char *path, const char *text)
{
	struct so_err err = { 0, "" };
	char *doc = xasprintf("%s\n", text);
	int rc;

	rc = write_file_atomic(path, doc, strlen(doc), 0644, &err);
	if (rc != 0)
		cmd_error(err.msg);
	free(doc);
	return rc;
}

static int
export_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *db_path = "results.db", *output = NULL, *bundle = NULL;
	const char *key = NULL;
	const struct export_format *format = &formats[0];
	const void *found;
	struct so_err err = { 0, "" };
	struct db *db = NULL;
	cJSON *doc = NULL;
	int64_t run_id = 0;
	char *text;
	int ch, done, ret;

	optind = 1;
	while ((ch = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (ch) {
		case 'r':
			if (cmd_run_id_arg("--run", optarg, &run_id) != 0)
				return EXIT_USAGE;
			break;
		case 'd':
			db_path = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'b':
			bundle = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'f':
			if (report_opt_choice("--format", optarg, formats,
			    sizeof *formats, &found) != 0)
				return EXIT_USAGE;
			format = found;
			break;
		}
	}
	if (done >= 0)
		return done;
	/* -o - is standard output, as curl and git take it. */
	if (output != NULL && strcmp(output, "-") == 0)
		output = NULL;
	if (run_id == 0) {
		fprintf(stderr, "seqorch: export needs \"--run ID\"\n");
		return EXIT_USAGE;
	}
	if (key != NULL && bundle == NULL) {
		fprintf(stderr, "seqorch: \"--sign\" goes with \"--bundle\"\n");
		return EXIT_USAGE;
	}
	if (bundle != NULL && format != &formats[0]) {
		fprintf(stderr, "seqorch: \"--bundle\" holds summary.json, "
		    "not \"--format %s\"\n", format->name);
		return EXIT_USAGE;
	}
	if (bundle != NULL && output != NULL) {
		fprintf(stderr, "seqorch: \"--bundle\" and \"--output\" exclude "
		    "each other (the bundle holds summary.json)\n");
		return EXIT_USAGE;
	}
	if (cmd_open_existing_db(db_path, &db) != EXIT_OK)
		return EXIT_DB;
	ret = format->build(db_handle(db), run_id, db_path, &doc, &err);
	if (ret == 0 && bundle != NULL) {
		/* The bundle takes the summary over. */
		int output_failed = 0;

		ret = bundle_write(db, run_id, doc, key, bundle, &output_failed,
		    &err);
		db_close(db);
		if (ret != 0) {
			cmd_error(err.msg);
			return output_failed ? EXIT_OUTPUT : cmd_exit_code(ret);
		}
		fprintf(stderr, "seqorch: run %lld: bundle \"%s\" written%s\n",
		    (long long)run_id, bundle, key ? ", signed" : " (unsigned: "
		    "export it with --sign KEY for verify and import to check "
		    "who made it)");
		return EXIT_OK;
	}
	db_close(db);
	if (ret != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(ret);
	}
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (text == NULL) {
		fprintf(stderr, "seqorch: out of memory formatting the "
		    "%s document\n", format->name);
		return EXIT_FAIL;
	}
	if (output != NULL)
		ret = write_output(output, text);
	else
		ret = printf("%s\n", text) < 0 || fflush(stdout) != 0 ? -1 : 0;
	cJSON_free(text);
	return ret == 0 ? EXIT_OK : EXIT_OUTPUT;
}

const struct cmd_entry cmd_export_entry = {
	.name = "export",
	.summary = "write one run's summary.json (values, medians, digests)",
	.usage =
	    "usage: seqorch export --run ID [--format summary|hyperfine] [-o F]\n"
	    "                      [--db F]\n"
	    "       seqorch export --run ID --bundle DIR|FILE.tar [--sign KEY]\n"
	    "\n"
	    "One run as a JSON document: the run, its common digest, every\n"
	    "host's facts, every build's compiler, flags and source and binary\n"
	    "sha256, and per cell (variant, host, build) every valid sample's\n"
	    "ns with the median, mean, quartiles, range and cv of the rates\n"
	    "and the clock;\n"
	    "the best variant per host and the host ratios with their 95%\n"
	    "bootstrap intervals and verdicts.  Schema: docs/summary.schema.json.\n"
	    "With --format hyperfine, the run as hyperfine's --export-json\n"
	    "writes its results, one per cell, for the scripts that read them.\n",
	.opts = (const struct cmd_opt[]){
		{ "run", 'r', 0, "ID",
		    "the run to export (required)",
		    CMD_VALUE_RUN, NULL },
		{ "output", 'o', 1, "F",
		    "write to F instead of stdout (-: stdout); a\n"
		    "file is replaced atomically, a device or a\n"
		    "pipe is written to",
		    CMD_VALUE_ANY, NULL },
		{ "format", 'f', 0, "F",
		    "summary (default: summary.json) or hyperfine\n"
		    "(hyperfine's --export-json: one result per\n"
		    "cell, times in seconds per sample)",
		    CMD_VALUE_ANY, "summary hyperfine" },
		CMD_OPT_DB("F"),
		{ "bundle", 'b', 0, "B",
		    "write the run's bundle instead: summary.json,\n"
		    "its rows, raw samples and artifacts and a\n"
		    "SHA-256 manifest (docs/provenance.md)",
		    CMD_VALUE_ANY, NULL },
		{ "sign", 'k', 0, "KEY",
		    "sign the manifest with this Ed25519 PEM key\n"
		    "(openssl genpkey -algorithm ed25519 -out KEY)",
		    CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 18,
	.notes =
	    "A bundle is written as it is made, rows.json a row at a time, so\n"
	    "memory stays small whatever the run's size; a .tar needs room\n"
	    "beside it for one more copy of rows.json while it is written.\n"
	    "Exit status: 0 written, 1 the run cannot be exported, 2 bad option\n"
	    "or unknown run id, 3 database missing or unreadable, 4 the output\n"
	    "cannot be written (-o FILE, --bundle or stdout).  See\n"
	    "docs/report.md.\n",
	.exec = export_exec,
};

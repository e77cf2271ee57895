/*
 * seqorch compare: options and exit codes; compare.c compares.  For CI,
 * --fail-slower PCT exits 1 when a cell is decided slower by more than PCT
 * percent, as asv and conbench gate regressions.
 */
#include "cmd.h"
#include "compare.h"
#include "db.h"
#include "report-opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static int
compare_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct compare_opts o = { .db_path = "results.db" };
	const void *format;
	struct so_err err = { 0, "" };
	struct db *db = NULL, *base_db = NULL;
	struct compare_gate gate;
	struct stat sa, sb;
	char *end;
	int ch, done, ret, have_base = 0;

	optind = 1;
	while ((ch = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (ch) {
		case 'b':
			if (cmd_run_id_arg("--baseline", optarg, &o.base) != 0)
				return EXIT_USAGE;
			have_base = 1;
			break;
		case 'd':
			o.db_path = optarg;
			break;
		case 'B':
			o.base_db_path = optarg;
			break;
		case 'f':
			if (report_opt_format(optarg, compare_renderers,
			    sizeof *compare_renderers, &format) != 0)
				return EXIT_USAGE;
			o.format = format;
			break;
		case 'F':
			errno = 0;
			o.fail_slower = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(o.fail_slower > 0 && o.fail_slower < 100)) {
				fprintf(stderr, "seqorch: invalid --fail-slower "
				    "\"%s\": expected a percentage above 0 and "
				    "below 100\n", optarg);
				return EXIT_USAGE;
			}
			break;
		}
	}
	if (done >= 0)
		return done;
	/* RUN_A RUN_B, or --baseline RUN [RUN_B]. */
	if (!have_base && optind < argc) {
		if (cmd_run_id_arg("RUN_A", argv[optind++], &o.base) != 0)
			return EXIT_USAGE;
		have_base = 1;
		if (optind >= argc && o.base_db_path == NULL) {
			fprintf(stderr, "seqorch: compare needs RUN_A RUN_B, or "
			    "--baseline RUN\n");
			return EXIT_USAGE;
		}
	}
	if (have_base && optind < argc &&
	    cmd_run_id_arg("RUN_B", argv[optind++], &o.next) != 0)
		return EXIT_USAGE;
	if (!have_base) {
		fprintf(stderr, "seqorch: compare needs RUN_A RUN_B, or "
		    "--baseline RUN\n");
		return EXIT_USAGE;
	}
	if (o.next == o.base && o.base_db_path == NULL) {
		fprintf(stderr, "seqorch: compare needs two different runs\n");
		return EXIT_USAGE;
	}
	if (cmd_open_existing_db(o.db_path, &db) != EXIT_OK)
		return EXIT_DB;
	if (o.base_db_path != NULL &&
	    cmd_open_existing_db(o.base_db_path, &base_db) != EXIT_OK) {
		db_close(db);
		return EXIT_DB;
	}
	/*
	 * --baseline-db naming --db's own file (a link, ./x against x): one
	 * database, so a run is never compared with itself and passed.
	 */
	if (base_db != NULL && stat(o.db_path, &sa) == 0 &&
	    stat(o.base_db_path, &sb) == 0 && sa.st_dev == sb.st_dev &&
	    sa.st_ino == sb.st_ino) {
		db_close(base_db);
		base_db = NULL;
		o.base_db_path = NULL;
		if (o.next == o.base) {
			fprintf(stderr, "seqorch: compare needs two different "
			    "runs (--baseline-db and --db are one file)\n");
			db_close(db);
			return EXIT_USAGE;
		}
	}
	ret = compare_print(db_handle(db), base_db != NULL ?
	    db_handle(base_db) : NULL, &o, stdout, &gate, &err);
	db_close(base_db);
	db_close(db);
	if (ret != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(ret);
	}
	ret = EXIT_OK;
	if (fflush(stdout) != 0)
		ret = EXIT_FAIL;
	else if (gate.slower > 0) {
		fprintf(stderr, "seqorch: %zu cell%s slower by more than %g%%\n",
		    gate.slower, gate.slower == 1 ? "" : "s", o.fail_slower);
		ret = EXIT_FAIL;
	}
	/* Nothing compared is no comparison, gate or not. */
	if (gate.compared == 0 && o.fail_slower == 0) {
		fprintf(stderr, "seqorch: no cell could be compared\n");
		ret = EXIT_FAIL;
	}
	/* A gate that cannot decide fails: passing it would claim a check. */
	if (o.fail_slower > 0 && gate.undecided != NULL) {
		fprintf(stderr, "seqorch: --fail-slower cannot decide: %s\n",
		    gate.undecided);
		ret = EXIT_FAIL;
	}
	compare_gate_free(&gate);
	return ret;
}

const struct cmd_entry cmd_compare_entry = {
	.name = "compare",
	.summary = "compare two runs cell by cell, with intervals and verdicts",
	.usage =
	    "usage: seqorch compare RUN_A RUN_B [--db F] [--format F]\n"
	    "                       [--fail-slower PCT]\n"
	    "       seqorch compare --baseline RUN [RUN_B] ...\n"
	    "       seqorch compare --baseline-db A.db --db B.db RUN_A [RUN_B]\n"
	    "\n"
	    "For every cell (variant, host, compiler) of two runs of one study,\n"
	    "the change of the median rate from the baseline (RUN_A) to the new\n"
	    "run (RUN_B; with --baseline alone, the newest run of its study\n"
	    "measured here after RUN, whatever its status: imported and\n"
	    "--explore runs are passed over, and named),\n"
	    "with a 95% bootstrap interval over both runs' samples and a\n"
	    "verdict: faster, slower, or not distinguishable at this precision\n"
	    "(a verdict also needs Welch's t-test of the logs of the two\n"
	    "cells' samples under 5%).\n"
	    "Cells whose steps, seed or final digest differ are refused, with\n"
	    "the reason (once when every cell is, for the same one).  Each\n"
	    "run's status and noise verdict (quiet or noisy,\n"
	    "from the preflights) head the table; last, the geometric mean of\n"
	    "the changes.  With --baseline-db, RUN_A is read from that file\n"
	    "and RUN_B (default: the newest run of the study measured in the\n"
	    "--db file) from the other, as pyperf compare_to compares two\n"
	    "files.\n",
	.opts = (const struct cmd_opt[]){
		{ "baseline", 'b', 0, "RUN",
		    "the run to compare against",
		    CMD_VALUE_RUN, NULL },
		{ "fail-slower", 'F', 0, "PCT",
		    "exit 1 if any cell is decided slower by more\n"
		    "than PCT percent (for CI), and when it cannot\n"
		    "decide: the new run is not ok, no cell could\n"
		    "be compared, a cell was refused, has fewer\n"
		    "than 2 samples a side, is slower than PCT by\n"
		    "its interval alone (the t-test does not\n"
		    "back it) or is missing from the new run",
		    CMD_VALUE_ANY, NULL },
		{ "format", 'f', 0, "F",
		    "text (default), markdown (md), json or csv",
		    CMD_VALUE_ANY, "text markdown json csv" },
		CMD_OPT_DB("F"),
		{ "baseline-db", 'B', 0, "F",
		    "read the baseline run from this results\n"
		    "database (default: --db's)",
		    CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 21,
	.notes =
	    "Exit status: 0 compared, 1 no cell could be compared, a cell slower\n"
	    "than --fail-slower allows or the gate cannot decide,\n"
	    "2 bad option, unknown run or runs of different studies, 3 database\n"
	    "missing or unreadable.  See docs/report.md.\n",
	.max_args = 2, .args = "RUN_A RUN_B", .argvalue = CMD_VALUE_RUN,
	.exec = compare_exec,
};

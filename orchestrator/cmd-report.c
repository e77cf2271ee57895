/*
 * seqorch report: options and exit codes only; report.c reads the
 * database and formats.
 */
#include "cmd.h"
#include "db.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

extern const struct cmd_entry cmd_report_entry;

static int
report_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run",	required_argument,	NULL, 'r' },
		{ "latest",	no_argument,		NULL, 'l' },
		{ "study",	required_argument,	NULL, 's' },
		{ "db",		required_argument,	NULL, 'd' },
		{ "explore",	no_argument,		NULL, 'e' },
		{ "format",	required_argument,	NULL, 'f' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	struct report_opts o = {
		.format = REPORT_TEXT,
		.db_path = "results.db",
	};
	struct so_err err = { 0, "" };
	struct db *db = NULL;
	struct stat sb;
	int ch, latest = 0, ret;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			if (cmd_run_id_arg("--run", optarg,
			    &o.run_id) != 0)
				return EXIT_USAGE;
			break;
		case 'l':
			latest = 1;
			break;
		case 's':
			o.study = optarg;
			break;
		case 'd':
			o.db_path = optarg;
			break;
		case 'e':
			o.explore = 1;
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				o.format = REPORT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o.format = REPORT_JSON;
			else {
				fprintf(stderr, "seqorch: unknown --format "
				    "\"%s\" (text, json)\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			cmd_print_usage(&cmd_report_entry);
			return EXIT_OK;
		case ':':
			fprintf(stderr, "seqorch: option \"%s\" needs a value\n",
			    argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(stderr, "seqorch: unknown option \"%s\" (see "
			    "\"seqorch report --help\")\n", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "seqorch: unexpected argument \"%s\" (see "
		    "\"seqorch report --help\")\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (latest && o.run_id > 0) {
		fprintf(stderr, "seqorch: \"--run\" and \"--latest\" exclude "
		    "each other\n");
		return EXIT_USAGE;
	}

	/* db_open would create a missing file; a report must not. */
	if (stat(o.db_path, &sb) != 0) {
		fprintf(stderr, "seqorch: cannot open \"%s\": %s\n", o.db_path,
		    strerror(errno));
		return EXIT_DB;
	}
	if (db_open(o.db_path, &db, &err) != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return EXIT_DB;
	}
	ret = report_print(db_handle(db), &o, stdout, &err);
	db_close(db);
	if (ret != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		if (ret == SO_ENOTFOUND)
			return o.run_id > 0 ? EXIT_USAGE : EXIT_FAIL;
		return ret == SO_EINVAL ? EXIT_USAGE : EXIT_DB;
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "seqorch: cannot write the report: %s\n",
		    strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.summary = "print median rates, best variants and host ratios",
	.usage =
	    "usage: seqorch report [--run ID | --latest] [--study S] [--db F]\n"
	    "                      [--explore] [--format text|json]\n"
	    "\n"
	    "For each study, the newest run (or the run --run names): a table\n"
	    "of variant x host with the median rate over valid samples\n"
	    "(hashes/s), ns and estimated cycles per hash, min-max, n, digest\n"
	    "agreement and invalid samples; then the best valid variant per\n"
	    "host, the ratios between hosts' best rates and the run's warnings.\n"
	    "\n"
	    "  --run ID        report this run (exploratory or not)\n"
	    "  --latest        the newest run of each study (the default)\n"
	    "  --study S       only study S\n"
	    "  --db F          results database (default results.db)\n"
	    "  --explore       let --latest pick exploratory runs too\n"
	    "  --format F      text (default) or json: one object for scripts\n"
	    "\n"
	    "Exit status: 0 report printed, 1 no runs to report, 2 bad option\n"
	    "or unknown run id, 3 database missing or unreadable.\n"
	    "See docs/report.md.\n",
	.exec = report_exec,
};

/*
 * seqorch report: options and exit codes only; report.c reads the
 * database and formats.
 */
#include "cmd.h"
#include "db.h"
#include "report-opts.h"
#include "figures.h"
#include "report.h"
#include "repro.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --per: what one CSV row is. */
static const struct per {
	const char	*name;
	int		 cell;
} pers[] = {
	{ "sample", 0 },
	{ "cell", 1 },
	{ NULL, 0 },
};

/* The long name of the option cmd_getopt returned as ch. */
static const char *
opt_name(const struct cmd_entry *self, int ch)
{
	const struct cmd_opt *o;

	for (o = self->opts; o->name != NULL && o->val != ch; o++)
		;
	return o->name != NULL ? o->name : "?";
}

static int
report_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct report_opts o = { .db_path = "results.db" };
	const void *format, *per = NULL;
	struct so_err err = { 0, "" };
	struct db *db = NULL;
	const char *output = NULL, *reproduce = NULL, *table_opt = NULL;
	struct atomic_file af = { .fd = -1 };
	char seed_ref[64];
	FILE *out = stdout;
	int ch, done, latest = 0, format_set = 0, ret;

	optind = 1;
	while ((ch = cmd_getopt(argc, argv, self, &done)) != -1) {
		/* --reproduce prints its own table: these would be ignored. */
		if (ch != 'd' && ch != 'o' && ch != 'P' && ch != 'f')
			table_opt = opt_name(self, ch);
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
			if (cmd_check_study(optarg, 0) != 0)
				return EXIT_USAGE;
			o.study = optarg;
			break;
		case 'd':
			o.db_path = optarg;
			break;
		case 'e':
			o.explore = 1;
			break;
		case 'f':
			if (report_opt_format(optarg, report_renderers,
			    sizeof *report_renderers, &format) != 0)
				return EXIT_USAGE;
			o.format = format;
			format_set = 1;
			if (format != report_renderers)
				table_opt = "format";
			break;
		case 'p':
			if (report_opt_choice("--per", optarg, pers,
			    sizeof *pers, &per) != 0)
				return EXIT_USAGE;
			o.per_cell = ((const struct per *)per)->cell;
			break;
		case 'C':
			if (cmd_cv_arg("--max-cv", optarg, &o.max_cv) != 0)
				return EXIT_USAGE;
			break;
		case 'o':
			output = optarg;
			break;
		case 'P':
			if (repro_find(optarg) == NULL) {
				fprintf(stderr, "seqorch: unknown protocol "
				    "\"%s\" (see `seqorch reproduce --list`)\n",
				    optarg);
				return EXIT_USAGE;
			}
			reproduce = optarg;
			break;
		case 'R':
			/* "genoa", as hosts.toml's reference key writes it. */
			snprintf(seed_ref, sizeof seed_ref, "seed:%s", optarg);
			if (figures_known(seed_ref))
				o.reference = seed_ref;
			else if (figures_known(optarg))
				o.reference = optarg;
			else {
				figures_find(optarg, "", NULL, &err);
				cmd_error(err.msg);
				return EXIT_USAGE;
			}
			break;
		}
	}
	if (done >= 0)
		return done;
	/* -o - is standard output, as curl and git take it. */
	if (output != NULL && strcmp(output, "-") == 0)
		output = NULL;
	if (reproduce != NULL && table_opt != NULL) {
		fprintf(stderr, "seqorch: \"--%s\" does not go with "
		    "\"--reproduce\", which prints the newest reproduction's "
		    "table as text\n", table_opt);
		return EXIT_USAGE;
	}
	if (reproduce != NULL && output != NULL &&
	    report_renderer_for_path(output) != report_renderers) {
		fprintf(stderr, "seqorch: \"--reproduce\" writes text, not "
		    "the %s \"%s\" names\n",
		    report_renderer_for_path(output)->name, output);
		return EXIT_USAGE;
	}
	/* -o guess.html writes html: the name says what the file is. */
	if (output != NULL && !format_set)
		o.format = report_renderer_for_path(output);
	if (per != NULL && (o.format == NULL ||
	    strcmp(o.format->name, "csv") != 0)) {
		fprintf(stderr, "seqorch: \"--per\" goes with \"--format "
		    "csv\"\n");
		return EXIT_USAGE;
	}
	if (latest && o.run_id > 0) {
		fprintf(stderr, "seqorch: \"--run\" and \"--latest\" exclude "
		    "each other\n");
		return EXIT_USAGE;
	}

	/* db_open would create a missing file; a report must not. */
	if (cmd_open_existing_db(o.db_path, &db) != EXIT_OK)
		return EXIT_DB;
	/*
	 * A file beside FILE, renamed over it once the report is whole: a
	 * failed report leaves FILE (or a link's target) as it was.  A
	 * device or pipe is written to directly.  out has its own
	 * descriptor, so that atomic_commit can close af's.
	 */
	if (output != NULL) {
		int fd = -1;

		if (atomic_open(output, &af, &err) != 0 ||
		    (fd = dup(af.fd)) < 0 || (out = fdopen(fd, "w")) == NULL) {
			if (err.msg[0] == '\0')
				so_error(&err, SO_EIO, "cannot write \"%s\": %s",
				    output, strerror(errno));
			if (fd >= 0)
				close(fd);
			atomic_abort(&af);
			cmd_error(err.msg);
			db_close(db);
			return EXIT_OUTPUT;
		}
	}
	ret = reproduce != NULL ? repro_print_table(db, reproduce, out, &err) :
	    report_print(db_handle(db), &o, out, &err);
	db_close(db);
	if (output != NULL) {
		int wrote = fclose(out) == 0;

		if (ret != 0 || !wrote) {
			if (ret == 0)
				so_error(&err, SO_EIO, "cannot write \"%s\": %s",
				    output, strerror(errno));
			atomic_abort(&af);
			if (ret == 0) {
				cmd_error(err.msg);
				return EXIT_OUTPUT;
			}
		} else if (atomic_commit(&af, 0644, &err) != 0) {
			cmd_error(err.msg);
			return EXIT_OUTPUT;
		}
	}
	if (ret != 0) {
		cmd_error(err.msg);
		if (ret == SO_ENOTFOUND)
			return o.run_id > 0 ? EXIT_USAGE : EXIT_FAIL;
		return cmd_exit_code(ret);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "seqorch: cannot write the report: %s\n",
		    strerror(errno));
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.summary = "print median rates, best variants and host ratios",
	.usage =
	    "usage: seqorch report [--run ID | --latest] [--study S] [--db F]\n"
	    "                      [--explore] [--format F [--per cell]] [-o FILE]\n"
	    "                      [--reference seed:HOST] [--max-cv PCT]\n"
	    "       seqorch report --reproduce NAME [--db F] [-o FILE]\n"
	    "\n"
	    "For each study, the newest run (or the run --run names): a table\n"
	    "of variant x host with the median rate over valid samples\n"
	    "(hashes/s), ns and estimated cycles per hash, min-max, n, digest\n"
	    "agreement and invalid samples; quartiles, cv and the one clock of\n"
	    "each cell; the best valid variant per host; the ratios between\n"
	    "hosts and against a host's best, each with a 95% bootstrap\n"
	    "interval and a verdict (faster, slower, not distinguishable at\n"
	    "this precision); position bias; and the run's warnings.\n",
	.opts = (const struct cmd_opt[]){
		{ "run", 'r', 0, "ID",
		    "report this run (exploratory or not)",
		    CMD_VALUE_RUN, NULL },
		{ "latest", 'l', 0, NULL,
		    "the newest run of each study (the default)",
		    CMD_VALUE_ANY, NULL },
		{ "study", 's', 0, "S",
		    "only study S",
		    CMD_VALUE_STUDY, NULL },
		CMD_OPT_DB("F"),
		{ "explore", 'e', 0, NULL,
		    "let --latest pick exploratory runs too",
		    CMD_VALUE_ANY, NULL },
		{ "format", 'f', 0, "F",
		    "text (default), markdown (md), csv (one row per\n"
		    "sample), json (one object for scripts) or html\n"
		    "(a self-contained page with charts); without\n"
		    "it, -o takes the format from F's extension\n"
		    "(.html, .md, .csv, .json; text otherwise)",
		    CMD_VALUE_ANY, "text markdown csv json html" },
		{ "per", 'p', 0, "WHAT",
		    "csv: one row per sample (the default) or per\n"
		    "cell, its statistics with units in the column\n"
		    "names, to the precision their intervals support",
		    CMD_VALUE_ANY, "sample cell" },
		{ "output", 'o', 1, "F",
		    "write to file F instead of stdout (-: stdout)",
		    CMD_VALUE_ANY, NULL },
		{ "reproduce", 'P', 0, "NAME",
		    "the published table of the newest `seqorch\n"
		    "reproduce NAME` instead: the seed's figures beside\n"
		    "the measured ones",
		    CMD_VALUE_ANY, NULL },
		{ "reference", 'R', 0, "R",
		    "show the published figure R beside the local\n"
		    "best (seed:graviton5, seed:m4, seed:genoa, or\n"
		    "the machine alone as hosts.toml's reference)",
		    CMD_VALUE_ANY, NULL },
		{ "max-cv", 'C', 0, "PCT",
		    "flag a cell whose coefficient of variation is\n"
		    "above PCT percent as unstable, with what to do\n"
		    "(default 1%, as run's --max-cv; 0.5%, 2)",
		    CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 18,
	.notes =
	    "Exit status: 0 report printed, 1 no runs to report, 2 bad option,\n"
	    "unknown study or run id, 3 database missing or unreadable, 4 the\n"
	    "report cannot be written (-o FILE or stdout).\n"
	    "See docs/report.md.\n",
	.exec = report_exec,
};

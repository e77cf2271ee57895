/* The command table: the one place a subcommand is registered. */
#include "cmd.h"
#include "bundle.h"
#include "db.h"
#include "config.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_studies_entry;
extern const struct cmd_entry cmd_hosts_entry;
extern const struct cmd_entry cmd_windows_entry;
extern const struct cmd_entry cmd_deploy_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_compare_entry;
extern const struct cmd_entry cmd_artifacts_entry;
extern const struct cmd_entry cmd_gc_entry;
extern const struct cmd_entry cmd_verify_entry;
extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_publish_entry;
extern const struct cmd_entry cmd_fetch_entry;

const struct cmd_entry *const cmd_table[] = {
	&cmd_run_entry,
	&cmd_report_entry,
	&cmd_studies_entry,
	&cmd_hosts_entry,
	&cmd_windows_entry,
	&cmd_deploy_entry,
	&cmd_export_entry,
	&cmd_compare_entry,
	&cmd_artifacts_entry,
	&cmd_gc_entry,
	&cmd_verify_entry,
	&cmd_import_entry,
	&cmd_publish_entry,
	&cmd_fetch_entry,
	NULL,
};

const struct cmd_entry *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; cmd_table[i] != NULL; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return cmd_table[i];
	return NULL;
}

void
cmd_print_usage(const struct cmd_entry *entry)
{
	fputs(entry->usage, stdout);
}

/*
 * Optimal string alignment distance (Levenshtein with adjacent swaps, as
 * git's help.c weighs them): "reprot" is 1 from "report".  Names are
 * short; longer ones are far from everything anyway.
 */
static size_t
distance(const char *a, const char *b)
{
	size_t d[3][33], la = strlen(a), lb = strlen(b), i, j, v;

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *row = d[i % 3], *up = d[(i - 1) % 3],
		    *up2 = d[(i + 1) % 3];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			v = up[j - 1] + (a[i - 1] != b[j - 1]);
			if (up[j] + 1 < v)
				v = up[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && up2[j - 2] + 1 < v)
				v = up2[j - 2] + 1;
			row[j] = v;
		}
	}
	return d[la % 3][lb];
}

const char *
cmd_suggest(const char *name)
{
	const char *best = NULL;
	size_t i, d, bestd = SIZE_MAX, len = strlen(name);

	for (i = 0; cmd_table[i] != NULL; i++) {
		/* A prefix ("rep") is as near as one typo. */
		d = len > 1 && strncmp(cmd_table[i]->name, name, len) == 0 ? 1 :
		    distance(name, cmd_table[i]->name);
		if (d < bestd) {
			bestd = d;
			best = cmd_table[i]->name;
		}
	}
	/* Two edits on a word of three or more letters; one on shorter. */
	return bestd <= (len >= 3 ? 2u : 1u) ? best : NULL;
}

int
cmd_cv_arg(const char *opt, const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end != arg && *end == '%') {
		v /= 100;
		end++;
	}
	if (end == arg || *end != '\0' || !(v > 0 && v < 1)) {
		fprintf(stderr, "seqorch: invalid %s \"%s\": expected a "
		    "percentage such as 1%% or a fraction such as 0.01\n", opt,
		    arg);
		return -1;
	}
	*out = v;
	return 0;
}

int
cmd_int_arg(const char *opt, const char *arg, int64_t max, int64_t *out)
{
	if (parse_int64(arg, 1, max, out) == 0)
		return 0;
	fprintf(stderr, "seqorch: invalid %s \"%s\": expected an integer "
	    "from 1 to %lld\n", opt, arg, (long long)max);
	return -1;
}

int
cmd_run_id_arg(const char *opt, const char *arg, int64_t *out)
{
	if (parse_int64(arg, 1, INT64_MAX, out) == 0)
		return 0;
	fprintf(stderr, "seqorch: invalid %s \"%s\": expected a run id\n",
	    opt, arg);
	return -1;
}

int
cmd_exit_code(int so_code)
{
	switch (so_code) {
	case SO_OK:
		return EXIT_OK;
	case SO_EINVAL:
	case SO_ENOTFOUND:
		return EXIT_USAGE;
	case SO_EDB:
	case SO_ESTALE:
		return EXIT_DB;
	case SO_EINTR:
		return EXIT_INTERRUPTED;
	default:
		return EXIT_FAIL;
	}
}

/*
 * The option getopt stopped at: a long one as written (without any
 * "=value"), else the short one in optopt.
 */
static void
opt_name(const char *arg, char *buf, size_t len)
{
	if (strncmp(arg, "--", 2) == 0 || optopt <= ' ' || optopt >= 127)
		snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(buf, len, "-%c", optopt);
	strip_ctrl(buf);
}

int
cmd_getopt(int argc, char **argv, const char *shortopts,
    const struct option *longopts, int *done)
{
	char opts[32], buf[64];
	int c;

	/* Our messages, not getopt's: the leading ':' reports a missing value. */
	snprintf(opts, sizeof(opts), ":%s", shortopts);
	opterr = 0;
	c = getopt_long(argc, argv, opts, longopts, NULL);
	*done = -1;
	switch (c) {
	case 'h':
		cmd_print_usage(cmd_find(argv[0]));
		*done = EXIT_OK;
		return -1;
	case ':':
	case '?':
		opt_name(argv[optind - 1], buf, sizeof(buf));
		if (c == ':')
			fprintf(stderr, "seqorch: option \"%s\" needs a value\n",
			    buf);
		else if (optopt > 0 && strchr(argv[optind - 1], '=') != NULL)
			fprintf(stderr, "seqorch: option \"%s\" takes no "
			    "value\n", buf);
		else
			fprintf(stderr, "seqorch: unknown option \"%s\" (see "
			    "\"seqorch %s --help\")\n", buf, argv[0]);
		*done = EXIT_USAGE;
		return -1;
	}
	return c;
}

int
cmd_load_bundle(int argc, char **argv, const char *pubkey, struct bundle *b)
{
	struct so_err err = { 0 };
	int rc;

	if (optind != argc - 1 || pubkey == NULL) {
		fprintf(stderr, "seqorch: %s: expected BUNDLE and --pubkey PUB "
		    "(see `seqorch %s --help`)\n", argv[0], argv[0]);
		return EXIT_USAGE;
	}
	if ((rc = bundle_load(argv[optind], b, &err)) != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return cmd_exit_code(rc);
	}
	return EXIT_OK;
}

int
cmd_extra_args(int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	fprintf(stderr, "seqorch: unexpected argument \"%s\"\n", argv[optind]);
	return -1;
}

int
cmd_load_config(const char *path, const char *ssh_config,
    struct config **out)
{
	struct so_err err = { 0 };
	size_t i;

	if (config_load(path, ssh_config, out, &err) != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return -1;
	}
	for (i = 0; i < (*out)->nwarnings; i++)
		fprintf(stderr, "seqorch: warning: %s\n", (*out)->warnings[i]);
	return 0;
}

static int
open_existing(const char *path, int readonly, struct db **db)
{
	struct so_err err = { 0 };
	struct stat sb;
	int rc;

	*db = NULL;
	/* db_open would create a missing file. */
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "seqorch: cannot open \"%s\": %s\n", path,
		    strerror(errno));
		return EXIT_DB;
	}
	rc = readonly ? db_open_readonly(path, db, &err) : SO_ESTALE;
	/*
	 * An older schema is migrated once when the file may be written, as
	 * any command did before reads were read-only.
	 */
	if (rc == SO_ESTALE && (!readonly || access(path, W_OK) == 0))
		rc = db_open(path, db, &err);
	if (rc != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return EXIT_DB;
	}
	return EXIT_OK;
}

int
cmd_open_existing_db(const char *path, struct db **db)
{
	return open_existing(path, 1, db);
}

int
cmd_open_existing_db_rw(const char *path, struct db **db)
{
	return open_existing(path, 0, db);
}

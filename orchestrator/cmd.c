/* The command table: the one place a subcommand is registered. */
#include "cmd.h"
#include "bundle.h"
#include "db.h"
#include "config.h"
#include "hostsel.h"
#include "strbuf.h"
#include "study.h"
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
extern const struct cmd_entry cmd_reproduce_entry;
extern const struct cmd_entry cmd_init_entry;

const struct cmd_entry *const cmd_table[] = {
	&cmd_init_entry,
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
	&cmd_reproduce_entry,
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
cmd_error(const char *msg)
{
	/* A message may quote what a bundle or a host said: never raw. */
	char *safe = xstrdup(msg);

	strip_ctrl(safe);
	fprintf(stderr, "seqorch: %s\n", safe);
	free(safe);
}

/* "-o, --output F", as the help shows an option. */
static void
opt_head(const struct cmd_opt *o, char *buf, size_t len)
{
	int n = 0;

	if (o->letter)
		n = snprintf(buf, len, "-%c, ", o->val);
	snprintf(buf + n, len - (size_t)n, "--%s%s%s", o->name,
	    o->arg != NULL ? " " : "", o->arg != NULL ? o->arg : "");
}

void
cmd_print_usage(const struct cmd_entry *e, FILE *f)
{
	const struct cmd_opt *o;
	const char *p;
	char head[64];
	int n;

	fputs(e->usage, f);
	for (o = e->opts; o != NULL && o->name != NULL; o++) {
		if (o == e->opts)
			fputc('\n', f);
		opt_head(o, head, sizeof head);
		/* A head too long for the column keeps two spaces. */
		n = fprintf(f, "  %s", head);
		fprintf(f, "%*s", n + 2 > e->optcol ? 2 : e->optcol - n, "");
		for (p = o->help; *p != '\0'; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "%*s", e->optcol, "");
		}
		fputc('\n', f);
	}
	if (e->notes != NULL)
		fprintf(f, "\n%s", e->notes);
}

static const char *const value_names[] = {
	[CMD_VALUE_ANY] = "any", [CMD_VALUE_STUDY] = "study",
	[CMD_VALUE_VARIANT] = "variant", [CMD_VALUE_RUN] = "run",
	[CMD_VALUE_HOSTS] = "hosts", [CMD_VALUE_HOST] = "host",
};

static void
print_leaf(const struct cmd_entry *e, FILE *f)
{
	const struct cmd_opt *o;

	fprintf(f, "args\t%s\t%d\t%d\t%s\t%s\n", e->name, e->min_args,
	    e->max_args, e->args != NULL ? e->args : "-",
	    value_names[e->argvalue]);
	for (o = e->opts; o != NULL && o->name != NULL; o++) {
		fprintf(f, "option\t%s\t--%s\t", e->name, o->name);
		if (o->letter)
			fprintf(f, "-%c", o->val);
		else
			fputc('-', f);
		fprintf(f, "\t%s\t%s\t%s\n", o->arg != NULL ? o->arg : "-",
		    o->values != NULL ? "words" : value_names[o->value],
		    o->values != NULL ? o->values : "-");
	}
}

void
cmd_print_table(FILE *f)
{
	const struct cmd_entry *const *v;
	size_t i;

	for (i = 0; cmd_table[i] != NULL; i++) {
		fprintf(f, "command\t%s\t%s\n", cmd_table[i]->name,
		    cmd_table[i]->summary);
		for (v = cmd_table[i]->verbs; v != NULL && *v != NULL; v++)
			fprintf(f, "verb\t%s\t%s\t%s\n", cmd_table[i]->name,
			    strchr((*v)->name, ' ') + 1, (*v)->summary);
		if (cmd_table[i]->verbs == NULL)
			print_leaf(cmd_table[i], f);
		for (v = cmd_table[i]->verbs; v != NULL && *v != NULL; v++)
			print_leaf(*v, f);
	}
}

const char *
cmd_suggest(const char *name)
{
	struct nearest n = NEAREST_INIT(name);
	size_t i;

	for (i = 0; cmd_table[i] != NULL; i++)
		nearest_try(&n, cmd_table[i]->name);
	return nearest_word(&n);
}

int
cmd_check_study(const char *name, int groups)
{
	struct nearest n = NEAREST_INIT(name);
	struct strbuf valid = STRBUF_INIT;
	const char *near;
	size_t i;

	if (study_find(name) != NULL)
		return 0;
	/* A group where one study is wanted: say which it groups. */
	for (i = 0; !groups && study_groups[i].name != NULL; i++)
		if (strcmp(name, study_groups[i].name) == 0) {
			fprintf(stderr, "seqorch: \"%s\" is a group of studies "
			    "(%s): name one of them here\n", name,
			    study_groups[i].studies);
			return -1;
		}
	for (i = 0; study_table[i].name != NULL; i++) {
		strbuf_addf(&valid, "%s%s", i > 0 ? ", " : "",
		    study_table[i].name);
		nearest_try(&n, study_table[i].name);
	}
	for (i = 0; groups && study_groups[i].name != NULL; i++) {
		strbuf_addf(&valid, ", %s (%s)", study_groups[i].name,
		    study_groups[i].studies);
		nearest_try(&n, study_groups[i].name);
	}
	if ((near = nearest_word(&n)) != NULL)
		fprintf(stderr, "seqorch: unknown study \"%s\"; did you mean "
		    "\"%s\"?\n", name, near);
	else
		fprintf(stderr, "seqorch: unknown study \"%s\" (valid: %s)\n",
		    name, valid.buf);
	strbuf_release(&valid);
	return -1;
}

int
cmd_cv_arg(const char *opt, const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);
	int sign = end != arg && *end == '%';

	/*
	 * Percent, as compare's --fail-slower: 2 or 2%.  A bare number below
	 * 1 is refused: it was read as a fraction (0.5 was 50%), which a
	 * user who meant 0.5% never noticed.
	 */
	if (end == arg || *(end + sign) != '\0' || !(v > 0 && v < 100) ||
	    (!sign && v < 1)) {
		fprintf(stderr, "seqorch: invalid %s \"%s\": expected a "
		    "percentage below 100, such as 2, 1%% or 0.5%% (below 1 "
		    "with its %%)\n", opt, arg);
		return -1;
	}
	*out = v / 100;
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
cmd_count_arg(const char *opt, const char *arg, int64_t max, int64_t *out)
{
	if (parse_count(arg, 1, max, out) == 0)
		return 0;
	fprintf(stderr, "seqorch: invalid %s \"%s\": expected a whole number "
	    "from 1 to %lld (1000000, 1e6, 10M, 2.5M; suffixes k, M, G)\n",
	    opt, arg, (long long)max);
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

/* Every command's options fit: a test would see one that did not. */
#define MAX_OPTS 31

/* After the options: the number of arguments left, as e allows. */
static int
check_args(int argc, char **argv, const struct cmd_entry *e,
    const struct cmd_entry *help)
{
	int n = argc - optind;

	if (e->max_args >= 0 && n > e->max_args) {
		fprintf(stderr, "seqorch: unexpected argument \"%s\" (see "
		    "\"seqorch %s --help\")\n", argv[optind + e->max_args],
		    help->name);
		return EXIT_USAGE;
	}
	if (n < e->min_args) {
		fprintf(stderr, "seqorch: %s: expected %s (see \"seqorch %s "
		    "--help\")\n", e->name, e->args, help->name);
		return EXIT_USAGE;
	}
	return -1;
}

/*
 * The long options of e that "--name" abbreviates, into buf as "--a,
 * --b", when it abbreviates more than one (getopt refuses it then);
 * NULL otherwise.
 */
static const char *
ambiguous(const struct cmd_entry *e, const char *arg, char *buf, size_t len)
{
	const struct cmd_opt *o;
	size_t n = strlen(arg + 2), used = 0;
	int count = 0;

	if (strncmp(arg, "--", 2) != 0 || n == 0)
		return NULL;
	buf[0] = '\0';
	for (o = e->opts; o != NULL && o->name != NULL; o++)
		if (strncmp(o->name, arg + 2, n) == 0 && used < len) {
			used += (size_t)snprintf(buf + used, len - used,
			    "%s--%s", count++ > 0 ? ", " : "", o->name);
		}
	return count > 1 ? buf : NULL;
}

/* The long option of e nearest to a mistyped "--name", or NULL. */
static const char *
near_option(const struct cmd_entry *e, const char *arg)
{
	struct nearest n = NEAREST_INIT(arg + 2);
	const struct cmd_opt *o;

	if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
		return NULL;
	for (o = e->opts; o != NULL && o->name != NULL; o++)
		nearest_try(&n, o->name);
	nearest_try(&n, "help");
	return nearest_word(&n);
}

/*
 * The value each option of the parse under way was given, by its index in
 * e->opts: every option with a value takes one, so a second is refused
 * rather than the last silently taken (compare --baseline 11 --baseline
 * 12).  A parse is over at -1 and a new one starts lower in argv (optind
 * only grows within one) or in another argv.
 */
static struct {
	char **argv;
	int optind;
	const char *value[MAX_OPTS];
} given;

/*
 * 0, or -1 after saying so when option i of e, just given arg, was given
 * before in this parse.
 */
static int
given_once(const struct cmd_entry *e, size_t i, const char *arg)
{
	if (given.value[i] == NULL) {
		given.value[i] = arg;
		return 0;
	}
	fprintf(stderr, "seqorch: option \"--%s\" is given twice (\"%.64s\" "
	    "and \"%.64s\"): it takes one value\n", e->opts[i].name,
	    given.value[i], arg);
	return -1;
}

int
cmd_getopt_as(int argc, char **argv, const struct cmd_entry *e,
    const struct cmd_entry *help, int *done)
{
	struct option longopts[MAX_OPTS + 2];
	char opts[2 * MAX_OPTS + 3], buf[64], names[256];
	const char *near;
	size_t n = 0, k = 0, i;
	int c;

	if (given.argv != argv || optind < given.optind)
		memset(&given, 0, sizeof given);
	given.argv = argv;

	/* Our messages, not getopt's: the leading ':' reports a missing value. */
	opts[k++] = ':';
	for (; e->opts != NULL && e->opts[n].name != NULL && n < MAX_OPTS;
	    n++) {
		longopts[n] = (struct option){ e->opts[n].name,
		    e->opts[n].arg != NULL ? required_argument : no_argument,
		    NULL, e->opts[n].val };
		if (e->opts[n].letter) {
			opts[k++] = (char)e->opts[n].val;
			if (e->opts[n].arg != NULL)
				opts[k++] = ':';
		}
	}
	/* -h and --help, as every command has. */
	opts[k++] = 'h';
	opts[k] = '\0';
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	opterr = 0;
	c = getopt_long(argc, argv, opts, longopts, NULL);
	given.optind = optind;
	*done = -1;
	switch (c) {
	case -1:
		memset(&given, 0, sizeof given);
		*done = check_args(argc, argv, e, help);
		return -1;
	case 'h':
		cmd_print_usage(help, stdout);
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
		else if (ambiguous(e, buf, names, sizeof names) != NULL)
			fprintf(stderr, "seqorch: option \"%s\" is ambiguous: "
			    "%s\n", buf, names);
		else if ((near = near_option(e, buf)) != NULL)
			fprintf(stderr, "seqorch: unknown option \"%s\"; did you "
			    "mean \"--%s\"?\n", buf, near);
		else
			fprintf(stderr, "seqorch: unknown option \"%s\" (see "
			    "\"seqorch %s --help\")\n", buf, help->name);
		*done = EXIT_USAGE;
		return -1;
	}
	for (i = 0; i + 1 < n; i++)
		if (e->opts[i].val == c && e->opts[i].arg != NULL &&
		    given_once(e, i, optarg) != 0) {
			memset(&given, 0, sizeof given);
			*done = EXIT_USAGE;
			return -1;
		}
	return c;
}

int
cmd_getopt(int argc, char **argv, const struct cmd_entry *e, int *done)
{
	return cmd_getopt_as(argc, argv, e, e, done);
}

int
cmd_load_bundle(char **argv, const char *pubkey, int is_unsigned,
    struct bundle *b)
{
	struct so_err err = { 0 };
	int rc;

	if (is_unsigned && pubkey != NULL) {
		fprintf(stderr, "seqorch: %s: --unsigned and --pubkey exclude "
		    "each other\n", argv[0]);
		return EXIT_USAGE;
	}
	if (pubkey == NULL && !is_unsigned) {
		fprintf(stderr, "seqorch: %s: expected BUNDLE and --pubkey PUB "
		    "(see `seqorch %s --help`)\n", argv[0], argv[0]);
		return EXIT_USAGE;
	}
	if ((rc = bundle_load(argv[optind], b, &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	return EXIT_OK;
}

void
cmd_hint_opts(struct strbuf *sb, const char *config, const char *ssh_config,
    const char *db)
{
	if (config != NULL) {
		strbuf_addstr(sb, " --config ");
		strbuf_add_shquoted(sb, config);
	}
	if (ssh_config != NULL) {
		strbuf_addstr(sb, " --ssh-config ");
		strbuf_add_shquoted(sb, ssh_config);
	}
	if (db != NULL && strcmp(db, "results.db") != 0) {
		strbuf_addstr(sb, " --db ");
		strbuf_add_shquoted(sb, db);
	}
}

static void
set_hint(struct host *h, const char *hint)
{
	size_t i;

	h->hint = hint;
	for (i = 0; i < h->njumps; i++)
		set_hint(&h->jumps[i], hint);
}

int
cmd_load_config(const char *given, const char *ssh_config,
    struct config **out)
{
	struct strbuf sb = STRBUF_INIT;
	struct so_err err = { 0 };
	const char *from;
	char *path = NULL;
	size_t i;
	int rc = -1;

	if (config_find(given, &path, &from, &err) != 0) {
		cmd_error(err.msg);
		goto out;
	}
	if (config_load(path, ssh_config, out, &err) != 0) {
		/* A file the environment named may surprise: say so. */
		if (given == NULL && strcmp(path, "hosts.toml") != 0) {
			char *msg = xasprintf("%s (the inventory found by %s)",
			    err.msg, from);

			cmd_error(msg);
			free(msg);
		} else
			cmd_error(err.msg);
		goto out;
	}
	(*out)->from = from;
	cmd_hint_opts(&sb, given, ssh_config, NULL);
	(*out)->hint = strbuf_detach(&sb);
	for (i = 0; i < (*out)->nhosts; i++)
		set_hint(&(*out)->hosts[i], (*out)->hint);
	/* A file from outside the command line or this directory is named. */
	if (given == NULL && strcmp(path, "hosts.toml") != 0)
		fprintf(stderr, "seqorch: hosts from \"%s\" (%s)\n", path,
		    from);
	for (i = 0; i < (*out)->nwarnings; i++)
		fprintf(stderr, "seqorch: warning: %s\n", (*out)->warnings[i]);
	rc = 0;
out:
	free(path);
	return rc;
}

int
cmd_select_hosts(const struct hostsel *s, const struct config *cfg,
    struct host ***hosts, size_t *n)
{
	struct so_err err = { 0 };
	int rc;

	if ((rc = hostsel_select(s, cfg, hosts, n, &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	return EXIT_OK;
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
		cmd_error(err.msg);
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

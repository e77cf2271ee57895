/*
 * The command table.  Each subcommand lives in its own cmd-<name>.c and
 * exports one struct cmd_entry; cmd.c lists them, and that list is the only
 * place a command is registered.
 */
#ifndef SEQORCH_CMD_H
#define SEQORCH_CMD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes, documented in docs/usage.md and `seqorch --help`. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* run failed, partial, or invalid samples */
	EXIT_USAGE = 2,		/* bad options, config or names */
	EXIT_DB = 3,		/* results database unusable */
	EXIT_OUTPUT = 4,	/* -o FILE or stdout cannot be written */
	EXIT_INTERRUPTED = 130,	/* stopped by SIGINT/SIGTERM */
};

/*
 * The one map from a module's SO_E* code to an exit code: a bad value or
 * name the user gave (SO_EINVAL, SO_ENOTFOUND) is EXIT_USAGE, a database
 * error (SO_EDB, SO_ESTALE) EXIT_DB, a signal EXIT_INTERRUPTED, anything
 * else EXIT_FAIL; 0 is EXIT_OK.
 */
int cmd_exit_code(int so_code);

/*
 * What completion offers for an option's value (or a command's
 * arguments): file names unless the value is one of these.
 */
enum cmd_value {
	CMD_VALUE_ANY,		/* anything: file names are offered */
	CMD_VALUE_STUDY,	/* study names, a comma list */
	CMD_VALUE_VARIANT,	/* variants of the --study given */
	CMD_VALUE_RUN,		/* run ids of the --db given */
	CMD_VALUE_HOSTS,	/* all, host names and @groups, a comma list */
	CMD_VALUE_HOST,		/* one host name */
};

/*
 * One option of a command, declared once: cmd_getopt's table, the option
 * lines of `seqorch NAME --help` (and so docs/commands.md and the man
 * page) and the bash completion all come from it.  --help is every
 * command's and is not declared.
 */
struct cmd_opt {
	const char *name;	/* the long name, without "--"; NULL ends */
	int val;		/* what cmd_getopt returns for it; never 'h' */
	int letter;		/* 1: -VAL is its short form too (-o, -v) */
	const char *arg;	/* the value's name in the help; NULL: a flag */
	/*
	 * Its help, printed from the entry's optcol; each '\n' starts a
	 * continuation line there.
	 */
	const char *help;
	enum cmd_value value;	/* what completion offers for the value */
	const char *values;	/* else these words ("text json"), if set */
};

struct cmd_entry {
	const char *name;	/* "run"; a verb's is "hosts check" */
	const char *summary;	/* one line for `seqorch --help` */
	/*
	 * `seqorch NAME --help` is usage, the option lines of opts, then
	 * notes, a blank line between each: usage is the synopsis and what
	 * the command does, notes what follows the options (exit status,
	 * see also), both free text.
	 */
	const char *usage;
	const struct cmd_opt *opts;	/* NULL, or ended by a NULL name */
	int optcol;		/* the column the options' help starts in */
	const char *notes;
	/*
	 * Arguments after the options: at least min_args, at most max_args
	 * (-1: any number), named args in the messages; completion offers
	 * argvalue for them.
	 */
	int min_args, max_args;
	const char *args;
	enum cmd_value argvalue;
	/* A command of verbs (hosts): the verbs' entries, NULL-ended. */
	const struct cmd_entry *const *verbs;
	/*
	 * self is this entry, argv[0] the command name; returns an EXIT_*
	 * code.  A verb has none: its command's exec runs it.
	 */
	int (*exec)(const struct cmd_entry *self, int argc, char **argv);
};

/* The end of an options table. */
#define CMD_OPT_END { NULL, 0, 0, NULL, NULL, CMD_VALUE_ANY, NULL }

/* The --db option of the commands that read or write results.db. */
#define CMD_OPT_DB(argname) \
	{ "db", 'd', 0, argname, "results database (default results.db)", \
	    CMD_VALUE_ANY, NULL }

/* NULL-terminated table, defined in cmd.c. */
extern const struct cmd_entry *const cmd_table[];

/* Look a command up by name; NULL if there is none. */
const struct cmd_entry *cmd_find(const char *name);

struct bundle;

/*
 * getopt_long over the options entry e declares (the caller sets optind
 * first): the next option's val, or -1 when the options end.  They end
 * with *done EXIT_OK after --help printed e's usage, EXIT_USAGE after an
 * unknown option, a missing value or a wrong number of arguments (with
 * one message for every command), else -1: then argv[optind..argc) are
 * the arguments.  cmd_getopt_as parses e's options but prints the usage
 * of, and names, help (hosts without a verb is hosts list).
 */
int cmd_getopt(int argc, char **argv, const struct cmd_entry *e,
    int *done);
int cmd_getopt_as(int argc, char **argv, const struct cmd_entry *e,
    const struct cmd_entry *help, int *done);

/*
 * "seqorch: MSG" on stderr: a module's so_err message, for one; its
 * control characters are shown as '?'.
 */
void cmd_error(const char *msg);

/*
 * For import and verify, after cmd_getopt: argv[optind] is BUNDLE, and
 * --pubkey is required unless is_unsigned (import --unsigned), which
 * excludes it; load BUNDLE into *b (the caller frees it with
 * bundle_free).  EXIT_OK, or the exit code after printing why.
 */
int cmd_load_bundle(char **argv, const char *pubkey, int is_unsigned,
    struct bundle *b);

/*
 * The value of an integer option, from 1 to max, in *out; -1 with a
 * message naming the option and the range if arg is anything else.
 * cmd_run_id_arg is the same for a run id; cmd_count_arg takes a count
 * as people write one too ("1e6", "10M", "2.5M": parse_count).
 */
int cmd_int_arg(const char *opt, const char *arg, int64_t max, int64_t *out);
int cmd_count_arg(const char *opt, const char *arg, int64_t max,
    int64_t *out);
int cmd_run_id_arg(const char *opt, const char *arg, int64_t *out);
/*
 * The command nearest to a mistyped name (nearest_word), for "did you
 * mean"; NULL when none is near.  Static.
 */
const char *cmd_suggest(const char *name);
/*
 * 0 if a study of that name exists; else -1 after printing "unknown
 * study", the nearest name and the valid ones (with the study groups
 * when groups is set: where a --study list takes them).
 */
int cmd_check_study(const char *name, int groups);
/*
 * A coefficient of variation in percent, "2", "1%" or "0.5%" (a bare
 * number from 1), as a fraction in (0, 1) in *out; -1 with a message
 * naming the option otherwise.
 */
int cmd_cv_arg(const char *opt, const char *arg, double *out);

struct config;

struct strbuf;

/*
 * Append to sb what a hint seqorch prints ("next: seqorch report ...")
 * must repeat to work when pasted: " --config FILE" and " --ssh-config
 * FILE" for those not NULL (the user gave them), " --db FILE" unless db is
 * NULL or the default, each value shell-quoted.
 */
void cmd_hint_opts(struct strbuf *sb, const char *config,
    const char *ssh_config, const char *db);

/*
 * Load the inventory config_find() picks for given (--config, or NULL),
 * resolving ssh_config aliases in ssh_config (NULL: ~/.ssh/config), for
 * the commands: prints the error, or each ssh_config warning, to stderr,
 * and names a file found outside the current directory and the command
 * line.  Each host's hint (and its jump hosts') is given and ssh_config
 * as cmd_hint_opts writes them.  Returns 0 with *out set (the caller frees it with config_free())
 * or -1.
 */
int cmd_load_config(const char *given, const char *ssh_config,
    struct config **out);

struct hostsel;
struct host;

/*
 * hostsel_select for a command: EXIT_OK with *hosts and *n, or the exit
 * code after printing why (EXIT_USAGE for a selection that names no host,
 * EXIT_FAIL for too low an open-file limit).
 */
int cmd_select_hosts(const struct hostsel *s, const struct config *cfg,
    struct host ***hosts, size_t *n);

struct db;

/*
 * Open an existing results database for a command that must not create
 * one: EXIT_OK with *db, or EXIT_DB after printing why (a missing file is
 * "cannot open \"PATH\": No such file or directory").
 * cmd_open_existing_db is for commands that only read: the file is opened
 * read-only and left as it is, except that an older schema is migrated
 * when the file can be written.  cmd_open_existing_db_rw is for commands
 * that write (gc): it migrates as db_open does.
 */
int cmd_open_existing_db(const char *path, struct db **db);
int cmd_open_existing_db_rw(const char *path, struct db **db);

/* Print "seqorch NAME --help" text to f. */
void cmd_print_usage(const struct cmd_entry *entry, FILE *f);

/*
 * The command table as tab-separated lines (`seqorch help --table`), for
 * docs/gen-help.sh and the tests: per command "command NAME SUMMARY",
 * per verb "verb NAME VERB SUMMARY", per command or verb without verbs
 * "args NAME MIN MAX ARGS VALUE" and per option "option NAME --LONG -S
 * ARG VALUE WORDS" ("-" for what is not there).
 */
void cmd_print_table(FILE *f);

#endif

/*
 * The command table.  Each subcommand lives in its own cmd-<name>.c and
 * exports one struct cmd_entry; cmd.c lists them, and that list is the only
 * place a command is registered.
 */
#ifndef SEQORCH_CMD_H
#define SEQORCH_CMD_H

#include <stdint.h>

/* Exit codes, documented in docs/usage.md and `seqorch --help`. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* run failed, partial, or invalid samples */
	EXIT_USAGE = 2,		/* bad options, config or names */
	EXIT_DB = 3,		/* results database unusable */
	EXIT_INTERRUPTED = 130,	/* stopped by SIGINT/SIGTERM */
};

/*
 * The one map from a module's SO_E* code to an exit code: a bad value or
 * name the user gave (SO_EINVAL, SO_ENOTFOUND) is EXIT_USAGE, a database
 * error (SO_EDB, SO_ESTALE) EXIT_DB, a signal EXIT_INTERRUPTED, anything
 * else EXIT_FAIL; 0 is EXIT_OK.
 */
int cmd_exit_code(int so_code);

struct cmd_entry {
	const char *name;
	const char *summary;	/* one line for `seqorch --help` */
	const char *usage;	/* full text for `seqorch NAME --help` */
	/* argv[0] is the command name; returns an EXIT_* code. */
	int (*exec)(int argc, char **argv);
};

/* NULL-terminated table, defined in cmd.c. */
extern const struct cmd_entry *const cmd_table[];

/* Look a command up by name; NULL if there is none. */
const struct cmd_entry *cmd_find(const char *name);

struct option;
struct bundle;

/*
 * getopt_long over a command's short and long options (the caller sets
 * optind to 1 first; --help must have the value 'h'): the next option,
 * or -1 when the options end.  They end with *done EXIT_OK after --help
 * printed the usage, EXIT_USAGE after an unknown option or a missing
 * value (with one message for every command), else -1.
 */
int cmd_getopt(int argc, char **argv, const char *shortopts,
    const struct option *longopts, int *done);

/*
 * For import and verify: BUNDLE, the one argument after the options, and
 * --pubkey are required; load BUNDLE into *b (the caller frees it with
 * bundle_free).  EXIT_OK, or the exit code after printing why.
 */
int cmd_load_bundle(int argc, char **argv, const char *pubkey,
    struct bundle *b);

/*
 * After getopt: -1 (with a message) if arguments are left over at
 * optind, else 0.
 */
int cmd_extra_args(int argc, char **argv);

/*
 * The value of an integer option, from 1 to max, in *out; -1 with a
 * message naming the option and the range if arg is anything else.
 * cmd_run_id_arg is the same for a run id.
 */
int cmd_int_arg(const char *opt, const char *arg, int64_t max, int64_t *out);
int cmd_run_id_arg(const char *opt, const char *arg, int64_t *out);
/*
 * The command nearest to a mistyped name (a prefix of it, or within two
 * edits), for "did you mean"; NULL when none is near.  Static.
 */
const char *cmd_suggest(const char *name);
/*
 * A coefficient of variation, "1%" or "0.01", as a fraction in (0, 1) in
 * *out; -1 with a message naming the option otherwise.
 */
int cmd_cv_arg(const char *opt, const char *arg, double *out);

struct config;

/*
 * Load hosts.toml at path, resolving ssh_config aliases in ssh_config
 * (NULL: ~/.ssh/config), for the commands: prints the error, or each
 * ssh_config warning, to stderr.  Returns 0 with *out set (the caller
 * frees it with config_free()) or -1.
 */
int cmd_load_config(const char *path, const char *ssh_config,
    struct config **out);

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

/* Print "seqorch NAME --help" text to stdout. */
void cmd_print_usage(const struct cmd_entry *entry);

#endif

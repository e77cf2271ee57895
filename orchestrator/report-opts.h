/*
 * What the report's commands (report, export, compare) parse alike: the
 * getopt outcomes every one of them handles the same way, and --format.
 * Messages go to stderr; the caller returns the exit code.
 */
#ifndef SEQORCH_REPORT_OPTS_H
#define SEQORCH_REPORT_OPTS_H

#include "cmd.h"
#include "report.h"

/*
 * The long options all three share, to end their option tables: --db F
 * ('d') and --help ('h').
 */
#define REPORT_LONGOPTS_END \
	{ "db",		required_argument,	NULL, 'd' }, \
	{ "help",	no_argument,		NULL, 'h' }, \
	{ NULL,		0,			NULL, 0 }

/*
 * Any getopt result a command has no case of: 'h' prints e's usage and
 * gives EXIT_OK; ':' (a missing value) and anything else (an unknown
 * option, named with argv[optind - 1]) print why and give EXIT_USAGE.
 */
int report_opt_other(int ch, const struct cmd_entry *e, char **argv);

/*
 * --format arg, one of the names listed in allowed ("text, markdown,
 * json"): 0 with *f, or -1 after printing the unknown name and the list.
 */
int report_opt_format(const char *arg, const char *allowed,
    enum report_format *f);

#endif

/*
 * What the report's commands (report, export, compare) parse alike: the
 * end of their option tables and --format.  Messages go to stderr; the
 * caller returns the exit code.
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
 * --format arg, one of the names listed in allowed ("text, markdown,
 * json"): 0 with *f, or -1 after printing the unknown name and the list.
 */
int report_opt_format(const char *arg, const char *allowed,
    enum report_format *f);

#endif

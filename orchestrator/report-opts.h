/*
 * What the report's commands (report, export, compare) parse alike:
 * --format and the other options that name one of a table's entries.  Messages go to stderr; the caller returns the exit code.
 */
#ifndef SEQORCH_REPORT_OPTS_H
#define SEQORCH_REPORT_OPTS_H

#include "cmd.h"
#include "report.h"

/*
 * --format arg: the entry named arg of a renderer table (report's
 * report_renderers, compare's compare_renderers): entries of size bytes,
 * each starting with its const char *name, the last with a NULL name.  0
 * with *found, or -1 after printing the unknown name and the table's.
 */
int report_opt_format(const char *arg, const void *table, size_t size,
    const void **found);
/* The same for any option opt ("--per") whose values such a table names. */
int report_opt_choice(const char *opt, const char *arg, const void *table,
    size_t size, const void **found);

#endif

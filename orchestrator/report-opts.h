/*
 * What the report's commands (report, export, compare) parse alike:
 * --format.  Messages go to stderr; the caller returns the exit code.
 */
#ifndef SEQORCH_REPORT_OPTS_H
#define SEQORCH_REPORT_OPTS_H

#include "cmd.h"
#include "report.h"

/*
 * --format arg, one of the names listed in allowed ("text, markdown,
 * json"): 0 with *f, or -1 after printing the unknown name and the list.
 */
int report_opt_format(const char *arg, const char *allowed,
    enum report_format *f);

#endif

/* Option handling the report's commands share (report-opts.h). */
#include "report-opts.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int
report_opt_format(const char *arg, const char *allowed,
    enum report_format *f)
{
	const char *p = allowed;
	size_t len = strlen(arg);
	int v = report_format_parse(arg);

	/* A whole name of the list: "text" matches, "tex" does not. */
	while (v >= 0 && (p = strstr(p, arg)) != NULL) {
		if ((p == allowed || p[-1] == ' ') &&
		    (p[len] == ',' || p[len] == '\0')) {
			*f = (enum report_format)v;
			return 0;
		}
		p += len;
	}
	fprintf(stderr, "seqorch: unknown --format \"%s\" (%s)\n", arg,
	    allowed);
	return -1;
}

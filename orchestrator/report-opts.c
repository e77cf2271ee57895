/* Option handling the report's commands share (report-opts.h). */
#include "report-opts.h"
#include "strbuf.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* The name of entry i of table. */
static const char *
entry_name(const void *table, size_t size, size_t i)
{
	const char *name;

	memcpy(&name, (const char *)table + i * size, sizeof name);
	return name;
}

int
report_opt_format(const char *arg, const void *table, size_t size,
    const void **found)
{
	/* md is markdown's extension, and what people type. */
	if (strcmp(arg, "md") == 0)
		arg = "markdown";
	return report_opt_choice("--format", arg, table, size, found);
}

int
report_opt_choice(const char *opt, const char *arg, const void *table,
    size_t size, const void **found)
{
	struct strbuf sb = STRBUF_INIT;
	struct nearest n = NEAREST_INIT(arg);
	const char *name;
	size_t i;

	for (i = 0; (name = entry_name(table, size, i)) != NULL; i++) {
		if (strcmp(name, arg) == 0) {
			*found = (const char *)table + i * size;
			return 0;
		}
	}
	for (i = 0; (name = entry_name(table, size, i)) != NULL; i++) {
		strbuf_addf(&sb, "%s%s", i > 0 ? ", " : "", name);
		nearest_try(&n, name);
	}
	if (nearest_word(&n) != NULL)
		fprintf(stderr, "seqorch: unknown %s \"%s\"; did you mean "
		    "\"%s\"?\n", opt, arg, nearest_word(&n));
	else
		fprintf(stderr, "seqorch: unknown %s \"%s\" (%s)\n", opt, arg,
		    sb.buf);
	strbuf_release(&sb);
	return -1;
}

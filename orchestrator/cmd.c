/* The command table: the one place a subcommand is registered. */
#include "cmd.h"

#include <stdio.h>
#include <unistd.h>
#include <string.h>

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_studies_entry;
extern const struct cmd_entry cmd_hosts_entry;
extern const struct cmd_entry cmd_windows_entry;
extern const struct cmd_entry cmd_deploy_entry;

const struct cmd_entry *const cmd_table[] = {
	&cmd_run_entry,
	&cmd_report_entry,
	&cmd_studies_entry,
	&cmd_hosts_entry,
	&cmd_windows_entry,
	&cmd_deploy_entry,
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

int
cmd_extra_args(int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	fprintf(stderr, "seqorch: unexpected argument \"%s\"\n", argv[optind]);
	return -1;
}

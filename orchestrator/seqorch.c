/* seqorch: the coordinator's main; dispatches to the command table. */
#include "cmd.h"
#include "commit.h"
#include "util.h"

#include <stdio.h>
#include <string.h>


static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: seqorch COMMAND [OPTIONS]   (seqorch COMMAND "
	    "--help for details)\n\ncommands:\n");
	for (i = 0; cmd_table[i] != NULL; i++)
		fprintf(f, "  %-10s %s\n", cmd_table[i]->name,
		    cmd_table[i]->summary);
	fprintf(f, "\nseqorch help COMMAND is seqorch COMMAND --help; seqorch "
	    "version (-V,\n--version) prints the version and the commit it "
	    "was built from.  An option\nthat takes a value takes one: given "
	    "twice, it is refused (exit 2).\n");
	fprintf(f, "\nexit codes: 0 ok, 1 run failed, partial or invalid "
	    "samples, 2 usage or config\nerror, 3 database error, 4 output "
	    "cannot be written, 130 interrupted.\nSee docs/usage.md.\n");
}

/* An unknown command, with the nearest one when it is near enough. */
static int
unknown(const char *name)
{
	const char *near = cmd_suggest(name);

	if (near != NULL)
		fprintf(stderr, "seqorch: unknown command \"%s\"; did you mean "
		    "\"%s\"?\n", name, near);
	else {
		fprintf(stderr, "seqorch: unknown command \"%s\"\n\n", name);
		usage(stderr);
	}
	return EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	const struct cmd_entry *cmd;

	so_json_hooks();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* As git does: "help run" is "run --help". */
	/* The table docs/gen-help.sh and the tests read. */
	if (strcmp(argv[1], "help") == 0 && argc == 3 &&
	    strcmp(argv[2], "--table") == 0) {
		cmd_print_table(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0 && argc > 2) {
		if ((cmd = cmd_find(argv[2])) == NULL)
			return unknown(argv[2]);
		/* help hosts trust is hosts trust --help. */
		if (argc > 3 && cmd->verbs != NULL) {
			char *args[] = { argv[2], argv[3], "--help", NULL };

			return cmd->exec(cmd, 3, args);
		}
		cmd_print_usage(cmd, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		printf("seqorch %s (commit %s)\n", SEQORCH_VERSION,
		    SEQORCH_COMMIT);
		return EXIT_OK;
	}
	if ((cmd = cmd_find(argv[1])) == NULL)
		return unknown(argv[1]);
	return cmd->exec(cmd, argc - 1, argv + 1);
}

/*
 * seqorch studies: the studies and variants this coordinator ships (the
 * agent sources embedded in it), with each variant's architecture and
 * compiler flags.
 */
#include "cmd.h"
#include "deploy.h"
#include "reference.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static int
studies_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **studies;
	size_t i, j;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_print_usage(cmd_find("studies"));
			return EXIT_OK;
		}
		return EXIT_USAGE;
	}
	if (optind != argc) {
		fprintf(stderr, "seqorch: studies takes no arguments\n");
		return EXIT_USAGE;
	}
	studies = deploy_studies();
	for (i = 0; studies[i] != NULL; i++) {
		const char **vs = deploy_variants(studies[i]);

		printf("%s%s\n", studies[i], reference_known(studies[i]) ?
		    "" : "  (no coordinator reference yet)");
		for (j = 0; vs[j] != NULL; j++) {
			const char *arch = deploy_variant_file(studies[i],
			    vs[j], "arch");
			const char *flags = deploy_variant_file(studies[i],
			    vs[j], "flags");

			printf("  %-20s %-8s %s\n", vs[j],
			    arch ? arch : "any", flags ? flags : "");
			free((char *)vs[j]);
		}
		free(vs);
		free((char *)studies[i]);
	}
	free(studies);
	return EXIT_OK;
}

const struct cmd_entry cmd_studies_entry = {
	.name = "studies",
	.summary = "list studies and their variants",
	.usage =
	    "usage: seqorch studies\n"
	    "\n"
	    "Lists every study and variant this seqorch ships, with the\n"
	    "architecture a variant is limited to and its extra compiler flags.\n",
	.exec = studies_exec,
};

/*
 * seqorch studies: the studies and variants this coordinator ships (the
 * agent sources embedded in it), with each study's unit, protocol and
 * reference, and each variant's architecture and compiler flags.
 */
#include "cmd.h"
#include "study.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int
studies_exec(const struct cmd_entry *self, int argc, char **argv)
{
	size_t i, j;
	int done;

	optind = 1;
	while (cmd_getopt(argc, argv, self, &done) != -1)
		;
	if (done >= 0)
		return done;
	for (i = 0; study_table[i].name != NULL; i++) {
		const struct study_entry *e = &study_table[i];
		const struct study *s = e->study;

		printf("%s: %s\n", e->name, s->description);
		printf("  unit %s, %" PRIu64 " %s per sample by default "
		    "(at most %" PRIu64 "), reference %s%s%s\n", s->unit,
		    s->default_steps, s->unit_plural, study_max_steps(s),
		    e->ref->method,
		    s->requires ? "; needs " : "",
		    s->requires ? s->requires : "");
		for (j = 0; variant_table[j].study != NULL; j++) {
			const struct variant_entry *v = &variant_table[j];

			if (strcmp(v->study, e->name) != 0)
				continue;
			printf("  %-20s %-8s %s%s\n", v->variant, v->arch,
			    v->flags ? v->flags : "",
			    s->control != NULL &&
			    strcmp(s->control, v->variant) == 0 ?
			    "  (control)" : "");
		}
	}
	/* After the studies, in the same "NAME:" form completion reads. */
	for (i = 0; study_groups[i].name != NULL; i++)
		printf("%s: group, --study %s runs %s in that order\n",
		    study_groups[i].name, study_groups[i].name,
		    study_groups[i].studies);
	return EXIT_OK;
}

const struct cmd_entry cmd_studies_entry = {
	.name = "studies",
	.summary = "list studies and their variants",
	.usage =
	    "usage: seqorch studies\n"
	    "\n"
	    "Lists every study this seqorch ships: what one step is, the steps\n"
	    "per sample of the seeds' protocol, the coordinator's independent\n"
	    "reference and what a host needs; then each variant with the\n"
	    "architecture it is limited to and its extra compiler flags.  Last,\n"
	    "the groups (kernels/groups.txt): the seeds' words for several\n"
	    "studies, which --study expands in order (div: div32, div64).\n",
	.exec = studies_exec,
};

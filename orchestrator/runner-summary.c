/*
 * The end of a run on stderr: its best variant per host with median and
 * spread, the warnings it stored (repeated: on a terminal the live lines
 * may have scrolled them away), and the command to run next.
 */
#include "runner.h"
#include "report-model.h"
#include "study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
runner_summary(struct db *db, int64_t run_id, const char *db_opts,
    const char *run_opts, const char *host_opts, const char *status,
    FILE *out)
{
	struct rrun r;
	struct so_err err = { 0, "" };
	const struct rrow *w;
	char med[32], lo[32], hi[32], cv[32];
	size_t i, nwarn = 0;

	if (report_load_run(db_handle(db), run_id, &r, &err) != 0) {
		fprintf(out, "seqorch: no summary of run %lld: %s\n",
		    (long long)run_id, err.msg);
		return;
	}
	for (i = 0; i < r.nranked; i++) {
		w = r.ranked[i]->best;
		if (i == 0)
			fprintf(out, "best per host, %s/s (median, min-max, "
			    "cv over n samples):\n", study_unit_plural(r.study));
		report_format_rate(w->median, med, sizeof med);
		report_format_rate(w->min, lo, sizeof lo);
		report_format_rate(w->max, hi, sizeof hi);
		/* One sample has no spread: "-", as the report says it. */
		if (isnan(w->desc.cv))
			snprintf(cv, sizeof cv, "-");
		else
			snprintf(cv, sizeof cv, "%.2f%%", 100 * w->desc.cv);
		fprintf(out, "  %-12s %-18s %8s  %s-%s  cv %s  n %lld\n",
		    r.ranked[i]->name, w->variant, med, lo, hi, cv,
		    (long long)w->n);
	}
	for (i = 0; i < r.nevents; i++)
		nwarn += strcmp(r.events[i].level, "warning") == 0;
	if (nwarn > 0)
		fprintf(out, "warnings (%zu):\n", nwarn);
	for (i = 0; i < r.nevents; i++) {
		if (strcmp(r.events[i].level, "warning") == 0)
			fprintf(out, "  %s: %s\n", r.events[i].host != NULL ?
			    r.events[i].host : "-", r.events[i].message);
	}
	/* Interrupted or not, what is stored can be reported. */
	if (strcmp(status, "interrupted") == 0)
		fprintf(out, "resume: seqorch run --resume %lld%s\n",
		    (long long)run_id, run_opts);
	/* No host measured: reaching them comes before any report. */
	if (host_opts != NULL)
		fprintf(out, "next: seqorch hosts check%s\nthen: seqorch report "
		    "--run %lld%s\n", host_opts, (long long)run_id, db_opts);
	else
		fprintf(out, "next: seqorch report --run %lld%s\n",
		    (long long)run_id, db_opts);
	report_free_run(&r);
}

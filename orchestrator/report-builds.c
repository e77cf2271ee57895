/* Per-build rates, targeting ratios and phase shares (report-builds.h). */
#include "report-builds.h"

#include "db.h"
#include "report.h"

#include <string.h>

struct section {
	FILE *out;
	int any;
};

static const char *
text(const char *s)
{
	return s != NULL ? s : "-";
}

/* H/s of each host, build and variant, for runs with targeted builds. */
static int
rate(void *arg, const struct db_build_row *r)
{
	struct section *sec = arg;
	char med[16], lo[16], hi[16];

	if (!sec->any)
		fprintf(sec->out, "\nrates per build\n  %-16s %6s %-10s %-9s "
		    "%-10s %4s %10s %10s %10s\n", "host", "build", "compiler",
		    "targeting", "variant", "n", "median/s", "min/s", "max/s");
	sec->any = 1;
	report_format_rate(r->v[0], med, sizeof med);
	report_format_rate(r->v[1], lo, sizeof lo);
	report_format_rate(r->v[2], hi, sizeof hi);
	fprintf(sec->out, "  %-16.16s %6lld %-10.10s %-9.9s %-10.10s %4lld "
	    "%10s %10s %10s\n", text(r->host), (long long)r->build_id,
	    text(r->compiler), text(r->targeting), text(r->variant),
	    (long long)r->n, med, lo, hi);
	return 0;
}

/*
 * native / default of the median rates, per host, compiler and variant.
 * The verdict compares the spreads: ranges that overlap are within the
 * noise of this run; otherwise one targeting is faster in every sample.
 */
static int
ratio(void *arg, const struct db_build_row *r)
{
	struct section *sec = arg;
	const double nlo = r->v[1], nhi = r->v[2], dlo = r->v[3], dhi = r->v[4];
	const char *verdict = nlo > dhi ? "native faster in every sample" :
	    nhi < dlo ? "native slower in every sample" :
	    "within noise (ranges overlap)";

	if (!sec->any)
		fprintf(sec->out, "\nnative / default targeting\n  %-16s %-10s "
		    "%-10s %7s  %s\n", "host", "compiler", "variant", "ratio",
		    "verdict");
	sec->any = 1;
	fprintf(sec->out, "  %-16.16s %-10.10s %-10.10s %7.3f  %s\n",
	    text(r->host), text(r->compiler), text(r->variant), r->v[0],
	    verdict);
	return 0;
}

/*
 * Each phase's share of the hashing time: its ns over the samples' ns,
 * summed over the valid samples of a host, build and variant.  The
 * phases include "other", so a row adds up to 100%.
 */
static int
phase(void *arg, const struct db_build_row *p)
{
	struct section *sec = arg;
	const double total = p->v[DB_PHASES];
	double sum = 0;
	int i;

	if (!(total > 0))
		return 0;
	if (!sec->any)
		fprintf(sec->out, "\nphase shares of hashing time (sum over "
		    "valid samples)\n  %-16s %6s %-9s %-10s %3s %7s %7s %7s "
		    "%7s %7s %7s\n", "host", "build", "targeting", "variant",
		    "n", "proggen", "compile", "execute", "mprotect", "other",
		    "total");
	sec->any = 1;
	fprintf(sec->out, "  %-16.16s %6lld %-9.9s %-10.10s %3lld",
	    text(p->host), (long long)p->build_id, text(p->targeting),
	    text(p->variant), (long long)p->n);
	for (i = 0; i < DB_PHASES; i++) {
		sum += p->v[i];
		fprintf(sec->out, " %6.2f%%", 100 * p->v[i] / total);
	}
	fprintf(sec->out, " %6.2f%%\n", 100 * sum / total);
	return 0;
}

int
report_builds_text(sqlite3 *db, int64_t run_id, FILE *out,
    struct so_err *err)
{
	struct section rates = { out, 0 }, ratios = { out, 0 },
	    phases = { out, 0 };
	int rc;

	if ((rc = db_build_section(db, DB_BUILD_RATES, run_id, rate, &rates,
	    err)) == 0 && (rc = db_build_section(db, DB_TARGETING_RATIOS,
	    run_id, ratio, &ratios, err)) == 0)
		rc = db_build_section(db, DB_PHASE_SHARES, run_id, phase,
		    &phases, err);
	return rc;
}

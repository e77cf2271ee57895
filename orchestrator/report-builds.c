/* Per-build rates, targeting ratios and phase shares (report-builds.h). */
#include "report-builds.h"

#include "db.h"
#include "report-model.h"
#include "report-table.h"
#include "report.h"
#include "study.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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

/* Is variant the study's control (the same code in every build)? */
static int
is_control(const struct rrun *r, const char *variant)
{
	const struct study_entry *e = study_find(r->study);

	return e != NULL && e->study->control != NULL &&
	    strcmp(e->study->control, variant) == 0;
}

/*
 * The best valid row of host h against build other of the host, from
 * their pair (inverted when the best is the older build); 0 if unpaired.
 */
static int
best_against(const struct rrun *r, const struct rhost *h,
    const struct rpaired *p, struct stats_ratio *s, const char **other)
{
	const struct rrow *b = h->best;

	if (strcmp(p->host, h->name) != 0 || strcmp(p->variant, b->variant) != 0)
		return 0;
	if (p->a_id == b->build_id) {
		*s = p->s;
		*other = p->b_label;
		return 1;
	}
	if (p->b_id != b->build_id)
		return 0;
	s->ratio = 1 / p->s.ratio;
	s->lo = 1 / p->s.hi;
	s->hi = 1 / p->s.lo;
	s->verdict = p->s.verdict == STATS_FASTER ? STATS_SLOWER :
	    p->s.verdict == STATS_SLOWER ? STATS_FASTER : STATS_UNDECIDED;
	*other = p->a_label;
	(void)r;
	return 1;
}

static size_t
wider(size_t w, const char *s, size_t extra)
{
	size_t n = strlen(s) + extra;

	return n > w ? n : w;
}

/*
 * The paired ratios against each host's baseline, columns as wide as
 * their widest entry, then each host's best valid (variant, build)
 * against the host's other builds of that variant.
 */
static void
paired_text(const struct rrun *r, FILE *out)
{
	struct stats_ratio s;
	const char *other;
	size_t i, j, hw = 4, vw = 7, aw = 5, bw = 8;
	int any = 0;

	for (i = 0; i < r->npaired; i++) {
		const struct rpaired *p = &r->paired[i];

		if (!p->baseline)
			continue;
		any = 1;
		hw = wider(hw, p->host, 0);
		vw = wider(vw, p->variant, is_control(r, p->variant) ? 10 : 0);
		aw = wider(aw, p->a_label, 0);
		bw = wider(bw, p->b_label, 0);
	}
	if (!any)
		return;
	fprintf(out, "\nbuilds against their host's baseline, paired: rate / "
	    "the baseline's in the\nsamples of one index, side by side in one "
	    "alternating order, %d%% interval\n  %-*s  %-*s  %-*s  %-*s  "
	    "%5s  %6s  %-16s  %s\n", STATS_LEVEL_PCT, (int)hw, "host",
	    (int)vw, "variant", (int)aw, "build", (int)bw, "baseline",
	    "pairs", "ratio", "interval", "verdict");
	for (i = 0; i < r->npaired; i++) {
		const struct rpaired *p = &r->paired[i];
		char *iv, *v;

		if (!p->baseline)
			continue;
		iv = report_interval_str(&p->s);
		v = xasprintf("%s%s", p->variant, is_control(r, p->variant) ?
		    " (control)" : "");
		fprintf(out, "  %-*s  %-*s  %-*s  %-*s  %5zu  %5.3fx  %-16s  "
		    "%s\n", (int)hw, p->host, (int)vw, v, (int)aw, p->a_label,
		    (int)bw, p->b_label, p->n, p->s.ratio, iv,
		    report_verdict_phrase(&p->s));
		free(v);
		free(iv);
	}
	fprintf(out, "\nbest valid (variant, compiler) per host, against its "
	    "other builds, paired\n");
	for (i = 0; i < r->nhosts; i++) {
		const struct rhost *h = &r->hosts[i];

		if (h->best == NULL)
			continue;
		fprintf(out, "  %-*s  %s (%s)\n", (int)hw, h->name,
		    h->best->variant, text(h->best->label));
		for (j = 0; j < r->npaired; j++) {
			char *iv;

			if (!best_against(r, h, &r->paired[j], &s, &other))
				continue;
			iv = report_interval_str(&s);
			fprintf(out, "  %-*s    against %-*s  %5.3fx  %-16s  "
			    "%s\n", (int)hw, "", (int)aw, other, s.ratio, iv,
			    report_verdict_phrase(&s));
			free(iv);
		}
	}
}

static void
json_ratio(cJSON *o, const struct stats_ratio *s)
{
	report_json_num(o, "ratio", s->ratio, isfinite(s->ratio));
	report_json_num(o, "lo", s->lo, isfinite(s->lo));
	report_json_num(o, "hi", s->hi, isfinite(s->hi));
	report_json_str(o, "verdict", stats_verdict_key(s->verdict));
}

cJSON *
report_builds_json(const struct rrun *r)
{
	cJSON *o = cJSON_CreateObject(), *a, *x, *b, *v;
	struct stats_ratio s;
	const char *other;
	size_t i, j;

	a = cJSON_AddArrayToObject(o, "against_baseline");
	for (i = 0; i < r->npaired; i++) {
		const struct rpaired *p = &r->paired[i];

		if (!p->baseline)
			continue;
		x = cJSON_CreateObject();
		report_json_str(x, "host", p->host);
		report_json_str(x, "variant", p->variant);
		cJSON_AddBoolToObject(x, "control", is_control(r, p->variant));
		cJSON_AddNumberToObject(x, "build_id", (double)p->a_id);
		report_json_str(x, "build", p->a_label);
		cJSON_AddNumberToObject(x, "baseline_build_id",
		    (double)p->b_id);
		report_json_str(x, "baseline", p->b_label);
		cJSON_AddNumberToObject(x, "pairs", (double)p->n);
		json_ratio(x, &p->s);
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(o, "best");
	for (i = 0; r->npaired > 0 && i < r->nhosts; i++) {
		const struct rhost *h = &r->hosts[i];

		if (h->best == NULL)
			continue;
		x = cJSON_CreateObject();
		report_json_str(x, "host", h->name);
		report_json_str(x, "variant", h->best->variant);
		cJSON_AddNumberToObject(x, "build_id",
		    (double)h->best->build_id);
		report_json_str(x, "build", h->best->label);
		b = cJSON_AddArrayToObject(x, "against");
		for (j = 0; j < r->npaired; j++) {
			if (!best_against(r, h, &r->paired[j], &s, &other))
				continue;
			v = cJSON_CreateObject();
			report_json_str(v, "build", other);
			json_ratio(v, &s);
			cJSON_AddItemToArray(b, v);
		}
		cJSON_AddItemToArray(a, x);
	}
	return o;
}

void
report_builds_html(const struct rrun *r, FILE *out)
{
	size_t i;
	int any = 0;

	for (i = 0; i < r->npaired; i++) {
		const struct rpaired *p = &r->paired[i];
		char *iv;

		if (!p->baseline)
			continue;
		if (!any)
			fprintf(out, "<h3>Paired ratios between builds</h3>\n"
			    "<p>Each build's rate over its host's baseline "
			    "build's, from the samples of the same index, "
			    "taken side by side in one alternating order; %d%% "
			    "bootstrap interval over the pairs.</p>\n"
			    "<div class=\"scroll\"><table><tr><th>host</th>"
			    "<th>variant</th><th>build</th><th>baseline</th>"
			    "<th>pairs</th><th>ratio</th><th>interval</th>"
			    "<th>verdict</th></tr>\n", STATS_LEVEL_PCT);
		any = 1;
		fputs("<tr><td>", out);
		report_html_text(out, p->host);
		fputs("</td><td>", out);
		report_html_text(out, p->variant);
		fprintf(out, "%s</td><td>", is_control(r, p->variant) ?
		    " (control)" : "");
		report_html_text(out, p->a_label);
		fputs("</td><td>", out);
		report_html_text(out, p->b_label);
		iv = report_interval_str(&p->s);
		fprintf(out, "</td><td class=\"n\">%zu</td><td class=\"n\">"
		    "%.3fx</td><td>%s</td><td class=\"%s\">%s</td></tr>\n",
		    p->n, p->s.ratio, iv, stats_verdict_key(p->s.verdict),
		    report_verdict_phrase(&p->s));
		free(iv);
	}
	if (any)
		fputs("</table></div>\n", out);
}

int
report_builds_text(sqlite3 *db, const struct rrun *r, FILE *out,
    struct so_err *err)
{
	struct section rates = { out, 0 }, ratios = { out, 0 },
	    phases = { out, 0 };
	int64_t run_id = r->id;
	int rc;

	paired_text(r, out);
	if ((rc = db_build_section(db, DB_BUILD_RATES, run_id, rate, &rates,
	    err)) == 0 && (rc = db_build_section(db, DB_TARGETING_RATIOS,
	    run_id, ratio, &ratios, err)) == 0)
		rc = db_build_section(db, DB_PHASE_SHARES, run_id, phase,
		    &phases, err);
	return rc;
}

/*
 * The report as Markdown (GitHub-flavoured tables): the same content as
 * the text, for issues, papers and wikis.  Host text is escaped so that
 * it cannot break a table.
 */
#include "report-model.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cell text: pipes escaped, newlines and other controls as spaces. */
static void
md(FILE *out, const char *s)
{
	if (s == NULL) {
		fputs("-", out);
		return;
	}
	for (; *s != '\0'; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' ||
		    *s == '_' || *s == '<')
			fputc('\\', out);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
	}
}

static void
rate(FILE *out, double r)
{
	char buf[32];

	report_format_rate(r, buf, sizeof buf);
	fputs(buf, out);
}

static void
ns(FILE *out, double r)
{
	char buf[32];

	report_format_ns(r, buf, sizeof buf);
	fputs(buf, out);
}

static void
ratio_cells(FILE *out, const struct stats_ratio *s)
{
	char *iv = report_interval_str(s);

	fprintf(out, " %.3fx | %s | %s |\n", s->ratio, iv,
	    report_verdict_phrase(s));
	free(iv);
}

static void
md_header(const struct rrun *r, FILE *out)
{
	size_t i;

	fprintf(out, "## %s, run %" PRId64 ": %s%s\n\n", r->study, r->id,
	    r->status, r->exploratory ? " (exploratory)" : "");
	fputs("| | |\n| --- | --- |\n", out);
	fprintf(out, "| steps | %" PRId64 " per sample, %" PRId64
	    " samples per variant |\n", r->steps, r->samples);
	fprintf(out, "| seed | `%s` |\n", r->seed);
	fprintf(out, "| started | %s |\n| finished | %s |\n", r->started_at,
	    r->finished_at != NULL ? r->finished_at : "-");
	fputs("| command | ", out);
	md(out, r->command);
	fputs(" |\n", out);
	for (i = 0; i < r->ndigests; i++) {
		if (r->digests[i].distinct == 1)
			fprintf(out, "| digest | `%s` in all %" PRId64 " valid "
			    "samples of %" PRId64 " steps |\n",
			    r->digests[i].digest, r->digests[i].n,
			    r->digests[i].steps);
		else
			fprintf(out, "| digest | **MISMATCH**: %" PRId64
			    " valid samples of %" PRId64 " steps end in %"
			    PRId64 " different digests |\n", r->digests[i].n,
			    r->digests[i].steps, r->digests[i].distinct);
	}
	if (r->ndigests == 0)
		fputs("| digest | no valid samples |\n", out);
}

static void
md_hosts(const struct rrun *r, FILE *out)
{
	const struct rhost *h;
	size_t i;
	char *clock;

	fputs("\n### Hosts\n\n| host | status | clock | cpu | arch | "
	    "openssl | governor | pinning | counters | noise |\n| --- | --- | "
	    "--- | --- | --- | --- | --- | --- | --- | --- |\n", out);
	for (i = 0; i < r->nhosts; i++) {
		h = &r->hosts[i];
		clock = report_clock_str(h->clock_mhz, h->clock_source,
		    h->clock_n);
		fputs("| ", out);
		md(out, h->name);
		fputs(" | ", out);
		md(out, h->status);
		fprintf(out, " | %s | ", clock);
		md(out, h->cpu_model);
		fputs(" | ", out);
		md(out, h->arch);
		fputs(" | ", out);
		md(out, h->openssl);
		fputs(" | ", out);
		md(out, h->governor);
		if (h->pinned == 1 && h->has_pin_cpu)
			fprintf(out, " | cpu %" PRId64 " | ", h->pin_cpu);
		else if (h->has_pin_cpu)
			fprintf(out, " | cpu %" PRId64 " (not pinned) | ",
			    h->pin_cpu);
		else
			fprintf(out, " | %s | ", h->pinned == -1 ? "unknown" :
			    "none");
		md(out, h->counters);
		if (h->windows == 0)
			fputs(" | - |\n", out);
		else
			fprintf(out, " | %s %" PRId64 "/%" PRId64 " |\n",
			    h->noisy > 0 ? "noisy" : "quiet", h->noisy > 0 ?
			    h->noisy : h->windows, h->windows);
		free(clock);
	}
	if (r->nbuilds == 0)
		return;
	fputs("\n### Builds\n\n| build | host | compiler | cflags | status | "
	    "version |\n| ---: | --- | --- | --- | --- | --- |\n", out);
	for (i = 0; i < r->nbuilds; i++) {
		fprintf(out, "| %" PRId64 " | ", r->builds[i].id);
		md(out, r->builds[i].host);
		fputs(" | ", out);
		md(out, r->builds[i].compiler);
		fputs(" | ", out);
		md(out, r->builds[i].cflags);
		fputs(" | ", out);
		md(out, r->builds[i].status);
		fputs(" | ", out);
		md(out, r->builds[i].compiler_version);
		fputs(" |\n", out);
	}
}

static void
md_rows(const struct rrun *r, FILE *out)
{
	const char *u = study_unit(r->study);
	const struct rrow *w;
	size_t i;

	fprintf(out, "\n### %s/s per cell\n\nMedian, quartiles and range over "
	    "the n valid samples; cv: coefficient of variation; clock: the "
	    "median of the samples' own estimates (cycles = clock / rate).\n"
	    "\n| variant | compiler | host | median | q1 | q3 | min | max | "
	    "cv | n | ns/%s | cycles/%s | clock MHz | digest | invalid |\n"
	    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | "
	    "---: | ---: | ---: | ---: | --- | ---: |\n",
	    study_unit_plural(r->study), u, u);
	for (i = 0; i < r->nrows; i++) {
		w = &r->rows[i];
		fputs("| ", out);
		md(out, w->variant);
		fputs(" | ", out);
		md(out, w->label);
		fputs(" | ", out);
		md(out, w->host);
		fputs(" | ", out);
		rate(out, w->n > 0 ? w->median : 0);
		fputs(" | ", out);
		rate(out, w->n > 0 ? w->desc.q1 : 0);
		fputs(" | ", out);
		rate(out, w->n > 0 ? w->desc.q3 : 0);
		fputs(" | ", out);
		rate(out, w->n > 0 ? w->min : 0);
		fputs(" | ", out);
		rate(out, w->n > 0 ? w->max : 0);
		if (isnan(w->desc.cv))
			fputs(" | - | ", out);
		else
			fprintf(out, " | %.2f%% | ", 100 * w->desc.cv);
		fprintf(out, "%" PRId64 " | ", w->n);
		ns(out, w->n > 0 ? w->median : 0);
		if (report_row_cycles(w) > 0)
			fprintf(out, " | %.1f | %.0f", report_row_cycles(w),
			    w->clock_mhz);
		else
			fputs(" | - | -", out);
		fprintf(out, " | %s | %" PRId64 " |\n",
		    w->digest == DIGEST_OK ? "ok" : w->digest ==
		    DIGEST_MISMATCH ? "**MISMATCH**" : "-", w->invalid);
	}
	if (r->nrows == 0)
		fputs("| no samples | | | | | | | | | | | | | | |\n", out);
}

static void
md_ratios(const struct rrun *r, FILE *out)
{
	const struct rratio *x;
	const struct rrow *w;
	const struct rhost *h;
	size_t i, j;

	fprintf(out, "\n### Best valid variant per host\n\n| host | variant |"
	    " median %s/s | ns/%s |\n| --- | --- | ---: | ---: |\n",
	    study_unit_plural(r->study), study_unit(r->study));
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		fputs("| ", out);
		md(out, h->name);
		fputs(" | ", out);
		md(out, h->best->variant);
		fputs(" (", out);
		md(out, h->best->label);
		fputs(") | ", out);
		rate(out, h->best->median);
		fputs(" | ", out);
		ns(out, h->best->median);
		fputs(" |\n", out);
	}
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].best == NULL) {
			fputs("| ", out);
			md(out, r->hosts[i].name);
			fputs(" | no valid samples | | |\n", out);
		}
	}
	if (r->nratios > 0) {
		fprintf(out, "\n### Ratios of best rates\n\n%d%% bootstrap "
		    "interval over the samples.\n\n| faster | slower | ratio |"
		    " interval | verdict |\n| --- | --- | ---: | --- | --- |\n",
		    STATS_LEVEL_PCT);
		for (i = 0; i < r->nratios; i++) {
			x = &r->ratios[i];
			fputs("| ", out);
			md(out, x->a->host);
			fputs(" | ", out);
			md(out, x->b->host);
			fputs(" |", out);
			if (x->refused != NULL) {
				fputs(" - | - | refused: ", out);
				md(out, x->refused);
				fputs(" |\n", out);
			} else
				ratio_cells(out, &x->s);
		}
	}
	fputs("\n### Variants against their host's best\n\n| host | variant |"
	    " / best | interval | verdict |\n| --- | --- | ---: | --- | --- |"
	    "\n", out);
	for (i = 0; i < r->nranked; i++) {
		h = r->ranked[i];
		for (j = 0; j < r->nrows; j++) {
			w = &r->rows[j];
			if (w == h->best || strcmp(w->host, h->name) != 0 ||
			    isnan(w->vs_best.ratio))
				continue;
			fputs("| ", out);
			md(out, h->name);
			fputs(" | ", out);
			md(out, w->variant);
			fputs(" (", out);
			md(out, w->label);
			fputs(") |", out);
			ratio_cells(out, &w->vs_best);
		}
	}
}

static void
md_positions(const struct rrun *r, FILE *out)
{
	const struct rposition *p;
	size_t i;

	fputs("\n### Position bias\n\n", out);
	if (r->npositions == 0) {
		fputs("Not measurable: one position only.\n", out);
		return;
	}
	fprintf(out, "%s Each valid rate is divided by its cell's mean and "
	    "pooled by its place in the alternating order; each position is "
	    "compared with all the others.\n\n| position | n | / others | "
	    "interval | verdict |\n| ---: | ---: | ---: | --- | --- |\n",
	    r->position_bias ? "**Some positions in the alternating order "
	    "shift results.**" : "No position in the alternating order "
	    "shifts results at this precision.");
	for (i = 0; i < r->npositions; i++) {
		p = &r->positions[i];
		fprintf(out, "| %" PRId64 " | %zu |", p->position, p->n);
		ratio_cells(out, &p->s);
	}
}

static void
md_reference(const struct rrun *r, FILE *out)
{
	size_t i;
	char *line;

	if (!r->has_ref && r->ref_note == NULL)
		return;
	fputs("\n### Published reference\n\n", out);
	if (!r->has_ref) {
		md(out, r->ref_note);
		fputs("\n", out);
		return;
	}
	fprintf(out, "%s (reference/seeds.json version %d, %s): ", r->ref.id,
	    r->ref.version, r->ref.document);
	md(out, r->ref.note);
	fputs(".\n\n", out);
	for (i = 0; i < r->nranked; i++) {
		line = report_reference_line(r, r->ranked[i]);
		fputs("- ", out);
		md(out, line);
		fputs("\n", out);
		free(line);
	}
}

static void
md_warnings(const struct rrun *r, FILE *out)
{
	size_t i, n = 0;

	fputs("\n### Warnings\n\n", out);
	for (i = 0; i < r->ninvalid; i++, n++) {
		fprintf(out, "- invalid sample: %s %s (%s) sample %" PRId64
		    ": ", r->invalid[i].host, r->invalid[i].variant,
		    r->invalid[i].label, r->invalid[i].index);
		md(out, r->invalid[i].reason);
		fputs("\n", out);
	}
	if (r->moved > 0) {
		fprintf(out, "- %" PRId64 " of %" PRId64 " samples: clock "
		    "estimate moved over %d%% across the sample (cycles less "
		    "certain)\n", r->moved, r->clocked, CLOCK_MOVED_PCT);
		n++;
	}
	for (i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].status != NULL &&
		    strcmp(r->hosts[i].status, "ok") != 0) {
			fprintf(out, "- host \"%s\" %s: ", r->hosts[i].name,
			    r->hosts[i].status);
			md(out, r->hosts[i].error);
			fputs("\n", out);
			n++;
		}
		if (r->hosts[i].pin_error != NULL) {
			fprintf(out, "- host \"%s\" not pinned: ",
			    r->hosts[i].name);
			md(out, r->hosts[i].pin_error);
			fputs("\n", out);
			n++;
		}
	}
	for (i = 0; i < r->nvariants; i++, n++) {
		fprintf(out, "- variant \"%s\" on \"%s\" (%s) %s: ",
		    r->variants[i].variant, r->variants[i].host,
		    r->variants[i].label, r->variants[i].status);
		md(out, r->variants[i].reason);
		fputs("\n", out);
	}
	for (i = 0; i < r->nevents; i++, n++) {
		fprintf(out, "- %s%s%s at %s: ", r->events[i].level,
		    r->events[i].host != NULL ? " on " : "",
		    r->events[i].host != NULL ? r->events[i].host : "",
		    r->events[i].at);
		md(out, r->events[i].message);
		fputs("\n", out);
	}
	if (n == 0)
		fputs("None.\n", out);
}

void
report_markdown(const struct rrun *runs, size_t n, FILE *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			fputs("\n", out);
		md_header(&runs[i], out);
		md_hosts(&runs[i], out);
		md_rows(&runs[i], out);
		md_ratios(&runs[i], out);
		md_positions(&runs[i], out);
		md_reference(&runs[i], out);
		md_warnings(&runs[i], out);
	}
}

/*
 * The report as Markdown (GitHub-flavoured tables): the same content as
 * the text, for issues, papers and wikis.  Host text is escaped so that
 * it cannot break a table.
 */
#include "report-builds.h"
#include "report-table.h"
#include "study.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
md_header(const struct rrun *r, FILE *out)
{
	size_t i;

	fprintf(out, "## %s, run %" PRId64 ": %s%s\n\n", r->study, r->id,
	    r->status, r->exploratory ? " (exploratory)" : "");
	fputs("| | |\n| --- | --- |\n", out);
	fprintf(out, "| steps | %" PRId64 " per sample, %" PRId64
	    " samples per variant |\n", r->steps, r->samples);
	if (r->msg_len > 0)
		fprintf(out, "| message | %" PRId64 " bytes a %s (`--msg-len %"
		    PRId64 "`): the previous digest, then zeros |\n",
		    r->msg_len, study_unit(r->study), r->msg_len);
	fprintf(out, "| seed | `%s` |\n", r->seed);
	fprintf(out, "| started | %s |\n| finished | %s |\n", r->started_at,
	    r->finished_at != NULL ? r->finished_at : "-");
	fputs("| command | ", out);
	report_md_text(out, r->command);
	fputs(" |\n", out);
	if (r->imported_from != NULL) {
		fprintf(out, "| imported | run %" PRId64 " of ", r->origin_run);
		report_md_text(out, r->imported_from);
		fputs(r->imported_signed ? ", signature verified |\n" :
		    ", **unsigned**: nothing checked who measured it |\n", out);
	}
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
	static const struct report_col hosts[] = {
		C_HOST, C_HOST_STATUS, { "clock", 'l', COL_CLOCK },
		{ "cpu", 'l', COL_CPU }, C_ARCH, { "openssl", 'l', COL_OPENSSL },
		C_GOVERNOR, C_PINNING, C_COUNTERS, C_NOISE,
	};
	static const struct report_col builds[] = {
		C_BUILD, C_BUILD_HOST, C_COMPILER, { "cflags", 'l', COL_CFLAGS },
		C_BUILD_STATUS, C_VERSION,
	};
	struct table t = { 0 };
	char *vs;

	fputs("\n### Hosts\n\n", out);
	report_host_table(r, hosts, sizeof hosts / sizeof *hosts, &t);
	table_markdown(&t, out);
	if (r->nbuilds == 0)
		return;
	fputs("\n### Builds\n\n", out);
	report_build_table(r, builds, sizeof builds / sizeof *builds, &t);
	table_markdown(&t, out);
	if ((vs = report_source_variants(r)) == NULL)
		return;
	report_source_table(r, &t);
	fputs("\n### Upstream sources\n\nOf ", out);
	report_md_text(out, vs);
	fputs(", as each build recorded them.\n\n", out);
	table_markdown(&t, out);
	free(vs);
}

static void
md_rows(const struct rrun *r, FILE *out)
{
	char ns_head[64], cycles_head[64];
	const struct report_col cols[] = {
		C_CELL_STATS, { ns_head, 'r', COL_NS },
		{ cycles_head, 'r', COL_CYCLES },
		{ "clock MHz", 'r', COL_CLOCK_MHZ },
		{ "digest", 'l', COL_DIGEST_STRONG }, C_INVALID,
	};
	struct table t = { 0 };

	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	snprintf(cycles_head, sizeof cycles_head, "cycles/%s",
	    study_unit(r->study));
	fprintf(out, "\n### %s/s per cell\n\nMedian, quartiles and range over "
	    "the n valid samples; cv: coefficient of variation; clock: the "
	    "median of the samples' own estimates (cycles = clock / rate).\n"
	    "\n", study_unit_plural(r->study));
	report_row_table(r, cols, sizeof cols / sizeof *cols, &t);
	table_markdown(&t, out);
	if (r->nrows == 0)
		fputs("| no samples | | | | | | | | | | | | | | |\n", out);
}

/* ratio, interval and verdict: three cells. */
static void
ratio_cells(struct table *t, const struct stats_ratio *s)
{
	table_cell(t, xasprintf("%.3fx", s->ratio));
	/* As is: "[no interval: n < 2]" is no markup. */
	table_raw(t, report_interval_str(s));
	table_cell(t, xstrdup(report_verdict_phrase(s)));
}

/* A note under the best table, the first after a blank line. */
static void
md_note(void *out, size_t i, const char *host, const char *text)
{
	fprintf(out, "%s- **%s**: %s\n", i == 0 ? "\n" : "", host, text);
}

/* Why a section's ratios have no verdict, a paragraph; frees note. */
static void
md_withheld(FILE *out, char *note)
{
	if (note == NULL)
		return;
	fputc('\n', out);
	report_md_text(out, note);
	fputc('\n', out);
	free(note);
}

static void
md_ratios(const struct rrun *r, FILE *out)
{
	static const char *best_heads[] = { "host", "variant", NULL, NULL };
	/*
	 * "a / b", not "faster" and "slower": a ratio the interval cannot
	 * tell from 1 names no faster host.
	 */
	static const char *ratio_heads[] = {
		"a", "b", "a / b", "interval", "verdict"
	};
	static const char *vs_heads[] = {
		"host", "variant", "/ best", "interval", "verdict"
	};
	char rate_head[64], ns_head[64];
	const char *heads[4] = { best_heads[0], best_heads[1], rate_head,
	    ns_head };
	struct table t = { .ncols = 4, .heads = heads, .align = "llrr" };
	const struct rratio *x;
	const struct rrow **rows;
	size_t i, n;

	snprintf(rate_head, sizeof rate_head, "median %s/s",
	    study_unit_plural(r->study));
	snprintf(ns_head, sizeof ns_head, "ns/%s", study_unit(r->study));
	fputs("\n### Best valid variant per host\n\n", out);
	report_best_rows(r, &t);
	table_markdown(&t, out);
	/* Beside the figures, not only among the warnings. */
	report_best_notes(r, 1, md_note, out);
	if (r->nratios > 0) {
		fprintf(out, "\n### Ratios of best rates\n\n%d%% bootstrap "
		    "interval over the samples.\n\n", STATS_LEVEL_PCT);
		t = (struct table){ .ncols = 5, .heads = ratio_heads,
		    .align = "llrll" };
		for (i = 0; i < r->nratios; i++) {
			x = &r->ratios[i];
			table_cell(&t, xstrdup(x->a->host));
			table_cell(&t, xstrdup(x->b->host));
			if (x->refused == NULL) {
				char *d = report_ratio_doubted(r, x);
				char *c = report_ratio_control(r, x);

				table_cell(&t, xasprintf("%.3fx", x->s.ratio));
				table_raw(&t, report_interval_str(&x->s));
				table_cell(&t, xasprintf("%s%s%s%s%s",
				    report_verdict_phrase(&x->s), d != NULL ?
				    "; doubtful: " : "", d != NULL ? d : "",
				    c != NULL ? "; control: " : "", c != NULL ?
				    c : ""));
				free(d);
				free(c);
				continue;
			}
			table_cell(&t, xstrdup("-"));
			table_cell(&t, xstrdup("-"));
			table_cell(&t, xasprintf("refused: %s", x->refused));
		}
		table_markdown(&t, out);
		md_withheld(out, report_ratios_withheld_note(r));
	}
	fputs("\n### Variants against their host's best\n\n", out);
	t = (struct table){ .ncols = 5, .heads = vs_heads, .align = "llrll" };
	rows = report_vs_best(r, 0, &n);
	for (i = 0; i < n; i++) {
		table_cell(&t, xstrdup(rows[i]->host));
		table_cell(&t, xasprintf("%s (%s)", rows[i]->variant,
		    rows[i]->label));
		ratio_cells(&t, &rows[i]->vs_best);
	}
	free(rows);
	table_markdown(&t, out);
	md_withheld(out, report_vs_best_withheld_note(r));
}

static void
md_positions(const struct rrun *r, FILE *out)
{
	static const char *heads[] = {
		"position", "n", "/ others", "interval", "verdict"
	};
	struct table t = { .ncols = 5, .heads = heads, .align = "rrrll" };
	const struct rposition *p;
	size_t i;

	fputs("\n### Position bias\n\n", out);
	if (r->npositions == 0) {
		fputs("Not measurable: one position only.\n", out);
		return;
	}
	fprintf(out, "%s Each valid rate is divided by its cell's mean and "
	    "pooled by its place in the alternating order; each position is "
	    "compared with all the others by a rank test, and the verdicts "
	    "are Holm-corrected over the %zu positions.\n\n",
	    r->position_bias ? "**Some positions in the alternating order "
	    "shift results.**" : "No position in the alternating order "
	    "shifts results at this precision.", r->npositions);
	for (i = 0; i < r->npositions; i++) {
		p = &r->positions[i];
		table_cell(&t, xasprintf("%" PRId64, p->position));
		table_cell(&t, xasprintf("%zu", p->n));
		ratio_cells(&t, &p->s);
	}
	table_markdown(&t, out);
}

static void
md_reference(const struct rrun *r, FILE *out)
{
	char **lines;
	size_t i, n;

	if (!r->has_ref && r->ref_note == NULL)
		return;
	fputs("\n### Published reference\n\n", out);
	if (!r->has_ref) {
		report_md_text(out, r->ref_note);
		fputs("\n", out);
		return;
	}
	fprintf(out, "%s (reference/seeds.json version %d, %s): ", r->ref.id,
	    r->ref.version, r->ref.document);
	report_md_text(out, r->ref.note);
	fputs(".\n\n", out);
	lines = report_reference_lines(r, &n);
	for (i = 0; i < n; i++) {
		fputs("- ", out);
		report_md_text(out, lines[i]);
		fputs("\n", out);
		free(lines[i]);
	}
	free(lines);
}

static void
md_warnings(const struct rrun *r, FILE *out)
{
	fputs("\n### Warnings\n\n", out);
	report_print_warnings(r, out, "- ", NULL, report_md_text, "\n",
	    "None.\n");
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
		report_builds_tables(&runs[i], out, 0);
		md_reference(&runs[i], out);
		md_warnings(&runs[i], out);
	}
}

/* Per-build rates, targeting ratios and phase shares (report-builds.h). */
#include "report-builds.h"

#include "report-model.h"
#include "report-table.h"
#include "report.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *
text(const char *s)
{
	return s != NULL ? s : "-";
}

const char *
report_targeting_verdict(const struct rtargeting *t)
{
	return t->native > 0 ? "native faster in every sample" :
	    t->native < 0 ? "native slower in every sample" :
	    "within noise (ranges overlap)";
}

/* The verdict's key in JSON. */
static const char *
targeting_key(const struct rtargeting *t)
{
	return t->native > 0 ? "native_faster" : t->native < 0 ?
	    "native_slower" : "within_noise";
}

/*
 * Pair p seen from build id of (host, variant): *s its rate over the
 * other build's (p inverted when id is p's older build b), *other that
 * build; 0 when p is not of them.
 */
static int
pair_from(const struct rpaired *p, const char *host, const char *variant,
    int64_t id, struct stats_ratio *s, int64_t *other)
{
	if (strcmp(p->host, host) != 0 || strcmp(p->variant, variant) != 0)
		return 0;
	if (p->a_id == id) {
		*s = p->s;
		*other = p->b_id;
		return 1;
	}
	if (p->b_id != id)
		return 0;
	s->ratio = 1 / p->s.ratio;
	s->lo = 1 / p->s.hi;
	s->hi = 1 / p->s.lo;
	s->verdict = p->s.verdict == STATS_FASTER ? STATS_SLOWER :
	    p->s.verdict == STATS_SLOWER ? STATS_FASTER : STATS_UNDECIDED;
	*other = p->a_id;
	return 1;
}

/*
 * The best valid row of host h against another build of the host, from
 * their pair p; *other that build's label, *other_id its id; 0 if p is
 * not the best's.
 */
static int
best_against(const struct rhost *h, const struct rpaired *p,
    struct stats_ratio *s, const char **other, int64_t *other_id)
{
	const struct rrow *b = h->best;

	if (!pair_from(p, h->name, b->variant, b->build_id, s, other_id))
		return 0;
	*other = *other_id == p->a_id ? p->a_label : p->b_label;
	return 1;
}

const struct rpaired *
report_paired(const struct rrun *r, const struct rrow *a,
    const struct rrow *b, struct stats_ratio *s)
{
	int64_t other;
	size_t i;

	if (strcmp(a->host, b->host) != 0 || strcmp(a->variant, b->variant) != 0)
		return NULL;
	for (i = 0; i < r->npaired; i++)
		if (pair_from(&r->paired[i], a->host, a->variant, a->build_id,
		    s, &other) && other == b->build_id)
			return &r->paired[i];
	return NULL;
}

static size_t
wider(size_t w, const char *s, size_t extra)
{
	size_t n = strlen(s) + extra;

	return n > w ? n : w;
}

static const char *paired_heads[] = { "host", "variant", "build",
    "baseline", "pairs", "ratio", "interval", "verdict" };

/*
 * The paired ratios against each host's baseline as rows of t (8
 * columns), the widest host and build in *hw and *aw; returns how many
 * have too few pairs for a verdict.
 */
static size_t
paired_rows(const struct rrun *r, struct table *t, size_t *hw, size_t *aw)
{
	size_t i, few = 0;

	for (i = 0; i < r->npaired; i++) {
		const struct rpaired *p = &r->paired[i];

		if (!p->baseline)
			continue;
		few += p->n >= 2 && p->n < STATS_SIGN_MIN_PAIRS;
		*hw = wider(*hw, p->host, 0);
		*aw = wider(*aw, p->a_label, 0);
		table_cell(t, xstrdup(p->host));
		table_cell(t, xasprintf("%s%s", p->variant,
		    report_is_control(r, p->variant) ? " (control)" : ""));
		table_cell(t, xstrdup(p->a_label));
		table_cell(t, xstrdup(p->b_label));
		table_cell(t, xasprintf("%zu", p->n));
		table_cell(t, xasprintf("%5.3fx", p->s.ratio));
		table_cell(t, report_interval_str(&p->s));
		table_cell(t, xstrdup(report_verdict_phrase(&p->s)));
	}
	return few;
}

/* Why an interval clear of 1 may stand beside no verdict. */
static char *
few_pairs_note(void)
{
	return xasprintf("with fewer than %d pairs no verdict: the sign test "
	    "of %d pairs all on one side is p = %.4g, over %d%% (run "
	    "--samples %d or more)", STATS_SIGN_MIN_PAIRS,
	    STATS_SIGN_MIN_PAIRS - 1, ldexp(1, 2 - STATS_SIGN_MIN_PAIRS),
	    100 - STATS_LEVEL_PCT, STATS_SIGN_MIN_PAIRS);
}

/*
 * Why samples are in no pair (u, of r->unpaired): "8 samples of c-fused
 * (clang) on \"local\" measured in a later launch than gcc's, not
 * paired"; caller frees.
 */
static char *
unpaired_note(const struct runpaired *u)
{
	return xasprintf("%zu sample%s of %s (%s) on \"%s\" measured in a "
	    "later launch than %s's, not paired", u->n, u->n == 1 ? "" : "s",
	    u->variant, u->later, u->host, u->earlier);
}

enum builds_as { AS_TEXT, AS_MARKDOWN, AS_HTML };

/* A paragraph of text in Markdown or HTML, escaped. */
static void
para(FILE *out, enum builds_as as, const char *text)
{
	fputs(as == AS_HTML ? "<p>" : "\n", out);
	(as == AS_HTML ? report_html_text : report_md_text)(out, text);
	fputs(as == AS_HTML ? "</p>\n" : "\n", out);
}

/* Why samples are in no pair, a paragraph each (Markdown or HTML). */
static void
unpaired_paras(const struct rrun *r, FILE *out, enum builds_as as)
{
	char *note;
	size_t i;

	for (i = 0; i < r->nunpaired; i++) {
		note = unpaired_note(&r->unpaired[i]);
		para(out, as, note);
		free(note);
	}
}

/*
 * The paired ratios against each host's baseline, a table as every text
 * table (table_print), with why samples were left out of the pairs, then
 * each host's best valid (variant, build) against the host's other
 * builds of that variant.
 */
static void
paired_text(const struct rrun *r, FILE *out)
{
	struct table t = { .ncols = 8, .heads = paired_heads,
	    .align = "llllrrll" };
	struct stats_ratio s;
	const char *other;
	int64_t other_id;
	char *note, **lines = NULL;
	size_t i, j, n, nl, hw = 4, aw = 5, few;

	few = paired_rows(r, &t, &hw, &aw);
	if (t.ncells == 0 && r->nunpaired == 0)
		return;
	fprintf(out, "\nbuilds against their host's baseline, paired: rate / "
	    "the baseline's in the\nsamples of one index, side by side in one "
	    "alternating order, %d%% interval\n", STATS_LEVEL_PCT);
	if (t.ncells > 0)
		table_print(&t, out);
	if (few > 0) {
		note = few_pairs_note();
		report_emit_wrapped(out, "  ", note);
		free(note);
	}
	for (i = 0; i < r->nunpaired; i++) {
		note = unpaired_note(&r->unpaired[i]);
		report_emit_wrapped(out, "  ", note);
		free(note);
	}
	/*
	 * A host with one build, or its best in one, has nothing here; the
	 * lines go out as a table's, their width said when too wide.
	 */
	for (nl = 0, i = 0; i < r->nhosts; i++) {
		const struct rhost *h = &r->hosts[i];

		for (n = 0, j = 0; h->best != NULL && j < r->npaired; j++)
			n += best_against(h, &r->paired[j], &s, &other,
			    &other_id);
		if (n == 0)
			continue;
		lines = xrealloc(lines, (nl + n + 1) * sizeof *lines);
		lines[nl++] = xasprintf("  %-*s  %s (%s)", (int)hw, h->name,
		    h->best->variant, text(h->best->label));
		for (j = 0; j < r->npaired; j++) {
			char *iv;

			if (!best_against(h, &r->paired[j], &s, &other,
			    &other_id))
				continue;
			iv = report_interval_str(&s);
			lines[nl++] = xasprintf("  %-*s    against %-*s  %5.3fx  "
			    "%-16s  %s", (int)hw, "", (int)aw, other, s.ratio,
			    iv, report_verdict_phrase(&s));
			free(iv);
		}
	}
	if (nl > 0) {
		fprintf(out, "\nbest valid (variant, compiler) per host, "
		    "against its other builds, paired\n");
		report_emit_rows(out, lines, nl);
	}
	free(lines);
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
	int64_t other_id;
	size_t i, j;

	a = cJSON_AddArrayToObject(o, "against_baseline");
	for (i = 0; i < r->npaired; i++) {
		const struct rpaired *p = &r->paired[i];

		if (!p->baseline)
			continue;
		x = cJSON_CreateObject();
		report_json_str(x, "host", p->host);
		report_json_str(x, "variant", p->variant);
		cJSON_AddBoolToObject(x, "control", report_is_control(r,
		    p->variant));
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
			if (!best_against(h, &r->paired[j], &s, &other,
			    &other_id))
				continue;
			v = cJSON_CreateObject();
			cJSON_AddNumberToObject(v, "build_id", (double)other_id);
			report_json_str(v, "build", other);
			cJSON_AddNumberToObject(v, "pairs",
			    (double)r->paired[j].n);
			json_ratio(v, &s);
			cJSON_AddItemToArray(b, v);
		}
		cJSON_AddItemToArray(a, x);
	}
	if (r->nunpaired > 0)
		a = cJSON_AddArrayToObject(o, "unpaired");
	for (i = 0; i < r->nunpaired; i++) {
		const struct runpaired *u = &r->unpaired[i];

		x = cJSON_CreateObject();
		report_json_str(x, "host", u->host);
		report_json_str(x, "variant", u->variant);
		report_json_str(x, "build", u->later);
		report_json_str(x, "earlier", u->earlier);
		cJSON_AddNumberToObject(x, "samples", (double)u->n);
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
			    "bootstrap interval over the pairs. A verdict also "
			    "needs the sign test of the pairs under %d%%, which "
			    "takes %d pairs at least.</p>\n"
			    "<div class=\"scroll\"><table><tr><th>host</th>"
			    "<th>variant</th><th>build</th><th>baseline</th>"
			    "<th>pairs</th><th>ratio</th><th>interval</th>"
			    "<th>verdict</th></tr>\n", STATS_LEVEL_PCT,
			    100 - STATS_LEVEL_PCT, STATS_SIGN_MIN_PAIRS);
		any = 1;
		fputs("<tr><td>", out);
		report_html_text(out, p->host);
		fputs("</td><td>", out);
		report_html_text(out, p->variant);
		fprintf(out, "%s</td><td>", report_is_control(r, p->variant) ?
		    " (control)" : "");
		report_html_text(out, p->a_label);
		fputs("</td><td>", out);
		report_html_text(out, p->b_label);
		iv = report_interval_str(&p->s);
		fprintf(out, "</td><td class=\"n\">%zu</td><td class=\"n\">"
		    "%.3fx</td><td>", p->n, p->s.ratio);
		report_html_text(out, iv);
		fprintf(out, "</td><td class=\"%s\">%s</td></tr>\n",
		    stats_verdict_key(p->s.verdict),
		    report_verdict_phrase(&p->s));
		free(iv);
	}
	if (any)
		fputs("</table></div>\n", out);
	if (!any && r->nunpaired > 0)
		fputs("<h3>Paired ratios between builds</h3>\n", out);
	unpaired_paras(r, out, AS_HTML);
}


/* The per-build sections of r as JSON members of run object o. */
void
report_builds_json_sections(const struct rrun *r, cJSON *o)
{
	cJSON *a, *x, *ns, *share;
	size_t i, k;

	a = cJSON_AddArrayToObject(o, "build_rates");
	for (i = 0; i < r->nrates; i++) {
		const struct rrate *b = &r->rates[i];

		x = cJSON_CreateObject();
		report_json_str(x, "host", b->host);
		cJSON_AddNumberToObject(x, "build_id", (double)b->build_id);
		report_json_str(x, "compiler", b->compiler);
		report_json_str(x, "targeting", b->targeting);
		report_json_str(x, "variant", b->variant);
		cJSON_AddNumberToObject(x, "n", (double)b->n);
		report_json_num(x, "median_rate", b->median, b->median > 0);
		report_json_num(x, "min_rate", b->min, b->min > 0);
		report_json_num(x, "max_rate", b->max, b->max > 0);
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(o, "targeting");
	for (i = 0; i < r->ntargetings; i++) {
		const struct rtargeting *t = &r->targetings[i];

		x = cJSON_CreateObject();
		report_json_str(x, "host", t->host);
		report_json_str(x, "compiler", t->compiler);
		report_json_str(x, "variant", t->variant);
		report_json_num(x, "ratio", t->ratio, isfinite(t->ratio));
		report_json_num(x, "native_min_rate", t->native_min, 1);
		report_json_num(x, "native_max_rate", t->native_max, 1);
		report_json_num(x, "default_min_rate", t->default_min, 1);
		report_json_num(x, "default_max_rate", t->default_max, 1);
		report_json_str(x, "verdict", targeting_key(t));
		cJSON_AddItemToArray(a, x);
	}
	x = cJSON_AddObjectToObject(o, "phases");
	a = cJSON_AddArrayToObject(x, "names");
	for (k = 0; k < r->nphase_names; k++)
		cJSON_AddItemToArray(a, cJSON_CreateString(r->phase_names[k]));
	report_json_str(x, "note", r->phase_note);
	a = cJSON_AddArrayToObject(x, "cells");
	for (i = 0; i < r->nphases; i++) {
		const struct rphases *p = &r->phases[i];
		cJSON *e = cJSON_CreateObject();

		report_json_str(e, "host", p->host);
		cJSON_AddNumberToObject(e, "build_id", (double)p->build_id);
		report_json_str(e, "targeting", p->targeting);
		report_json_str(e, "variant", p->variant);
		cJSON_AddNumberToObject(e, "n", (double)p->n);
		cJSON_AddNumberToObject(e, "total_ns", p->total);
		ns = cJSON_AddObjectToObject(e, "ns");
		share = cJSON_AddObjectToObject(e, "share");
		for (k = 0; k < r->nphase_names; k++) {
			cJSON_AddNumberToObject(ns, r->phase_names[k], p->ns[k]);
			report_json_num(share, r->phase_names[k], p->ns[k] /
			    p->total, p->total > 0);
		}
		cJSON_AddItemToArray(a, e);
	}
}

/*
 * A section's table under its title: text as every text table of the
 * report (table_print: padded columns, its width said when wider than
 * the terminal), or Markdown or HTML.
 */
static void
section(FILE *out, enum builds_as as, const char *title, const char *more,
    struct table *t)
{
	switch (as) {
	case AS_TEXT:
		fprintf(out, "\n%s%s\n", title, more);
		table_print(t, out);
		break;
	case AS_MARKDOWN:
		fprintf(out, "\n### %c%s\n\n", toupper((unsigned char)*title),
		    title + 1);
		table_markdown(t, out);
		break;
	case AS_HTML:
		fprintf(out, "<h3>%c%s</h3>\n", toupper((unsigned char)*title),
		    title + 1);
		table_html(t, out);
		break;
	}
}

/*
 * The rates, targeting ratios and phase shares as tables; each section
 * only when the run has rows for it.
 */
static void
builds_tables(const struct rrun *r, FILE *out, enum builds_as as)
{
	static const char *rate_heads[] = { "host", "build", "compiler",
	    "targeting", "variant", "n", "median/s", "min/s", "max/s" };
	static const char *targeting_heads[] = { "host", "compiler",
	    "variant", "native / default", "verdict" };
	struct table t = { .ncols = 9, .heads = rate_heads,
	    .align = "lrllllrrr" };
	char buf[16];
	const char **heads;
	char *align;
	size_t i, k, nc;

	for (i = 0; i < r->nrates; i++) {
		const struct rrate *b = &r->rates[i];

		table_cell(&t, xstrdup(text(b->host)));
		table_cell(&t, xasprintf("%" PRId64, b->build_id));
		table_cell(&t, xstrdup(text(b->compiler)));
		table_cell(&t, xstrdup(text(b->targeting)));
		table_cell(&t, xstrdup(text(b->variant)));
		table_cell(&t, xasprintf("%" PRId64, b->n));
		report_format_rate(b->median, buf, sizeof buf);
		table_cell(&t, xstrdup(buf));
		report_format_rate(b->min, buf, sizeof buf);
		table_cell(&t, xstrdup(buf));
		report_format_rate(b->max, buf, sizeof buf);
		table_cell(&t, xstrdup(buf));
	}
	if (t.ncells > 0)
		section(out, as, "rates per build", "", &t);
	t = (struct table){ .ncols = 5, .heads = targeting_heads,
	    .align = "lllrl" };
	for (i = 0; i < r->ntargetings; i++) {
		const struct rtargeting *x = &r->targetings[i];

		table_cell(&t, xstrdup(text(x->host)));
		table_cell(&t, xstrdup(text(x->compiler)));
		table_cell(&t, xstrdup(text(x->variant)));
		table_cell(&t, xasprintf("%.3f", x->ratio));
		table_cell(&t, xstrdup(report_targeting_verdict(x)));
	}
	if (t.ncells > 0)
		section(out, as, "native / default targeting", "", &t);
	/* host, build, targeting, variant, n, each phase, total. */
	nc = 6 + r->nphase_names;
	t = (struct table){ .ncols = nc };
	t.mem = xcalloc(1, nc * sizeof *heads + nc + 1);
	heads = t.mem;
	align = (char *)(heads + nc);
	memcpy(heads, (const char *[]){ "host", "build", "targeting",
	    "variant", "n" }, 5 * sizeof *heads);
	memcpy(align, "lrllr", 5);
	for (k = 0; k < r->nphase_names; k++) {
		heads[5 + k] = r->phase_names[k];
		align[5 + k] = 'r';
	}
	heads[nc - 1] = "total";
	align[nc - 1] = 'r';
	t.heads = heads;
	t.align = align;
	for (i = 0; i < r->nphases; i++) {
		const struct rphases *p = &r->phases[i];
		double sum = 0;

		if (!(p->total > 0))
			continue;
		table_cell(&t, xstrdup(text(p->host)));
		table_cell(&t, xasprintf("%" PRId64, p->build_id));
		table_cell(&t, xstrdup(text(p->targeting)));
		table_cell(&t, xstrdup(text(p->variant)));
		table_cell(&t, xasprintf("%" PRId64, p->n));
		for (k = 0; k < r->nphase_names; k++) {
			sum += p->ns[k];
			table_cell(&t, xasprintf("%.2f%%", 100 * p->ns[k] /
			    p->total));
		}
		table_cell(&t, xasprintf("%.2f%%", 100 * sum / p->total));
	}
	if (t.ncells == 0) {
		free(t.mem);
		return;
	}
	section(out, as, "phase shares of hashing time", as == AS_TEXT ?
	    " (sum over valid samples)" : "", &t);
	if (r->phase_note == NULL)
		return;
	if (as == AS_TEXT) {
		report_emit_wrapped(out, "  note: ", r->phase_note);
		return;
	}
	para(out, as, r->phase_note);
}

void
report_builds_tables(const struct rrun *r, FILE *out, int html)
{
	struct table t = { .ncols = 8, .heads = paired_heads,
	    .align = "llllrrll" };
	size_t hw = 0, aw = 0, few;
	char *note;

	/* HTML has its own paired table (report_builds_html). */
	if (!html && (few = paired_rows(r, &t, &hw, &aw), t.ncells > 0)) {
		section(out, AS_MARKDOWN, "paired ratios between builds", "",
		    &t);
		if (few > 0) {
			note = few_pairs_note();
			para(out, AS_MARKDOWN, note);
			free(note);
		}
	}
	if (!html)
		unpaired_paras(r, out, AS_MARKDOWN);
	builds_tables(r, out, html ? AS_HTML : AS_MARKDOWN);
}

void
report_builds_text(const struct rrun *r, FILE *out)
{
	paired_text(r, out);
	builds_tables(r, out, AS_TEXT);
}

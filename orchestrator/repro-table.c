/*
 * The published table of a reproduction (repro.h): for each of its runs,
 * the seed's figures from reference/seeds.json, each host's best beside
 * the seed's machine it stands for (hosts.toml `reference`), and the
 * seed's cross-machine ratios beside the same ratios between its hosts.
 * Read from results.db alone, so `report --reproduce` prints what
 * `reproduce` printed.
 */
#include "db-report.h"
#include "db-repro.h"
#include "ebash.h"
#include "figures.h"
#include "repro.h"
#include "report-model.h"
#include "report.h"
#include "report-table.h"
#include "study.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIGURES 16

struct rhost_ref {
	char *host, *reference;		/* reference: "genoa", or NULL */
};

/*
 * A host's best row of a run at one targeting (NULL for a study built
 * once), as the report picks it: the highest median among the rows whose
 * digests agree run-wide; row NULL when the host has rows but none
 * agrees, so no figure of it is quoted.  Pointers into the run's model.
 */
struct rbest {
	const char	*host, *targeting;
	const struct rrow *row;
};

struct rrepro_run {
	char *part, *study, *status;
	int64_t run_id, steps, samples;
	struct rrun model;		/* the report's, of run_id */
	int loaded;
	struct rbest *best;
	size_t nbest;
};

struct table_data {
	struct rhost_ref *hosts;
	size_t nhosts;
	struct rrepro_run *runs;
	size_t nruns;
};

static void
on_host(const char *host, const char *reference, void *arg)
{
	struct table_data *d = arg;

	ALLOC_GROW(d->hosts, d->nhosts);
	d->hosts[d->nhosts].host = xstrdup(host);
	d->hosts[d->nhosts++].reference = reference ? xstrdup(reference) :
	    NULL;
}

static void
on_run(const struct db_repro_run *r, void *arg)
{
	struct table_data *d = arg;
	struct rrepro_run *x;

	ALLOC_GROW(d->runs, d->nruns);
	x = &d->runs[d->nruns++];
	memset(x, 0, sizeof *x);
	x->part = xstrdup(r->part);
	x->study = xstrdup(r->study);
	x->status = xstrdup(r->status);
	x->run_id = r->run_id;
	x->steps = r->steps;
	x->samples = r->samples;
}

/* By host, then targeting (none first), as the table lists them. */
static int
cmp_best(const void *a, const void *b)
{
	const struct rbest *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c != 0)
		return c;
	if (x->targeting == NULL || y->targeting == NULL)
		return (x->targeting != NULL) - (y->targeting != NULL);
	return strcmp(x->targeting, y->targeting);
}

static const char *
targeting_of(const struct rrun *m, const struct rrow *w)
{
	const struct rbuild *b = report_find_build(m, w->build_id);

	return b != NULL ? b->targeting : NULL;
}

static int
same_targeting(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/*
 * The best rows of x's model per host and targeting, as the report's
 * best valid variant: a row with no valid sample, or whose digests
 * disagree with the rest of the run, is no figure of the host.
 */
static void
find_best(struct rrepro_run *x)
{
	const struct rrun *m = &x->model;
	const struct rrow *w;
	const char *t;
	struct rbest *y;
	size_t i, j;

	for (i = 0; i < m->nrows; i++) {
		w = &m->rows[i];
		t = targeting_of(m, w);
		for (j = 0; j < x->nbest; j++)
			if (strcmp(x->best[j].host, w->host) == 0 &&
			    same_targeting(x->best[j].targeting, t))
				break;
		if (j == x->nbest) {
			ALLOC_GROW(x->best, x->nbest);
			y = &x->best[x->nbest++];
			y->host = w->host;
			y->targeting = t;
			y->row = NULL;
		}
		y = &x->best[j];
		if (w->n > 0 && w->digest == DIGEST_OK && (y->row == NULL ||
		    w->median > y->row->median))
			y->row = w;
	}
	qsort(x->best, x->nbest, sizeof *x->best, cmp_best);
}

static void
data_free(struct table_data *d)
{
	size_t i;

	for (i = 0; i < d->nhosts; i++) {
		free(d->hosts[i].host);
		free(d->hosts[i].reference);
	}
	for (i = 0; i < d->nruns; i++) {
		if (d->runs[i].loaded)
			report_free_run(&d->runs[i].model);
		free(d->runs[i].best);
		free(d->runs[i].part);
		free(d->runs[i].study);
		free(d->runs[i].status);
	}
	free(d->runs);
	free(d->hosts);
}

static const char *
reference_of(const struct table_data *d, const char *host)
{
	size_t i;

	for (i = 0; i < d->nhosts; i++)
		if (strcmp(d->hosts[i].host, host) == 0)
			return d->hosts[i].reference;
	return NULL;
}

/*
 * The best of run x on the host standing for machine (its row NULL when
 * none of its rows has a figure), and the host; NULL when no host does.
 */
static const struct rbest *
best_for(const struct table_data *d, const struct rrepro_run *x,
    const char *machine)
{
	const char *ref;
	size_t i;

	for (i = 0; i < x->nbest; i++) {
		ref = reference_of(d, x->best[i].host);
		if (ref != NULL && strcmp(ref, machine) == 0)
			return &x->best[i];
	}
	return NULL;
}

/* The first host standing for machine, whether it measured or not. */
static const char *
host_for(const struct table_data *d, const char *machine)
{
	size_t i;

	for (i = 0; i < d->nhosts; i++)
		if (d->hosts[i].reference != NULL &&
		    strcmp(d->hosts[i].reference, machine) == 0)
			return d->hosts[i].host;
	return NULL;
}

/* "seed:genoa" -> "genoa". */
static const char *
machine_of(const char *id)
{
	return strncmp(id, "seed:", 5) == 0 ? id + 5 : id;
}

static const struct rhost *
host_of(const struct rrun *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nhosts; i++)
		if (strcmp(m->hosts[i].name, name) == 0)
			return &m->hosts[i];
	return NULL;
}

/* Did host build with two compilers (not only two targetings)? */
static int
compilers_differ(const struct rrun *m, const char *host)
{
	const char *first = NULL;
	size_t i;

	for (i = 0; i < m->nrows; i++) {
		if (strcmp(m->rows[i].host, host) != 0 ||
		    m->rows[i].compiler == NULL)
			continue;
		if (first == NULL)
			first = m->rows[i].compiler;
		else if (strcmp(first, m->rows[i].compiler) != 0)
			return 1;
	}
	return 0;
}

/*
 * What makes row w of host h a figure to doubt, under the figure itself
 * rather than only among the report's warnings: a spread above
 * --max-cv, a cpu asked for and not held, noisy windows.
 */
static void
print_caveats(const struct rrun *m, const struct repro_part *p,
    const struct rhost *h, const struct rrow *w, FILE *out)
{
	/*
	 * Seed 000's best is of its own implementations; the control is
	 * the host's library through its API (EVP), another thing.  Other
	 * seeds timed their control as one of theirs (mul's c).
	 */
	if (p != NULL && p->control_uncounted &&
	    report_is_control(m, w->variant))
		fprintf(out, "      the study's control: %s is the host's "
		    "library through its API, not one of the seed's "
		    "implementations\n", w->variant);
	if (report_row_unstable(m, w))
		fprintf(out, "      unstable: cv %.2f%% > --max-cv %g%%, the "
		    "figure may not hold\n", 100 * w->desc.cv,
		    100 * m->max_cv);
	if (h == NULL)
		return;
	if (h->has_pin_cpu && h->pinned == 0)
		fprintf(out, "      not pinned: cpu %" PRId64 " was asked for"
		    "%s%s\n", h->pin_cpu, h->pin_error ? ": " : "",
		    h->pin_error ? h->pin_error : "");
	if (h->noisy > 0)
		fprintf(out, "      noisy: %" PRId64 " of %" PRId64 " windows "
		    "(seqorch report --run %" PRId64 ", warnings)\n", h->noisy,
		    h->windows, m->id);
	if (h->drifted > 0)
		fprintf(out, "      drifted: the clock or load moved in %" PRId64
		    " window%s (seqorch report --run %" PRId64 ", warnings)\n",
		    h->drifted, h->drifted == 1 ? "" : "s", m->id);
	if (h->shared_with != NULL)
		fprintf(out, "      one machine with \"%s\", measured at the "
		    "same time: a ratio of the two compares halves of it\n",
		    h->shared_with);
}

/*
 * Valid samples of one length that end in different digests are not all
 * the chain: said first, as the report's header says it, since no figure
 * of such a run is quoted below.
 */
static void
print_digests(const struct rrun *m, FILE *out)
{
	size_t i;

	for (i = 0; i < m->ndigests; i++)
		if (m->digests[i].distinct > 1)
			fprintf(out, "  digests   MISMATCH: %" PRId64 " valid "
			    "samples of %" PRId64 " steps end in %" PRId64
			    " different digests\n", m->digests[i].n,
			    m->digests[i].steps, m->digests[i].distinct);
}

/* The seed's figures of x's study, and each host's beside. */
static void
print_rates(const struct table_data *d, const struct rrepro_run *x,
    const struct repro_part *p, const struct figure *f, size_t nf, FILE *out)
{
	char a[16], b[16];
	const char *unit = study_unit_plural(x->study), *ref;
	size_t i;

	if (nf > 0)
		fprintf(out, "  published (%s):\n", f[0].document);
	for (i = 0; i < nf; i++) {
		report_format_rate(f[i].median_rate, a, sizeof a);
		fprintf(out, "    %-10s %s%s%s %s/s  %s\n", machine_of(f[i].id),
		    f[i].targeting ? f[i].targeting : "",
		    f[i].targeting ? " " : "", a, unit, f[i].variant);
	}
	fprintf(out, "  measured, the best valid variant per host:\n");
	if (x->nbest == 0)
		fprintf(out, "    no valid samples\n");
	for (i = 0; i < x->nbest; i++) {
		const struct rbest *y = &x->best[i];
		const struct rrow *w = y->row;
		const struct rhost *h = host_of(&x->model, y->host);
		size_t k;

		ref = reference_of(d, y->host);
		if (w == NULL) {
			/* The report's "no valid samples": nothing to quote. */
			fprintf(out, "    %-10s %s%sno figure: no valid sample "
			    "whose digest agrees with the run's (seqorch "
			    "report --run %" PRId64 ")\n", y->host,
			    y->targeting ? y->targeting : "",
			    y->targeting ? " " : "", x->run_id);
			continue;
		}
		report_format_rate(w->median, a, sizeof a);
		fprintf(out, "    %-10s %s%s%s %s/s  %s", y->host,
		    y->targeting ? y->targeting : "", y->targeting ? " " : "",
		    a, unit, w->variant);
		/* Two compilers: the rate is one of them, named. */
		if (compilers_differ(&x->model, y->host))
			fprintf(out, " (%s)", w->compiler);
		fprintf(out, ", n %" PRId64, w->n);
		for (k = 0; ref != NULL && k < nf; k++) {
			if (strcmp(machine_of(f[k].id), ref) != 0 ||
			    (f[k].targeting != NULL && (y->targeting == NULL ||
			    strcmp(f[k].targeting, y->targeting) != 0)))
				continue;
			report_format_rate(f[k].median_rate, b, sizeof b);
			fprintf(out, "; %s's %s: %.3fx", ref, b,
			    w->median / f[k].median_rate);
			break;
		}
		if (ref == NULL)
			fprintf(out, "; stands for no seed machine");
		fputc('\n', out);
		if (p != NULL && p->variants != NULL &&
		    !list_has(p->variants, ',', w->variant))
			fprintf(out, "      indicative only: %s, where the seed "
			    "ran %s\n", w->variant, p->variants);
		if (h != NULL && h->cpu_model != NULL)
			fprintf(out, "      measured on %s\n", h->cpu_model);
		print_caveats(&x->model, p, h, w, out);
	}
}

/*
 * The seed's cross-machine ratios beside the hosts' own: the ratio of
 * their best medians with the report's bootstrap interval and verdict,
 * since a bare ratio of two medians of three samples says nothing of
 * whether it could as well be 1.
 */
static void
print_ratios(const struct table_data *d, const struct rrepro_run *x,
    const struct figure_ratio *fr, size_t nr, FILE *out)
{
	const struct rbest *bf, *bs;
	struct report_draws draws = { 0 };
	struct report_withheld withheld = { 0 };
	struct rratio rr;
	char *iv;
	size_t i;

	for (i = 0; i < nr; i++) {
		fprintf(out, "  ratio %s / %s: published %.2fx", machine_of(
		    fr[i].faster), machine_of(fr[i].slower), fr[i].ratio);
		bf = best_for(d, x, machine_of(fr[i].faster));
		bs = best_for(d, x, machine_of(fr[i].slower));
		/* A host stands for it and has no row: not "no host". */
		if ((bf == NULL || bs == NULL) && (bf != NULL || host_for(d,
		    machine_of(fr[i].faster)) != NULL) && (bs != NULL ||
		    host_for(d, machine_of(fr[i].slower)) != NULL)) {
			fprintf(out, ", here: none, %s has no valid samples in "
			    "this run\n", bf == NULL ? host_for(d, machine_of(
			    fr[i].faster)) : host_for(d,
			    machine_of(fr[i].slower)));
			continue;
		}
		if (bf == NULL || bs == NULL) {
			fprintf(out, ", here: no two hosts stand for %s and "
			    "%s (hosts.toml `reference`)\n",
			    machine_of(fr[i].faster),
			    machine_of(fr[i].slower));
			continue;
		}
		if (bf->row == NULL && bs->row == NULL) {
			fprintf(out, ", here: none, %s and %s have no figure "
			    "(above)\n", bf->host, bs->host);
			continue;
		}
		if (bf->row == NULL || bs->row == NULL) {
			fprintf(out, ", here: none, %s has no figure (above)\n",
			    bf->row == NULL ? bf->host : bs->host);
			continue;
		}
		report_ratio(&draws, &x->model, bf->row, &x->model, bs->row,
		    &rr);
		if (rr.refused != NULL) {
			fprintf(out, ", here %s / %s refused, %s\n", bf->host,
			    bs->host, rr.refused);
			free(rr.refused);
			continue;
		}
		report_withheld_add(&withheld, &rr.s);
		iv = report_interval_str(&rr.s);
		fprintf(out, ", here %s / %s %.2fx %s %s", bf->host, bs->host,
		    rr.s.ratio, iv, report_verdict_phrase(&rr.s));
		/* The published order reversed here: said in words. */
		if (rr.s.verdict == STATS_SLOWER)
			fprintf(out, " (%s is the faster here)", bs->host);
		fputc('\n', out);
		free(iv);
	}
	report_draws_free(&draws);
	if ((iv = report_withheld_note(&withheld)) != NULL)
		report_emit_wrapped(out, "  ", iv);
	free(iv);
}

struct phase_acc {
	const char *host;
	const char *name;
	double value, ns;
};

static void
on_phase(const struct db_phase_sum *p, void *arg)
{
	struct phase_acc *a = arg;

	if (strcmp(p->host, a->host) != 0 || strncmp(p->name, "phase_", 6) !=
	    0 || strcmp(p->name + 6, a->name) != 0)
		return;
	a->value += p->value;
	a->ns += p->ns;
}

/* randomx: native / default per host, and the phases beside the seed's. */
static void
print_randomx(struct db *db, const struct table_data *d,
    const struct rrepro_run *x, const struct figure *f, size_t nf,
    FILE *out)
{
	const struct figure *ph = NULL;
	double nat, def, pub_nat = 0, pub_def = 0;
	struct phase_acc acc;
	struct so_err err;
	size_t i, j, k;

	for (k = 0; k < nf; k++) {
		if (f[k].targeting != NULL && strcmp(f[k].targeting,
		    "native") == 0)
			pub_nat = f[k].median_rate;
		if (f[k].targeting != NULL && strcmp(f[k].targeting,
		    "default") == 0)
			pub_def = f[k].median_rate;
		if (f[k].nphases > 0)
			ph = &f[k];
	}
	if (pub_nat > 0 && pub_def > 0)
		fprintf(out, "  native / default: published %.3fx "
		    "(graviton5)\n", pub_nat / pub_def);
	for (i = 0; i < d->nhosts; i++) {
		nat = def = 0;
		for (j = 0; j < x->nbest; j++) {
			const struct rbest *y = &x->best[j];

			if (strcmp(y->host, d->hosts[i].host) != 0 ||
			    y->targeting == NULL || y->row == NULL)
				continue;
			if (strcmp(y->targeting, "native") == 0)
				nat = y->row->median;
			else if (strcmp(y->targeting, "default") == 0)
				def = y->row->median;
		}
		if (nat > 0 && def > 0)
			fprintf(out, "  native / default: %s %.3fx\n",
			    d->hosts[i].host, nat / def);
		if (ph == NULL)
			continue;
		fprintf(out, "  phases, %s beside graviton5's:", d->hosts[i].host);
		for (k = 0; k < ph->nphases; k++) {
			acc = (struct phase_acc){ d->hosts[i].host,
			    ph->phases[k].name, 0, 0 };
			if (db_report_phases(db_handle(db), x->run_id, on_phase,
			    &acc, &err) != 0 || acc.ns <= 0)
				fprintf(out, "%s %s -", k ? ";" : "",
				    ph->phases[k].words);
			else
				fprintf(out, "%s %s %.1f%% (%.1f%%)", k ? ";" : "",
				    ph->phases[k].words, 100 * acc.value / acc.ns,
				    100 * ph->phases[k].share);
		}
		fputc('\n', out);
	}
}

/* Seed 003's table: one cell's cycles per byte, sample by sample. */
struct ecell {
	char *host, *study, *variant;
	int64_t msg_len;
	double *cpb;
	size_t n, counted;
};

struct ebash_data {
	struct ecell *cells;
	size_t ncells;
	const char *study;	/* of the run being read */
	int64_t lens[FIGURE_MAX_LENGTHS];
	size_t nlens;
};

static void
on_sample(const struct db_repro_sample *s, void *arg)
{
	struct ebash_data *e = arg;
	struct ecell *c = NULL;
	double cycles;
	size_t i;

	if (s->msg_len <= 0 || s->steps <= 0)
		return;
	for (i = 0; i < e->ncells; i++) {
		c = &e->cells[i];
		if (c->msg_len == s->msg_len && strcmp(c->host, s->host) == 0 &&
		    strcmp(c->study, e->study) == 0 &&
		    strcmp(c->variant, s->variant) == 0)
			break;
	}
	if (i == e->ncells) {
		ALLOC_GROW(e->cells, e->ncells);
		c = &e->cells[e->ncells++];
		memset(c, 0, sizeof *c);
		c->host = xstrdup(s->host);
		c->study = xstrdup(e->study);
		c->variant = xstrdup(s->variant);
		c->msg_len = s->msg_len;
	}
	for (i = 0; i < e->nlens && e->lens[i] != s->msg_len; i++)
		;
	if (i == e->nlens && e->nlens < FIGURE_MAX_LENGTHS - 1)
		e->lens[e->nlens++] = s->msg_len;
	/* Counted cycles, else the clock estimates around the sample. */
	if (s->cycles >= 0) {
		cycles = (double)s->cycles;
		c->counted++;
	} else
		cycles = (double)s->ns * (s->calib_mhz + s->calib_after_mhz) /
		    2000;
	ALLOC_GROW(c->cpb, c->n);
	c->cpb[c->n++] = cycles / ((double)s->steps * (double)s->msg_len);
}

static int
cmp_len(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Three figures, "?" after each when the cell's spread is large. */
static void
print_q(const double q[3], int have, FILE *out)
{
	int flag = have && ebash_large_variance(q);
	size_t k;

	for (k = 0; k < 3; k++) {
		if (have)
			fprintf(out, " %7.2f%s", q[k], flag ? "?" : " ");
		else
			fprintf(out, " %7s ", "-");
	}
	fputs(" ", out);
}

/* One row: the quartiles at every length, then the long column. */
static void
print_erow(const char *prim, const char *variant, const int64_t *lens,
    size_t nlens, double (*q)[3], const int *have, FILE *out)
{
	double lq[3];
	int lhave;

	fprintf(out, "%-9s %-18s", prim, variant);
	for (size_t i = 0; i < nlens; i++)
		print_q(q[i], have[i], out);
	lhave = nlens >= 2 && have[nlens - 2] && have[nlens - 1] &&
	    ebash_long(q[nlens - 2], (size_t)lens[nlens - 2], q[nlens - 1],
	    (size_t)lens[nlens - 1], lq) == 0;
	print_q(lq, lhave, out);
	fputc('\n', out);
}

static const char *
primitive_of(const char *study, const struct figure_cpb *f, size_t nf)
{
	return nf > 0 && f[0].primitive != NULL ? f[0].primitive : study;
}

/*
 * Seed 003's table in eBACS's layout: a row per primitive and variant,
 * cycles per byte as the 25%, 50% and 75% quartiles of its samples at
 * each length, and "long" (ebash_long) from the two longest; each host
 * apart, its cycles' source said; the seed's own rows beside.
 */
static int
print_ebash(struct db *db, const struct table_data *d, FILE *out,
    struct so_err *err)
{
	struct ebash_data e = { 0 };
	struct figure_cpb f[4];
	double (*q)[3];
	int *have;
	size_t i, j, k, nf, counted, all;
	const char *host = NULL, *prim;
	int rc = 0;

	for (i = 0; i < d->nruns && rc == 0; i++) {
		e.study = d->runs[i].study;
		rc = db_repro_samples(db, d->runs[i].run_id, on_sample, &e, err);
	}
	if (rc != 0)
		goto out;
	qsort(e.lens, e.nlens, sizeof *e.lens, cmp_len);
	q = xcalloc(e.nlens + 1, sizeof *q);
	have = xcalloc(e.nlens + 1, sizeof *have);
	fprintf(out, "\ncycles per byte by message length (eBACS's layout): "
	    "the 25%%, 50%% and 75%% quartiles of each variant's samples; "
	    "\"long\" is the slope between the two longest lengths; \"?\" "
	    "marks large variance (interquartile range above %.0f%% of the "
	    "median)\n", 100 * EBASH_LARGE_VARIANCE);
	for (i = 0; i < e.ncells; i++) {
		struct ecell *c = &e.cells[i];

		if (host != NULL && strcmp(host, c->host) == 0)
			continue;
		host = c->host;
		for (counted = all = 0, j = 0; j < e.ncells; j++)
			if (strcmp(e.cells[j].host, host) == 0) {
				counted += e.cells[j].counted;
				all += e.cells[j].n;
			}
		fprintf(out, "\n%s: cycles %s\n", host, counted == all ?
		    "counted (the cycle counter around each sample)" :
		    counted == 0 ? "from the calibrated clock (no cycle "
		    "counter here: ns x the clock estimates around each "
		    "sample)" : "counted where the counter was, else from the "
		    "calibrated clock");
		fprintf(out, "%-28s", "");
		for (k = 0; k < e.nlens; k++)
			fprintf(out, " %-26" PRId64, e.lens[k]);
		fprintf(out, " %-26s\n%-28s", "long", "");
		for (k = 0; k <= e.nlens; k++)
			fprintf(out, " %7s  %7s  %7s  ", "25%", "50%", "75%");
		fputc('\n', out);
		for (j = i; j < e.ncells; j++) {
			struct ecell *r = &e.cells[j];
			size_t m;

			/* A row once per (study, variant): at its first cell. */
			for (m = i; m < j; m++)
				if (strcmp(e.cells[m].host, host) == 0 &&
				    strcmp(e.cells[m].study, r->study) == 0 &&
				    strcmp(e.cells[m].variant, r->variant) == 0)
					break;
			if (strcmp(r->host, host) != 0 || m < j)
				continue;
			for (k = 0; k < e.nlens; k++) {
				have[k] = 0;
				for (m = j; m < e.ncells; m++) {
					struct ecell *x = &e.cells[m];

					if (x->msg_len != e.lens[k] ||
					    strcmp(x->host, host) != 0 ||
					    strcmp(x->study, r->study) != 0 ||
					    strcmp(x->variant, r->variant) != 0)
						continue;
					have[k] = ebash_quartiles(x->cpb, x->n,
					    q[k]) == 0;
					break;
				}
			}
			nf = figures_cpb(r->study, f, 4);
			prim = primitive_of(r->study, f, nf);
			print_erow(prim, r->variant, e.lens, e.nlens, q, have,
			    out);
		}
	}
	if (e.ncells == 0)
		fprintf(out, "\n  no valid samples\n");
	/* The seed's rows, at the lengths measured here. */
	for (host = NULL, i = 0; i < d->nruns; i++) {
		for (j = 0; j < i && strcmp(d->runs[j].study,
		    d->runs[i].study) != 0; j++)
			;
		if (j < i || (nf = figures_cpb(d->runs[i].study, f, 4)) == 0)
			continue;
		if (nf > 4)
			nf = 4;
		for (j = 0; j < nf; j++) {
			if (host == NULL)
				fprintf(out, "\npublished (%s): %s, %s\n",
				    f[j].document, machine_of(f[j].id),
				    f[j].machine);
			host = f[j].id;
			for (k = 0; k < e.nlens; k++) {
				size_t m;

				have[k] = 0;
				for (m = 0; m < f[j].nlengths; m++)
					if (f[j].bytes[m] == e.lens[k]) {
						memcpy(q[k], f[j].quartiles[m],
						    sizeof q[k]);
						have[k] = 1;
					}
			}
			fprintf(out, "%-9s %-18s", f[j].primitive, "seed");
			for (k = 0; k < e.nlens; k++)
				print_q(q[k], have[k], out);
			for (k = 0; k < f[j].nlengths && f[j].bytes[k] != 0;
			    k++)
				;
			print_q(k < f[j].nlengths ? f[j].quartiles[k] : q[0],
			    k < f[j].nlengths, out);
			fputc('\n', out);
		}
	}
	fprintf(out, "\nindicative only: the seed's figures are another "
	    "machine's (a 1 GHz riscv64 U54), its \"long\" from more "
	    "lengths than these; beside for scale only\n");
	free(q);
	free(have);
out:
	for (i = 0; i < e.ncells; i++) {
		free(e.cells[i].host);
		free(e.cells[i].study);
		free(e.cells[i].variant);
		free(e.cells[i].cpb);
	}
	free(e.cells);
	return rc;
}

int
repro_print_table(struct db *db, const char *name, FILE *out,
    struct so_err *err)
{
	struct table_data d = { 0 };
	struct figure f[MAX_FIGURES];
	struct figure_ratio fr[MAX_FIGURES];
	const struct repro *r = repro_find(name);
	const struct repro_part *p;
	int64_t id, cap;
	char *started = NULL;
	size_t i, nf, nr;
	int rc, indicative = 0, ebash = strcmp(name, "ebash") == 0;

	if ((rc = db_repro_latest(db, name, &id, &cap, &started, err)) != 0)
		goto out;
	if (id == 0) {
		rc = so_error(err, SO_ENOTFOUND, "no reproduction \"%s\" in the "
		    "database (run `seqorch reproduce %s` first)", name, name);
		goto out;
	}
	if ((rc = db_repro_hosts(db, id, on_host, &d, err)) != 0 ||
	    (rc = db_repro_runs(db, id, on_run, &d, err)) != 0)
		goto out;
	for (i = 0; i < d.nruns; i++) {
		if ((rc = report_load_run(db_handle(db), d.runs[i].run_id, 0,
		    &d.runs[i].model, err)) != 0)
			goto out;
		d.runs[i].loaded = 1;
		find_best(&d.runs[i]);
	}
	fprintf(out, "reproduce %s: reproduction %" PRId64 ", started %s\n",
	    name, id, started);
	for (i = 0; i < d.nruns; i++) {
		const struct rrepro_run *x = &d.runs[i];

		for (p = r != NULL ? r->parts : NULL; p != NULL &&
		    p->label != NULL && strcmp(p->label, x->part) != 0; p++)
			;
		fprintf(out, "\n%s (run %" PRId64 ", %s): %" PRId64 " x %"
		    PRId64 " %s, %s\n", x->study, x->run_id, x->part,
		    x->samples, x->steps, study_unit_plural(x->study), x->status);
		if (p != NULL && p->label != NULL && p->says != NULL)
			fprintf(out, "  the seed says: %s\n", p->says);
		print_digests(&x->model, out);
		nf = figures_of_study(x->study, f, MAX_FIGURES);
		nr = figures_ratios(x->study, fr, MAX_FIGURES);
		if (nf > MAX_FIGURES)
			nf = MAX_FIGURES;
		if (nr > MAX_FIGURES)
			nr = MAX_FIGURES;
		if (ebash) {
			if (x->steps > 0 && p != NULL && p->label != NULL &&
			    (uint64_t)x->steps < p->steps) {
				fprintf(out, "  indicative only: %" PRId64 " %s a "
				    "sample, the protocol's %" PRIu64 "\n",
				    x->steps, study_unit_plural(x->study),
				    p->steps);
				indicative = 1;
			}
		} else {
			print_rates(&d, x, p != NULL && p->label != NULL ? p :
			    NULL, f, nf, out);
			if (p == NULL || p->label == NULL || !p->control)
				print_ratios(&d, x, fr, nr, out);
		}
		if (strcmp(x->study, "randomx") == 0)
			print_randomx(db, &d, x, f, nf, out);
		if (!ebash && nf > 0 && f[0].steps > 0 &&
		    x->steps != f[0].steps) {
			fprintf(out, "  indicative only: %" PRId64 " %s a sample, "
			    "the seed's %" PRId64 "\n", x->steps,
			    study_unit_plural(x->study), f[0].steps);
			indicative = 1;
		}
		if (strcmp(x->status, "ok") != 0) {
			fprintf(out, "  indicative only: the run ended %s\n",
			    x->status);
			indicative = 1;
		}
	}
	if (ebash && (rc = print_ebash(db, &d, out, err)) != 0)
		goto out;
	fputc('\n', out);
	if (cap > 0)
		fprintf(out, "indicative only: a first look, every sample at most "
		    "%" PRId64 " steps (--steps), where the seeds ran theirs in "
		    "full\n", cap);
	else if (indicative)
		fprintf(out, "indicative only where said above\n");
	for (i = 0; i < d.nhosts && d.hosts[i].reference == NULL; i++)
		;
	if (i == d.nhosts)
		fprintf(out, "no host stands for a seed machine (hosts.toml "
		    "`reference`): every figure here is another machine's, "
		    "beside the seeds' for scale only\n");
	else
		fprintf(out, "a host's `reference` is its owner's word that it "
		    "is that machine, or one like it: another CPU, kernel, "
		    "compiler or library makes the ratio indicative only\n");
out:
	free(started);
	data_free(&d);
	return rc;
}

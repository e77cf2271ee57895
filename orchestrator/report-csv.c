/*
 * The report as CSV (RFC 4180 quoting): one row per sample of each
 * selected run, valid or not (--warmup's are in no report), with every
 * column of the samples table but warmup, the build's compiler and the
 * derived rate and ns per step; or with
 * --per cell one row per cell, its statistics rounded to what their
 * intervals support.
 */
#include "db-report.h"
#include "report-model.h"
#include "report-table.h"
#include "study.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each field writes the comma after it; NULL, NAN or !known as empty. */
static void
str_f(FILE *out, const char *s)
{
	report_csv_text(out, s);
	fputc(',', out);
}

/* Written by hand: fprintf's parsing was a tenth of a 1M-row CSV. */
static void
int_f(FILE *out, int known, int64_t v)
{
	char buf[24], *p = buf + sizeof buf;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	if (known) {
		do
			*--p = (char)('0' + u % 10);
		while ((u /= 10) != 0);
		if (v < 0)
			*--p = '-';
		fwrite(p, 1, (size_t)(buf + sizeof buf - p), out);
	}
	fputc(',', out);
}

/* v's 17 significant digits, as "%.16e" writes them: dig[0].dig[1..16]e x. */
struct digits17 {
	int	neg;
	char	dig[17];
	int	x;
};

static int
digits17(double v, struct digits17 *d)
{
	char buf[32];
	int i;

	snprintf(buf, sizeof buf, "%.16e", v);
	d->neg = buf[0] == '-';
	if (!isdigit((unsigned char)buf[d->neg]) || buf[d->neg + 1] != '.')
		return -1;
	d->dig[0] = buf[d->neg];
	for (i = 1; i < 17; i++)
		d->dig[i] = buf[d->neg + 1 + i];
	if (buf[d->neg + 18] != 'e')
		return -1;
	d->x = (int)strtol(buf + d->neg + 19, NULL, 10);
	return 0;
}

/*
 * The k digits r, the first at the place 10^x, in plain notation into
 * buf: "-0.000ddd", "ddd.dd" or "ddd000".  The callers' x and k bound it
 * (48 bytes hold every one).
 */
static void
fixed(char *buf, int neg, const char *r, int k, int x)
{
	size_t n = 0;
	int i;

	if (neg)
		buf[n++] = '-';
	if (x >= 0) {
		for (i = 0; i <= x; i++)
			buf[n++] = i < k ? r[i] : '0';
		if (k > x + 1)
			buf[n++] = '.';
		for (; i < k; i++)
			buf[n++] = r[i];
	} else {
		buf[n++] = '0';
		buf[n++] = '.';
		for (i = x + 1; i < 0; i++)
			buf[n++] = '0';
		for (i = 0; i < k; i++)
			buf[n++] = r[i];
	}
	buf[n] = '\0';
}

/*
 * "%.*g" of v with p digits, made from d instead of by printf's exact
 * arithmetic: the digits after the p-th round up or down, except when
 * they are a 5 then zeros (d is itself rounded, so v may lie on either
 * side of the half) or when %g would write an exponent; there, and
 * without d, printf writes it.
 */
static void
g_text(double v, const struct digits17 *d, int p, char *buf, size_t len)
{
	char r[17];
	int i, k, x, up;

	if (d == NULL || p > 17)
		goto printf;
	memcpy(r, d->dig, (size_t)p);
	x = d->x;
	up = p < 17 && d->dig[p] > '5';
	if (p < 17 && d->dig[p] == '5') {
		for (i = p + 1; i < 17 && d->dig[i] == '0'; i++)
			;
		if (i == 17)
			goto printf;
		up = 1;
	}
	if (up) {
		for (i = p - 1; i >= 0 && r[i] == '9'; i--)
			r[i] = '0';
		if (i < 0) {
			r[0] = '1';
			x++;
		} else
			r[i]++;
	}
	/* At most 1 + 17 + 1 + 4 + 17 bytes with its NUL. */
	if (x < -4 || x >= p || len < 48)
		goto printf;
	for (k = p; k > 1 && r[k - 1] == '0'; k--)
		;
	fixed(buf, d->neg, r, k, x);
	return;
printf:
	snprintf(buf, len, "%.*g", p, v);
}

/*
 * buf's "-d.ddde-XX" (XX from 5 to 20) written out with the point moved,
 * "-0.0000ddd", in place: the same digits, so the same value, in at most
 * 1 + 2 + 19 + 17 bytes and the NUL.
 */
static void
plain(char *buf)
{
	char digits[20];
	const char *e = strchr(buf, 'e');
	int i, n = 0, neg = buf[0] == '-';

	for (i = neg; buf + i < e; i++)
		if (buf[i] != '.' && n < (int)sizeof digits)
			digits[n++] = buf[i];
	fixed(buf, neg, digits, n, atoi(e + 1));
}

void
report_shortest(double v, char *buf, size_t len)
{
	struct digits17 d, *dp = &d;
	int e, p, stop, lo = 1, hi = 17;

	if (!isfinite(v) || digits17(v, &d) != 0)
		dp = NULL;
	/*
	 * One more digit is never farther from v, so once a count of digits
	 * reads back, every larger one does, and bisection finds the least;
	 * except where v is a power of two, whose neighbour below is nearer
	 * than the one above: there the counts are tried in turn.
	 */
	if (dp == NULL || frexp(v, &e) == 0.5 || frexp(v, &e) == -0.5) {
		for (p = 1; p < 17; p++) {
			g_text(v, dp, p, buf, len);
			if (strtod(buf, NULL) == v)
				break;
		}
	} else {
		/*
		 * v's 17 digits up to their last nonzero one read back (they
		 * are the 17).  Most measured values need that many or one or
		 * two fewer (rates 16-17, the agent's 15, ns per step of 10^k
		 * steps what the ns had), so those counts go before bisecting.
		 */
		for (hi = 17; hi > 1 && d.dig[hi - 1] == '0'; hi--)
			;
		for (p = hi - 1, stop = hi - 3; p >= 1 && p >= stop; p--) {
			g_text(v, dp, p, buf, len);
			if (strtod(buf, NULL) != v) {
				lo = hi;
				break;
			}
			hi = p;
		}
		while (lo < hi) {
			p = lo + (hi - lo) / 2;
			g_text(v, dp, p, buf, len);
			if (strtod(buf, NULL) == v)
				hi = p;
			else
				lo = p + 1;
		}
		p = lo;
	}
	g_text(v, dp, p, buf, len);
	if (strchr(buf, 'e') == NULL || fabs(v) >= 1e21 || fabs(v) < 1e-20)
		return;
	/*
	 * Plain notation: a value that large is an integer, whose %.0f is
	 * exact (and reads back); one below 1e-4 takes the digits found.
	 */
	if (fabs(v) >= 1)
		snprintf(buf, len, "%.0f", v);
	else
		plain(buf);
}

static void
real_f(FILE *out, double v)
{
	char buf[64];

	if (!isnan(v)) {
		report_shortest(v, buf, sizeof buf);
		fputs(buf, out);
	}
	fputc(',', out);
}

struct csv_arg {
	FILE		*out;
	int64_t		 run;
	const char	*imported;	/* csv_imported() of the run */
};

/*
 * The last column of both CSVs: "signed" or "unsigned" for a run
 * imported from a bundle (an unsigned one is trusted on nobody's word),
 * empty for one measured here.
 */
static const char *
csv_imported(const struct rrun *r)
{
	if (r->imported_from == NULL)
		return NULL;
	return r->imported_signed ? "signed" : "unsigned";
}

static int
row(const struct db_sample *s, void *arg)
{
	const struct csv_arg *a = arg;
	FILE *out = a->out;
	double steps = (double)s->steps, ns = (double)s->ns;

	int_f(out, 1, a->run);
	int_f(out, 1, s->id);
	str_f(out, s->study);
	str_f(out, s->host);
	int_f(out, 1, s->build_id);
	str_f(out, s->compiler);
	str_f(out, s->variant);
	int_f(out, 1, s->sample_index);
	int_f(out, 1, s->position);
	int_f(out, s->host_position >= 0, s->host_position);
	int_f(out, 1, s->steps);
	int_f(out, 1, s->ns);
	real_f(out, s->ns > 0 ? steps * 1e9 / ns : NAN);
	real_f(out, s->ns > 0 ? ns / steps : NAN);
	str_f(out, s->digest);
	str_f(out, s->seed);
	int_f(out, 1, s->valid);
	str_f(out, s->invalid_reason);
	real_f(out, s->calib_mhz);
	real_f(out, s->calib_after_mhz);
	int_f(out, s->has_cpu, s->cpu);
	str_f(out, s->received_at);
	str_f(out, s->reason);
	int_f(out, s->cycles >= 0, s->cycles);
	int_f(out, s->instructions >= 0, s->instructions);
	str_f(out, s->cycles_source);
	str_f(out, s->openssl_cap);
	str_f(out, s->openssl_cap_detected);
	str_f(out, s->openssl_cap_cleared);
	int_f(out, s->msg_len >= 0, s->msg_len);
	int_f(out, s->window_id >= 0, s->window_id);
	report_csv_text(out, a->imported);
	fputs("\r\n", out);
	return ferror(out) ? -1 : 0;
}

int
report_csv(sqlite3 *db, const struct rrun *runs, size_t n, FILE *out,
    struct so_err *err)
{
	size_t i;
	int ret;

	fputs("run_id,id,study,host,build_id,compiler,variant,sample_index,"
	    "position,host_position,steps,ns,rate,ns_per_step,digest,seed,valid,"
	    "invalid_reason,calib_mhz,calib_after_mhz,cpu,received_at,"
	    "reason,cycles,instructions,cycles_source,openssl_cap,"
	    "openssl_cap_detected,openssl_cap_cleared,msg_len,window_id,imported\r\n",
	    out);
	for (i = 0; i < n; i++) {
		const struct db_report_run run = { runs[i].id, runs[i].study };
		struct csv_arg a = { out, runs[i].id, csv_imported(&runs[i]) };

		if ((ret = db_report_samples(db, &run, row, &a, err)) != 0)
			return ret;
	}
	return 0;
}

/*
 * v to the decimal place of u's second significant digit, as a result
 * and its uncertainty are written ("501700" for 501727.2 +- 52000): the
 * digits after it are noise.  Without an uncertainty (u not > 0: n < 2,
 * or every sample alike) v is given exactly, as real_f does.
 */
static void
approx_f(FILE *out, double v, double u)
{
	int place;
	double q;

	if (isnan(v) || !(u > 0) || !isfinite(u)) {
		real_f(out, v);
		return;
	}
	place = (int)floor(log10(u)) - 1;
	if (place < 0) {
		fprintf(out, "%.*f,", -place, v);
		return;
	}
	q = pow(10, place);
	fprintf(out, "%.0f,", round(v / q) * q);
}

/*
 * The STATS_LEVEL_PCT % interval of w's median: the bootstrap stats_ratio
 * draws for each side, alone.  NAN with n < 2, as there.
 */
static void
median_interval(const struct rrow *w, double *lo, double *hi)
{
	struct stats_rng rng;
	struct stats_ratio s;
	double *boot;
	size_t i;

	*lo = *hi = NAN;
	if (w->n < 2)
		return;
	boot = xmalloc(STATS_RESAMPLES * sizeof *boot);
	stats_rng_seed(&rng, STATS_SEED);
	for (i = 0; i < STATS_RESAMPLES; i++)
		boot[i] = stats_boot_median(&rng, w->rates, (size_t)w->n);
	stats_interval(boot, STATS_RESAMPLES, &s);
	free(boot);
	*lo = s.lo;
	*hi = s.hi;
}

static void
cell_row(FILE *out, const struct rrun *r, const struct rrow *w)
{
	double lo, hi, u, rel, cycles = report_row_cycles(w);
	const char *src = report_row_cycles_source(w);
	int known = w->n > 0;

	median_interval(w, &lo, &hi);
	u = (hi - lo) / 2;
	/* Derived figures carry the median's relative uncertainty. */
	rel = known ? u / w->median : NAN;
	int_f(out, 1, r->id);
	str_f(out, r->study);
	str_f(out, w->host);
	str_f(out, w->variant);
	int_f(out, 1, w->build_id);
	str_f(out, w->compiler);
	str_f(out, study_unit(r->study));
	int_f(out, 1, w->n);
	int_f(out, 1, w->invalid);
	approx_f(out, known ? w->median : NAN, u);
	approx_f(out, lo, u);
	approx_f(out, hi, u);
	approx_f(out, known ? w->desc.mean : NAN, u);
	approx_f(out, known ? w->desc.q1 : NAN, u);
	approx_f(out, known ? w->desc.q3 : NAN, u);
	approx_f(out, known ? w->min : NAN, u);
	approx_f(out, known ? w->max : NAN, u);
	/* A sample cv's standard error is about cv / sqrt(2 (n - 1)). */
	approx_f(out, isfinite(w->desc.cv) ? 100 * w->desc.cv : NAN,
	    w->n >= 2 ? 100 * w->desc.cv / sqrt(2.0 * (double)(w->n - 1)) :
	    NAN);
	approx_f(out, known ? 1e9 / w->median : NAN, rel * 1e9 / w->median);
	approx_f(out, cycles > 0 ? cycles : NAN, rel * cycles);
	str_f(out, src != NULL && strcmp(src, "calib") == 0 ? "calibration" :
	    src);
	if (w->clock_mhz > 0)
		fprintf(out, "%.0f", w->clock_mhz);
	fputc(',', out);
	report_csv_text(out, w->digest == DIGEST_OK ? "ok" : w->digest ==
	    DIGEST_MISMATCH ? "mismatch" : NULL);
	fputc(',', out);
	report_csv_text(out, csv_imported(r));
	fputs("\r\n", out);
}

void
report_csv_cells(const struct rrun *runs, size_t n, FILE *out)
{
	const char *one = n > 0 ? study_unit(runs[0].study) : "step";
	const char *many = n > 0 ? study_unit_plural(runs[0].study) : "steps";
	size_t i, j;

	/* Runs of studies with other units share the neutral "step". */
	for (i = 1; i < n; i++) {
		if (strcmp(study_unit(runs[i].study), one) != 0) {
			one = "step";
			many = "steps";
		}
	}
	fprintf(out, "run_id,study,host,variant,build_id,compiler,unit,n,"
	    "invalid,median_%s_per_s,median_lo%d_%s_per_s,"
	    "median_hi%d_%s_per_s,mean_%s_per_s,q1_%s_per_s,q3_%s_per_s,"
	    "min_%s_per_s,max_%s_per_s,cv_pct,ns_per_%s,cycles_per_%s,"
	    "cycles_source,clock_mhz,digest,imported\r\n", many,
	    STATS_LEVEL_PCT, many,
	    STATS_LEVEL_PCT, many, many, many, many, many, many, one, one);
	for (i = 0; i < n; i++)
		for (j = 0; j < runs[i].nrows; j++)
			cell_row(out, &runs[i], &runs[i].rows[j]);
}

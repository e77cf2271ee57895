/*
 * The report as CSV: one row per sample of each selected run, valid or
 * not, with every column of the samples table, the build's compiler and
 * the derived rate and ns per step (RFC 4180 quoting).
 */
#include "db-report.h"
#include "report-model.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void
field(FILE *out, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void
real(FILE *out, double v)
{
	if (!isnan(v))
		fprintf(out, "%.17g", v);
}

struct csv_arg {
	FILE	*out;
	int64_t	 run;
};

static int
row(const struct rsample *s, void *arg)
{
	const struct csv_arg *a = arg;
	FILE *out = a->out;

	fprintf(out, "%" PRId64 ",%" PRId64 ",", a->run, s->id);
	field(out, s->study);
	fputc(',', out);
	field(out, s->host);
	fprintf(out, ",%" PRId64 ",", s->build_id);
	field(out, s->compiler);
	fputc(',', out);
	field(out, s->variant);
	fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",",
	    s->sample_index, s->position, s->steps, s->ns);
	if (s->ns > 0)
		fprintf(out, "%.17g,%.17g", (double)s->steps * 1e9 /
		    (double)s->ns, (double)s->ns / (double)s->steps);
	else
		fputc(',', out);
	fputc(',', out);
	field(out, s->digest);
	fputc(',', out);
	field(out, s->seed);
	fprintf(out, ",%" PRId64 ",", s->valid);
	field(out, s->invalid_reason);
	fputc(',', out);
	real(out, s->calib_mhz);
	fputc(',', out);
	real(out, s->calib_after_mhz);
	fputc(',', out);
	if (s->has_cpu)
		fprintf(out, "%" PRId64, s->cpu);
	fputc(',', out);
	field(out, s->received_at);
	fputc(',', out);
	field(out, s->reason);
	fputc(',', out);
	if (s->cycles >= 0)
		fprintf(out, "%" PRId64, s->cycles);
	fputc(',', out);
	if (s->instructions >= 0)
		fprintf(out, "%" PRId64, s->instructions);
	fputc(',', out);
	field(out, s->cycles_source);
	fputc(',', out);
	field(out, s->openssl_cap);
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
	    "position,steps,ns,rate,ns_per_step,digest,seed,valid,"
	    "invalid_reason,calib_mhz,calib_after_mhz,cpu,received_at,"
	    "reason,cycles,instructions,cycles_source,openssl_cap\r\n", out);
	for (i = 0; i < n; i++) {
		struct csv_arg a = { out, runs[i].id };

		if ((ret = db_report_samples(db, &runs[i], row, &a, err)) != 0)
			return ret;
	}
	return 0;
}

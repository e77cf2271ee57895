/*
 * The report as CSV: one row per sample of each selected run, valid or
 * not, with every column of the samples table, the build's compiler and
 * the derived rate and ns per step (RFC 4180 quoting).
 */
#include "db-report.h"
#include "report-model.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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

/* Each field writes the comma after it; NULL, NAN or !known as empty. */
static void
str_f(FILE *out, const char *s)
{
	field(out, s);
	fputc(',', out);
}

static void
int_f(FILE *out, int known, int64_t v)
{
	if (known)
		fprintf(out, "%" PRId64, v);
	fputc(',', out);
}

/*
 * The shortest decimal that reads back as v ("383.02561", not %.17g's
 * "383.02560999999997"): no digit the double does not hold, and no value
 * changed, so a rate from the CSV is the report's to the last bit.  Plain
 * notation, never "5e+06".
 */
static void
real_f(FILE *out, double v)
{
	char buf[64];
	int p;

	if (isnan(v)) {
		fputc(',', out);
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (strchr(buf, 'e') != NULL && fabs(v) < 1e21) {
		for (p = 0; p <= 20; p++) {
			snprintf(buf, sizeof buf, "%.*f", p, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	fprintf(out, "%s,", buf);
}

struct csv_arg {
	FILE	*out;
	int64_t	 run;
};

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
	if (s->msg_len >= 0)
		fprintf(out, "%lld", (long long)s->msg_len);
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
	    "openssl_cap_detected,openssl_cap_cleared,msg_len\r\n", out);
	for (i = 0; i < n; i++) {
		const struct db_report_run run = { runs[i].id, runs[i].study };
		struct csv_arg a = { out, runs[i].id };

		if ((ret = db_report_samples(db, &run, row, &a, err)) != 0)
			return ret;
	}
	return 0;
}

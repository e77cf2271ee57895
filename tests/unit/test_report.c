/*
 * seqorch report (report.c): what a user reads.  A results.db is made
 * with db_open in a private temporary directory and filled with a
 * realistic history: an older run whose digests disagree, a partial
 * three-host run (one host failed, one variant failed, one invalid
 * sample, two compilers on one host), a newer exploratory run and a run
 * of a second study.  The report is captured with open_memstream and
 * asserted on as printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "db.h"
#include "db-report.h"
#include "report.h"
#include "report-model.h"
#include "runner-int.h"
#include "study.h"
#include "util.h"
#include "unit-tmp.h"

#define GOOD	"abababababababababababababababababababababababababababababababab"
#define BAD	"cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
#define SEED	"0000000000000000000000000000000000000000000000000000000000000000"

extern const struct cmd_entry cmd_report_entry;

static char tmpdir[] = "/tmp/seqorch-test-report.XXXXXX";
static char dbpath[sizeof tmpdir + 16];
static struct db *db;

static const char history[] =
	"INSERT INTO runs (id, study, started_at, finished_at, status, steps,"
	" samples_per_variant, command, seed, variants, hosts, exploratory,"
	" coordinator, version) VALUES"
	" (1, 'sha3', '2026-09-09T10:00:00Z', '2026-09-09T10:02:00Z', 'ok',"
	"  10000000, 3, 'seqorch run --study sha3 --hosts genoa', '" SEED "',"
	"  NULL, 'genoa', 0, 'coord pid 7', '0.1.0'),"
	" (2, 'sha3', '2026-09-10T10:00:00Z', '2026-09-10T10:06:00Z',"
	"  'partial', 10000000, 3, 'seqorch ''run'' ''--study'' ''sha3''"
	" ''--hosts'' ''genoa,graviton5,m4'' ''--db''"
	" ''/srv/bench/results/2026/results.db'' ''--config''"
	" ''/srv/bench/hosts.toml''',"
	"  '" SEED "', NULL, 'all', 0, 'coord pid 8', '0.1.0'),"
	" (3, 'sha3', '2026-09-10T11:00:00Z', '2026-09-10T11:01:00Z', 'ok',"
	"  1000000, 1, 'seqorch run --study sha3 --hosts genoa --steps 1000000"
	" --samples 1', '" SEED "', 'c-fused', 'genoa', 1, 'coord pid 9',"
	"  '0.1.0'),"
	" (4, 'sha512', '2026-09-10T12:00:00Z', '2026-09-10T12:01:00Z', 'ok',"
	"  1000000, 1, 'seqorch run --study sha512 --hosts genoa', '" SEED "',"
	"  NULL, 'genoa', 0, 'coord pid 10', '0.1.0');"
	"INSERT INTO run_hosts (run_id, host, status, error, pin_cpu, pinned,"
	" pin_error, governor, calib_mhz, started_at, finished_at) VALUES"
	" (1, 'genoa', 'ok', NULL, 1, 1, NULL, 'performance', 3700,"
	"  '2026-09-09T10:00:00Z', '2026-09-09T10:02:00Z'),"
	" (2, 'genoa', 'ok', NULL, 1, 1, NULL, 'performance', 3700,"
	"  '2026-09-10T10:00:00Z', '2026-09-10T10:06:00Z'),"
	" (2, 'graviton5', 'ok', NULL, 13, 0,"
	"  'sched_setaffinity(13): invalid argument', NULL, 3100,"
	"  '2026-09-10T10:00:00Z', '2026-09-10T10:05:00Z'),"
	" (2, 'm4', 'failed', 'ssh: connection refused', NULL, NULL, NULL,"
	"  NULL, NULL, '2026-09-10T10:00:00Z', '2026-09-10T10:00:01Z'),"
	" (3, 'genoa', 'ok', NULL, 1, 1, NULL, 'performance', 3700,"
	"  '2026-09-10T11:00:00Z', '2026-09-10T11:01:00Z'),"
	" (4, 'genoa', 'ok', NULL, 1, 1, NULL, 'performance', 3700,"
	"  '2026-09-10T12:00:00Z', '2026-09-10T12:01:00Z');"
	"INSERT INTO builds (id, run_id, host, compiler, compiler_version,"
	" cflags, status, created_at) VALUES"
	" (1, 2, 'genoa', 'cc', 'cc (Debian 12.2.0-14) 12.2.0', '-O3', 'ok',"
	"  '2026-09-10T10:00:00Z'),"
	" (2, 2, 'graviton5', 'cc', 'cc (GCC) 11.4.1', '-O3', 'ok',"
	"  '2026-09-10T10:00:00Z'),"
	" (3, 2, 'graviton5', 'clang', 'clang version 17.0.6', '-O3', 'ok',"
	"  '2026-09-10T10:00:00Z'),"
	" (4, 1, 'genoa', 'cc', 'cc (Debian 12.2.0-14) 12.2.0', '-O3', 'ok',"
	"  '2026-09-09T10:00:00Z'),"
	" (5, 3, 'genoa', 'cc', 'cc (Debian 12.2.0-14) 12.2.0', '-O3', 'ok',"
	"  '2026-09-10T11:00:00Z'),"
	" (6, 4, 'genoa', 'cc', 'cc (Debian 12.2.0-14) 12.2.0', '-O3', 'ok',"
	"  '2026-09-10T12:00:00Z'),"
	" (7, 4, 'genoa', 'clang', NULL, '-O3', 'failed',"
	"  '2026-09-10T12:00:00Z');"
	"INSERT INTO variants (run_id, host, build_id, study, variant, status,"
	" reason) VALUES"
	" (2, 'genoa', 1, 'sha3', 'c-fused', 'ok', NULL),"
	" (2, 'graviton5', 3, 'sha3', 'openssl-evp', 'failed',"
	"  'self-test: sha3-256(\"abc\") mismatch'),"
	" (4, 'genoa', 7, 'sha512', 'c-plain', 'unavailable', 'build failed'),"
	" (4, 'genoa', 7, 'sha512', 'c-fast', 'unavailable', 'build failed');"
	"INSERT INTO events (run_id, host, at, level, message) VALUES"
	" (2, NULL, '2026-09-10T10:00:00Z', 'info', 'run started'),"
	" (2, 'm4', '2026-09-10T10:00:01Z', 'error',"
	"  'cannot connect to \"m4\": connection refused'),"
	" (2, 'graviton5', '2026-09-10T10:00:02Z', 'warning',"
	"  'clang build says: kernel.c:12:5: warning: unused variable'"
	"  || char(10) || 'kernel.c:40:1: warning: this line is long enough"
	" to run past the hundredth column of any terminal');";

/* Samples of 10^7 steps, or of 10^6 for runs 3 and 4. */
static void
sample(int64_t run, const char *host, int64_t build, const char *study,
    const char *variant, int64_t index, int64_t ns, const char *digest,
    int valid)
{
	static const char sql[] =
	    "INSERT INTO samples (run_id, host, build_id, study, variant,"
	    " sample_index, position, steps, ns, digest, seed, valid,"
	    " invalid_reason, calib_mhz, cpu, received_at) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10, ?11, ?12, NULL, 1,"
	    " '2026-09-10T10:01:00Z')";
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db_handle(db), sql, -1, &st,
	    NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, build);
	sqlite3_bind_text(st, 4, study, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, variant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, index);
	sqlite3_bind_int64(st, 7, run == 3 || run == 4 ? 1000000 : 10000000);
	sqlite3_bind_int64(st, 8, ns);
	sqlite3_bind_text(st, 9, digest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, SEED, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 11, valid);
	if (!valid)
		sqlite3_bind_text(st, 12, "digest differs from the reference",
		    -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

static int
setup(void **state)
{
	struct so_err err;
	char *msg = NULL;

	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(dbpath, sizeof dbpath, "%s/results.db", tmpdir);
	if (db_open(dbpath, &db, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	if (sqlite3_exec(db_handle(db), history, NULL, NULL, &msg) !=
	    SQLITE_OK) {
		fprintf(stderr, "fixture: %s\n", msg);
		sqlite3_free(msg);
		return -1;
	}

	/* Run 1: one sample ends in another digest yet claims valid. */
	sample(1, "genoa", 4, "sha3", "c-fused", 0, 2500000000, GOOD, 1);
	sample(1, "genoa", 4, "sha3", "c-fused", 1, 2500000000, BAD, 1);
	sample(1, "genoa", 4, "sha3", "c-fused", 2, 2500000000, GOOD, 1);

	/* Run 2, genoa: medians 2.439M and 4.000M of three (odd n). */
	sample(2, "genoa", 1, "sha3", "c-wrapped", 0, 4000000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "c-wrapped", 1, 4200000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "c-wrapped", 2, 4100000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "c-fused", 0, 2600000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "c-fused", 1, 2500000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "c-fused", 2, 2400000000, GOOD, 1);
	/* Two valid (even n): median (2.0M + 2.5M) / 2 = 2.250M. */
	sample(2, "genoa", 1, "sha3", "openssl-evp", 0, 5000000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "openssl-evp", 1, 4000000000, GOOD, 1);
	sample(2, "genoa", 1, "sha3", "openssl-evp", 2, 1000000000, BAD, 0);

	/* Run 2, graviton5: cc and clang builds; clang c-fused is best. */
	sample(2, "graviton5", 2, "sha3", "c-wrapped", 0, 2000000000, GOOD, 1);
	sample(2, "graviton5", 2, "sha3", "c-wrapped", 1, 2100000000, GOOD, 1);
	sample(2, "graviton5", 2, "sha3", "c-wrapped", 2, 2000000000, GOOD, 1);
	sample(2, "graviton5", 2, "sha3", "c-fused", 0, 1500000000, GOOD, 1);
	sample(2, "graviton5", 2, "sha3", "c-fused", 1, 1600000000, GOOD, 1);
	sample(2, "graviton5", 2, "sha3", "c-fused", 2, 1550000000, GOOD, 1);
	sample(2, "graviton5", 3, "sha3", "c-fused", 0, 1450000000, GOOD, 1);
	sample(2, "graviton5", 3, "sha3", "c-fused", 1, 1500000000, GOOD, 1);
	sample(2, "graviton5", 3, "sha3", "c-fused", 2, 1480000000, GOOD, 1);
	sample(2, "graviton5", 2, "sha3", "openssl-evp", 0, 3000000000, GOOD,
	    1);
	sample(2, "graviton5", 2, "sha3", "openssl-evp", 1, 3000000000, GOOD,
	    1);
	sample(2, "graviton5", 2, "sha3", "openssl-evp", 2, 3000000000, GOOD,
	    1);

	/* Runs 3 (exploratory) and 4 (another study). */
	sample(3, "genoa", 5, "sha3", "c-fused", 0, 125000000, GOOD, 1);
	sample(4, "genoa", 6, "sha512", "c-plain", 0, 1000000000, GOOD, 1);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	unit_rmtree(tmpdir);
	return 0;
}

/* The renderer named name, from the table --format reads. */
static const struct report_renderer *
fmt(const char *name)
{
	const struct report_renderer *f;

	for (f = report_renderers; f->name != NULL; f++) {
		if (strcmp(f->name, name) == 0)
			return f;
	}
	fail_msg("no renderer \"%s\"", name);
	return NULL;
}

/*
 * -o FILE picks its renderer from the same table: each extension of each
 * renderer, in any case, names that renderer; anything else is text.
 */
static void
test_renderer_for_path(void **state)
{
	(void)state;
	assert_ptr_equal(report_renderer_for_path("r.html"), fmt("html"));
	assert_ptr_equal(report_renderer_for_path("d/r.HTM"), fmt("html"));
	assert_ptr_equal(report_renderer_for_path("r.md"), fmt("markdown"));
	assert_ptr_equal(report_renderer_for_path("r.markdown"),
	    fmt("markdown"));
	assert_ptr_equal(report_renderer_for_path("R.CSV"), fmt("csv"));
	assert_ptr_equal(report_renderer_for_path("r.json"), fmt("json"));
	assert_ptr_equal(report_renderer_for_path("r.txt"), fmt("text"));
	assert_ptr_equal(report_renderer_for_path("r.h"), fmt("text"));
	assert_ptr_equal(report_renderer_for_path("r.jso"), fmt("text"));
	assert_ptr_equal(report_renderer_for_path("a.html/r"), fmt("text"));
	assert_ptr_equal(report_renderer_for_path("r"), fmt("text"));
	assert_string_equal(report_renderers[0].name, "text");
}

/* The report as printed, or NULL with err filled.  Caller frees. */
static char *
render(int64_t run_id, const char *study, int explore,
    const struct report_renderer *format, int *ret, struct so_err *err)
{
	struct report_opts o = { run_id, study, explore, format,
	    "results.db", NULL, 0, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*ret = report_print(db_handle(db), &o, f, err);
	assert_int_equal(fclose(f), 0);
	if (*ret != 0) {
		assert_int_equal(len, 0);
		free(text);
		return NULL;
	}
	return text;
}

static char *
render_ok(int64_t run_id, const char *study, int explore)
{
	struct so_err err;
	int ret;
	char *text = render(run_id, study, explore, fmt("text"), &ret, &err);

	if (ret != 0)
		fail_msg("report failed: %s", err.msg);
	return text;
}

/*
 * The first line of text holding every one of the words (NULL-ended),
 * as a new string.  Fails the test when there is none.
 */
static char *
line_with(const char *text, ...)
{
	const char *p = text, *end, *word;
	va_list ap;
	char *line;
	int all;

	for (; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		end = strchr(p, '\n');
		if (end == NULL)
			end = p + strlen(p);
		line = xasprintf("%.*s", (int)(end - p), p);
		all = 1;
		va_start(ap, text);
		while ((word = va_arg(ap, const char *)) != NULL) {
			if (strstr(line, word) == NULL)
				all = 0;
		}
		va_end(ap);
		if (all)
			return line;
		free(line);
	}
	fail_msg("no line with those words in:\n%s", text);
	return NULL;
}

static void
assert_line(const char *text, const char *a, const char *b, const char *c)
{
	free(line_with(text, a, b, c, (const char *)NULL));
}

static void
test_latest_per_study(void **state)
{
	char *out = render_ok(0, NULL, 0);

	(void)state;
	/* The exploratory run 3 is newer but hidden; sha512 has its own. */
	assert_non_null(strstr(out, "study sha3, run 2: partial\n"));
	assert_non_null(strstr(out, "study sha512, run 4: ok\n"));
	assert_null(strstr(out, "run 3"));
	assert_null(strstr(out, "run 1:"));
	assert_true(strstr(out, "study sha3") < strstr(out, "study sha512"));
	free(out);
}

static void
test_medians(void **state)
{
	char *out = render_ok(0, "sha3", 0);
	char *line;

	(void)state;
	/* Odd n: the middle sample. */
	assert_line(out, "c-wrapped", "genoa", "2.439M");
	assert_line(out, "c-fused", "genoa", "4.000M");
	/* Min–max, ns per hash and cycles (3700 MHz * 1e6 / 4.0M = 925). */
	line = line_with(out, "c-fused", "genoa", (const char *)NULL);
	assert_non_null(strstr(line, "3.846M–4.167M"));
	assert_non_null(strstr(line, " 925.0 "));
	assert_non_null(strstr(line, " ok "));
	free(line);
	/* ns per hash is the best table's: 1e9 / 4.0M. */
	assert_line(out, "genoa", "c-fused (cc)", "250.0");
	/* Even n: the invalid third sample is left out, two remain. */
	line = line_with(out, "openssl-evp", "genoa", (const char *)NULL);
	assert_non_null(strstr(line, "2.250M"));
	assert_non_null(strstr(line, "2.000M–2.500M"));
	assert_non_null(strstr(line, "  2  ok"));
	assert_true(line[strlen(line) - 1] == '1');
	free(line);
	/* Two builds on graviton5: a compiler column tells them apart. */
	assert_line(out, "cc", "graviton5", "6.452M");
	assert_line(out, "clang", "graviton5", "6.757M");
	assert_non_null(strstr(out, "compiler"));
	free(out);
}

static void
test_best_and_ratio(void **state)
{
	char *out = render_ok(0, "sha3", 0);
	const char *best = strstr(out, "best valid variant per host\n");

	(void)state;
	assert_non_null(best);
	/* Fastest host first; its best pair is (c-fused, clang). */
	assert_line(best, "graviton5", "c-fused (clang)", "6.757M");
	assert_line(best, "genoa", "c-fused (cc)", "4.000M");
	assert_true(strstr(best, "graviton5") < strstr(best, "genoa"));
	/*
	 * 6.757M / 4.000M; three samples a side that do not overlap: the
	 * interval runs from 6.667M / 4.167M to 6.897M / 3.846M.
	 */
	assert_non_null(strstr(out, "\nratios of best rates, 95% bootstrap "
	    "interval over the samples, verdict\n"
	    "  graviton5 / genoa = 1.69x  [1.600, 1.793]  faster; doubtful: "
	    "both\n"));
	/* Both cvs are above --max-cv's 1%: said beside the figures. */
	assert_non_null(strstr(best, "\n  graviton5: unstable (cv 1.71% > "
	    "--max-cv 1%), not pinned (cpu 13): its figure\n"));
	assert_non_null(strstr(best, "\n  genoa: unstable (cv 4.00% > "
	    "--max-cv 1%): its figure and its ratios may not\n"));
	/* m4 failed before its first sample. */
	assert_non_null(strstr(out, "  m4: no valid samples\n"));
	free(out);
}

static void
test_header_and_warnings(void **state)
{
	char *out = render_ok(2, NULL, 0);

	(void)state;
	assert_non_null(strstr(out, "  steps     10000000 per sample, 3 "
	    "samples per variant\n"));
	assert_non_null(strstr(out, "  digest    abababababababab... in all "
	    "20 valid samples of 10000000 steps\n"));
	assert_line(out, "genoa", "3700 MHz", "cpu 1");
	assert_line(out, "graviton5", "cpu 13 (not pinned)", "3100 MHz");
	assert_line(out, "m4", "failed", "-");
	assert_non_null(strstr(out, "\nwarnings\n"
	    "  1 invalid sample (valid = 0), left out of every rate\n"
	    "    genoa openssl-evp (cc) sample 2: digest differs from the "
	    "reference\n"));
	assert_non_null(strstr(out, "  host \"graviton5\" not pinned to cpu "
	    "13: sched_setaffinity(13): invalid argument\n"));
	assert_non_null(strstr(out, "  host \"m4\" failed: ssh: connection "
	    "refused\n"));
	assert_non_null(strstr(out, "  variant \"openssl-evp\" on "
	    "\"graviton5\" (clang) failed: self-test:\n    sha3-256(\"abc\") "
	    "mismatch\n"));
	assert_non_null(strstr(out, "  error on \"m4\" at "
	    "2026-09-10T10:00:01Z:\n    cannot connect to \"m4\": connection "
	    "refused\n"));
	assert_null(strstr(out, "run started"));
	free(out);
}

/*
 * Every line fits 80 columns, but a table's, which is printed whole after
 * a line that says how wide it is: a long command wraps, free text with a
 * newline and past the edge is flattened and wrapped at spaces.
 */
static void
test_width(void **state)
{
	char *out = render_ok(2, NULL, 0);
	const char *p, *end;
	size_t cols, wide = 80, said;
	int tables = 0;

	(void)state;
	for (p = out; *p != '\0'; p = end + 1) {
		end = strchr(p, '\n');
		assert_non_null(end);
		if (sscanf(p, "  (table is %zu columns wide)", &said) == 1) {
			assert_true(said > 80);
			wide = said;
			tables++;
		} else if (p == end)
			wide = 80;
		for (cols = 0; p < end; p++)
			cols += ((unsigned char)*p & 0xc0) != 0x80;
		assert_in_range(cols, 0, wide);
	}
	assert_true(tables > 0);
	assert_non_null(strstr(out, "  command   seqorch 'run' '--study' 'sha3' "
	    "'--hosts' 'genoa,graviton5,m4' '--db'\n"
	    "            '/srv/bench/results/2026/results.db' '--config'\n"
	    "            '/srv/bench/hosts.toml'\n"));
	/* An event's message is wrapped under its heading, whole. */
	assert_non_null(strstr(out, "  warning on \"graviton5\" at "
	    "2026-09-10T10:00:02Z:\n    clang build says: kernel.c:12:5: "
	    "warning: unused variable kernel.c:40:1:\n    warning: this line "
	    "is long enough to run past the hundredth column of any\n"
	    "    terminal\n"));
	assert_null(strstr(out, "\nkernel.c:40"));
	free(out);
}

/* A failed build: one line for all the variants it left unavailable. */
static void
test_failed_build(void **state)
{
	char *out = render_ok(4, NULL, 0);

	(void)state;
	assert_non_null(strstr(out, "\nwarnings\n"
	    "  build 7 (clang) on \"genoa\" failed\n"
	    "  variants c-fast, c-plain on \"genoa\" (clang) unavailable: "
	    "build failed\n"));
	assert_line(out, "7", "clang", "failed");
	free(out);
}

static void
test_digest_mismatch(void **state)
{
	char *out = render_ok(1, NULL, 0);

	(void)state;
	assert_line(out, "c-fused", "genoa", "MISMATCH");
	assert_non_null(strstr(out, "  digest    MISMATCH: 3 valid samples "
	    "of 10000000 steps end in 2 different\n    digests\n"));
	/* No row agrees, so there is no best variant to vouch for. */
	assert_non_null(strstr(out, "  genoa: no valid samples whose digest "
	    "agrees with the run's\n"));
	assert_non_null(strstr(out, "warnings: none\n"));
	free(out);
}

static void
test_exploratory(void **state)
{
	char *out = render_ok(0, "sha3", 1);

	(void)state;
	assert_non_null(strstr(out, "study sha3, run 3: ok (exploratory)\n"));
	assert_null(strstr(out, "run 2"));
	free(out);
	/* Asked for by id, an exploratory run is shown. */
	out = render_ok(3, NULL, 0);
	assert_non_null(strstr(out, "study sha3, run 3: ok (exploratory)\n"
	    "  steps     1000000 per sample, 1 sample per variant\n"));
	assert_non_null(strstr(out, "  digest    abababababababab... in the "
	    "one valid sample of 1000000 steps\n"));
	assert_line(out, "c-fused", "genoa", "8.000M");
	free(out);
}

static void
test_errors(void **state)
{
	struct so_err err;
	int ret;

	(void)state;
	assert_null(render(99, NULL, 0, fmt("text"), &ret, &err));
	assert_int_equal(ret, SO_ENOTFOUND);
	assert_string_equal(err.msg, "no run with id 99 in \"results.db\" "
	    "(latest: 4, 3, 2, 1)");

	assert_null(render(4, "sha3", 0, fmt("text"), &ret, &err));
	assert_int_equal(ret, SO_EINVAL);
	assert_string_equal(err.msg, "run 4 is of study \"sha512\", not "
	    "\"sha3\"");

	assert_null(render(0, "mul", 0, fmt("text"), &ret, &err));
	assert_int_equal(ret, SO_ENOTFOUND);
	assert_string_equal(err.msg, "no runs of study \"mul\" in "
	    "\"results.db\" (studies with runs: sha3, sha512)");

	/* Only exploratory runs: say so rather than "no runs". */
	assert_int_equal(sqlite3_exec(db_handle(db), "BEGIN; UPDATE runs SET"
	    " exploratory = 1", NULL, NULL, NULL), SQLITE_OK);
	assert_null(render(0, NULL, 0, fmt("text"), &ret, &err));
	assert_int_equal(sqlite3_exec(db_handle(db), "ROLLBACK", NULL, NULL,
	    NULL), SQLITE_OK);
	assert_int_equal(ret, SO_ENOTFOUND);
	assert_string_equal(err.msg, "no runs in \"results.db\" (4 "
	    "exploratory runs hidden; use --explore)");
}

static void
test_empty_db(void **state)
{
	struct report_opts o = { 0, NULL, 0, NULL, "empty.db", NULL, 0, 0 };
	struct so_err err;
	struct db *empty;
	char *path = xasprintf("%s/empty.db", tmpdir);

	(void)state;
	assert_int_equal(db_open(path, &empty, &err), 0);
	assert_int_equal(report_print(db_handle(empty), &o, stdout, &err),
	    SO_ENOTFOUND);
	assert_string_equal(err.msg, "no runs in \"empty.db\" yet (start one "
	    "with \"seqorch run\")");
	o.run_id = 5;
	assert_int_equal(report_print(db_handle(empty), &o, stdout, &err),
	    SO_ENOTFOUND);
	assert_string_equal(err.msg, "no run with id 5 in \"empty.db\" (it "
	    "has no runs)");
	db_close(empty);
	free(path);
}

static const cJSON *
at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (v == NULL)
		fail_msg("no \"%s\" in the json", key);
	return v;
}

static void
test_json(void **state)
{
	struct so_err err;
	const cJSON *run, *best, *row, *ratio, *warn;
	cJSON *root;
	int ret;
	char *out = render(0, "sha3", 0, fmt("json"), &ret, &err);

	(void)state;
	assert_int_equal(ret, 0);
	root = cJSON_Parse(out);
	assert_non_null(root);
	assert_int_equal(cJSON_GetArraySize(at(root, "runs")), 1);
	run = cJSON_GetArrayItem(at(root, "runs"), 0);
	assert_int_equal(at(run, "id")->valuedouble, 2);
	assert_string_equal(at(run, "status")->valuestring, "partial");

	best = cJSON_GetArrayItem(at(run, "best"), 0);
	assert_string_equal(at(best, "host")->valuestring, "graviton5");
	assert_string_equal(at(best, "compiler")->valuestring, "clang");
	assert_true(fabs(at(best, "median_rate")->valuedouble - 1e16 / 1.48e9)
	    < 1e-3);

	ratio = cJSON_GetArrayItem(at(run, "ratios"), 0);
	assert_string_equal(at(ratio, "faster")->valuestring, "graviton5");
	assert_string_equal(at(ratio, "slower")->valuestring, "genoa");
	assert_true(fabs(at(ratio, "ratio")->valuedouble - 1.689189) < 1e-5);

	/* Cells come sorted by variant, host, build: genoa openssl-evp. */
	row = cJSON_GetArrayItem(at(run, "cells"), 5);
	assert_string_equal(at(row, "variant")->valuestring, "openssl-evp");
	assert_string_equal(at(row, "host")->valuestring, "genoa");
	assert_int_equal(at(row, "n")->valuedouble, 2);
	assert_int_equal(at(row, "invalid")->valuedouble, 1);
	assert_true(at(row, "median_rate")->valuedouble == 2250000);

	warn = at(run, "warnings");
	assert_int_equal(cJSON_GetArraySize(at(warn, "invalid_samples")), 1);
	assert_int_equal(cJSON_GetArraySize(at(warn, "variants")), 1);
	assert_int_equal(cJSON_GetArraySize(at(warn, "events")), 2);
	assert_true(cJSON_IsNull(at(cJSON_GetArrayItem(at(run, "hosts"), 2),
	    "pinned")));
	cJSON_Delete(root);
	free(out);
}

static int
close_to(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fabs(b);
}

/*
 * The report computes medians over one run with the summary view's own
 * formula (the view itself would scan every sample ever stored); for
 * every row of every run both must give the same numbers.
 */
static void
test_agrees_with_summary_view(void **state)
{
	static const char sql[] =
	    "SELECT n, median_rate, min_rate, max_rate FROM summary"
	    " WHERE run_id = ?1 AND host = ?2 AND variant = ?3"
	    " AND build_id = ?4";
	const cJSON *run, *row;
	struct so_err err;
	sqlite3_stmt *st;
	cJSON *root;
	int64_t id;
	int ret, rows = 0;
	char *out;

	(void)state;
	assert_int_equal(sqlite3_prepare_v2(db_handle(db), sql, -1, &st,
	    NULL), SQLITE_OK);
	for (id = 1; id <= 4; id++) {
		out = render(id, NULL, 0, fmt("json"), &ret, &err);
		assert_int_equal(ret, 0);
		root = cJSON_Parse(out);
		run = cJSON_GetArrayItem(at(root, "runs"), 0);
		cJSON_ArrayForEach(row, at(run, "cells")) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_text(st, 2, at(row, "host")->valuestring,
			    -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, at(row, "variant")->valuestring,
			    -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 4,
			    (int64_t)at(row, "build_id")->valuedouble);
			assert_int_equal(sqlite3_step(st), SQLITE_ROW);
			assert_int_equal(at(row, "n")->valuedouble,
			    sqlite3_column_int64(st, 0));
			/* cJSON prints 15 significant digits when they read
			 * back within DBL_EPSILON, so compare to 1e-12. */
			assert_true(close_to(at(row, "median_rate")->valuedouble,
			    sqlite3_column_double(st, 1)));
			assert_true(close_to(at(row, "min_rate")->valuedouble,
			    sqlite3_column_double(st, 2)));
			assert_true(close_to(at(row, "max_rate")->valuedouble,
			    sqlite3_column_double(st, 3)));
			rows++;
		}
		cJSON_Delete(root);
		free(out);
	}
	sqlite3_finalize(st);
	assert_int_equal(rows, 10);
}

/* The whole of a file, NUL terminated.  Caller frees. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = xcalloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return text;
}

/* Point fd at path; returns a copy of the old fd to restore. */
static int
redirect(int fd, const char *path)
{
	int saved = dup(fd), f = open(path, O_WRONLY | O_CREAT | O_TRUNC,
	    0600);

	assert_true(saved >= 0 && f >= 0);
	dup2(f, fd);
	close(f);
	return saved;
}

static void
restore(int fd, int saved)
{
	dup2(saved, fd);
	close(saved);
}

/*
 * `seqorch report ARGS...` as main runs it: the exit code, and in *out
 * and *errs what it printed to stdout and stderr.
 */
static int
command(char **out, char **errs, ...)
{
	char *argv[16], *opath = xasprintf("%s/stdout", tmpdir),
	    *epath = xasprintf("%s/stderr", tmpdir);
	const char *arg;
	va_list ap;
	int argc = 0, so, se, code;

	argv[argc++] = "report";
	va_start(ap, errs);
	while ((arg = va_arg(ap, const char *)) != NULL && argc < 15)
		argv[argc++] = (char *)arg;
	va_end(ap);
	argv[argc] = NULL;

	fflush(stdout);
	fflush(stderr);
	so = redirect(STDOUT_FILENO, opath);
	se = redirect(STDERR_FILENO, epath);
	code = cmd_report_entry.exec(&cmd_report_entry, argc, argv);
	fflush(stdout);
	fflush(stderr);
	restore(STDOUT_FILENO, so);
	restore(STDERR_FILENO, se);
	*out = slurp(opath);
	*errs = slurp(epath);
	free(opath);
	free(epath);
	return code;
}

/* Run the command; check its exit code, that stdout is empty, and stderr. */
static void
assert_fails(int code, const char *message, ...)
{
	char *argv[8], *out, *errs;
	const char *arg;
	va_list ap;
	size_t n = 0;

	va_start(ap, message);
	while ((arg = va_arg(ap, const char *)) != NULL && n < 7)
		argv[n++] = (char *)arg;
	va_end(ap);
	while (n < 8)
		argv[n++] = NULL;
	assert_int_equal(command(&out, &errs, argv[0], argv[1], argv[2],
	    argv[3], argv[4], argv[5], argv[6], (char *)NULL), code);
	assert_string_equal(out, "");
	assert_string_equal(errs, message);
	free(out);
	free(errs);
}

static void
test_command(void **state)
{
	char *missing = xasprintf("%s/missing.db", tmpdir);
	char *none = xasprintf("%s/none.db", tmpdir);
	char *out, *errs, *msg;
	struct db *empty;
	struct so_err err;

	(void)state;
	assert_int_equal(command(&out, &errs, "--db", dbpath, (char *)NULL),
	    EXIT_OK);
	assert_true(strncmp(out, "study sha3, run 2: partial\n", 27) == 0);
	assert_string_equal(errs, "");
	free(out);
	free(errs);
	assert_int_equal(command(&out, &errs, "--db", dbpath, "--run", "1",
	    "--format", "json", (char *)NULL), EXIT_OK);
	assert_true(strncmp(out, "{", 1) == 0);
	free(out);
	free(errs);

	/* A report never creates the database it was pointed at. */
	msg = xasprintf("seqorch: cannot open \"%s\": No such file or "
	    "directory\n", missing);
	assert_fails(EXIT_DB, msg, "--db", missing, (char *)NULL);
	assert_int_equal(access(missing, F_OK), -1);
	free(msg);

	assert_int_equal(db_open(none, &empty, &err), 0);
	db_close(empty);
	msg = xasprintf("seqorch: no runs in \"%s\" yet (start one with "
	    "\"seqorch run\")\n", none);
	assert_fails(EXIT_FAIL, msg, "--db", none, (char *)NULL);
	free(msg);

	msg = xasprintf("seqorch: no run with id 99 in \"%s\" (latest: 4, 3, "
	    "2, 1)\n", dbpath);
	assert_fails(EXIT_USAGE, msg, "--db", dbpath, "--run", "99",
	    (char *)NULL);
	free(msg);
	assert_fails(EXIT_USAGE, "seqorch: invalid --run \"0\": expected a "
	    "run id\n", "--db", dbpath, "--run", "0", (char *)NULL);
	assert_fails(EXIT_USAGE, "seqorch: \"--run\" and \"--latest\" exclude "
	    "each other\n", "--run", "2", "--latest", (char *)NULL);
	assert_fails(EXIT_USAGE, "seqorch: unknown --format \"xml\" (text, "
	    "markdown, csv, json, html)\n", "--format", "xml", (char *)NULL);
	assert_fails(EXIT_USAGE, "seqorch: unknown reference \"seed:x\" "
	    "(published references: seed:graviton5, seed:m4, seed:genoa)\n",
	    "--reference", "seed:x", (char *)NULL);
	assert_fails(EXIT_USAGE, "seqorch: unknown option \"--colour\" (see "
	    "\"seqorch report --help\")\n", "--colour", (char *)NULL);
	assert_fails(EXIT_USAGE, "seqorch: option \"--study\" needs a "
	    "value\n", "--study", (char *)NULL);
	free(missing);
	free(none);
}

/*
 * The per-cell CSV's numbers without an interval are exact: one sample
 * (no interval), or samples all alike (an interval of width 0); with one,
 * to its precision: two samples of 2.0M and 2.5M have the median 2.25M
 * and the interval [2.0M, 2.5M] (a resample's median is one of 2.0M,
 * 2.25M, 2.5M, each end with probability 1/4), so the place of 250k's
 * second digit, 10k.
 */
static void
test_csv_per_cell(void **state)
{
	char *out, *errs;

	(void)state;
	assert_int_equal(command(&out, &errs, "--db", dbpath, "--run", "3",
	    "--format", "csv", "--per", "cell", (char *)NULL), EXIT_OK);
	assert_string_equal(out, "run_id,study,host,variant,build_id,"
	    "compiler,unit,n,invalid,median_hashes_per_s,"
	    "median_lo95_hashes_per_s,median_hi95_hashes_per_s,"
	    "mean_hashes_per_s,q1_hashes_per_s,q3_hashes_per_s,"
	    "min_hashes_per_s,max_hashes_per_s,cv_pct,ns_per_hash,"
	    "cycles_per_hash,cycles_source,clock_mhz,digest,imported\r\n"
	    "3,sha3,genoa,c-fused,5,cc,hash,1,0,8000000,,,8000000,8000000,"
	    "8000000,8000000,8000000,,125,462.5,calibration,3700,ok,\r\n");
	free(out);
	free(errs);
	assert_int_equal(command(&out, &errs, "--db", dbpath, "--run", "2",
	    "--format", "csv", "--per", "cell", (char *)NULL), EXIT_OK);
	assert_non_null(strstr(out, "\r\n2,sha3,genoa,openssl-evp,1,cc,hash,"
	    "2,1,2250000,2000000,2500000,2250000,2130000,2380000,2000000,"
	    "2500000,16,444,"));
	assert_non_null(strstr(out, "\r\n2,sha3,graviton5,openssl-evp,2,cc,"
	    "hash,3,0,3333333.3333333335,3333333.3333333335,"
	    "3333333.3333333335,3333333.3333333335,"));
	free(out);
	free(errs);
	assert_fails(EXIT_USAGE, "seqorch: \"--per\" goes with \"--format "
	    "csv\"\n", "--per", "cell", (char *)NULL);
	assert_fails(EXIT_USAGE, "seqorch: unknown --per \"cells\"; did you "
	    "mean \"cell\"?\n", "--per", "cells", (char *)NULL);
}

/*
 * One clock per sample set: the median of the samples' own estimates
 * (each the mean of before and after; not the host's one figure taken
 * before sampling), and cycles per hash are that clock times ns per hash,
 * so the two always agree.  A sample whose clock moved more than 10%
 * meanwhile is counted and warned about.
 */
static void
test_sample_clocks(void **state)
{
	static const char sql[] =
	    "INSERT INTO runs (id, study, started_at, finished_at, status,"
	    " steps, samples_per_variant, command, seed, variants, hosts,"
	    " exploratory, coordinator, version) VALUES (1, 'sha3',"
	    " '2026-09-09T10:00:00Z', '2026-09-09T10:01:00Z', 'ok', 1000, 3,"
	    " 'seqorch run', '" SEED "', NULL, 'local', 0, 'coord pid 7',"
	    " '0.1.0');"
	    "INSERT INTO run_hosts (run_id, host, status, calib_mhz,"
	    " started_at) VALUES (1, 'local', 'ok', 1000,"
	    " '2026-09-09T10:00:00Z');"
	    "INSERT INTO builds (id, run_id, host, compiler, cflags, status,"
	    " created_at) VALUES (1, 1, 'local', 'cc', '-O3', 'ok',"
	    " '2026-09-09T10:00:00Z');"
	    /* 1000 ns at 2000 MHz, 1100 ns at 2100 (moved 9%), 900 ns at
	     * 2500 (moved 33%): clock 2100 MHz (not the facts' 1000),
	     * median 1000 ns per hash, 2100 cycles. */
	    "INSERT INTO samples (run_id, host, build_id, study, variant,"
	    " sample_index, position, steps, ns, digest, seed, valid,"
	    " calib_mhz, calib_after_mhz, cpu, received_at) VALUES"
	    " (1, 'local', 1, 'sha3', 'c-fused', 0, 0, 1000, 1000000, '" GOOD
	    "', '" SEED "', 1, 2000, 2000, 1, '2026-09-09T10:00:30Z'),"
	    " (1, 'local', 1, 'sha3', 'c-fused', 1, 0, 1000, 1100000, '" GOOD
	    "', '" SEED "', 1, 2000, 2200, 1, '2026-09-09T10:00:31Z'),"
	    " (1, 'local', 1, 'sha3', 'c-fused', 2, 0, 1000, 900000, '" GOOD
	    "', '" SEED "', 1, 3000, 2000, 1, '2026-09-09T10:00:32Z');";
	char *path = xasprintf("%s/clocks.db", tmpdir), *out, *errs, *line;
	const cJSON *row, *moved;
	const char *p;
	size_t ys = 0;
	struct so_err err;
	struct db *d;
	cJSON *root;

	(void)state;
	assert_int_equal(db_open(path, &d, &err), 0);
	assert_int_equal(sqlite3_exec(db_handle(d), sql, NULL, NULL, NULL),
	    SQLITE_OK);
	/* An event one character over the limit: cut to 397 + "...". */
	assert_int_equal(sqlite3_exec(db_handle(d), "INSERT INTO events"
	    " (run_id, host, at, level, message) VALUES (1, 'local',"
	    " '2026-09-09T10:00:40Z', 'warning', 'x' || printf('%.400c',"
	    " 'y'))", NULL, NULL, NULL), SQLITE_OK);
	db_close(d);

	assert_int_equal(command(&out, &errs, "--db", path, (char *)NULL), 0);
	line = line_with(out, "c-fused", "local", (const char *)NULL);
	assert_non_null(strstr(line, " 2100.0 "));
	free(line);
	line = line_with(out, "local", "ok", (const char *)NULL);
	assert_non_null(strstr(line, " 2100 MHz (samples, median of 3) "));
	free(line);
	/* The wrapped message keeps its first 397 characters, then "...". */
	assert_non_null(p = strstr(out, "    xyyy"));
	for (; *p != '\0' && *p != '.'; p++)
		ys += *p == 'y';
	assert_int_equal(ys, 396);
	assert_int_equal(strncmp(p, "...\n", 4), 0);
	assert_non_null(strstr(out, "  1 of 3 samples: clock estimate moved "
	    "over 10% across the sample (cycles less\n    certain)\n"));
	free(out);
	free(errs);

	assert_int_equal(command(&out, &errs, "--db", path, "--format",
	    "json", (char *)NULL), 0);
	root = cJSON_Parse(out);
	assert_non_null(root);
	row = cJSON_GetArrayItem(at(cJSON_GetArrayItem(at(root, "runs"), 0),
	    "cells"), 0);
	assert_true(close_to(at(row, "cycles_per_step")->valuedouble, 2100));
	assert_true(close_to(at(row, "clock_mhz")->valuedouble, 2100));
	assert_string_equal(at(row, "clock_source")->valuestring, "samples");
	assert_int_equal(at(row, "clock_moved")->valuedouble, 1);
	moved = at(at(cJSON_GetArrayItem(at(root, "runs"), 0), "warnings"),
	    "clock_moved");
	assert_int_equal(at(moved, "samples")->valuedouble, 1);
	assert_int_equal(at(moved, "of")->valuedouble, 3);
	cJSON_Delete(root);
	free(out);
	free(errs);
	unlink(path);
	free(path);
}

/*
 * A host's clock is the median over its samples' own estimates, those
 * without one left out, wherever they stand in the row: a first sample
 * without a clock (the fastest, so it arrives first) once made the row's
 * compaction leave a copy of the last estimate that the host counted.
 */
static void
test_host_clock_skips_unclocked(void **state)
{
	static const char sql[] =
	    "INSERT INTO runs (id, study, started_at, finished_at, status,"
	    " steps, samples_per_variant, command, seed, variants, hosts,"
	    " exploratory, coordinator, version) VALUES (1, 'sha3',"
	    " '2026-09-09T10:00:00Z', '2026-09-09T10:01:00Z', 'ok', 1000, 3,"
	    " 'seqorch run', '" SEED "', NULL, 'local', 0, 'coord pid 7',"
	    " '0.1.0');"
	    "INSERT INTO run_hosts (run_id, host, status, calib_mhz,"
	    " started_at) VALUES (1, 'local', 'ok', 1000,"
	    " '2026-09-09T10:00:00Z');"
	    "INSERT INTO builds (id, run_id, host, compiler, cflags, status,"
	    " created_at) VALUES (1, 1, 'local', 'cc', '-O3', 'ok',"
	    " '2026-09-09T10:00:00Z');"
	    /* No clock, 2000 MHz, 3000 MHz: the median of two, 2500. */
	    "INSERT INTO samples (run_id, host, build_id, study, variant,"
	    " sample_index, position, steps, ns, digest, seed, valid,"
	    " calib_mhz, calib_after_mhz, cpu, received_at) VALUES"
	    " (1, 'local', 1, 'sha3', 'c-fused', 0, 0, 1000, 900000, '" GOOD
	    "', '" SEED "', 1, 0, 0, 1, '2026-09-09T10:00:30Z'),"
	    " (1, 'local', 1, 'sha3', 'c-fused', 1, 0, 1000, 1000000, '" GOOD
	    "', '" SEED "', 1, 2000, 2000, 1, '2026-09-09T10:00:31Z'),"
	    " (1, 'local', 1, 'sha3', 'c-fused', 2, 0, 1000, 1100000, '" GOOD
	    "', '" SEED "', 1, 3000, 3000, 1, '2026-09-09T10:00:32Z');";
	char *path = xasprintf("%s/unclocked.db", tmpdir), *out, *errs, *line;
	struct so_err err;
	struct db *d;

	(void)state;
	assert_int_equal(db_open(path, &d, &err), 0);
	assert_int_equal(sqlite3_exec(db_handle(d), sql, NULL, NULL, NULL),
	    SQLITE_OK);
	db_close(d);
	assert_int_equal(command(&out, &errs, "--db", path, (char *)NULL), 0);
	line = line_with(out, "local", "ok", (const char *)NULL);
	assert_non_null(strstr(line, " 2500 MHz (samples, median of 2) "));
	free(line);
	free(out);
	free(errs);
	unlink(path);
	free(path);
}

/* A sample of the pooling test: its row, steps, ns and position. */
struct pool_sample {
	const char	*host, *variant;
	int64_t		 build, steps, ns, position;
};

/* What db_report_pairs hands on, one line a pair of builds. */
static void
collect_pair(const struct db_pair_row *p, void *arg)
{
	char **out = arg, *line;
	size_t i;

	line = xasprintf("%s%s %s %lld/%lld %s/%s%s n %zu:", *out, p->host,
	    p->variant, (long long)p->a_id, (long long)p->b_id, p->a_compiler,
	    p->b_compiler, p->b_baseline ? " baseline" : "", p->n);
	free(*out);
	for (i = 0; i < p->n; i++) {
		*out = xasprintf("%s %g", line, p->ratios[i]);
		free(line);
		line = *out;
	}
	*out = xasprintf("%s\n", line);
	free(line);
}

/*
 * Three builds of a host: every later build is paired with each earlier
 * one, sample by sample (same variant, index and steps, both valid), the
 * ratio b / a of ns ascending; a sample without its partner, an invalid
 * one and another run's build are left out; the baseline is the host's
 * first ok build at the default targeting.
 */
static void
test_pairs_of_three_builds(void **state)
{
	static const char sql[] =
	    "INSERT INTO runs (id, study, started_at, status, steps,"
	    " samples_per_variant, command, seed, hosts, coordinator, version)"
	    " VALUES (1, 'sha3', '2026-12-06T10:00:00Z', 'ok', 1000, 3, 'run',"
	    " '" SEED "', 'h', 'c', '0'),"
	    " (2, 'sha3', '2026-12-06T11:00:00Z', 'ok', 1000, 3, 'run',"
	    " '" SEED "', 'h', 'c', '0');"
	    "INSERT INTO builds (id, run_id, host, compiler, cflags, status,"
	    " targeting, created_at) VALUES"
	    " (1, 1, 'h', 'gcc', '-O3', 'ok', 'native', '2026-12-06T10:00:00Z'),"
	    " (2, 1, 'h', 'clang', '-O3', 'ok', 'default', '2026-12-06T10:00:00Z'),"
	    " (3, 1, 'h', 'gcc', '-O3', 'ok', 'default', '2026-12-06T10:00:00Z'),"
	    " (4, 2, 'h', 'gcc', '-O3', 'ok', NULL, '2026-12-06T11:00:00Z');"
	    "INSERT INTO samples (run_id, host, build_id, study, variant,"
	    " sample_index, position, steps, ns, digest, seed, valid,"
	    " received_at) VALUES"
	    " (1, 'h', 1, 'sha3', 'v', 0, 0, 1000, 100, '" GOOD "', '" SEED "',"
	    "  1, 'x'),"
	    " (1, 'h', 1, 'sha3', 'v', 1, 1, 1000, 100, '" GOOD "', '" SEED "',"
	    "  1, 'x'),"
	    " (1, 'h', 2, 'sha3', 'v', 0, 0, 1000, 200, '" GOOD "', '" SEED "',"
	    "  1, 'x'),"
	    " (1, 'h', 2, 'sha3', 'v', 1, 1, 1000, 50, '" GOOD "', '" SEED "',"
	    "  1, 'x'),"
	    " (1, 'h', 3, 'sha3', 'v', 0, 0, 1000, 400, '" GOOD "', '" SEED "',"
	    "  1, 'x'),"
	    " (1, 'h', 3, 'sha3', 'v', 1, 1, 1000, 400, '" BAD "', '" SEED "',"
	    "  0, 'x'),"
	    " (1, 'h', 3, 'sha3', 'v', 2, 2, 1000, 400, '" GOOD "', '" SEED "',"
	    "  1, 'x'),"
	    " (2, 'h', 4, 'sha3', 'v', 0, 0, 1000, 800, '" GOOD "', '" SEED "',"
	    "  1, 'x');";
	char *path = xasprintf("%s/pairs.db", tmpdir), *out = xstrdup("");
	struct db *d;
	struct so_err err;

	(void)state;
	assert_int_equal(db_open(path, &d, &err), 0);
	assert_int_equal(sqlite3_exec(db_handle(d), sql, NULL, NULL, NULL),
	    SQLITE_OK);
	assert_int_equal(db_report_pairs(db_handle(d), 1, collect_pair, &out,
	    &err), 0);
	assert_string_equal(out,
	    "h v 2/1 clang/gcc n 2: 0.5 2\n"
	    "h v 3/1 gcc/gcc n 1: 0.25\n"
	    "h v 3/2 gcc/clang baseline n 1: 0.5\n");
	free(out);
	out = xstrdup("");
	assert_int_equal(db_report_pairs(db_handle(d), 2, collect_pair, &out,
	    &err), 0);
	assert_string_equal(out, "");
	free(out);
	db_close(d);
	free(path);
}

/*
 * A run whose clang build failed, then built again by its resume (build
 * 3: same host, compiler and flags) and measured beside gcc, one sample
 * each: one pair of builds.
 */
static const char retried_sql[] =
    "INSERT INTO runs (id, study, started_at, finished_at, status, steps,"
    " samples_per_variant, command, seed, hosts, coordinator, version)"
    " VALUES (1, 'sha3', '2026-12-07T10:00:00Z', '2026-12-07T10:05:00Z',"
    " 'ok', 1000, 1, 'run', '" SEED "', 'h', 'c', '0');"
    "INSERT INTO run_hosts (run_id, host, status, started_at) VALUES"
    " (1, 'h', 'ok', '2026-12-07T10:00:00Z');"
    "INSERT INTO builds (id, run_id, host, compiler, cflags, status,"
    " created_at) VALUES"
    " (1, 1, 'h', 'gcc', '-O3', 'ok', '2026-12-07T10:00:00Z'),"
    " (2, 1, 'h', 'clang', '-O3', 'failed', '2026-12-07T10:00:00Z'),"
    " (3, 1, 'h', 'clang', '-O3', 'ok', '2026-12-07T10:04:00Z');"
    "INSERT INTO variants (run_id, host, build_id, study, variant, status,"
    " reason) VALUES"
    " (1, 'h', 1, 'sha3', 'c-fused', 'ok', NULL),"
    " (1, 'h', 2, 'sha3', 'c-fused', 'unavailable', 'build failed'),"
    " (1, 'h', 3, 'sha3', 'c-fused', 'ok', NULL);"
    "INSERT INTO samples (run_id, host, build_id, study, variant,"
    " sample_index, position, steps, ns, digest, seed, valid,"
    " received_at) VALUES"
    " (1, 'h', 1, 'sha3', 'c-fused', 0, 0, 1000, 200, '" GOOD "',"
    "  '" SEED "', 1, 'x'),"
    " (1, 'h', 3, 'sha3', 'c-fused', 0, 1, 1000, 100, '" GOOD "',"
    "  '" SEED "', 1, 'x');";

/* Member key of o, a number; fails the test when there is none. */
static double
json_num(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItem(o, key);

	if (!cJSON_IsNumber(x))
		fail_msg("no number \"%s\"", key);
	return x->valuedouble;
}

/* Run 1 of d as format prints it (NULL: the run's summary); caller frees. */
static char *
render_db(struct db *d, const char *format)
{
	struct report_opts o = { 1, NULL, 0, NULL, "r.db", NULL, 0, 0 };
	struct so_err err;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	if (format == NULL) {
		runner_summary(d, 1, "", "", NULL, "ok", f);
	} else {
		o.format = fmt(format);
		if (report_print(db_handle(d), &o, f, &err) != 0)
			fail_msg("report failed: %s", err.msg);
	}
	assert_int_equal(fclose(f), 0);
	return text;
}

/* The retried run's database, made afresh in tmpdir as name. */
static struct db *
retried_db(const char *name)
{
	char *path = xasprintf("%s/%s", tmpdir, name);
	struct db *d;
	struct so_err err;

	assert_int_equal(db_open(path, &d, &err), 0);
	assert_int_equal(sqlite3_exec(db_handle(d), retried_sql, NULL, NULL,
	    NULL), SQLITE_OK);
	free(path);
	return d;
}

/*
 * The build a resume built again stands for the failed one: its variants
 * are not "not run" (the summary and the report listed c-fused on
 * "clang#2" unavailable after the resume had measured it) and the rows
 * are "clang", not "clang#3"; the failed build is said to be built again.
 */
static void
test_retried_build(void **state)
{
	struct db *d = retried_db("retried.db");
	char *out;

	(void)state;
	out = render_db(d, NULL);
	assert_null(strstr(out, "not run"));
	assert_null(strstr(out, "#"));
	assert_non_null(strstr(out, "\n  h            c-fused (clang) "));
	free(out);
	out = render_db(d, "text");
	assert_null(strstr(out, "unavailable"));
	assert_null(strstr(out, "clang#"));
	assert_non_null(strstr(out, "\n  build 2 (clang) on \"h\" failed, "
	    "built again as build 3\n"));
	free(out);
	db_close(d);
}

/*
 * The summary weighs the best against the other build of its variant by
 * the report's paired ratio (it gave the ratio of the medians, which
 * disagreed with the report); the JSON's best[].against[] names the
 * other build by id; HTML escapes the interval's "n < 2".
 */
static void
test_pairs_in_summary_json_html(void **state)
{
	struct db *d = retried_db("pairs-summary.db");
	char *out;
	cJSON *js, *a;

	(void)state;
	out = render_db(d, NULL);
	assert_non_null(strstr(out, "\n    c-fused (clang) against c-fused "
	    "(gcc), paired over 1 pair: 2.000x [no interval: n < 2], not "
	    "distinguishable at this precision\n"));
	free(out);
	out = render_db(d, "json");
	js = cJSON_Parse(out);
	assert_non_null(js);
	a = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(js, "runs"), 0), "paired"),
	    "best"), 0);
	assert_int_equal(json_num(a, "build_id"), 3);
	a = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "against"), 0);
	assert_int_equal(json_num(a, "build_id"), 1);
	assert_string_equal(cJSON_GetObjectItem(a, "build")->valuestring,
	    "gcc");
	assert_int_equal(json_num(a, "pairs"), 1);
	cJSON_Delete(js);
	free(out);
	out = render_db(d, "html");
	assert_non_null(strstr(out, "<td>[no interval: n &lt; 2]</td>"));
	assert_null(strstr(out, "n < 2"));
	free(out);
	db_close(d);
}

/*
 * Pairs are of samples taken in one window: the retried clang's sample 0,
 * measured by the resume (window 2), stands beside gcc's sample 0 of the
 * first run (window 1) in no pair, and the report says so; sample 1 of
 * both builds, taken side by side in window 2, is the one pair.  Before,
 * samples of the same index were paired whatever their windows.
 */
static void
test_pairs_within_one_window(void **state)
{
	struct db *d = retried_db("pairs-windows.db");
	char *out;

	(void)state;
	assert_int_equal(sqlite3_exec(db_handle(d),
	    "INSERT INTO windows (id, run_id, study, host, build_id, holder,"
	    " started_at, finished_at) VALUES"
	    " (1, 1, 'sha3', 'h', 1, 'c', '2026-12-07T10:00:10.000Z',"
	    "  '2026-12-07T10:00:30.000Z'),"
	    " (2, 1, 'sha3', 'h', 1, 'c', '2026-12-07T10:04:10.000Z',"
	    "  '2026-12-07T10:04:30.000Z');"
	    "UPDATE samples SET window_id = CASE build_id WHEN 1 THEN 1"
	    " ELSE 2 END;"
	    "INSERT INTO samples (run_id, host, build_id, study, variant,"
	    " sample_index, position, steps, ns, digest, seed, valid,"
	    " received_at, window_id) VALUES"
	    " (1, 'h', 1, 'sha3', 'c-fused', 1, 0, 1000, 100, '" GOOD "',"
	    "  '" SEED "', 1, '2026-12-07T10:04:21.000Z', 2),"
	    " (1, 'h', 3, 'sha3', 'c-fused', 1, 1, 1000, 100, '" GOOD "',"
	    "  '" SEED "', 1, '2026-12-07T10:04:22.000Z', 2);", NULL, NULL,
	    NULL), SQLITE_OK);
	out = render_db(d, NULL);
	assert_non_null(strstr(out, ", paired over 1 pair: 1.000x "));
	free(out);
	out = render_db(d, "text");
	assert_non_null(strstr(out, "\n  h     c-fused  clang  gcc           1  "
	    "1.000x  "));
	assert_non_null(strstr(out, "\n  1 sample of c-fused (clang) on \"h\" "
	    "measured in a later launch than gcc's, not\n  paired\n"));
	free(out);
	/* Markdown and HTML say it too, once each. */
	out = render_db(d, "markdown");
	assert_non_null(strstr(out, "\n1 sample of c-fused (clang) on "
	    "\"h\" measured in a later launch than gcc's, not paired\n"));
	free(out);
	out = render_db(d, "html");
	assert_non_null(strstr(out, "<p>1 sample of c-fused (clang) on "
	    "&quot;h&quot; measured in a later launch than gcc's, not "
	    "paired</p>\n"));
	free(out);
	db_close(d);
}

/*
 * The position test pools every row's rates over the row's mean and
 * tests each position against all others: its numbers are those of the
 * two lists taken apart and sorted by hand, whatever the positions' values
 * (a negative one, one past 2^32), with rates tied across positions (two
 * rows of the same ns) and a row of two steps values, whose rates do not
 * arrive in order.
 */
static void
test_positions_pool(void **state)
{
	static const int64_t posv[] = { 7, -3, (int64_t)1 << 40 };
	enum { N = 40, NROW = 3, NPOS = 3 };
	struct pool_sample s[N * NROW];
	double rates[NROW][N], sorted[N], mean[NROW], *in, *out, want_p;
	struct stats_desc d;
	struct stats_ratio want;
	struct so_err err;
	struct rrun r;
	struct db *d2;
	sqlite3_stmt *st;
	char *path = xasprintf("%s/pool.db", tmpdir);
	size_t i, k, nin, nout, row;

	(void)state;
	for (i = 0; i < N; i++) {
		s[i] = (struct pool_sample){ "a", "v1", 1, 1000,
		    1000000 + (int64_t)(i * 7919 % 97) * 100, posv[i % 3] };
		s[N + i] = (struct pool_sample){ "b", "v1", 2, 1000, s[i].ns,
		    posv[(i + 1) % 3] };
		s[2 * N + i] = (struct pool_sample){ "a", "v2", 1,
		    i % 2 ? 2000 : 1000, (i % 2 ? 2 : 1) * (900000 +
		    (int64_t)(i * 31 % 13) * 1000), posv[(i + 2) % 3] };
	}
	assert_int_equal(db_open(path, &d2, &err), 0);
	assert_int_equal(sqlite3_exec(db_handle(d2),
	    "INSERT INTO runs (id, study, started_at, finished_at, status,"
	    " steps, samples_per_variant, command, seed, hosts, exploratory,"
	    " coordinator, version) VALUES (1, 'sha3', '2026-09-09T10:00:00Z',"
	    " '2026-09-09T10:01:00Z', 'ok', 1000, 40, 'seqorch run', '" SEED
	    "', 'a,b', 0, 'coord', '0.1.0');"
	    "INSERT INTO builds (id, run_id, host, compiler, cflags, status,"
	    " created_at) VALUES (1, 1, 'a', 'cc', '-O3', 'ok', '2026-09-09'),"
	    " (2, 1, 'b', 'cc', '-O3', 'ok', '2026-09-09');", NULL, NULL,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db_handle(d2),
	    "INSERT INTO samples (run_id, host, build_id, study, variant,"
	    " sample_index, position, steps, ns, digest, seed, valid, cpu,"
	    " received_at) VALUES (1, ?1, ?2, 'sha3', ?3, ?4, ?5, ?6, ?7, '"
	    GOOD "', '" SEED "', 1, 1, '2026-09-09T10:00:30Z')", -1, &st,
	    NULL), SQLITE_OK);
	for (i = 0; i < N * NROW; i++) {
		sqlite3_bind_text(st, 1, s[i].host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, s[i].build);
		sqlite3_bind_text(st, 3, s[i].variant, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)(i % N));
		sqlite3_bind_int64(st, 5, s[i].position);
		sqlite3_bind_int64(st, 6, s[i].steps);
		sqlite3_bind_int64(st, 7, s[i].ns);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	assert_int_equal(report_load_run(db_handle(d2), 1, 0, &r, &err), 0);

	/* Each row's mean as the report takes it: over its sorted rates. */
	for (row = 0; row < NROW; row++) {
		for (i = 0; i < N; i++) {
			rates[row][i] = (double)s[row * N + i].steps * 1e9 /
			    (double)s[row * N + i].ns;
			sorted[i] = rates[row][i];
		}
		stats_describe(sorted, N, &d);
		mean[row] = d.mean;
	}
	in = xmalloc(N * NROW * sizeof *in);
	out = xmalloc(N * NROW * sizeof *out);
	assert_int_equal(r.npositions, NPOS);
	/* In ascending order of position: -3, 7, 2^40. */
	for (k = 0; k < NPOS; k++) {
		int64_t p = posv[k == 0 ? 1 : k == 1 ? 0 : 2];

		for (nin = nout = 0, i = 0; i < N * NROW; i++) {
			double v = rates[i / N][i % N] / mean[i / N];

			if (s[i].position == p)
				in[nin++] = v;
			else
				out[nout++] = v;
		}
		stats_sort(in, nin);
		stats_sort(out, nout);
		stats_ratio(in, nin, out, nout, STATS_SEED, &want);
		want_p = stats_rank_p(in, nin, out, nout);
		assert_true(r.positions[k].position == p);
		assert_int_equal(r.positions[k].n, nin);
		assert_true(r.positions[k].s.ratio == want.ratio);
		assert_true(r.positions[k].s.lo == want.lo);
		assert_true(r.positions[k].s.hi == want.hi);
		assert_true(r.positions[k].p == want_p);
	}
	free(out);
	free(in);
	report_free_run(&r);
	db_close(d2);
	unlink(path);
	free(path);
}

/*
 * What report_shortest must write, the slow way: each count of digits in
 * turn until %.*g reads back; if that has an exponent and 1e-20 <= |v| <
 * 1e21, each count of decimals in turn until %.*f reads back.
 */
static void
shortest_oracle(double v, char *buf, size_t len)
{
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (strchr(buf, 'e') == NULL || fabs(v) >= 1e21 || fabs(v) < 1e-20)
		return;
	for (p = 0; p <= 40; p++) {
		snprintf(buf, len, "%.*f", p, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	fail_msg("%.17g: no plain decimal of 40 places reads back", v);
}

static void
check_shortest(double v)
{
	char want[64], got[64];

	shortest_oracle(v, want, sizeof want);
	report_shortest(v, got, sizeof got);
	if (strcmp(want, got) != 0)
		fail_msg("%.17g: \"%s\", want \"%s\"", v, got, want);
}

/*
 * report_shortest (the CSV's rates) against the oracle: rates and ns per
 * step as runs make them, values whose dropped digits are a 5 then zeros
 * (which its shortcut leaves to printf), powers of two (where its
 * bisection cannot be used), carries into a new power of ten, the
 * extremes, and random doubles of every exponent.
 */
static void
test_shortest(void **state)
{
	static const double fixed[] = {
		0, -0.0, 1, -1, 0.5, 0.1, 0.3, 2.5, 3000, 3010, 1e21, 1e22,
		1e-5, 1.5e-7, 123456789012345678.0, 9.5, 0.95, 99.95, 9999999.5,
		999999999999999.9, 0.000123, 4194304, 0x1p-30, 0x1p60, 0x1p-1074, 1e-20, 9.99e-21, -1.25e-19, 1.2345e-15,
		1.7976931348623157e308, 2.2250738585072014e-308, 383.02561,
		4243244.3147083055, 235.6687303, INFINITY, -INFINITY,
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL, bits;
	char text[32];
	double v;
	size_t i;
	int e;

	(void)state;
	for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		check_shortest(fixed[i]);
	for (i = 0; i < 50000; i++) {
		/* xorshift64: the same values every run. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (i % 6) {
		case 0:		/* a rate: steps * 1e9 / ns */
			v = (double)(1000 + x % 20000000) * 1e9 /
			    (double)(1000000 + (x >> 24) % 5000000000ULL);
			break;
		case 1:		/* ns per step */
			v = (double)(1000000 + (x >> 8) % 5000000000ULL) /
			    (double)(1 + (x >> 40) % 20000000);
			break;
		case 2:		/* a few decimal digits */
			v = (double)(x % 100000) / 1000.0;
			break;
		case 5:		/* a clock as the agent writes it, %.15g */
			snprintf(text, sizeof text, "%.15g",
			    2000.0 + (double)(x >> 11) * 0x1p-53 * 3000.0);
			v = strtod(text, NULL);
			break;
		case 3:		/* any finite double */
			memcpy(&bits, &x, sizeof bits);
			memcpy(&v, &bits, sizeof v);
			if (!isfinite(v))
				continue;
			break;
		default:	/* a power of two, or a neighbour of one */
			e = (int)(x % 200) - 100;
			v = ldexp(1.0, e);
			v = (x >> 32) % 3 == 0 ? v : (x >> 32) % 3 == 1 ?
			    nextafter(v, 0) : nextafter(v, INFINITY);
			break;
		}
		check_shortest(v);
	}
}

static void
test_format_rate(void **state)
{
	char buf[16];

	(void)state;
	report_format_rate(4056000, buf, sizeof buf);
	assert_string_equal(buf, "4.056M");
	report_format_rate(12345678, buf, sizeof buf);
	assert_string_equal(buf, "12.35M");
	report_format_rate(812500, buf, sizeof buf);
	assert_string_equal(buf, "812.5k");
	/* Rounding up must carry into the next unit. */
	report_format_rate(999960, buf, sizeof buf);
	assert_string_equal(buf, "1.000M");
	report_format_rate(950, buf, sizeof buf);
	assert_string_equal(buf, "950.0");
	report_format_rate(0, buf, sizeof buf);
	assert_string_equal(buf, "-");
	report_format_rate(NAN, buf, sizeof buf);
	assert_string_equal(buf, "-");
}

static int
listed(const char **list, const char *v)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strcmp(list[i], v) == 0)
			return 1;
	return 0;
}

static void
free_list(const char **list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		free((char *)list[i]);
	free(list);
}

/*
 * A group in a --study list is its studies in order; a study the list
 * names twice, through a group or not, is reported; other names stay.
 */
static void
test_study_expand(void **state)
{
	char *list, *twice;

	(void)state;
	list = study_expand("mul,sha3,div,randomx", &twice);
	assert_string_equal(list, "mul,sha3,div32,div64,randomx");
	assert_null(twice);
	free(list);
	list = study_expand("div,div64", &twice);
	assert_string_equal(list, "div32,div64,div64");
	assert_string_equal(twice, "div64");
	free(twice);
	free(list);
	list = study_expand("sha3,sha,sha3", &twice);
	assert_string_equal(list, "sha3,sha,sha3");
	assert_string_equal(twice, "sha3");
	free(twice);
	free(list);
	list = study_expand("mul-wide,mul", &twice);
	assert_null(twice);
	free(list);
	assert_non_null(study_group_find("div"));
	assert_null(study_group_find("div32"));
}

/*
 * Apple clang's -dumpmachine says arm64: the ARM variants are the M4's
 * (kernels/registry.sh's ARCH_ALIASES), the x86 ones are not.
 */
static void
test_arch_apple(void **state)
{
	struct run_params p = { .study = "sha3" };
	const char **list;
	char arch[32];

	(void)state;
	assert_string_equal(study_arch("arm64-apple-darwin24.1.0", arch,
	    sizeof arch), "aarch64");
	assert_string_equal(study_arch("aarch64-linux-gnu", arch,
	    sizeof arch), "aarch64");
	assert_string_equal(study_arch("x86_64-pc-linux-gnu", arch,
	    sizeof arch), "x86_64");
	assert_string_equal(study_arch("riscv64-linux-gnu", arch,
	    sizeof arch), "riscv64");
	list = run_variants(&p, "arm64-apple-darwin24.1.0");
	assert_true(listed(list, "arm-sha3-fused"));
	assert_true(listed(list, "c-fused"));
	assert_false(listed(list, "avx2-fused"));
	free_list(list);
	list = run_variants(&p, "aarch64-linux-gnu");
	assert_true(listed(list, "arm-sha3-fused"));
	free_list(list);
	assert_string_equal(run_openssl_cap_var("arm64-apple-darwin24.1.0"),
	    "OPENSSL_armcap");
	assert_string_equal(run_openssl_cap_var("x86_64-linux-gnu"),
	    "OPENSSL_ia32cap");
	assert_null(run_openssl_cap_var("riscv64-linux-gnu"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_latest_per_study),
		cmocka_unit_test(test_medians),
		cmocka_unit_test(test_best_and_ratio),
		cmocka_unit_test(test_header_and_warnings),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_failed_build),
		cmocka_unit_test(test_digest_mismatch),
		cmocka_unit_test(test_exploratory),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_empty_db),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_agrees_with_summary_view),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_csv_per_cell),
		cmocka_unit_test(test_sample_clocks),
		cmocka_unit_test(test_host_clock_skips_unclocked),
		cmocka_unit_test(test_positions_pool),
		cmocka_unit_test(test_pairs_of_three_builds),
		cmocka_unit_test(test_retried_build),
		cmocka_unit_test(test_pairs_in_summary_json_html),
		cmocka_unit_test(test_pairs_within_one_window),
		cmocka_unit_test(test_format_rate),
		cmocka_unit_test(test_shortest),
		cmocka_unit_test(test_renderer_for_path),
		cmocka_unit_test(test_arch_apple),
		cmocka_unit_test(test_study_expand),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

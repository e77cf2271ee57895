/*
 * seqorch-agent: runs one study's variants on this host and prints JSON
 * lines (docs/protocol.md): hello, facts, one variant record per variant
 * (self-test result), selftest, then the measurement window: a window
 * record with the host's state, one sample record per timed sample,
 * another window record, and done.  Setup, self-tests and the wait for the
 * host lock all happen before the window begins.
 */
#include "cpu.h"
#include "facts.h"
#include "lock.h"
#include "macos.h"
#include "perf.h"
#include "pin.h"
#include "preflight.h"
#include "registry.h"
#include "state.h"
#include "sysfs.h"
#include "timing.h"
#include "topology.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENT_VERSION "0.2.0"
#define MAX_VARIANTS 64
#define MAX_SAMPLES 100000
#define MAX_HOLDER 1024
#define MAX_TOKEN 64
#define CPU_AUTO (-2)
#define MAX_BUILDS 16
#define MAX_LINE 65536		/* a record, as the coordinator bounds it */

/* Exit codes of the agent (docs/protocol.md). */
enum { AG_OK = 0, AG_FAIL = 1, AG_USAGE = 2, AG_IO = 3, AG_LOCKED = 4,
    AG_NOISY = 5 };

struct opts {
	const char *study;
	const char *variants;
	const char *build_id;
	const char *token;	/* the coordinator's run token, echoed */
	const char *out;
	const char *lock;
	const char *holder;
	int no_wait;
	uint64_t steps;		/* 0: the study's default */
	uint64_t samples;
	uint64_t first_sample;
	uint64_t max_samples;
	double max_cv;		/* 0: no adaptive samples */
	int cpu;		/* -1 none, CPU_AUTO: topology_pick */
	int reverse;
	int list;
	int openssl;		/* --openssl: the libcrypto loaded */
	int preflight;		/* --preflight: the verdict alone */
	int require_quiet;
	int serve;		/* --serve: self-test, then sample on request */
	int conduct;		/* --conduct: drive the --build agents */
	const char *builds[MAX_BUILDS];	/* --build ID:SHA256:PATH */
	size_t nbuilds;
	uint64_t order;		/* next place in the host's whole order */
	uint8_t seed[KERNEL_MAX_STATE];
	size_t seed_len;
	int have_seed;
};

struct slot {
	const char *study, *variant;
	const struct kernel *k;
	void *ctx;
	int ready;		/* passed every check; will be timed */
	const char *status;	/* ok, skipped, failed */
	char reason[256];
	const char *warning;	/* the kernel's, after setup; or NULL */
	uint8_t chain[KERNEL_MAX_STATE];
	uint64_t n;		/* samples timed, and their ns (Welford) */
	double mean, m2;
	char more[128];		/* why the next sample is beyond the plan */
};

static FILE *out;
static struct perf counters;	/* around each sample, when available */
/*
 * A conductor's output interleaves its build agents' records with its
 * own: a build record names whose records follow.  cur_build is the
 * index of that build, -1 for the conductor's own records.
 */
static int conducting;
static int cur_build = -1;

static void
hex(const uint8_t *p, size_t n, char *buf)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		buf[2 * i] = d[p[i] >> 4];
		buf[2 * i + 1] = d[p[i] & 15];
	}
	buf[2 * n] = '\0';
}

/* Print obj as one line, flush it (the coordinator streams), free it. */
static void
emit(cJSON *obj)
{
	char *s;

	/* A conductor's own record after a build's: say it is its own. */
	if (conducting && cur_build != -1) {
		cJSON *b = cJSON_CreateObject();

		cur_build = -1;
		if (b == NULL) {
			fprintf(stderr, "seqorch-agent: out of memory\n");
			exit(AG_FAIL);
		}
		cJSON_AddStringToObject(b, "type", "build");
		cJSON_AddStringToObject(b, "build_id", "");
		emit(b);
	}
	s = cJSON_PrintUnformatted(obj);

	cJSON_Delete(obj);
	if (s == NULL || fprintf(out, "%s\n", s) < 0 || fflush(out) != 0) {
		fprintf(stderr, "seqorch-agent: cannot write record: %s\n",
		    strerror(errno));
		exit(AG_IO);
	}
	free(s);
}

static cJSON *
record(const char *type)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL) {
		fprintf(stderr, "seqorch-agent: out of memory\n");
		exit(AG_FAIL);
	}
	cJSON_AddStringToObject(o, "type", type);
	return o;
}

static void __attribute__((format(printf, 2, 3), noreturn))
fatal(int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	cJSON *o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "seqorch-agent: %s\n", msg);
	if (out != NULL) {
		o = record("error");
		cJSON_AddStringToObject(o, "message", msg);
		emit(o);
	}
	exit(code);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: seqorch-agent --study NAME [--variants a,b] [--steps N]\n"
	    "                     [--samples K] [--first-sample S]\n"
	    "                     [--max-cv X --max-samples M]\n"
	    "                     [--cpu N|none|auto] [--order rotate|reverse]\n"
	    "                     [--seed HEX] [--build-id ID] [--token HEX]\n"
	    "                     [--out FILE]\n"
	    "                     [--lock FILE --holder TEXT [--no-wait]]\n"
	    "                     [--require-quiet] [--serve]\n"
	    "       seqorch-agent --conduct --build ID:SHA256:PATH ...\n"
	    "                     [the options above but --max-cv]\n"
	    "       seqorch-agent --preflight [--cpu N|none|auto]\n"
	    "       seqorch-agent --list\n"
	    "       seqorch-agent --openssl\n"
	    "Prints JSON lines (protocol %d, docs/protocol.md).\n",
	    SEQORCH_PROTO_VERSION);
}

static uint64_t
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s == '-' || *s == '\0')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		goto bad;
	return v;
bad:
	fatal(AG_USAGE, "invalid %s \"%s\": expected an integer from %llu to "
	    "%llu", opt, s, (unsigned long long)min, (unsigned long long)max);
}

/* A coefficient of variation: a fraction above 0, at most 1 (100%). */
static double
parse_fraction(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0 && v <= 1))
		fatal(AG_USAGE, "invalid %s \"%s\": expected a fraction above 0 "
		    "and at most 1 (0.01 is 1%%)", opt, s);
	return v;
}

/* The holder text is shown to other users on one line: keep it printable. */
static const char *
parse_holder(const char *s)
{
	const unsigned char *p;

	if (*s == '\0' || strlen(s) > MAX_HOLDER)
		fatal(AG_USAGE, "invalid --holder: expected 1 to %d bytes",
		    MAX_HOLDER);
	for (p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fatal(AG_USAGE, "invalid --holder: control character "
			    "at byte %d", (int)((const char *)p - s));
	return s;
}

static void
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "study", required_argument, NULL, 's' },
		{ "variants", required_argument, NULL, 'v' },
		{ "steps", required_argument, NULL, 'n' },
		{ "samples", required_argument, NULL, 'k' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "order", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 'S' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "token", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'O' },
		{ "first-sample", required_argument, NULL, 'F' },
		{ "max-cv", required_argument, NULL, 'x' },
		{ "max-samples", required_argument, NULL, 'm' },
		{ "lock", required_argument, NULL, 'L' },
		{ "holder", required_argument, NULL, 'H' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "list", no_argument, NULL, 'l' },
		{ "openssl", no_argument, NULL, 'Y' },
		{ "preflight", no_argument, NULL, 'P' },
		{ "require-quiet", no_argument, NULL, 'Q' },
		{ "serve", no_argument, NULL, 'V' },
		{ "conduct", no_argument, NULL, 'C' },
		{ "build", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof *o);
	o->samples = 3;
	o->cpu = -1;
	o->build_id = "";
	o->token = "";
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->study = optarg; break;
		case 'v': o->variants = optarg; break;
		case 'n':
			o->steps = parse_u64("--steps", optarg, 1,
			    1000000000000ULL);
			break;
		case 'k':
			o->samples = parse_u64("--samples", optarg, 1,
			    MAX_SAMPLES);
			break;
		case 'F':
			o->first_sample = parse_u64("--first-sample", optarg, 0,
			    1000000000);
			break;
		case 'x': o->max_cv = parse_fraction("--max-cv", optarg); break;
		case 'm':
			o->max_samples = parse_u64("--max-samples", optarg, 1,
			    MAX_SAMPLES);
			break;
		case 'L': o->lock = optarg; break;
		case 'H': o->holder = parse_holder(optarg); break;
		case 'W': o->no_wait = 1; break;
		case 'c':
			o->cpu = strcmp(optarg, "none") == 0 ? -1 :
			    strcmp(optarg, "auto") == 0 ? CPU_AUTO :
			    (int)parse_u64("--cpu", optarg, 0, 65535);
			break;
		case 'o':
			if (strcmp(optarg, "rotate") == 0)
				o->reverse = 0;
			else if (strcmp(optarg, "reverse") == 0)
				o->reverse = 1;
			else
				fatal(AG_USAGE, "invalid --order \"%s\": "
				    "expected rotate or reverse", optarg);
			break;
		case 'S':
			o->seed_len = strlen(optarg) / 2;
			if (strlen(optarg) % 2 != 0 ||
			    o->seed_len > KERNEL_MAX_STATE ||
			    strspn(optarg, "0123456789abcdefABCDEF") !=
			    strlen(optarg))
				fatal(AG_USAGE, "invalid --seed: expected at "
				    "most %d bytes of hex", KERNEL_MAX_STATE);
			o->have_seed = 1;
			for (size_t i = 0; i < o->seed_len; i++) {
				unsigned v;

				sscanf(optarg + 2 * i, "%2x", &v);
				o->seed[i] = (uint8_t)v;
			}
			break;
		case 'b': o->build_id = optarg; break;
		case 't':
			if (*optarg == '\0' || strlen(optarg) > MAX_TOKEN ||
			    strspn(optarg, "0123456789abcdef") != strlen(optarg))
				fatal(AG_USAGE, "invalid --token: expected 1 to "
				    "%d lowercase hex digits", MAX_TOKEN);
			o->token = optarg;
			break;
		case 'O': o->out = optarg; break;
		case 'l': o->list = 1; break;
		case 'Y': o->openssl = 1; break;
		case 'P': o->preflight = 1; break;
		case 'Q': o->require_quiet = 1; break;
		case 'V': o->serve = 1; break;
		case 'C': o->conduct = 1; break;
		case 'B':
			if (o->nbuilds == MAX_BUILDS)
				fatal(AG_USAGE, "more than %d --build", MAX_BUILDS);
			o->builds[o->nbuilds++] = optarg;
			break;
		case 'h': usage(stdout); exit(AG_OK);
		default: usage(stderr); exit(AG_USAGE);
		}
	}
	if (optind != argc)
		fatal(AG_USAGE, "unexpected argument \"%s\"", argv[optind]);
	if (!o->list && !o->openssl && !o->preflight && o->study == NULL)
		fatal(AG_USAGE, "--study is required");
	/* Options that only make sense together must come together. */
	if ((o->max_cv > 0) != (o->max_samples > 0))
		fatal(AG_USAGE, "--max-cv and --max-samples go together");
	if (o->max_samples > 0 && o->max_samples < o->samples)
		fatal(AG_USAGE, "--max-samples %llu is below --samples %llu",
		    (unsigned long long)o->max_samples,
		    (unsigned long long)o->samples);
	if (o->serve && o->conduct)
		fatal(AG_USAGE, "--serve and --conduct exclude each other");
	if ((o->nbuilds > 0) != o->conduct)
		fatal(AG_USAGE, "--conduct and --build go together");
	if ((o->serve || o->conduct) && o->max_cv > 0)
		fatal(AG_USAGE, "--max-cv needs the plain agent: adaptive rounds "
		    "are not in an order fixed in advance");
	if (o->serve && o->lock != NULL)
		fatal(AG_USAGE, "--serve takes no --lock: its conductor does");
	if ((o->lock == NULL) != (o->holder == NULL))
		fatal(AG_USAGE, "--lock and --holder go together");
	if (o->no_wait && o->lock == NULL)
		fatal(AG_USAGE, "--no-wait needs --lock");
}

static void
list_all(void)
{
	unsigned have = cpu_features();
	size_t i;

	for (i = 0; registry_studies[i].name != NULL; i++) {
		const struct study *s = registry_studies[i].study;
		cJSON *o = record("study");

		cJSON_AddStringToObject(o, "study", registry_studies[i].name);
		cJSON_AddStringToObject(o, "description", s->description);
		cJSON_AddStringToObject(o, "unit", s->unit);
		cJSON_AddNumberToObject(o, "state_len", (double)s->state_len);
		cJSON_AddNumberToObject(o, "default_steps",
		    (double)s->default_steps);
		if (s->control != NULL)
			cJSON_AddStringToObject(o, "control", s->control);
#if defined(__x86_64__)
		if (s->floor_x86_64 > 0)
			cJSON_AddNumberToObject(o, "floor_cycles",
			    s->floor_x86_64);
#elif defined(__aarch64__)
		if (s->floor_aarch64 > 0)
			cJSON_AddNumberToObject(o, "floor_cycles",
			    s->floor_aarch64);
#endif
		emit(o);
	}
	for (i = 0; registry_kernels[i].study != NULL; i++) {
		const struct registry_kernel *r = &registry_kernels[i];
		const struct kernel *k = r->k;
		cJSON *o = record("kernel");
		cJSON *insns, *forbidden;
		char names[128];

		cJSON_AddStringToObject(o, "study", r->study);
		cJSON_AddStringToObject(o, "variant", r->variant);
		cJSON_AddStringToObject(o, "description", k->description);
		cJSON_AddStringToObject(o, "symbol", k->symbol);
		insns = cJSON_AddArrayToObject(o, "insns");
		for (size_t j = 0; k->insns != NULL && k->insns[j]; j++)
			cJSON_AddItemToArray(insns,
			    cJSON_CreateString(k->insns[j]));
		forbidden = cJSON_AddArrayToObject(o, "forbidden");
		for (size_t j = 0; k->forbidden != NULL && k->forbidden[j];
		    j++)
			cJSON_AddItemToArray(forbidden,
			    cJSON_CreateString(k->forbidden[j]));
		cpu_feature_names(k->features & ~have, names, sizeof names);
		cJSON_AddBoolToObject(o, "supported",
		    (k->features & ~have) == 0);
		if ((k->features & ~have) != 0)
			cJSON_AddStringToObject(o, "missing", names);
		emit(o);
	}
}

/* Is name in the comma list? (An empty/NULL list selects everything.) */
static int
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (list == NULL)
		return 1;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Every name in the comma list must be a variant of study. */
static void
check_variant_names(const char *study, const char *list)
{
	const char *p = list;

	while (p != NULL && *p) {
		size_t len = strcspn(p, ","), i;
		int found = 0;
		char valid[1024] = "";

		for (i = 0; registry_kernels[i].study != NULL; i++) {
			const struct registry_kernel *r = &registry_kernels[i];

			if (strcmp(r->study, study) != 0)
				continue;
			if (strlen(r->variant) == len &&
			    strncmp(r->variant, p, len) == 0)
				found = 1;
			snprintf(valid + strlen(valid),
			    sizeof valid - strlen(valid), "%s%s",
			    valid[0] ? ", " : "", r->variant);
		}
		if (!found)
			fatal(AG_USAGE, "unknown variant \"%.*s\" of study "
			    "\"%s\" (valid: %s)", (int)len, p, study, valid);
		p += len;
		if (*p == ',')
			p++;
	}
}

/*
 * Setup, the known answer (for studies that have one) and the self-test
 * chain for one variant.
 */
static void
selftest(struct slot *sl, const struct study *st, const struct opts *o)
{
	const struct kernel *k = sl->k;
	unsigned missing = k->features & ~cpu_features();
	uint8_t digest[KERNEL_MAX_STATE], want[KERNEL_MAX_STATE];
	char names[128];
	size_t i;

	sl->status = "failed";
	if (missing != 0) {
		cpu_feature_names(missing, names, sizeof names);
		sl->status = "skipped";
		snprintf(sl->reason, sizeof sl->reason, "cpu lacks %s", names);
		return;
	}
	if (k->setup != NULL && k->setup(&sl->ctx) != 0) {
		sl->status = "skipped";
		snprintf(sl->reason, sizeof sl->reason, "setup failed");
		return;
	}
	if (k->warning != NULL)
		sl->warning = k->warning(sl->ctx);
	if (st->kat_msg != NULL) {
		for (i = 0; i < st->state_len; i++) {
			unsigned v;

			sscanf(st->kat_hex + 2 * i, "%2x", &v);
			want[i] = (uint8_t)v;
		}
		if (k->hash == NULL) {
			snprintf(sl->reason, sizeof sl->reason,
			    "no known-answer hook");
			return;
		}
		if (k->hash(sl->ctx, (const uint8_t *)st->kat_msg,
		    strlen(st->kat_msg), digest) != 0 ||
		    memcmp(digest, want, st->state_len) != 0) {
			snprintf(sl->reason, sizeof sl->reason,
			    "known answer for \"%s\" is wrong", st->kat_msg);
			return;
		}
	}
	memcpy(sl->chain, o->seed, st->state_len);
	if (k->chain(sl->ctx, sl->chain, STUDY_SELFTEST_STEPS(st)) != 0) {
		snprintf(sl->reason, sizeof sl->reason, "chain failed");
		return;
	}
	sl->status = "ok";
	sl->ready = 1;
}

/*
 * All variants that passed their known answer must agree on the 1,000-step
 * chain; the digest most of them produce is the consensus, and any variant
 * that differs from it is marked failed and never timed.
 */
static void
consensus(struct slot *sl, size_t n, size_t len, uint64_t steps,
    uint8_t *common)
{
	size_t i, j, best = 0, bestn = 0;

	for (i = 0; i < n; i++) {
		size_t votes = 0;

		if (!sl[i].ready)
			continue;
		for (j = 0; j < n; j++)
			if (sl[j].ready &&
			    memcmp(sl[i].chain, sl[j].chain, len) == 0)
				votes++;
		if (votes > bestn) {
			bestn = votes;
			best = i;
		}
	}
	if (bestn == 0)
		return;
	memcpy(common, sl[best].chain, len);
	for (i = 0; i < n; i++) {
		if (sl[i].ready && memcmp(sl[i].chain, common, len) != 0) {
			sl[i].ready = 0;
			sl[i].status = "failed";
			snprintf(sl[i].reason, sizeof sl[i].reason,
			    "%llu-step chain disagrees with the other variants",
			    (unsigned long long)steps);
		}
	}
}

/*
 * Square root by Newton's method from above: the agent links no libm (the
 * Makefile and agent/build.sh link cjson and crypto only), and this runs
 * once per variant and adaptive round, outside any timer.
 */
static double
root(double v)
{
	double x = v > 1 ? v : 1, prev;

	if (!(v > 0))
		return 0;
	do {
		prev = x;
		x = (x + v / x) / 2;
	} while (x < prev);
	return prev;
}

/*
 * Is the coefficient of variation of sl's ns above max?  If so, more says
 * why, for the reason field of the extra sample.  A single sample has no
 * spread to judge, so it asks for another.
 */
static int
too_spread(struct slot *sl, double max)
{
	double var;

	if (sl->n < 2) {
		snprintf(sl->more, sizeof sl->more, "cv unknown after %llu "
		    "sample", (unsigned long long)sl->n);
		return 1;
	}
	var = sl->m2 / (double)(sl->n - 1);
	if (var <= max * max * sl->mean * sl->mean)
		return 0;
	snprintf(sl->more, sizeof sl->more, "cv %.3g%% > %.3g%% after %llu "
	    "samples", 100 * root(var) / sl->mean, 100 * max,
	    (unsigned long long)sl->n);
	return 1;
}

/*
 * The kernel's metrics of the chain just timed, as the sample's "metrics"
 * object; phases ("phase_*", ns) get "phase_other", what the timer saw
 * beyond them, so that they add up to the sample's ns.
 */
static void
add_metrics(cJSON *rec, struct slot *sl, double ns)
{
	struct kernel_metric m[KERNEL_MAX_METRICS];
	size_t n, i;
	double phases = 0;
	int any = 0;
	cJSON *o = cJSON_AddObjectToObject(rec, "metrics");

	if (o == NULL)
		fatal(AG_FAIL, "out of memory");
	n = sl->k->metrics(sl->ctx, m, KERNEL_MAX_METRICS - 1);
	for (i = 0; i < n && i < KERNEL_MAX_METRICS - 1; i++) {
		cJSON_AddNumberToObject(o, m[i].name, m[i].value);
		if (strncmp(m[i].name, "phase_", 6) == 0) {
			phases += m[i].value;
			any = 1;
		}
	}
	if (any)
		cJSON_AddNumberToObject(o, "phase_other", ns - phases);
}

/* A sample's cycles and instructions, and where its cycles come from. */
static void
add_counts(cJSON *rec, int counted, uint64_t cycles, uint64_t insns)
{
	if (counted) {
		cJSON_AddNumberToObject(rec, "cycles", (double)cycles);
		cJSON_AddNumberToObject(rec, "instructions", (double)insns);
	} else {
		cJSON_AddNullToObject(rec, "cycles");
		cJSON_AddNullToObject(rec, "instructions");
	}
	cJSON_AddStringToObject(rec, "cycles_source", counted ?
	    counters.source : "calibration");
}

/*
 * Time one sample of sl, as index s at position pos of its build's round
 * and place order in the host's whole order, and emit it.
 */
static void
time_sample(struct slot *sl, uint64_t s, size_t pos, uint64_t order,
    const struct opts *o, const struct study *st)
{
	uint8_t x[KERNEL_MAX_STATE];
	char buf[2 * KERNEL_MAX_STATE + 1];
	uint64_t t0, t1, c0, c1, cycles = 0, insns = 0;
	double mhz, mhz_after, ns, delta;
	int rc, cpu_before, cpu_after, counted, cpu_clock;
	char jump[160];
	cJSON *rec;

	memcpy(x, o->seed, st->state_len);
	mhz = timing_calibrate_mhz();
	cpu_before = pin_current_cpu();
	/*
	 * Counters run from just before to just after the timed call, and
	 * the thread's cpu time is read around them (a syscall they miss).
	 */
	cpu_clock = timing_thread_cpu_ns(&c0) == 0;
	perf_start(&counters);
	t0 = timing_now_ns();
	rc = sl->k->chain(sl->ctx, x, o->steps);
	t1 = timing_now_ns();
	counted = perf_stop(&counters, &cycles, &insns) == 0;
	cpu_clock = timing_thread_cpu_ns(&c1) == 0 && cpu_clock;
	cpu_after = pin_current_cpu();
	/* Again after: a clock that moved during the sample shows. */
	mhz_after = timing_calibrate_mhz();
	if (rc != 0)
		fatal(AG_FAIL, "variant \"%s\" failed during sample %llu",
		    sl->variant, (unsigned long long)s);
	/*
	 * The thread's cpu time is a second clock that no one sets: a
	 * timing it contradicts is no timing, and neither is any other on a
	 * host whose raw clock jumps.  Without that clock, no check.
	 */
	if (cpu_clock && timing_jumped(t0, t1, c1 - c0, jump, sizeof jump))
		fatal(AG_FAIL, "the raw monotonic clock (%s) jumped during "
		    "sample %llu of \"%s\": %s; the sample is dropped and "
		    "nothing more is timed on this host", timing_clock_name(),
		    (unsigned long long)s, sl->variant, jump);
	ns = (double)(t1 - t0);
	sl->n++;
	delta = ns - sl->mean;
	sl->mean += delta / (double)sl->n;
	sl->m2 += delta * (ns - sl->mean);

	rec = record("sample");
	cJSON_AddStringToObject(rec, "study", sl->study);
	cJSON_AddStringToObject(rec, "variant", sl->variant);
	cJSON_AddNumberToObject(rec, "sample", (double)s);
	cJSON_AddNumberToObject(rec, "position", (double)pos);
	cJSON_AddNumberToObject(rec, "order", (double)order);
	cJSON_AddNumberToObject(rec, "steps", (double)o->steps);
	cJSON_AddNumberToObject(rec, "ns", ns);
	hex(x, st->state_len, buf);
	cJSON_AddStringToObject(rec, "digest", buf);
	hex(o->seed, st->state_len, buf);
	cJSON_AddStringToObject(rec, "seed", buf);
	cJSON_AddNumberToObject(rec, "calib_mhz", mhz);
	cJSON_AddNumberToObject(rec, "calib_after_mhz", mhz_after);
	cJSON_AddNumberToObject(rec, "cpu",
	    cpu_before == cpu_after ? cpu_before : -1);
	cJSON_AddStringToObject(rec, "build_id", o->build_id);
	add_counts(rec, counted, cycles, insns);
	if (sl->more[0])
		cJSON_AddStringToObject(rec, "reason", sl->more);
	else
		cJSON_AddNullToObject(rec, "reason");
	if (sl->k->metrics != NULL)
		add_metrics(rec, sl, ns);
	emit(rec);
}

/*
 * One sample of each of the n variants in run, in an order that depends
 * only on the sample index s: rotated by one per index, or reversed on odd
 * ones.  So a re-run of index s (--first-sample) puts each variant where
 * the full run did.
 */
static void
time_round(struct slot **run, size_t n, uint64_t s, struct opts *o,
    const struct study *st)
{
	size_t pos, idx;

	for (pos = 0; pos < n; pos++) {
		if (o->reverse)
			idx = (s & 1) ? n - 1 - pos : pos;
		else
			idx = (size_t)((pos + s) % n);
		time_sample(run[idx], s, pos, o->order++, o, st);
	}
}

/*
 * Take the host lock for the window.  While another agent holds it, say
 * who in a wait record and block, or with --no-wait give up (exit 4).
 * The descriptor stays open on purpose: the lock lasts until we exit.
 */
static void
take_lock(const struct opts *o)
{
	char why[256], holder[MAX_HOLDER + 2];
	int fd, rc;
	cJSON *rec;

	if ((fd = lock_open(o->lock, why, sizeof why)) < 0)
		fatal(AG_FAIL, "cannot open host lock \"%s\": %s", o->lock,
		    why);
	holder[0] = '\0';
	if ((rc = lock_try(fd, holder, sizeof holder, why, sizeof why)) < 0)
		fatal(AG_FAIL, "cannot take host lock \"%s\": %s", o->lock,
		    why);
	if (rc == 1) {
		if (o->no_wait)
			fatal(AG_LOCKED, "host lock \"%s\" is held by \"%s\"",
			    o->lock, holder);
		rec = record("wait");
		cJSON_AddStringToObject(rec, "holder", holder);
		emit(rec);
		if (lock_wait(fd, why, sizeof why) != 0)
			fatal(AG_FAIL, "cannot take host lock \"%s\": %s",
			    o->lock, why);
	}
	if (lock_claim(fd, o->holder, why, sizeof why) != 0)
		fatal(AG_FAIL, "cannot write host lock \"%s\": %s", o->lock,
		    why);
}

/* A window record: phase "begin" or "end", with the host's state now. */
static void
window(const char *phase, int cpu)
{
	cJSON *rec = record("window"), *state = state_snapshot(cpu);

	if (state == NULL)
		fatal(AG_FAIL, "out of memory");
	cJSON_AddStringToObject(rec, "phase", phase);
	cJSON_AddItemToObject(rec, "state", state);
	emit(rec);
}

/*
 * The measurement window: the planned indices first, then, with --max-cv,
 * extra rounds of only the variants still too spread out.  ready holds
 * the n variants that passed their checks; cpu is the pinned CPU or -1.
 */
static void
measure(struct slot **ready, size_t n, struct opts *o,
    const struct study *st, int cpu)
{
	struct slot *run[MAX_VARIANTS];
	uint64_t s, last = o->first_sample + o->samples;
	size_t i, nrun;

	/* One build alone on the host: its order is the host's. */
	o->order = o->first_sample * n;
	window("begin", cpu);
	for (s = o->first_sample; s < last; s++)
		time_round(ready, n, s, o, st);
	for (; o->max_cv > 0; s++) {
		nrun = 0;
		for (i = 0; i < n; i++)
			if (ready[i]->n < o->max_samples &&
			    too_spread(ready[i], o->max_cv))
				run[nrun++] = ready[i];
		if (nrun == 0)
			break;
		time_round(run, nrun, s, o, st);
	}
	window("end", cpu);
}

/* Facts about the measurement itself: cpu choice, counters, test root. */
static void
add_hygiene(cJSON *rec, const char *choice)
{
	if (choice != NULL)
		cJSON_AddStringToObject(rec, "cpu_choice", choice);
	else
		cJSON_AddNullToObject(rec, "cpu_choice");
	cJSON_AddStringToObject(rec, "counters", counters.source);
	if (counters.why[0])
		cJSON_AddStringToObject(rec, "counters_error", counters.why);
	else
		cJSON_AddNullToObject(rec, "counters_error");
	if (sysfs_root() != NULL)
		cJSON_AddStringToObject(rec, "sysfs_root", sysfs_root());
	else
		cJSON_AddNullToObject(rec, "sysfs_root");
}

/*
 * The preflight record: the noise verdict for cpu (docs/measurement.md)
 * and, with --cpu auto, why cpu was chosen.  With --require-quiet a noisy
 * host ends the agent (exit 5) before anything is timed.
 */
static void
noise_check(const struct opts *o, int cpu, const char *choice)
{
	cJSON *rec = record("preflight"), *r;
	char reasons[1024] = "";
	size_t n = 0;
	int quiet;

	if (cpu >= 0)
		cJSON_AddNumberToObject(rec, "cpu", cpu);
	else
		cJSON_AddNullToObject(rec, "cpu");
	if (choice != NULL)
		cJSON_AddStringToObject(rec, "cpu_choice", choice);
	else
		cJSON_AddNullToObject(rec, "cpu_choice");
	quiet = preflight_run(rec, cpu);
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(rec, "reasons"))
		if (n < sizeof reasons)
			n += (size_t)snprintf(reasons + n, sizeof reasons - n,
			    "%s%s", n ? "; " : "", r->valuestring);
	emit(rec);
	if (!quiet && o->require_quiet)
		fatal(AG_NOISY, "host is noisy, not measuring "
		    "(--require-quiet): %s", reasons);
}

/*
 * --serve: after the self-tests, time one sample per request from the
 * conductor on stdin ("sample S POS ORDER VARIANT"), until "quit" or the
 * end of stdin (the conductor is gone).
 */
static void
serve(struct slot **run, size_t n, struct opts *o, const struct study *st)
{
	char line[256], v[128];
	unsigned long long s, pos, order;
	size_t i;

	while (fgets(line, sizeof line, stdin) != NULL) {
		if (strcmp(line, "quit\n") == 0)
			return;
		if (sscanf(line, "sample %llu %llu %llu %127s", &s, &pos,
		    &order, v) != 4)
			fatal(AG_USAGE, "--serve: unknown request \"%.*s\"",
			    (int)strcspn(line, "\n"), line);
		for (i = 0; i < n && strcmp(run[i]->variant, v) != 0; i++)
			;
		if (i == n)
			fatal(AG_USAGE, "--serve: variant \"%s\" did not pass "
			    "its self-test", v);
		if (s < o->first_sample || s >= o->first_sample + o->samples)
			fatal(AG_USAGE, "--serve: sample %llu is outside "
			    "--first-sample and --samples", s);
		time_sample(run[i], s, (size_t)pos, order, o, st);
	}
}

/* A build's agent, started by the conductor with --serve. */
struct child {
	char id[24];
	pid_t pid;		/* 0 once it is gone */
	FILE *in, *rd;		/* its requests, its records */
	char *ok[MAX_VARIANTS];	/* its variants that passed */
	size_t nok;
	int ready;		/* self-tested, waiting for requests */
	int said_error;		/* its last record was an error */
};

static struct child kids[MAX_BUILDS];
static size_t nkids;

/* Stopped (the coordinator's TERM): the build agents go first. */
static void
on_term(int sig)
{
	size_t i;

	for (i = 0; i < nkids; i++)
		if (kids[i].pid > 0)
			kill(kids[i].pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One of build k's record lines, as it wrote it, after a build record. */
static void
relay(size_t k, const char *line)
{
	if (cur_build != (int)k) {
		cJSON *b = record("build");

		cJSON_AddStringToObject(b, "build_id", kids[k].id);
		cur_build = -1;		/* emit's check is for other records */
		emit(b);
		cur_build = (int)k;
	}
	if (fprintf(out, "%s\n", line) < 0 || fflush(out) != 0) {
		fprintf(stderr, "seqorch-agent: cannot write record: %s\n",
		    strerror(errno));
		exit(AG_IO);
	}
}

/* The next record line of c, its newline cut; -1 at its end or too long. */
static int
child_line(struct child *c, char *buf, size_t size)
{
	size_t len;

	if (c->rd == NULL || fgets(buf, (int)size, c->rd) == NULL)
		return -1;
	len = strlen(buf);
	if (len == 0 || buf[len - 1] != '\n')
		return -1;
	buf[len - 1] = '\0';
	return 0;
}

/*
 * Build k's agent has ended, or is ended (it broke the protocol): reap
 * it, and unless its own error record said why, say it in one for it.
 */
static void
child_gone(size_t k, const char *why)
{
	struct child *c = &kids[k];
	char msg[512], *line;
	int status = 0;
	cJSON *rec;

	if (c->pid == 0)
		return;
	if (c->in != NULL)
		fclose(c->in);
	c->in = NULL;
	if (why != NULL)
		kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	if (c->rd != NULL)
		fclose(c->rd);
	c->rd = NULL;
	c->pid = 0;
	c->ready = 0;
	if (why == NULL || c->said_error)
		return;
	snprintf(msg, sizeof msg, "the agent of build %s %s (%s %d)", c->id,
	    why, WIFSIGNALED(status) ? "signal" : "exit status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	rec = record("error");
	cJSON_AddStringToObject(rec, "message", msg);
	if ((line = cJSON_PrintUnformatted(rec)) == NULL)
		fatal(AG_FAIL, "out of memory");
	cJSON_Delete(rec);
	relay(k, line);
	free(line);
	c->said_error = 1;
}

/* The type of a record line (into type), and its variant and status. */
static int
line_type(const char *line, char *type, size_t tlen, char *variant,
    size_t vlen, int *ok)
{
	cJSON *j = cJSON_Parse(line), *t, *v, *st;

	if (j == NULL || !cJSON_IsString(t = cJSON_GetObjectItem(j, "type"))) {
		cJSON_Delete(j);
		return -1;
	}
	snprintf(type, tlen, "%s", t->valuestring);
	v = cJSON_GetObjectItem(j, "variant");
	st = cJSON_GetObjectItem(j, "status");
	snprintf(variant, vlen, "%s", cJSON_IsString(v) ? v->valuestring : "");
	*ok = cJSON_IsString(st) && strcmp(st->valuestring, "ok") == 0;
	cJSON_Delete(j);
	return 0;
}

static int
file_sha256(const char *path, char sum[65])
{
	unsigned char buf[16384], md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	FILE *f = fopen(path, "rb");
	size_t n;
	int rc = -1;

	if (f == NULL || ctx == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		goto out;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		if (EVP_DigestUpdate(ctx, buf, n) != 1)
			goto out;
	if (!ferror(f) && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 &&
	    mdlen == 32) {
		hex(md, 32, sum);
		rc = 0;
	}
out:
	if (f != NULL)
		fclose(f);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/*
 * Start build k's agent (spec "ID:SHA256:PATH") with --serve and the
 * conductor's own options, then relay its records up to its self-test:
 * its setup happens here, before any window.
 */
static void
start_child(size_t k, const char *spec, const struct opts *o, int cpu)
{
	struct child *c = &kids[k];
	const char *p1 = strchr(spec, ':'), *p2 = p1 ? strchr(p1 + 1, ':') :
	    NULL, *path;
	char sum[65], seed[2 * KERNEL_MAX_STATE + 1], steps[24], samples[24];
	char first[24], cpus[16], type[16], variant[128], *line;
	const char *argv[24];
	int in[2], rd[2], ok;
	size_t a = 0;

	if (p1 == NULL || p2 == NULL || (size_t)(p1 - spec) >= sizeof c->id ||
	    p1 == spec || p2 - p1 - 1 != 64)
		fatal(AG_USAGE, "invalid --build \"%s\": expected "
		    "ID:SHA256:PATH", spec);
	snprintf(c->id, sizeof c->id, "%.*s", (int)(p1 - spec), spec);
	path = p2 + 1;
	if (file_sha256(path, sum) != 0 || strncmp(sum, p1 + 1, 64) != 0)
		fatal(AG_FAIL, "agent binary \"%s\" of build %s is not the one "
		    "built (sha256 %s); refusing to run it", path, c->id,
		    file_sha256(path, sum) == 0 ? sum : "unreadable");
	hex(o->seed, o->seed_len, seed);
	snprintf(steps, sizeof steps, "%llu", (unsigned long long)o->steps);
	snprintf(samples, sizeof samples, "%llu",
	    (unsigned long long)o->samples);
	snprintf(first, sizeof first, "%llu",
	    (unsigned long long)o->first_sample);
	snprintf(cpus, sizeof cpus, "%d", cpu);
	argv[a++] = path;
	argv[a++] = "--serve";
	argv[a++] = "--study"; argv[a++] = o->study;
	argv[a++] = "--steps"; argv[a++] = steps;
	argv[a++] = "--samples"; argv[a++] = samples;
	argv[a++] = "--first-sample"; argv[a++] = first;
	argv[a++] = "--cpu"; argv[a++] = cpu >= 0 ? cpus : "none";
	argv[a++] = "--seed"; argv[a++] = seed;
	argv[a++] = "--build-id"; argv[a++] = c->id;
	argv[a++] = "--token"; argv[a++] = o->token;
	if (o->variants != NULL) {
		argv[a++] = "--variants";
		argv[a++] = o->variants;
	}
	argv[a] = NULL;
	/* Close-on-exec: no other build's agent holds this one's pipes. */
	if (pipe(in) != 0 || pipe(rd) != 0 ||
	    fcntl(in[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(in[1], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(rd[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(rd[1], F_SETFD, FD_CLOEXEC) != 0)
		fatal(AG_FAIL, "cannot make pipes: %s", strerror(errno));
	if ((c->pid = fork()) < 0)
		fatal(AG_FAIL, "cannot start build %s: %s", c->id,
		    strerror(errno));
	if (c->pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (dup2(in[0], 0) < 0 || dup2(rd[1], 1) < 0)
			_exit(127);
		execv(path, (char *const *)argv);
		fprintf(stderr, "seqorch-agent: cannot run \"%s\": %s\n", path,
		    strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(rd[1]);
	if ((c->in = fdopen(in[1], "w")) == NULL ||
	    (c->rd = fdopen(rd[0], "r")) == NULL)
		fatal(AG_FAIL, "out of memory");
	if ((line = malloc(MAX_LINE + 2)) == NULL)
		fatal(AG_FAIL, "out of memory");
	for (;;) {
		if (child_line(c, line, MAX_LINE + 2) != 0) {
			child_gone(k, "ended during its setup");
			break;
		}
		if (line_type(line, type, sizeof type, variant,
		    sizeof variant, &ok) != 0) {
			child_gone(k, "wrote a line that is not a record");
			break;
		}
		relay(k, line);
		if (strcmp(type, "variant") == 0 && ok &&
		    c->nok < MAX_VARIANTS &&
		    (c->ok[c->nok++] = strdup(variant)) == NULL)
			fatal(AG_FAIL, "out of memory");
		if (strcmp(type, "selftest") == 0) {
			c->ready = 1;
			break;
		}
		if (strcmp(type, "done") == 0 || strcmp(type, "error") == 0) {
			/* No variant passed, or it said why it stopped. */
			c->said_error = strcmp(type, "error") == 0;
			child_gone(k, NULL);
			break;
		}
	}
	free(line);
}

/* Ask build k for one sample and relay its record; 1 when one came. */
static int
ask(size_t k, uint64_t s, size_t pos, uint64_t order, const char *v,
    char *line)
{
	struct child *c = &kids[k];
	char type[16], variant[128];
	int ok;

	if (fprintf(c->in, "sample %llu %zu %llu %s\n", (unsigned long long)s,
	    pos, (unsigned long long)order, v) < 0 || fflush(c->in) != 0) {
		child_gone(k, "stopped taking requests");
		return 0;
	}
	if (child_line(c, line, MAX_LINE + 2) != 0 ||
	    line_type(line, type, sizeof type, variant, sizeof variant,
	    &ok) != 0) {
		child_gone(k, "ended during a sample");
		return 0;
	}
	relay(k, line);
	if (strcmp(type, "sample") == 0)
		return 1;
	c->said_error = strcmp(type, "error") == 0;
	child_gone(k, "sent no sample record");
	return 0;
}

/* Has build k's agent passed variant v? */
static int
child_has(const struct child *c, const char *v)
{
	size_t i;

	for (i = 0; i < c->nok; i++)
		if (strcmp(c->ok[i], v) == 0)
			return 1;
	return 0;
}

/*
 * --conduct: every build of the host in one alternating order.  Each
 * --build's agent is started with --serve and sets up and self-tests
 * (one after the other, all before the window); then, inside one window,
 * the cells (variant, build) take their samples in an order that depends
 * only on the sample index, as time_round's does for variants: the cells
 * are variant by variant, each variant's builds side by side, so the
 * builds alternate at every step and two builds of a variant sample next
 * to each other; which of them goes first turns every n rounds (n cells).
 * A build that fails leaves the others measuring.
 */
static int
conduct(struct opts *o, const struct study *st, const char *study)
{
	/* A variant's cells are cells[g .. g + m - 1], one per build. */
	struct cell { size_t k, g, m; const char *v; } cells[MAX_BUILDS *
	    MAX_VARIANTS], *c;
	uint64_t s, total = 0, last = o->first_sample + o->samples;
	size_t i, k, n = 0, pos, idx, bpos[MAX_BUILDS];
	char why[TOPOLOGY_WHY_LEN + 32], *line;
	int pinned;
	cJSON *rec;

	conducting = 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	if (fcntl(fileno(out), F_SETFD, FD_CLOEXEC) != 0)
		fatal(AG_IO, "cannot keep the records file from the builds' "
		    "agents: %s", strerror(errno));
	/* Relaying happens between samples, on the CPU they are timed on. */
	pinned = o->cpu >= 0 && pin_to_cpu(o->cpu, why, sizeof why) == 0;
	o->seed_len = st->state_len;
	o->study = study;
	for (k = 0; k < o->nbuilds; k++) {
		nkids++;
		start_child(k, o->builds[k], o, o->cpu);
	}
	for (i = 0; registry_kernels[i].study != NULL; i++) {
		const struct registry_kernel *r = &registry_kernels[i];

		if (strcmp(r->study, study) != 0 ||
		    !in_list(o->variants, r->variant))
			continue;
		size_t g = n;

		for (k = 0; k < nkids; k++)
			if (kids[k].ready && child_has(&kids[k], r->variant)) {
				cells[n].k = k;
				cells[n].g = g;
				cells[n++].v = r->variant;
			}
		for (k = g; k < n; k++)
			cells[k].m = n - g;
	}
	if ((line = malloc(MAX_LINE + 2)) == NULL)
		fatal(AG_FAIL, "out of memory");
	if (n > 0) {
		if (o->lock != NULL)
			take_lock(o);
		noise_check(o, pinned ? o->cpu : -1, NULL);
		window("begin", pinned ? o->cpu : -1);
		for (s = o->first_sample; s < last; s++) {
			memset(bpos, 0, sizeof bpos);
			for (pos = 0; pos < n; pos++) {
				if (o->reverse)
					idx = (s & 1) ? n - 1 - pos : pos;
				else
					idx = (size_t)((pos + s) % n);
				/*
				 * A variant's builds sample side by side, the
				 * first of them first in all but one round of
				 * n: the next n rounds turn them by one, so
				 * that none is always the first of a pair.
				 */
				c = &cells[idx];
				c = &cells[c->g + (idx - c->g + s / n) % c->m];
				k = c->k;
				if (kids[k].ready)
					total += (uint64_t)ask(k, s, bpos[k]++,
					    s * n + pos, c->v, line);
			}
		}
		window("end", pinned ? o->cpu : -1);
	}
	/* Each build's agent ends with its done record. */
	for (k = 0; k < nkids; k++) {
		struct child *c = &kids[k];

		if (c->pid == 0)
			continue;
		if (fputs("quit\n", c->in) < 0 || fflush(c->in) != 0) {
			child_gone(k, "stopped taking requests");
			continue;
		}
		while (child_line(c, line, MAX_LINE + 2) == 0) {
			char type[16], variant[128];
			int ok;

			relay(k, line);
			if (line_type(line, type, sizeof type, variant,
			    sizeof variant, &ok) == 0 &&
			    strcmp(type, "done") == 0)
				break;
		}
		child_gone(k, NULL);
	}
	free(line);
	for (k = 0; k < nkids; k++)
		for (i = 0; i < kids[k].nok; i++)
			free(kids[k].ok[i]);
	rec = record("done");
	cJSON_AddNumberToObject(rec, "samples", (double)total);
	emit(rec);
	return total > 0 ? AG_OK : AG_FAIL;
}

int
main(int argc, char **argv)
{
	struct opts o;
	const struct registry_study *rs;
	const struct study *st;
	struct slot slots[MAX_VARIANTS], *run[MAX_VARIANTS];
	size_t nslots = 0, nready = 0;
	uint8_t common[KERNEL_MAX_STATE];
	char why[TOPOLOGY_WHY_LEN + 32], buf[2 * KERNEL_MAX_STATE + 1];
	char choice[TOPOLOGY_WHY_LEN];
	int pinned, auto_cpu;
	uint64_t nsamples = 0;
	size_t i;
	cJSON *rec;

	out = stdout;
	parse_args(argc, argv, &o);
	if (o.out != NULL && (out = fopen(o.out, "a")) == NULL) {
		out = stdout;
		fatal(AG_IO, "cannot open \"%s\": %s", o.out, strerror(errno));
	}
	if (o.list) {
		list_all();
		return AG_OK;
	}
	if (o.openssl) {
		char lib[1200];

		facts_libcrypto(lib, sizeof lib);
		printf("%s\n", lib);
		return AG_OK;
	}
	if ((auto_cpu = o.cpu == CPU_AUTO))
		o.cpu = topology_auto(choice, sizeof choice);
	if (o.preflight) {
		noise_check(&o, o.cpu, auto_cpu ? choice : NULL);
		return AG_OK;
	}
	if ((rs = registry_study(o.study)) == NULL) {
		char valid[512] = "";

		for (i = 0; registry_studies[i].name != NULL; i++)
			snprintf(valid + strlen(valid),
			    sizeof valid - strlen(valid), "%s%s",
			    i ? ", " : "", registry_studies[i].name);
		fatal(AG_USAGE, "unknown study \"%s\" (valid: %s)", o.study,
		    valid);
	}
	st = rs->study;
	check_variant_names(rs->name, o.variants);
	if (o.have_seed && o.seed_len != st->state_len)
		fatal(AG_USAGE, "--seed must be %zu bytes (%zu hex digits) for "
		    "study \"%s\"", st->state_len, 2 * st->state_len, rs->name);
	if (!o.have_seed)
		for (i = 0; i < st->state_len; i++) {
			unsigned v;

			sscanf(st->seed_hex + 2 * i, "%2x", &v);
			o.seed[i] = (uint8_t)v;
		}
	if (o.steps == 0)
		o.steps = st->default_steps;

	rec = record("hello");
	cJSON_AddNumberToObject(rec, "proto", SEQORCH_PROTO_VERSION);
	cJSON_AddStringToObject(rec, "agent", AGENT_VERSION);
	cJSON_AddStringToObject(rec, "build_id", o.build_id);
	cJSON_AddStringToObject(rec, "token", o.token);
	cJSON_AddStringToObject(rec, "study", rs->name);
	cJSON_AddNumberToObject(rec, "steps", (double)o.steps);
	cJSON_AddNumberToObject(rec, "samples", (double)o.samples);
	emit(rec);
	if (o.conduct)
		return conduct(&o, st, rs->name);

	/* Pin first so that facts and self-tests already run where timing will. */
	why[0] = '\0';
	pinned = o.cpu >= 0 && pin_to_cpu(o.cpu, why, sizeof why) == 0;
	if (o.cpu < 0)
		snprintf(why, sizeof why, "%s", auto_cpu ? choice :
		    "no cpu requested");
	/* macOS: without a pin, only the QoS class keeps the agent off the
	 * efficiency cores, whatever --cpu said (docs/hosts.md). */
	if (!pinned && macos_qos(why, sizeof why) != 1 && auto_cpu)
		snprintf(choice, sizeof choice, "%.*s",
		    (int)sizeof choice - 1, why);
	if (perf_open(&counters) == -2)
		fatal(AG_USAGE, "%s", counters.why);
	rec = record("facts");
	facts_add(rec, o.cpu);
	if (o.cpu >= 0)
		cJSON_AddNumberToObject(rec, "pin_cpu", o.cpu);
	else
		cJSON_AddNullToObject(rec, "pin_cpu");
	cJSON_AddBoolToObject(rec, "pinned", pinned);
	if (pinned)
		cJSON_AddNullToObject(rec, "pin_error");
	else
		cJSON_AddStringToObject(rec, "pin_error", why);
	cJSON_AddStringToObject(rec, "clock", timing_clock_name());
	cJSON_AddNumberToObject(rec, "calib_mhz", timing_calibrate_mhz());
	add_hygiene(rec, auto_cpu ? choice : NULL);
	emit(rec);

	for (i = 0; registry_kernels[i].study != NULL; i++) {
		const struct registry_kernel *r = &registry_kernels[i];

		if (strcmp(r->study, rs->name) != 0 ||
		    !in_list(o.variants, r->variant))
			continue;
		if (nslots == MAX_VARIANTS)
			fatal(AG_FAIL, "more than %d variants", MAX_VARIANTS);
		memset(&slots[nslots], 0, sizeof slots[nslots]);
		slots[nslots].study = r->study;
		slots[nslots].variant = r->variant;
		slots[nslots].k = r->k;
		selftest(&slots[nslots], st, &o);
		nslots++;
	}
	consensus(slots, nslots, st->state_len, STUDY_SELFTEST_STEPS(st),
	    common);
	for (i = 0; i < nslots; i++) {
		rec = record("variant");
		cJSON_AddStringToObject(rec, "study", rs->name);
		cJSON_AddStringToObject(rec, "variant", slots[i].variant);
		cJSON_AddStringToObject(rec, "status", slots[i].status);
		if (slots[i].reason[0])
			cJSON_AddStringToObject(rec, "reason",
			    slots[i].reason);
		else
			cJSON_AddNullToObject(rec, "reason");
		if (slots[i].warning != NULL)
			cJSON_AddStringToObject(rec, "warning",
			    slots[i].warning);
		emit(rec);
		if (slots[i].ready)
			run[nready++] = &slots[i];
	}
	if (nready > 0) {
		rec = record("selftest");
		cJSON_AddStringToObject(rec, "study", rs->name);
		cJSON_AddNumberToObject(rec, "steps",
		    (double)STUDY_SELFTEST_STEPS(st));
		hex(common, st->state_len, buf);
		cJSON_AddStringToObject(rec, "digest", buf);
		emit(rec);
		if (o.serve) {
			serve(run, nready, &o, st);
		} else {
			if (o.lock != NULL)
				take_lock(&o);
			noise_check(&o, pinned ? o.cpu : -1, NULL);
			measure(run, nready, &o, st, pinned ? o.cpu : -1);
		}
	}
	for (i = 0; i < nslots; i++) {
		nsamples += slots[i].n;
		if (slots[i].k->teardown != NULL && slots[i].ctx != NULL)
			slots[i].k->teardown(slots[i].ctx);
	}
	rec = record("done");
	cJSON_AddNumberToObject(rec, "samples", (double)nsamples);
	emit(rec);
	return nready > 0 ? AG_OK : AG_FAIL;
}

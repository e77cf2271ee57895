/*
 * seqorch-agent: runs one study's variants on this host and prints JSON
 * lines (docs/protocol.md): hello, facts, one variant record per variant
 * (self-test result), selftest, then one sample record per timed sample,
 * and done.  Setup and self-tests happen before any timer starts.
 */
#include "cpu.h"
#include "facts.h"
#include "pin.h"
#include "registry.h"
#include "timing.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTO_VERSION 1
#define AGENT_VERSION "0.1.0"
#define SELFTEST_STEPS 1000
#define MAX_VARIANTS 64

/* Exit codes of the agent (docs/protocol.md). */
enum { AG_OK = 0, AG_FAIL = 1, AG_USAGE = 2, AG_IO = 3 };

struct opts {
	const char *study;
	const char *variants;
	const char *build_id;
	const char *out;
	uint64_t steps;
	uint64_t samples;
	int cpu;
	int reverse;
	int list;
	uint8_t seed[KERNEL_MAX_STATE];
	size_t seed_len;
	int have_seed;
};

struct slot {
	const struct kernel *k;
	void *ctx;
	int ready;		/* passed every check; will be timed */
	const char *status;	/* ok, skipped, failed */
	char reason[256];
	uint8_t chain[KERNEL_MAX_STATE];
};

static FILE *out;

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
	char *s = cJSON_PrintUnformatted(obj);

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
	    "                     [--samples K] [--cpu N|none] [--order rotate|reverse]\n"
	    "                     [--seed HEX] [--build-id ID] [--out FILE]\n"
	    "       seqorch-agent --list\n"
	    "Prints JSON lines (protocol %d, docs/protocol.md).\n",
	    PROTO_VERSION);
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
		{ "out", required_argument, NULL, 'O' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof *o);
	o->steps = 10000000;
	o->samples = 3;
	o->cpu = -1;
	o->build_id = "";
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->study = optarg; break;
		case 'v': o->variants = optarg; break;
		case 'n':
			o->steps = parse_u64("--steps", optarg, 1,
			    1000000000000ULL);
			break;
		case 'k':
			o->samples = parse_u64("--samples", optarg, 1, 100000);
			break;
		case 'c':
			o->cpu = strcmp(optarg, "none") == 0 ? -1 :
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
		case 'O': o->out = optarg; break;
		case 'l': o->list = 1; break;
		case 'h': usage(stdout); exit(AG_OK);
		default: usage(stderr); exit(AG_USAGE);
		}
	}
	if (optind != argc)
		fatal(AG_USAGE, "unexpected argument \"%s\"", argv[optind]);
	if (!o->list && o->study == NULL)
		fatal(AG_USAGE, "--study is required");
}

static void
list_all(void)
{
	unsigned have = cpu_features();
	size_t i;

	for (i = 0; registry_studies[i] != NULL; i++) {
		const struct study *s = registry_studies[i];
		cJSON *o = record("study");

		cJSON_AddStringToObject(o, "study", s->name);
		cJSON_AddStringToObject(o, "description", s->description);
		cJSON_AddStringToObject(o, "unit", s->unit);
		cJSON_AddNumberToObject(o, "state_len", (double)s->state_len);
		emit(o);
	}
	for (i = 0; registry_kernels[i] != NULL; i++) {
		const struct kernel *k = registry_kernels[i];
		cJSON *o = record("kernel");
		cJSON *insns = cJSON_AddArrayToObject(o, "insns");
		char names[128];

		cJSON_AddStringToObject(o, "study", k->study);
		cJSON_AddStringToObject(o, "variant", k->variant);
		cJSON_AddStringToObject(o, "description", k->description);
		cJSON_AddStringToObject(o, "symbol", k->symbol);
		for (size_t j = 0; k->insns != NULL && k->insns[j]; j++)
			cJSON_AddItemToArray(insns,
			    cJSON_CreateString(k->insns[j]));
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

		for (i = 0; registry_kernels[i] != NULL; i++) {
			const struct kernel *k = registry_kernels[i];

			if (strcmp(k->study, study) != 0)
				continue;
			if (strlen(k->variant) == len &&
			    strncmp(k->variant, p, len) == 0)
				found = 1;
			snprintf(valid + strlen(valid),
			    sizeof valid - strlen(valid), "%s%s",
			    valid[0] ? ", " : "", k->variant);
		}
		if (!found)
			fatal(AG_USAGE, "unknown variant \"%.*s\" of study "
			    "\"%s\" (valid: %s)", (int)len, p, study, valid);
		p += len;
		if (*p == ',')
			p++;
	}
}

/* Setup, known answer and 1,000-step chain for one variant. */
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
	for (i = 0; i < st->state_len; i++) {
		unsigned v;

		sscanf(st->kat_hex + 2 * i, "%2x", &v);
		want[i] = (uint8_t)v;
	}
	if (k->hash(sl->ctx, (const uint8_t *)st->kat_msg,
	    strlen(st->kat_msg), digest) != 0 ||
	    memcmp(digest, want, st->state_len) != 0) {
		snprintf(sl->reason, sizeof sl->reason,
		    "known answer for \"%s\" is wrong", st->kat_msg);
		return;
	}
	memcpy(sl->chain, o->seed, st->state_len);
	if (k->chain(sl->ctx, sl->chain, SELFTEST_STEPS) != 0) {
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
consensus(struct slot *sl, size_t n, size_t len, uint8_t *common)
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
			    "%d-step chain disagrees with the other variants",
			    SELFTEST_STEPS);
		}
	}
}

int
main(int argc, char **argv)
{
	struct opts o;
	const struct study *st;
	struct slot slots[MAX_VARIANTS];
	size_t nslots = 0, nready = 0, order[MAX_VARIANTS];
	uint8_t common[KERNEL_MAX_STATE];
	char why[256], buf[2 * KERNEL_MAX_STATE + 1];
	int pinned;
	uint64_t s, nsamples = 0;
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
	if ((st = registry_study(o.study)) == NULL) {
		char valid[512] = "";

		for (i = 0; registry_studies[i] != NULL; i++)
			snprintf(valid + strlen(valid),
			    sizeof valid - strlen(valid), "%s%s",
			    i ? ", " : "", registry_studies[i]->name);
		fatal(AG_USAGE, "unknown study \"%s\" (valid: %s)", o.study,
		    valid);
	}
	check_variant_names(st->name, o.variants);
	if (o.have_seed && o.seed_len != st->state_len)
		fatal(AG_USAGE, "--seed must be %zu bytes (%zu hex digits) for "
		    "study \"%s\"", st->state_len, 2 * st->state_len, st->name);

	rec = record("hello");
	cJSON_AddNumberToObject(rec, "proto", PROTO_VERSION);
	cJSON_AddStringToObject(rec, "agent", AGENT_VERSION);
	cJSON_AddStringToObject(rec, "build_id", o.build_id);
	cJSON_AddStringToObject(rec, "study", st->name);
	cJSON_AddNumberToObject(rec, "steps", (double)o.steps);
	cJSON_AddNumberToObject(rec, "samples", (double)o.samples);
	emit(rec);

	/* Pin first so that facts and self-tests already run where timing will. */
	why[0] = '\0';
	pinned = o.cpu >= 0 && pin_to_cpu(o.cpu, why, sizeof why) == 0;
	if (o.cpu < 0)
		snprintf(why, sizeof why, "no cpu requested");
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
	emit(rec);

	for (i = 0; registry_kernels[i] != NULL; i++) {
		const struct kernel *k = registry_kernels[i];

		if (strcmp(k->study, st->name) != 0 ||
		    !in_list(o.variants, k->variant))
			continue;
		if (nslots == MAX_VARIANTS)
			fatal(AG_FAIL, "more than %d variants", MAX_VARIANTS);
		memset(&slots[nslots], 0, sizeof slots[nslots]);
		slots[nslots].k = k;
		selftest(&slots[nslots], st, &o);
		nslots++;
	}
	consensus(slots, nslots, st->state_len, common);
	for (i = 0; i < nslots; i++) {
		rec = record("variant");
		cJSON_AddStringToObject(rec, "study", st->name);
		cJSON_AddStringToObject(rec, "variant", slots[i].k->variant);
		cJSON_AddStringToObject(rec, "status", slots[i].status);
		if (slots[i].reason[0])
			cJSON_AddStringToObject(rec, "reason",
			    slots[i].reason);
		else
			cJSON_AddNullToObject(rec, "reason");
		emit(rec);
		if (slots[i].ready)
			order[nready++] = i;
	}
	if (nready > 0) {
		rec = record("selftest");
		cJSON_AddStringToObject(rec, "study", st->name);
		cJSON_AddNumberToObject(rec, "steps", SELFTEST_STEPS);
		hex(common, st->state_len, buf);
		cJSON_AddStringToObject(rec, "digest", buf);
		emit(rec);
	}

	for (s = 0; s < o.samples && nready > 0; s++) {
		size_t pos;

		for (pos = 0; pos < nready; pos++) {
			/* Rotate by one per sample, or reverse every other one. */
			size_t idx = o.reverse ?
			    ((s & 1) ? nready - 1 - pos : pos) :
			    (pos + s) % nready;
			struct slot *sl = &slots[order[idx]];
			uint8_t x[KERNEL_MAX_STATE];
			uint64_t t0, t1;
			double mhz;
			int rc, cpu_before, cpu_after;

			memcpy(x, o.seed, st->state_len);
			mhz = timing_calibrate_mhz();
			cpu_before = pin_current_cpu();
			t0 = timing_now_ns();
			rc = sl->k->chain(sl->ctx, x, o.steps);
			t1 = timing_now_ns();
			cpu_after = pin_current_cpu();
			if (rc != 0)
				fatal(AG_FAIL, "variant \"%s\" failed during "
				    "sample %llu", sl->k->variant,
				    (unsigned long long)s);
			rec = record("sample");
			cJSON_AddStringToObject(rec, "study", st->name);
			cJSON_AddStringToObject(rec, "variant",
			    sl->k->variant);
			cJSON_AddNumberToObject(rec, "sample", (double)s);
			cJSON_AddNumberToObject(rec, "position", (double)pos);
			cJSON_AddNumberToObject(rec, "steps", (double)o.steps);
			cJSON_AddNumberToObject(rec, "ns", (double)(t1 - t0));
			hex(x, st->state_len, buf);
			cJSON_AddStringToObject(rec, "digest", buf);
			hex(o.seed, st->state_len, buf);
			cJSON_AddStringToObject(rec, "seed", buf);
			cJSON_AddNumberToObject(rec, "calib_mhz", mhz);
			cJSON_AddNumberToObject(rec, "cpu",
			    cpu_before == cpu_after ? cpu_before : -1);
			cJSON_AddStringToObject(rec, "build_id", o.build_id);
			emit(rec);
			nsamples++;
		}
	}
	for (i = 0; i < nslots; i++)
		if (slots[i].k->teardown != NULL && slots[i].ctx != NULL)
			slots[i].k->teardown(slots[i].ctx);
	rec = record("done");
	cJSON_AddNumberToObject(rec, "samples", (double)nsamples);
	emit(rec);
	return nready > 0 ? AG_OK : AG_FAIL;
}

/*
 * seqorch-agent: runs one study's variants on this host and prints JSON
 * lines (docs/protocol.md): hello, facts, one variant record per variant
 * (self-test result), selftest, then the measurement window: a window
 * record with the host's state, one sample record per timed sample,
 * another window record, and done.  Setup, self-tests and the wait for the
 * host lock all happen before the window begins.
 *
 * This file is the order of those steps; the steps are opts.c (the
 * command line), emit.c (the output), variant.c (the checks before the
 * window), window.c (lock, preflight, window records), sample.c (the
 * timed samples, --serve), spread.c (their statistics) and conduct.c
 * (--conduct's build agents).
 */
#include "conduct.h"
#include "cpu.h"
#include "emit.h"
#include "facts.h"
#include "macos.h"
#include "opts.h"
#include "osslcap.h"
#include "perf.h"
#include "pin.h"
#include "protocol.h"
#include "registry.h"
#include "sample.h"
#include "sysfs.h"
#include "timing.h"
#include "topology.h"
#include "variant.h"
#include "window.h"

#include "jsonl.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_VERSION "0.2.0"

static void
list_all(void)
{
	unsigned have = cpu_features();
	size_t i;

	for (i = 0; registry_studies[i].name != NULL; i++) {
		const struct study *s = registry_studies[i].study;
		struct jsonl *o = emit_new(PROTO_T_STUDY);

		jsonl_str(o, PROTO_F_STUDY,
		    registry_studies[i].name);
		jsonl_str(o, PROTO_F_DESCRIPTION, s->description);
		jsonl_str(o, PROTO_F_UNIT, s->unit);
		jsonl_num(o, PROTO_F_STATE_LEN,
		    (double)s->state_len);
		jsonl_num(o, PROTO_F_DEFAULT_STEPS,
		    (double)s->default_steps);
		if (s->control != NULL)
			jsonl_str(o, PROTO_F_CONTROL, s->control);
#if defined(__x86_64__)
		if (s->floor_x86_64 > 0)
			jsonl_num(o, PROTO_F_FLOOR_CYCLES,
			    s->floor_x86_64);
#elif defined(__aarch64__)
		if (s->floor_aarch64 > 0)
			jsonl_num(o, PROTO_F_FLOOR_CYCLES,
			    s->floor_aarch64);
#endif
		emit(o);
	}
	for (i = 0; registry_kernels[i].study != NULL; i++) {
		const struct registry_kernel *r = &registry_kernels[i];
		const struct kernel *k = r->k;
		struct jsonl *o;
		char names[128];

		/* Kernels compiled in: a variant left out has none to list. */
		if (k == NULL)
			continue;
		o = emit_new(PROTO_T_KERNEL);

		jsonl_str(o, PROTO_F_STUDY, r->study);
		jsonl_str(o, PROTO_F_VARIANT, r->variant);
		jsonl_str(o, PROTO_F_DESCRIPTION, k->description);
		jsonl_str(o, PROTO_F_SYMBOL, k->symbol);
		jsonl_open(o, PROTO_F_INSNS, '[');
		for (size_t j = 0; k->insns != NULL && k->insns[j]; j++)
			jsonl_str(o, NULL, k->insns[j]);
		jsonl_close(o);
		jsonl_open(o, PROTO_F_FORBIDDEN, '[');
		for (size_t j = 0; k->forbidden != NULL && k->forbidden[j];
		    j++)
			jsonl_str(o, NULL, k->forbidden[j]);
		jsonl_close(o);
		cpu_feature_names(k->features & ~have, names, sizeof names);
		jsonl_bool(o, PROTO_F_SUPPORTED,
		    (k->features & ~have) == 0);
		if ((k->features & ~have) != 0)
			jsonl_str(o, PROTO_F_MISSING, names);
		emit(o);
	}
}

/* Facts about the measurement itself: cpu choice, counters, test root. */
static void
add_hygiene(struct jsonl *rec, const char *choice)
{
	if (choice != NULL)
		jsonl_str(rec, PROTO_F_CPU_CHOICE, choice);
	else
		jsonl_null(rec, PROTO_F_CPU_CHOICE);
	jsonl_str(rec, PROTO_F_COUNTERS, sample_counters.source);
	if (sample_counters.why[0])
		jsonl_str(rec, PROTO_F_COUNTERS_ERROR,
		    sample_counters.why);
	else
		jsonl_null(rec, PROTO_F_COUNTERS_ERROR);
	if (sysfs_root() != NULL)
		jsonl_str(rec, PROTO_F_SYSFS_ROOT, sysfs_root());
	else
		jsonl_null(rec, PROTO_F_SYSFS_ROOT);
}

/*
 * A resume's stored samples of sl's variant (--stored-spread) start its
 * spread, so that its extra rounds are decided on the whole run.
 */
static void
seed_spread(struct slot *sl, const struct opts *o)
{
	size_t i;

	for (i = 0; i < o->nstored; i++) {
		if (strcmp(o->stored[i].variant, sl->variant) != 0)
			continue;
		sl->ns.n = sl->stored = o->stored[i].n;
		sl->ns.mean = o->stored[i].mean;
		sl->ns.m2 = o->stored[i].m2;
	}
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
	char choice[TOPOLOGY_WHY_LEN], err[512];
	int pinned, auto_cpu;
	uint64_t nsamples = 0;
	size_t i;
	struct jsonl *rec;

	switch (opts_parse(argc, argv, &o, err, sizeof err)) {
	case OPTS_OK:
		break;
	case OPTS_HELP:
		opts_usage(stdout);
		return AG_OK;
	case OPTS_USAGE:
		opts_usage(stderr);
		return AG_USAGE;
	case OPTS_ERROR:
		fatal(AG_USAGE, "%s", err);
	}
	if (o.out != NULL && emit_open(o.out) != 0)
		fatal(AG_IO, "cannot open \"%s\": %s", o.out, strerror(errno));
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
		window_preflight(&o, o.cpu, auto_cpu ? choice : NULL);
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
	if (variant_check_names(rs->name, o.variants, err, sizeof err) != 0)
		fatal(AG_USAGE, "%s", err);
	for (i = 0; i < o.nstored; i++) {
		if (variant_check_names(rs->name, o.stored[i].variant, err,
		    sizeof err) != 0)
			fatal(AG_USAGE, "--stored-spread: %s", err);
		if (!variant_in_list(o.variants, o.stored[i].variant))
			fatal(AG_USAGE, "--stored-spread: variant \"%s\" is "
			    "not one of --variants", o.stored[i].variant);
	}
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
	if (o.msg_len > 0 && st->kat_msg == NULL)
		fatal(AG_USAGE, "--msg-len: study \"%s\" hashes no message",
		    rs->name);
	if (o.msg_len > 0 && o.msg_len < st->state_len)
		fatal(AG_USAGE, "--msg-len must be at least the digest, %zu "
		    "bytes, for study \"%s\"", st->state_len, rs->name);

	/* The conductor loads no crypto; the agents it starts clear. */
	if (o.openssl_cap_clear != NULL && !o.conduct &&
	    osslcap_clear(o.openssl_cap_clear, argv, err, sizeof err) != 0)
		fatal(AG_USAGE, "%s", err);
	rec = emit_new(PROTO_T_HELLO);
	jsonl_num(rec, PROTO_F_PROTO, SEQORCH_PROTO_VERSION);
	jsonl_str(rec, PROTO_F_AGENT, AGENT_VERSION);
	jsonl_str(rec, PROTO_F_BUILD_ID, o.build_id);
	jsonl_str(rec, PROTO_F_TOKEN, o.token);
	jsonl_str(rec, PROTO_F_STUDY, rs->name);
	jsonl_num(rec, PROTO_F_STEPS, (double)o.steps);
	jsonl_num(rec, PROTO_F_SAMPLES, (double)o.samples);
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
	if (perf_open(&sample_counters) == -2)
		fatal(AG_USAGE, "%s", sample_counters.why);
	rec = emit_new(PROTO_T_FACTS);
	facts_add(rec, o.cpu);
	if (o.cpu >= 0)
		jsonl_num(rec, PROTO_F_PIN_CPU, o.cpu);
	else
		jsonl_null(rec, PROTO_F_PIN_CPU);
	jsonl_bool(rec, PROTO_F_PINNED, pinned);
	if (pinned)
		jsonl_null(rec, PROTO_F_PIN_ERROR);
	else
		jsonl_str(rec, PROTO_F_PIN_ERROR, why);
	jsonl_str(rec, PROTO_F_CLOCK, timing_clock_name());
	jsonl_num(rec, PROTO_F_CALIB_MHZ, timing_calibrate_mhz());
	add_hygiene(rec, auto_cpu ? choice : NULL);
	emit(rec);

	for (i = 0; registry_kernels[i].study != NULL; i++) {
		const struct registry_kernel *r = &registry_kernels[i];

		if (strcmp(r->study, rs->name) != 0 ||
		    !variant_in_list(o.variants, r->variant))
			continue;
		if (nslots == MAX_VARIANTS)
			fatal(AG_FAIL, "more than %d variants", MAX_VARIANTS);
		memset(&slots[nslots], 0, sizeof slots[nslots]);
		slots[nslots].study = r->study;
		slots[nslots].variant = r->variant;
		slots[nslots].k = r->k;
		slots[nslots].missing = r->missing;
		variant_selftest(&slots[nslots], st, o.seed,
		    (size_t)o.msg_len);
		seed_spread(&slots[nslots], &o);
		nslots++;
	}
	variant_consensus(slots, nslots, st->state_len, STUDY_SELFTEST_STEPS(st),
	    common);
	for (i = 0; i < nslots; i++) {
		rec = emit_new(PROTO_T_VARIANT);
		jsonl_str(rec, PROTO_F_STUDY, rs->name);
		jsonl_str(rec, PROTO_F_VARIANT, slots[i].variant);
		jsonl_str(rec, PROTO_F_STATUS, slots[i].status);
		if (slots[i].reason[0])
			jsonl_str(rec, PROTO_F_REASON,
			    slots[i].reason);
		else
			jsonl_null(rec, PROTO_F_REASON);
		if (slots[i].warning != NULL)
			jsonl_str(rec, PROTO_F_WARNING,
			    slots[i].warning);
		emit(rec);
		if (slots[i].ready)
			run[nready++] = &slots[i];
	}
	if (nready > 0) {
		rec = emit_new(PROTO_T_SELFTEST);
		jsonl_str(rec, PROTO_F_STUDY, rs->name);
		jsonl_num(rec, PROTO_F_STEPS,
		    (double)STUDY_SELFTEST_STEPS(st));
		emit_hex(common, st->state_len, buf);
		jsonl_str(rec, PROTO_F_DIGEST, buf);
		emit(rec);
		if (o.serve) {
			sample_serve(run, nready, &o, st);
		} else {
			if (o.lock != NULL)
				window_lock(&o);
			window_preflight(&o, pinned ? o.cpu : -1, NULL);
			sample_measure(run, nready, &o, st, pinned ? o.cpu : -1);
		}
	}
	for (i = 0; i < nslots; i++) {
		nsamples += slots[i].ns.n - slots[i].stored;
		if (slots[i].ctx != NULL && slots[i].k->teardown != NULL)
			slots[i].k->teardown(slots[i].ctx);
	}
	nsamples += sample_warmups;
	rec = emit_new(PROTO_T_DONE);
	jsonl_num(rec, PROTO_F_SAMPLES, (double)nsamples);
	emit(rec);
	return nready > 0 ? AG_OK : AG_FAIL;
}

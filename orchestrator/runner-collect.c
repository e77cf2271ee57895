/*
 * An agent's records, as they stream in: each checked against what was
 * asked of the agent and stored in results.db (samples, facts, windows,
 * variant status, events).
 */
#include "runner-int.h"

#include "../agent/jsonl.h"
#include "affinity.h"
#include "progress.h"
#include "report.h"
#include "strbuf.h"
#include "study.h"
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index of v among the variants that passed, or -1. */
static int
variant_ok(struct stream *s, const char *v)
{
	size_t i;

	for (i = 0; i < s->nok; i++)
		if (strcmp(s->ok_variants[i], v) == 0)
			return (int)i;
	return -1;
}

static int
in_list(char *const *list, size_t n, const char *v)
{
	size_t i;

	for (i = 0; i < n && list[i] != NULL; i++)
		if (strcmp(list[i], v) == 0)
			return 1;
	return 0;
}

/*
 * Add variant record r, which did not pass, to s->unready.  Its reason
 * comes from the host: control characters are replaced, and a list that
 * would outgrow the buffer ends in "...".
 */
static void
note_unready(struct stream *s, const struct record *r)
{
	char item[320];
	size_t len = strlen(s->unready), n;

	snprintf(item, sizeof item, "%svariant \"%.64s\" %.16s: %.200s",
	    len > 0 ? "; " : "", r->variant, r->status,
	    r->reason != NULL ? r->reason : "no reason given");
	strip_ctrl(item);
	n = strlen(item);
	if (len + n + sizeof "; ..." <= sizeof s->unready)
		memcpy(s->unready + len, item, n + 1);
	else if (len + sizeof "; ..." <= sizeof s->unready &&
	    (len < 3 || strcmp(s->unready + len - 3, "...") != 0))
		memcpy(s->unready + len, "; ...", sizeof "; ...");
}

/*
 * A variant record: one per variant asked for, and only those.  An ok
 * variant gets its table of received sample indices, and what its
 * disassembly check found that it forbids (its samples are then stored
 * invalid: they time another chain than the study's).
 */
static int
check_variant(struct stream *s, const struct record *r)
{
	int rc;

	if (!in_list(s->want, (size_t)-1, r->variant))
		return so_error(&s->err, SO_EPROTO, "variant record for "
		    "\"%s\", which was not asked for", r->variant);
	if (in_list(s->seen, s->nseen, r->variant))
		return so_error(&s->err, SO_EPROTO, "second variant record for "
		    "\"%s\" (status %s)", r->variant, r->status);
	s->seen = xrealloc(s->seen, (s->nseen + 1) * sizeof *s->seen);
	s->seen[s->nseen++] = xstrdup(r->variant);
	if (strcmp(r->status, "ok") != 0) {
		note_unready(s, r);
		return 0;
	}
	s->ok_variants = xrealloc(s->ok_variants,
	    (s->nok + 1) * sizeof *s->ok_variants);
	s->cells = xrealloc(s->cells, (s->nok + 1) * sizeof *s->cells);
	s->forbidden = xrealloc(s->forbidden,
	    (s->nok + 1) * sizeof *s->forbidden);
	if ((rc = db_disasm_present(s->hr->db, s->build->build_id, r->study,
	    r->variant, &s->forbidden[s->nok], &s->err)) != 0)
		return rc;
	s->ok_variants[s->nok] = xstrdup(r->variant);
	s->cells[s->nok] = xcalloc(s->span, 1);
	s->nok++;
	s->expected += s->nsamples;
	run_expect(s->hr, s->nsamples);
	return 0;
}

/*
 * The environment variable that sets libcrypto's capabilities on a build's
 * target ("x86_64-linux-gnu"), or NULL for an architecture without one.
 */
const char *
run_openssl_cap_var(const char *target)
{
	char arch[64];

	study_arch(target, arch, sizeof arch);
	if (strcmp(arch, "x86_64") == 0)
		return "OPENSSL_ia32cap";
	if (strcmp(arch, "aarch64") == 0)
		return "OPENSSL_armcap";
	return NULL;
}

/*
 * With --openssl-cap-clear the agent read the mask libcrypto detected,
 * cleared the named bits and ran again with the result: its facts name
 * the three masks, kept for every sample it sends.  An agent built
 * without libcrypto (its facts' openssl is null) has no bits to clear:
 * the control is skipped there, with the reason, as its OpenSSL variants
 * are.
 */
static int
check_cap_clear(struct stream *s, const cJSON *facts)
{
	const char *names[] = { PROTO_F_OPENSSL_CAP_DETECTED,
	    PROTO_F_OPENSSL_CAP_CLEARED, PROTO_F_OPENSSL_CAP_APPLIED };
	char **slot[] = { &s->cap_detected, &s->cap_cleared,
	    &s->cap_applied };
	const cJSON *v;
	size_t i;
	char *msg;
	int rc;

	if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(facts,
	    PROTO_F_OPENSSL))) {
		msg = xasprintf("--openssl-cap-clear %s skipped: the agent was "
		    "built without libcrypto, so nothing it measures reads "
		    "OpenSSL's capability bits", s->hr->p->openssl_cap_clear);
		progress_warn(s->hr->index, "%s", msg);
		rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name,
		    "warning", msg, &s->err);
		free(msg);
		return rc;
	}
	for (i = 0; i < 3; i++) {
		v = cJSON_GetObjectItemCaseSensitive(facts, names[i]);
		if (!cJSON_IsString(v))
			return so_error(&s->err, SO_EPROTO, "agent did not "
			    "clear --openssl-cap-clear %s (its facts have no "
			    "%s)", s->hr->p->openssl_cap_clear, names[i]);
		free(*slot[i]);
		*slot[i] = xstrdup(v->valuestring);
	}
	return 0;
}

/*
 * With --openssl-cap the agent must have run with the value: its facts
 * say what it found in its environment (facts.c).  Without it, a mask the
 * agent inherited (a local host shares the coordinator's environment) is
 * not an error but must not pass unseen.
 */
static int
check_openssl_cap(struct stream *s, const cJSON *facts)
{
	const char *want = s->hr->p->openssl_cap;
	const char *var = run_openssl_cap_var(s->build->target);
	const cJSON *v;
	char msg[400];

	if (var == NULL)
		return 0;
	v = cJSON_GetObjectItemCaseSensitive(facts,
	    strcmp(var, "OPENSSL_armcap") == 0 ? "openssl_armcap" :
	    "openssl_ia32cap");
	if (s->hr->p->openssl_cap_clear != NULL)
		return check_cap_clear(s, facts);
	if (want == NULL) {
		if (!cJSON_IsString(v))
			return 0;
		snprintf(msg, sizeof msg, "agent ran with %s=\"%.200s\" from "
		    "its environment, not from --openssl-cap: libcrypto's code "
		    "paths were restricted", var, v->valuestring);
		progress_warn(s->hr->index, "%s", msg);
		return db_event(s->hr->db, s->hr->p->run_id,
		    s->hr->host->name, "warning", msg, &s->err);
	}
	if (cJSON_IsString(v) && strcmp(v->valuestring, want) == 0)
		return 0;
	return so_error(&s->err, SO_EPROTO, "agent did not run with %s=\"%s\" "
	    "(its facts say %.200s)", var, want, cJSON_IsString(v) ?
	    v->valuestring : "it was not set");
}

/*
 * A local agent pinned itself to cpu: keep our threads off it, and say
 * so in events either way (a failure is recorded, not fatal).
 */
static int
avoid_agent_cpu(struct stream *s, int cpu)
{
	struct so_err e = { 0 };
	char left[256], *msg;
	int rc;

	if (affinity_avoid(cpu, left, sizeof left, &e) == 0)
		msg = xasprintf("coordinator threads kept off the agent's cpu "
		    "%d (now on cpus %s)", cpu, left);
	else
		msg = xasprintf("coordinator threads may share the agent's "
		    "cpu %d: %s", cpu, e.msg);
	rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name, "info",
	    msg, &s->err);
	free(msg);
	return rc;
}

static int
store_facts(struct stream *s, const struct record *r)
{
	const cJSON *j = r->json;
	struct host_facts f = { 0 };
	char *text = cJSON_PrintUnformatted(j);
	const cJSON *v;
	int rc;

	if (text == NULL)
		return so_error(&s->err, SO_ENOMEM, "cannot format the facts "
		    "record");
#define STR(k) (cJSON_IsString(v = cJSON_GetObjectItem(j, k)) ? \
	v->valuestring : NULL)
	f.address = s->hr->host->address;
	f.arch = STR("arch");
	f.os = STR("os");
	f.kernel = STR("kernel");
	f.cpu_model = STR("cpu_model");
	f.governor = STR("governor");
	f.openssl = STR("openssl");
	f.pin_error = STR("pin_error");
	f.cpu_choice = STR("cpu_choice");
	f.counters = STR("counters");
	f.counters_error = STR("counters_error");
#undef STR
	v = cJSON_GetObjectItem(j, "cores");
	f.cores = v->valueint;
	v = cJSON_GetObjectItem(j, "pin_cpu");
	f.pin_cpu = cJSON_IsNumber(v) ? v->valueint : -1;
	f.pinned = cJSON_IsTrue(cJSON_GetObjectItem(j, "pinned"));
	f.calib_mhz = r->calib_mhz;
	f.json = text;
	rc = db_run_host_facts(s->hr->db, s->hr->p->run_id,
	    s->hr->host->name, &f, &s->err);
	free(text);
	/*
	 * Collected from an earlier launch: its warnings were said then,
	 * but --openssl-cap must still have been its environment.
	 */
	if (rc != 0 || s->replay)
		return rc != 0 || s->hr->p->openssl_cap == NULL ? rc :
		    check_openssl_cap(s, j);
	/* The agent did not believe /proc/cpuinfo (facts.h): say so. */
	v = cJSON_GetObjectItem(j, "facts_warning");
	if (cJSON_IsString(v)) {
		char *msg = xasprintf("host facts: %s", v->valuestring);

		rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name,
		    "warning", msg, &s->err);
		free(msg);
	}
	if (rc == 0)
		rc = check_openssl_cap(s, j);
	/*
	 * Asked for a cpu, not on it: the build's samples are unpinned.  Said
	 * per build, as each agent of a conducted host pins itself.
	 */
	if (rc == 0 && !f.pinned && f.pin_cpu >= 0) {
		char msg[400];

		snprintf(msg, sizeof msg, "not pinned (%.64s): %.300s", s->cc,
		    f.pin_error ? f.pin_error : "no reason given");
		strip_ctrl(msg);
		progress_warn(s->hr->index, "%s", msg);
	}
	if (rc == 0 && f.pinned && s->hr->host->transport == TRANSPORT_LOCAL)
		rc = avoid_agent_cpu(s, f.pin_cpu);
	return rc;
}

static int
store_sample(struct stream *s, const struct record *r)
{
	const struct run_params *p = s->hr->p;
	struct sample_row row = { 0 };
	const char *why = NULL;
	char rate[16], forb[256];
	int rc, v;

	if (strcmp(r->study, p->study) != 0)
		return so_error(&s->err, SO_EPROTO, "sample of study \"%s\", "
		    "expected \"%s\"", r->study, p->study);
	if ((v = variant_ok(s, r->variant)) < 0)
		return so_error(&s->err, SO_EPROTO, "sample of variant \"%s\" "
		    "that was not asked for or did not pass its self-test",
		    r->variant);
	if (s->window != 1)
		return so_error(&s->err, SO_EPROTO, "sample outside the "
		    "measurement window (%s)", s->window == 0 ?
		    "no window begin yet" : "after its end");
	if (strcmp(r->build_id, s->build_id) != 0)
		return so_error(&s->err, SO_EPROTO, "sample of build \"%s\", "
		    "but the agent was started as build %s", r->build_id,
		    s->build_id);
	if ((uint64_t)r->steps != p->steps)
		return so_error(&s->err, SO_EPROTO, "sample of %lld steps, "
		    "expected %llu", (long long)r->steps,
		    (unsigned long long)p->steps);
	if ((uint64_t)r->msg_len != p->msg_len)
		return so_error(&s->err, SO_EPROTO, "sample of %lld-byte "
		    "messages, expected %llu (0: the study's own chain)",
		    (long long)r->msg_len, (unsigned long long)p->msg_len);
	if (r->warmup && (uint64_t)r->sample >= p->warmup)
		return so_error(&s->err, SO_EPROTO, "warmup sample %lld, but "
		    "--warmup is %llu", (long long)r->sample,
		    (unsigned long long)p->warmup);
	if (!r->warmup && ((uint64_t)r->sample < s->first ||
	    (uint64_t)r->sample >= s->first + s->span))
		return so_error(&s->err, SO_EPROTO, "sample index %lld out of "
		    "range", (long long)r->sample);
	if (!r->warmup && s->cells[v][r->sample - (int64_t)s->first]++ != 0)
		return so_error(&s->err, SO_EPROTO, "second sample %lld of "
		    "\"%s\" (ns %lld): each index is timed once",
		    (long long)r->sample, r->variant, (long long)r->ns);
	if (strcmp(r->seed, p->seed) != 0)
		why = "seed differs from the run's seed";
	else if (strcmp(r->digest, p->ref_digest) != 0)
		why = "digest differs from the reference";
	else if (s->forbidden[v] != NULL) {
		/* Right digest, wrong chain: not a rate of this variant. */
		snprintf(forb, sizeof forb, SAMPLE_FORBIDDEN " (%s): not the "
		    "study's chain", s->forbidden[v]);
		why = forb;
	}
	row.host = s->hr->host->name;
	row.build_id = s->build->build_id;
	row.study = r->study;
	row.variant = r->variant;
	/*
	 * Warmup round w of K is index w - K, just before the timed 0: the
	 * timed indices keep their meaning, and a resumed launch's warmups
	 * (taken again, as it starts cold) are not kept twice.  It has no
	 * place in the host's order (NULL), which the timed samples fill.
	 */
	row.warmup = r->warmup;
	row.sample_index = r->warmup ? r->sample - (int64_t)p->warmup :
	    r->sample;
	row.position = r->position;
	row.host_position = r->warmup ? -1 : r->order;
	row.steps = (uint64_t)r->steps;
	row.msg_len = (uint64_t)r->msg_len;
	row.window_id = s->hr->sample_window;
	row.ns = (uint64_t)r->ns;
	row.digest = r->digest;
	row.seed = r->seed;
	row.valid = why == NULL;
	row.invalid_reason = why;
	row.calib_mhz = r->calib_mhz;
	row.calib_after_mhz = r->calib_after_mhz;
	row.cpu = (int)r->cpu;
	row.reason = r->reason;
	row.openssl_cap = p->openssl_cap_clear != NULL ? s->cap_applied :
	    p->openssl_cap;
	row.openssl_cap_detected = s->cap_detected;
	row.openssl_cap_cleared = s->cap_cleared;
	row.counted = r->counted;
	row.cycles = r->cycles;
	row.instructions = r->instructions;
	row.cycles_source = r->cycles_source;
	rc = db_sample_insert(s->hr->db, p->run_id, &row, &s->err);
	/*
	 * Stored by an earlier launch of this run: a resume re-times the
	 * span between its gaps, and the first timing of a cell is kept.
	 */
	if (rc == SO_EBUSY)
		return 0;
	if (rc == 0 && r->nmetrics > 0)
		rc = db_sample_metrics(s->hr->db, p->run_id, &row,
		    r->metric_name, r->metric_value, r->nmetrics, &s->err);
	if (rc != 0)
		return rc;
	/* A warmup is not one of the samples asked for (nor counted). */
	if (!r->warmup) {
		s->got++;
		s->hr->samples++;
		progress_tick();
	}
	/* The build's warning already named a forbidden variant. */
	if (why != NULL && why != forb) {
		char msg[512];

		s->hr->invalid++;
		snprintf(msg, sizeof msg, "sample %lld of \"%s\" (%s) is "
		    "invalid: %s (got %s)", (long long)r->sample, r->variant,
		    s->cc, why, r->digest);
		run_note(s->hr, "error", msg);
	}
	if (r->warmup)
		return 0;
	/* A RandomX hash takes milliseconds, a SHA3 one nanoseconds. */
	report_format_rate((double)r->steps * 1e9 / (double)r->ns, rate,
	    sizeof rate);
	/* --max-cv's extra rounds go past the planned count, to at most M. */
	if ((uint64_t)r->sample < p->samples)
		progress_set(s->hr->index, "%s: sample %lld/%llu of %s "
		    "(%s/s)", s->cc, (long long)r->sample + 1,
		    (unsigned long long)p->samples, r->variant, rate);
	else
		progress_set(s->hr->index, "%s: sample %lld (extra, up to "
		    "%llu) of %s (%s/s)", s->cc, (long long)r->sample + 1,
		    (unsigned long long)p->max_samples, r->variant, rate);
	return 0;
}

/*
 * The noise verdict before a window: kept for the window record that
 * follows, and a noisy one is a warning with its reasons.
 */
static int
store_preflight(struct stream *s, const struct record *r)
{
	struct strbuf msg = STRBUF_INIT;
	const cJSON *item;
	int rc;

	free(s->preflight);
	s->preflight = cJSON_PrintUnformatted(r->json);
	snprintf(s->verdict, sizeof s->verdict, "%s", r->verdict);
	if (strcmp(r->verdict, "noisy") != 0)
		return 0;
	strbuf_addf(&msg, "host is noisy before the window (%s):", s->cc);
	cJSON_ArrayForEach(item, cJSON_GetObjectItem(r->json, "reasons"))
		strbuf_addf(&msg, " %s;", item->valuestring);
	/* The last ';' (or the ':' when no reason is given) goes. */
	msg.buf[--msg.len] = '\0';
	progress_warn(s->hr->index, "%s", msg.buf);
	rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name,
	    "warning", msg.buf, &s->err);
	strbuf_release(&msg);
	return rc;
}

/* A window opens or closes on this host; exploratory runs keep none. */
static int
store_window(struct stream *s, const struct record *r)
{
	struct hostrun *hr = s->hr;
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(r->state, "at");
	char *state = cJSON_PrintUnformatted(r->state), *drift = NULL;
	char now[32], *skew = NULL;
	int64_t id;
	int rc = 0;

	if (state == NULL) {
		rc = so_error(&s->err, SO_ENOMEM, "cannot format the window "
		    "record");
		goto out;
	}
	if (!cJSON_IsString(at)) {
		rc = so_error(&s->err, SO_EPROTO, "window record without a "
		    "time");
		goto out;
	}
	if (strcmp(r->phase, "begin") == 0 ? s->window != 0 :
	    s->window != 1) {
		rc = so_error(&s->err, SO_EPROTO, "window %s %s", r->phase,
		    s->window == 0 ? "before its begin" : s->window == 1 ?
		    "while the window is open" : "after the window ended");
		goto out;
	}
	s->window++;
	hr->sample_window = 0;
	if (hr->p->explore)
		goto out;
	/*
	 * An earlier launch's window was stored by its coordinator: found by
	 * the agent's time, which its before_state keeps.  One it never saw
	 * end (it was killed) ends here, by the agent's record, as it would
	 * have there (and one it ended keeps its end and drift, said then);
	 * its start bounds the end as a launch does.
	 */
	if (s->replay && strcmp(r->phase, "begin") == 0) {
		struct window_found f;

		rc = db_window_find(hr->db, hr->p->run_id, hr->p->study,
		    hr->host->name, at->valuestring, &f, &s->err);
		hr->sample_window = f.id;
		s->replay_window = f.open ? f.id : 0;
		s->launched = f.started;
		free(s->window_before);
		s->window_before = xstrdup(state);
		goto out;
	}
	if (s->replay && s->replay_window == 0)
		goto out;
	/* A host clock that is off keeps the window's times wrong. */
	skew = window_skew(at->valuestring, r->phase, s->launched, now,
	    sizeof now);
	if (strcmp(r->phase, "begin") == 0) {
		struct window_open w = { .run_id = hr->p->run_id,
		    .build_id = s->build->build_id, .study = hr->p->study,
		    .host = hr->host->name, .holder = db_coordinator_id(),
		    .at = skew ? now : at->valuestring, .state = state,
		    .verdict = s->preflight ? s->verdict : NULL,
		    .preflight = s->preflight };

		free(s->window_before);
		s->window_before = xstrdup(state);
		rc = db_window_begin(hr->db, &w, &hr->window_id, &s->err);
		hr->sample_window = hr->window_id;
		free(s->preflight);
		s->preflight = NULL;
		if (skew != NULL)
			progress_warn(hr->index, "%s", skew);
		if (rc == 0 && skew != NULL)
			rc = db_event(hr->db, hr->p->run_id, hr->host->name,
			    "warning", skew, &s->err);
	} else if ((id = s->replay ? s->replay_window : hr->window_id) != 0) {
		drift = window_drift(s->window_before, state, skew);
		rc = db_window_end(hr->db, id, skew ? now : at->valuestring,
		    state, drift, &s->err);
		if (s->replay)
			s->replay_window = 0;
		else
			hr->window_id = 0;
		if (rc == 0 && drift != NULL) {
			char *msg = xasprintf("measurement window drifted: %s",
			    drift);

			progress_warn(hr->index, "%s", msg);
			rc = db_event(hr->db, hr->p->run_id, hr->host->name,
			    "warning", msg, &s->err);
			free(msg);
		}
	}
out:
	free(skew);
	free(drift);
	free(state);
	return rc;
}

static int
handle_record(struct stream *s, const struct record *r)
{
	const struct run_params *p = s->hr->p;
	char msg[SO_ERR_MAX];
	int rc;

	/* Sent, stored or not: the agent's done counts it. */
	if (r->type == REC_SAMPLE)
		s->records++;
	if (s->saw_done)
		return so_error(&s->err, SO_EPROTO, "\"%s\" record after done",
		    proto_type_name(r->type));
	if (!s->saw_hello && r->type != REC_HELLO && r->type != REC_ERROR)
		return so_error(&s->err, SO_EPROTO, "first record is \"%s\", "
		    "expected \"hello\"", proto_type_name(r->type));
	switch (r->type) {
	case REC_HELLO:
		if (s->saw_hello)
			return so_error(&s->err, SO_EPROTO, "second hello");
		/* Records of another launch (a reused directory) are not ours. */
		if (strcmp(r->token, s->token) != 0)
			return so_error(&s->err, SO_EPROTO, "hello carries run "
			    "token \"%.40s\", expected \"%s\": these records "
			    "belong to another run", r->token, s->token);
		s->saw_hello = 1;
		if (strcmp(r->build_id, s->build_id) != 0)
			return so_error(&s->err, SO_EPROTO, "hello of build "
			    "\"%s\", but the agent was started as build %s",
			    r->build_id, s->build_id);
		/* An earlier launch: what it was asked is known from here. */
		if (s->replay && r->samples >= 0 &&
		    (uint64_t)r->samples <= s->span)
			s->nsamples = (uint64_t)r->samples;
		if (strcmp(r->study, p->study) != 0 ||
		    (uint64_t)r->steps != p->steps ||
		    (uint64_t)r->samples != s->nsamples)
			return so_error(&s->err, SO_EPROTO, "agent runs study "
			    "\"%s\" with %lld steps x %lld samples, not what "
			    "was asked", r->study, (long long)r->steps,
			    (long long)r->samples);
		return 0;
	case REC_FACTS:
		return store_facts(s, r);
	case REC_VARIANT:
		if ((rc = check_variant(s, r)) != 0)
			return rc;
		if (r->warning != NULL && !s->replay) {
			snprintf(msg, sizeof msg, "build %lld (%s): variant "
			    "\"%s\" %s", (long long)s->build->build_id, s->cc,
			    r->variant, r->warning);
			progress_warn(s->hr->index, "%s", msg);
			if (db_event(s->hr->db, p->run_id, s->hr->host->name,
			    "warning", msg, &s->err) != 0)
				return s->err.code;
		}
		return db_variant_status(s->hr->db, p->run_id,
		    s->hr->host->name, s->build->build_id, r->study,
		    r->variant, r->status, r->reason, &s->err);
	case REC_SELFTEST:
		/* Variants that agree on a wrong chain are all wrong. */
		if ((uint64_t)r->steps !=
		    STUDY_SELFTEST_STEPS(study_find(p->study)->study) ||
		    strcmp(r->digest, p->ref_selftest) != 0)
			return so_error(&s->err, SO_EPROTO, "self-test chain "
			    "of %lld steps ends in %.128s, the reference's in "
			    "%s", (long long)r->steps, r->digest,
			    p->ref_selftest);
		progress_set(s->hr->index, "%s: self-test passed, measuring",
		    s->cc);
		return 0;
	case REC_SAMPLE:
		return store_sample(s, r);
	case REC_WINDOW:
		return store_window(s, r);
	case REC_PREFLIGHT:
		return s->replay ? 0 : store_preflight(s, r);
	case REC_WAIT:
		/* Sent at most once: a stream of them is not a wait. */
		if (++s->waits > 1 || s->window != 0)
			return so_error(&s->err, SO_EPROTO, "wait record %s",
			    s->window != 0 ? "after the window began" :
			    "repeated (one at most)");
		if (s->replay)
			return 0;
		snprintf(msg, sizeof msg, "waiting for the host lock, held by "
		    "%s", r->holder);
		progress_set(s->hr->index, "%s", msg);
		return db_event(s->hr->db, p->run_id, s->hr->host->name,
		    "info", msg, &s->err);
	case REC_DONE:
		if ((uint64_t)r->samples != s->records)
			return so_error(&s->err, SO_EPROTO, "done counts %lld "
			    "samples, %llu were sent", (long long)r->samples,
			    (unsigned long long)s->records);
		if (s->nok > 0 && s->window != 2)
			return so_error(&s->err, SO_EPROTO, "done %s",
			    s->window == 0 ? "without window records" :
			    "before the window's end");
		s->saw_done = 1;
		return 0;
	case REC_ERROR:
		return so_error(&s->err, SO_EAGENT, "%s", r->message);
	case REC_BUILD:
		return so_error(&s->err, SO_EPROTO, "build record from an "
		    "agent that conducts no builds");
	}
	return 0;
}

/* Bytes of a refused line its build's error keeps, as the conductor's. */
#define EXCERPT 200

/*
 * The coordinator refused line (len bytes) of build k, which conductor s
 * relayed, for why: a fault of that build's agent alone, which the
 * conductor's checks of its lines do not cover (a field's content, an
 * index out of range).  The build is out (an error event now, the host's
 * error at the end) and the others go on; the conductor, which cannot
 * know, relays its later records, and on_line only counts them.
 */
static int
refuse(struct stream *s, struct stream *k, const char *line, size_t len,
    const char *why)
{
	char reason[SO_ERR_MAX], ex[4 * EXCERPT + 1], msg[SO_ERR_MAX + 64];

	snprintf(reason, sizeof reason, "%s", why);
	strip_ctrl(reason);
	jsonl_excerpt(line, len, EXCERPT, ex);
	k->gone = k->refused = 1;
	so_error(&k->err, SO_EPROTO, "the agent of build %s sent a record "
	    "that the coordinator refuses (%s), and its records are ignored "
	    "from there on; the line%s (agent output line %llu): \"%s\"",
	    k->build_id, reason, len > EXCERPT ? "'s first 200 bytes" : "",
	    (unsigned long long)s->lr.lineno, ex);
	snprintf(msg, sizeof msg, "agent (%s): %s", k->cc, k->err.msg);
	progress_set(s->hr->index, "%s", msg);
	return db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name,
	    "error", msg, &s->err);
}

/*
 * A conductor's record (line, len bytes): a build record switches whose records follow;
 * the conductor's own are checked as an agent's, its window shared with
 * every build; a build's go to its stream.  A build's agent that fails
 * (its error record), or whose record is refused, is an error event, and
 * the others go on.
 */
static int
conductor_record(struct stream *s, const struct record *r, const char *line,
    size_t len)
{
	struct stream *k = s->cur;
	char msg[SO_ERR_MAX + 64];
	size_t i;
	int rc;

	if (r->type == REC_BUILD) {
		if (!s->saw_hello || s->saw_done)
			return so_error(&s->err, SO_EPROTO, "build record %s",
			    s->saw_done ? "after done" : "before hello");
		s->cur = NULL;
		for (i = 0; r->build_id[0] != '\0' && i < s->nkids; i++)
			if (strcmp(s->kids[i]->build_id, r->build_id) == 0)
				s->cur = s->kids[i];
		if (r->build_id[0] != '\0' && s->cur == NULL)
			return so_error(&s->err, SO_EPROTO, "records of build "
			    "\"%.40s\", which the conductor was not given",
			    r->build_id);
		return 0;
	}
	if (k == NULL) {
		if (r->type == REC_DONE) {
			s->records = 0;
			for (i = 0; i < s->nkids; i++) {
				s->records += s->kids[i]->records;
				/* Collected, it may have driven fewer. */
				if (!s->kids[i]->saw_done &&
				    !s->kids[i]->gone && !(s->replay &&
				    !s->kids[i]->saw_hello))
					return so_error(&s->err, SO_EPROTO,
					    "done before build %s's agent "
					    "ended", s->kids[i]->build_id);
			}
		}
		if (r->type == REC_FACTS || r->type == REC_VARIANT ||
		    r->type == REC_SELFTEST || r->type == REC_SAMPLE)
			return so_error(&s->err, SO_EPROTO, "\"%s\" record "
			    "of no build", proto_type_name(r->type));
		if ((rc = handle_record(s, r)) == 0 && r->type == REC_WINDOW)
			for (i = 0; i < s->nkids; i++)
				s->kids[i]->window = s->window;
		return rc;
	}
	if (k->gone)
		return so_error(&s->err, SO_EPROTO, "\"%s\" record of build %s "
		    "after its error", proto_type_name(r->type), k->build_id);
	if (r->type == REC_WINDOW || r->type == REC_WAIT ||
	    r->type == REC_PREFLIGHT)
		return so_error(&s->err, SO_EPROTO, "\"%s\" record of build "
		    "%s: only the conductor has them",
		    proto_type_name(r->type), k->build_id);
	rc = handle_record(k, r);
	if (rc == SO_EAGENT) {
		k->gone = 1;
		snprintf(msg, sizeof msg, "agent (%s): %s", k->cc, k->err.msg);
		progress_set(s->hr->index, "%s", msg);
		rc = db_event(s->hr->db, s->hr->p->run_id, s->hr->host->name,
		    "error", msg, &s->err);
	} else if (rc == SO_EPROTO || rc == SO_EPARSE || rc == SO_EINVAL)
		rc = refuse(s, k, line, len, k->err.msg);
	else if (rc != 0)
		so_error(&s->err, rc, "build %s (%s): %s", k->build_id, k->cc,
		    k->err.msg);
	return rc;
}

/* One line of agent output; line_feed says which line a failure is on. */
static int
on_line(void *arg, char *line, size_t len)
{
	struct stream *s = arg, *k = s->kids != NULL ? s->cur : NULL;
	enum rec_type t;
	struct record r;
	int rc, typed;

	if (len == 0)
		return 0;
	/*
	 * A refused build's lines are not read; its samples are counted
	 * (the conductor's done counts each it relayed).  A build record is
	 * the conductor's own: the conductor relays none of a build's.
	 */
	if (k != NULL && k->refused) {
		typed = proto_peek_type(line, len, &t) == 0;
		if (!typed || t != REC_BUILD) {
			k->records += typed && t == REC_SAMPLE;
			return 0;
		}
	}
	if ((rc = proto_parse(line, len, &r, &s->err)) != 0) {
		if (k == NULL || k->gone)
			return rc;
		if (proto_peek_type(line, len, &t) == 0 && t == REC_SAMPLE)
			k->records++;
		return refuse(s, k, line, len, s->err.msg);
	}
	rc = s->kids != NULL ? conductor_record(s, &r, line, len) :
	    handle_record(s, &r);
	proto_record_free(&r);
	return rc;
}

int
run_on_stdout(void *arg, const char *buf, size_t len)
{
	struct stream *s = arg;

	return line_feed(&s->lr, buf, len, on_line, s, &s->err);
}


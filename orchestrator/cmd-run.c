/*
 * seqorch run: measure one or more studies on the selected hosts and store
 * everything in results.db.  Studies given as a list run one after the
 * other, each as its own run.
 */
#include "cmd.h"
#include "cmd-run.h"
#include "config.h"
#include "conn.h"
#include "db.h"
#include "deploy.h"
#include "fetch.h"
#include "generate.h"
#include "hostsel.h"
#include "openssl-caps.h"
#include "progress.h"
#include "reference.h"
#include "remote.h"
#include "runner.h"
#include "study.h"
#include "window.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SAMPLES 1000
#define MAX_OPENSSL_CAP 200

static volatile sig_atomic_t stop_flag;
/* --db-wait, for on_db_locked's message. */
static int64_t db_wait_s;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* Said once a write has waited the busy timeout for another writer. */
static void
on_db_locked(const char *path, const char *holder)
{
	progress_note("warning: \"%s\" is locked by another writer%s%s%s; "
	    "waiting for it up to %lld s (the agents' samples stay on their "
	    "hosts meanwhile)", path, holder[0] ? " (" : "", holder,
	    holder[0] ? ")" : "", (long long)db_wait_s);
}

/* The run an out-of-memory abort would leave "running". */
static const char *oom_db;
static int64_t oom_run;

/*
 * Before the abort: the run ends "failed" with the reason, through a
 * connection of its own (the failing thread may hold the other's lock).
 */
static void
run_oom(size_t n)
{
	struct so_err err;
	struct db *db;
	const char *status;
	char msg[128];

	snprintf(msg, sizeof msg, "the coordinator ran out of memory "
	    "allocating %zu bytes and stopped", n);
	if (db_open(oom_db, &db, &err) != 0)
		return;
	db_event(db, oom_run, NULL, "error", msg, &err);
	runner_finish(db, oom_run, NULL, NULL, &status, &err);
	db_close(db);
}

/*
 * "unknown variant" of study, with the nearest of its variants and all
 * of them.
 */
static void
unknown_variant(const char *study, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	struct nearest n = NEAREST_INIT(name);
	const char *near;
	size_t i;

	for (i = 0; variant_table[i].study != NULL; i++) {
		if (strcmp(variant_table[i].study, study) != 0)
			continue;
		if (sb.len > 0)
			strbuf_addstr(&sb, ", ");
		strbuf_addstr(&sb, variant_table[i].variant);
		nearest_try(&n, variant_table[i].variant);
	}
	if ((near = nearest_word(&n)) != NULL)
		fprintf(stderr, "seqorch: unknown variant \"%s\" of study "
		    "\"%s\"; did you mean \"%s\"?\n", name, study, near);
	else
		fprintf(stderr, "seqorch: unknown variant \"%s\" of study "
		    "\"%s\" (valid: %s)\n", name, study, sb.buf);
	strbuf_release(&sb);
}

/*
 * Each study must exist, take --steps (0: its default) and have each
 * variant of the list.
 */
static int
check_names(const char *studies, const char *variants, int64_t steps,
    int64_t msg_len)
{
	char *copy = xstrdup(studies), *p = copy, *name;
	const struct study_entry *se;
	int rc = 0;

	while (rc == 0 && (name = strsep(&p, ",")) != NULL) {
		if (cmd_check_study(name, 1) != 0) {
			rc = -1;
			break;
		}
		se = study_find(name);
		if ((uint64_t)steps > study_max_steps(se->study)) {
			fprintf(stderr, "seqorch: --steps %lld is more than study "
			    "\"%s\" takes (at most %llu: about an hour of its "
			    "reference chain)\n", (long long)steps, name,
			    (unsigned long long)study_max_steps(se->study));
			rc = -1;
			break;
		}
		if (msg_len > 0 && (se->ref->msg_chain == NULL ||
		    (size_t)msg_len < se->study->state_len)) {
			if (se->ref->msg_chain == NULL)
				fprintf(stderr, "seqorch: --msg-len: study \"%s\" "
				    "hashes no message (sha3 and sha512 do)\n",
				    name);
			else
				fprintf(stderr, "seqorch: --msg-len %lld is "
				    "shorter than study \"%s\"'s digest (%zu "
				    "bytes), with which each message begins\n",
				    (long long)msg_len, name,
				    se->study->state_len);
			rc = -1;
			break;
		}
		if (variants != NULL) {
			char *vcopy = xstrdup(variants), *q = vcopy, *v;

			while (rc == 0 && (v = strsep(&q, ",")) != NULL) {
				if (study_variant(name, v) != NULL)
					continue;
				unknown_variant(name, v);
				rc = -1;
			}
			free(vcopy);
		}
	}
	free(copy);
	return rc;
}

char *
cmd_command_line(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	int i;

	strbuf_addstr(&sb, "seqorch");
	for (i = 0; i < argc; i++)
		rcmd_arg(&sb, argv[i]);
	return strbuf_detach(&sb);
}


/*
 * An OpenSSL capability value as libcrypto parses it: numbers, "~" to
 * clear bits, ":" between words (":~0x120", "0x7d").  Bounded
 * and plain, so that the value stored is the value the agent saw.
 */
static int
valid_openssl_cap(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= MAX_OPENSSL_CAP && strspn(s,
	    "0123456789abcdefABCDEFxX~:") == n;
}

int
cmd_run_open(struct run_opts *o, struct config **cfg, struct host ***hosts,
    size_t *n, struct db **db)
{
	struct so_err err = { 0 };
	struct sigaction sa;
	int rc;

	if (cmd_load_config(o->sel.config, o->sel.ssh_config, cfg) != 0)
		return EXIT_USAGE;
	if ((rc = cmd_select_hosts(&o->sel, *cfg, hosts, n)) != EXIT_OK)
		return rc;
	o->cache = fetch_cache_dir(o->cache_opt, (*cfg)->cache, o->db);
	if ((rc = db_open(o->db, db, &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	db_wait_s = o->db_wait > 0 ? o->db_wait : DB_WAIT_DEFAULT;
	db_wait_writers(*db, (int)db_wait_s, &stop_flag, on_db_locked);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return EXIT_OK;
}

int
cmd_run_stopped(void)
{
	return stop_flag != 0;
}

int
cmd_run_outcome(int *rc, int r)
{
	if (r != EXIT_OK && (*rc == EXIT_OK || r == EXIT_INTERRUPTED))
		*rc = r;
	return r == EXIT_INTERRUPTED || r == EXIT_DB;
}

/*
 * --openssl-cap-clear's names: each one a capability of some architecture
 * (kernels/openssl-caps.h); the host's own are checked before it builds.
 * 0, or -1 having said why.
 */
static int
valid_cap_names(const char *names)
{
	const char *p = names;
	size_t n;

	do {
		n = strcspn(p, ",");
		if (openssl_cap_find(NULL, p, n) == NULL) {
			fprintf(stderr, "seqorch: --openssl-cap-clear: unknown "
			    "OpenSSL capability \"%.*s\" (docs/usage.md names "
			    "them: ARMV8_SHA512, AVX2...)\n", (int)n, p);
			return -1;
		}
		p += n;
	} while (*p++ == ',');
	return 0;
}

/* One study's run, its sources at hand; returns an EXIT_* code. */
static int
run_study_with(struct db *db, const char *study, struct host **hosts,
    size_t n, const struct run_opts *o, const char *command,
    const struct generated *gen, int64_t *run_id_out)
{
	struct run_info ri = { 0 };
	struct run_params p = { 0 };
	struct run_outcome out;
	struct run_tally tally;
	struct so_err err = { 0 };
	struct strbuf db_opts = STRBUF_INIT, run_opts = STRBUF_INIT;
	struct strbuf host_opts = STRBUF_INIT;
	const struct study *st = study_find(study)->study;
	char ref[129], ref_selftest[129], db_id[33];
	const char *status;
	int64_t run_id;
	const char *seed = o->seed ? o->seed : st->seed_hex;
	/* Each study of a list has its own protocol unless --steps says. */
	int64_t steps = o->steps > 0 ? o->steps : (int64_t)st->default_steps;
	char *holder;
	int rc;

	fprintf(stderr, "seqorch: computing the reference digest for %s "
	    "(%lld %s)\n", study, (long long)steps, st->unit_plural);
	if (reference_get(db, study, seed, STUDY_SELFTEST_STEPS(st),
	    (uint64_t)o->msg_len, ref_selftest, &stop_flag, &err) != 0 ||
	    reference_get(db, study, seed, (uint64_t)steps,
	    (uint64_t)o->msg_len, ref, &stop_flag, &err) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(err.code);
	}
	if (db_identity(db, db_id, &err) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(err.code);
	}
	/* Nothing to create when the window is taken and we may not wait. */
	if (o->no_wait && !o->explore &&
	    (rc = lease_check_free(db, (int)o->lease_expiry,
	    &stop_flag, &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	ri.study = study;
	ri.steps = (uint64_t)steps;
	ri.samples = (uint64_t)o->samples;
	ri.command = command;
	ri.seed = seed;
	ri.variants = o->variants;
	ri.hosts = o->sel.spec;
	ri.exploratory = o->explore;
	ri.openssl_cap = o->openssl_cap;
	ri.max_cv = o->max_cv;
	ri.max_samples = (uint64_t)o->max_samples;
	ri.openssl_cap_clear = o->openssl_cap_clear;
	ri.msg_len = (uint64_t)o->msg_len;
	ri.warmup = (uint64_t)o->warmup;
	ri.take_over = o->take_over;
	if ((rc = runner_begin(db, &ri, o->resume, &run_id, &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	if (run_id_out != NULL)
		*run_id_out = run_id;
	if (o->resume > 0)
		fprintf(stderr, "seqorch: resuming run %lld\n",
		    (long long)run_id);
	fprintf(stderr, "seqorch: run %lld: study %s on %zu host%s, %lld "
	    "%s x %lld samples per variant\n", (long long)run_id, study,
	    n, n == 1 ? "" : "s", (long long)steps, st->unit_plural,
	    (long long)o->samples);
	p.study = study;
	p.variants = o->variants;
	p.seed = seed;
	p.cache = o->cache;
	p.steps = (uint64_t)steps;
	p.samples = (uint64_t)o->samples;
	p.parallel = (int)o->sel.parallel;
	p.run_id = run_id;
	p.ref_digest = ref;
	p.ref_selftest = ref_selftest;
	p.stop = &stop_flag;
	p.explore = o->explore;
	p.resume = o->resume > 0;
	p.no_wait = o->no_wait;
	p.require_quiet = o->require_quiet;
	p.lease_expiry = (int)o->lease_expiry;
	p.max_cv = o->max_samples > o->samples ? o->max_cv : 0;
	p.max_samples = (uint64_t)o->max_samples;
	p.openssl_cap = o->openssl_cap;
	p.openssl_cap_clear = o->openssl_cap_clear;
	p.msg_len = (uint64_t)o->msg_len;
	p.warmup = (uint64_t)o->warmup;
	p.gen = gen;
	holder = xasprintf("%s, db \"%s\", run %lld", db_coordinator_id(),
	    o->db, (long long)run_id);
	p.holder = holder;
	p.db_id = db_id;
	oom_db = o->db;
	oom_run = run_id;
	so_set_oom_hook(run_oom);
	rc = runner_run(db, hosts, n, &p, &out, &err);
	so_set_oom_hook(NULL);
	free(holder);
	if (rc != 0) {
		cmd_error(err.msg);
		runner_finish(db, run_id, NULL, NULL, &status, &err);
		return EXIT_FAIL;
	}
	if ((rc = runner_finish(db, run_id, &out, &tally, &status,
	    &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	/*
	 * The whole run's samples, as its status counts them; a resume says
	 * what it added.  A host stopped by Ctrl-C was interrupted, not
	 * failed.
	 */
	fprintf(stderr, "seqorch: run %lld %s: %llu samples (%llu invalid), ",
	    (long long)run_id, status, (unsigned long long)tally.samples,
	    (unsigned long long)tally.invalid);
	if (o->resume > 0)
		fprintf(stderr, "%llu of them stored by this resume, ",
		    (unsigned long long)out.samples);
	fprintf(stderr, "%u host%s ok, %u failed",
	    out.hosts_ok, out.hosts_ok == 1 ? "" : "s",
	    out.hosts_failed - out.hosts_interrupted);
	if (out.hosts_interrupted > 0)
		fprintf(stderr, ", %u interrupted", out.hosts_interrupted);
	fputc('\n', stderr);
	cmd_hint_opts(&db_opts, NULL, NULL, o->db);
	cmd_hint_opts(&run_opts, o->sel.config, o->sel.ssh_config, o->db);
	cmd_hint_opts(&host_opts, o->sel.config, o->sel.ssh_config, NULL);
	runner_summary(db, run_id, db_opts.buf, run_opts.buf,
	    out.hosts_ok == 0 && out.hosts_failed > 0 && !out.interrupted ?
	    host_opts.buf : NULL, status, stderr);
	strbuf_release(&db_opts);
	strbuf_release(&run_opts);
	strbuf_release(&host_opts);
	if (out.interrupted)
		return EXIT_INTERRUPTED;
	return strcmp(status, "ok") == 0 ? EXIT_OK : EXIT_FAIL;
}

/* Does the comma list variants name a variant of study that needs one? */
static int
names_generated(const char *study, const char *variants)
{
	const struct variant_entry *ve;
	char *copy, *q, *v;
	int yes = 0;

	if (variants == NULL)
		return 0;
	copy = q = xstrdup(variants);
	while (!yes && (v = strsep(&q, ",")) != NULL)
		yes = (ve = study_variant(study, v)) != NULL &&
		    ve->needs != NULL;
	free(copy);
	return yes;
}

/*
 * One study's run; returns an EXIT_* code.  Hosts never download: what
 * they build from comes from our cache, and the sources generated from
 * it here.  An artifact marked "generate" is fetched when --variants
 * names a variant that needs it; otherwise a cached one is used and
 * without one those variants are skipped.
 */
int
cmd_run_study(struct db *db, const char *study, struct host **hosts,
    size_t n, const struct run_opts *o, const char *command,
    int64_t *run_id_out)
{
	struct generated *gen = NULL;
	struct so_err err = { 0 };
	unsigned fetched, cached;
	int rc;

	if (fetch_study(study, &o->source, o->cache, o->fetch_generated ||
	    o->source.name != NULL || names_generated(study, o->variants),
	    &stop_flag, &fetched, &cached, &err) != 0) {
		cmd_error(err.msg);
		return err.code == SO_EINTR ? EXIT_INTERRUPTED : EXIT_FAIL;
	}
	if (fetched > 0)
		fprintf(stderr, "seqorch: fetched %u artifact%s of %s into "
		    "\"%s\"\n", fetched, fetched == 1 ? "" : "s", study,
		    o->cache);
	if (generate_study(study, &o->source, o->cache, &gen, &err) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(err.code);
	}
	rc = run_study_with(db, study, hosts, n, o, command, gen, run_id_out);
	generated_free(gen);
	return rc;
}

/* load_resume: the run is finished, there is nothing to do (exit 0). */
#define RESUME_DONE (-1)

/*
 * --resume: the run's own study, steps, samples, seed, variants, hosts and
 * kind (exploratory or not) are used; only --study may be given, and must
 * match.
 */
static int
load_resume(struct run_opts *o, struct stored_run *r)
{
	struct so_err err;
	struct db *db;
	int rc;

	if (access(o->db, F_OK) != 0) {
		fprintf(stderr, "seqorch: cannot resume: no database \"%s\"\n",
		    o->db);
		return cmd_exit_code(SO_EDB);
	}
	if ((rc = db_open(o->db, &db, &err)) != 0) {
		cmd_error(err.msg);
		return cmd_exit_code(rc);
	}
	rc = db_run_load(db, o->resume, r, &err);
	db_close(db);
	if (rc != 0) {
		fprintf(stderr, "seqorch: cannot resume: \"%s\": %s\n", o->db,
		    err.msg);
		return cmd_exit_code(rc);
	}
	/*
	 * Its rows say another coordinator measured it: samples from here
	 * would be presented, on a re-export, as that coordinator's work.
	 */
	if (r->imported_from != NULL) {
		fprintf(stderr, "seqorch: cannot resume: run %lld was imported "
		    "(run %lld of \"%s\"): only its own coordinator can "
		    "measure more of it; start a new run here\n",
		    (long long)o->resume, (long long)r->origin_run_id,
		    r->imported_from);
		return EXIT_USAGE;
	}
	/* Before connecting and building: an ok run has nothing missing. */
	if (strcmp(r->status, "ok") == 0) {
		struct strbuf sb = STRBUF_INIT;

		cmd_hint_opts(&sb, NULL, NULL, o->db);
		fprintf(stderr, "seqorch: run %lld is finished (ok): nothing to "
		    "resume\nnext: seqorch report --run %lld%s\n",
		    (long long)o->resume, (long long)o->resume, sb.buf);
		strbuf_release(&sb);
		return RESUME_DONE;
	}
	if (o->studies != NULL && strcmp(o->studies, r->study) != 0) {
		fprintf(stderr, "seqorch: cannot resume: run %lld measured "
		    "study \"%s\", not \"%s\"\n", (long long)o->resume,
		    r->study, o->studies);
		return EXIT_USAGE;
	}
	o->studies = r->study;
	o->steps = (int64_t)r->steps;
	o->samples = (int64_t)r->samples;
	o->msg_len = (int64_t)r->msg_len;
	o->warmup = (int64_t)r->warmup;
	o->seed = r->seed;
	o->variants = r->variants;
	o->sel.spec = r->hosts;
	o->explore = r->exploratory;
	o->openssl_cap = r->openssl_cap;
	o->openssl_cap_clear = r->openssl_cap_clear;
	/* Adaptive as it was: the extra rounds, on the whole run's spreads. */
	if (r->max_samples > r->samples) {
		o->max_cv = r->max_cv;
		o->max_samples = (int64_t)r->max_samples;
	}
	return EXIT_OK;
}

static int
run_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct run_opts o = { .db = "results.db", .samples = 3,
	    .sel = { "all", NULL, NULL, HOSTSEL_PARALLEL },
	    .max_cv = 0.01, .lease_expiry = LEASE_EXPIRY_DEFAULT };
	struct config *cfg = NULL;
	struct db *db = NULL;
	struct stored_run stored = { 0 };
	struct host **hosts = NULL;
	struct so_err err = { 0 };
	char *command = NULL, *studies = NULL, *expanded = NULL, *p, *study;
	size_t n = 0;
	int c, done, taken, rc = EXIT_OK;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		if ((taken = hostsel_opt(&o.sel, c, optarg)) != 0) {
			if (taken < 0)
				return EXIT_USAGE;
			if (c == HOSTSEL_OPT_HOSTS)
				o.fixed = "--hosts";
			continue;
		}
		if (fetch_choice_opt(&o.source, c, optarg))
			continue;
		switch (c) {
		case 's': o.studies = optarg; break;
		case 'v': o.variants = optarg; o.fixed = "--variants"; break;
		case 'd': o.db = optarg; break;
		case 'A': o.cache_opt = optarg; break;
		case 'S': o.seed = optarg; o.fixed = "--seed"; break;
		case 'x': o.explore = 1; o.fixed = "--explore"; break;
		case 'W': o.no_wait = 1; break;
		case 'O':
			if (!valid_openssl_cap(optarg)) {
				fprintf(stderr, "seqorch: invalid --openssl-cap "
				    "\"%s\": expected an OpenSSL capability "
				    "value such as :~0x120 or 0x7d (hex or "
				    "decimal words, \"~\" and \":\", at most %d "
				    "characters)\n", optarg, MAX_OPENSSL_CAP);
				return EXIT_USAGE;
			}
			o.openssl_cap = optarg;
			o.fixed = "--openssl-cap";
			break;
		case 'G':
			if (valid_cap_names(optarg) != 0)
				return EXIT_USAGE;
			o.openssl_cap_clear = optarg;
			o.fixed = "--openssl-cap-clear";
			break;
		case 'Q': o.require_quiet = 1; break;
		case 'R':
			if (cmd_run_id_arg("--resume", optarg,
			    &o.resume) != 0)
				return EXIT_USAGE;
			break;
		case 'T': o.take_over = 1; break;
		case 'C':
			if (cmd_cv_arg("--max-cv", optarg, &o.max_cv) != 0)
				return EXIT_USAGE;
			o.fixed = "--max-cv";
			break;
		case 'M':
			if (cmd_int_arg("--max-samples", optarg, MAX_SAMPLES,
			    &o.max_samples) != 0)
				return EXIT_USAGE;
			o.fixed = "--max-samples";
			break;
		case 'U':
			/* From 0, the default. */
			if (parse_int64(optarg, 0, MAX_SAMPLES, &o.warmup)
			    != 0) {
				fprintf(stderr, "seqorch: invalid --warmup "
				    "\"%s\": expected an integer from 0 to "
				    "%d\n", optarg, MAX_SAMPLES);
				return EXIT_USAGE;
			}
			o.fixed = "--warmup";
			break;
		case 'E':
			if (cmd_int_arg("--lease-expiry", optarg, 86400,
			    &o.lease_expiry) != 0)
				return EXIT_USAGE;
			break;
		case 'B':
			if (cmd_int_arg("--db-wait", optarg, 86400,
			    &o.db_wait) != 0)
				return EXIT_USAGE;
			break;
		case 'n':
			if (cmd_count_arg("--steps", optarg,
			    (int64_t)STUDY_MAX_STEPS, &o.steps) != 0)
				return EXIT_USAGE;
			o.fixed = "--steps";
			break;
		case 'k':
			if (cmd_int_arg("--samples", optarg, MAX_SAMPLES,
			    &o.samples) != 0)
				return EXIT_USAGE;
			o.fixed = "--samples";
			break;
		case 'm':
			if (cmd_int_arg("--msg-len", optarg, KERNEL_MAX_MSG,
			    &o.msg_len) != 0)
				return EXIT_USAGE;
			o.fixed = "--msg-len";
			break;
		}
	}
	if (done >= 0)
		return done;
	if (o.studies == NULL && o.resume == 0) {
		fprintf(stderr, "seqorch: run: --study is required (see "
		    "`seqorch studies`)\n");
		return EXIT_USAGE;
	}
	if (o.take_over && o.resume == 0) {
		fprintf(stderr, "seqorch: --take-over goes with --resume\n");
		return EXIT_USAGE;
	}
	/* A resumed run must stay the run it was: nothing silently changes. */
	if (o.resume > 0 && o.fixed != NULL) {
		fprintf(stderr, "seqorch: %s cannot be given with --resume: the "
		    "run keeps its own study, hosts, variants, steps, samples, "
		    "adaptive settings, seed, message length, OpenSSL "
		    "capabilities and kind\n",
		    o.fixed);
		return EXIT_USAGE;
	}
	if (o.resume > 0 && (rc = load_resume(&o, &stored)) != EXIT_OK) {
		if (rc == RESUME_DONE)
			rc = EXIT_OK;
		goto out;
	}
	/* Before anything is fetched: a version is never taken unhashed. */
	if (fetch_choice_check(&o.source, &err) != 0) {
		cmd_error(err.msg);
		return EXIT_USAGE;
	}
	if (o.openssl_cap != NULL && o.openssl_cap_clear != NULL) {
		fprintf(stderr, "seqorch: --openssl-cap replaces the whole mask, "
		    "--openssl-cap-clear clears bits of the detected one: give "
		    "one of them\n");
		return EXIT_USAGE;
	}
	if (o.max_samples == 0)
		o.max_samples = o.samples;
	if (o.max_samples < o.samples) {
		fprintf(stderr, "seqorch: --max-samples %lld is below "
		    "--samples %lld\n", (long long)o.max_samples,
		    (long long)o.samples);
		rc = EXIT_USAGE;
		goto out;
	}
	if (o.resume == 0) {
		char *twice;

		o.studies = expanded = study_expand(o.studies, &twice);
		if (twice != NULL)
			fprintf(stderr, "seqorch: warning: study \"%s\" is "
			    "named twice: it runs twice, each time as a run of "
			    "its own\n", twice);
		free(twice);
	}
	if (check_names(o.studies, o.variants, o.steps, o.msg_len) != 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (o.seed != NULL && strspn(o.seed, "0123456789abcdef") !=
	    strlen(o.seed)) {
		fprintf(stderr, "seqorch: invalid --seed \"%s\": expected "
		    "lowercase hex\n", o.seed);
		rc = EXIT_USAGE;
		goto out;
	}
	/* Checked per study before the database exists: a bad seed makes none. */
	if (o.seed != NULL) {
		char *copy = xstrdup(o.studies), *q = copy, *name;
		const struct study_entry *se;

		while (rc == EXIT_OK && (name = strsep(&q, ",")) != NULL) {
			se = study_find(name);
			if (se != NULL &&
			    strlen(o.seed) != 2 * se->study->state_len) {
				fprintf(stderr, "seqorch: invalid --seed \"%s\": "
				    "study \"%s\" needs %zu hex digits\n",
				    o.seed, name, 2 * se->study->state_len);
				rc = EXIT_USAGE;
			}
		}
		free(copy);
		if (rc != EXIT_OK)
			goto out;
	}
	if ((rc = cmd_run_open(&o, &cfg, &hosts, &n, &db)) != EXIT_OK)
		goto out;
	if (o.resume > 0 && (rc = runner_resume_check(db, o.resume, hosts, n,
	    &err)) != 0) {
		char *msg = rc != SO_EINVAL ? NULL : xasprintf("%s: resume "
		    "with the run's settings, or start a new run", err.msg);

		cmd_error(msg != NULL ? msg : err.msg);
		free(msg);
		rc = cmd_exit_code(rc);
		goto out;
	}
	command = cmd_command_line(argc, argv);
	studies = xstrdup(o.studies);
	p = studies;
	while ((study = strsep(&p, ",")) != NULL && !stop_flag)
		if (cmd_run_outcome(&rc, cmd_run_study(db, study, hosts, n, &o,
		    command, NULL))) {
			study = p != NULL ? strsep(&p, ",") : NULL;
			break;
		}
	/* Studies a stop left out have no run to resume: named, not lost. */
	if (study != NULL) {
		char *left = xasprintf("%s%s%s", study, p ? "," : "",
		    p ? p : "");

		fprintf(stderr, "seqorch: not run: %s (a run of its own each: "
		    "seqorch run --study %s)\n", left, left);
		free(left);
	}
out:
	free(o.cache);
	free(expanded);
	free(studies);
	free(command);
	db_close(db);
	free(hosts);
	config_free(cfg);
	db_run_info_free(&stored);
	return rc;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.summary = "measure studies on hosts and store the samples",
	.usage =
	    "usage: seqorch run --study S[,S...] [--hosts all|NAME,...|@GROUP]\n"
	    "                   [--steps N] [--samples K] [--variants a,b]\n"
	    "                   [--db results.db] [--config hosts.toml]\n"
	    "                   [--ssh-config FILE]\n"
	    "                   [--parallel N] [--seed HEX] [--explore]\n"
	    "                   [--no-wait] [--lease-expiry S] [--require-quiet]\n"
	    "                   [--db-wait S]\n"
	    "                   [--max-cv PCT] [--max-samples M] [--warmup K]\n"
	    "                   [--openssl-cap VALUE]\n"
	    "                   [--openssl-cap-clear NAME[,NAME]] [--cache DIR]\n"
	    "                   [--msg-len L] [--openssl-version V [--sha256 HEX]]\n"
	    "       seqorch run --resume RUN_ID [--take-over] [--db results.db]\n"
	    "                   [--db-wait S]\n"
	    "\n"
	    "Builds the agent on every selected host, self-tests each variant,\n"
	    "then times K samples of N dependent steps per variant in alternating\n"
	    "order.  Every sample is committed to the database as it arrives and\n"
	    "its digest is checked against the coordinator's own reference.\n",
	.opts = (const struct cmd_opt[]){
		{ "study", 's', 0, "S",
		    "study, or a comma list run one after another;\n"
		    "a group (`seqorch studies`) is its studies",
		    CMD_VALUE_STUDY, NULL },
		HOSTSEL_ROW_HOSTS,
		{ "steps", 'n', 0, "N",
		    "dependent steps per sample: 1000000, 1e6, 1M\n"
		    "(default: the study's protocol, see `seqorch\n"
		    "studies`)",
		    CMD_VALUE_ANY, NULL },
		{ "samples", 'k', 0, "K",
		    "samples per variant (default 3, at most 1000)",
		    CMD_VALUE_ANY, NULL },
		{ "variants", 'v', 0, "L",
		    "only these variants (default: all)",
		    CMD_VALUE_VARIANT, NULL },
		CMD_OPT_DB("FILE"),
		HOSTSEL_ROW_CONFIG,
		{ "parallel", HOSTSEL_OPT_PARALLEL, 0, "N",
		    "hosts prepared at once (default 16)",
		    CMD_VALUE_ANY, NULL },
		HOSTSEL_ROW_SSH_CONFIG,
		{ "seed", 'S', 0, "HEX",
		    "start value (default: zeros of the state size)",
		    CMD_VALUE_ANY, NULL },
		{ "explore", 'x', 0, NULL,
		    "exploratory: no measurement window, left out of\n"
		    "report unless asked for",
		    CMD_VALUE_ANY, NULL },
		{ "no-wait", 'W', 0, NULL,
		    "fail if another run holds the window (at once,\n"
		    "but for a holder silent on another machine,\n"
		    "after looking twice: docs/windows.md)",
		    CMD_VALUE_ANY, NULL },
		{ "require-quiet", 'Q', 0, NULL,
		    "refuse to measure on a host whose noise\n"
		    "preflight is noisy (default: warn and measure)",
		    CMD_VALUE_ANY, NULL },
		{ "lease-expiry", 'E', 0, "S",
		    "take over a window whose holder has been\n"
		    "silent for S seconds (default 30), and S/3 more\n"
		    "with the database free if on another machine;\n"
		    "one on this machine only once its process is gone",
		    CMD_VALUE_ANY, NULL },
		{ "db-wait", 'B', 0, "S",
		    "wait up to S seconds for the database while\n"
		    "another writer holds it, warning after 10, before\n"
		    "failing a host (default 600); what the agents\n"
		    "finish meanwhile stays on their hosts",
		    CMD_VALUE_ANY, NULL },
		{ "max-cv", 'C', 0, "PCT",
		    "coefficient of variation that triggers extra\n"
		    "samples, in percent (default 1%; 0.5%, 2)",
		    CMD_VALUE_ANY, NULL },
		{ "max-samples", 'M', 0, "M",
		    "samples per variant at most (default K: no\n"
		    "extra samples)",
		    CMD_VALUE_ANY, NULL },
		{ "warmup", 'U', 0, "K",
		    "K warmup samples of each cell in the window\n"
		    "before its timed ones, stored marked warmup and\n"
		    "left out of every rate and statistic (default 0)",
		    CMD_VALUE_ANY, NULL },
		{ "openssl-cap", 'O', 0, "VALUE",
		    "run the agents with OPENSSL_ia32cap (x86-64)\n"
		    "or OPENSSL_armcap (aarch64) set to VALUE, as the\n"
		    "seeds' controls did (\":~0x120\" hides AVX2 and\n"
		    "BMI2 from libcrypto on x86-64); stored with the\n"
		    "run and every sample",
		    CMD_VALUE_ANY, NULL },
		{ "openssl-cap-clear", 'G', 0, "NAME[,NAME]",
		    "clear only these bits (OpenSSL's names:\n"
		    "ARMV8_SHA512; x86-64: AVX2, AVX512F...) from the\n"
		    "capability mask each agent's libcrypto detects,\n"
		    "keeping the others; a name the host's architecture\n"
		    "lacks fails it before building; the detected,\n"
		    "cleared and applied masks are stored per sample",
		    CMD_VALUE_ANY, NULL },
		{ "msg-len", 'm', 0, "L",
		    "sha3, sha512: each step hashes one L-byte message,\n"
		    "the previous digest then zeros up to L, all of it\n"
		    "absorbed (seed 003's message lengths; stored with\n"
		    "the run and every sample)",
		    CMD_VALUE_ANY, NULL },
		{ "cache", 'A', 0, "DIR",
		    "fetch cache of upstream sources (default: [defaults]\n"
		    "cache in hosts.toml, else seqorch-cache beside the\n"
		    "db); what a study declares is fetched into it\n"
		    "first (see `seqorch fetch`)",
		    CMD_VALUE_ANY, NULL },
		FETCH_ROW_OPENSSL_VERSION,
		FETCH_ROW_SHA256,
		{ "resume", 'R', 0, "ID",
		    "measure only the cells (host, variant, sample)\n"
		    "that run ID is missing, and of a --max-cv run the\n"
		    "extra rounds its variants still need (judged on\n"
		    "every sample stored), with its own settings\n"
		    "(--hosts, --variants, --steps, --samples, --max-cv,\n"
		    "--max-samples, --seed, --msg-len, --warmup,\n"
		    "--openssl-cap(-clear) and --explore are refused\n"
		    "with it);\n"
		    "never a run imported from a bundle; a run that\n"
		    "ended ok has nothing missing (said at once);\n"
		    "refused while the run's coordinator still runs,\n"
		    "or when hosts.toml changed a host's cc, cflags\n"
		    "or cpu, or the hosts selected, since the run",
		    CMD_VALUE_RUN, NULL },
		{ "take-over", 'T', 0, NULL,
		    "with --resume: resume a run marked running by a\n"
		    "coordinator on another machine (or under another\n"
		    "host name), which this one cannot see: when you\n"
		    "know it is gone",
		    CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 17,
	.notes =
	    "exit: 0 ok, 1 failed/partial/invalid samples, 2 usage or config,\n"
	    "      3 database, 130 interrupted (samples so far are kept)\n",
	.exec = run_exec,
};

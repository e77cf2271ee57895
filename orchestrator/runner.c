/* Per-host preparation and measurement, in the host pool (pool.h). */
#include "runner-int.h"

#include "fetch.h"
#include "openssl-caps.h"
#include "pool.h"
#include "progress.h"
#include "strbuf.h"
#include "study.h"
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
run_db_lost(struct hostrun *hr, const char *what, const char *why)
{
	progress_note("host \"%s\": %s not stored: %s", hr->host->name,
	    what, why);
	if (!hr->failed) {
		hr->failed = 1;
		snprintf(hr->error, sizeof hr->error, "%.200s not stored: "
		    "%.600s", what, why);
	}
}

/*
 * Store an event.  One the database refuses is not dropped: it goes to
 * stderr with the reason, and the host fails (its record is incomplete).
 */
void
run_note(struct hostrun *hr, const char *level, const char *msg)
{
	struct so_err e;
	char *what;

	if (strcmp(level, "warning") == 0)
		progress_warn(hr->index, "%s", msg);
	if (db_event(hr->db, hr->p->run_id, hr->host->name, level, msg,
	    &e) == 0)
		return;
	what = xasprintf("%s \"%s\"", level, msg);
	run_db_lost(hr, what, e.msg);
	free(what);
}

void
run_fail(struct hostrun *hr, const char *msg)
{
	if (!hr->failed) {
		hr->failed = 1;
		snprintf(hr->error, sizeof hr->error, "%.*s",
		    (int)sizeof hr->error - 1, msg);
	}
	run_note(hr, "error", msg);
	progress_set(hr->index, "failed: %s", msg);
}

/*
 * The variants this run measures: its --variants, or all of the study's;
 * with target (a build's -dumpmachine), only those built for its
 * architecture and from sources the run has (gen_skipped says why the
 * others are not).  A NULL-terminated list of new strings.
 */
const char **
run_variants(const struct run_params *p, const char *target)
{
	const struct variant_entry *ve;
	const char **list;
	char *copy = p->variants ? xstrdup(p->variants) : NULL, *q = copy, *v;
	char arch[64];
	size_t n = 0, i;

	for (i = 0; variant_table[i].study != NULL; i++)
		;
	list = xcalloc(i + (copy ? strlen(copy) : 0) + 2, sizeof *list);
	for (i = 0; ; i++) {
		if (copy != NULL && (v = strsep(&q, ",")) == NULL)
			break;
		if (copy == NULL) {
			if (variant_table[i].study == NULL)
				break;
			if (strcmp(variant_table[i].study, p->study) != 0)
				continue;
			v = (char *)variant_table[i].variant;
		}
		ve = study_variant(p->study, v);
		if (target != NULL && ve != NULL &&
		    strcmp(ve->arch, "any") != 0 &&
		    strcmp(ve->arch, study_arch(target, arch, sizeof arch)) != 0)
			continue;
		if (target != NULL && ve != NULL && ve->needs != NULL &&
		    !generated_has(p->gen, ve->needs))
			continue;
		list[n++] = xstrdup(v);
	}
	free(copy);
	return list;
}

/*
 * The cells of this build still missing in the run being resumed: the
 * variants with a gap as a comma list, and the span of sample indices.
 */
int
run_missing(struct hostrun *hr, struct build_result *b, char **variants,
    uint64_t *first, uint64_t *last, uint64_t *count)
{
	const struct run_params *p = hr->p;
	const char **want = run_variants(p, b->target);
	struct so_err err;
	size_t i;
	int rc;

	free(*variants);
	*variants = NULL;
	rc = db_missing_cells(hr->db, p->run_id, hr->host->name, b->build_id,
	    p->samples, want, variants, first, last, count, &err);
	if (rc != 0)
		run_fail(hr, err.msg);
	for (i = 0; want[i] != NULL; i++)
		free((char *)want[i]);
	free(want);
	return rc;
}

#define MAX_TARGETINGS 8

/*
 * The targetings a study's agent is built at (kernels/<study>/targetings,
 * e.g. default and native), as static words into tg; one NULL (as
 * configured) for a study that states none.
 */
static size_t
targetings(const struct study_entry *e, const char *tg[MAX_TARGETINGS])
{
	static const char *const known[] = { "default", "native" };
	size_t n = 0, i;

	tg[0] = NULL;
	if (e->targetings == NULL)
		return 1;
	for (i = 0; i < sizeof known / sizeof known[0]; i++) {
		const char *p = strstr(e->targetings, known[i]);
		size_t len = strlen(known[i]);

		if (p != NULL && (p == e->targetings || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\0'))
			tg[n++] = known[i];
	}
	return n > 0 ? n : 1;
}

/*
 * The variants of build b that the run asks for but cannot build without
 * the sources generated from an artifact it does not have: recorded as
 * skipped, with what to do.
 */
static void
gen_skipped(struct hostrun *hr, const struct build_result *b)
{
	const struct run_params *p = hr->p;
	const char **vs = run_variants(p, NULL);
	const struct variant_entry *ve;
	struct so_err err;
	char *why, *hint, arch[64];
	size_t j;

	study_arch(b->target, arch, sizeof arch);
	for (j = 0; vs[j] != NULL; j++) {
		ve = study_variant(p->study, vs[j]);
		if (ve != NULL && ve->needs != NULL &&
		    !generated_has(p->gen, ve->needs) &&
		    (strcmp(ve->arch, "any") == 0 ||
		    strcmp(ve->arch, arch) == 0)) {
			hint = fetch_hint(p->study, p->cache);
			why = xasprintf("source \"%s\" not fetched (%s)",
			    ve->needs, hint);
			if (db_variant_status(hr->db, p->run_id,
			    hr->host->name, b->build_id, p->study, vs[j],
			    "skipped", why, &err) != 0)
				run_db_lost(hr, "a variant's status", err.msg);
			free(why);
			free(hint);
		}
		free((char *)vs[j]);
	}
	free(vs);
}

/*
 * --openssl-cap-clear names bits of one architecture: a host of another
 * (arch, named as the kernels/ folders name architectures) is refused.
 */
static int
check_cap_names(struct hostrun *hr, const char *arch, struct so_err *err)
{
	const char *p = hr->p->openssl_cap_clear;
	size_t n;
	int rc = 0;

	if (p == NULL)
		return 0;
	for (;; p += n + 1) {
		n = strcspn(p, ",");
		if (openssl_cap_find(arch, p, n) == NULL) {
			rc = so_error(err, SO_EINVAL, "--openssl-cap-clear: "
			    "\"%.*s\" is not an OpenSSL capability of %s, host "
			    "\"%s\"'s architecture (kernels/openssl-caps.h)",
			    (int)n, p, arch, hr->host->name);
			break;
		}
		if (p[n] == '\0')
			break;
	}
	return rc;
}

/* Connect, upload and build: everything that happens outside timing. */
/* A cold build's step on the host's line, after what it builds. */
static void
build_step(void *arg, const char *step)
{
	struct hostrun *hr = arg;

	progress_step(hr->index, "building with %s: %s",
	    hr->labels[hr->nlabels - 1], step);
}

/*
 * Each variant --variants names is built for the host's architecture
 * arch, or for any: else SO_EINVAL naming both.
 */
static int
check_arch(struct hostrun *hr, const char *arch, struct so_err *err)
{
	const struct variant_entry *ve;
	char *copy, *q, *v;
	int rc = 0;

	if (hr->p->variants == NULL)
		return 0;
	copy = q = xstrdup(hr->p->variants);
	while (rc == 0 && (v = strsep(&q, ",")) != NULL) {
		ve = study_variant(hr->p->study, v);
		if (ve != NULL && strcmp(ve->arch, "any") != 0 &&
		    strcmp(ve->arch, arch) != 0)
			rc = so_error(err, SO_EINVAL, "variant \"%s\" runs on "
			    "%s only and host \"%s\" is %s: nothing uploaded "
			    "or built", v, ve->arch, hr->host->name, arch);
	}
	free(copy);
	return rc;
}

/*
 * The variants and OpenSSL capabilities the run names against the
 * host's architecture (`uname -m`, asked once for both), before anything
 * is uploaded or built there.
 */
static int
check_names(struct hostrun *hr, struct so_err *err)
{
	char *machine = NULL, arch[64];
	int status, rc;

	if (hr->p->variants == NULL && hr->p->openssl_cap_clear == NULL)
		return 0;
	if ((rc = conn_capture(hr->conn, "uname -m", 256, &machine, &status,
	    err)) != 0)
		return rc;
	machine[strcspn(machine, "\r\n")] = '\0';
	study_arch(machine, arch, sizeof arch);
	free(machine);
	/* An unknown machine leaves the variants to the build to refuse. */
	if (status == 0)
		rc = check_arch(hr, arch, err);
	if (rc == 0)
		rc = check_cap_names(hr, arch, err);
	return rc;
}

static void
prepare(struct hostrun *hr)
{
	const struct host *h = hr->host;
	const struct study_entry *e = study_find(hr->p->study);
	const char *tg[MAX_TARGETINGS];
	struct so_err err = { 0 };
	char msg[SO_ERR_MAX + 64];
	size_t i, ntg;

	progress_set(hr->index, "connecting");
	if (conn_open(h, 0, &hr->conn, &err) != 0) {
		run_fail(hr, err.msg);
		return;
	}
	hr->conn->stop = hr->p->stop;
	if (check_names(hr, &err) != 0) {
		run_fail(hr, err.msg);
		return;
	}
	progress_set(hr->index, "uploading");
	if (deploy_sources(hr->conn, NULL, &err) != 0 ||
	    deploy_artifacts(hr->conn, hr->p->study, hr->p->cache, NULL,
	    &err) != 0 ||
	    deploy_generated(hr->conn, hr->p->gen, NULL, &err) != 0) {
		run_fail(hr, err.msg);
		return;
	}
	ntg = targetings(e, tg);
	hr->builds = xcalloc(h->ncc * ntg, sizeof *hr->builds);
	hr->labels = xcalloc(h->ncc * ntg, sizeof *hr->labels);
	for (i = 0; i < h->ncc * ntg && !*hr->p->stop; i++) {
		struct build_result *b = &hr->builds[i];
		const char *cc = h->cc[i / ntg], *t = tg[i % ntg];

		hr->labels[hr->nlabels++] = t ? xasprintf("%s, %s", cc, t) :
		    xstrdup(cc);
		progress_set(hr->index, "building with %s", hr->labels[i]);
		if (deploy_build_for(hr->conn, cc, e->prebuild ||
		    hr->p->gen != NULL ? e->name : NULL, t, hr->p->gen,
		    hr->db, hr->p->run_id, hr->p->resume, build_step, hr, b,
		    NULL, &err) != 0) {
			run_fail(hr, err.msg);
			return;
		}
		hr->nbuilds++;
		if (b->ok)
			gen_skipped(hr, b);
		if (!b->ok) {
			const char **vs = run_variants(hr->p, NULL);
			size_t j;

			snprintf(msg, sizeof msg, "build with \"%s\" failed: "
			    "%.900s", hr->labels[i], b->log_tail ?
			    b->log_tail : "");
			run_note(hr, "error", msg);
			for (j = 0; vs[j] != NULL; j++) {
				if (db_variant_status(hr->db, hr->p->run_id,
				    h->name, b->build_id, hr->p->study, vs[j],
				    "unavailable", "build failed", &err) != 0)
					run_db_lost(hr, "a variant's status",
					    err.msg);
				free((char *)vs[j]);
			}
			free(vs);
		}
	}
}

void
run_expect(struct hostrun *hr, uint64_t n)
{
	uint64_t own = n < hr->planned ? n : hr->planned;

	hr->planned -= own;
	if (n > own)
		progress_expect(n - own);
}

/*
 * Before measuring, every host's samples in the whole run's count, so
 * that it does not grow as hosts start: per working build, the variants
 * built for its architecture times the samples.  A resume asks for gaps
 * only, and counts as its agents announce them.
 */
static void
run_plan(struct hostrun *hr)
{
	const char **vs;
	size_t i, j;

	for (i = 0; i < hr->nbuilds && !hr->failed && !hr->p->resume; i++) {
		if (!hr->builds[i].ok)
			continue;
		vs = run_variants(hr->p, hr->builds[i].target);
		for (j = 0; vs[j] != NULL; j++)
			free((char *)vs[j]);
		free(vs);
		hr->planned += j * hr->p->samples;
	}
	if (hr->planned > 0)
		progress_expect(hr->planned);
}

/* Phase one, at most --parallel hosts at once: everything before timing. */
static void
prepare_one(void *arg, size_t i)
{
	struct hostrun *hr = (struct hostrun *)arg + i;

	prepare(hr);
	if (!hr->failed)
		progress_set(hr->index, "ready, waiting for the window");
}

/*
 * No build of the host works: say why in the failure's line (each
 * build's reason, one line of at most 200 bytes) and where its whole log
 * is.
 */
static void
fail_builds(struct hostrun *hr)
{
	struct strbuf msg = STRBUF_INIT;
	size_t i;

	strbuf_addstr(&msg, "no compiler produced a working agent");
	for (i = 0; i < hr->nbuilds; i++)
		strbuf_addf(&msg, "%s build with \"%s\": %s", i ? ";" : ":",
		    hr->labels[i], hr->builds[i].reason ?
		    hr->builds[i].reason : "no reason recorded");
	strbuf_addf(&msg, " (the build log%s: seqorch report --run %lld)",
	    hr->nbuilds > 1 ? "s" : "", (long long)hr->p->run_id);
	run_fail(hr, msg.buf);
	strbuf_release(&msg);
}

/*
 * Phase two, every host at once once the window is ours (or could not be
 * had: abort says why): measure each build, then record the outcome.
 */
static void
measure_one(void *arg, size_t k)
{
	struct hostrun *hr = (struct hostrun *)arg + k;
	const struct run_params *p = hr->p;
	struct so_err err;
	size_t i;
	int any = 0;

	if (hr->abort[0] != '\0' && !hr->failed)
		run_fail(hr, hr->abort);
	for (i = 0; i < hr->nbuilds; i++)
		any += hr->builds[i].ok;
	/*
	 * Two builds or more take their samples in one alternating order
	 * (a conductor), --max-cv's extra rounds too, not each in a stretch
	 * of time of its own: their samples pair.
	 */
	if (any > 1 && !hr->failed && !*p->stop)
		run_conduct(hr);
	for (i = 0; i < hr->nbuilds && any == 1 && !hr->failed && !*p->stop;
	    i++)
		if (hr->builds[i].ok)
			run_measure(hr, &hr->builds[i], hr->labels[i]);
	if (!hr->failed && !any && !*p->stop)
		fail_builds(hr);
	/* A compiler asked for and not measured leaves the run partial. */
	for (i = 0; i < hr->nbuilds && any && !hr->failed && !*p->stop; i++)
		if (!hr->builds[i].ok) {
			char *msg = xasprintf("build with \"%s\" failed: %s "
			    "(the other builds went on; the build log: "
			    "seqorch report --run %lld)", hr->labels[i],
			    hr->builds[i].reason ? hr->builds[i].reason :
			    "no reason recorded", (long long)p->run_id);

			run_fail(hr, msg);
			free(msg);
		}
	if (*p->stop && !hr->failed) {
		hr->failed = 1;
		snprintf(hr->error, sizeof hr->error, "interrupted");
	}
	if (db_run_host_finish(hr->db, p->run_id, hr->host->name,
	    !hr->failed ? "ok" : *p->stop ? "interrupted" : "failed",
	    hr->failed ? hr->error : NULL, &err) != 0)
		run_db_lost(hr, "the host's outcome", err.msg);
	/* What was counted and will not come (a variant or host failed). */
	progress_unexpect(hr->planned);
	hr->planned = 0;
	if (!hr->failed)
		progress_set(hr->index, "done: %llu samples%s",
		    (unsigned long long)hr->samples,
		    hr->invalid ? ", some INVALID" : "");
	conn_close(hr->conn);
	hr->conn = NULL;
}

int
runner_run(struct db *db, struct host *const *hosts, size_t n,
    const struct run_params *p, struct run_outcome *out, struct so_err *err)
{
	struct hostrun *hr = xcalloc(n, sizeof *hr);
	const char **names = xcalloc(n, sizeof *names);
	struct lease *lease = NULL;
	struct so_err lerr = { 0 };
	size_t i, j;
	int rc = 0, live;

	memset(out, 0, sizeof *out);
	for (i = 0; i < n; i++)
		names[i] = hosts[i]->name;
	progress_start(names, n);
	for (i = 0; i < n; i++) {
		hr[i].host = hosts[i];
		hr[i].index = i;
		hr[i].p = p;
		hr[i].db = db;
		hr[i].abort = lerr.msg;
		if ((rc = db_run_host_begin(db, p->run_id, hosts[i]->name,
		    err)) != 0)
			goto out;
	}
	pool_run(n, p->parallel, prepare_one, hr);
	/* Everything outside timing is done; now take the window. */
	if (!p->explore && !*p->stop &&
	    lease_acquire(db, p->run_id, p->study, !p->no_wait,
	    p->lease_expiry, p->stop, &lease, &lerr) != 0)
		out->no_window = 1;
	else
		lerr.msg[0] = '\0';
	for (i = 0; i < n; i++)
		run_plan(&hr[i]);
	pool_run(n, (int)n, measure_one, hr);
	lease_release(lease);
	for (i = 0; i < n; i++) {
		if (!hr[i].failed)
			out->hosts_ok++;
		else
			out->hosts_failed++;
		if (hr[i].failed && strcmp(hr[i].error, "interrupted") == 0)
			out->hosts_interrupted++;
		out->samples += hr[i].samples;
		out->invalid += hr[i].invalid;
		for (j = 0; j < hr[i].nbuilds; j++)
			deploy_result_free(&hr[i].builds[j]);
		for (j = 0; j < hr[i].nlabels; j++)
			free(hr[i].labels[j]);
		free(hr[i].labels);
		free(hr[i].builds);
	}
	out->interrupted = *p->stop != 0;
out:
	/* Live lines were cut to the terminal: say each failure whole. */
	live = progress_live();
	progress_end();
	for (i = 0; live && i < n; i++)
		if (hr[i].failed && strcmp(hr[i].error, "interrupted") != 0)
			progress_note("host \"%s\" failed: %s", hosts[i]->name,
			    hr[i].error);
	free(names);
	free(hr);
	return rc;
}

int
runner_begin(struct db *db, const struct run_info *ri, int64_t resume,
    int64_t *run_id, struct so_err *err)
{
	if (resume > 0) {
		*run_id = resume;
		return db_run_resume(db, resume, ri->take_over, err);
	}
	return db_run_begin(db, ri, run_id, err);
}

/* A list of words as TOML writes it: ["a", "b"], into sb. */
static void
toml_list(struct strbuf *sb, char *const *v, size_t n)
{
	size_t i;

	strbuf_addch(sb, '[');
	for (i = 0; i < n; i++)
		strbuf_addf(sb, "%s\"%s\"", i > 0 ? ", " : "", v[i]);
	strbuf_addch(sb, ']');
}

/* A cpu setting as hosts.toml writes it: 3, "none" or "auto". */
static void
toml_cpu(char *buf, size_t len, int cpu)
{
	if (cpu == HOST_CPU_AUTO)
		snprintf(buf, len, "\"auto\"");
	else if (cpu == HOST_CPU_NONE)
		snprintf(buf, len, "\"none\"");
	else
		snprintf(buf, len, "%d", cpu);
}

/*
 * Host h's settings that change what is measured (compilers, cflags,
 * cpu) against what the run recorded of them, r: SO_EINVAL naming the
 * first that differs.  A host whose builds were cut short (no agent
 * reported) may have recorded the first of its compilers only.
 */
static int
check_recorded(int64_t run_id, const struct host *h,
    const struct recorded_host *r, struct so_err *err)
{
	struct strbuf now = STRBUF_INIT, then = STRBUF_INIT;
	char **cc = xcalloc(r->nbuilds + 1, sizeof *cc);
	char was[32], is[32];
	size_t i, j, ncc = 0;
	int rc = 0, recorded;

	/* Each compiler once, in the order they were built. */
	for (i = 0; i < r->nbuilds; i++) {
		for (j = 0; j < ncc && strcmp(cc[j], r->compiler[i]) != 0; j++)
			;
		if (j == ncc)
			cc[ncc++] = r->compiler[i];
	}
	for (i = 0; i < ncc && i < h->ncc && strcmp(cc[i], h->cc[i]) == 0;
	    i++)
		;
	if (i < ncc || (r->facts && ncc > 0 && h->ncc != ncc)) {
		toml_list(&now, h->cc, h->ncc);
		toml_list(&then, cc, ncc);
		rc = so_error(err, SO_EINVAL, "run %lld: host \"%s\": cc is now "
		    "%s, the run was built with %s", (long long)run_id,
		    h->name, now.buf, then.buf);
		goto out;
	}
	for (i = 0; i < r->nbuilds; i++)
		if (strcmp(r->cflags[i], h->cflags) != 0) {
			rc = so_error(err, SO_EINVAL, "run %lld: host \"%s\": "
			    "cflags is now \"%s\", the run was built with "
			    "\"%s\"", (long long)run_id, h->name, h->cflags,
			    r->cflags[i]);
			goto out;
		}
	recorded = r->cpu_auto ? HOST_CPU_AUTO : r->pin_cpu >= 0 ?
	    (int)r->pin_cpu : HOST_CPU_NONE;
	if (r->facts && recorded != h->cpu) {
		toml_cpu(is, sizeof is, h->cpu);
		toml_cpu(was, sizeof was, recorded);
		rc = so_error(err, SO_EINVAL, "run %lld: host \"%s\": cpu is "
		    "now %s, the run's agents were asked for %s",
		    (long long)run_id, h->name, is, was);
	}
out:
	strbuf_release(&now);
	strbuf_release(&then);
	free(cc);
	return rc;
}

/* Is name one of the n in v? */
static int
listed(char *const *v, size_t n, const char *name)
{
	while (n > 0)
		if (strcmp(v[--n], name) == 0)
			return 1;
	return 0;
}

int
runner_resume_check(struct db *db, int64_t run_id, struct host *const *hosts,
    size_t n, struct so_err *err)
{
	struct recorded_host r;
	char **names = NULL;
	const char **sel = xcalloc(n + 1, sizeof *sel);
	size_t nnames = 0, i;
	int rc;

	if ((rc = db_run_host_names(db, run_id, &names, &nnames, err)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		sel[i] = hosts[i]->name;
	for (i = 0; i < nnames && rc == 0; i++)
		if (!listed((char *const *)sel, n, names[i]))
			rc = so_error(err, SO_EINVAL, "run %lld: host \"%s\" "
			    "of the run is not among the hosts hosts.toml "
			    "selects now", (long long)run_id, names[i]);
	for (i = 0; i < n && rc == 0; i++) {
		if (!listed(names, nnames, hosts[i]->name)) {
			rc = so_error(err, SO_EINVAL, "run %lld: host \"%s\" "
			    "was not in the run, and hosts.toml selects it "
			    "now", (long long)run_id, hosts[i]->name);
			break;
		}
		if ((rc = db_run_host_recorded(db, run_id, hosts[i]->name, &r,
		    err)) != 0)
			break;
		rc = check_recorded(run_id, hosts[i], &r, err);
		db_recorded_host_free(&r);
	}
out:
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(sel);
	return rc;
}

/*
 * The run's status policy (runner.h), over the whole run: a resume's
 * samples join those stored before it, and its hosts' outcomes are the
 * run's (it takes up every host of the run).
 */
static const char *
status_of(const struct run_outcome *out, const struct run_tally *t)
{
	if (out != NULL && out->interrupted)
		return "interrupted";
	if (out != NULL && out->hosts_failed == 0 && t->invalid == 0)
		return "ok";
	if (t->valid > 0)
		return "partial";
	return "failed";
}

int
runner_finish(struct db *db, int64_t run_id, const struct run_outcome *out,
    struct run_tally *t, const char **status, struct so_err *err)
{
	struct run_tally own;
	int rc;

	if (t == NULL)
		t = &own;
	*status = "failed";
	if ((rc = db_run_tally(db, run_id, t, err)) != 0)
		return rc;
	*status = status_of(out, t);
	return db_run_finish(db, run_id, *status, err);
}

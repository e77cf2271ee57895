/* Upload and build the agent on a host (local or ssh). */
#include "deploy.h"

#include "artifact.h"
#include "deploy-steps.h"
#include "disasm.h"
#include "fetch.h"
#include "remote-scripts.h"
#include "remote.h"
#include "study.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct shipped_file {
	const char *path;
	const unsigned char *data;
	size_t len;
};

#include "sources.h"

#define MAX_META 65536
#define MAX_LOG 65536

static pthread_once_t sha_once = PTHREAD_ONCE_INIT;
static char source_sha[65];

/* Hash of every (path, length, bytes) in order: renames count too. */
static void
compute_source_sha(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[32];
	unsigned int n;
	size_t i;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; shipped_files[i].path != NULL; i++) {
		char len[32];

		snprintf(len, sizeof len, "%zu", shipped_files[i].len);
		EVP_DigestUpdate(ctx, shipped_files[i].path,
		    strlen(shipped_files[i].path) + 1);
		EVP_DigestUpdate(ctx, len, strlen(len) + 1);
		EVP_DigestUpdate(ctx, shipped_files[i].data,
		    shipped_files[i].len);
	}
	EVP_DigestFinal_ex(ctx, md, &n);
	EVP_MD_CTX_free(ctx);
	hex_encode(md, 32, source_sha);
}

const char *
deploy_source_sha256(void)
{
	pthread_once(&sha_once, compute_source_sha);
	return source_sha;
}

int
deploy_sources(struct conn *c, struct deploy_stats *st, struct so_err *err)
{
	const char *sha = deploy_source_sha256();
	char *dir = xasprintf("%s/src/%s", c->workdir, sha);
	struct strbuf mk = STRBUF_INIT;
	char *path = NULL, *out = NULL;
	size_t i, n;
	int status, rc;

	/*
	 * A complete upload ends with the marker, so a cut one is redone.
	 * Read, not tested by a command: no login shell on the warm path.
	 */
	path = xasprintf("%s/.complete", dir);
	rc = conn_read(c, path, 64, &out, &n, err);
	if (rc == 0 && strcmp(out, sha) == 0)
		goto out;
	if (rc != 0 && rc != SO_ENOTFOUND)
		goto out;

	rcmd_raw(&mk, "mkdir -p --");
	for (i = 0; shipped_files[i].path != NULL; i++) {
		const char *slash = strrchr(shipped_files[i].path, '/');
		struct strbuf d = STRBUF_INIT;

		if (slash == NULL)
			continue;
		/* Each directory once: its quoted word is in mk already. */
		rcmd_argf(&d, "%s/%.*s", dir,
		    (int)(slash - shipped_files[i].path),
		    shipped_files[i].path);
		if (strstr(mk.buf, d.buf) == NULL)
			rcmd_raw(&mk, " %s", d.buf);
		strbuf_release(&d);
	}
	if ((rc = conn_exec(c, mk.buf, NULL, &status, err)) != 0)
		goto out;
	if (status != 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot create \"%s\"",
		    c->host->name, dir);
		goto out;
	}
	for (i = 0; shipped_files[i].path != NULL; i++) {
		const struct shipped_file *f = &shipped_files[i];

		free(path);
		path = xasprintf("%s/%s", dir, f->path);
		rc = conn_put(c, path, f->data, f->len,
		    strstr(f->path, ".sh") ? 0755 : 0644, err);
		if (rc != 0)
			goto out;
		if (st != NULL) {
			st->bytes_uploaded += f->len;
			st->files_uploaded++;
		}
	}
	free(path);
	path = xasprintf("%s/.complete", dir);
	rc = conn_put(c, path, sha, strlen(sha), 0644, err);
out:
	free(out);
	free(path);
	strbuf_release(&mk);
	free(dir);
	return rc;
}

const void *
deploy_shipped_file(const char *path, size_t *len)
{
	size_t i;

	for (i = 0; shipped_files[i].path != NULL; i++)
		if (strcmp(shipped_files[i].path, path) == 0) {
			*len = shipped_files[i].len;
			return shipped_files[i].data;
		}
	return NULL;
}

/* WORKDIR/generated/<key>: where g's files are on the host. */
static char *
generated_dir(struct conn *c, const struct generated *g)
{
	return xasprintf("%s/generated/%s", c->workdir, g->key);
}

int
deploy_generated(struct conn *c, const struct generated *g,
    struct deploy_stats *st, struct so_err *err)
{
	struct strbuf mk = STRBUF_INIT;
	char *dir, *path = NULL, *out = NULL;
	size_t i, n;
	int status, rc;

	if (g == NULL)
		return 0;
	dir = generated_dir(c, g);
	/* As deploy_sources: the marker, written last, says it is whole. */
	path = xasprintf("%s/.complete", dir);
	rc = conn_read(c, path, 64, &out, &n, err);
	if (rc == 0 && strcmp(out, g->key) == 0)
		goto out;
	if (rc != 0 && rc != SO_ENOTFOUND)
		goto out;
	rcmd_raw(&mk, "mkdir -p --");
	for (i = 0; i < g->nnames; i++)
		rcmd_argf(&mk, "%s/%s", dir, g->names[i]);
	if ((rc = conn_exec(c, mk.buf, NULL, &status, err)) != 0)
		goto out;
	if (status != 0) {
		rc = so_error(err, SO_EIO, "host \"%s\": cannot create \"%s\"",
		    c->host->name, dir);
		goto out;
	}
	for (i = 0; i < g->nfiles && rc == 0; i++) {
		free(path);
		path = xasprintf("%s/%s", dir, g->files[i].path);
		rc = conn_put(c, path, g->files[i].data, g->files[i].len,
		    0644, err);
		if (rc == 0 && st != NULL) {
			st->bytes_uploaded += g->files[i].len;
			st->files_uploaded++;
		}
	}
	if (rc == 0) {
		free(path);
		path = xasprintf("%s/.complete", dir);
		rc = conn_put(c, path, g->key, strlen(g->key), 0644, err);
	}
out:
	free(out);
	free(path);
	strbuf_release(&mk);
	free(dir);
	return rc;
}

int
deploy_artifacts(struct conn *c, const char *study, const char *cache,
    struct deploy_stats *st, struct so_err *err)
{
	const struct artifact_entry *a;
	char *dir = xasprintf("%s/artifacts", c->workdir), *remote = NULL;
	struct strbuf mk = STRBUF_INIT;
	char *local = NULL, *data = NULL;
	int made = 0, mode, status, rc = 0;
	size_t n;
	FILE *f;

	rcmd_raw(&mk, "mkdir -p --");
	rcmd_arg(&mk, dir);
	for (a = artifact_table; a->study != NULL && rc == 0; a++) {
		/* Sources are generated from it here; hosts never see it. */
		if (strcmp(a->study, study) != 0 || a->generate)
			continue;
		free(remote);
		remote = xasprintf("%s/%s", dir, a->sha256);
		rc = conn_stat(c, remote, &mode, err);
		if (rc != SO_ENOTFOUND)
			continue;
		free(local);
		local = xasprintf("%s/%s", cache, a->sha256);
		if ((f = fopen(local, "rb")) == NULL) {
			char *hint = fetch_hint(study, cache);

			rc = so_error(err, SO_ENOTFOUND, "artifact \"%s\" of "
			    "study \"%s\" is not in the cache \"%s\" (run "
			    "`%s`)", a->name, study, cache, hint);
			free(hint);
			break;
		}
		free(data);
		data = xmalloc(a->size + 1);
		n = fread(data, 1, a->size + 1, f);
		fclose(f);
		if (n != a->size) {
			rc = so_error(err, SO_EIO, "artifact \"%s\": \"%s\" "
			    "has %zu bytes, expected %llu", a->name, local, n,
			    a->size);
			break;
		}
		if (!made) {
			if ((rc = conn_exec(c, mk.buf, NULL, &status, err)) != 0)
				break;
			if (status != 0) {
				rc = so_error(err, SO_EIO, "host \"%s\": cannot "
				    "create \"%s\"", c->host->name, dir);
				break;
			}
			made = 1;
		}
		if ((rc = conn_put(c, remote, data, n, 0644, err)) != 0)
			break;
		if (st != NULL) {
			st->bytes_uploaded += n;
			st->files_uploaded++;
		}
	}
	free(data);
	free(local);
	free(remote);
	strbuf_release(&mk);
	free(dir);
	return rc;
}

/* Value of "key=" in a meta file's text, as a new string ("" if absent). */
static char *
meta_value(const char *meta, const char *key)
{
	char *v = line_value(meta, key);

	return v != NULL ? v : xstrdup("");
}

/* What a build directory holds, as new strings ("" when absent). */
struct build_files {
	char *meta, *commands, *log, *openssl, *extra;
};

/* Marks the sections of rscript_build's report. */
#define MARK "@@seqorch:"

/*
 * One section at *p: "MARK name LEN\n" and LEN bytes, as a new string in
 * *out; *p moves past it.  Positional: the bytes are the host's files (a
 * build log may hold anything, marks included) and are never searched.
 */
static int
section(const char **p, const char *end, const char *name, char **out)
{
	size_t mlen = strlen(MARK), nlen = strlen(name);
	unsigned long long len;
	const char *s = *p;
	char *num_end;

	if ((size_t)(end - s) < mlen + nlen + 2 || memcmp(s, MARK, mlen) != 0 ||
	    memcmp(s + mlen, name, nlen) != 0 || s[mlen + nlen] != ' ')
		return -1;
	s += mlen + nlen + 1;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	len = strtoull(s, &num_end, 10);
	if (errno != 0 || *num_end != '\n' ||
	    len > (unsigned long long)(end - num_end - 1))
		return -1;
	s = num_end + 1;
	*out = xasprintf("%.*s", (int)len, s);
	*p = s + len;
	return 0;
}

/*
 * rscript_build's report: "MARK built" when it built (the build's own
 * output goes to stderr, so nothing of it comes before the first section),
 * then the five files in order.
 */
static int
parse_report(struct conn *c, const char *report, struct build_files *bf,
    int *built, struct so_err *err)
{
	static const char *const names[] = { "meta", "commands", "log",
	    "openssl", "extra" };
	char **slot[] = { &bf->meta, &bf->commands, &bf->log, &bf->openssl,
	    &bf->extra };
	const char *end = report + strlen(report), *p;
	size_t i;

	p = strstr(report, MARK "meta ");
	if (p == NULL)
		return so_error(err, SO_EPROTO, "host \"%s\": the build's "
		    "report has no \"" MARK "meta\" section", c->host->name);
	*built = strstr(report, MARK "built\n") != NULL &&
	    strstr(report, MARK "built\n") < p;
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (section(&p, end, names[i], slot[i]) != 0)
			return so_error(err, SO_EPROTO, "host \"%s\": the "
			    "build's report: section \"%s\" is missing or "
			    "runs past the end (%zu bytes in all)",
			    c->host->name, names[i], (size_t)(end - report));
	return 0;
}

char *
deploy_wrapper(const char *wrapper, const char *workdir)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = wrapper, *hit;

	while ((hit = strstr(p, "{workdir}")) != NULL) {
		strbuf_add(&out, p, (size_t)(hit - p));
		strbuf_add_shquoted(&out, workdir);
		p = hit + strlen("{workdir}");
	}
	strbuf_addstr(&out, p);
	return strbuf_detach(&out);
}

/*
 * Record the build's disassembly check; a missing instruction warns, and
 * so does a forbidden one (the chain is not the one the study defines).  A
 * binary already checked on this host is not disassembled again: every
 * run records a build row, and the check is two commands on the host.
 */
static int
check_disassembly(struct conn *c, struct build_result *res,
    const char *binsum, struct db *db, int64_t run_id, struct so_err *err)
{
	unsigned bad = 0, nforb = 0;
	char *msg, *forb = NULL;
	int rc;

	rc = db_disasm_reuse(db, c->host->name, binsum, res->build_id, &bad,
	    err);
	if (rc == 0 && (rc = db_artifact_ref_copy(db, c->host->name, binsum,
	    res->build_id, "disasm", err)) == SO_ENOTFOUND)
		rc = 0;
	else if (rc == SO_ENOTFOUND)
		rc = disasm_check(c, res->agent, res->build_id, db, &bad,
		    err);
	/* The agent could not say what to check: measuring can still go on. */
	if (rc == SO_EAGENT) {
		msg = xasprintf("build %lld: disassembly check not done: %s",
		    (long long)res->build_id, err->msg);
		rc = db_event(db, run_id, c->host->name, "warning", msg, err);
		free(msg);
		return rc;
	}
	if (rc == 0)
		rc = db_disasm_forbidden(db, res->build_id, &forb, &nforb,
		    err);
	if (rc == 0 && nforb > 0) {
		msg = xasprintf("build %lld: forbidden instructions in %u "
		    "variant%s, a chain other than the study's: %s (table "
		    "disasm; their samples are stored invalid)",
		    (long long)res->build_id, nforb,
		    nforb == 1 ? "" : "s", forb);
		rc = db_event(db, run_id, c->host->name, "warning", msg, err);
		free(msg);
	}
	free(forb);
	if (rc != 0 || bad == 0)
		return rc;
	msg = xasprintf("build %lld: %u variant%s lack instructions they "
	    "declare (table disasm)", (long long)res->build_id, bad,
	    bad == 1 ? "" : "s");
	rc = db_event(db, run_id, c->host->name, "warning", msg, err);
	free(msg);
	return rc;
}

/*
 * Keep what a new build row stands for in the artifact store: its log and
 * commands, every uploaded source file (the generated ones under
 * "generated/"), and the binary, fetched back from
 * the host only when no build before had the same binary (one read per
 * new binary, never per run).  The fetched binary must hash to what the
 * build recorded.
 */
static int
keep_build(struct conn *c, struct build_result *res, const char *commands,
    const char *log, const char *binsum, const struct generated *gen,
    struct db *db, struct so_err *err)
{
	char *data = NULL, got[65], *name;
	size_t i, len;
	int rc;

	if ((rc = artifact_keep(db, res->build_id, "build-log", "build.log",
	    log, strlen(log), NULL, err)) != 0 ||
	    (rc = artifact_keep(db, res->build_id, "build-commands",
	    "commands", commands, strlen(commands), NULL, err)) != 0)
		return rc;
	for (i = 0; shipped_files[i].path != NULL; i++)
		if ((rc = artifact_keep(db, res->build_id, "source",
		    shipped_files[i].path, shipped_files[i].data,
		    shipped_files[i].len, NULL, err)) != 0)
			return rc;
	for (i = 0; gen != NULL && i < gen->nfiles; i++) {
		name = xasprintf("generated/%s", gen->files[i].path);
		rc = artifact_keep(db, res->build_id, "source", name,
		    gen->files[i].data, gen->files[i].len, NULL, err);
		free(name);
		if (rc != 0)
			return rc;
	}
	if (!res->ok)
		return 0;
	if ((rc = artifact_name(db, res->build_id, "binary", "seqorch-agent",
	    binsum, err)) != SO_ENOTFOUND)
		return rc;
	if ((rc = conn_read(c, res->agent, ARTIFACT_MAX + 1, &data, &len,
	    err)) != 0)
		return rc;
	rc = artifact_keep(db, res->build_id, "binary", "seqorch-agent", data,
	    len, got, err);
	if (rc == 0 && strcmp(got, binsum) != 0)
		rc = so_error(err, SO_EPROTO, "host \"%s\": agent \"%s\" hashes "
		    "to %s, but its build recorded %s", c->host->name,
		    res->agent, got, binsum);
	free(data);
	return rc;
}

/* Free and clear, so freeing again (every path of deploy_build) is safe. */
static void
build_files_free(struct build_files *bf)
{
	free(bf->extra);
	free(bf->openssl);
	free(bf->log);
	free(bf->commands);
	free(bf->meta);
	memset(bf, 0, sizeof *bf);
}

/* A file of the build directory, "" when it is missing. */
static int
read_part(struct conn *c, const char *dir, const char *name, size_t max,
    char **out, struct so_err *err)
{
	char *path = xasprintf("%s/%s", dir, name);
	size_t n;
	int rc;

	rc = conn_read(c, path, max, out, &n, err);
	if (rc == SO_ENOTFOUND) {
		*out = xstrdup("");
		rc = 0;
	}
	free(path);
	return rc;
}

/*
 * The warm path: read what an existing build left, without running a
 * command (no login shell starts on the host).  Returns 1 when there is
 * no complete build (meta is written last, after the binary).  The
 * commands and the log are read only when they will be recorded.
 */
static int
read_build(struct conn *c, const char *outdir, int full,
    struct build_files *bf, struct so_err *err)
{
	char *agent = xasprintf("%s/seqorch-agent", outdir), *sum = NULL;
	int mode, rc;

	memset(bf, 0, sizeof *bf);
	if ((rc = conn_stat(c, agent, &mode, err)) != 0 || !(mode & 0100)) {
		rc = rc == SO_ENOTFOUND || rc == 0 ? 1 : rc;
		goto out;
	}
	if ((rc = read_part(c, outdir, "meta", MAX_META, &bf->meta, err)) != 0)
		goto out;
	sum = meta_value(bf->meta, "binary_sha256");
	if (sum[0] == '\0') {
		rc = 1;
		goto out;
	}
	rc = read_part(c, outdir, "openssl", 4096, &bf->openssl, err);
	if (rc == 0)
		rc = read_part(c, outdir, "extra", MAX_META, &bf->extra, err);
	if (rc == 0 && full)
		rc = read_part(c, outdir, "commands", MAX_META, &bf->commands,
		    err);
	if (rc == 0 && full)
		rc = read_part(c, outdir, "build.log", MAX_LOG, &bf->log, err);
	if (rc == 0 && !full) {
		bf->commands = xstrdup("");
		bf->log = xstrdup("");
	}
out:
	if (rc != 0)
		build_files_free(bf);
	free(sum);
	free(agent);
	return rc;
}

/*
 * The cold path, one round trip (rscript_build): build unless the build
 * exists, then print what it left.
 */
static int
run_build(struct conn *c, const char *cc, const char *study,
    const char *targeting, const struct generated *gen,
    const char *outdir, deploy_step_fn on_step,
    void *arg, struct build_files *bf, int *built, char *errbuf,
    size_t errlen, struct so_err *err)
{
	const struct host *h = c->host;
	struct strbuf cmd = STRBUF_INIT, args = STRBUF_INIT;
	struct build_stream bs;
	struct exec_io io = { .on_stdout = build_stream_out, .arg = &bs,
	    .errbuf = errbuf, .errlen = errlen, .timeout_ms = 1800000 };
	char *srcdir = xasprintf("%s/src/%s", c->workdir,
	    deploy_source_sha256());
	char *wrapper = NULL, *report = NULL, logmax[16];
	int status, rc;

	/* build.sh's optional STUDY TARGETING ARTIFACTS GENERATED, quoted. */
	if (study != NULL || targeting != NULL || gen != NULL) {
		rcmd_raw(&args, " ");
		strbuf_add_shquoted(&args, study ? study : "");
		rcmd_arg(&args, targeting ? targeting : "default");
		rcmd_argf(&args, "%s/artifacts", c->workdir);
	}
	if (gen != NULL) {
		char *d = generated_dir(c, gen);

		rcmd_arg(&args, d);
		free(d);
	}
	if (h->build_wrapper != NULL) {
		char *w = deploy_wrapper(h->build_wrapper, c->workdir);

		wrapper = xasprintf("%s ", w);
		free(w);
	}
	snprintf(logmax, sizeof logmax, "%d", MAX_LOG);
	rcmd_script(&cmd, rscript_build, (const char *const[]){ "out", outdir,
	    "wrapper", wrapper ? wrapper : "", "src", srcdir, "cc", cc,
	    "cflags", h->cflags, "args", args.buf, "log_max", logmax, NULL });
	build_stream_init(&bs, 4 * MAX_META + MAX_LOG, on_step, arg);
	rc = conn_exec(c, cmd.buf, &io, &status, err);
	if (rc == SO_EPROTO)
		rc = so_error(err, SO_EPROTO, "host \"%s\": the build's report "
		    "is longer than %d bytes", h->name, 4 * MAX_META + MAX_LOG);
	report = build_stream_report(&bs);
	if (rc == 0)
		rc = parse_report(c, report, bf, built, err);
	free(report);
	free(wrapper);
	strbuf_release(&args);
	strbuf_release(&cmd);
	free(srcdir);
	return rc;
}

/*
 * A build_wrapper (a container) builds with its own libraries, yet the
 * agent runs on the host outside it: before anything is launched, run it
 * there once (--list), and when the loader refuses it say so, with the
 * loader's words, rather than failing later in the window.
 */
static int
check_runs_on_host(struct conn *c, const char *agent, struct so_err *err)
{
	struct strbuf cmd = STRBUF_INIT;
	char *out = NULL;
	int status, rc;

	rcmd_raw(&cmd, "e=$(");
	rcmd_arg(&cmd, agent);
	rcmd_raw(&cmd, " --list 2>&1 >/dev/null) && exit 0; "
	    "printf '%%s\n' \"$e\" | head -n 3; exit 1");
	rc = conn_capture(c, cmd.buf, 4096, &out, &status, err);
	if (rc == 0 && status != 0) {
		out[strcspn(out, "\n")] = '\0';
		strip_ctrl(out);
		rc = so_error(err, SO_EBUILD, "host \"%s\": the agent built "
		    "through build_wrapper does not run on the host, outside "
		    "the wrapper: %s (it links the wrapper's libraries: install "
		    "the same on the host, or use an image of the host's "
		    "release; docs/hosts.md)", c->host->name,
		    out[0] ? out : "no message");
	}
	free(out);
	strbuf_release(&cmd);
	return rc;
}

int
deploy_build(struct conn *c, const char *cc, struct db *db, int64_t run_id,
    int reuse, struct build_result *res, struct deploy_stats *st,
    struct so_err *err)
{
	return deploy_build_for(c, cc, NULL, NULL, NULL, db, run_id, reuse,
	    NULL, NULL, res, st, err);
}

/*
 * The build directory's key, 16 hex digits: a hash of everything that
 * changes the binary.
 */
static void
build_key(const struct host *h, const char *cc, const char *study,
    const char *targeting, const struct generated *gen, char key[17])
{
	struct strbuf src = STRBUF_INIT;
	unsigned char md[32];
	unsigned int n;

	strbuf_addf(&src, "%s\n%s\n%s\n%s", deploy_source_sha256(), cc,
	    h->cflags, h->build_wrapper ? h->build_wrapper : "");
	/* A study's own build and targeting make another binary. */
	if (study != NULL || targeting != NULL)
		strbuf_addf(&src, "\n%s\n%s", study ? study : "",
		    targeting ? targeting : "default");
	/* So do other generated sources. */
	if (gen != NULL)
		strbuf_addf(&src, "\ngenerated %s", gen->key);
	EVP_Digest(src.buf, src.len, md, &n, EVP_sha256(), NULL);
	hex_encode(md, 8, key);
	strbuf_release(&src);
}

/*
 * A native the compiler resolved to its generic target (agent/build.sh's
 * native_generic: gcc 12 does not know a Neoverse V2 and builds generic
 * armv8-a): the build is not tuned for the host, which the run says once
 * per build, on stderr and as a warning event.
 */
static int
warn_native_generic(struct conn *c, const char *cc, const char *meta,
    const char *native, struct db *db, int64_t run_id, int64_t build_id,
    struct so_err *err)
{
	char *generic = meta_value(meta, "native_generic"), *msg;
	int rc = 0;

	if (strcmp(generic, "1") == 0) {
		msg = xasprintf("build %lld: native resolved to generic (%s): "
		    "compiler \"%s\" does not know this cpu, so the build is "
		    "not tuned for it", (long long)build_id,
		    native[0] ? native : "unknown", cc);
		fprintf(stderr, "seqorch: host \"%s\": %s\n", c->host->name,
		    msg);
		rc = db_event(db, run_id, c->host->name, "warning", msg, err);
		free(msg);
	}
	free(generic);
	return rc;
}

/* Does the log line at p (len bytes) hold needle? */
static int
line_has(const char *p, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (; len >= n; p++, len--)
		if (memcmp(p, needle, n) == 0)
			return 1;
	return 0;
}

/*
 * The line of a failed build's log that says why, for a message of one
 * line: the first that names an error, as gcc and clang write one
 * ("error:"), but for the linker's summary after it ("ld returned 1",
 * "linker command failed"), whose line before says what failed; else
 * the last line that is not empty (the build script's own words).  The
 * log comes from the host: control characters become '?', and the line
 * is cut to REASON_MAX bytes at a UTF-8 character's start.
 */
#define REASON_MAX 200
static char *
build_reason(const char *log)
{
	const char *p, *e, *line = NULL, *last = NULL;
	size_t len = 0, n;
	char *r;

	for (p = log; *p != '\0'; p = *e ? e + 1 : e) {
		e = p + strcspn(p, "\n");
		n = (size_t)(e - p);
		if (line_has(p, n, "error:")) {
			if ((line_has(p, n, "ld returned") ||
			    line_has(p, n, "linker command failed")) &&
			    last != NULL) {
				line = last;
				len = strcspn(last, "\n");
			} else {
				line = p;
				len = n;
			}
			break;
		}
		if (n > 0)
			last = p;
	}
	if (line == NULL && last != NULL) {
		line = last;
		len = strcspn(last, "\n");
	}
	if (line == NULL)
		return xstrdup("no build log");
	while (len > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (len > REASON_MAX) {
		for (len = REASON_MAX; len > 0 &&
		    ((unsigned char)line[len] & 0xc0) == 0x80; len--)
			;
		r = xasprintf("%.*s...", (int)len, line);
	} else {
		r = xasprintf("%.*s", (int)len, line);
	}
	strip_ctrl(r);
	return r;
}

int
deploy_build_for(struct conn *c, const char *cc, const char *study,
    const char *targeting, const struct generated *gen, struct db *db,
    int64_t run_id, int reuse, deploy_step_fn on_step, void *arg,
    struct build_result *res, struct deploy_stats *st, struct so_err *err)
{
	const struct host *h = c->host;
	const char *sha = deploy_source_sha256();
	struct build_files bf = { 0 };
	char key_hex[17], *outdir, *target = NULL, *version = NULL;
	char *native = NULL, *binsum = NULL, errbuf[4096] = "";
	int built = 0, rc;

	memset(res, 0, sizeof *res);
	build_key(h, cc, study, targeting, gen, key_hex);
	outdir = xasprintf("%s/build/%.16s-%s", c->workdir, sha, key_hex);

	rc = read_build(c, outdir, db != NULL, &bf, err);
	if (rc == 1)
		rc = run_build(c, cc, study, targeting, gen, outdir, on_step,
		    arg, &bf, &built, errbuf, sizeof errbuf, err);
	if (rc != 0)
		goto out;
	if (st != NULL && built)
		st->builds_run++;
	bf.openssl[strcspn(bf.openssl, "\n")] = '\0';
	target = meta_value(bf.meta, "target");
	version = meta_value(bf.meta, "version");
	native = meta_value(bf.meta, "native");
	binsum = meta_value(bf.meta, "binary_sha256");
	res->ok = binsum[0] != '\0';
	res->agent = xasprintf("%s/seqorch-agent", outdir);
	res->target = xstrdup(target);
	res->binary_sha256 = xstrdup(binsum);
	if (res->ok && h->build_wrapper != NULL &&
	    (rc = check_runs_on_host(c, res->agent, err)) != 0)
		goto out;
	if (!res->ok) {
		size_t n = strlen(bf.log);

		res->log_tail = xstrdup(n > 2000 ? bf.log + n - 2000 : bf.log);
		if (errbuf[0] != '\0' && bf.log[0] == '\0') {
			free(bf.log);
			bf.log = xstrdup(errbuf);
			free(res->log_tail);
			res->log_tail = xstrdup(errbuf);
		}
		res->reason = build_reason(bf.log);
	}
	if (db != NULL && reuse && res->ok && db_build_find(db, run_id, h->name,
	    cc, binsum, &res->build_id, err) == 0)
		goto out;
	if (db != NULL) {
		struct build_info b = {
			.host = h->name, .compiler = cc,
			.compiler_version = version[0] ? version : NULL,
			.target = target[0] ? target : NULL,
			.cflags = h->cflags,
			.native = native[0] ? native : NULL,
			.commands = bf.commands, .log = bf.log,
			.status = res->ok ? "ok" : "failed",
			.source_sha256 = sha,
			.binary_sha256 = binsum[0] ? binsum : NULL,
			.openssl = bf.openssl[0] ? bf.openssl : NULL,
			.targeting = targeting,
			.study = study,
			.extra = bf.extra[0] ? bf.extra : NULL,
		};

		rc = db_build_insert(db, run_id, &b, &res->build_id, err);
		if (rc == 0 && res->ok)
			rc = warn_native_generic(c, cc, bf.meta, native, db,
			    run_id, res->build_id, err);
		if (rc == 0 && (rc = keep_build(c, res, bf.commands, bf.log,
		    binsum, gen, db, err)) != 0 && rc != SO_EPROTO) {
			/*
			 * A full disk or a locked store loses artifacts, not the
			 * measurement: say so.  A binary that does not hash to
			 * its build (SO_EPROTO) stays an error.
			 */
			char *msg = xasprintf("build %lld: artifacts not kept: "
			    "%s", (long long)res->build_id, err->msg);

			fprintf(stderr, "seqorch: host \"%s\": %s\n",
			    c->host->name, msg);
			db_event(db, run_id, c->host->name, "warning", msg, err);
			free(msg);
			rc = 0;
		}
		if (rc == 0 && res->ok)
			rc = check_disassembly(c, res, binsum, db, run_id,
			    err);
	}
out:
	if (rc != 0)
		deploy_result_free(res);
	free(binsum);
	free(native);
	free(version);
	free(target);
	build_files_free(&bf);
	free(outdir);
	return rc;
}

void
deploy_result_free(struct build_result *res)
{
	free(res->binary_sha256);
	free(res->target);
	free(res->agent);
	free(res->log_tail);
	free(res->reason);
	memset(res, 0, sizeof *res);
}

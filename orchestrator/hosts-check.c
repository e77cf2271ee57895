/*
 * seqorch hosts check: connect to each host (strict host key) and report
 * the machine, its compilers, what a build would miss, and the agent's
 * noise preflight (docs/measurement.md).
 *
 * Nothing a host sends is trusted beyond display: probe output is bounded
 * and parsed as key=value lines, and every value we send is quoted
 * (remote.h).
 */
#include "hosts-check.h"

#include "conn.h"
#include "deploy.h"
#include "pool.h"
#include "proto.h"
#include "remote-scripts.h"
#include "remote.h"
#include "ssh.h"
#include "study.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBE	65536	/* bytes of probe output we accept */
#define MIN_FREE_MIB	100	/* less in workdir is reported as missing */
#define FACT_LEN	256	/* bytes of one fact we display */
#define PATH_LEN	8192	/* bytes of a path a host sends back */
#define MAX_STUDIES	64	/* studies whose probes one check runs */
#define MAX_LIBS	8	/* distinct libraries variants name */

struct cc_facts {
	char version[FACT_LEN], target[FACT_LEN];
	int ran, cflags_ok;
	/* By libs word (lib_words): "ok", or why the compiler cannot link
	 * it ("" when the probe said nothing: the sources did not run). */
	char lib[MAX_LIBS][FACT_LEN];
	/* By study_table index: "yes", "missing A;B" (what its probe
	 * printed) or "no" (the probe did not build). */
	char study[MAX_STUDIES][FACT_LEN];
};

/* What one host reported, or why it could not be checked. */
struct check {
	const struct host *host;
	int failed;
	char *report;		/* the text printed for this host */
};

/*
 * Copy the value of the first "key=value" line of probe output into val
 * (truncated to len - 1 bytes; "" when the key is missing), with control
 * characters shown as '?' so that a host cannot drive our terminal.
 * Returns 1 when the whole value fit, 0 otherwise.
 */
static int
lookup(const char *out, const char *key, char *val, size_t len)
{
	size_t n = strlen(key), vlen, i;
	const char *p, *end;

	val[0] = '\0';
	for (p = out; *p != '\0'; p = *end ? end + 1 : end) {
		end = p + strcspn(p, "\n");
		if (strncmp(p, key, n) != 0 || p[n] != '=')
			continue;
		vlen = (size_t)(end - p - n - 1);
		snprintf(val, len, "%.*s", (int)vlen, p + n + 1);
		for (i = 0; val[i] != '\0'; i++)
			if ((unsigned char)val[i] < 0x20 || val[i] == 0x7f)
				val[i] = '?';
		return vlen < len;
	}
	return 0;
}

/*
 * The distinct words of every variant's libs (variant_table), at most
 * MAX_LIBS, into words; returns how many.
 */
static size_t
lib_words(char words[MAX_LIBS][32])
{
	const char *p;
	size_t i, j, k, n = 0, len;

	for (i = 0; variant_table[i].study != NULL; i++)
		for (p = variant_table[i].libs; p != NULL && *p != '\0';
		    p += len) {
			p += strspn(p, " ");
			if ((len = strcspn(p, " ")) == 0 || len >= 32)
				continue;
			for (k = 0; k < n; k++)
				if (strncmp(words[k], p, len) == 0 &&
				    words[k][len] == '\0')
					break;
			if (k == n && n < MAX_LIBS) {
				for (j = 0; j < len; j++)
					words[n][j] = p[j];
				words[n++][len] = '\0';
			}
		}
	return n;
}

/* Probe one compiler (rscript_cc_probe); the result is in *f. */
static int
probe_cc(struct conn *c, const char *cc, const char *scratch,
    struct cc_facts *f, struct so_err *err)
{
	const struct host *h = c->host;
	struct strbuf cmd = STRBUF_INIT;
	char *out = NULL, val[16], key[80], words[MAX_LIBS][32];
	char *srcdir = xasprintf("%s/src/%s", c->workdir,
	    deploy_source_sha256());
	int status, rc;
	size_t i, nw = lib_words(words);

	memset(f, 0, sizeof *f);
	if (h->build_wrapper != NULL) {
		char *wrapper = deploy_wrapper(h->build_wrapper, c->workdir);

		rcmd_raw(&cmd, "%s ", wrapper);
		free(wrapper);
	}
	rcmd_raw(&cmd, "sh -c");
	rcmd_arg(&cmd, rscript_cc_probe);
	rcmd_raw(&cmd, " sh");
	rcmd_arg(&cmd, cc);
	rcmd_arg(&cmd, h->cflags);
	rcmd_arg(&cmd, scratch);
	rcmd_arg(&cmd, srcdir);
	for (i = 0; study_table[i].name != NULL && i < MAX_STUDIES; i++) {
		const struct study *s = study_table[i].study;

		if (s->probe_src == NULL)
			continue;
		rcmd_raw(&cmd, " %s", study_table[i].name);
		rcmd_arg(&cmd, s->probe_src);
		rcmd_arg(&cmd, s->probe_libs ? s->probe_libs : "");
	}
	if ((rc = conn_capture(c, cmd.buf, MAX_PROBE, &out, &status,
	    err)) != 0)
		goto out;
	lookup(out, "version", f->version, sizeof f->version);
	lookup(out, "target", f->target, sizeof f->target);
	f->ran = f->target[0] != '\0';
	lookup(out, "cflags", val, sizeof val);
	f->cflags_ok = strcmp(val, "yes") == 0;
	for (i = 0; i < nw; i++) {
		snprintf(key, sizeof key, "lib%s", words[i]);
		lookup(out, key, f->lib[i], sizeof f->lib[i]);
	}
	for (i = 0; study_table[i].name != NULL && i < MAX_STUDIES; i++) {
		snprintf(key, sizeof key, "study_%s", study_table[i].name);
		if (study_table[i].study->probe_src == NULL)
			snprintf(f->study[i], sizeof f->study[i], "yes");
		else if (!lookup(out, key, f->study[i], sizeof f->study[i]) ||
		    f->study[i][0] == '\0')
			snprintf(f->study[i], sizeof f->study[i], "no");
	}
out:
	free(srcdir);
	free(out);
	strbuf_release(&cmd);
	return rc;
}

/*
 * The variants of the compiler's architecture that need library word,
 * which the build leaves out when it cannot link it (agent/build.sh):
 * "sha3/openssl-evp, ..." into sb.
 */
static void
variants_needing(struct strbuf *sb, const char *word, const char *target)
{
	char arch[64];
	size_t i;

	study_arch(target, arch, sizeof arch);
	for (i = 0; variant_table[i].study != NULL; i++) {
		const struct variant_entry *v = &variant_table[i];

		if (v->libs == NULL || (strcmp(v->arch, "any") != 0 &&
		    strcmp(v->arch, arch) != 0) || !list_has(v->libs, ' ', word))
			continue;
		if (sb->len > 0)
			strbuf_addstr(sb, ", ");
		strbuf_addf(sb, "%s/%s", v->study, v->variant);
	}
}

/*
 * The items of a preflight's list (reasons, notes) joined by "; " into a
 * new string, with control characters shown as '?': they come from the
 * host.  "-" when there are none.
 */
static char *
join_items(const cJSON *list)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *item;

	cJSON_ArrayForEach(item, list) {
		if (sb.len > 0)
			strbuf_addstr(&sb, "; ");
		strbuf_addstr(&sb, item->valuestring);
	}
	strip_ctrl(sb.buf);
	if (sb.len == 0)
		strbuf_addstr(&sb, "-");
	return strbuf_detach(&sb);
}

/*
 * Build the agent with the host's first compiler (or reuse its build) and
 * run its noise preflight for the host's cpu setting; print the verdict,
 * its reasons, the notes and, for cpu = "auto", the CPU it would pick.
 * Returns 0, or -1 when the agent could not be built or run (the reason
 * is printed).
 */
static int
check_noise(struct conn *c, FILE *f)
{
	const struct host *h = c->host;
	struct build_result b = { 0 };
	struct so_err err = { 0 };
	struct record r;
	struct strbuf cmd = STRBUF_INIT;
	char cpu[16], *out = NULL, *reasons, *notes;
	const cJSON *choice;
	int status, prc, rc = -1;

	if (deploy_sources(c, NULL, &err) != 0 ||
	    deploy_build(c, h->cc[0], NULL, 0, 0, &b, NULL, &err) != 0) {
		fprintf(f, "  noise     unknown: %s\n", err.msg);
		goto out;
	}
	if (!b.ok) {
		fprintf(f, "  noise     unknown: the agent does not build with "
		    "\"%s\"\n", h->cc[0]);
		goto out;
	}
	rcmd_arg(&cmd, b.agent);
	rcmd_raw(&cmd, " --preflight --cpu %s", rcmd_cpu(h, cpu, sizeof cpu));
	if (conn_capture(c, cmd.buf, MAX_PROBE, &out, &status, &err) != 0) {
		fprintf(f, "  noise     unknown: %s\n", err.msg);
		goto out;
	}
	if (status != 0) {
		fprintf(f, "  noise     unknown: the agent's preflight exited "
		    "with status %d\n", status);
		goto out;
	}
	out[strcspn(out, "\n")] = '\0';
	if ((prc = proto_parse(out, strlen(out), &r, &err)) != 0 ||
	    r.type != REC_PREFLIGHT) {
		fprintf(f, "  noise     unknown: %s\n", prc != 0 ? err.msg :
		    "the agent sent no preflight record");
		if (prc == 0)
			proto_record_free(&r);
		goto out;
	}
	reasons = join_items(cJSON_GetObjectItem(r.json, "reasons"));
	notes = join_items(cJSON_GetObjectItem(r.json, "notes"));
	fprintf(f, "  noise     %s%s%s\n", r.verdict,
	    strcmp(r.verdict, "noisy") == 0 ? ": " : "",
	    strcmp(r.verdict, "noisy") == 0 ? reasons : "");
	fprintf(f, "  seen      %s\n", notes);
	choice = cJSON_GetObjectItem(r.json, "cpu_choice");
	if (cJSON_IsString(choice))
		fprintf(f, "  cpu auto  %s\n", choice->valuestring);
	free(notes);
	free(reasons);
	proto_record_free(&r);
	rc = 0;
out:
	free(out);
	strbuf_release(&cmd);
	deploy_result_free(&b);
	return rc;
}

/* Append one formatted item to the "; "-separated list of missing things. */
static void __attribute__((format(printf, 2, 3)))
add_missing(struct strbuf *list, const char *fmt, ...)
{
	va_list ap;

	if (list->len > 0)
		strbuf_addstr(list, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(list, fmt, ap);
	va_end(ap);
}

/*
 * One optional study's probe result (struct cc_facts): ok, or what its
 * probe found missing, or the study's whole requirement when the probe
 * itself did not build.  The host stays usable: the other studies run.
 */
static void
print_study(FILE *f, size_t j, const char *cc, const char *res)
{
	const char *p;

	fprintf(f, "  study     %s with %s: ", study_table[j].name, cc);
	if (strcmp(res, "yes") == 0)
		fprintf(f, "ok\n");
	else if (strncmp(res, "missing ", 8) == 0) {
		fprintf(f, "cannot build, missing ");
		for (p = res + 8; *p != '\0'; p++)
			if (*p == ';')
				fputs("; ", f);
			else
				fputc(*p, f);
		fputc('\n', f);
	} else
		fprintf(f, "cannot build (its probe does not build with "
		    "\"%s\"), needs %s\n", cc, study_table[j].study->requires);
}

/*
 * The instruction sets the variants are picked by, as the probe found
 * them ("isa=HAVE;LACK"): what this host lacks, its variants that need it
 * are skipped, which a comparison with another host must know.  No line
 * where the probe could not tell (qemu-user shows the machine's own
 * /proc/cpuinfo).
 */
static void
print_isa(FILE *f, const char *out)
{
	char v[FACT_LEN], *lack;

	if (!lookup(out, "isa", v, sizeof v) ||
	    (lack = strchr(v, ';')) == NULL)
		return;
	*lack++ = '\0';
	fprintf(f, "  isa       %s", *v ? v : "none of the variants' sets");
	if (*lack)
		fprintf(f, "; lacks %s: variants needing them are skipped",
		    lack);
	fputc('\n', f);
}

/*
 * Is cpu in list, a Linux cpu list ("0-3,8,10-11")?  1 or 0, with the
 * count of cpus it lists in *n; -1 when list is not one (an unknown list
 * says nothing).
 */
static int
cpu_listed(const char *list, int cpu, long *n)
{
	const char *p = list;
	char *end;
	long lo, hi;
	int in = 0;

	*n = 0;
	while (*p != '\0') {
		lo = hi = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(++p, &end, 10);
			if (end == p || hi < lo)
				return -1;
			p = end;
		}
		*n += hi - lo + 1;
		in |= cpu >= lo && cpu <= hi;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
	return *n > 0 ? in : -1;
}

/*
 * Connect and probe one host, writing its report into f.  Returns 0 when
 * the host is usable (an optional study it cannot build is reported, and
 * the others run), -1 when it failed or misses what every study needs.
 */
static int
check_host(const struct host *h, FILE *f)
{
	struct so_err err = { 0 };
	struct conn *c = NULL;
	struct cc_facts cf;
	struct strbuf cmd = STRBUF_INIT, missing = STRBUF_INIT;
	char *out = NULL, *path = NULL;
	char v[FACT_LEN], distro[FACT_LEN], cores[32], scratch[PATH_LEN] = "";
	char sig[64];
	char words[MAX_LIBS][32];
	const char *fp, *type;
	long long kib;
	long ncpus;
	size_t i, j, nw, ncc = 0;
	int status, uploads, rc = -1;

	if (conn_open(h, 0, &c, &err) != 0) {
		fprintf(f, "%s: FAILED\n  error     %s\n", h->name, err.msg);
		goto out;
	}
	fprintf(f, "%s: ", h->name);
	if (h->transport == TRANSPORT_LOCAL)
		fprintf(f, "this machine (transport local)\n");
	else {
		fp = ssh_host_fingerprint(c, &type, NULL);
		fprintf(f, "ssh %s@%s port %d, host key %s %s\n",
		    h->user ? h->user : "(local user)", h->address, h->port,
		    type, fp);
		for (i = 0; (fp = ssh_jump_fingerprint(c, i, &type, NULL)) !=
		    NULL; i++)
			fprintf(f, "  via       %s: %s@%s port %d, host key %s "
			    "%s\n", h->jumps[i].name, h->jumps[i].user ?
			    h->jumps[i].user : "(local user)",
			    h->jumps[i].address, h->jumps[i].port, type, fp);
	}
	rcmd_script(&cmd, rscript_host_probe, (const char *const[]){ "wd",
	    c->workdir, NULL });
	if (conn_capture(c, cmd.buf, MAX_PROBE, &out, &status, &err) != 0) {
		fprintf(f, "  error     %s\n", err.msg);
		goto out;
	}
	lookup(out, "arch", v, sizeof v);
	fprintf(f, "  arch      %s\n", *v ? v : "unknown");
	lookup(out, "os", v, sizeof v);
	lookup(out, "distro", distro, sizeof distro);
	fprintf(f, "  os        %s%s%s%s\n", *v ? v : "unknown",
	    *distro ? " (" : "", distro, *distro ? ")" : "");
	lookup(out, "cpu", v, sizeof v);
	lookup(out, "cores", cores, sizeof cores);
	lookup(out, "cpu_signature", sig, sizeof sig);
	fprintf(f, "  cpu       %s%s%s%s, %s cores\n", *v ? v : "unknown model",
	    *sig ? " (" : "", sig, *sig ? ")" : "", *cores ? cores : "?");
	/* The agent would run unpinned, as the run would then warn. */
	lookup(out, "cpus_online", v, sizeof v);
	if (h->cpu >= 0 && cpu_listed(v, h->cpu, &ncpus) == 0) {
		fprintf(f, "  pin       cpu %d is not one of its %ld cpus (%s): "
		    "the agent would run unpinned\n", h->cpu, ncpus, v);
		add_missing(&missing, "cpu %d to pin to (set cpu to one of "
		    "%s, or \"auto\")", h->cpu, v);
	}
	print_isa(f, out);
	lookup(out, "openssl", v, sizeof v);
	fprintf(f, "  openssl   %s\n", *v ? v : "no openssl command");
	lookup(out, "free_kib", v, sizeof v);
	kib = strspn(v, "0123456789") == strlen(v) && *v ? atoll(v) : -1;
	if (kib < 0) {
		fprintf(f, "  workdir   %s, free space unknown\n", c->workdir);
		add_missing(&missing, "free space in "
		    "workdir (df failed)");
	} else {
		fprintf(f, "  workdir   %s, %lld MiB free\n", c->workdir,
		    kib / 1024);
		if (kib / 1024 < MIN_FREE_MIB)
			add_missing(&missing, "free "
			    "space in workdir (under 100 MiB)");
	}
	/* The scratch path came from the host: it must be ours to remove. */
	if (!lookup(out, "scratch", scratch, sizeof scratch) ||
	    strncmp(scratch, c->workdir, strlen(c->workdir)) != 0 ||
	    strncmp(scratch + strlen(c->workdir), "/check.", 7) != 0 ||
	    strstr(scratch, "..") != NULL) {
		fprintf(f, "  error     cannot create a scratch directory in "
		    "workdir \"%s\"\n", c->workdir);
		scratch[0] = '\0';
		goto out;
	}
	/* Deploying uploads files (over SFTP for ssh hosts): try one. */
	path = xasprintf("%s/upload", scratch);
	if ((uploads = conn_put(c, path, "ok\n", 3, 0600, &err) == 0))
		fprintf(f, "  upload    ok\n");
	else {
		fprintf(f, "  upload    %s\n", err.msg);
		add_missing(&missing, "file upload");
	}
	/*
	 * The compilers' probes run the sources' own kernels/registry.sh.
	 * A host that takes no uploads has them only from an earlier deploy;
	 * without them, the missing upload is all there is to say.
	 */
	if (deploy_sources(c, NULL, &err) == 0)
		ncc = h->ncc;
	else if (uploads) {
		fprintf(f, "  error     %s\n", err.msg);
		goto out;
	}
	nw = lib_words(words);
	for (i = 0; i < ncc; i++) {
		if (probe_cc(c, h->cc[i], scratch, &cf, &err) != 0) {
			fprintf(f, "  error     %s\n", err.msg);
			goto out;
		}
		if (!cf.ran) {
			fprintf(f, "  cc        %s: not found or not working\n",
			    h->cc[i]);
			add_missing(&missing, "compiler \"%s\"",
			    h->cc[i]);
			continue;
		}
		fprintf(f, "  cc        %s: %s; target %s; cflags %s", h->cc[i],
		    cf.version, cf.target, cf.cflags_ok ? "ok" : "rejected");
		for (j = 0; j < nw; j++)
			fprintf(f, "; %s %s", words[j], strcmp(cf.lib[j],
			    "ok") == 0 ? "ok" : "no");
		fputc('\n', f);
		if (!cf.cflags_ok)
			add_missing(&missing, "cflags accepted "
			    "by \"%s\"", h->cc[i]);
		/* A library the build cannot link costs its variants only. */
		for (j = 0; j < nw; j++) {
			struct strbuf vs = STRBUF_INIT;

			if (strcmp(cf.lib[j], "ok") == 0)
				continue;
			variants_needing(&vs, words[j], cf.target);
			if (vs.len > 0)
				fprintf(f, "  variants  with %s: without %s, "
				    "skipped: %s (%s)\n", h->cc[i], words[j],
				    vs.buf, cf.lib[j][0] ? cf.lib[j] :
				    "its probe did not run");
			/* As the run does (runner-collect.c). */
			if (strcmp(words[j], "-lcrypto") == 0)
				fprintf(f, "  control   with %s: without "
				    "-lcrypto, --openssl-cap-clear (sha512's "
				    "capability control) skipped: the agent has "
				    "no OpenSSL capability bits to clear\n",
				    h->cc[i]);
			strbuf_release(&vs);
		}
		for (j = 0; study_table[j].name != NULL && j < MAX_STUDIES;
		    j++)
			if (study_table[j].study->probe_src != NULL)
				print_study(f, j, h->cc[i], cf.study[j]);
	}
	/* The preflight needs the agent, so only a host that can build it. */
	if (missing.len == 0 && check_noise(c, f) != 0)
		add_missing(&missing, "a working agent for "
		    "the noise preflight");
	fprintf(f, "  missing   %s\n", missing.len ? missing.buf : "nothing");
	rc = missing.len ? -1 : 0;
out:
	if (scratch[0] != '\0') {
		strbuf_reset(&cmd);
		rcmd_raw(&cmd, "rm -rf --");
		rcmd_arg(&cmd, scratch);
		conn_exec(c, cmd.buf, NULL, &status, &err);
	}
	free(path);
	free(out);
	strbuf_release(&missing);
	strbuf_release(&cmd);
	conn_close(c);
	return rc;
}

/* One host of check_all, into its own report. */
static void
check_one(void *arg, size_t i)
{
	struct check *ch = (struct check *)arg + i;
	size_t len;
	FILE *f;

	if ((f = open_memstream(&ch->report, &len)) == NULL) {
		ch->failed = 1;
		return;
	}
	ch->failed = check_host(ch->host, f) != 0;
	fclose(f);
}

int
hosts_check(struct host **hosts, size_t n, int parallel)
{
	struct check *checks = xcalloc(n, sizeof *checks);
	size_t i, failed = 0;

	for (i = 0; i < n; i++)
		checks[i].host = hosts[i];
	pool_run(n, parallel, check_one, checks);
	for (i = 0; i < n; i++) {
		if (checks[i].report != NULL)
			fputs(checks[i].report, stdout);
		failed += checks[i].failed;
	}
	fflush(stdout);
	if (failed > 0) {
		fprintf(stderr, "seqorch: %zu of %zu host%s failed the check:",
		    failed, n, n == 1 ? "" : "s");
		for (i = 0; i < n; i++)
			if (checks[i].failed)
				fprintf(stderr, " %s", hosts[i]->name);
		fputc('\n', stderr);
	}
	for (i = 0; i < n; i++)
		free(checks[i].report);
	free(checks);
	return failed > 0 ? SO_EBUILD : 0;
}


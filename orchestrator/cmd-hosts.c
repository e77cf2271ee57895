/*
 * seqorch hosts: the inventory in hosts.toml and what each host offers.
 *
 *   hosts [list]      the hosts as configured
 *   hosts check       connect to each (strict host key) and report the
 *                     machine, its compilers, what a build would miss,
 *                     and the agent's noise preflight (docs/measurement.md)
 *   hosts trust NAME  record an unknown host key in known_hosts
 *
 * Nothing a host sends is trusted beyond display: probe output is bounded
 * and parsed as key=value lines, and every value we send is sh_quote()d.
 */
#include "cmd.h"
#include "config.h"
#include "conn.h"
#include "deploy.h"
#include "pool.h"
#include "proto.h"
#include "study.h"
#include "ssh.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBE	65536	/* bytes of probe output we accept */
#define MIN_FREE_MIB	100	/* less in workdir is reported as missing */
#define FACT_LEN	256	/* bytes of one fact we display */
#define PATH_LEN	8192	/* bytes of a path a host sends back */
#define MAX_STUDIES	64	/* studies whose probes one check runs */

/*
 * Facts about the machine; run by /bin/sh with wd set to the quoted
 * workdir.  A scratch directory inside the workdir is made for the
 * compiler probes: nothing is written outside the workdir.
 */
static const char host_probe[] =
	"kv() { printf '%s=%s\\n' \"$1\" \"$2\"; }\n"
	"kv arch \"$(uname -m)\"\n"
	"kv os \"$(uname -sr)\"\n"
	"if [ -r /etc/os-release ]; then\n"
	"  kv distro \"$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release |"
	" tr -d '\\042' | head -n 1)\"\n"
	"elif command -v sw_vers >/dev/null 2>&1; then\n"
	"  kv distro \"macOS $(sw_vers -productVersion)\"\n"
	"fi\n"
	"m=$(sysctl -n machdep.cpu.brand_string 2>/dev/null)\n"
	"[ -n \"$m\" ] || m=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p'"
	" /proc/cpuinfo 2>/dev/null | head -n 1)\n"
	"[ -n \"$m\" ] || m=$(lscpu 2>/dev/null |"
	" sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)\n"
	"kv cpu \"$m\"\n"
	"kv cores \"$(getconf _NPROCESSORS_ONLN 2>/dev/null ||"
	" sysctl -n hw.ncpu 2>/dev/null)\"\n"
	"kv openssl \"$(openssl version 2>/dev/null | head -n 1)\"\n"
	"kv free_kib \"$(df -Pk \"$wd\" 2>/dev/null |"
	" awk 'NR == 2 { print $4 }')\"\n"
	"kv scratch \"$(mktemp -d \"$wd/check.XXXXXX\")\"\n";

/*
 * One compiler, run through the build wrapper when there is one:
 * sh -c PROBE sh CC CFLAGS SCRATCH [NAME SOURCE LIBS]...  As in
 * agent/build.sh, CC, CFLAGS and LIBS are split into words with globbing
 * off and never evaluated.  Each NAME SOURCE LIBS is a study's own probe
 * (struct study's probe_src), compiled, linked and run: it exits 0 when
 * the study can build here (randomx: cmake and c++ are there).
 */
static const char cc_probe[] =
	"set -f\n"
	"cc=$1 cflags=$2 t=$3\n"
	"kv() { printf '%s=%s\\n' \"$1\" \"$2\"; }\n"
	"kv version \"$($cc --version 2>/dev/null | head -n 1)\"\n"
	"kv target \"$($cc -dumpmachine 2>/dev/null)\"\n"
	"try() {\n"
	"  printf '%s\\n' \"$2\" > \"$t/$1.c\"\n"
	"  if $cc $3 -c -o \"$t/$1.o\" \"$t/$1.c\" 2>/dev/null;"
	" then kv \"$1\" yes; else kv \"$1\" no; fi\n"
	"}\n"
	"try cflags 'int main(void) { return 0; }' \"$cflags\"\n"
	"try openssl_h '#include <openssl/evp.h>\n"
	"int main(void) { return EVP_MD_CTX_new() == 0; }' ''\n"
	"try cjson_h '#include <cjson/cJSON.h>\n"
	"int main(void) { return cJSON_Parse(\"1\") == 0; }' ''\n"
	"shift 3\n"
	"while [ $# -ge 3 ]; do\n"
	"  printf '%s\\n' \"$2\" > \"$t/study.c\"\n"
	"  if $cc -o \"$t/study\" \"$t/study.c\" $3 2>/dev/null &&"
	" \"$t/study\" >/dev/null 2>&1;"
	" then kv \"study_$1\" yes; else kv \"study_$1\" no; fi\n"
	"  shift 3\n"
	"done\n";

struct cc_facts {
	char version[FACT_LEN], target[FACT_LEN];
	int ran, cflags_ok, openssl_h, cjson_h;
	unsigned char study_ok[MAX_STUDIES];	/* by study_table index */
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

/* Probe one compiler; the result is in *f (f->ran says it answered). */
static int
probe_cc(struct conn *c, const char *cc, const char *scratch,
    struct cc_facts *f, struct so_err *err)
{
	const struct host *h = c->host;
	char *qprobe = sh_quote(cc_probe), *qcc = sh_quote(cc);
	char *qflags = sh_quote(h->cflags), *qscratch = sh_quote(scratch);
	char *qwd = sh_quote(c->workdir), *wrapper = NULL, *cmd, *out = NULL;
	char *studies = xstrdup(""), *t, *qsrc, *qlibs, val[16], key[80];
	int status, rc;
	size_t i;

	memset(f, 0, sizeof *f);
	if (h->build_wrapper != NULL)
		wrapper = deploy_wrapper(h->build_wrapper, qwd);
	for (i = 0; study_table[i].name != NULL && i < MAX_STUDIES; i++) {
		const struct study *s = study_table[i].study;

		if (s->probe_src == NULL)
			continue;
		qsrc = sh_quote(s->probe_src);
		qlibs = sh_quote(s->probe_libs ? s->probe_libs : "");
		t = xasprintf("%s %s %s %s", studies, study_table[i].name, qsrc,
		    qlibs);
		free(studies);
		studies = t;
		free(qlibs);
		free(qsrc);
	}
	cmd = xasprintf("%s%ssh -c %s sh %s %s %s%s", wrapper ? wrapper : "",
	    wrapper ? " " : "", qprobe, qcc, qflags, qscratch, studies);
	if ((rc = conn_capture(c, cmd, MAX_PROBE, &out, &status, err)) != 0)
		goto out;
	lookup(out, "version", f->version, sizeof f->version);
	lookup(out, "target", f->target, sizeof f->target);
	f->ran = f->target[0] != '\0';
	lookup(out, "cflags", val, sizeof val);
	f->cflags_ok = strcmp(val, "yes") == 0;
	lookup(out, "openssl_h", val, sizeof val);
	f->openssl_h = strcmp(val, "yes") == 0;
	lookup(out, "cjson_h", val, sizeof val);
	f->cjson_h = strcmp(val, "yes") == 0;
	for (i = 0; study_table[i].name != NULL && i < MAX_STUDIES; i++) {
		snprintf(key, sizeof key, "study_%s", study_table[i].name);
		lookup(out, key, val, sizeof val);
		f->study_ok[i] = study_table[i].study->probe_src == NULL ||
		    strcmp(val, "yes") == 0;
	}
out:
	free(out);
	free(studies);
	free(cmd);
	free(wrapper);
	free(qwd);
	free(qscratch);
	free(qflags);
	free(qcc);
	free(qprobe);
	return rc;
}

/*
 * The items of a preflight's list (reasons, notes) joined by "; " into a
 * new string, with control characters shown as '?': they come from the
 * host.  "-" when there are none.
 */
static char *
join_items(const cJSON *list)
{
	const cJSON *item;
	char *s = xstrdup(""), *t, *p;

	cJSON_ArrayForEach(item, list) {
		t = xasprintf("%s%s%s", s, *s ? "; " : "", item->valuestring);
		free(s);
		s = t;
	}
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (*s == '\0') {
		free(s);
		s = xstrdup("-");
	}
	return s;
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
	char cpu[16], *qa = NULL, *cmd = NULL, *out = NULL, *reasons, *notes;
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
	if (h->cpu == HOST_CPU_AUTO)
		snprintf(cpu, sizeof cpu, "auto");
	else if (h->cpu < 0)
		snprintf(cpu, sizeof cpu, "none");
	else
		snprintf(cpu, sizeof cpu, "%d", h->cpu);
	qa = sh_quote(b.agent);
	cmd = xasprintf("%s --preflight --cpu %s", qa, cpu);
	if (conn_capture(c, cmd, MAX_PROBE, &out, &status, &err) != 0) {
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
	free(cmd);
	free(qa);
	deploy_result_free(&b);
	return rc;
}

/* Append one formatted item to the "; "-separated list of missing things. */
static void
add_missing(char *list, size_t len, const char *fmt, const char *arg)
{
	size_t n = strlen(list);

	if (n > 0)
		n += (size_t)snprintf(list + n, len - n, "; ");
	if (n < len)
		snprintf(list + n, len - n, fmt, arg);
}

/*
 * Connect and probe one host, writing its report into f.  Returns 0 when
 * the host is usable, -1 when it failed or misses something.
 */
static int
check_host(const struct host *h, FILE *f)
{
	struct so_err err = { 0 };
	struct conn *c = NULL;
	struct cc_facts cf;
	char *qwd = NULL, *cmd = NULL, *out = NULL, *qscratch = NULL;
	char *path = NULL;
	char v[FACT_LEN], distro[FACT_LEN], cores[32], scratch[PATH_LEN];
	char missing[2048] = "";
	const char *fp, *type;
	long long kib;
	size_t i, j;
	int status, rc = -1;

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
	qwd = sh_quote(c->workdir);
	cmd = xasprintf("wd=%s\n%s", qwd, host_probe);
	if (conn_capture(c, cmd, MAX_PROBE, &out, &status, &err) != 0) {
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
	fprintf(f, "  cpu       %s, %s cores\n", *v ? v : "unknown model",
	    *cores ? cores : "?");
	lookup(out, "openssl", v, sizeof v);
	fprintf(f, "  openssl   %s\n", *v ? v : "no openssl command");
	lookup(out, "free_kib", v, sizeof v);
	kib = strspn(v, "0123456789") == strlen(v) && *v ? atoll(v) : -1;
	if (kib < 0) {
		fprintf(f, "  workdir   %s, free space unknown\n", c->workdir);
		add_missing(missing, sizeof missing, "%s", "free space in "
		    "workdir (df failed)");
	} else {
		fprintf(f, "  workdir   %s, %lld MiB free\n", c->workdir,
		    kib / 1024);
		if (kib / 1024 < MIN_FREE_MIB)
			add_missing(missing, sizeof missing, "%s", "free "
			    "space in workdir (under 100 MiB)");
	}
	/* The scratch path came from the host: it must be ours to remove. */
	if (!lookup(out, "scratch", scratch, sizeof scratch) ||
	    strncmp(scratch, c->workdir, strlen(c->workdir)) != 0 ||
	    strncmp(scratch + strlen(c->workdir), "/check.", 7) != 0 ||
	    strstr(scratch, "..") != NULL) {
		fprintf(f, "  error     cannot create a scratch directory in "
		    "workdir \"%s\"\n", c->workdir);
		goto out;
	}
	qscratch = sh_quote(scratch);
	for (i = 0; i < h->ncc; i++) {
		if (probe_cc(c, h->cc[i], scratch, &cf, &err) != 0) {
			fprintf(f, "  error     %s\n", err.msg);
			goto out;
		}
		if (!cf.ran) {
			fprintf(f, "  cc        %s: not found or not working\n",
			    h->cc[i]);
			add_missing(missing, sizeof missing, "compiler \"%s\"",
			    h->cc[i]);
			continue;
		}
		fprintf(f, "  cc        %s: %s; target %s; cflags %s; "
		    "openssl headers %s; cjson headers %s\n", h->cc[i],
		    cf.version, cf.target, cf.cflags_ok ? "ok" : "rejected",
		    cf.openssl_h ? "yes" : "no", cf.cjson_h ? "yes" : "no");
		if (!cf.cflags_ok)
			add_missing(missing, sizeof missing, "cflags accepted "
			    "by \"%s\"", h->cc[i]);
		if (!cf.openssl_h)
			add_missing(missing, sizeof missing, "OpenSSL headers "
			    "for \"%s\" (libssl-dev)", h->cc[i]);
		if (!cf.cjson_h)
			add_missing(missing, sizeof missing, "cJSON headers "
			    "for \"%s\" (libcjson-dev)", h->cc[i]);
		for (j = 0; study_table[j].name != NULL && j < MAX_STUDIES;
		    j++) {
			const struct study *s = study_table[j].study;

			if (s->probe_src == NULL)
				continue;
			fprintf(f, "  study     %s with %s: %s\n",
			    study_table[j].name, h->cc[i], cf.study_ok[j] ?
			    "ok" : "cannot build");
			if (!cf.study_ok[j])
				add_missing(missing, sizeof missing, "%s",
				    s->requires);
		}
	}
	/* Deploying uploads files (over SFTP for ssh hosts): try one. */
	path = xasprintf("%s/upload", scratch);
	if (conn_put(c, path, "ok\n", 3, 0600, &err) == 0)
		fprintf(f, "  upload    ok\n");
	else {
		fprintf(f, "  upload    %s\n", err.msg);
		add_missing(missing, sizeof missing, "%s", "file upload");
	}
	/* The preflight needs the agent, so only a host that can build it. */
	if (*missing == '\0' && check_noise(c, f) != 0)
		add_missing(missing, sizeof missing, "%s", "a working agent for "
		    "the noise preflight");
	fprintf(f, "  missing   %s\n", *missing ? missing : "nothing");
	rc = *missing ? -1 : 0;
out:
	if (qscratch != NULL) {
		free(cmd);
		cmd = xasprintf("rm -rf -- %s", qscratch);
		conn_exec(c, cmd, NULL, &status, &err);
	}
	free(path);
	free(qscratch);
	free(out);
	free(cmd);
	free(qwd);
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

/* Check the hosts, parallel at most at once; prints in config order. */
static int
check_all(struct host **hosts, size_t n, int parallel)
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
	return failed > 0 ? EXIT_FAIL : EXIT_OK;
}

/* "a,b" of a list of strings, into a new string; "-" when empty. */
static char *
join(char **list, size_t n)
{
	char *s = xstrdup(n ? "" : "-"), *t;
	size_t i;

	for (i = 0; i < n; i++) {
		t = xasprintf("%s%s%s", s, i ? "," : "", list[i]);
		free(s);
		s = t;
	}
	return s;
}

static void
list_hosts(const struct config *cfg)
{
	const struct host *h;
	char *ccs, *groups, *addr, cpu[16];
	size_t i;

	printf("%-12s %-9s %-22s %-10s %-14s %-5s %-10s %s\n", "NAME",
	    "TRANSPORT", "ADDRESS", "USER", "CC", "CPU", "GROUPS", "CFLAGS");
	for (i = 0; i < cfg->nhosts; i++) {
		h = &cfg->hosts[i];
		ccs = join(h->cc, h->ncc);
		groups = join(h->groups, h->ngroups);
		addr = h->transport == TRANSPORT_LOCAL ? xstrdup("-") :
		    xasprintf(strchr(h->address, ':') ? "[%s]:%d" : "%s:%d",
		    h->address, h->port);
		if (h->cpu == HOST_CPU_AUTO)
			snprintf(cpu, sizeof cpu, "auto");
		else if (h->cpu < 0)
			snprintf(cpu, sizeof cpu, "none");
		else
			snprintf(cpu, sizeof cpu, "%d", h->cpu);
		printf("%-12s %-9s %-22s %-10s %-14s %-5s %-10s %s\n",
		    h->name, h->transport == TRANSPORT_LOCAL ? "local" : "ssh",
		    addr, h->user ? h->user : "-", ccs, cpu, groups,
		    h->cflags);
		free(addr);
		free(groups);
		free(ccs);
	}
}

static void
print_source(const char *indent, const char *key, const char *value,
    const char *origin)
{
	printf("%s%-16s %s   (from %s)\n", indent, key, value,
	    origin != NULL ? origin : "default");
}

/* The connection settings of h and where each came from. */
static void
print_sources(const struct host *h, const char *indent)
{
	char num[16];
	size_t i;

	print_source(indent, "address", h->address, h->origin[HOST_ADDRESS]);
	snprintf(num, sizeof num, "%d", h->port);
	print_source(indent, "port", num, h->origin[HOST_PORT]);
	print_source(indent, "user", h->user ? h->user : "(local user)",
	    h->origin[HOST_USER]);
	if (h->identity != NULL)
		print_source(indent, "identity", h->identity,
		    h->origin[HOST_IDENTITY]);
	for (i = 0; i < h->nssh_identities; i++)
		print_source(indent, "identity", h->ssh_identities[i],
		    h->origin[HOST_IDENTITY]);
	if (h->identity == NULL && h->nssh_identities == 0)
		print_source(indent, "identity", "(ssh-agent, ~/.ssh/id_*)",
		    "default");
	print_source(indent, "known_hosts", h->known_hosts,
	    h->origin[HOST_KNOWN_HOSTS]);
	snprintf(num, sizeof num, "%d", h->connect_timeout);
	print_source(indent, "connect_timeout", num,
	    h->origin[HOST_CONNECT_TIMEOUT]);
	if (h->identities_only)
		print_source(indent, "identities_only", "yes",
		    h->origin[HOST_IDENTITY]);
	if (h->proxy_jump != NULL)
		print_source(indent, "proxy_jump", h->proxy_jump,
		    h->origin[HOST_PROXY_JUMP]);
	for (i = 0; i < h->njumps; i++) {
		printf("%sjump %zu: \"%s\"\n", indent, i + 1, h->jumps[i].name);
		print_sources(&h->jumps[i], "    ");
	}
}

/* hosts list -v: for each ssh host, every connection setting's source. */
static void
list_sources(const struct config *cfg)
{
	const struct host *h;
	size_t i;

	for (i = 0; i < cfg->nhosts; i++) {
		h = &cfg->hosts[i];
		if (h->transport != TRANSPORT_SSH)
			continue;
		if (h->ssh_alias != NULL)
			printf("\n%s (ssh_config alias \"%s\"):\n", h->name,
			    h->ssh_alias);
		else
			printf("\n%s:\n", h->name);
		print_sources(h, "  ");
	}
}

/* One line of `hosts trust`: for the host, or a jump host on its way. */
static void
print_trusted(const char *name, const char *jump, const char *type,
    const char *fp, int recorded, const char *known_hosts)
{
	printf("host \"%s\": ", name);
	if (jump != NULL)
		printf("jump host \"%s\": ", jump);
	printf("%s %s %s in \"%s\"\n", recorded ? "recorded" :
	    "already trusted:", type, fp, known_hosts);
}

static int
trust_host(const struct config *cfg, const char *name)
{
	struct so_err err = { 0 };
	struct conn *c = NULL;
	const struct host *h = NULL;
	const char *fp, *type;
	size_t i;
	int recorded = 0;

	for (i = 0; i < cfg->nhosts; i++)
		if (strcmp(cfg->hosts[i].name, name) == 0)
			h = &cfg->hosts[i];
	if (h == NULL) {
		fprintf(stderr, "seqorch: no host \"%s\" in \"%s\" (see "
		    "`seqorch hosts list`)\n", name, cfg->path);
		return EXIT_USAGE;
	}
	if (h->transport != TRANSPORT_SSH) {
		fprintf(stderr, "seqorch: host \"%s\" is not reached over ssh: "
		    "it has no host key to trust\n", name);
		return EXIT_USAGE;
	}
	if (conn_open(h, CONN_TRUST_NEW, &c, &err) != 0) {
		fprintf(stderr, "seqorch: %s\n", err.msg);
		return EXIT_FAIL;
	}
	for (i = 0; (fp = ssh_jump_fingerprint(c, i, &type, &recorded)) !=
	    NULL; i++)
		print_trusted(name, h->jumps[i].name, type, fp, recorded,
		    h->jumps[i].known_hosts);
	fp = ssh_host_fingerprint(c, &type, &recorded);
	print_trusted(name, NULL, type, fp, recorded, h->known_hosts);
	conn_close(c);
	return EXIT_OK;
}

enum verb { VERB_LIST, VERB_CHECK, VERB_TRUST };

static const struct verb_entry {
	const char *name;
	enum verb verb;
	const char *usage;
} verbs[] = {
	{ "list", VERB_LIST,
	    "usage: seqorch hosts [list] [-v] [--config hosts.toml]\n"
	    "                   [--ssh-config FILE]\n"
	    "\n"
	    "Lists the hosts of hosts.toml: transport, address, user,\n"
	    "compilers, CPU to pin to, groups and compiler flags.  With -v,\n"
	    "also every connection setting of each ssh host and its jump\n"
	    "hosts, with where it came from: hosts.toml (and line), its\n"
	    "[defaults], ssh_config (file and line) or seqorch's default.\n" },
	{ "check", VERB_CHECK,
	    "usage: seqorch hosts check [--hosts all|NAME,...|@GROUP]\n"
	    "                           [--parallel N] [--config hosts.toml]\n"
	    "\n"
	    "Connects to each selected host (the host key must already be in\n"
	    "known_hosts) and reports its architecture, OS, CPU model and cores,\n"
	    "each compiler's version and target, whether cflags, OpenSSL and\n"
	    "cJSON headers work with it, the OpenSSL version, free space in the\n"
	    "workdir, and what a build would miss.  Then it builds the agent\n"
	    "with the first compiler and runs its noise preflight: quiet or\n"
	    "noisy with the reasons, what it saw, and with cpu = \"auto\" the\n"
	    "CPU it would pick (docs/measurement.md).  Scratch files stay\n"
	    "inside the workdir and are removed; the agent build stays in\n"
	    "the workdir's src/ and build/, where a run reuses it.\n"
	    "\n"
	    "  --hosts SPEC   all (default), host names, or @group\n"
	    "  --parallel N   hosts checked at once (default 16)\n"
	    "\n"
	    "exit: 0 every host usable, 1 a host failed or misses something,\n"
	    "      2 usage or config\n" },
	{ "trust", VERB_TRUST,
	    "usage: seqorch hosts trust NAME [--config hosts.toml]\n"
	    "\n"
	    "Connects to host NAME and, if its host key is not in the host's\n"
	    "known_hosts file yet, appends it there and prints its SHA256\n"
	    "fingerprint: compare it with the one the host shows\n"
	    "(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub).  A changed key,\n"
	    "or a key of another type than the one known_hosts has for the\n"
	    "host, is never added: remove the old line yourself if the change\n"
	    "is expected.  Behind jump hosts, each hop's key is checked the\n"
	    "same way, and each recorded or known key is printed.\n"
	    "\n"
	    "exit: 0 trusted, 1 connection or key refused, 2 usage or config\n" },
};

static int
hosts_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "ssh-config", required_argument, NULL, 'F' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "parallel", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct verb_entry *v = &verbs[0];
	const char *config = "hosts.toml", *spec = NULL, *ssh_config = NULL;
	struct config *cfg = NULL;
	struct host **hosts = NULL;
	struct so_err err = { 0 };
	int64_t parallel = 16;
	size_t i, n = 0;
	int c, rc = EXIT_OK, named = 0, verbose = 0;

	/* The verb comes first: seqorch hosts [VERB] [OPTIONS] [NAME]. */
	if (argc > 1 && argv[1][0] != '-') {
		for (v = NULL, i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
			if (strcmp(argv[1], verbs[i].name) == 0)
				v = &verbs[i];
		if (v == NULL) {
			fprintf(stderr, "seqorch: hosts: unknown verb \"%s\" "
			    "(valid: list, check, trust)\n", argv[1]);
			return EXIT_USAGE;
		}
		argc--;
		argv++;
		named = 1;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'F':
			ssh_config = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'H':
			spec = optarg;
			break;
		case 'j':
			if (cmd_int_arg("--parallel", optarg, 256,
			    &parallel) != 0)
				return EXIT_USAGE;
			break;
		case 'h':
			if (named)
				fputs(v->usage, stdout);
			else
				cmd_print_usage(cmd_find("hosts"));
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (verbose && v->verb != VERB_LIST) {
		fprintf(stderr, "seqorch: hosts %s: -v belongs to `hosts "
		    "list`\n", v->name);
		return EXIT_USAGE;
	}
	if ((spec != NULL || parallel != 16) && v->verb != VERB_CHECK) {
		fprintf(stderr, "seqorch: hosts %s: --hosts and --parallel "
		    "belong to `hosts check`\n", v->name);
		return EXIT_USAGE;
	}
	if (v->verb == VERB_TRUST ? argc - optind != 1 : optind != argc) {
		if (v->verb == VERB_TRUST)
			fprintf(stderr, "seqorch: hosts trust: expected one "
			    "host name\n");
		else
			fprintf(stderr, "seqorch: hosts %s: unexpected "
			    "argument \"%s\"\n", v->name, argv[optind]);
		return EXIT_USAGE;
	}
	if (cmd_load_config(config, ssh_config, &cfg) != 0)
		return EXIT_USAGE;
	switch (v->verb) {
	case VERB_LIST:
		list_hosts(cfg);
		if (verbose)
			list_sources(cfg);
		break;
	case VERB_TRUST:
		rc = trust_host(cfg, argv[optind]);
		break;
	case VERB_CHECK:
		if (config_select(cfg, spec ? spec : "all", &hosts, &n,
		    &err) != 0) {
			fprintf(stderr, "seqorch: %s\n", err.msg);
			rc = EXIT_USAGE;
			break;
		}
		/* A host that drops the connection must not kill us. */
		signal(SIGPIPE, SIG_IGN);
		rc = check_all(hosts, n, (int)parallel);
		break;
	}
	free(hosts);
	config_free(cfg);
	return rc;
}

const struct cmd_entry cmd_hosts_entry = {
	.name = "hosts",
	.summary = "list, check and trust the hosts of hosts.toml",
	.usage =
	    "usage: seqorch hosts [list] [-v] [--config hosts.toml]\n"
	    "       seqorch hosts check [--hosts SPEC] [--parallel N]\n"
	    "       seqorch hosts trust NAME\n"
	    "\n"
	    "  list    the hosts as configured (the default); -v adds each\n"
	    "          connection setting and where it came from\n"
	    "  check   connect to hosts and report what they have and miss\n"
	    "  trust   record an unknown ssh host key after showing it\n"
	    "\n"
	    "Every verb takes --config FILE (default hosts.toml), --ssh-config\n"
	    "FILE (default ~/.ssh/config, for \"ssh\" aliases and jump hosts)\n"
	    "and --help.\n"
	    "See docs/ssh.md for host keys and authentication.\n",
	.exec = hosts_exec,
};

/*
 * seqorch deploy: upload the agent sources to hosts and build them with
 * every configured compiler, without measuring: warms the content-addressed
 * caches before a window and shows what each host needed.
 */
#include "cmd.h"
#include "config.h"
#include "conn.h"
#include "deploy.h"
#include "hostsel.h"
#include "pool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct job {
	const struct host *host;
	struct deploy_stats st;
	unsigned builds_failed;
	double seconds;
	int rc;
	struct so_err err;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
deploy_one(void *arg, size_t k)
{
	struct job *j = (struct job *)arg + k;
	struct conn *c = NULL;
	double t0 = now_s();
	size_t i;

	if ((j->rc = conn_open(j->host, 0, &c, &j->err)) != 0)
		goto out;
	if ((j->rc = deploy_sources(c, &j->st, &j->err)) != 0)
		goto out;
	for (i = 0; i < j->host->ncc; i++) {
		struct build_result b;

		j->rc = deploy_build(c, j->host->cc[i], NULL, 0, 0, &b, &j->st,
		    &j->err);
		if (j->rc != 0)
			goto out;
		if (!b.ok) {
			j->builds_failed++;
			so_error(&j->err, SO_EBUILD, "build with \"%s\" "
			    "failed: %.300s", j->host->cc[i],
			    b.log_tail ? b.log_tail : "");
		}
		deploy_result_free(&b);
	}
out:
	conn_close(c);
	j->seconds = now_s() - t0;
}

static int
deploy_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct hostsel sel = HOSTSEL_INIT;
	struct config *cfg = NULL;
	struct host **hosts = NULL;
	struct job *jobs = NULL;
	size_t n = 0, i;
	int c, done, rc = EXIT_OK;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1)
		if (hostsel_opt(&sel, c, optarg) < 0)
			return EXIT_USAGE;
	if (done >= 0)
		return done;
	if (cmd_load_config(sel.config, sel.ssh_config, &cfg) != 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if ((rc = cmd_select_hosts(&sel, cfg, &hosts, &n)) != EXIT_OK)
		goto out;
	jobs = xcalloc(n, sizeof *jobs);
	for (i = 0; i < n; i++)
		jobs[i].host = hosts[i];
	pool_run(n, (int)sel.parallel, deploy_one, jobs);
	printf("%-16s %8s %12s %7s %8s  %s\n", "host", "files", "bytes",
	    "builds", "seconds", "status");
	for (i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		int ok = j->rc == 0 && j->builds_failed == 0;

		/* One line per host: a build log's newlines are folded. */
		for (char *p = j->err.msg; *p; p++)
			if (*p == '\n' || *p == '\r' || *p == '\t')
				*p = ' ';
		printf("%-16s %8u %12llu %7u %8.2f  %s\n", j->host->name,
		    j->st.files_uploaded,
		    (unsigned long long)j->st.bytes_uploaded,
		    j->st.builds_run, j->seconds, ok ? "ok" : j->err.msg);
		if (!ok)
			rc = EXIT_FAIL;
	}
out:
	free(jobs);
	free(hosts);
	config_free(cfg);
	return rc;
}

const struct cmd_entry cmd_deploy_entry = {
	.name = "deploy",
	.summary = "upload and build the agent on hosts, without measuring",
	.usage =
	    "usage: seqorch deploy [--hosts SPEC] [--config hosts.toml]\n"
	    "                      [--ssh-config FILE] [--parallel N]\n"
	    "\n"
	    "Uploads the agent sources to each host (nothing when they are\n"
	    "there already) and builds them with each of the host's compilers\n"
	    "(nothing when that build exists).  Prints per host the files and\n"
	    "bytes uploaded, the builds run and the time taken.\n",
	.opts = (const struct cmd_opt[]){
		HOSTSEL_ROW_HOSTS,
		HOSTSEL_ROW_CONFIG,
		{ "ssh-config", HOSTSEL_OPT_SSH_CONFIG, 0, "FILE",
		    "resolves \"ssh\" aliases and jump hosts\n"
		    "(default ~/.ssh/config; see docs/hosts.md)",
		    CMD_VALUE_ANY, NULL },
		{ "parallel", HOSTSEL_OPT_PARALLEL, 0, "N",
		    "hosts deployed to at once (default 16)",
		    CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 17,
	.notes =
	    "exit: 0 ok, 1 a host or build failed, 2 usage or config\n",
	.exec = deploy_exec,
};

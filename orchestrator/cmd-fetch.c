/*
 * seqorch fetch: download a study's upstream artifacts (kernels/<study>/
 * artifacts) into the coordinator's cache ahead of a run, for a
 * coordinator that will later be offline or behind a firewall.  Hosts
 * never download anything: `seqorch run` uploads from this cache.
 */
#include "cmd.h"
#include "config.h"
#include "fetch.h"
#include "study.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int
fetch_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *studies = NULL, *cache_opt = NULL, *config = NULL;
	const char *db = "results.db", *from = NULL, *name, *how;
	struct config *cfg = NULL;
	struct so_err err = { 0 };
	struct fetch_choice source = { 0 };
	struct sigaction sa;
	char *list = NULL, *p, *study, *cache = NULL, *path = NULL, *twice;
	unsigned fetched, cached;
	int c, done, rc = EXIT_OK;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		if (fetch_choice_opt(&source, c, optarg))
			continue;
		switch (c) {
		case 's': studies = optarg; break;
		case 'C': cache_opt = optarg; break;
		case 'c': config = optarg; break;
		case 'd': db = optarg; break;
		case 'f': from = optarg; break;
		}
	}
	if (done >= 0)
		return done;
	if (studies == NULL) {
		fprintf(stderr, "seqorch: fetch: --study is required (see "
		    "`seqorch studies`)\n");
		return EXIT_USAGE;
	}
	/* Before anything is fetched: a version is never taken unhashed. */
	if (fetch_choice_check(&source, &err) != 0) {
		cmd_error(err.msg);
		return EXIT_USAGE;
	}
	/* A group is its studies, as in run. */
	list = study_expand(studies, &twice);
	free(twice);
	if (from != NULL && strchr(list, ',') != NULL) {
		fprintf(stderr, "seqorch: fetch: --from FILE stands for one "
		    "study's download: give one --study\n");
		free(list);
		return EXIT_USAGE;
	}
	/* hosts.toml only says where the cache is; it may be absent. */
	if (cache_opt == NULL && config_find(config, &path, &how, NULL) == 0 &&
	    access(path, F_OK) == 0 &&
	    config_load(path, NULL, &cfg, &err) != 0) {
		cmd_error(err.msg);
		free(path);
		free(list);
		return EXIT_USAGE;
	}
	free(path);
	cache = fetch_cache_dir(cache_opt, cfg ? cfg->cache : NULL, db);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	p = list;
	while ((study = strsep(&p, ",")) != NULL) {
		if (study_find(study) == NULL) {
			fprintf(stderr, "seqorch: fetch: unknown study \"%s\" "
			    "(see `seqorch studies`)\n", study);
			rc = EXIT_USAGE;
			break;
		}
		if (from != NULL) {
			if (fetch_study_from(study, &source, from, cache, &name,
			    &err) != 0) {
				fprintf(stderr, "seqorch: fetch --from: %s\n",
				    err.msg);
				rc = err.code == SO_EIO ? EXIT_FAIL :
				    EXIT_USAGE;
				break;
			}
			printf("%s: artifact \"%s\" from \"%s\", checked, in "
			    "\"%s\"\n", study, name, from, cache);
			continue;
		}
		if (fetch_study(study, &source, cache, 1, &stop_flag, &fetched,
		    &cached, &err) != 0) {
			cmd_error(err.msg);
			rc = cmd_exit_code(err.code);
			break;
		}
		printf("%s: %u artifact%s fetched, %u already cached, in "
		    "\"%s\"\n", study, fetched, fetched == 1 ? "" : "s",
		    cached, cache);
	}
	free(list);
	free(cache);
	config_free(cfg);
	return rc;
}

const struct cmd_entry cmd_fetch_entry = {
	.name = "fetch",
	.summary = "download studies' upstream sources into the cache",
	.usage =
	    "usage: seqorch fetch --study S[,S...] [--cache DIR]\n"
	    "                     [--config hosts.toml] [--db results.db]\n"
	    "                     [--openssl-version V [--sha256 HEX]]\n"
	    "       seqorch fetch --study S --from FILE [--cache DIR] ...\n"
	    "\n"
	    "Downloads each artifact a study declares (kernels/<study>/\n"
	    "artifacts: URL, SHA-256, size) with libcurl into the cache, checks\n"
	    "its size and SHA-256, and keeps it under its hash.  An interrupted\n"
	    "download resumes (HTTP range); proxy variables (https_proxy...)\n"
	    "are honoured.  `seqorch run` uploads artifacts from the cache to\n"
	    "the hosts, fetching first what is missing.\n",
	.opts = (const struct cmd_opt[]){
		{ "study", 's', 0, "S",
		    "study, or a comma list",
		    CMD_VALUE_STUDY, NULL },
		{ "cache", 'C', 0, "DIR",
		    "the cache (default: [defaults] cache in\n"
		    "hosts.toml, else seqorch-cache beside the db)",
		    CMD_VALUE_ANY, NULL },
		{ "config", 'c', 0, "F",
		    "hosts.toml, read for [defaults] cache only",
		    CMD_VALUE_ANY, NULL },
		{ "db", 'd', 0, "FILE",
		    "results.db, whose directory holds the default\n"
		    "cache",
		    CMD_VALUE_ANY, NULL },
		{ "from", 'f', 0, "FILE",
		    "offline: FILE is the download (e.g. a copy of\n"
		    "RandomX-1.1.10.tar.gz brought over by hand); it\n"
		    "is copied into the cache and its size and SHA-256\n"
		    "checked as a download's are",
		    CMD_VALUE_ANY, NULL },
		FETCH_ROW_OPENSSL_VERSION,
		FETCH_ROW_SHA256,
		CMD_OPT_END,
	},
	.optcol = 16,
	.notes =
	    "URL override: SEQORCH_URL_<NAME> (SEQORCH_URL_RANDOMX,\n"
	    "SEQORCH_URL_OPENSSL) in the environment replaces an artifact's\n"
	    "default URL; the hash and size still have to match.  sha3's\n"
	    "OpenSSL release is read on the coordinator (its perlasm, with\n"
	    "perl), never uploaded; a run without it skips the openssl-*\n"
	    "variants.  Another release than the pinned one:\n"
	    "`--openssl-version 3.5.8 --sha256 HEX`, the hash computed by\n"
	    "you from a copy you trust (none is pinned for it, and none is\n"
	    "taken from the download); the same options on `run` and\n"
	    "`reproduce` build from that release.\n"
	    "\n"
	    "exit: 0 ok, 1 a download failed (or is not --sha256's), 2 usage\n"
	    "      or config (or --from FILE is not the artifact, or a\n"
	    "      version not pinned lacks --sha256),\n"
	    "      130 interrupted\n",
	.exec = fetch_exec,
};

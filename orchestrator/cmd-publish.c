/*
 * seqorch publish: POST one run's signed bundle to a collector over HTTPS
 * (collector.c).  The token comes from a file only: never from the command
 * line (other users see it in ps) nor from hosts.toml.
 */
#include "bundle.h"
#include "cmd.h"
#include "db.h"
#include "export.h"
#include "collector.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TOKEN 4096

/* The first line of path, without its newline, into a new string. */
static char *
read_token(const char *path)
{
	char buf[MAX_TOKEN + 2];
	struct stat sb;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "seqorch: cannot open token file \"%s\": %s\n",
		    path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & 0044) != 0)
		fprintf(stderr, "seqorch: warning: token file \"%s\" is "
		    "readable by others\n", path);
	if (fgets(buf, sizeof buf, f) == NULL || strlen(buf) > MAX_TOKEN) {
		fprintf(stderr, "seqorch: token file \"%s\": expected one line "
		    "of at most %d bytes\n", path, MAX_TOKEN);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0') {
		fprintf(stderr, "seqorch: token file \"%s\" is empty\n", path);
		return NULL;
	}
	return xstrdup(buf);
}

/* Where the bundle waits to be sent: $TMPDIR, else /tmp. */
static const char *
spool_dir(void)
{
	const char *d = getenv("TMPDIR");

	return d != NULL && *d != '\0' ? d : "/tmp";
}

/*
 * A new temporary file, already unlinked, for the bundle's .tar: curl
 * reads it from there (and again for each try), so the run is never in
 * memory whole.
 */
static int
spool_file(struct so_err *err)
{
	char *name = xasprintf("%s/seqorch-publish.XXXXXX", spool_dir());
	int fd;

	if ((fd = mkstemp(name)) < 0)
		so_error(err, SO_EIO, "cannot create a temporary file in \"%s\": "
		    "%s", spool_dir(), strerror(errno));
	else
		unlink(name);
	free(name);
	return fd;
}

static int
publish_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct collector_opts po = { .attempts = 5, .backoff = 0.5,
	    .log = stderr };
	struct collector_result res;
	const char *path = "results.db", *key = NULL, *token_file = NULL;
	struct so_err err = { 0 };
	struct db *db = NULL;
	cJSON *summary = NULL;
	int64_t run_id = 0, attempts;
	char *token = NULL;
	uint64_t len = 0;
	int c, done, fd = -1, ret = EXIT_OK;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case 'u': po.url = optarg; break;
		case 't': token_file = optarg; break;
		case 'c': po.cacert = optarg; break;
		case 'k': key = optarg; break;
		case 'd': path = optarg; break;
		case 'r':
			if (cmd_run_id_arg("--run", optarg, &run_id) != 0)
				return EXIT_USAGE;
			break;
		case 'a':
			if (cmd_int_arg("--attempts", optarg, 20, &attempts) != 0)
				return EXIT_USAGE;
			po.attempts = (int)attempts;
			break;
		}
	}
	if (done >= 0)
		return done;
	if (run_id == 0 || po.url == NULL || key == NULL) {
		fprintf(stderr, "seqorch: publish: --run, --url and --sign are "
		    "required\n");
		return EXIT_USAGE;
	}
	if (strncmp(po.url, "https://", 8) != 0) {
		fprintf(stderr, "seqorch: publish: \"%s\": expected an https:// "
		    "URL (TLS is always verified)\n", po.url);
		return EXIT_USAGE;
	}
	if (token_file != NULL && (token = read_token(token_file)) == NULL)
		return EXIT_USAGE;
	po.token = token;
	if ((ret = cmd_open_existing_db(path, &db)) != EXIT_OK)
		goto out;
	if (export_summary(db_handle(db), run_id, path, &summary, &err) != 0 ||
	    (fd = spool_file(&err)) < 0 ||
	    bundle_write_tar_fd(db, run_id, summary, key, fd, spool_dir(),
	    &len, &err) != 0) {
		if (fd < 0)
			cJSON_Delete(summary);
		cmd_error(err.msg);
		ret = cmd_exit_code(err.code);
		goto out;
	}
	if (collector_post(&po, fd, len, &res, &err) != 0) {
		cmd_error(err.msg);
		ret = EXIT_FAIL;
		goto out;
	}
	printf("published run %lld to %s: %ld %s (%llu bytes, %d "
	    "attempt%s)\n", (long long)run_id, po.url, res.status, res.body,
	    (unsigned long long)len, res.attempts, res.attempts == 1 ? "" :
	    "s");
out:
	if (fd >= 0)
		close(fd);
	db_close(db);
	free(token);
	return ret;
}

const struct cmd_entry cmd_publish_entry = {
	.name = "publish",
	.summary = "POST a run's signed bundle to a collector",
	.usage =
	    "usage: seqorch publish --run ID --url https://... --sign KEY\n"
	    "                       [--token-file F] [--cacert F]\n"
	    "                       [--attempts N] [--db results.db]\n"
	    "\n"
	    "Makes run ID's bundle (as `seqorch export --bundle`), signed with\n"
	    "the Ed25519 key KEY, and POSTs it as application/x-tar.  TLS is\n"
	    "always verified (--cacert names a CA file); the token, if any, is\n"
	    "read from a file and sent as a Bearer token.  5xx answers and\n"
	    "dropped connections are tried again with exponential backoff\n"
	    "(0.5 s, doubling, at most 30 s a wait), up to N tries in all\n"
	    "(default 5); a 4xx answer is not, and nothing is sent again after\n"
	    "a 2xx status, even if the answer's body is cut short; a redirect\n"
	    "is followed only to the same host.  Errors show the status and\n"
	    "the first line of the answer, at most 200 bytes, with the token\n"
	    "and any Bearer or Authorization value replaced by [redacted].\n",
	.notes =
	    "exit: 0 published, 1 refused or failed, 2 usage, 3 database\n",
	.opts = (const struct cmd_opt[]){
		{ "run", 'r', 0, "ID", "the run to publish (required)",
		    CMD_VALUE_RUN, NULL },
		{ "url", 'u', 0, "URL", "the collector, https:// (required)",
		    CMD_VALUE_ANY, NULL },
		{ "sign", 'k', 0, "KEY", "the Ed25519 PEM key the bundle is "
		    "signed with\n(required)", CMD_VALUE_ANY, NULL },
		{ "token-file", 't', 0, "F", "the Bearer token, a file of one "
		    "line", CMD_VALUE_ANY, NULL },
		{ "cacert", 'c', 0, "F", "the CA file TLS verifies the "
		    "collector with\n(default: the system's)", CMD_VALUE_ANY,
		    NULL },
		{ "attempts", 'a', 0, "N", "tries in all, 1 to 20 (default 5)",
		    CMD_VALUE_ANY, NULL },
		CMD_OPT_DB("FILE"),
		CMD_OPT_END,
	},
	.optcol = 18,
	.exec = publish_exec,
};

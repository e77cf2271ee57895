/*
 * seqorch init: a starter hosts.toml where the inventory search finds it
 * from any directory (config_user_path), as `git config --global` or
 * `gh auth login` leave a file in the user's config directory: this
 * machine as the one active host, and each alias of the user's ssh_config
 * commented out, to be switched on by hand once its keys and compilers
 * are known (`seqorch hosts check`).
 */
#include "cmd.h"
#include "config.h"
#include "hostsel.h"
#include "sshconfig.h"
#include "strbuf.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char header[] =
    "# seqorch host inventory, written by `seqorch init`: one [hosts.NAME]\n"
    "# table per machine that runs benchmarks.  Every key, its type and its\n"
    "# default are in docs/hosts.md (`man seqorch`, FILES).  Pick hosts with\n"
    "# --hosts NAME,NAME, --hosts @GROUP or --hosts all.\n"
    "\n"
    "# This machine, driven without ssh; the agent picks its CPU (never\n"
    "# CPU 0, which takes most interrupts).\n"
    "[hosts.local]\n"
    "transport = \"local\"\n"
    "cpu = \"auto\"\n";

/*
 * The text of the starter file, with aliases' entries, into sb; returns
 * how many aliases it names.
 */
static size_t
starter(struct strbuf *sb, const char *ssh_path, char **aliases, size_t n)
{
	size_t i, shown = 0;

	strbuf_addstr(sb, header);
	for (i = 0; i < n; i++) {
		/* Names hosts.toml refuses, and ours, are left out. */
		if (!config_host_name_ok(aliases[i]) ||
		    strcmp(aliases[i], "local") == 0 ||
		    strcmp(aliases[i], "all") == 0)
			continue;
		if (shown++ == 0)
			strbuf_addf(sb, "\n# The Host aliases of %s, connected "
			    "as ssh connects to them\n# (HostName, User, Port, "
			    "IdentityFile, ProxyJump): uncomment a\n# host, "
			    "then `seqorch hosts check --hosts NAME`.\n",
			    ssh_path);
		strbuf_addf(sb, "#\n# [hosts.%s]\n# ssh = \"%s\"\n", aliases[i],
		    aliases[i]);
	}
	return shown;
}

static int
init_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const char *given = NULL, *ssh_config = NULL, *env;
	struct strbuf sb = STRBUF_INIT;
	struct so_err err = { 0 };
	char **aliases = NULL, *path = NULL, *ssh_path = NULL, *dir = NULL;
	size_t n = 0, i, shown;
	int c, done, fd = -1, rc = EXIT_FAIL;

	optind = 1;
	while ((c = cmd_getopt(argc, argv, self, &done)) != -1) {
		switch (c) {
		case HOSTSEL_OPT_CONFIG: given = optarg; break;
		case HOSTSEL_OPT_SSH_CONFIG: ssh_config = optarg; break;
		}
	}
	if (done >= 0)
		return done;
	/* Where the search reads first, short of ./hosts.toml. */
	env = getenv("SEQORCH_CONFIG");
	if (given != NULL)
		path = xstrdup(given);
	else if (env != NULL && *env != '\0')
		path = xstrdup(env);
	else if ((path = config_user_path(NULL)) == NULL) {
		fprintf(stderr, "seqorch: init: no home directory for "
		    "\"~/.config/seqorch/hosts.toml\": give --config FILE\n");
		return EXIT_USAGE;
	}
	ssh_path = ssh_config != NULL ? xstrdup(ssh_config) :
	    sshcfg_default_path();
	if (sshcfg_aliases(ssh_config, &aliases, &n, &err) != 0) {
		cmd_error(err.msg);
		rc = EXIT_USAGE;
		goto out;
	}
	shown = starter(&sb, ssh_path != NULL ? ssh_path : "~/.ssh/config", aliases,
	    n);
	dir = xstrdup(path);
	if (make_dirs(dirname(dir), &err) != 0) {
		fprintf(stderr, "seqorch: init: %s\n", err.msg);
		goto out;
	}
	/* Never over a file the user may have edited. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) < 0) {
		struct stat sb_path;

		if (errno == EEXIST && stat(path, &sb_path) == 0 &&
		    S_ISDIR(sb_path.st_mode))
			fprintf(stderr, "seqorch: init: \"%s\" is a directory: "
			    "--config names the file to write, such as "
			    "\"%s/hosts.toml\"\n", path, path);
		else
			fprintf(stderr, "seqorch: init: cannot create \"%s\": "
			    "%s%s\n", path, strerror(errno), errno == EEXIST ?
			    " (it is kept as it is; edit it, or remove it "
			    "first)" : "");
		goto out;
	}
	if (write_all(fd, sb.buf, sb.len, path, &err) != 0) {
		cmd_error(err.msg);
		unlink(path);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		fprintf(stderr, "seqorch: init: cannot write \"%s\": %s\n",
		    path, strerror(errno));
		unlink(path);
		goto out;
	}
	fd = -1;
	printf("wrote \"%s\": host \"local\" (this machine), and %zu ssh_config "
	    "alias%s commented out\n", path, shown, shown == 1 ? "" : "es");
	strbuf_reset(&sb);
	cmd_hint_opts(&sb, given, NULL, NULL);
	printf("next: seqorch run --study sha3%s\n", sb.buf);
	rc = EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++)
		free(aliases[i]);
	free(aliases);
	free(ssh_path);
	free(dir);
	free(path);
	strbuf_release(&sb);
	return rc;
}

const struct cmd_entry cmd_init_entry = {
	.name = "init",
	.summary = "write a starter hosts.toml where seqorch looks for it",
	.usage =
	    "usage: seqorch init [--config FILE] [--ssh-config FILE]\n"
	    "\n"
	    "Writes a starter host inventory: this machine as host \"local\",\n"
	    "and each Host alias of ~/.ssh/config as a commented entry.  It\n"
	    "goes to --config FILE, else $SEQORCH_CONFIG, else\n"
	    "$XDG_CONFIG_HOME/seqorch/hosts.toml (~/.config/seqorch/ without\n"
	    "XDG_CONFIG_HOME), where every command looks when neither\n"
	    "--config, $SEQORCH_CONFIG nor ./hosts.toml says otherwise.  An\n"
	    "existing file is never replaced.\n",
	.opts = (const struct cmd_opt[]){
		{ "config", HOSTSEL_OPT_CONFIG, 0, "FILE",
		    "where to write the inventory", CMD_VALUE_ANY, NULL },
		{ "ssh-config", HOSTSEL_OPT_SSH_CONFIG, 0, "FILE",
		    "whose Host aliases to list (default\n"
		    "~/.ssh/config)", CMD_VALUE_ANY, NULL },
		CMD_OPT_END,
	},
	.optcol = 22,
	.notes =
	    "exit: 0 written, 1 not written (the file exists, or cannot be\n"
	    "      created), 2 usage or an unreadable ssh_config\n",
	.exec = init_exec,
};

/*
 * seqorch hosts: the inventory in hosts.toml and what each host offers.
 *
 *   hosts [list]      the hosts as configured
 *   hosts check       connect to each (strict host key) and report the
 *                     machine, its compilers, what a build would miss,
 *                     and the agent's noise preflight (docs/measurement.md)
 *   hosts trust NAME  record an unknown host key in known_hosts
 *
 * hosts check lives in hosts-check.c.
 */
#include "cmd.h"
#include "config.h"
#include "conn.h"
#include "hosts-check.h"
#include "hostsel.h"
#include "remote.h"
#include "ssh.h"
#include "strbuf.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a,b" of a list of strings, into a new string; "-" when empty. */
static char *
join(char **list, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_join(&sb, (const char *const *)list, n, ",");
	if (n == 0)
		strbuf_addstr(&sb, "-");
	return strbuf_detach(&sb);
}

static void
list_hosts(const struct config *cfg)
{
	const struct host *h;
	char *ccs, *groups, *addr, cpu[16];
	size_t i;

	printf("inventory: %s (%s)\n", cfg->path, cfg->from);
	printf("%-12s %-9s %-22s %-10s %-14s %-5s %-10s %s\n", "NAME",
	    "TRANSPORT", "ADDRESS", "USER", "CC", "CPU", "GROUPS", "CFLAGS");
	for (i = 0; i < cfg->nhosts; i++) {
		h = &cfg->hosts[i];
		ccs = join(h->cc, h->ncc);
		groups = join(h->groups, h->ngroups);
		addr = h->transport == TRANSPORT_LOCAL ? xstrdup("-") :
		    xasprintf(strchr(h->address, ':') ? "[%s]:%d" : "%s:%d",
		    h->address, h->port);
		printf("%-12s %-9s %-22s %-10s %-14s %-5s %-10s %s\n",
		    h->name, h->transport == TRANSPORT_LOCAL ? "local" : "ssh",
		    addr, h->user ? h->user : "-", ccs,
		    rcmd_cpu(h, cpu, sizeof cpu), groups, h->cflags);
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
		    "`seqorch hosts list%s`)\n", name, cfg->path,
		    cfg->hint != NULL ? cfg->hint : "");
		return EXIT_USAGE;
	}
	if (h->transport != TRANSPORT_SSH) {
		fprintf(stderr, "seqorch: host \"%s\" is not reached over ssh: "
		    "it has no host key to trust\n", name);
		return EXIT_USAGE;
	}
	if (conn_open(h, CONN_TRUST_NEW, &c, &err) != 0) {
		cmd_error(err.msg);
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

static const struct cmd_entry hosts_list_entry = {
	.name = "hosts list",
	.summary = "the hosts as configured",
	.usage =
	    "usage: seqorch hosts [list] [-v] [--config hosts.toml]\n"
	    "                   [--ssh-config FILE]\n"
	    "\n"
	    "Names the inventory read and how it was found, then lists its\n"
	    "hosts: transport, address, user, compilers, CPU to pin to,\n"
	    "groups and compiler flags.  With -v,\n"
	    "also every connection setting of each ssh host and its jump\n"
	    "hosts, with where it came from: hosts.toml (and line), its\n"
	    "[defaults], ssh_config (file and line) or seqorch's default.\n",
	.opts = (const struct cmd_opt[]){
		{ "verbose", 'v', 1, NULL,
		    "also each connection setting and where it came from",
		    CMD_VALUE_ANY, NULL },
		HOSTSEL_ROW_CONFIG,
		HOSTSEL_ROW_SSH_CONFIG,
		CMD_OPT_END,
	},
	.optcol = 21,
};

static const struct cmd_entry hosts_check_entry = {
	.name = "hosts check",
	.summary = "connect to hosts and report what they have and miss",
	.usage =
	    "usage: seqorch hosts check [--hosts all|NAME,...|@GROUP]\n"
	    "                           [--parallel N] [--config hosts.toml]\n"
	    "\n"
	    "Connects to each selected host (the host key must already be in\n"
	    "known_hosts) and reports its architecture, OS, CPU model and cores,\n"
	    "each compiler's version and target, whether it takes the cflags\n"
	    "and links each library variants need (the variants a missing one\n"
	    "skips are named), the OpenSSL version, free space in the workdir,\n"
	    "and what a build would miss.  Then it builds the agent\n"
	    "with the first compiler and runs its noise preflight: quiet or\n"
	    "noisy with the reasons, what it saw, and with cpu = \"auto\" the\n"
	    "CPU it would pick (docs/measurement.md).  Scratch files stay\n"
	    "inside the workdir and are removed; the agent build stays in\n"
	    "the workdir's src/ and build/, where a run reuses it.\n",
	.opts = (const struct cmd_opt[]){
		HOSTSEL_ROW_HOSTS,
		{ "parallel", HOSTSEL_OPT_PARALLEL, 0, "N",
		    "hosts checked at once (default 16)",
		    CMD_VALUE_ANY, NULL },
		HOSTSEL_ROW_CONFIG,
		HOSTSEL_ROW_SSH_CONFIG,
		CMD_OPT_END,
	},
	.optcol = 17,
	.notes =
	    "exit: 0 every host usable, 1 a host failed or misses something,\n"
	    "      2 usage or config\n",
};

static const struct cmd_entry hosts_trust_entry = {
	.name = "hosts trust",
	.summary = "record an unknown ssh host key after showing it",
	.usage =
	    "usage: seqorch hosts trust NAME [--config hosts.toml]\n"
	    "\n"
	    "Connects to host NAME and, if its host key is not in the host's\n"
	    "known_hosts file yet, appends it there and prints its SHA256\n"
	    "fingerprint: compare it with the one the host shows\n"
	    "(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub).  A changed key,\n"
	    "or a key of another type than the one known_hosts has for the\n"
	    "host, is never added: remove the old line yourself if the change\n"
	    "is expected.  Behind jump hosts, each hop's key is checked the\n"
	    "same way, and each recorded or known key is printed.\n",
	.opts = (const struct cmd_opt[]){
		HOSTSEL_ROW_CONFIG,
		HOSTSEL_ROW_SSH_CONFIG,
		CMD_OPT_END,
	},
	.optcol = 17,
	.notes =
	    "exit: 0 trusted, 1 connection or key refused, 2 usage or config\n",
	.min_args = 1, .max_args = 1, .args = "NAME",
	.argvalue = CMD_VALUE_HOST,
};

static const struct cmd_entry *const verbs[] = {
	&hosts_list_entry, &hosts_check_entry, &hosts_trust_entry, NULL,
};

/* An unknown verb, with the nearest when one is near. */
static int
unknown_verb(const char *name)
{
	struct nearest n = NEAREST_INIT(name);
	size_t i;

	for (i = 0; verbs[i] != NULL; i++)
		nearest_try(&n, strchr(verbs[i]->name, ' ') + 1);
	if (nearest_word(&n) != NULL)
		fprintf(stderr, "seqorch: hosts: unknown verb \"%s\"; did you "
		    "mean \"%s\"?\n", name, nearest_word(&n));
	else
		fprintf(stderr, "seqorch: hosts: unknown verb \"%s\" (valid: "
		    "list, check, trust)\n", name);
	return EXIT_USAGE;
}

static int
hosts_exec(const struct cmd_entry *self, int argc, char **argv)
{
	const struct cmd_entry *v = verbs[0];
	struct hostsel sel = HOSTSEL_INIT;
	struct config *cfg = NULL;
	struct host **hosts = NULL;
	size_t i, n = 0;
	int c, done, rc = EXIT_OK, named = 0, verbose = 0;

	/* The verb comes first: seqorch hosts [VERB] [OPTIONS] [NAME]. */
	if (argc > 1 && argv[1][0] != '-') {
		for (v = NULL, i = 0; verbs[i] != NULL; i++)
			if (strcmp(argv[1], strchr(verbs[i]->name, ' ') + 1) == 0)
				v = verbs[i];
		if (v == NULL)
			return unknown_verb(argv[1]);
		named = 1;
	}
	optind = 1 + named;
	/* Without a verb, hosts is hosts list, and its --help the overview. */
	while ((c = cmd_getopt_as(argc, argv, v, named ? v : self,
	    &done)) != -1) {
		if (c == 'v')
			verbose = 1;
		else if (hostsel_opt(&sel, c, optarg) < 0)
			return EXIT_USAGE;
	}
	if (done >= 0)
		return done;
	if (cmd_load_config(sel.config, sel.ssh_config, &cfg) != 0)
		return EXIT_USAGE;
	if (v == &hosts_list_entry) {
		list_hosts(cfg);
		if (verbose)
			list_sources(cfg);
	} else if (v == &hosts_trust_entry)
		rc = trust_host(cfg, argv[optind]);
	else if ((rc = cmd_select_hosts(&sel, cfg, &hosts, &n)) == EXIT_OK) {
		/* A host that drops the connection must not kill us. */
		signal(SIGPIPE, SIG_IGN);
		rc = cmd_exit_code(hosts_check(hosts, n, (int)sel.parallel));
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
	    "Every verb takes --config FILE, --ssh-config FILE (default\n"
	    "~/.ssh/config, for \"ssh\" aliases and jump hosts) and --help.\n"
	    "Without --config the inventory is $SEQORCH_CONFIG, else\n"
	    "./hosts.toml, else ~/.config/seqorch/hosts.toml\n"
	    "($XDG_CONFIG_HOME/seqorch/); `list` names the one read.\n"
	    "See docs/ssh.md for host keys and authentication.\n",
	.verbs = verbs,
	.exec = hosts_exec,
};

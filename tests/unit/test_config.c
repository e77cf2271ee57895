/*
 * hosts.toml front end (config.c over toml.cc): what a user sees for good
 * and bad inventories.  Each test writes hosts.toml into a private
 * temporary directory and runs from there, so messages are asserted
 * exactly as printed: "hosts.toml:LINE:COL: ...".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

/* Tilde expansion is checked against this, whoever runs the tests. */
#define TEST_HOME "/home/tester"

static char tmpdir[] = "/tmp/seqorch-test-config.XXXXXX";
static char shipped[PATH_MAX];	/* the repository's hosts.toml */

static void
write_hosts(const char *text)
{
	FILE *f = fopen("hosts.toml", "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static struct config *
load_ok(const char *text)
{
	struct config *cfg = NULL;
	struct so_err err = { 0 };
	int r;

	write_hosts(text);
	r = config_load("hosts.toml", NULL, &cfg, &err);
	if (r != 0)
		print_error("unexpected failure: %s\n", err.msg);
	assert_int_equal(r, 0);
	assert_non_null(cfg);
	return cfg;
}

static void
load_fails(const char *text, int code, const char *msg)
{
	struct config *cfg = NULL;
	struct so_err err = { 0 };

	write_hosts(text);
	assert_int_equal(config_load("hosts.toml", NULL, &cfg, &err), code);
	assert_null(cfg);
	assert_int_equal(err.code, code);
	assert_string_equal(err.msg, msg);
}

/* Select spec from cfg and compare the names with want ("a b c"). */
static void
select_ok(const struct config *cfg, const char *spec, const char *want)
{
	struct host **list = NULL;
	struct so_err err = { 0 };
	char got[256] = "";
	size_t i, n = 0;
	int r;

	r = config_select(cfg, spec, &list, &n, &err);
	if (r != 0)
		print_error("unexpected failure: %s\n", err.msg);
	assert_int_equal(r, 0);
	for (i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
		    i ? " " : "", list[i]->name);
	free(list);
	assert_string_equal(got, want);
}

static void
select_fails(const struct config *cfg, const char *spec, int code,
    const char *msg)
{
	struct host **list = NULL;
	struct so_err err = { 0 };
	size_t n = 0;

	assert_int_equal(config_select(cfg, spec, &list, &n, &err), code);
	assert_null(list);
	assert_string_equal(err.msg, msg);
}

static void
test_shipped_loads(void **state)
{
	struct config *cfg = NULL;
	struct so_err err = { 0 };
	struct host *h;

	(void)state;
	if (config_load(shipped, NULL, &cfg, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(cfg->nhosts, 1);
	h = &cfg->hosts[0];
	assert_string_equal(h->name, "local");
	assert_int_equal(h->transport, TRANSPORT_LOCAL);
	assert_null(h->address);
	assert_int_equal(h->cpu, 1);
	assert_string_equal(h->workdir, TEST_HOME "/.seqorch");
	assert_int_equal(h->ncc, 1);
	assert_string_equal(h->cc[0], "cc");
	assert_string_equal(h->cflags, "-O3");
	config_free(cfg);
}

/*
 * The commented-out examples in the shipped hosts.toml must stay valid:
 * uncomment every "# [hosts.NAME]" block (up to the next blank line) and
 * load the result.
 */
static void
test_shipped_examples_load(void **state)
{
	FILE *in, *out;
	char line[1024];
	int in_example = 0;
	struct config *cfg;
	struct host **arm;
	size_t narm;

	(void)state;
	in = fopen(shipped, "r");
	assert_non_null(in);
	out = fopen("hosts.toml", "w");
	assert_non_null(out);
	while (fgets(line, sizeof line, in) != NULL) {
		if (strncmp(line, "# [hosts.", 9) == 0)
			in_example = 1;
		else if (*line == '\n')
			in_example = 0;
		fputs(in_example ? line + 2 : line, out);
	}
	fclose(in);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(config_load("hosts.toml", NULL, &cfg, NULL), 0);
	assert_int_equal(cfg->nhosts, 4);
	assert_string_equal(cfg->hosts[1].name, "m4");
	assert_int_equal(cfg->hosts[1].cpu, -1);
	assert_string_equal(cfg->hosts[3].name, "graviton5");
	assert_int_equal(cfg->hosts[3].cpu, 13);
	assert_non_null(strstr(cfg->hosts[3].build_wrapper, "{workdir}"));
	assert_int_equal(config_select(cfg, "@arm", &arm, &narm, NULL), 0);
	assert_int_equal(narm, 2);
	free(arm);
	config_free(cfg);
}

static void
test_defaults_inherit(void **state)
{
	struct config *cfg;
	struct host *a, *b, *l;

	(void)state;
	cfg = load_ok(
	    "[defaults]\n"
	    "port = 2222\n"
	    "user = \"bench\"\n"
	    "identity = \"~/.ssh/bench_ed25519\"\n"
	    "cflags = \"-O2\"\n"
	    "groups = [\"lab\"]\n"
	    "connect_timeout = 30\n"
	    "\n"
	    "[hosts.a]\n"
	    "address = \"10.0.0.1\"\n"
	    "port = 22\n"
	    "cflags = \"\"\n"
	    "\n"
	    "[hosts.b]\n"
	    "address = \"b.example.org\"\n"
	    "\n"
	    "# ssh-only defaults do not get in the way of a local host\n"
	    "[hosts.l]\n"
	    "transport = \"local\"\n");
	assert_int_equal(cfg->nhosts, 3);
	a = &cfg->hosts[0];
	b = &cfg->hosts[1];
	l = &cfg->hosts[2];

	assert_int_equal(a->line, 9);
	assert_int_equal(a->port, 22);
	assert_string_equal(a->cflags, "");
	assert_string_equal(a->user, "bench");

	assert_int_equal(b->transport, TRANSPORT_SSH);
	assert_string_equal(b->address, "b.example.org");
	assert_int_equal(b->port, 2222);
	assert_string_equal(b->user, "bench");
	assert_string_equal(b->identity, TEST_HOME "/.ssh/bench_ed25519");
	assert_string_equal(b->known_hosts, TEST_HOME "/.ssh/known_hosts");
	assert_string_equal(b->workdir, "~/.seqorch");
	assert_string_equal(b->cflags, "-O2");
	assert_int_equal(b->ngroups, 1);
	assert_string_equal(b->groups[0], "lab");
	assert_int_equal(b->connect_timeout, 30);
	assert_int_equal(b->cpu, 0);
	assert_null(b->build_wrapper);

	assert_int_equal(l->transport, TRANSPORT_LOCAL);
	assert_null(l->address);
	assert_null(l->user);
	assert_null(l->identity);
	assert_string_equal(l->workdir, TEST_HOME "/.seqorch");
	assert_string_equal(l->groups[0], "lab");
	config_free(cfg);
}

static void
test_cc_string_and_list(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(
	    "[hosts.one]\n"
	    "address = \"one\"\n"
	    "cc = \"clang-16\"\n"
	    "[hosts.two]\n"
	    "address = \"two\"\n"
	    "cc = [\"gcc\", \"/opt/llvm/bin/clang\"]\n");
	assert_int_equal(cfg->hosts[0].ncc, 1);
	assert_string_equal(cfg->hosts[0].cc[0], "clang-16");
	assert_int_equal(cfg->hosts[1].ncc, 2);
	assert_string_equal(cfg->hosts[1].cc[0], "gcc");
	assert_string_equal(cfg->hosts[1].cc[1], "/opt/llvm/bin/clang");
	config_free(cfg);

	load_fails("[hosts.a]\naddress = \"a\"\ncc = []\n", SO_EINVAL,
	    "hosts.toml:3:6: host \"a\": key \"cc\" must name at least one "
	    "compiler");
	load_fails("[hosts.a]\naddress = \"a\"\ncc = [\"gcc\", 12]\n",
	    SO_EINVAL, "hosts.toml:3:14: host \"a\": key \"cc\" must be a "
	    "string or a list of strings, got integer");
}

static void
test_cpu(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(
	    "[hosts.mac]\n"
	    "address = \"mac.local\"\n"
	    "cpu = \"none\"\n"
	    "[hosts.dflt]\n"
	    "address = \"d\"\n"
	    "[hosts.pick]\n"
	    "address = \"p\"\n"
	    "cpu = \"auto\"\n");
	assert_int_equal(cfg->hosts[0].cpu, HOST_CPU_NONE);
	assert_int_equal(cfg->hosts[1].cpu, 0);
	assert_int_equal(cfg->hosts[2].cpu, HOST_CPU_AUTO);
	config_free(cfg);

	load_fails("[hosts.a]\naddress = \"a\"\ncpu = \"any\"\n", SO_EINVAL,
	    "hosts.toml:3:7: host \"a\": key \"cpu\" must be an integer >= 0, "
	    "\"none\" or \"auto\", got \"any\"");
	load_fails("[hosts.a]\naddress = \"a\"\ncpu = -1\n", SO_EINVAL,
	    "hosts.toml:3:7: host \"a\": key \"cpu\" must be an integer >= 0, "
	    "\"none\" or \"auto\", got -1");
}

static void
test_malformed_toml(void **state)
{
	(void)state;
	load_fails("[hosts.a]\naddress = \n", SO_EPARSE,
	    "hosts.toml:2:11: error while parsing key-value pair: expected "
	    "value, saw '\\n'");
	/* C strings cannot carry a NUL, so it is refused, not truncated. */
	load_fails("[hosts.a]\naddress = \"a\\u0000b\"\n", SO_EPARSE,
	    "hosts.toml:2:11: string contains a NUL character");
}

static void
test_missing_file(void **state)
{
	struct config *cfg = NULL;
	struct so_err err = { 0 };

	(void)state;
	assert_int_equal(config_load("nonexistent.toml", NULL, &cfg, &err),
	    SO_EIO);
	assert_null(cfg);
	assert_string_equal(err.msg, "cannot open \"nonexistent.toml\": "
	    "No such file or directory");
}

static void
test_unknown_keys(void **state)
{
	(void)state;
	load_fails(
	    "[hosts.genoa]\n"
	    "address = \"10.0.0.2\"\n"
	    "cpus = 3\n", SO_EINVAL,
	    "hosts.toml:3:1: host \"genoa\": unknown key \"cpus\" (did you "
	    "mean \"cpu\"?)");
	load_fails(
	    "[defaults]\n"
	    "conect_timeout = 5\n"
	    "[hosts.a]\n"
	    "address = \"a\"\n", SO_EINVAL,
	    "hosts.toml:2:1: defaults: unknown key \"conect_timeout\" (did "
	    "you mean \"connect_timeout\"?)");
	load_fails("[hosts.a]\naddress = \"a\"\nos = \"linux\"\n", SO_EINVAL,
	    "hosts.toml:3:1: host \"a\": unknown key \"os\" (valid keys: "
	    "transport, ssh, address, port, user, identity, known_hosts, "
	    "workdir, cc, cflags, cpu, groups, build_wrapper, connect_timeout, "
	    "proxy_jump, reference)");
	/* A compiler or a group twice: everything built and timed twice. */
	load_fails("[hosts.a]\naddress = \"a\"\ncc = [\"gcc\", \"cc\", "
	    "\"gcc\"]\n", SO_EINVAL, "hosts.toml:3:20: host \"a\": compiler "
	    "\"gcc\" is listed twice");
	load_fails("[hosts.a]\naddress = \"a\"\ngroups = [\"x\", \"x\"]\n",
	    SO_EINVAL, "hosts.toml:3:16: host \"a\": group \"x\" is listed "
	    "twice");
	/* [defaults] also takes the coordinator's cache. */
	load_fails("[defaults]\nos = \"linux\"\n[hosts.a]\naddress = \"a\"\n",
	    SO_EINVAL, "hosts.toml:2:1: defaults: unknown key \"os\" (valid "
	    "keys: transport, ssh, address, port, user, identity, known_hosts, "
	    "workdir, cc, cflags, cpu, groups, build_wrapper, connect_timeout, "
	    "proxy_jump, reference, cache)");
	load_fails("[host.a]\naddress = \"a\"\n", SO_EINVAL,
	    "hosts.toml:1:2: unknown table \"host\" (did you mean "
	    "\"hosts\"?)");
	load_fails("address = \"a\"\n[hosts.a]\n", SO_EINVAL,
	    "hosts.toml:1:1: unknown top-level key \"address\" (keys belong "
	    "in [defaults] or [hosts.NAME])");
}

static void
test_wrong_types(void **state)
{
	(void)state;
	load_fails("[hosts.m4]\naddress = \"m4.local\"\nport = \"22\"\n",
	    SO_EINVAL, "hosts.toml:3:8: host \"m4\": key \"port\" must be an "
	    "integer from 1 to 65535, got string");
	load_fails("[hosts.m4]\naddress = \"m4.local\"\nport = 70000\n",
	    SO_EINVAL, "hosts.toml:3:8: host \"m4\": key \"port\" must be an "
	    "integer from 1 to 65535, got 70000");
	load_fails("[hosts.a]\naddress = \"a\"\nconnect_timeout = 0.5\n",
	    SO_EINVAL, "hosts.toml:3:19: host \"a\": key \"connect_timeout\" "
	    "must be an integer from 1 to 3600, got float");
	load_fails("[hosts.a]\naddress = \"a\"\ngroups = \"arm\"\n",
	    SO_EINVAL, "hosts.toml:3:10: host \"a\": key \"groups\" must be a "
	    "list of strings, got string");
	load_fails("[hosts.a]\naddress = \"a\"\ntransport = \"telnet\"\n",
	    SO_EINVAL, "hosts.toml:3:13: host \"a\": key \"transport\" must be "
	    "\"ssh\" or \"local\", got \"telnet\"");
	load_fails("[hosts.a]\naddress = 1979-05-27T07:32:00Z\n", SO_EINVAL,
	    "hosts.toml:2:11: host \"a\": key \"address\" must be a string, "
	    "got date-time");
	load_fails("[hosts.a]\naddress = \"-oProxyCommand=sh\"\n", SO_EINVAL,
	    "hosts.toml:2:11: host \"a\": key \"address\" must be a host name "
	    "or IP address, got \"-oProxyCommand=sh\"");
	load_fails("[hosts.a]\naddress = \"a\"\nworkdir = \"bench\"\n",
	    SO_EINVAL, "hosts.toml:3:11: host \"a\": key \"workdir\" must be "
	    "an absolute path or start with \"~/\", got \"bench\"");
	load_fails("[hosts.a]\ntransport = \"local\"\nport = 22\n", SO_EINVAL,
	    "hosts.toml:3:1: host \"a\": key \"port\" only applies to "
	    "transport \"ssh\"");
	load_fails("[defaults]\ncflags = [\"-O2\"]\n"
	    "[hosts.a]\naddress = \"a\"\n", SO_EINVAL,
	    "hosts.toml:2:10: defaults: key \"cflags\" must be a string, "
	    "got array");
}

static void
test_secrets_refused(void **state)
{
	(void)state;
	load_fails("[hosts.a]\naddress = \"a\"\npassword = \"hunter2\"\n",
	    SO_EINVAL, "hosts.toml:3:1: host \"a\": key \"password\" is not "
	    "allowed: seqorch keeps no secrets; use a key file (\"identity\") "
	    "or ssh-agent");
	load_fails("[defaults]\npassphrase = \"x\"\n"
	    "[hosts.a]\naddress = \"a\"\n", SO_EINVAL,
	    "hosts.toml:2:1: defaults: key \"passphrase\" is not allowed: "
	    "seqorch keeps no secrets; load the key into ssh-agent instead");
}

static void
test_bad_host_names(void **state)
{
	(void)state;
	load_fails("[hosts.\"my host\"]\naddress = \"a\"\n", SO_EINVAL,
	    "hosts.toml:1:8: invalid host name \"my host\" (use up to 64 "
	    "letters, digits, '_', '.' and '-', not starting with '.' or "
	    "'-')");
	load_fails("[hosts.\"..\"]\naddress = \"a\"\n", SO_EINVAL,
	    "hosts.toml:1:8: invalid host name \"..\" (use up to 64 "
	    "letters, digits, '_', '.' and '-', not starting with '.' or "
	    "'-')");
	load_fails("[hosts.all]\naddress = \"a\"\n", SO_EINVAL,
	    "hosts.toml:1:8: host name \"all\" is reserved: --hosts all "
	    "selects every host");
	load_fails("[hosts.a]\naddress = \"a\"\ngroups = [\"x86\", \"a/b\"]\n",
	    SO_EINVAL, "hosts.toml:3:18: host \"a\": invalid group name "
	    "\"a/b\" (use up to 64 letters, digits, '_', '.' and '-', not "
	    "starting with '.' or '-')");
}

static void
test_missing_address_and_hosts(void **state)
{
	(void)state;
	load_fails("[hosts.local]\ntransport = \"local\"\n\n[hosts.genoa]\n"
	    "user = \"bench\"\n", SO_EINVAL,
	    "hosts.toml:4:1: host \"genoa\": missing key \"address\" or "
	    "\"ssh\" (one is required with transport \"ssh\")");
	load_fails("# nothing yet\n", SO_EINVAL,
	    "hosts.toml: no hosts defined (add a [hosts.NAME] table)");
	load_fails("[defaults]\ncpu = 1\n[hosts]\n", SO_EINVAL,
	    "hosts.toml:3:1: no hosts defined (add a [hosts.NAME] table)");
}

static const char select_toml[] =
    "[hosts.zen]\n"
    "address = \"zen\"\n"
    "groups = [\"x86\"]\n"
    "[hosts.m4]\n"
    "address = \"m4\"\n"
    "groups = [\"arm\", \"macos\"]\n"
    "[hosts.alpha]\n"
    "address = \"alpha\"\n"
    "groups = [\"arm\"]\n"
    "[hosts.local]\n"
    "transport = \"local\"\n";

static void
test_select(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(select_toml);
	/* File order, not alphabetical: toml++ sorts, we must not. */
	select_ok(cfg, "all", "zen m4 alpha local");
	select_ok(cfg, "local,zen", "zen local");
	select_ok(cfg, "@arm", "m4 alpha");
	select_ok(cfg, "local, @arm", "m4 alpha local");
	select_ok(cfg, "alpha,@arm,m4,alpha", "m4 alpha");
	select_ok(cfg, "@macos,all", "zen m4 alpha local");
	config_free(cfg);
}

static void
test_select_errors(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = load_ok(select_toml);
	select_fails(cfg, "zen,genoa", SO_ENOTFOUND, "unknown host \"genoa\" "
	    "(hosts in hosts.toml: zen, m4, alpha, local)");
	select_fails(cfg, "@gpu", SO_ENOTFOUND, "unknown group \"@gpu\" "
	    "(groups in hosts.toml: x86, arm, macos)");
	select_fails(cfg, "", SO_EINVAL, "empty host selection");
	select_fails(cfg, "zen,,m4", SO_EINVAL, "empty name in host selection "
	    "\"zen,,m4\"");
	config_free(cfg);

	cfg = load_ok("[hosts.local]\ntransport = \"local\"\n");
	select_fails(cfg, "@arm", SO_ENOTFOUND, "unknown group \"@arm\" "
	    "(hosts.toml defines no groups)");
	config_free(cfg);
}

/*
 * "ssh" aliases: the host's own keys win, then ssh_config, then
 * [defaults]; jump hosts are hosts.toml hosts or ssh_config aliases.
 */
static void
test_ssh_alias_and_jumps(void **state)
{
	struct config *cfg = NULL;
	struct so_err err = { 0 };
	struct host *g;
	FILE *f;

	(void)state;
	f = fopen("ssh_config", "w");
	assert_non_null(f);
	fputs("Host genoa\n"
	    "  HostName 10.1.2.3\n"
	    "  User cfg\n"
	    "  Port 2200\n"
	    "  IdentityFile /k/%r\n"
	    "  ControlMaster auto\n"
	    "Host gw\n"
	    "  HostName GW.example\n"
	    "  UserKnownHostsFile /kh/gw /kh/other\n", f);
	assert_int_equal(fclose(f), 0);
	write_hosts("[defaults]\n"
	    "connect_timeout = 20\n"
	    "user = \"dflt\"\n"
	    "[hosts.bastion]\n"
	    "address = \"10.0.0.1\"\n"
	    "known_hosts = \"/kh/bastion\"\n"
	    "[hosts.genoa]\n"
	    "ssh = \"genoa\"\n"
	    "user = \"own\"\n"
	    "known_hosts = \"/kh/genoa\"\n"
	    "proxy_jump = \"bastion,ops@gw:2222\"\n");
	if (config_load("hosts.toml", "ssh_config", &cfg, &err) != 0)
		print_error("unexpected failure: %s\n", err.msg);
	assert_non_null(cfg);
	g = &cfg->hosts[1];
	assert_string_equal(g->address, "10.1.2.3");
	assert_string_equal(g->origin[HOST_ADDRESS],
	    "ssh_config ssh_config:2");
	assert_int_equal(g->port, 2200);
	assert_string_equal(g->user, "own");
	assert_string_equal(g->origin[HOST_USER], "hosts.toml:9");
	/* %r is the user that wins, as with ssh -l. */
	assert_int_equal((int)g->nssh_identities, 1);
	assert_string_equal(g->ssh_identities[0], "/k/own");
	assert_null(g->identity);
	assert_int_equal(g->connect_timeout, 20);
	assert_string_equal(g->origin[HOST_CONNECT_TIMEOUT],
	    "hosts.toml:2 [defaults]");
	assert_int_equal((int)cfg->nwarnings, 1);
	assert_string_equal(cfg->warnings[0], "host \"genoa\": ssh_config:6: "
	    "\"ControlMaster\" is not supported: seqorch opens its own "
	    "connections and shares no master connection");
	assert_int_equal((int)g->njumps, 2);
	assert_string_equal(g->jumps[0].name, "bastion");
	assert_string_equal(g->jumps[0].address, "10.0.0.1");
	assert_string_equal(g->jumps[0].known_hosts, "/kh/bastion");
	assert_string_equal(g->jumps[1].name, "gw");
	assert_string_equal(g->jumps[1].address, "gw.example");
	assert_string_equal(g->jumps[1].user, "ops");
	assert_int_equal(g->jumps[1].port, 2222);
	assert_string_equal(g->jumps[1].known_hosts, "/kh/gw");
	assert_int_equal(g->jumps[1].connect_timeout, 20);
	config_free(cfg);

	write_hosts("[hosts.genoa]\nssh = \"genoa\"\nproxy_jump = \"a@\"\n");
	assert_int_equal(config_load("hosts.toml", "ssh_config", &cfg, &err),
	    SO_EINVAL);
	assert_string_equal(err.msg, "hosts.toml:3:14: host \"genoa\": jump "
	    "host \"a@\" must be [user@]host[:port]");
	/* [defaults] would make the bastion its own jump host. */
	write_hosts("[defaults]\nproxy_jump = \"gw\"\n[hosts.gw]\n"
	    "address = \"10.0.0.1\"\n");
	assert_int_equal(config_load("hosts.toml", "ssh_config", &cfg, &err),
	    SO_EINVAL);
	assert_string_equal(err.msg, "hosts.toml:2:14: host \"gw\": host "
	    "\"gw\" cannot be its own jump host");
	write_hosts("[hosts.genoa]\nssh = \"genoa\"\n");
	assert_int_equal(config_load("hosts.toml", "no-such-file", &cfg,
	    &err), SO_EIO);
	assert_string_equal(err.msg, "hosts.toml:2:7: host \"genoa\": cannot "
	    "read ssh_config \"no-such-file\": no such file or directory");
	unlink("ssh_config");
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) != 0)
		return -1;
	return setenv("HOME", TEST_HOME, 1);
}

static int
teardown(void **state)
{
	(void)state;
	unlink("hosts.toml");
	if (chdir("/") != 0)
		return -1;
	return rmdir(tmpdir);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_loads),
		cmocka_unit_test(test_shipped_examples_load),
		cmocka_unit_test(test_defaults_inherit),
		cmocka_unit_test(test_cc_string_and_list),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_malformed_toml),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_secrets_refused),
		cmocka_unit_test(test_bad_host_names),
		cmocka_unit_test(test_missing_address_and_hosts),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_select_errors),
		cmocka_unit_test(test_ssh_alias_and_jumps),
	};
	char *copy, rel[PATH_MAX];
	int n;

	/* build/tests/test_config -> the hosts.toml two levels up. */
	(void)argc;
	copy = xstrdup(argv[0]);
	n = snprintf(rel, sizeof rel, "%s/../../hosts.toml", dirname(copy));
	free(copy);
	if (n >= (int)sizeof rel || realpath(rel, shipped) == NULL) {
		fprintf(stderr, "test_config: cannot find hosts.toml from "
		    "%s\n", argv[0]);
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}

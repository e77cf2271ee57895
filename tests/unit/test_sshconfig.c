/*
 * ssh_config resolution (sshconfig.c): OpenSSH's rules on small files in
 * a private temporary directory.  tests/test_32_ssh_config.py checks the
 * same rules against `ssh -G` itself; these pin the details and the
 * messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sshconfig.h"
#include "util.h"

static char tmpdir[] = "/tmp/seqorch-test-sshconfig.XXXXXX";

static void
write_file(const char *name, const char *text)
{
	FILE *f = fopen(name, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static struct sshcfg *
resolve_ok(const char *text, const char *alias)
{
	struct sshcfg *cfg = NULL;
	struct so_err err = { 0 };
	int r;

	write_file("config", text);
	r = sshcfg_resolve("config", alias, NULL, 0, &cfg, &err);
	if (r != 0)
		print_error("unexpected failure: %s\n", err.msg);
	assert_int_equal(r, 0);
	assert_non_null(cfg);
	return cfg;
}

static void
resolve_fails(const char *text, const char *alias, int code, const char *msg)
{
	struct sshcfg *cfg = NULL;
	struct so_err err = { 0 };

	write_file("config", text);
	assert_int_equal(sshcfg_resolve("config", alias, NULL, 0, &cfg, &err),
	    code);
	assert_null(cfg);
	assert_string_equal(err.msg, msg);
}

static const char *
home(void)
{
	return getpwuid(getuid())->pw_dir;
}

static void
test_first_match_wins(void **state)
{
	struct sshcfg *c;

	(void)state;
	c = resolve_ok(
	    "# comment\n"
	    "Host genoa\n"
	    "  HostName 10.1.2.3\n"
	    "  Port 2200\n"
	    "Host *\n"
	    "  HostName ignored.example\n"
	    "  User bench\n"
	    "  Port 22\n"
	    "  ConnectTimeout 1m30s\n", "genoa");
	assert_string_equal(c->hostname, "10.1.2.3");
	assert_int_equal(c->port, 2200);
	assert_string_equal(c->user, "bench");
	assert_int_equal(c->connect_timeout, 90);
	assert_string_equal(c->origin[SSHCFG_HOSTNAME], "config:3");
	assert_string_equal(c->origin[SSHCFG_USER], "config:7");
	assert_null(c->origin[SSHCFG_PROXYJUMP]);
	assert_null(c->proxy_jump);
	sshcfg_free(c);

	/* Nothing matches: the alias is the host name, nothing is set. */
	c = resolve_ok("Host genoa\n  User x\n", "Other.Example");
	assert_string_equal(c->hostname, "other.example");
	assert_null(c->user);
	assert_int_equal(c->port, 0);
	sshcfg_free(c);
}

static void
test_patterns(void **state)
{
	struct sshcfg *c;
	const char *text =
	    "Host *.lab !gw.lab\n"
	    "  User lab\n"
	    "Host node?? \"quoted pattern\"\n"
	    "  User node\n"
	    "Host=GENOA\n"
	    "  User=upper\n"
	    "Host *\n"
	    "  User rest\n";

	(void)state;
	c = resolve_ok(text, "a.lab");
	assert_string_equal(c->user, "lab");
	sshcfg_free(c);
	/* A negated match rules the line out, whatever else matches. */
	c = resolve_ok(text, "gw.lab");
	assert_string_equal(c->user, "rest");
	sshcfg_free(c);
	c = resolve_ok(text, "node12");
	assert_string_equal(c->user, "node");
	sshcfg_free(c);
	c = resolve_ok(text, "node123");
	assert_string_equal(c->user, "rest");
	sshcfg_free(c);
	c = resolve_ok(text, "quoted pattern");
	assert_string_equal(c->user, "node");
	sshcfg_free(c);
	/* Host patterns are case-sensitive, as in OpenSSH 9. */
	c = resolve_ok(text, "genoa");
	assert_string_equal(c->user, "rest");
	sshcfg_free(c);
	c = resolve_ok(text, "GENOA");
	assert_string_equal(c->user, "upper");
	assert_string_equal(c->hostname, "genoa");
	sshcfg_free(c);
}

static void
test_tokens_and_tilde(void **state)
{
	struct sshcfg *c;
	char want[PATH_MAX];

	(void)state;
	c = resolve_ok(
	    "Host genoa\n"
	    "  HostName %h.Lab.Example\n"
	    "  User bob\n"
	    "  Port 2222\n"
	    "  IdentityFile ~/.ssh/id_%h_%p_%r\n"
	    "  IdentityFile /keys/%n-%%\n"
	    "  UserKnownHostsFile ~/kh/%h \"/x y/%r\"\n", "genoa");
	assert_string_equal(c->hostname, "genoa.lab.example");
	assert_int_equal((int)c->nidentities, 2);
	snprintf(want, sizeof want, "%s/.ssh/id_genoa.lab.example_2222_bob",
	    home());
	assert_string_equal(c->identities[0], want);
	assert_string_equal(c->identities_raw[0], "~/.ssh/id_%h_%p_%r");
	assert_string_equal(c->identities[1], "/keys/genoa-%");
	assert_int_equal((int)c->nknown_hosts, 2);
	snprintf(want, sizeof want, "%s/kh/genoa.lab.example", home());
	assert_string_equal(c->known_hosts[0], want);
	assert_string_equal(c->known_hosts[1], "/x y/bob");
	sshcfg_free(c);

	/* -l and -p (hosts.toml's user and port) feed %r and %p. */
	write_file("config", "Host g\n  User bob\n  IdentityFile /k/%r@%p\n");
	{
		struct so_err err = { 0 };

		assert_int_equal(sshcfg_resolve("config", "g", "alice", 2022,
		    &c, &err), 0);
	}
	assert_string_equal(c->user, "alice");
	assert_int_equal(c->port, 2022);
	assert_string_equal(c->identities[0], "/k/alice@2022");
	sshcfg_free(c);

	/* Addresses with ':' or '%' keep their case. */
	c = resolve_ok("Host v6\n  HostName FE80::1%%Eth0\n", "v6");
	assert_string_equal(c->hostname, "FE80::1%Eth0");
	sshcfg_free(c);
}

static void
test_include(void **state)
{
	struct sshcfg *c;
	char text[PATH_MAX * 2], where[PATH_MAX];

	(void)state;
	assert_int_equal(system("mkdir -p conf.d"), 0);
	write_file("conf.d/10-genoa", "User inc\nHost genoa\n  Port 2201\n"
	    "Host other\n  Port 9\n");
	write_file("conf.d/20-rest", "Host *\n  HostName from-include\n");
	snprintf(text, sizeof text,
	    "Host genoa\n"
	    "  Include %s/conf.d/*\n"
	    "  Port 2299\n"
	    "Host *\n"
	    "  IdentityFile /k\n", tmpdir);
	c = resolve_ok(text, "genoa");
	/* The included file's leading lines apply, its Host blocks filter. */
	assert_string_equal(c->user, "inc");
	assert_int_equal(c->port, 2201);
	assert_string_equal(c->hostname, "from-include");
	snprintf(where, sizeof where, "%s/conf.d/10-genoa:1", tmpdir);
	assert_string_equal(c->origin[SSHCFG_USER], where);
	/* After the Include, the outer Host block goes on. */
	assert_string_equal(c->identities[0], "/k");
	sshcfg_free(c);
	/* An Include inside a block that does not apply is not read. */
	c = resolve_ok(text, "else");
	assert_null(c->user);
	sshcfg_free(c);
	/* A pattern that matches no file is no error. */
	c = resolve_ok("Include /nonexistent/seqorch/*.conf\nUser u\n", "x");
	assert_string_equal(c->user, "u");
	sshcfg_free(c);
	/* A file that includes itself stops at OpenSSH's depth limit. */
	snprintf(text, sizeof text, "Include %s/config\n", tmpdir);
	write_file("config", text);
	{
		struct so_err err = { 0 };

		assert_int_equal(sshcfg_resolve("config", "x", NULL, 0, &c,
		    &err), SO_EINVAL);
		assert_non_null(strstr(err.msg, "Include nested more than 16 "
		    "deep"));
	}
	assert_int_equal(system("rm -r conf.d"), 0);
}

static void
test_proxy_and_warnings(void **state)
{
	struct sshcfg *c;

	(void)state;
	c = resolve_ok(
	    "Match host genoa\n"
	    "  User fromMatch\n"
	    "Host genoa\n"
	    "  ProxyJump ec2-user@bastion:2222,gw\n"
	    "  ProxyCommand nc %h %p\n"
	    "  ControlMaster auto\n"
	    "  ForwardAgent no\n"
	    "  SendEnv LANG\n", "genoa");
	assert_string_equal(c->proxy_jump, "ec2-user@bastion:2222,gw");
	/* Match cannot be evaluated: warned about, its block ignored. */
	assert_null(c->user);
	assert_int_equal((int)c->nwarnings, 2);
	assert_string_equal(c->warnings[0], "config:1: \"Match\" is not "
	    "supported: the settings of its block are ignored");
	assert_string_equal(c->warnings[1], "config:6: \"ControlMaster\" is "
	    "not supported: seqorch opens its own connections and shares no "
	    "master connection");
	sshcfg_free(c);

	/* ProxyCommand first: it wins over a later ProxyJump, and is named. */
	c = resolve_ok("Host *\n  ProxyCommand ssh -W %h:%p gw\n"
	    "  ProxyJump gw\n  ControlMaster no\n", "genoa");
	assert_null(c->proxy_jump);
	assert_int_equal((int)c->nwarnings, 1);
	assert_non_null(strstr(c->warnings[0], "config:2: \"ProxyCommand\" "
	    "is not supported"));
	sshcfg_free(c);

	/* "none" turns ProxyJump off and still counts as its first value. */
	c = resolve_ok("Host *\n  ProxyJump none\n  ProxyJump gw\n", "x");
	assert_null(c->proxy_jump);
	assert_int_equal((int)c->nwarnings, 0);
	sshcfg_free(c);
}

static void
test_errors(void **state)
{
	struct sshcfg *c = NULL;
	struct so_err err = { 0 };

	(void)state;
	resolve_fails("Host g\n  Port 0\n", "g", SO_EINVAL, "config:2: "
	    "\"Port\" must be a number from 1 to 65535, got \"0\"");
	resolve_fails("Host g\n  Port ssh\n", "g", SO_EINVAL, "config:2: "
	    "\"Port\" must be a number from 1 to 65535, got \"ssh\"");
	resolve_fails("User\n", "g", SO_EINVAL, "config:1: \"User\" needs a "
	    "value");
	resolve_fails("IdentitiesOnly maybe\n", "g", SO_EINVAL, "config:1: "
	    "\"IdentitiesOnly\" must be yes or no, got \"maybe\"");
	resolve_fails("ConnectTimeout soon\n", "g", SO_EINVAL, "config:1: "
	    "\"ConnectTimeout\" must be a time in seconds (\"30\", \"1m\") or "
	    "\"none\", got \"soon\"");
	resolve_fails("IdentityFile /k/%C\n", "g", SO_EINVAL, "config:1: "
	    "IdentityFile \"/k/%C\": unsupported token \"%C\" (seqorch knows "
	    "%% and %dhnpru)");
	resolve_fails("HostName %p.example\n", "g", SO_EINVAL, "config:1: "
	    "HostName \"%p.example\": unsupported token \"%p\" (seqorch knows "
	    "%% and %h)");
	resolve_fails("Host \"unterminated\n", "g", SO_EINVAL, "config:1: "
	    "unterminated quote");
	resolve_fails("User a\033[2Jb\n", "g", SO_EINVAL, "config:1: "
	    "\"User\" must not contain control characters");
	/* Values of blocks that do not apply are not looked at. */
	c = resolve_ok("Host other\n  Port nope\n", "g");
	sshcfg_free(c);
	c = NULL;
	assert_int_equal(sshcfg_resolve("missing-file", "g", NULL, 0, &c,
	    &err), SO_EIO);
	assert_null(c);
	assert_string_equal(err.msg, "cannot read ssh_config "
	    "\"missing-file\": no such file or directory");
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink("config");
	if (chdir("/") != 0)
		return -1;
	return rmdir(tmpdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_tokens_and_tilde),
		cmocka_unit_test(test_include),
		cmocka_unit_test(test_proxy_and_warnings),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * Unit tests for strbuf: growth across many appends, formatting, joining,
 * detaching, and shell quoting checked by running the quoted word through
 * a real /bin/sh; and util.h's ALLOC_GROW, which arrays grow by, its
 * counts as people write them (parse_count), its "did you mean"
 * (nearest_word), its list items (list_has) and "key=value" lines
 * (line_value).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strbuf.h"
#include "util.h"

static void
test_empty(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	(void)state;
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	s = strbuf_detach(&sb);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	strbuf_release(&sb);
}

static void
test_grow_and_format(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char want[16];
	size_t i;

	(void)state;
	/* 10,000 appends: every byte must land where expected. */
	for (i = 0; i < 10000; i++)
		strbuf_addf(&sb, "%04zu,", i % 10000);
	assert_int_equal(sb.len, 50000);
	assert_int_equal(strlen(sb.buf), 50000);
	for (i = 0; i < 10000; i += 997) {
		snprintf(want, sizeof(want), "%04zu,", i);
		assert_memory_equal(sb.buf + 5 * i, want, 5);
	}
	strbuf_reset(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_addch(&sb, 'x');
	strbuf_add(&sb, "yz\0w", 2);
	strbuf_addstr(&sb, "");
	assert_string_equal(sb.buf, "xyz");
	strbuf_release(&sb);
	assert_int_equal(sb.alloc, 0);
}

static void
test_join(void **state)
{
	const char *v[] = { "sha3", "mul", "div32" };
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_join(&sb, v, 3, ", ");
	assert_string_equal(sb.buf, "sha3, mul, div32");
	strbuf_reset(&sb);
	strbuf_join(&sb, v, 0, ", ");
	assert_string_equal(sb.buf, "");
	strbuf_join(&sb, v, 1, ", ");
	assert_string_equal(sb.buf, "sha3");
	strbuf_release(&sb);
}

/* The quoted word, echoed back by a real shell, must be the input. */
static void
check_shell_roundtrip(const char *word)
{
	struct strbuf cmd = STRBUF_INIT;
	char out[512];
	size_t n;
	FILE *p;

	strbuf_addstr(&cmd, "printf '%s' ");
	strbuf_add_shquoted(&cmd, word);
	p = popen(cmd.buf, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out, word);
	strbuf_release(&cmd);
}

static void
test_shquote(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_add_shquoted(&sb, "it's");
	assert_string_equal(sb.buf, "'it'\\''s'");
	strbuf_release(&sb);
	check_shell_roundtrip("");
	check_shell_roundtrip("plain");
	check_shell_roundtrip("it's $HOME `id` \"q\" \\ ; rm -rf /tmp/x*");
	check_shell_roundtrip("'''");
	check_shell_roundtrip("new\nline\ttab");
}

static int oom_pipe = -1;

static void
report_oom(size_t n)
{
	/* What a command's hook does: record, then the abort goes on. */
	if (write(oom_pipe, &n, sizeof n) != (ssize_t)sizeof n)
		_exit(3);
}

/*
 * An allocation that fails calls the hook once with its size, then
 * aborts (in a child: the abort is the point).
 */
static void
test_oom_hook_runs_before_the_abort(void **state)
{
	size_t want = SIZE_MAX / 2, got = 0;
	int fds[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		oom_pipe = fds[1];
		so_set_oom_hook(report_oom);
		free(xmalloc(want));
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &got, sizeof got), sizeof got);
	assert_int_equal(read(fds[0], &got, 1), 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_true(got == want);
}

/*
 * cJSON allocates through xmalloc once so_json_hooks has run (main runs
 * it): a print that cannot get its buffer meets the out-of-memory policy,
 * the hook then the abort, instead of returning a NULL that reached
 * strlen (issue 29).  The child's address space is capped so that the
 * 2 GiB buffer cannot be had.
 */
static void
test_cjson_allocates_through_xmalloc(void **state)
{
	struct rlimit lim = { 1UL << 30, 1UL << 30 };
	size_t got = 0;
	int fds[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		cJSON *j;

		close(fds[0]);
		oom_pipe = fds[1];
		so_set_oom_hook(report_oom);
		so_json_hooks();
		j = cJSON_CreateObject();
		if (setrlimit(RLIMIT_AS, &lim) != 0)
			_exit(4);
		free(cJSON_PrintBuffered(j, INT_MAX, 0));
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &got, sizeof got), sizeof got);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_true(got == (size_t)INT_MAX);
}

/* Two users' homes, each as the password database has it. */
static char want_root[256], want_daemon[256];

static void *
ask_homes(void *arg)
{
	int i, *bad = arg;

	for (i = 0; i < 2000; i++) {
		char *a = pw_home("root"), *b = pw_home("daemon");

		*bad += a == NULL || strcmp(a, want_root) != 0 || b == NULL ||
		    strcmp(b, want_daemon) != 0;
		free(a);
		free(b);
	}
	return NULL;
}

/*
 * write_file_atomic to a FIFO, directly and through a link (export -o
 * /dev/stdout, a shell's >(...)): the data reaches the reader and the FIFO
 * stays one.  Renamed over, as root -o /dev/null left /dev/null a file.
 * A regular file is still replaced whole.
 */
static void
test_write_file_atomic_to_a_fifo(void **state)
{
	char dir[] = "/tmp/test_strbuf.XXXXXX", *fifo, *link, *file;
	char buf[64];
	struct so_err err = { 0, "" };
	struct stat st;
	int i, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fifo = xasprintf("%s/fifo", dir);
	link = xasprintf("%s/link", dir);
	file = xasprintf("%s/file", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(fifo, link), 0);
	for (i = 0; i < 2; i++) {
		/* A reader first, or the writer's open would wait for one. */
		fd = open(fifo, O_RDONLY | O_NONBLOCK);
		assert_true(fd >= 0);
		assert_int_equal(write_file_atomic(i ? link : fifo, "hello\n",
		    6, 0644, &err), 0);
		memset(buf, 0, sizeof buf);
		assert_int_equal(read(fd, buf, sizeof buf), 6);
		assert_string_equal(buf, "hello\n");
		close(fd);
		assert_int_equal(lstat(fifo, &st), 0);
		assert_true(S_ISFIFO(st.st_mode));
	}
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(write_file_atomic(file, "a", 1, 0644, &err), 0);
	assert_int_equal(write_file_atomic(file, "bc", 2, 0644, &err), 0);
	assert_int_equal(stat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 2);
	unlink(file);
	unlink(link);
	unlink(fifo);
	rmdir(dir);
	free(file);
	free(link);
	free(fifo);
}

/*
 * pw_home and pw_login answer from the password database reentrantly:
 * pool threads resolve "~user" and default keys at once, and getpwnam's
 * one static result (what config-keys.c, sshconfig.c and ssh-auth.c
 * called before issue 29) would be overwritten by another thread's.
 */
static void
test_passwd_lookups_in_threads(void **state)
{
	struct passwd pw, *res;
	char buf[4096];
	pthread_t t[4];
	int bad[4] = { 0 }, i;
	char *s;

	(void)state;
	assert_int_equal(getpwnam_r("root", &pw, buf, sizeof buf, &res), 0);
	assert_non_null(res);
	snprintf(want_root, sizeof want_root, "%s", pw.pw_dir);
	assert_int_equal(getpwnam_r("daemon", &pw, buf, sizeof buf, &res), 0);
	assert_non_null(res);
	snprintf(want_daemon, sizeof want_daemon, "%s", pw.pw_dir);
	assert_string_not_equal(want_root, want_daemon);
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, ask_homes,
		    &bad[i]), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(bad[i], 0);
	}
	assert_null(pw_home("no-such-user-seqorch"));
	assert_int_equal(getpwuid_r(getuid(), &pw, buf, sizeof buf, &res), 0);
	assert_non_null(res);
	s = pw_login();
	assert_string_equal(s, pw.pw_name);
	free(s);
	s = pw_home(NULL);
	assert_string_equal(s, pw.pw_dir);
	free(s);
}

/*
 * ALLOC_GROW from NULL across the doublings (8, 16, ... 1024): earlier
 * elements survive each move, every new one arrives zeroed (the report's
 * rows rely on it), and a write to each lands in the room (ASan under
 * make sanitize).
 */
static void
test_alloc_grow(void **state)
{
	struct pair {
		int64_t	 a;
		char	 b[3];
	} *v = NULL;
	size_t n = 0, i;

	(void)state;
	while (n < 1000) {
		ALLOC_GROW(v, n);
		assert_int_equal(v[n].a, 0);
		assert_memory_equal(v[n].b, "\0\0\0", 3);
		v[n].a = (int64_t)n * 7;
		memcpy(v[n++].b, "xyz", 3);
	}
	for (i = 0; i < n; i++) {
		assert_int_equal(v[i].a, (int64_t)i * 7);
		assert_memory_equal(v[i].b, "xyz", 3);
	}
	free(v);
}

/* Doubling from 4 KiB, capped at max, and never a one-byte step near it. */
static void
test_grow_size(void **state)
{
	size_t cap = 0, steps = 0;

	(void)state;
	assert_int_equal(grow_size(0, 1, 1 << 20), 4096);
	assert_int_equal(grow_size(4096, 4097, 1 << 20), 8192);
	assert_int_equal(grow_size(0, 100, 1000), 1000);
	assert_int_equal(grow_size(5000, 5001, 8000), 8000);
	assert_int_equal(grow_size(4096, 40000, 1 << 20), 65536);
	while (cap < 3000000) {
		cap = grow_size(cap, cap + 1, 3000000);
		steps++;
	}
	assert_int_equal(cap, 3000000);
	assert_true(steps <= 11);
}

static void
test_parse_count(void **state)
{
	static const struct { const char *s; int64_t v; } ok[] = {
		{ "1000000", 1000000 }, { "1e6", 1000000 }, { "10M", 10000000 },
		{ "2.5M", 2500000 }, { "1.1M", 1100000 }, { "3k", 3000 },
		{ "1G", 1000000000 }, { "2.5e3", 2500 }, { "1E2", 100 },
		{ "3K", 3000 },
	};
	static const char *const bad[] = {
		"", "1.5", "2.5k7", "0x10", "inf", "nan", " 5", "5 ", "1m",
		"1MM", "M", "-1", "1e-3", "2.0001k", "1e12", "0", "1.2345k",
	};
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_int_equal(parse_count(ok[i].s, 1, 100000000000LL, &v),
		    0);
		assert_int_equal(v, ok[i].v);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(parse_count(bad[i], 1, 100000000000LL, &v),
		    SO_EINVAL);
}

/* The nearest of words to name, as nearest_try and nearest_word find it. */
static const char *
near(const char *name, const char *const *words)
{
	static struct nearest n;

	n = (struct nearest)NEAREST_INIT(name);
	for (; *words != NULL; words++)
		nearest_try(&n, *words);
	return nearest_word(&n);
}

static void
test_nearest_word(void **state)
{
	static const char *const opts[] = { "run", "latest", "study", "db",
	    "format", "output", "help", NULL };
	static const char *const hosts[] = { "local", "genoa", "graviton",
	    NULL };
	const char *w;

	(void)state;
	assert_string_equal(near("formt", opts), "format");
	assert_string_equal(near("fromat", opts), "format");
	assert_string_equal(near("lcoal", hosts), "local");
	assert_string_equal(near("grav", hosts), "graviton");
	w = near("x", hosts);
	assert_null(w);
	w = near("zzzzzz", opts);
	assert_null(w);
	/* One edit on a name under five letters: "dd" is "db", "xy" none. */
	assert_string_equal(near("dd", opts), "db");
	w = near("xy", opts);
	assert_null(w);
	w = near("xml", (const char *const[]){ "html", "json", NULL });
	assert_null(w);
}

static void
test_list_has(void **state)
{
	(void)state;
	assert_true(list_has("password,publickey", ',', "publickey"));
	assert_true(list_has("publickey", ',', "publickey"));
	assert_true(list_has("-lcrypto  -lm", ' ', "-lm"));
	/* Items, not substrings: "key" is in neither list. */
	assert_false(list_has("publickey,keyboard-interactive", ',', "key"));
	assert_false(list_has("sha3,sha512", ',', "sha5"));
	/* The other separator does not split. */
	assert_false(list_has("-lcrypto,-lm", ' ', "-lm"));
	assert_false(list_has("", ',', ""));
	assert_false(list_has("a,b", ',', ""));
}

static void
test_line_value(void **state)
{
	char *v;

	(void)state;
	v = line_value("target=x86_64\nversion=gcc 12\n", "version");
	assert_string_equal(v, "gcc 12");
	free(v);
	/* The first line of key, to its end; the last without a newline. */
	v = line_value("a=1\na=2", "a");
	assert_string_equal(v, "1");
	free(v);
	v = line_value("x=\nsha.version=3.0", "sha.version");
	assert_string_equal(v, "3.0");
	free(v);
	v = line_value("x=", "x");
	assert_string_equal(v, "");
	free(v);
	/* A key is a whole name before "=", never a prefix or a value. */
	assert_null(line_value("versions=1\nv=version=2\n", "version"));
	assert_null(line_value(NULL, "a"));
	assert_null(line_value("", "a"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_grow_and_format),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_alloc_grow),
		cmocka_unit_test(test_shquote),
		cmocka_unit_test(test_oom_hook_runs_before_the_abort),
		cmocka_unit_test(test_grow_size),
		cmocka_unit_test(test_parse_count),
		cmocka_unit_test(test_nearest_word),
		cmocka_unit_test(test_list_has),
		cmocka_unit_test(test_line_value),
		cmocka_unit_test(test_cjson_allocates_through_xmalloc),
		cmocka_unit_test(test_write_file_atomic_to_a_fifo),
		cmocka_unit_test(test_passwd_lookups_in_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

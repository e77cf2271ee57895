/*
 * The download cache (http.c) against files planted in it: the cache
 * defaults to seqorch-cache beside results.db, so whoever can write there
 * is in docs/reliability.md's threat model.  A link at <sha256>.part is
 * never written through (before issue 29 a failed fetch truncated its
 * target, an import overwrote it), and a FIFO as the cache entry or the
 * .part is replaced or refused, never waited on: alarm() turns such a
 * hang into this test's failure.  Fetches go to 127.0.0.1:1, where
 * nothing listens.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch.h"
#include "http.h"
#include "unit-tmp.h"

/* "hello": its SHA-256 (hashlib.sha256(b"hello")) and size. */
#define HELLO_SHA "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define HELLO_LEN 5
#define NOWHERE "http://127.0.0.1:1/hello"

static char tmpdir[] = "/tmp/seqorch-test-http.XXXXXX";
static char *cache, *src, *victim;

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *
slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A fresh cache directory and a victim file outside it. */
static int
fresh(void **state)
{
	char *cmd = xasprintf("rm -rf '%s' && mkdir '%s'", cache, cache);

	(void)state;
	if (system(cmd) != 0)
		return -1;
	free(cmd);
	put(victim, "precious");
	return 0;
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	cache = xasprintf("%s/cache", tmpdir);
	src = xasprintf("%s/hello", tmpdir);
	victim = xasprintf("%s/victim", tmpdir);
	put(src, "hello");
	/* A hang is the failure these tests look for. */
	alarm(60);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unit_rmtree(tmpdir);
	free(cache);
	free(src);
	free(victim);
	return 0;
}

static void
test_part_link_is_not_followed(void **state)
{
	char *part = xasprintf("%s/%s.part", cache, HELLO_SHA), *path = NULL;
	struct so_err err;
	struct stat sb;

	(void)state;
	assert_int_equal(symlink(victim, part), 0);
	assert_int_equal(http_fetch(NOWHERE, HELLO_SHA, HELLO_LEN, cache, NULL,
	    &path, NULL, &err), SO_EIO);
	assert_non_null(strstr(err.msg, "is a symbolic link: refusing to "
	    "write through it"));
	assert_string_equal(slurp(victim), "precious");
	assert_int_equal(http_import(src, HELLO_SHA, HELLO_LEN, cache, &path,
	    &err), SO_EIO);
	assert_null(path);
	assert_string_equal(slurp(victim), "precious");
	/* The link stays what it was: nothing was renamed into the cache. */
	assert_int_equal(lstat(part, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	free(part);
}

static void
test_fifo_part_is_refused(void **state)
{
	char *part = xasprintf("%s/%s.part", cache, HELLO_SHA), *path = NULL;
	struct so_err err;

	(void)state;
	assert_int_equal(mkfifo(part, 0600), 0);
	assert_int_equal(http_import(src, HELLO_SHA, HELLO_LEN, cache, &path,
	    &err), SO_EIO);
	assert_non_null(strstr(err.msg, "is not a regular file: refusing to "
	    "write to it"));
	assert_int_equal(http_fetch(NOWHERE, HELLO_SHA, HELLO_LEN, cache, NULL,
	    &path, NULL, &err), SO_EIO);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	free(part);
}

/* A FIFO or a link under the cache entry's name is replaced. */
static void
test_planted_entry_is_replaced(void **state)
{
	char *entry = xasprintf("%s/%s", cache, HELLO_SHA), *path = NULL;
	struct so_err err;
	struct stat sb;

	(void)state;
	assert_int_equal(mkfifo(entry, 0600), 0);
	assert_int_equal(http_import(src, HELLO_SHA, HELLO_LEN, cache, &path,
	    &err), 0);
	assert_string_equal(path, entry);
	assert_int_equal(lstat(entry, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_string_equal(slurp(entry), "hello");
	free(path);
	assert_int_equal(unlink(entry), 0);
	assert_int_equal(symlink(src, entry), 0);
	assert_int_equal(http_import(src, HELLO_SHA, HELLO_LEN, cache, &path,
	    &err), 0);
	assert_int_equal(lstat(entry, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	free(path);
	free(entry);
}

/* fetch --from hashes its file first: a FIFO is refused, not read. */
static void
test_sha256_of_a_fifo(void **state)
{
	char *fifo = xasprintf("%s/fifo", cache), got[65];
	unsigned long long n;
	struct so_err err;

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(http_file_sha256(fifo, got, &n, &err), SO_EIO);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	assert_int_equal(http_file_sha256(src, got, &n, &err), 0);
	assert_string_equal(got, HELLO_SHA);
	assert_int_equal(n, HELLO_LEN);
	free(fifo);
}

/*
 * --openssl-version V names the pinned URL with V in place of its version,
 * V's --sha256 and no size; the pinned version stays the table's row.
 */
static void
test_named_version(void **state)
{
	const struct artifact_entry *a;
	struct fetch_choice c = { "openssl", "3.5.8", HELLO_SHA };
	struct artifact_entry e;
	struct so_err err;
	char *url;

	(void)state;
	for (a = artifact_table; strcmp(a->name, "openssl") != 0; a++)
		;
	assert_int_equal(fetch_choice_check(&c, &err), 0);
	fetch_choose(a, &c, &e, &url);
	assert_string_equal(e.url, "https://github.com/openssl/openssl/"
	    "releases/download/openssl-3.5.8/openssl-3.5.8.tar.gz");
	assert_ptr_equal(e.url, url);
	assert_string_equal(e.sha256, HELLO_SHA);
	assert_int_equal(e.size, 0);
	free(url);
	c.version = a->version;
	c.sha256 = NULL;
	assert_int_equal(fetch_choice_check(&c, &err), 0);
	fetch_choose(a, &c, &e, &url);
	assert_null(url);
	assert_string_equal(e.sha256, a->sha256);
	assert_int_equal(e.size, a->size);
	c.version = "3.5.8";
	assert_int_equal(fetch_choice_check(&c, &err), SO_EINVAL);
	assert_non_null(strstr(err.msg, "has no pinned SHA-256"));
	c.version = "3.5.8/../x";
	c.sha256 = HELLO_SHA;
	assert_int_equal(fetch_choice_check(&c, &err), SO_EINVAL);
}

/* Size 0, not pinned: the hash alone decides, and a wrong one is deleted. */
static void
test_size_not_pinned(void **state)
{
	char *path, *part = xasprintf("%s/%s.part", cache, HELLO_SHA);
	struct so_err err;

	(void)state;
	assert_int_equal(http_import(src, HELLO_SHA, 0, cache, &path, &err),
	    0);
	assert_string_equal(slurp(path), "hello");
	assert_int_equal(unlink(path), 0);
	free(path);
	put(src, "hello!");
	assert_int_equal(http_import(src, HELLO_SHA, 0, cache, &path, &err),
	    SO_ECHECKSUM);
	assert_non_null(strstr(err.msg, "expected any size with SHA-256 "
	    HELLO_SHA));
	assert_int_equal(access(part, F_OK), -1);
	free(part);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_part_link_is_not_followed, fresh),
		cmocka_unit_test_setup(test_fifo_part_is_refused, fresh),
		cmocka_unit_test_setup(test_planted_entry_is_replaced, fresh),
		cmocka_unit_test_setup(test_sha256_of_a_fifo, fresh),
		cmocka_unit_test_setup(test_named_version, fresh),
		cmocka_unit_test_setup(test_size_not_pinned, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

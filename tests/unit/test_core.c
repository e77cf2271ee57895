/*
 * Unit tests for the coordinator's core modules: the agent record parser,
 * the line reader, shell quoting, the workdir confinement of remote writes,
 * the local transport's file operations and the database migrations.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conn.h"
#include "db.h"
#include "disasm.h"
#include "proto.h"
#include "strbuf.h"

#define SAMPLE "{\"type\":\"sample\",\"study\":\"sha3\",\"variant\":\"c-fused\"," \
	"\"sample\":0,\"position\":1,\"order\":1,\"steps\":1000,\"ns\":12345," \
	"\"digest\":\"52cf48e88ce4dea40f272b6aaf083675ade26504a0129f51ec30204a2fdb1c5b\"," \
	"\"seed\":\"00\",\"calib_mhz\":3400.5,\"calib_after_mhz\":3390,\"cpu\":1,\"build_id\":\"7\"," \
	"\"cycles\":null,\"instructions\":null,\"cycles_source\":\"calibration\",\"reason\":null}"

static int
parse(const char *line, struct so_err *err)
{
	struct record r;
	int rc = proto_parse(line, strlen(line), &r, err);

	if (rc == 0)
		proto_record_free(&r);
	return rc;
}

static void
test_sample_ok(void **state)
{
	struct record r;
	struct so_err err;

	(void)state;
	assert_int_equal(proto_parse(SAMPLE, strlen(SAMPLE), &r, &err), 0);
	assert_int_equal(r.type, REC_SAMPLE);
	assert_string_equal(r.variant, "c-fused");
	assert_int_equal(r.position, 1);
	assert_int_equal(r.ns, 12345);
	assert_true(r.calib_mhz > 3400 && r.calib_mhz < 3401);
	assert_true(r.calib_after_mhz == 3390);
	proto_record_free(&r);
}

/* Replace the first occurrence of from in SAMPLE with to. */
static char *
mutate(const char *from, const char *to)
{
	const char *p = strstr(SAMPLE, from);

	assert_non_null(p);
	return xasprintf("%.*s%s%s", (int)(p - SAMPLE), SAMPLE, to,
	    p + strlen(from));
}

static void
test_sample_rejected(void **state)
{
	static const struct { const char *from, *to, *msg; } cases[] = {
		{ "\"ns\":12345", "\"ns\":\"12345\"", "\"ns\" must be an integer" },
		{ "\"ns\":12345", "\"ns\":12.5", "\"ns\" must be an integer" },
		{ "\"ns\":12345", "\"ns\":0", "\"ns\" must be an integer >= 1" },
		{ "\"sample\":0", "\"sample\":-1", "\"sample\" must be" },
		{ "\"digest\":\"52", "\"digest\":\"5G", "lowercase hex" },
		{ "\"digest\":\"52", "\"digest\":\"5", "lowercase hex" },
		{ "\"digest\":\"52", "\"digest\":\"A2", "lowercase hex" },
		{ "\"cpu\":1", "\"cpu\":1,\"evil\":2", "unknown field \"evil\"" },
		{ ",\"cpu\":1", "", "missing field \"cpu\"" },
		{ "\"type\":\"sample\"", "\"type\":\"sampel\"",
		    "unknown record type" },
		{ "\"calib_mhz\":3400.5", "\"calib_mhz\":null",
		    "\"calib_mhz\" must be a non-negative number" },
		{ "\"calib_after_mhz\":3390", "\"calib_after_mhz\":-1",
		    "\"calib_after_mhz\" must be a non-negative number" },
		{ ",\"calib_after_mhz\":3390", "",
		    "missing field \"calib_after_mhz\"" },
	};
	struct so_err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *line = mutate(cases[i].from, cases[i].to);

		err.msg[0] = '\0';
		assert_int_equal(parse(line, &err), SO_EPROTO);
		if (strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg,
			    cases[i].msg);
		free(line);
	}
	assert_int_equal(parse("not json", &err), SO_EPROTO);
	assert_int_equal(parse("[1,2]", &err), SO_EPROTO);
	assert_int_equal(parse("{\"type\":\"hello\",\"proto\":1,\"agent\":"
	    "\"x\",\"build_id\":\"\",\"study\":\"sha3\",\"steps\":1,"
	    "\"samples\":1}", &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "protocol 1"));
}

static int
count_line(void *arg, char *line, size_t len)
{
	int *n = arg;

	assert_int_equal(strlen(line), len);
	(*n)++;
	return 0;
}

static void
test_line_reader(void **state)
{
	struct line_reader *r = calloc(1, sizeof *r);
	struct so_err err;
	char *big;
	int n = 0;

	(void)state;
	assert_int_equal(line_feed(r, "ab\ncd", 5, count_line, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(line_feed(r, "e\n", 2, count_line, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r->offset, 7);
	big = malloc(PROTO_MAX_LINE + 1);
	memset(big, 'x', PROTO_MAX_LINE + 1);
	assert_int_equal(line_feed(r, big, PROTO_MAX_LINE + 1, count_line, &n,
	    &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "line 3 is longer than 65536"));
	free(big);
	free(r);
}

/* Fails the second line with rc, the message carrying a control byte. */
static int
fail_line(void *arg, char *line, size_t len)
{
	struct so_err *err = arg;

	(void)len;
	if (strcmp(line, "second") != 0)
		return 0;
	return so_error(err, err->code, "bad\x1b[2Jrecord");
}

/*
 * line_feed puts the line's number in front of a fault in the line and
 * makes every failure printable; the agent's own error record (SO_EAGENT)
 * stays its words.
 */
static void
test_line_reader_errors(void **state)
{
	struct line_reader *r = calloc(1, sizeof *r);
	struct so_err err = { .code = SO_EPROTO };

	(void)state;
	assert_int_equal(line_feed(r, "first\nsecond\n", 13, fail_line, &err,
	    &err), SO_EPROTO);
	assert_string_equal(err.msg, "agent output line 2: bad?[2Jrecord");
	memset(r, 0, sizeof *r);
	err.code = SO_EAGENT;
	assert_int_equal(line_feed(r, "first\nsecond\n", 13, fail_line, &err,
	    &err), SO_EAGENT);
	assert_string_equal(err.msg, "bad\x1b[2Jrecord");
	/* The coordinator's own failure is not about the agent's output. */
	memset(r, 0, sizeof *r);
	err.code = SO_EDB;
	assert_int_equal(line_feed(r, "first\nsecond\n", 13, fail_line, &err,
	    &err), SO_EDB);
	assert_string_equal(err.msg, "bad?[2Jrecord");
	free(r);
}

/*
 * A word quoted by strbuf_add_shquoted (remote.c's one quoting), given to a
 * real shell, must come back unchanged.
 */
static void
test_sh_quote(void **state)
{
	static const char *const words[] = {
		"plain", "with space", "it's", "'", "''", "$(touch /tmp/x)",
		"`id`", "a;b|c&d", "\"dq\"", "back\\slash", "", "new\nline",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		struct strbuf cmd = STRBUF_INIT;
		char out[256] = "";
		FILE *p;
		size_t n;

		strbuf_addstr(&cmd, "printf '%s' ");
		strbuf_add_shquoted(&cmd, words[i]);
		p = popen(cmd.buf, "r");
		assert_non_null(p);
		n = fread(out, 1, sizeof out - 1, p);
		out[n] = '\0';
		assert_int_equal(WEXITSTATUS(pclose(p)), 0);
		assert_string_equal(out, words[i]);
		strbuf_release(&cmd);
	}
}

static void
test_put_confined(void **state)
{
	struct host h = { .name = "local", .transport = TRANSPORT_LOCAL };
	char dir[] = "/tmp/seqorch-unit-XXXXXX";
	struct conn *c;
	struct so_err err;
	char *inside, *outside, *dotdot;

	(void)state;
	assert_non_null(mkdtemp(dir));
	h.workdir = dir;
	assert_int_equal(conn_open(&h, 0, &c, &err), 0);
	inside = xasprintf("%s/f", dir);
	outside = xasprintf("%s-other/f", dir);
	dotdot = xasprintf("%s/../f", dir);
	assert_int_equal(conn_put(c, inside, "x", 1, 0644, &err), 0);
	assert_int_equal(access(inside, F_OK), 0);
	assert_int_equal(conn_put(c, outside, "x", 1, 0644, &err), SO_EINVAL);
	assert_non_null(strstr(err.msg, "outside workdir"));
	assert_int_equal(conn_put(c, dotdot, "x", 1, 0644, &err), SO_EINVAL);
	assert_int_equal(conn_put(c, "relative", "x", 1, 0644, &err),
	    SO_EINVAL);
	unlink(inside);
	rmdir(dir);
	conn_close(c);
	free(dotdot);
	free(outside);
	free(inside);
}

/*
 * A command's captured output takes the room it needs, not its limit:
 * before issue 29 every capture allocated max (up to 8 MiB) up front.
 * Output that grows past the first room arrives whole; past max, it is
 * refused.
 */
static void
test_capture_grows(void **state)
{
	struct host h = { .name = "local", .transport = TRANSPORT_LOCAL };
	char dir[] = "/tmp/seqorch-unit-XXXXXX";
	struct conn *c;
	struct so_err err;
	char *out;
	size_t i;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	h.workdir = dir;
	assert_int_equal(conn_open(&h, 0, &c, &err), 0);
	assert_int_equal(conn_capture(c, "echo hi", 8u << 20, &out, &status,
	    &err), 0);
	assert_string_equal(out, "hi\n");
	assert_true(malloc_usable_size(out) < 64 * 1024);
	free(out);
	assert_int_equal(conn_capture(c, "head -c 100000 /dev/zero | tr "
	    "'\\0' x", 8u << 20, &out, &status, &err), 0);
	assert_int_equal(strlen(out), 100000);
	for (i = 0; i < 100000; i++)
		if (out[i] != 'x')
			fail_msg("byte %zu is %d", i, out[i]);
	free(out);
	assert_int_equal(conn_capture(c, "true", 16, &out, &status, &err), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(conn_capture(c, "head -c 100000 /dev/zero", 65536,
	    &out, &status, &err), SO_EPROTO);
	assert_non_null(strstr(err.msg, "is longer than 65536 bytes"));
	conn_close(c);
	rmdir(dir);
}

/* The warm-path file operations: tails, missing files, modes, mkdir -p. */
static void
test_read_stat_workdir(void **state)
{
	struct host h = { .name = "local", .transport = TRANSPORT_LOCAL };
	char dir[] = "/tmp/seqorch-unit-XXXXXX";
	struct conn *c;
	struct so_err err;
	char *wd, *f, *out, *cmd;
	size_t len;
	mode_t old;
	int mode;

	(void)state;
	assert_non_null(mkdtemp(dir));
	wd = xasprintf("%s/a/b/../c", dir);
	h.workdir = wd;
	assert_int_equal(conn_open(&h, 0, &c, &err), 0);
	/* Created with its parents and resolved: no ".." left. */
	free(wd);
	wd = xasprintf("%s/a/c", dir);
	assert_string_equal(c->workdir, wd);
	f = xasprintf("%s/f", wd);
	assert_int_equal(conn_put(c, f, "0123456789", 10, 0750, &err), 0);
	assert_int_equal(conn_read(c, f, 64, &out, &len, &err), 0);
	assert_int_equal(len, 10);
	assert_string_equal(out, "0123456789");
	free(out);
	assert_int_equal(conn_read(c, f, 4, &out, &len, &err), 0);
	assert_int_equal(len, 4);
	assert_string_equal(out, "6789");
	free(out);
	assert_int_equal(conn_stat(c, f, &mode, &err), 0);
	assert_int_equal(mode, 0750);
	/* The mode is exact whatever the umask, as over SFTP. */
	old = umask(077);
	assert_int_equal(conn_put(c, f, "x", 1, 0644, &err), 0);
	umask(old);
	assert_int_equal(conn_stat(c, f, &mode, &err), 0);
	assert_int_equal(mode, 0644);
	free(f);
	f = xasprintf("%s/missing", wd);
	assert_int_equal(conn_read(c, f, 64, &out, &len, &err), SO_ENOTFOUND);
	assert_int_equal(conn_stat(c, f, &mode, &err), SO_ENOTFOUND);
	free(f);
	f = xasprintf("%s/../f", wd);
	assert_int_equal(conn_read(c, f, 64, &out, &len, &err), SO_EINVAL);
	assert_non_null(strstr(err.msg, "outside workdir"));
	assert_int_equal(conn_stat(c, "/etc/passwd", &mode, &err), SO_EINVAL);
	conn_close(c);
	free(f);
	/* A workdir that is a file is an error naming it. */
	h.workdir = f = xasprintf("%s/plain", dir);
	assert_int_equal(close(creat(f, 0644)), 0);
	assert_int_equal(conn_open(&h, 0, &c, &err), SO_EIO);
	assert_non_null(strstr(err.msg, "is not a directory"));
	cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(f);
	free(wd);
}

static void
test_db_migrations(void **state)
{
	char path[] = "/tmp/seqorch-unit-db-XXXXXX";
	struct db *db;
	struct so_err err;
	sqlite3 *h;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(db_open(path, &db, &err), 0);
	db_close(db);
	/* Opening again applies nothing twice. */
	assert_int_equal(db_open(path, &db, &err), 0);
	db_close(db);
	/* A database from a newer seqorch is refused, not damaged. */
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 999", NULL,
	    NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(db_open(path, &db, &err), SO_EDB);
	assert_non_null(strstr(err.msg, "newer than this seqorch"));
	assert_true(db_schema_version() >= 1);
	unlink(path);
}

static void
test_db_sample_once(void **state)
{
	char path[] = "/tmp/seqorch-unit-db-XXXXXX";
	struct run_info ri = { .study = "sha3", .steps = 10, .samples = 1,
	    .command = "seqorch run", .seed = "00", .hosts = "all" };
	struct build_info b = { .host = "h", .compiler = "cc", .cflags = "-O3",
	    .status = "ok" };
	struct sample_row s = { .host = "h", .study = "sha3",
	    .variant = "c-fused", .steps = 10, .ns = 100, .digest = "ab",
	    .seed = "00", .valid = 1, .cpu = 1 };
	struct db *db;
	struct so_err err;
	int64_t run_id, build_id;
	int fd = mkstemp(path);

	(void)state;
	close(fd);
	assert_int_equal(db_open(path, &db, &err), 0);
	assert_int_equal(db_run_begin(db, &ri, &run_id, &err), 0);
	assert_int_equal(db_build_insert(db, run_id, &b, &build_id, &err), 0);
	s.build_id = build_id;
	assert_int_equal(db_sample_insert(db, run_id, &s, &err), 0);
	/* A re-sent record (after a reconnect) is recognised, not stored. */
	assert_int_equal(db_sample_insert(db, run_id, &s, &err), SO_EBUSY);
	db_close(db);
	unlink(path);
}

static void
test_disasm_find(void **state)
{
	static const char body[] =
	    "    b0b7:\tvpternlogq $0x96,%xmm2,%xmm25,%xmm15\n"
	    "    b0c1:\tvprolq $0x1,%xmm3,%xmm4\n"
	    "    b0c9:\tvprolvq %xmm1,%xmm2,%xmm3\n"
	    "  400a10:\teor3\tv0.16b, v1.16b, v2.16b, v3.16b\n";
	const char *l;

	(void)state;
	l = disasm_find(body, "vprolq");
	assert_non_null(l);
	assert_non_null(strstr(l, "b0c1"));
	/* A mnemonic is a whole word: vprol is no instruction here. */
	assert_null(disasm_find(body, "vprol"));
	assert_null(disasm_find(body, "vpxor"));
	assert_non_null(disasm_find(body, "eor3"));
	/* Operands never count as the instruction. */
	assert_null(disasm_find(body, "v0.16b,"));
}

/*
 * llvm-objdump on Mach-O (Xcode's objdump) prints Apple's NEON syntax,
 * the arrangement on the mnemonic; both syntaxes print umov of an s or d
 * lane as "mov" (lines as llvm-objdump 14 and aarch64 GNU objdump print
 * them for clang -target arm64-apple-macos14 and gcc objects).
 */
static void
test_disasm_find_apple(void **state)
{
	static const char apple[] =
	    "      b8:      \tmov.16b\tv17, v5\n"
	    "      bc:      \tmla.4s\tv17, v0, v3\n"
	    "     1f4:      \teor3.16b\tv16, v0, v5, v10\n"
	    "     200:      \tb.ne\t0x120 <_chain+0xa0>\n";
	static const char lane_apple[] = "       0:      \tmov.s\tw0, v0[1]\n";
	static const char lane_gnu[] = "   0:\tmov\tw0, v0.s[1]\n";
	static const char byte_apple[] = "       8:      \tumov.b\tw0, v0[3]\n";
	static const char plain[] = "  10:\tmov\tw0, w1\n"
	    "  14:\tmov\tv0.16b, v1.16b\n";

	(void)state;
	assert_non_null(disasm_find(apple, "mla"));
	assert_non_null(disasm_find(apple, "eor3"));
	assert_non_null(disasm_find(apple, "mla.4s"));
	/* A condition is not an arrangement: b.ne is not b. */
	assert_null(disasm_find(apple, "b"));
	assert_non_null(disasm_find(apple, "b.ne"));
	assert_non_null(disasm_find(lane_apple, "umov"));
	assert_non_null(disasm_find(lane_gnu, "umov"));
	assert_non_null(disasm_find(byte_apple, "umov"));
	/* A register move or a vector copy is no lane extraction. */
	assert_null(disasm_find(plain, "umov"));
}

/* Mach-O symbols carry a leading underscore; ELF's own name comes first. */
static void
test_disasm_body_macho(void **state)
{
	static const char dump[] =
	    "0000000000000080 <_mul32_neon_rounds>:\n"
	    "      bc:      \tmla.4s\tv17, v0, v3\n"
	    "\n";
	char *body;

	(void)state;
	body = disasm_body(dump, "mul32_neon_rounds");
	assert_non_null(body);
	assert_non_null(disasm_find(body, "mla"));
	free(body);
	assert_null(disasm_body(dump, "neon_rounds"));
}

/* A function's cold part placed first does not hide its hot body. */
static void
test_disasm_body(void **state)
{
	static const char dump[] =
	    "0000000000001000 <chain.cold>:\n"
	    "    1000:\tud2\n"
	    "\n"
	    "0000000000001010 <chain_other>:\n"
	    "    1010:\tvpxor %xmm0,%xmm0,%xmm0\n"
	    "\n"
	    "0000000000002000 <chain>:\n"
	    "    2000:\tvprolq $0x1,%xmm3,%xmm4\n"
	    "    2008:\tret\n";
	char *body;

	(void)state;
	body = disasm_body(dump, "chain");
	assert_non_null(body);
	assert_non_null(disasm_find(body, "ud2"));
	assert_non_null(disasm_find(body, "vprolq"));
	/* Another function sharing the prefix is not part of it. */
	assert_null(disasm_find(body, "vpxor"));
	free(body);
	assert_null(disasm_body(dump, "missing"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_ok),
		cmocka_unit_test(test_sample_rejected),
		cmocka_unit_test(test_line_reader),
		cmocka_unit_test(test_line_reader_errors),
		cmocka_unit_test(test_sh_quote),
		cmocka_unit_test(test_put_confined),
		cmocka_unit_test(test_read_stat_workdir),
		cmocka_unit_test(test_capture_grows),
		cmocka_unit_test(test_db_migrations),
		cmocka_unit_test(test_db_sample_once),
		cmocka_unit_test(test_disasm_find),
		cmocka_unit_test(test_disasm_body),
		cmocka_unit_test(test_disasm_find_apple),
		cmocka_unit_test(test_disasm_body_macho),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

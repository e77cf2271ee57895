/* Error carrier, allocation wrappers and small parsing helpers. */
#include "util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int
so_error(struct so_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

static void (*oom_hook)(size_t);

void
so_set_oom_hook(void (*hook)(size_t n))
{
	oom_hook = hook;
}

static void
oom(size_t n)
{
	void (*hook)(size_t) = oom_hook;

	fprintf(stderr, "seqorch: out of memory allocating %zu bytes\n", n);
	/* Once: the hook itself may run out. */
	oom_hook = NULL;
	if (hook != NULL)
		hook(n);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void
so_json_hooks(void)
{
	cJSON_Hooks hooks = { xmalloc, free };

	cJSON_InitHooks(&hooks);
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom(n * size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		oom(n);
	return q;
}

void *
xgrow(void *array, size_t n, size_t size)
{
	size_t room;

	/* Full at 8 and each power of two above it: double the room. */
	if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) {
		room = n == 0 ? 8 : 2 * n;
		if (size != 0 && room > SIZE_MAX / size)
			oom(SIZE_MAX);
		array = xrealloc(array, room * size);
	}
	memset((char *)array + n * size, 0, size);
	return array;
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);

	memcpy(p, s, n);
	return p;
}

size_t
grow_size(size_t cap, size_t need, size_t max)
{
	if (cap < 4096)
		cap = 4096;
	while (cap < need)
		cap = cap > max / 2 ? max : cap * 2;
	return cap > max ? max : cap;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom(0);
	p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

int
parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	/* strtoll would skip leading blanks: " 5" is not a number here. */
	if (s == NULL || (*s != '-' && *s != '+' && !isdigit((unsigned char)*s)))
		return SO_EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return SO_EINVAL;
	*out = v;
	return 0;
}

int
parse_count(const char *s, int64_t min, int64_t max, int64_t *out)
{
	static const char suffixes[] = "kKMG";
	char num[64], *end;
	size_t len;
	double v;

	if (parse_int64(s, min, max, out) == 0)
		return 0;
	/* Digits, a point and an exponent: strtod's hex and "inf" are not. */
	len = strspn(s, "0123456789.eE+-");
	if (len == 0 || !isdigit((unsigned char)s[0]) || len >= 40 ||
	    (s[len] != '\0' && (s[len + 1] != '\0' ||
	    strchr(suffixes, s[len]) == NULL)))
		return SO_EINVAL;
	/* "2.5M" is read as "2.5e6", so the value is rounded once. */
	snprintf(num, sizeof num, "%.*s%s", (int)len, s, s[len] == '\0' ? "" :
	    s[len] == 'k' || s[len] == 'K' ? "e3" : s[len] == 'M' ? "e6" :
	    "e9");
	errno = 0;
	v = strtod(num, &end);
	if (errno != 0 || *end != '\0' || !(v >= (double)min &&
	    v <= (double)max) || v >= 0x1p53 || v != (double)(int64_t)v)
		return SO_EINVAL;
	*out = (int64_t)v;
	return 0;
}

/*
 * Optimal string alignment distance (Levenshtein with adjacent swaps, as
 * git's help.c weighs them): "reprot" is 1 from "report".  Names are
 * short; longer ones are far from everything anyway.
 */
static size_t
distance(const char *a, const char *b)
{
	size_t d[3][33], la = strlen(a), lb = strlen(b), i, j, v;

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *row = d[i % 3], *up = d[(i - 1) % 3],
		    *up2 = d[(i + 1) % 3];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			v = up[j - 1] + (a[i - 1] != b[j - 1]);
			if (up[j] + 1 < v)
				v = up[j] + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && up2[j - 2] + 1 < v)
				v = up2[j - 2] + 1;
			row[j] = v;
		}
	}
	return d[la % 3][lb];
}

void
nearest_try(struct nearest *n, const char *word)
{
	size_t len = strlen(n->name), d;

	/* A prefix ("rep") is as near as one typo. */
	d = len > 1 && strncmp(word, n->name, len) == 0 ? 1 :
	    distance(n->name, word);
	if (d < n->bestd) {
		n->bestd = d;
		n->best = word;
	}
}

const char *
nearest_word(const struct nearest *n)
{
	/*
	 * Two edits on a word of five letters or more; one on shorter, where
	 * two would make "xml" "html".
	 */
	return n->bestd <= (strlen(n->name) >= 5 ? 2u : 1u) ? n->best : NULL;
}

int
list_has(const char *list, int sep, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	if (n == 0)
		return 0;
	for (p = list; (p = strstr(p, w)) != NULL; p += n)
		if ((p == list || p[-1] == sep) && (p[n] == sep ||
		    p[n] == '\0'))
			return 1;
	return 0;
}

char *
line_value(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p += p != NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			p += klen + 1;
			return xasprintf("%.*s", (int)strcspn(p, "\n"), p);
		}
	return NULL;
}

void
hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
hex_decode(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	if (strlen(hex) != 2 * n)
		return SO_EPARSE;
	for (i = 0; i < n; i++) {
		int hi = hexval((unsigned char)hex[2 * i]);
		int lo = hexval((unsigned char)hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return SO_EPARSE;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void
iso_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* A field of user's (NULL: the real uid's) passwd entry: home or name. */
static char *
pw_field(const char *user, int name)
{
	struct passwd pw, *res = NULL;
	char *buf = NULL, *out = NULL;
	const char *f;
	size_t len = 1024;
	int rc;

	for (;;) {
		buf = xrealloc(buf, len);
		rc = user != NULL ? getpwnam_r(user, &pw, buf, len, &res) :
		    getpwuid_r(getuid(), &pw, buf, len, &res);
		if (rc != ERANGE || len >= 1 << 20)
			break;
		len *= 2;
	}
	if (rc == 0 && res != NULL) {
		f = name ? pw.pw_name : pw.pw_dir;
		if (f != NULL && *f != '\0')
			out = xstrdup(f);
	}
	free(buf);
	return out;
}

char *
pw_home(const char *user)
{
	return pw_field(user, 0);
}

char *
pw_login(void)
{
	return pw_field(NULL, 1);
}

char *
user_home(void)
{
	const char *env = getenv("HOME");

	return env != NULL && *env != '\0' ? xstrdup(env) : pw_home(NULL);
}

void
strip_ctrl(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}


int
write_all(int fd, const void *data, size_t len, const char *name,
    struct so_err *err)
{
	const char *p = data;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return so_error(err, SO_EIO, "cannot write \"%s\": %s",
			    name, w < 0 ? strerror(errno) : "nothing written");
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int
make_dirs(const char *dir, struct so_err *err)
{
	char *p = xstrdup(dir), *s, c;
	int rc = 0;

	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		c = *s;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			rc = so_error(err, SO_EIO, "cannot create \"%s\": %s",
			    p, strerror(errno));
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

/* Free af's names and forget its descriptor. */
static void
atomic_release(struct atomic_file *af)
{
	free(af->tmp);
	free(af->path);
	memset(af, 0, sizeof *af);
	af->fd = -1;
}

int
atomic_open(const char *path, struct atomic_file *af, struct so_err *err)
{
	char *copy = xstrdup(path);
	struct stat st;
	int rc = 0;

	memset(af, 0, sizeof *af);
	af->fd = -1;
	af->path = xstrdup(path);
	/*
	 * A device or a pipe (-o /dev/null, /dev/stdout, a shell's >(...)) is
	 * written to: renamed over, /dev/null became a file of the output.
	 */
	if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) ||
	    S_ISFIFO(st.st_mode))) {
		if ((af->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
			rc = so_error(err, SO_EIO, "cannot write \"%s\": %s",
			    path, strerror(errno));
		goto out;
	}
	af->tmp = xasprintf("%s/.seqorch.XXXXXX", dirname(copy));
	if ((af->fd = mkstemp(af->tmp)) < 0)
		rc = so_error(err, SO_EIO, "cannot create a file beside \"%s\": "
		    "%s", path, strerror(errno));
out:
	free(copy);
	if (rc != 0)
		atomic_release(af);
	return rc;
}

int
atomic_commit(struct atomic_file *af, unsigned mode, struct so_err *err)
{
	const char *name = af->tmp != NULL ? af->tmp : af->path;
	int rc = 0;

	if (af->tmp != NULL && (fchmod(af->fd, (mode_t)mode) != 0 ||
	    fsync(af->fd) != 0))
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", name,
		    strerror(errno));
	if (close(af->fd) != 0 && rc == 0)
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", name,
		    strerror(errno));
	af->fd = -1;
	/* rename replaces a link at path; it never writes through one. */
	if (rc == 0 && af->tmp != NULL && rename(af->tmp, af->path) != 0)
		rc = so_error(err, SO_EIO, "cannot replace \"%s\": %s",
		    af->path, strerror(errno));
	if (rc != 0 && af->tmp != NULL)
		unlink(af->tmp);
	atomic_release(af);
	return rc;
}

void
atomic_abort(struct atomic_file *af)
{
	if (af->fd >= 0)
		close(af->fd);
	if (af->tmp != NULL)
		unlink(af->tmp);
	atomic_release(af);
}

int
write_file_atomic(const char *path, const void *data, size_t len,
    unsigned mode, struct so_err *err)
{
	struct atomic_file af;
	int rc;

	if ((rc = atomic_open(path, &af, err)) != 0)
		return rc;
	if ((rc = write_all(af.fd, data, len, af.tmp != NULL ? af.tmp :
	    path, err)) != 0) {
		atomic_abort(&af);
		return rc;
	}
	return atomic_commit(&af, mode, err);
}

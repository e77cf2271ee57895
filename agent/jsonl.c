/* The agent's JSON lines writer and reader (jsonl.h). */
#include "jsonl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
put(struct jsonl *j, const char *s, size_t n)
{
	size_t cap;
	char *p;

	if (j->failed)
		return;
	/* Room for the closing braces jsonl_finish adds. */
	if (j->len + n + JSONL_DEPTH >= JSONL_MAX) {
		j->failed = 2;
		return;
	}
	if (j->len + n + JSONL_DEPTH >= j->cap) {
		cap = j->cap * 2;
		while (cap < j->len + n + JSONL_DEPTH + 1)
			cap *= 2;
		if ((p = realloc(j->buf, cap)) == NULL) {
			j->failed = 1;
			return;
		}
		j->buf = p;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void
puts_(struct jsonl *j, const char *s)
{
	put(j, s, strlen(s));
}

static void
putq(struct jsonl *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];

	put(j, "\"", 1);
	for (; *p != '\0'; p++) {
		switch (*p) {
		case '"': puts_(j, "\\\""); break;
		case '\\': puts_(j, "\\\\"); break;
		case '\n': puts_(j, "\\n"); break;
		case '\r': puts_(j, "\\r"); break;
		case '\t': puts_(j, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(esc, sizeof esc, "\\u%04x", *p);
				puts_(j, esc);
			} else
				put(j, (const char *)p, 1);
		}
	}
	put(j, "\"", 1);
}

/* The comma and key before a value at the current depth. */
static void
field(struct jsonl *j, const char *key)
{
	if (j->any[j->depth - 1])
		put(j, ",", 1);
	j->any[j->depth - 1] = 1;
	if (key != NULL) {
		putq(j, key);
		put(j, ":", 1);
	}
}

struct jsonl *
jsonl_new(const char *type)
{
	struct jsonl *j = calloc(1, sizeof *j);

	if (j == NULL || (j->buf = malloc(j->cap = 512)) == NULL) {
		free(j);
		return NULL;
	}
	j->buf[j->len++] = '{';
	j->close[0] = '}';
	j->depth = 1;
	jsonl_str(j, "type", type);
	return j;
}

void
jsonl_str(struct jsonl *j, const char *key, const char *s)
{
	field(j, key);
	if (s == NULL)
		puts_(j, "null");
	else
		putq(j, s);
}

void
jsonl_num(struct jsonl *j, const char *key, double v)
{
	char b[40];

	field(j, key);
	if (!isfinite(v))
		snprintf(b, sizeof b, "null");
	/* Integral, tested by a cast: floor() would need libm (-lm). */
	else if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
		snprintf(b, sizeof b, "%.0f", v);
	else {
		/* The shortest of the two that reads back as v. */
		snprintf(b, sizeof b, "%.15g", v);
		if (strtod(b, NULL) != v)
			snprintf(b, sizeof b, "%.17g", v);
	}
	puts_(j, b);
}

void
jsonl_u64(struct jsonl *j, const char *key, uint64_t v)
{
	char b[24];

	field(j, key);
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	puts_(j, b);
}

void
jsonl_int(struct jsonl *j, const char *key, long long v)
{
	char b[24];

	field(j, key);
	snprintf(b, sizeof b, "%lld", v);
	puts_(j, b);
}

void
jsonl_bool(struct jsonl *j, const char *key, int v)
{
	field(j, key);
	puts_(j, v ? "true" : "false");
}

void
jsonl_null(struct jsonl *j, const char *key)
{
	field(j, key);
	puts_(j, "null");
}

void
jsonl_open(struct jsonl *j, const char *key, char brace)
{
	field(j, key);
	if (j->depth == JSONL_DEPTH) {
		j->failed = 3;
		return;
	}
	put(j, brace == '[' ? "[" : "{", 1);
	j->close[j->depth] = brace == '[' ? ']' : '}';
	j->any[j->depth++] = 0;
}

void
jsonl_close(struct jsonl *j)
{
	if (j->depth > 1 && !j->failed) {
		j->depth--;
		put(j, &j->close[j->depth], 1);
	}
}

const char *
jsonl_finish(struct jsonl *j, const char **why)
{
	static const char *const whys[] = { "", "out of memory",
	    "record longer than the protocol's bound",
	    "record nested too deep" };

	while (!j->failed && j->depth > 0)
		j->buf[j->len++] = j->close[--j->depth];
	if (j->failed) {
		*why = whys[j->failed];
		return NULL;
	}
	j->buf[j->len] = '\0';
	return j->buf;
}

void
jsonl_free(struct jsonl *j)
{
	if (j == NULL)
		return;
	free(j->buf);
	free(j);
}

/* The reader: a recursive descent over one line, bounded by JSONL_DEPTH. */
struct rd {
	const char *s, *end, *p;
	char *why;
	size_t whylen;
	int failed;
};

static int __attribute__((format(printf, 2, 3)))
bad(struct rd *r, const char *fmt, ...)
{
	char msg[128];
	va_list ap;

	if (!r->failed) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		snprintf(r->why, r->whylen, "%s at byte %zu", msg,
		    (size_t)(r->p - r->s));
	}
	r->failed = 1;
	return -1;
}

static void
ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
	    *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int
hex4(struct rd *r, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++, r->p++) {
		char c = r->p < r->end ? *r->p : '\0';

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return bad(r, "invalid \\u escape");
	}
	return 0;
}

/*
 * A string at r->p (its opening quote), unescaped into out (size bytes,
 * NULL: only checked).  *fit is cleared when it did not fit.
 */
static int
string(struct rd *r, char *out, size_t size, int *fit)
{
	size_t n = 0;
	unsigned c, lo;
	char u[4];
	size_t ul, i;
	int raw;

	r->p++;
	for (;;) {
		if (r->p >= r->end)
			return bad(r, "unterminated string");
		c = (unsigned char)*r->p++;
		raw = 1;
		if (c == '"')
			break;
		if (c < 0x20)
			return bad(r, "control character in a string");
		if (c == '\\') {
			raw = 0;
			if (r->p >= r->end)
				return bad(r, "unterminated string");
			switch (*r->p++) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				if (hex4(r, &c) != 0)
					return -1;
				if (c >= 0xd800 && c < 0xdc00) {
					if (r->end - r->p < 6 || r->p[0] != '\\'
					    || r->p[1] != 'u')
						return bad(r, "lone surrogate");
					r->p += 2;
					if (hex4(r, &lo) != 0)
						return -1;
					if (lo < 0xdc00 || lo > 0xdfff)
						return bad(r, "lone surrogate");
					c = 0x10000 + ((c - 0xd800) << 10) +
					    (lo - 0xdc00);
				} else if (c >= 0xdc00 && c < 0xe000)
					return bad(r, "lone surrogate");
				if (c == 0)
					return bad(r, "NUL in a string");
				break;
			default:
				r->p--;
				return bad(r, "invalid escape");
			}
		}
		/* As the coordinator: agent text reaches terminals. */
		if (c < 0x20 || c == 0x7f)
			return bad(r, "control character 0x%02x in a string",
			    c);
		/* An escape's code point as UTF-8; the line's bytes as they are. */
		if (raw || c < 0x80)
			u[0] = (char)c, ul = 1;
		else if (c < 0x800)
			u[0] = (char)(0xc0 | c >> 6),
			u[1] = (char)(0x80 | (c & 0x3f)), ul = 2;
		else if (c < 0x10000)
			u[0] = (char)(0xe0 | c >> 12),
			u[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
			u[2] = (char)(0x80 | (c & 0x3f)), ul = 3;
		else
			u[0] = (char)(0xf0 | c >> 18),
			u[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
			u[2] = (char)(0x80 | ((c >> 6) & 0x3f)),
			u[3] = (char)(0x80 | (c & 0x3f)), ul = 4;
		for (i = 0; out != NULL && i < ul; i++) {
			if (n + 1 < size)
				out[n++] = u[i];
			else
				*fit = 0;
		}
	}
	if (out != NULL)
		out[n] = '\0';
	return 0;
}

static int
number(struct rd *r)
{
	const char *p = r->p;

	if (p < r->end && *p == '-')
		p++;
	if (p < r->end && *p == '0')
		p++;
	else if (p < r->end && *p >= '1' && *p <= '9')
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	else
		return bad(r, "invalid value");
	if (p < r->end && *p == '.') {
		if (++p >= r->end || *p < '0' || *p > '9')
			return bad(r, "invalid number");
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < r->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= r->end || *p < '0' || *p > '9')
			return bad(r, "invalid number");
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	r->p = p;
	return 0;
}

static int value(struct rd *r, int depth, struct jsonl_field *want,
    size_t n);

static int
literal(struct rd *r, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0)
		return bad(r, "invalid value");
	r->p += n;
	return 0;
}

/* An object or array at r->p; want only for the record's own object. */
static int
compound(struct rd *r, int depth, struct jsonl_field *want, size_t n)
{
	char close = *r->p == '{' ? '}' : ']', key[64];
	struct jsonl_field *f;
	size_t i;
	int fit;

	if (depth >= JSONL_DEPTH)
		return bad(r, "nested deeper than %d", JSONL_DEPTH);
	r->p++;
	ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	for (;;) {
		f = NULL;
		if (close == '}') {
			if (r->p >= r->end || *r->p != '"')
				return bad(r, "expected a field name");
			fit = 1;
			if (string(r, key, sizeof key, &fit) != 0)
				return -1;
			for (i = 0; fit && i < n; i++)
				if (strcmp(want[i].key, key) == 0)
					f = &want[i];
			ws(r);
			if (r->p >= r->end || *r->p != ':')
				return bad(r, "expected ':'");
			r->p++;
			ws(r);
		}
		if (f != NULL && !f->number && r->p < r->end &&
		    *r->p == '"') {
			fit = 1;
			if (string(r, f->val, f->size, &fit) != 0)
				return -1;
			f->found = fit ? 1 : -1;
		} else if (f != NULL && f->number && r->p < r->end &&
		    (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))) {
			const char *start = r->p;

			if (number(r) != 0)
				return -1;
			f->found = (size_t)(r->p - start) < f->size ? 1 : -1;
			if (f->found == 1) {
				memcpy(f->val, start, (size_t)(r->p - start));
				f->val[r->p - start] = '\0';
			}
		} else if (value(r, depth + 1, NULL, 0) != 0)
			return -1;
		ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			ws(r);
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return 0;
		}
		return bad(r, "expected ',' or '%c'", close);
	}
}

static int
value(struct rd *r, int depth, struct jsonl_field *want, size_t n)
{
	int fit = 1;

	if (r->p >= r->end)
		return bad(r, "missing value");
	switch (*r->p) {
	case '{':
	case '[':
		return compound(r, depth, want, n);
	case '"':
		return string(r, NULL, 0, &fit);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	default:
		return number(r);
	}
}

int
jsonl_read(const char *line, size_t len, struct jsonl_field *want,
    size_t n, char *why, size_t whylen)
{
	struct rd r = { line, line + len, line, why, whylen, 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		want[i].found = 0;
		if (want[i].size > 0)
			want[i].val[0] = '\0';
	}
	if (memchr(line, '\0', len) != NULL) {
		r.p = memchr(line, '\0', len);
		return bad(&r, "NUL byte");
	}
	ws(&r);
	if (r.p >= r.end || *r.p != '{')
		return bad(&r, "not a JSON object");
	if (compound(&r, 0, want, n) != 0)
		return -1;
	ws(&r);
	if (r.p != r.end)
		return bad(&r, "text after the record");
	return 0;
}

void
jsonl_excerpt(const char *s, size_t len, size_t max, char *out)
{
	static const char d[] = "0123456789abcdef";
	unsigned char b;
	size_t i, n = 0;

	for (i = 0; i < len && i < max; i++) {
		b = (unsigned char)s[i];
		if (b == '\\') {
			out[n++] = '\\';
			out[n++] = '\\';
		} else if (b >= 0x20 && b < 0x7f)
			out[n++] = (char)b;
		else {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = d[b >> 4];
			out[n++] = d[b & 15];
		}
	}
	out[n] = '\0';
}

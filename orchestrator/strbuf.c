/* Growable strings; see strbuf.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util.h"

char strbuf_empty[1];

void
strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
}

void
strbuf_release(struct strbuf *sb)
{
	if (sb->alloc != 0)
		free(sb->buf);
	strbuf_init(sb);
}

char *
strbuf_detach(struct strbuf *sb)
{
	char *s = sb->alloc != 0 ? sb->buf : xstrdup("");

	strbuf_init(sb);
	return s;
}

void
strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->buf[0] = '\0';
}

/* Room for extra more bytes plus the NUL. */
static void
strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1, n;

	if (want <= sb->alloc)
		return;
	n = sb->alloc < 64 ? 64 : sb->alloc;
	while (n < want)
		n *= 2;
	if (sb->alloc == 0) {
		sb->buf = xmalloc(n);
		sb->buf[0] = '\0';
	} else
		sb->buf = xrealloc(sb->buf, n);
	sb->alloc = n;
}

void
strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (len == 0)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void
strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void
strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	strbuf_add(sb, &ch, 1);
}

void
strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n <= 0)
		return;
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void
strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void
strbuf_join(struct strbuf *sb, const char *const *v, size_t n,
    const char *sep)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			strbuf_addstr(sb, sep);
		strbuf_addstr(sb, v[i]);
	}
}

void
strbuf_add_shquoted(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}

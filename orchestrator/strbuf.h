/*
 * A growable string (git's strbuf): append in amortized O(1) instead of
 * re-formatting the whole string on every step, and quote shell
 * arguments as they are appended.
 *
 * Ownership: a struct strbuf owns its buffer.  STRBUF_INIT or
 * strbuf_init() starts it empty (buf is "" and never NULL);
 * strbuf_release() frees it and leaves it empty again;
 * strbuf_detach() hands the NUL-terminated buffer to the caller, who
 * frees it with free().  Allocation failure aborts (util.h's xmalloc).
 */
#ifndef SEQORCH_STRBUF_H
#define SEQORCH_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;	/* NUL terminated; points at a static "" when alloc == 0 */
	size_t len;
	size_t alloc;
};

extern char strbuf_empty[];
#define STRBUF_INIT { strbuf_empty, 0, 0 }

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Returns the buffer (always heap, never NULL) and re-initializes sb. */
char *strbuf_detach(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Append n strings separated by sep. */
void strbuf_join(struct strbuf *sb, const char *const *v, size_t n,
    const char *sep);

/*
 * Append s single-quoted for a POSIX shell ('it'\''s'), so that the
 * remote /bin/sh sees exactly one word whatever s holds.
 */
void strbuf_add_shquoted(struct strbuf *sb, const char *s);

#endif

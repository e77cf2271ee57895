/*
 * One JSON document read a value at a time, from a region of a file or
 * from memory, with cJSON's own grammar: what cJSON_ParseWithLength
 * accepts of the whole document, and nothing else, is what these calls
 * accept of it piece by piece.  A value is parsed by cJSON from a window
 * of the bytes, moved on and grown as needed, so memory holds about the
 * largest value read, never the document (rows-doc.c reads rows.json so).
 *
 * The caller walks the containers it wants to see into with js_ws and
 * js_byte (mirroring cJSON's parse_object and parse_array) and has cJSON
 * parse the values inside with js_value; js_skip passes over any value
 * keeping no more than its largest string.  depth is always the number
 * of containers around the value, so that cJSON's nesting limit
 * (CJSON_NESTING_LIMIT) holds of the whole document.
 *
 * Calls return 0, JS_SYNTAX when the document is not JSON there, or a
 * negative SO_E* code (a read failed) with err filled in.
 */
#ifndef SEQORCH_JSON_STREAM_H
#define SEQORCH_JSON_STREAM_H

#include "util.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define JS_SYNTAX 1

struct jstream {
	int fd;				/* -1: the bytes are mem */
	uint64_t off, len;		/* the document: len bytes at off */
	const char *name;		/* for messages */
	unsigned char *buf;		/* the window's buffer (owned, or mem) */
	size_t cap;
	uint64_t base;			/* the document's offset of buf[0] */
	size_t pos, end;		/* the window: buf[pos..end) */
	struct so_err *err;
};

/* Over memory (not copied: it must outlive js) or len bytes at off of fd. */
void js_init_mem(struct jstream *js, const void *data, size_t len,
    const char *name, struct so_err *err);
void js_init_fd(struct jstream *js, int fd, uint64_t off, uint64_t len,
    const char *name, struct so_err *err);
void js_free(struct jstream *js);
/*
 * For tests: the size a window over a file starts at (0: the default,
 * 1 MiB); a few bytes make every value cross the window's end.
 */
void js_set_window(size_t bytes);

/* Go to offset at of the document; where the reader is. */
int js_seek(struct jstream *js, uint64_t at);
uint64_t js_tell(const struct jstream *js);

/*
 * Skip what cJSON skips as white space (bytes 0 to 32) and, in *c, the
 * byte after it, -1 at the document's end.  js_byte steps over it.
 */
int js_ws(struct jstream *js, int *c);
void js_byte(struct jstream *js);

/*
 * The value at the reader (after js_ws), parsed by cJSON, in *out (the
 * caller deletes it), or dropped when out is NULL.
 */
int js_value(struct jstream *js, int depth, cJSON **out);
/* The value at the reader, checked and passed over. */
int js_skip(struct jstream *js, int depth);
/*
 * The container at the reader passed over unchecked, by its brackets
 * outside strings: where valid JSON's ends, and much faster than
 * js_skip; what it passed over must be checked later (js_array).
 * JS_SYNTAX when the document ends first, which no JSON does.
 */
int js_pass(struct jstream *js);

/*
 * The members of the object at the reader (its '{' not yet read): for
 * each, member(arg, key, depth + 1) with the reader at the member's value,
 * which member reads (through js_value, js_skip, js_object...).  A nonzero
 * return of member stops the walk and is returned.
 */
int js_object(struct jstream *js, int depth,
    int (*member)(void *arg, const char *key, int depth), void *arg);
/* The same for an array's elements: element(arg, index, depth + 1). */
int js_array(struct jstream *js, int depth,
    int (*element)(void *arg, long index, int depth), void *arg);

#endif

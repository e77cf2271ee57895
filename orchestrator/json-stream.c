/*
 * One JSON document a value at a time, with cJSON's grammar (json-stream.h).
 * The containers walked here mirror cJSON 1.7's parse_object and
 * parse_array step for step (its white space is any byte up to 32); every
 * other value is cJSON's own parse of a window of the bytes.  A parse is
 * only taken when the window could not have changed it: it ended inside
 * the window, past any run of number bytes (cJSON copies a number's bytes
 * up to the first other one), or the window reaches the document's end;
 * else the window moves on (and grows, for a value longer than it) and
 * the value is parsed again.
 */
#include "json-stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t window = 1u << 20;

void
js_set_window(size_t bytes)
{
	window = bytes > 0 ? bytes : 1u << 20;
}

void
js_init_mem(struct jstream *js, const void *data, size_t len,
    const char *name, struct so_err *err)
{
	memset(js, 0, sizeof *js);
	js->fd = -1;
	js->len = len;
	js->name = name;
	js->buf = (unsigned char *)(uintptr_t)data;
	js->cap = js->end = len;
	js->err = err;
}

void
js_init_fd(struct jstream *js, int fd, uint64_t off, uint64_t len,
    const char *name, struct so_err *err)
{
	memset(js, 0, sizeof *js);
	js->fd = fd;
	js->off = off;
	js->len = len;
	js->name = name;
	js->cap = window;
	js->buf = xmalloc(js->cap);
	js->err = err;
}

void
js_free(struct jstream *js)
{
	if (js->fd >= 0)
		free(js->buf);
	js->buf = NULL;
}

static int
at_end(const struct jstream *js)
{
	return js->base + js->end >= js->len;
}

/*
 * More of the document after buf[pos..end), which moves to the start of
 * the buffer (grown when it is full of it): 1, 0 at the end, or an error.
 */
static int
refill(struct jstream *js)
{
	uint64_t left;
	size_t n;
	ssize_t r;

	if (js->fd < 0 || at_end(js))
		return 0;
	if (js->pos > 0) {
		memmove(js->buf, js->buf + js->pos, js->end - js->pos);
		js->base += js->pos;
		js->end -= js->pos;
		js->pos = 0;
	}
	if (js->end == js->cap) {
		js->cap *= 2;
		js->buf = xrealloc(js->buf, js->cap);
	}
	left = js->len - (js->base + js->end);
	n = js->cap - js->end < left ? js->cap - js->end : (size_t)left;
	while ((r = pread(js->fd, js->buf + js->end, n, (off_t)(js->off +
	    js->base + js->end))) < 0 && errno == EINTR)
		;
	if (r <= 0)
		return so_error(js->err, SO_EIO, "cannot read \"%s\": %s",
		    js->name, r < 0 ? strerror(errno) : "it shrank while read");
	js->end += (size_t)r;
	return 1;
}

int
js_seek(struct jstream *js, uint64_t at)
{
	if (at >= js->base && at <= js->base + js->end) {
		js->pos = (size_t)(at - js->base);
		return 0;
	}
	if (js->fd < 0 || at > js->len)
		return so_error(js->err, SO_EIO, "cannot read \"%s\": it shrank "
		    "while read", js->name);
	js->base = at;
	js->pos = js->end = 0;
	return 0;
}

uint64_t
js_tell(const struct jstream *js)
{
	return js->base + js->pos;
}

int
js_ws(struct jstream *js, int *c)
{
	int rc;

	for (;;) {
		while (js->pos < js->end && js->buf[js->pos] <= 32)
			js->pos++;
		if (js->pos < js->end) {
			*c = js->buf[js->pos];
			return 0;
		}
		if ((rc = refill(js)) < 0)
			return rc;
		if (rc == 0) {
			*c = -1;
			return 0;
		}
	}
}

void
js_byte(struct jstream *js)
{
	js->pos++;
}

/* Containers one in another, as cJSON counts them against its limit. */
static int
nesting(const cJSON *v)
{
	const cJSON *c;
	int n, max = 0;

	if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
		return 0;
	for (c = v->child; c != NULL; c = c->next)
		if ((n = nesting(c)) > max)
			max = n;
	return max + 1;
}

static int
number_byte(int c)
{
	return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' ||
	    c == 'E' || c == '.';
}

int
js_value(struct jstream *js, int depth, cJSON **out)
{
	const unsigned char *p;
	const char *stop = NULL;
	cJSON *item = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	for (;;) {
		if (js->pos == js->end) {
			if ((rc = refill(js)) < 0)
				return rc;
			if (rc == 0)
				return JS_SYNTAX;
			continue;
		}
		/*
		 * cJSON skips a byte order mark at the start of what it is
		 * given; only the document may start with one.
		 */
		if (js->buf[js->pos] == 0xef)
			return JS_SYNTAX;
		item = cJSON_ParseWithLengthOpts((const char *)js->buf + js->pos,
		    js->end - js->pos, &stop, 0);
		if (at_end(js))
			break;
		if (item != NULL) {
			for (p = (const unsigned char *)stop;
			    p < js->buf + js->end && number_byte(*p); p++)
				;
			if (p < js->buf + js->end)
				break;
		}
		cJSON_Delete(item);
		item = NULL;
		if ((rc = refill(js)) < 0)
			return rc;
	}
	if (item == NULL || nesting(item) > CJSON_NESTING_LIMIT - depth) {
		cJSON_Delete(item);
		return JS_SYNTAX;
	}
	js->pos = (size_t)((const unsigned char *)stop - js->buf);
	if (out != NULL)
		*out = item;
	else
		cJSON_Delete(item);
	return 0;
}

int
js_pass(struct jstream *js)
{
	const unsigned char *p, *e;
	long depth = 0;
	int in_string = 0, escaped = 0, rc;

	for (;;) {
		p = js->buf + js->pos;
		e = js->buf + js->end;
		for (; p < e; p++) {
			if (in_string) {
				if (escaped)
					escaped = 0;
				else if (*p == '\\')
					escaped = 1;
				else if (*p == '"')
					in_string = 0;
			} else if (*p == '"')
				in_string = 1;
			else if (*p == '[' || *p == '{')
				depth++;
			else if ((*p == ']' || *p == '}') && --depth == 0) {
				js->pos = (size_t)(p + 1 - js->buf);
				return 0;
			}
		}
		js->pos = js->end;
		if ((rc = refill(js)) < 0)
			return rc;
		if (rc == 0)
			return JS_SYNTAX;
	}
}

static int
skip_member(void *arg, const char *key, int depth)
{
	(void)key;
	return js_skip(arg, depth);
}

static int
skip_element(void *arg, long index, int depth)
{
	(void)index;
	return js_skip(arg, depth);
}

int
js_skip(struct jstream *js, int depth)
{
	int c, rc;

	if ((rc = js_ws(js, &c)) != 0)
		return rc;
	if (c == '{')
		return js_object(js, depth, skip_member, js);
	if (c == '[')
		return js_array(js, depth, skip_element, js);
	return js_value(js, depth, NULL);
}

/*
 * The items of the container at the reader, whose closing byte is close:
 * item(js, arg, index, depth + 1) reads each, with the reader at it.  The
 * steps of cJSON's parse_object and parse_array, which are the same: past
 * the opening byte, white space, an empty container's close, else items
 * each followed by white space and a comma but the last, then the close.
 */
static int
container(struct jstream *js, int depth, int close,
    int (*item)(struct jstream *js, void *arg, long index, int depth),
    void *arg)
{
	long i = 0;
	int c, rc;

	if (depth >= CJSON_NESTING_LIMIT)
		return JS_SYNTAX;
	js_byte(js);
	if ((rc = js_ws(js, &c)) != 0)
		return rc;
	if (c == close) {
		js_byte(js);
		return 0;
	}
	for (;;) {
		if ((rc = js_ws(js, &c)) != 0 ||
		    (rc = item(js, arg, i++, depth + 1)) != 0 ||
		    (rc = js_ws(js, &c)) != 0)
			return rc;
		if (c != ',')
			break;
		js_byte(js);
	}
	if (c != close)
		return JS_SYNTAX;
	js_byte(js);
	return 0;
}

struct walk {
	int (*member)(void *arg, const char *key, int depth);
	int (*element)(void *arg, long index, int depth);
	void *arg;
};

/* An object's member: its name (a string, nothing else), ':', its value. */
static int
member(struct jstream *js, void *arg, long index, int depth)
{
	struct walk *w = arg;
	cJSON *key;
	int c, rc;

	(void)index;
	if ((rc = js_ws(js, &c)) != 0)
		return rc;
	if (c != '"')
		return JS_SYNTAX;
	if ((rc = js_value(js, depth, &key)) != 0)
		return rc;
	if ((rc = js_ws(js, &c)) == 0 && c != ':')
		rc = JS_SYNTAX;
	if (rc == 0) {
		js_byte(js);
		if ((rc = js_ws(js, &c)) == 0)
			rc = w->member(w->arg, key->valuestring, depth);
	}
	cJSON_Delete(key);
	return rc;
}

static int
element(struct jstream *js, void *arg, long index, int depth)
{
	struct walk *w = arg;

	(void)js;
	return w->element(w->arg, index, depth);
}

int
js_object(struct jstream *js, int depth,
    int (*fn)(void *arg, const char *key, int depth), void *arg)
{
	struct walk w = { fn, NULL, arg };

	return container(js, depth, '}', member, &w);
}

int
js_array(struct jstream *js, int depth,
    int (*fn)(void *arg, long index, int depth), void *arg)
{
	struct walk w = { NULL, fn, arg };

	return container(js, depth, ']', element, &w);
}

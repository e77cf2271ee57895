/*
 * The agent's own JSON lines (docs/protocol.md): a writer of records, one
 * JSON object a line, and a bounded reader of such a line.  The agent
 * needs no JSON library: it writes only what the protocol defines, and
 * reads only its build agents' records (the conductor), so a C compiler
 * and libc build it.
 *
 * Ownership: jsonl_new's record is the caller's until jsonl_free (emit()
 * frees it); its text is the record's.  Strings passed in are copied.
 */
#ifndef SEQORCH_AGENT_JSONL_H
#define SEQORCH_AGENT_JSONL_H

#include <stddef.h>
#include <stdint.h>

/* A record's bound, as the coordinator and the conductor read them. */
#define JSONL_MAX	65536
/* Nesting of objects and arrays, the record's own object included. */
#define JSONL_DEPTH	8

/* A record being written: its fields in the order they are added. */
struct jsonl {
	char *buf;		/* "{...", without the closing brace */
	size_t len, cap;
	int depth;		/* open objects and arrays, the record's: 1 */
	unsigned char any[JSONL_DEPTH];	/* a value written at that depth */
	char close[JSONL_DEPTH];	/* what closes it: '}' or ']' */
	int failed;		/* out of memory or past JSONL_MAX */
};

/*
 * A new record {"type": type, ...}, or NULL when out of memory.  Every
 * adder below takes key NULL inside an array, a field name inside an
 * object; the string adders write null for a NULL s.
 */
struct jsonl *jsonl_new(const char *type);
void jsonl_str(struct jsonl *j, const char *key, const char *s);
/* A number: null when not finite (JSON has no NaN), integral as such. */
void jsonl_num(struct jsonl *j, const char *key, double v);
void jsonl_u64(struct jsonl *j, const char *key, uint64_t v);
void jsonl_int(struct jsonl *j, const char *key, long long v);
void jsonl_bool(struct jsonl *j, const char *key, int v);
void jsonl_null(struct jsonl *j, const char *key);
/* Open an object ('{') or array ('['), and close the innermost one. */
void jsonl_open(struct jsonl *j, const char *key, char brace);
void jsonl_close(struct jsonl *j);

/*
 * The record's line, every object and array closed, without a newline;
 * NULL when it failed (out of memory, deeper than JSONL_DEPTH or longer
 * than JSONL_MAX): then *why says which.  The text is the record's.
 */
const char *jsonl_finish(struct jsonl *j, const char **why);
void jsonl_free(struct jsonl *j);

/*
 * The first max bytes of s (len bytes) for a message, into out (4 * max
 * + 1 bytes): printable ASCII as it is (a backslash doubled), every other
 * byte as \xNN, so that the message shows what was sent and no terminal
 * sees it raw.  The conductor and the coordinator both show a build's
 * offending line so.
 */
void jsonl_excerpt(const char *s, size_t len, size_t max, char *out);

/*
 * A top-level field jsonl_read looks for, and where it goes: a string,
 * or with number a number (its text as the line has it).
 */
struct jsonl_field {
	const char *key;
	char *val;		/* its value, unescaped, NUL-terminated */
	size_t size;		/* bytes at val */
	int found;		/* 1: a value of its kind that fit; -1: too
				 * long; 0: none */
	int number;		/* a number is looked for, not a string */
};

/*
 * Read line (len bytes, no newline): 0 when it is exactly one JSON object
 * (RFC 8259, nested at most JSONL_DEPTH deep, no NUL bytes, no control
 * character in a string, escaped or not: the coordinator refuses those
 * too), its fields'
 * strings (numbers) named in want[0..n-1] copied out; -1 otherwise, with
 * the first problem and its byte offset in why.  Values of other keys, and
 * of these keys when they are not of their kind, are only checked.
 */
int jsonl_read(const char *line, size_t len, struct jsonl_field *want,
    size_t n, char *why, size_t whylen);

#endif

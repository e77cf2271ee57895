/*
 * TOML documents as cJSON trees, with source positions.
 *
 * toml.cc wraps toml++ (the project's only C++) behind this plain C API.
 * A document is converted once: tables become objects whose members are
 * in file order, arrays become arrays, strings and booleans map directly,
 * integers and floats become numbers and dates and times become strings
 * in their TOML spelling.  Because that loses some TOML types, toml_type()
 * reports the original one.  The line and column of every value, and of
 * the key that names each table member, are kept so that callers can
 * report "hosts.toml:12:3: ..." for any item of the tree.
 */
#ifndef SEQORCH_TOML_H
#define SEQORCH_TOML_H

#include <stddef.h>

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

struct so_err;
struct toml_doc;

enum toml_type {
	TOML_NONE,		/* the item is not part of the document */
	TOML_TABLE,
	TOML_ARRAY,
	TOML_STRING,
	TOML_INTEGER,
	TOML_FLOAT,
	TOML_BOOLEAN,
	TOML_DATE,
	TOML_TIME,
	TOML_DATE_TIME,
};

/*
 * Read and parse the file at path.  Returns 0 and stores in *out a
 * document that the caller frees with toml_free(), or a negative code
 * with err filled in and *out untouched: SO_EIO if the file cannot be
 * read, SO_EPARSE with "PATH:LINE:COL: description" if it is not valid
 * TOML (strings and keys holding a NUL character count as invalid, since
 * C strings would silently cut them short), SO_ENOMEM.
 */
int toml_load(const char *path, struct toml_doc **out, struct so_err *err);

/*
 * Same as toml_load() for the len bytes at text, which need not be NUL
 * terminated; name stands for the file in positions and messages.
 */
int toml_parse(const char *text, size_t len, const char *name,
    struct toml_doc **out, struct so_err *err);

/* The root table as a cJSON object; owned by doc, valid until toml_free(). */
const cJSON *toml_root(const struct toml_doc *doc);

/*
 * Where item's value starts (1-based line and column): for a table, its
 * [header] or, for an inline or implicit one, its first appearance.
 * Returns 0, or SO_ENOTFOUND if item is not part of doc.
 */
int toml_pos(const struct toml_doc *doc, const cJSON *item, int *line,
    int *col);

/*
 * Where the key naming item is written.  Returns 0, or SO_ENOTFOUND for
 * the root, array elements and items that are not part of doc.
 */
int toml_key_pos(const struct toml_doc *doc, const cJSON *item, int *line,
    int *col);

/* The TOML type item had in the file; TOML_NONE if it is not from doc. */
enum toml_type toml_type(const struct toml_doc *doc, const cJSON *item);

/*
 * The exact decimal spelling of an integer item (its cJSON number is a
 * double, exact only to 2^53), owned by doc; NULL for anything else.
 */
const char *toml_int_text(const struct toml_doc *doc, const cJSON *item);

/* Name of a type for messages ("integer", "date-time"); never NULL. */
const char *toml_type_name(enum toml_type type);

/* Free doc and its tree; NULL is allowed. */
void toml_free(struct toml_doc *doc);

#ifdef __cplusplus
}
#endif

#endif

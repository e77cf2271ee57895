/*
 * Shared plumbing for the coordinator: error codes, the error message
 * carrier that modules fill in, and allocation wrappers.
 *
 * Modules (config, db, ssh, proto, ...) return 0 or a negative SO_E* code
 * and never exit.  When they fail they also write a one-line, lowercase,
 * problem-first message into the caller's struct so_err, so that the
 * command that called them can print it and choose the exit code.
 */
#ifndef SEQORCH_UTIL_H
#define SEQORCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

enum {
	SO_OK = 0,
	SO_ENOMEM = -1,		/* allocation failed */
	SO_EIO = -2,		/* file or pipe i/o failed */
	SO_EPARSE = -3,		/* malformed input (config, agent record) */
	SO_EINVAL = -4,		/* well-formed but invalid value */
	SO_EDB = -5,		/* sqlite error */
	SO_ESSH = -6,		/* ssh transport error */
	SO_EHOSTKEY = -7,	/* host key unknown or mismatched */
	SO_ETIMEOUT = -8,	/* deadline passed */
	SO_EPROTO = -9,		/* agent broke the protocol */
	SO_EAGENT = -10,	/* agent failed (crash, non-zero exit) */
	SO_EINTR = -11,		/* interrupted by a signal */
	SO_ENOTFOUND = -12,	/* named thing does not exist */
	SO_EBUILD = -13,	/* build on a host failed */
	SO_EBUSY = -14,		/* a lock is held by someone else */
	SO_EEXIST = -15,	/* already there (an imported run) */
	SO_ENET = -16,		/* a download failed (http.h) */
	SO_ECHECKSUM = -17,	/* a download is not the file expected */
	SO_ESTALE = -18,	/* older than this binary (a schema to migrate) */
};

/* The coordinator's version, in --version and every runs row. */
#define SEQORCH_VERSION "0.1.0"

#define SO_ERR_MAX 1024

/* Filled by a failing module call; msg is always NUL terminated. */
struct so_err {
	int code;
	char msg[SO_ERR_MAX];
};

/*
 * Record a formatted message in err (which may be NULL) and return code,
 * so that callers can write: return so_error(err, SO_EPARSE, "...", ...).
 */
int so_error(struct so_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Allocation wrappers: they abort with a message on out-of-memory. */
/*
 * Call hook(n) once, on the first allocation of n bytes that fails, before
 * the abort: a command records what the abort leaves unfinished (hook ==
 * NULL: nothing).  The hook runs on the failing thread.
 */
void so_set_oom_hook(void (*hook)(size_t n));
void *xmalloc(size_t n);
/*
 * Route cJSON's allocations through xmalloc, so that what cJSON cannot
 * allocate meets the same policy (the hook, then the abort) rather than a
 * NULL nobody checks.  Call it before any cJSON use and before threads:
 * main does.
 */
void so_json_hooks(void);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/*
 * Room for element n of array, which holds n elements, zeroed; returns the
 * array (it may have moved).  As git's ALLOC_GROW, the room doubles, so n
 * appends cost O(n) copies; the room is implied by n (8, 16, 32...), so a
 * caller keeps only the count, and an array must grow only by xgrow from
 * NULL.  ALLOC_GROW(x, n) grows x of n elements so: x[n++] = ... follows.
 */
void *xgrow(void *array, size_t n, size_t size);
#define ALLOC_GROW(x, n) ((x) = xgrow((x), (n), sizeof *(x)))
/*
 * The next size of a buffer of cap bytes that must hold need, for data
 * whose size is not known up front (a remote file, a command's output):
 * doubling from 4 KiB, never above max (need <= max).
 */
size_t grow_size(size_t cap, size_t need, size_t max);
/* Returns a newly allocated formatted string; caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parse a decimal integer in [min, max] from s, which must be entirely
 * digits (optionally signed).  Returns 0 and stores *out, or SO_EINVAL.
 */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *out);

/*
 * A count as people write one, in [min, max]: "1000000", "1e6", "10M",
 * "2.5M" (k or K, M, G: thousand, million, billion); a value that is not a
 * whole number ("1.5", "2.5k7") is refused.  0 with *out, or SO_EINVAL.
 */
int parse_count(const char *s, int64_t min, int64_t max, int64_t *out);

/*
 * "Did you mean": feed each valid word to nearest_try, then
 * nearest_word gives the one nearest to name (a prefix of it, or within
 * two edits; one for names under five letters), or NULL when none is
 * near.  Words are not copied: they must outlive the struct.
 */
struct nearest {
	const char *name;
	const char *best;
	size_t bestd;
};
#define NEAREST_INIT(name) { (name), NULL, SIZE_MAX }
void nearest_try(struct nearest *n, const char *word);
const char *nearest_word(const struct nearest *n);

/*
 * True when w (not empty) is an item of list, whose items are separated
 * by sep: "publickey" of "password,publickey" (',').
 */
int list_has(const char *list, int sep, const char *w);

/*
 * The value of the first "key=value" line of text (to its line's end), as
 * a new string, or NULL when no line has key.  text may be NULL.
 */
char *line_value(const char *text, const char *key);

/* Lowercase hex of n bytes into out, which must hold 2n+1 chars. */
void hex_encode(const uint8_t *in, size_t n, char *out);
/* Decode exactly 2n lowercase/uppercase hex chars; 0 or SO_EPARSE. */
int hex_decode(const char *hex, uint8_t *out, size_t n);

/*
 * Replace each control character (C0, DEL) of s by '?', in place: text
 * from a host, an agent or a config file is printed on terminals.
 */
void strip_ctrl(char *s);
/*
 * Write all len bytes of data to fd (again after EINTR and short writes).
 * 0 or SO_EIO naming name.
 */
int write_all(int fd, const void *data, size_t len, const char *name,
    struct so_err *err);

/* mkdir -p: dir and its parents (0755); 0 or SO_EIO naming the one. */
int make_dirs(const char *dir, struct so_err *err);
/*
 * Replace path with a file of data, mode mode: written to a new temporary
 * file in path's directory (mkstemp: created, never opened through a
 * link), synced, then renamed over path.  A link already at path is
 * replaced, not followed; a reader sees the old file or the whole new one.
 * Where path is (or links to) a character device or a FIFO, data is
 * written to it instead, and nothing is replaced.
 * 0 or SO_EIO naming the file.
 */
int write_file_atomic(const char *path, const void *data, size_t len,
    unsigned mode, struct so_err *err);

/*
 * write_file_atomic in steps, for output too large to hold: atomic_open
 * gives af->fd to write to (the temporary file, or the device or FIFO at
 * path itself), atomic_commit syncs it, gives it mode and renames it over
 * path, atomic_abort closes and removes it.  Both release af; 0 or SO_EIO
 * naming the file.
 */
struct atomic_file {
	int fd;
	char *path;
	char *tmp;		/* NULL: path is a device or a FIFO */
};

int atomic_open(const char *path, struct atomic_file *af, struct so_err *err);
int atomic_commit(struct atomic_file *af, unsigned mode, struct so_err *err);
void atomic_abort(struct atomic_file *af);

/*
 * From the password database, reentrantly (pool threads ask too, and
 * getpwuid's static result would be shared): the home directory of user,
 * or of the real uid when user is NULL; pw_login the real uid's login
 * name.  NULL when unknown or empty; caller frees.
 */
char *pw_home(const char *user);
char *pw_login(void);
/*
 * The user's home as ssh and a shell take it: $HOME, or without one (or
 * with an empty one) pw_home(NULL).  NULL when neither; caller frees.
 */
char *user_home(void);

/* Seconds since the epoch as an ISO 8601 UTC string in buf (>= 32). */
void iso_now(char *buf, size_t len);

#endif

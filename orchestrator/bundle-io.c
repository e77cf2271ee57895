/*
 * Result bundles as files (bundle.h): the files a bundle holds, and
 * writing and reading them as a directory or a ustar archive, a file at a
 * time and a piece of a file at a time: a bundle can be larger than the
 * memory of the machine that writes or reads it.
 */
#include "bundle.h"
#include "bundle-int.h"

#include <dirent.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAR_BLOCK 512
#define MAX_DEPTH 4
#define CHUNK (1u << 20)		/* bytes read or copied at a time */
#define TAR_NAME_MAX (155 + 1 + 100 + 1)	/* prefix "/" name NUL */
#define PAX_MAX (64u << 10)	/* a pax header's data read at most */
#define PAX_KEY_MAX 320		/* a longer key is malformed */
#define APPLEDOUBLE "\x00\x05\x16\x07"	/* macOS ._NAME magic */

void
bundle_add(struct bundle *b, const char *path, void *data, size_t len)
{
	b->files = xrealloc(b->files, (b->n + 1) * sizeof *b->files);
	b->files[b->n].path = xstrdup(path);
	b->files[b->n].data = data;
	b->files[b->n].len = len;
	b->files[b->n].src = NULL;
	b->files[b->n].off = 0;
	b->n++;
}

void
bundle_free(struct bundle *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		free(b->files[i].path);
		free(b->files[i].data);
		free(b->files[i].src);
	}
	free(b->files);
	memset(b, 0, sizeof *b);
}

const struct bundle_file *
bundle_get(const struct bundle *b, const char *path)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (strcmp(b->files[i].path, path) == 0)
			return &b->files[i];
	return NULL;
}

/* Compare on path, so manifests list files in one order. */
static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct bundle_file *)a)->path,
	    ((const struct bundle_file *)b)->path);
}

void
bundle_sort(struct bundle *b)
{
	if (b->n > 0)
		qsort(b->files, b->n, sizeof *b->files, by_path);
}

/* Create the parent directories of dir/path (inside dir), noting each. */
static int
make_parents(struct bundle_out *o, const char *path, struct so_err *err)
{
	char *full = xasprintf("%s/%s", o->dest, path), *p;
	int rc = 0;

	for (p = full + strlen(o->dest) + 1; (p = strchr(p, '/')) != NULL;
	    p++) {
		*p = '\0';
		if (mkdir(full, 0755) == 0) {
			ALLOC_GROW(o->made, o->nmade);
			o->made[o->nmade++] = xstrdup(full);
		} else if (errno != EEXIST)
			rc = so_error(err, SO_EIO, "cannot create \"%s\": %s",
			    full, strerror(errno));
		*p = '/';
		if (rc != 0)
			break;
	}
	free(full);
	return rc;
}

/*
 * A new file dest/path in the directory we are making, never through a
 * link; noted, so that an abort removes it.
 */
static int
create_file(struct bundle_out *o, const char *path, int *fd,
    struct so_err *err)
{
	char *full;
	int rc;

	if ((rc = make_parents(o, path, err)) != 0)
		return rc;
	full = xasprintf("%s/%s", o->dest, path);
	if ((*fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0) {
		rc = so_error(err, SO_EIO, "cannot create \"%s\": %s", full,
		    strerror(errno));
		free(full);
		return rc;
	}
	ALLOC_GROW(o->made, o->nmade);
	o->made[o->nmade++] = full;
	return 0;
}

static void
tar_octal(char *field, size_t width, uint64_t v)
{
	snprintf(field, width, "%0*llo", (int)width - 1, (unsigned long long)v);
}

/* ustar's size field: 11 octal digits. */
#define TAR_MAX_MEMBER 077777777777ull

/*
 * One ustar header for a regular file; fixed mode, owner and date.  A path
 * past the name's 100 bytes is split at a '/' into the prefix (155) and
 * the name, as tar_name joins them: what the reader takes, this writes
 * back.  0, or -1 with the reason in err.
 */
static int
tar_header(unsigned char *h, const char *path, uint64_t len,
    struct so_err *err)
{
	size_t i, n = strlen(path), cut = 0;
	unsigned sum = 0;

	if (n > 100) {
		/* The first '/' that leaves at most 100 bytes after it. */
		for (cut = n - 101; cut < n && cut <= 155 && path[cut] != '/';
		    cut++)
			;
		if (cut >= n || cut > 155 || cut == 0)
			return so_error(err, SO_EINVAL, "bundle path \"%s\" is "
			    "too long for tar", path);
	}
	if (len > TAR_MAX_MEMBER)
		return so_error(err, SO_EINVAL, "bundle file \"%s\" has %llu "
		    "bytes, more than a tar member holds (8 GiB): give a "
		    "directory rather than a .tar", path,
		    (unsigned long long)len);
	memset(h, 0, TAR_BLOCK);
	if (cut > 0) {
		memcpy(h + 345, path, cut);
		path += cut + 1;
	}
	memcpy(h, path, strlen(path));
	tar_octal((char *)h + 100, 8, 0644);
	tar_octal((char *)h + 108, 8, 0);
	tar_octal((char *)h + 116, 8, 0);
	tar_octal((char *)h + 124, 12, len);
	tar_octal((char *)h + 136, 12, 0);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	return 0;
}

/* Bytes of a member of len bytes: its header and its padded data. */
static uint64_t
tar_member_size(uint64_t len)
{
	return TAR_BLOCK + (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

int
bundle_tar(const struct bundle *b, unsigned char **out, size_t *outlen,
    struct so_err *err)
{
	size_t i, len = 2 * TAR_BLOCK, off = 0;
	unsigned char *tar;

	for (i = 0; i < b->n; i++)
		len += tar_member_size(b->files[i].len);
	tar = xcalloc(1, len);
	for (i = 0; i < b->n; i++) {
		if (tar_header(tar + off, b->files[i].path,
		    b->files[i].len, err) != 0) {
			free(tar);
			return SO_EINVAL;
		}
		memcpy(tar + off + TAR_BLOCK, b->files[i].data,
		    b->files[i].len);
		off += tar_member_size(b->files[i].len);
	}
	*out = tar;
	*outlen = len;
	return 0;
}

static int
is_tar(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && strcmp(path + n - 4, ".tar") == 0;
}

int
bundle_out_open(struct bundle_out *o, const char *dest, struct so_err *err)
{
	char *copy;
	int rc;

	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->failed = 1;
	if (!is_tar(dest)) {
		if (mkdir(dest, 0755) != 0)
			return so_error(err, SO_EIO, "cannot create bundle "
			    "directory \"%s\": %s", dest, strerror(errno));
		o->dest = xstrdup(dest);
		o->failed = 0;
		return 0;
	}
	if ((rc = atomic_open(dest, &o->af, err)) != 0)
		return rc;
	o->tar = 1;
	o->own = 1;
	o->fd = o->af.fd;
	o->dest = xstrdup(dest);
	copy = xstrdup(dest);
	o->spool_dir = xstrdup(dirname(copy));
	free(copy);
	o->failed = 0;
	return 0;
}

void
bundle_out_open_fd(struct bundle_out *o, int fd, const char *name,
    const char *spool_dir)
{
	memset(o, 0, sizeof *o);
	o->tar = 1;
	o->fd = fd;
	o->dest = xstrdup(name);
	o->spool_dir = xstrdup(spool_dir);
}

/* Append to the tar; a failure is the output's. */
static int
tar_write(struct bundle_out *o, const void *data, size_t len,
    struct so_err *err)
{
	const char *name = o->own && o->af.tmp != NULL ? o->af.tmp : o->dest;
	int rc;

	if ((rc = write_all(o->fd, data, len, name, err)) == 0)
		o->size += len;
	return rc;
}

/* A member's header, before its len bytes. */
static int
tar_begin(struct bundle_out *o, const char *path, uint64_t len,
    struct so_err *err)
{
	unsigned char h[TAR_BLOCK];

	if (tar_header(h, path, len, err) != 0)
		return SO_EINVAL;
	return tar_write(o, h, sizeof h, err);
}

/* The zeros that pad a member of len bytes to a whole block. */
static int
tar_pad(struct bundle_out *o, uint64_t len, struct so_err *err)
{
	static const unsigned char zero[TAR_BLOCK];
	size_t n = (size_t)((TAR_BLOCK - len % TAR_BLOCK) % TAR_BLOCK);

	return n == 0 ? 0 : tar_write(o, zero, n, err);
}

int
bundle_out_file(struct bundle_out *o, const char *path, const void *data,
    size_t len, struct so_err *err)
{
	int fd, rc;

	if (o->tar) {
		if ((rc = tar_begin(o, path, len, err)) == 0 &&
		    (rc = tar_write(o, data, len, err)) == 0)
			rc = tar_pad(o, len, err);
	} else if ((rc = create_file(o, path, &fd, err)) == 0) {
		rc = write_all(fd, data, len, o->made[o->nmade - 1], err);
		if (close(fd) != 0 && rc == 0)
			rc = so_error(err, SO_EIO, "cannot write \"%s\": %s",
			    o->made[o->nmade - 1], strerror(errno));
		o->size += len;
	}
	if (rc != 0 && rc != SO_EINVAL)
		o->failed = 1;
	return rc;
}

int
bundle_out_spool(struct bundle_out *o, const char *path,
    struct bundle_spool *sp, struct so_err *err)
{
	int rc = 0;

	memset(sp, 0, sizeof *sp);
	sp->fd = -1;
	sp->path = xstrdup(path);
	if ((sp->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(sp->md, EVP_sha256(), NULL) != 1) {
		rc = so_error(err, SO_ENOMEM, "cannot hash %s", path);
		goto out;
	}
	if (!o->tar) {
		if ((rc = create_file(o, path, &sp->fd, err)) == 0)
			sp->name = xstrdup(o->made[o->nmade - 1]);
		goto out;
	}
	/* A tar's member needs its size first: the file waits beside it. */
	sp->name = xasprintf("%s/.seqorch.XXXXXX", o->spool_dir);
	if ((sp->fd = mkstemp(sp->name)) < 0) {
		rc = so_error(err, SO_EIO, "cannot create a file beside \"%s\": "
		    "%s", o->dest, strerror(errno));
		goto out;
	}
	unlink(sp->name);
out:
	if (rc != 0) {
		o->failed = rc != SO_ENOMEM;
		bundle_spool_free(sp);
	}
	return rc;
}

int
bundle_spool_write(struct bundle_spool *sp, const void *data, size_t len,
    struct so_err *err)
{
	int rc;

	if ((rc = write_all(sp->fd, data, len, sp->name, err)) != 0)
		return rc;
	EVP_DigestUpdate(sp->md, data, len);
	sp->len += len;
	return 0;
}

void
bundle_spool_done(struct bundle_spool *sp)
{
	unsigned char md[32];
	unsigned n;

	EVP_DigestFinal_ex(sp->md, md, &n);
	hex_encode(md, sizeof md, sp->sha256);
}

void
bundle_spool_free(struct bundle_spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	EVP_MD_CTX_free(sp->md);
	free(sp->name);
	free(sp->path);
	memset(sp, 0, sizeof *sp);
	sp->fd = -1;
}

int
bundle_out_put_spool(struct bundle_out *o, struct bundle_spool *sp,
    struct so_err *err)
{
	unsigned char *buf = NULL;
	uint64_t done = 0;
	ssize_t r;
	int rc = 0;

	if (!o->tar) {
		if (close(sp->fd) != 0)
			rc = so_error(err, SO_EIO, "cannot write \"%s\": %s",
			    sp->name, strerror(errno));
		sp->fd = -1;
		o->size += sp->len;
		goto out;
	}
	if ((rc = tar_begin(o, sp->path, sp->len, err)) != 0)
		goto out;
	buf = xmalloc(CHUNK);
	while (rc == 0 && done < sp->len) {
		size_t n = sp->len - done < CHUNK ? (size_t)(sp->len - done) :
		    CHUNK;

		r = pread(sp->fd, buf, n, (off_t)done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = so_error(err, SO_EIO, "cannot read \"%s\": %s",
			    sp->name, r < 0 ? strerror(errno) : "it shrank");
			break;
		}
		rc = tar_write(o, buf, (size_t)r, err);
		done += (uint64_t)r;
	}
	if (rc == 0)
		rc = tar_pad(o, sp->len, err);
out:
	free(buf);
	if (rc != 0 && rc != SO_EINVAL)
		o->failed = 1;
	return rc;
}

int
bundle_out_close(struct bundle_out *o, struct so_err *err)
{
	static const unsigned char end[2 * TAR_BLOCK];
	int rc = 0;

	if (o->tar)
		rc = tar_write(o, end, sizeof end, err);
	if (rc == 0 && o->size > BUNDLE_MAX_BYTES)
		rc = so_error(err, SO_EINVAL, "bundle \"%s\" came to %llu "
		    "bytes, more than verify and import read (%llu)", o->dest,
		    (unsigned long long)o->size, BUNDLE_MAX_BYTES);
	if (rc == 0 && o->tar && o->own)
		rc = atomic_commit(&o->af, 0644, err);
	if (rc != 0) {
		o->failed = 1;
		bundle_out_abort(o);
		return rc;
	}
	/* o->size stays: what a .tar came to. */
	free(o->dest);
	free(o->spool_dir);
	while (o->nmade > 0)
		free(o->made[--o->nmade]);
	free(o->made);
	o->dest = o->spool_dir = NULL;
	o->made = NULL;
	o->own = 0;
	o->fd = -1;
	return 0;
}

void
bundle_out_abort(struct bundle_out *o)
{
	if (o->own)
		atomic_abort(&o->af);
	/* Files, then the directories that held them, then dest. */
	while (o->nmade > 0) {
		char *p = o->made[--o->nmade];

		if (unlink(p) != 0)
			rmdir(p);
		free(p);
	}
	if (!o->tar && o->dest != NULL)
		rmdir(o->dest);
	free(o->made);
	free(o->dest);
	free(o->spool_dir);
	o->made = NULL;
	o->dest = o->spool_dir = NULL;
	o->own = 0;
}

/* A path inside a bundle: relative, no "..", no empty parts. */
static int
safe_path(const char *p)
{
	const char *s;

	if (*p == '\0' || *p == '/' || strlen(p) > 255)
		return 0;
	for (s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '\\')
			return 0;
	return strstr(p, "//") == NULL && strcmp(p, "..") != 0 &&
	    strncmp(p, "../", 3) != 0 && strstr(p, "/../") == NULL &&
	    (strlen(p) < 3 || strcmp(p + strlen(p) - 3, "/..") != 0);
}

/*
 * A regular file opened without blocking, its size at most max: a FIFO or
 * device named as a bundle, or planted in a bundle directory, is refused,
 * never waited on or read without end.
 */
static int
open_regular(const char *path, uint64_t max, int *fd, uint64_t *size,
    struct so_err *err)
{
	struct stat sb;

	if ((*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return so_error(err, SO_EIO, "cannot open \"%s\": %s", path,
		    strerror(errno));
	if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EPARSE, "\"%s\" is not a regular file",
		    path);
	}
	if ((uint64_t)sb.st_size > max) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EPARSE, "\"%s\" is over the bundle size "
		    "limit", path);
	}
	*size = (uint64_t)sb.st_size;
	return 0;
}

/* len bytes at off of fd (name in messages) into buf. */
static int
read_at(int fd, const char *name, unsigned char *buf, size_t len,
    uint64_t off, struct so_err *err)
{
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != len)
		return so_error(err, SO_EIO, "cannot read \"%s\": it shrank "
		    "while read", name);
	return 0;
}

int
bundle_file_open(const struct bundle_file *f, int *fd, struct so_err *err)
{
	uint64_t size;
	int rc;

	*fd = -1;
	if (f->src == NULL)
		return 0;
	if ((rc = open_regular(f->src, BUNDLE_MAX_BYTES, fd, &size,
	    err)) != 0)
		return rc;
	if (size < f->off + f->len) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EIO, "cannot read \"%s\": it shrank "
		    "while read", f->src);
	}
	return 0;
}

int
bundle_file_read(const struct bundle_file *f, size_t max,
    unsigned char **data, struct so_err *err)
{
	int fd, rc;

	*data = NULL;
	if (f->len > max)
		return so_error(err, SO_EPARSE, "bundle: %s is over %zu MiB",
		    f->path, max >> 20);
	if ((rc = bundle_file_open(f, &fd, err)) != 0)
		return rc;
	*data = xmalloc(f->len + 1);
	if (fd < 0)
		memcpy(*data, f->data, f->len);
	else
		rc = read_at(fd, f->src, *data, f->len, f->off, err);
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		free(*data);
		*data = NULL;
		return rc;
	}
	(*data)[f->len] = '\0';
	return 0;
}

int
bundle_file_sha256(const struct bundle_file *f, char out[65],
    struct so_err *err)
{
	unsigned char md[32], *buf = NULL;
	EVP_MD_CTX *ctx;
	uint64_t done = 0;
	unsigned n;
	int fd, rc;

	if ((rc = bundle_file_open(f, &fd, err)) != 0)
		return rc;
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = so_error(err, SO_ENOMEM, "cannot hash %s", f->path);
		goto out;
	}
	if (fd < 0)
		EVP_DigestUpdate(ctx, f->data, f->len);
	else
		buf = xmalloc(CHUNK);
	while (fd >= 0 && done < f->len) {
		size_t len = f->len - done < CHUNK ? f->len - done : CHUNK;

		if ((rc = read_at(fd, f->src, buf, len, f->off + done,
		    err)) != 0)
			goto out;
		EVP_DigestUpdate(ctx, buf, len);
		done += len;
	}
	EVP_DigestFinal_ex(ctx, md, &n);
	hex_encode(md, sizeof md, out);
out:
	free(buf);
	EVP_MD_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * A tar header's number field of width bytes: optional leading spaces,
 * octal digits, then only NULs and spaces to the field's end (POSIX's
 * terminator).  0, or -1 when it is anything else: a field without a
 * terminator runs into the next one, and strtoull's stop at a stray byte
 * would accept the digits before it.
 */
static int
tar_number(const unsigned char *f, size_t width, uint64_t *v)
{
	size_t i = 0, digits = 0;

	*v = 0;
	while (i < width && f[i] == ' ')
		i++;
	for (; i < width && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
		if (*v > (UINT64_MAX >> 3))
			return -1;
		*v = *v << 3 | (uint64_t)(f[i] - '0');
	}
	if (digits == 0 || i == width)
		return -1;
	for (; i < width; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return -1;
	return 0;
}

/*
 * A member's whole name: POSIX ustar's prefix (155 bytes at 345), "/" and
 * the name, or the name alone when the prefix is empty.  GNU tar's own
 * format ("ustar  " magic) keeps times there, not a prefix.
 */
static void
tar_name(const unsigned char *h, char name[TAR_NAME_MAX])
{
	size_t n = 0;

	if (memcmp(h + 257, "ustar\0", 6) == 0 && h[345] != '\0') {
		n = strnlen((const char *)h + 345, 155);
		memcpy(name, h + 345, n);
		name[n++] = '/';
	}
	memcpy(name + n, h, strnlen((const char *)h, 100));
	name[n + strnlen((const char *)h, 100)] = '\0';
}

/*
 * A pax extended header ('x') may only say what leaves the member as its
 * ustar header has it: times, owners, extended attributes and flags, as
 * bsdtar writes (its default when a file has xattrs, e.g. macOS's
 * com.apple.provenance; every member under --format=pax).  A key that
 * renames, resizes or relinks the member (path, size, linkpath) or that
 * seqorch does not know is refused by its name.
 */
static const char *const pax_keys[] = {
	"mtime", "atime", "ctime", "uid", "gid", "uname", "gname",
	"LIBARCHIVE.creationtime", "SCHILY.fflags",
};
static const char *const pax_prefixes[] = {
	"LIBARCHIVE.xattr.", "SCHILY.xattr.",
};

static int
pax_key_ok(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof pax_keys / sizeof *pax_keys; i++)
		if (strcmp(key, pax_keys[i]) == 0)
			return 1;
	for (i = 0; i < sizeof pax_prefixes / sizeof *pax_prefixes; i++)
		if (strncmp(key, pax_prefixes[i], strlen(pax_prefixes[i])) ==
		    0 && key[strlen(pax_prefixes[i])] != '\0')
			return 1;
	return 0;
}

/*
 * The len bytes of pax header name's data: records "LEN KEY=VALUE\n",
 * LEN in decimal counting the whole record, as POSIX has them.  A value
 * may hold any byte (SCHILY.xattr.* is raw), so LEN alone finds the end.
 */
static int
pax_check(const unsigned char *p, size_t len, const char *src,
    const char *name, struct so_err *err)
{
	char key[PAX_KEY_MAX];
	size_t pos = 0, rec, i, k;

	while (pos < len) {
		for (rec = 0, i = pos; i < len && p[i] >= '0' && p[i] <= '9' &&
		    rec <= len; i++)
			rec = rec * 10 + (size_t)(p[i] - '0');
		/* Digits, a space, a key, '=', and the newline at LEN. */
		if (i == pos || i == len || p[i] != ' ' || rec > len - pos ||
		    rec < i - pos + 4 || p[pos + rec - 1] != '\n')
			goto bad;
		/* A key is printed in messages: no control bytes. */
		for (k = 0, i++; i < pos + rec - 1 && p[i] != '=' &&
		    p[i] >= ' ' && p[i] != 0x7f && k < sizeof key - 1; i++)
			key[k++] = (char)p[i];
		key[k] = '\0';
		if (k == 0 || i == pos + rec - 1 || p[i] != '=')
			goto bad;
		if (!pax_key_ok(key))
			return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" "
			    "is a pax extended header setting \"%s\", which "
			    "would change the member after it: tar the "
			    "directory as `tar -cf B.tar -C DIR .`", src,
			    name, key);
		pos += rec;
	}
	return 0;
bad:
	return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" is a pax "
	    "extended header with a malformed record at byte %zu", src, name,
	    pos);
}

/*
 * The header h at byte off of an archive of len bytes (src names it):
 * 1 at the end (a block of zeros), 2 for a directory entry (passed over),
 * 3 for a pax extended header (its data the caller's to check), else 0
 * with the entry's name and size, checked as bundle_untar says, or an
 * error.
 */
static int
tar_entry(const unsigned char *h, uint64_t off, uint64_t len, const char *src,
    const struct bundle *out, char name[TAR_NAME_MAX], uint64_t *size,
    struct so_err *err)
{
	uint64_t want;
	unsigned sum;
	const char *rel;
	size_t i;

	for (i = 0; i < TAR_BLOCK && h[i] == 0; i++)
		;
	if (i == TAR_BLOCK)
		return 1;
	for (sum = 0, i = 0; i < TAR_BLOCK; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	if (tar_number(h + 148, 8, &want) != 0 || sum != want ||
	    tar_number(h + 124, 12, size) != 0 ||
	    memcmp(h + 257, "ustar", 5) != 0)
		return so_error(err, SO_EPARSE, "\"%s\": bad tar header at "
		    "byte %llu", src, (unsigned long long)off);
	tar_name(h, name);
	/*
	 * These name or rename the member after them: passed over, it would
	 * be read under the short name of its own header.  A bundle's names
	 * fit a ustar header (export writes 78 bytes at most).
	 */
	if (h[156] == 'L' || h[156] == 'K')
		return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" is a "
		    "GNU long name (type '%c'), which a bundle never needs: "
		    "tar its directory as `tar -cf B.tar -C DIR .`", src, name,
		    h[156]);
	/* Its data are checked by the caller (pax_check). */
	if (h[156] == 'x' && *size <= PAX_MAX &&
	    *size <= len - off - TAR_BLOCK)
		return 3;
	if (h[156] == 'x')
		return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" is a "
		    "pax extended header of %llu bytes, past the archive's "
		    "end or the %u KiB seqorch reads", src, name,
		    (unsigned long long)*size, PAX_MAX >> 10);
	/* bsdtar writes none; GNU tar's apply to every member after. */
	if (h[156] == 'g')
		return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" is a "
		    "pax global header (type 'g'), which seqorch does not "
		    "read: tar the directory as `tar -cf B.tar -C DIR .`",
		    src, name);
	/*
	 * `tar -cf b.tar -C DIR .` of the directory form names each member
	 * "./NAME", after "./" itself and "./artifacts/": the names are the
	 * directory's, and its directories hold nothing a bundle lists.
	 */
	rel = name + (strncmp(name, "./", 2) == 0 ? 2 : 0);
	if (h[156] == '5' && *size == 0 && (*rel == '\0' ||
	    (safe_path(rel) && rel[strlen(rel) - 1] == '/')))
		return 2;
	if ((h[156] != '0' && h[156] != '\0') || !safe_path(rel))
		return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" is "
		    "not a plain file with a relative path", src, name);
	if (*size > len - off - TAR_BLOCK || out->n >= BUNDLE_MAX_FILES)
		return so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" runs "
		    "past the end of the archive", src, name);
	if (bundle_get(out, rel) != NULL)
		return so_error(err, SO_EPARSE, "\"%s\": \"%s\" appears "
		    "twice", src, rel);
	memmove(name, rel, strlen(rel) + 1);
	return 0;
}

/*
 * macOS's tar (bsdtar through copyfile) stores a file's extended
 * attributes as a member "._NAME" beside it unless COPYFILE_DISABLE=1.
 * Refused, not passed over: the manifest does not list it, and telling
 * the user how to tar is clearer than "not listed".  head holds the
 * member's first bytes (up to 4 of its size).
 */
static int
apple_double(const char *src, const char *name, const unsigned char *head,
    uint64_t size, struct so_err *err)
{
	const char *base = strrchr(name, '/');

	base = base != NULL ? base + 1 : name;
	if (strncmp(base, "._", 2) != 0 || size < 4 ||
	    memcmp(head, APPLEDOUBLE, 4) != 0)
		return 0;
	return so_error(err, SO_EPARSE, "\"%s\": \"%s\" is macOS's "
	    "AppleDouble copy of a file's extended attributes, not part of "
	    "the bundle: on macOS, tar the directory as `COPYFILE_DISABLE=1 "
	    "tar -cf B.tar -C DIR .`", src, name);
}

int
bundle_untar(const unsigned char *tar, size_t len, const char *src,
    struct bundle *out, struct so_err *err)
{
	uint64_t off = 0, size;
	char name[TAR_NAME_MAX];
	int rc = 0;

	memset(out, 0, sizeof *out);
	for (;;) {
		if (off + TAR_BLOCK > len) {
			rc = so_error(err, SO_EPARSE, "\"%s\": truncated tar "
			    "archive", src);
			break;
		}
		if ((rc = tar_entry(tar + off, off, len, src, out, name, &size,
		    err)) == 2) {
			off += tar_member_size(size);
			continue;
		}
		if (rc == 3) {
			if ((rc = pax_check(tar + off + TAR_BLOCK, size, src,
			    name, err)) != 0)
				break;
			off += tar_member_size(size);
			continue;
		}
		if (rc != 0 || (rc = apple_double(src, name, tar + off +
		    TAR_BLOCK, size, err)) != 0)
			break;
		bundle_add(out, name, xmalloc(size + 1), size);
		memcpy(out->files[out->n - 1].data, tar + off + TAR_BLOCK, size);
		off += tar_member_size(size);
	}
	if (rc < 0)
		bundle_free(out);
	return rc < 0 ? rc : 0;
}

/* A .tar bundle's headers, read block by block; the data stay there. */
static int
load_tar(const char *src, struct bundle *out, struct so_err *err)
{
	unsigned char h[TAR_BLOCK];
	uint64_t len, off = 0, size;
	char name[TAR_NAME_MAX];
	unsigned char *pax;
	int fd, rc;

	if ((rc = open_regular(src, BUNDLE_MAX_BYTES, &fd, &len, err)) != 0)
		return rc;
	for (;;) {
		if (off + TAR_BLOCK > len) {
			rc = so_error(err, SO_EPARSE, "\"%s\": truncated tar "
			    "archive", src);
			break;
		}
		if ((rc = read_at(fd, src, h, sizeof h, off, err)) == 0 &&
		    (rc = tar_entry(h, off, len, src, out, name, &size,
		    err)) == 2) {
			off += tar_member_size(size);
			continue;
		}
		if (rc == 3) {
			pax = xmalloc(size + 1);
			if ((rc = read_at(fd, src, pax, size, off + TAR_BLOCK,
			    err)) == 0)
				rc = pax_check(pax, size, src, name, err);
			free(pax);
			if (rc != 0)
				break;
			off += tar_member_size(size);
			continue;
		}
		if (rc == 0 && size >= 4)
			rc = read_at(fd, src, h, 4, off + TAR_BLOCK, err);
		if (rc != 0 || (rc = apple_double(src, name, h, size,
		    err)) != 0)
			break;
		bundle_add(out, name, NULL, size);
		out->files[out->n - 1].src = xstrdup(src);
		out->files[out->n - 1].off = off + TAR_BLOCK;
		off += tar_member_size(size);
	}
	close(fd);
	return rc < 0 ? rc : 0;
}

static int
load_dir(const char *root, const char *rel, int depth, struct bundle *out,
    uint64_t *total, struct so_err *err)
{
	char *dirpath = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int rc = 0;

	if ((d = opendir(dirpath)) == NULL) {
		rc = so_error(err, SO_EIO, "cannot open bundle \"%s\": %s",
		    dirpath, strerror(errno));
		free(dirpath);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *r, *full;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		r = *rel ? xasprintf("%s/%s", rel, e->d_name) :
		    xstrdup(e->d_name);
		full = xasprintf("%s/%s", root, r);
		if (lstat(full, &sb) != 0)
			rc = so_error(err, SO_EIO, "cannot read \"%s\": %s",
			    full, strerror(errno));
		else if (S_ISDIR(sb.st_mode) && depth < MAX_DEPTH)
			rc = load_dir(root, r, depth + 1, out, total, err);
		else if (!S_ISREG(sb.st_mode) || !safe_path(r))
			rc = so_error(err, SO_EPARSE, "bundle \"%s\": \"%s\" is "
			    "not a plain file", root, r);
		else if (out->n >= BUNDLE_MAX_FILES)
			rc = so_error(err, SO_EPARSE, "bundle \"%s\": too many "
			    "files", root);
		else {
			uint64_t len;
			int fd;

			/* Checked now, read when needed (bundle_file_open). */
			rc = open_regular(full, BUNDLE_MAX_BYTES - *total, &fd,
			    &len, err);
			if (rc == 0) {
				close(fd);
				*total += len;
				bundle_add(out, r, NULL, len);
				out->files[out->n - 1].src = full;
				full = NULL;
			}
		}
		free(full);
		free(r);
	}
	closedir(d);
	free(dirpath);
	return rc;
}

int
bundle_load(const char *src, struct bundle *out, struct so_err *err)
{
	struct stat sb;
	uint64_t total = 0;
	int rc;

	memset(out, 0, sizeof *out);
	if (stat(src, &sb) != 0)
		return so_error(err, SO_ENOTFOUND, "no bundle \"%s\": %s", src,
		    strerror(errno));
	if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode))
		return so_error(err, SO_EPARSE, "bundle \"%s\" is neither a "
		    "directory nor a .tar file", src);
	rc = S_ISDIR(sb.st_mode) ? load_dir(src, "", 0, out, &total, err) :
	    load_tar(src, out, err);
	if (rc != 0)
		bundle_free(out);
	else
		bundle_sort(out);
	return rc;
}

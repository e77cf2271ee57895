/*
 * Result bundles as files (bundle.h): the files a bundle holds, and
 * writing and reading them as a directory or a ustar archive.
 */
#include "bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAR_BLOCK 512
#define MAX_DEPTH 4

void
bundle_add(struct bundle *b, const char *path, void *data, size_t len)
{
	b->files = xrealloc(b->files, (b->n + 1) * sizeof *b->files);
	b->files[b->n].path = xstrdup(path);
	b->files[b->n].data = data;
	b->files[b->n].len = len;
	b->n++;
}

void
bundle_free(struct bundle *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		free(b->files[i].path);
		free(b->files[i].data);
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

/* Create the parent directories of dir/path (inside dir). */
static int
make_parents(const char *dir, const char *path, struct so_err *err)
{
	char *full = xasprintf("%s/%s", dir, path), *p;
	int rc = 0;

	for (p = full + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(full, 0755) != 0 && errno != EEXIST)
			rc = so_error(err, SO_EIO, "cannot create \"%s\": %s",
			    full, strerror(errno));
		*p = '/';
		if (rc != 0)
			break;
	}
	free(full);
	return rc;
}

/* A new file in a directory we just made: never through a link. */
static int
write_file(const char *path, const void *data, size_t len, struct so_err *err)
{
	int fd, rc;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0)
		return so_error(err, SO_EIO, "cannot create \"%s\": %s", path,
		    strerror(errno));
	rc = write_all(fd, data, len, path, err);
	if (close(fd) != 0 && rc == 0)
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", path,
		    strerror(errno));
	return rc;
}

static void
tar_octal(char *field, size_t width, uint64_t v)
{
	snprintf(field, width, "%0*llo", (int)width - 1, (unsigned long long)v);
}

/* One ustar header for a regular file; fixed mode, owner and date. */
static int
tar_header(unsigned char *h, const char *path, size_t len)
{
	unsigned sum = 0;
	size_t i;

	if (strlen(path) > 99)
		return -1;
	memset(h, 0, TAR_BLOCK);
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

int
bundle_tar(const struct bundle *b, unsigned char **out, size_t *outlen,
    struct so_err *err)
{
	size_t i, len = 2 * TAR_BLOCK, off = 0;
	unsigned char *tar;

	for (i = 0; i < b->n; i++)
		len += TAR_BLOCK + (b->files[i].len + TAR_BLOCK - 1) /
		    TAR_BLOCK * TAR_BLOCK;
	tar = xcalloc(1, len);
	for (i = 0; i < b->n; i++) {
		if (tar_header(tar + off, b->files[i].path,
		    b->files[i].len) != 0) {
			free(tar);
			return so_error(err, SO_EINVAL, "bundle path \"%s\" is "
			    "too long for tar", b->files[i].path);
		}
		memcpy(tar + off + TAR_BLOCK, b->files[i].data,
		    b->files[i].len);
		off += TAR_BLOCK + (b->files[i].len + TAR_BLOCK - 1) /
		    TAR_BLOCK * TAR_BLOCK;
	}
	*out = tar;
	*outlen = len;
	return 0;
}

static int
save_tar(const struct bundle *b, const char *dest, struct so_err *err)
{
	unsigned char *tar = NULL;
	size_t len;
	int rc;

	if ((rc = bundle_tar(b, &tar, &len, err)) == 0)
		rc = write_file_atomic(dest, tar, len, 0644, err);
	free(tar);
	return rc;
}

static int
is_tar(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && strcmp(path + n - 4, ".tar") == 0;
}

int
bundle_save(const struct bundle *b, const char *dest, struct so_err *err)
{
	char *path;
	size_t i;
	int rc = 0;

	if (is_tar(dest))
		return save_tar(b, dest, err);
	if (mkdir(dest, 0755) != 0)
		return so_error(err, SO_EIO, "cannot create bundle directory "
		    "\"%s\": %s", dest, strerror(errno));
	for (i = 0; i < b->n && rc == 0; i++) {
		if ((rc = make_parents(dest, b->files[i].path, err)) != 0)
			break;
		path = xasprintf("%s/%s", dest, b->files[i].path);
		rc = write_file(path, b->files[i].data, b->files[i].len, err);
		free(path);
	}
	return rc;
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
 * A whole regular file, opened without blocking: a FIFO or device named
 * as a bundle, or planted in a bundle directory, is refused, never waited
 * on or read without end.
 */
static int
read_all(const char *path, unsigned char **data, size_t *len, size_t max,
    struct so_err *err)
{
	struct stat sb;
	size_t got = 0;
	ssize_t r;
	int fd, rc = 0;

	*data = NULL;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return so_error(err, SO_EIO, "cannot open \"%s\": %s", path,
		    strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		rc = so_error(err, SO_EPARSE, "\"%s\" is not a regular file",
		    path);
		goto out;
	}
	if ((uint64_t)sb.st_size > max) {
		rc = so_error(err, SO_EPARSE, "\"%s\" is over the bundle size "
		    "limit", path);
		goto out;
	}
	*len = (size_t)sb.st_size;
	*data = xmalloc(*len + 1);
	while (got < *len) {
		r = read(fd, *data + got, *len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != *len) {
		rc = so_error(err, SO_EIO, "cannot read \"%s\"%s", path,
		    got < *len ? ": it shrank while read" : "");
		free(*data);
		*data = NULL;
	}
out:
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

int
bundle_untar(const unsigned char *tar, size_t len, const char *src,
    struct bundle *out, struct so_err *err)
{
	const unsigned char *h;
	size_t off = 0, i;
	uint64_t size, want;
	unsigned sum;
	char name[101];
	int rc = 0;

	memset(out, 0, sizeof *out);
	while (rc == 0) {
		if (off + TAR_BLOCK > len) {
			rc = so_error(err, SO_EPARSE, "\"%s\": truncated tar "
			    "archive", src);
			break;
		}
		h = tar + off;
		for (i = 0; i < TAR_BLOCK && h[i] == 0; i++)
			;
		if (i == TAR_BLOCK)
			break;
		memcpy(name, h, 100);
		name[100] = '\0';
		for (sum = 0, i = 0; i < TAR_BLOCK; i++)
			sum += i >= 148 && i < 156 ? ' ' : h[i];
		if (tar_number(h + 148, 8, &want) != 0 || sum != want ||
		    tar_number(h + 124, 12, &size) != 0 ||
		    memcmp(h + 257, "ustar", 5) != 0) {
			rc = so_error(err, SO_EPARSE, "\"%s\": bad tar header at "
			    "byte %zu", src, off);
			break;
		}
		if ((h[156] != '0' && h[156] != '\0') || !safe_path(name)) {
			rc = so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" is "
			    "not a plain file with a relative path", src, name);
			break;
		}
		if (size > len - off - TAR_BLOCK || out->n >= BUNDLE_MAX_FILES) {
			rc = so_error(err, SO_EPARSE, "\"%s\": entry \"%s\" runs "
			    "past the end of the archive", src, name);
			break;
		}
		if (bundle_get(out, name) != NULL) {
			rc = so_error(err, SO_EPARSE, "\"%s\": \"%s\" appears "
			    "twice", src, name);
			break;
		}
		bundle_add(out, name, xmalloc(size + 1), size);
		memcpy(out->files[out->n - 1].data, h + TAR_BLOCK, size);
		off += TAR_BLOCK + (size + TAR_BLOCK - 1) / TAR_BLOCK *
		    TAR_BLOCK;
	}
	if (rc != 0)
		bundle_free(out);
	return rc;
}

static int
load_tar(const char *src, struct bundle *out, struct so_err *err)
{
	unsigned char *tar = NULL;
	size_t len = 0;
	int rc;

	if ((rc = read_all(src, &tar, &len, BUNDLE_MAX_BYTES, err)) == 0)
		rc = bundle_untar(tar, len, src, out, err);
	free(tar);
	return rc;
}

static int
load_dir(const char *root, const char *rel, int depth, struct bundle *out,
    size_t *total, struct so_err *err)
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
			unsigned char *data;
			size_t len;

			rc = read_all(full, &data, &len, BUNDLE_MAX_BYTES -
			    *total, err);
			if (rc == 0) {
				*total += len;
				bundle_add(out, r, data, len);
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
	size_t total = 0;
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

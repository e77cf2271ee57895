/* Artifact downloads with libcurl into the content-addressed cache. */
#include "http.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void
init_curl(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The SHA-256 of what fd holds from where it is, and its length. */
static int
sha256_fd(int fd, const char *path, char out[65], unsigned long long *size,
    struct so_err *err)
{
	unsigned char buf[65536], md[32];
	unsigned long long total = 0;
	EVP_MD_CTX *ctx;
	unsigned int n;
	ssize_t got;
	int rc = 0;

	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = so_error(err, SO_ENOMEM, "cannot hash \"%s\"", path);
		goto out;
	}
	while ((got = read(fd, buf, sizeof buf)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = so_error(err, SO_EIO, "cannot read \"%s\": %s",
			    path, strerror(errno));
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)got);
		total += (unsigned long long)got;
	}
	EVP_DigestFinal_ex(ctx, md, &n);
	hex_encode(md, 32, out);
	if (size != NULL)
		*size = total;
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

/*
 * Open path for reading without blocking on a FIFO: *fd, or SO_EIO when
 * it cannot be opened or is not a regular file (a FIFO would be read once
 * to hash it and again to copy it).
 */
static int
open_regular(const char *path, int *fd, struct so_err *err)
{
	struct stat sb;

	if ((*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return so_error(err, SO_EIO, "cannot read \"%s\": %s", path,
		    strerror(errno));
	if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EIO, "\"%s\" is not a regular file",
		    path);
	}
	return 0;
}

int
http_file_sha256(const char *path, char out[65], unsigned long long *size,
    struct so_err *err)
{
	int fd, rc;

	if ((rc = open_regular(path, &fd, err)) != 0)
		return rc;
	rc = sha256_fd(fd, path, out, size, err);
	close(fd);
	return rc;
}

/*
 * Open and lock DIR/<sha256>.part for writing.  The cache is inside the
 * threat model of docs/reliability.md (beside results.db): a link planted
 * under that name is never written through, and a FIFO or anything else
 * that is not a regular file is refused rather than waited on.  One writer
 * per .part: another coordinator fetching waits for the lock.
 */
static int
open_part(const char *part, int *fd, struct so_err *err)
{
	struct stat sb;

	*fd = open(part, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC, 0644);
	if (*fd < 0)
		return so_error(err, SO_EIO, errno == ELOOP ? "\"%s\" is a "
		    "symbolic link: refusing to write through it" :
		    "cannot write \"%s\": %s", part, strerror(errno));
	if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EIO, "\"%s\" is not a regular file: "
		    "refusing to write to it", part);
	}
	if (flock(*fd, LOCK_EX) != 0) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EIO, "cannot lock \"%s\": %s", part,
		    strerror(errno));
	}
	return 0;
}

/* The .part's bytes from its start: their size and SHA-256. */
static int
part_sha256(int fd, const char *part, char out[65], unsigned long long *size,
    struct so_err *err)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return so_error(err, SO_EIO, "cannot read \"%s\": %s", part,
		    strerror(errno));
	return sha256_fd(fd, part, out, size, err);
}

/* One transfer's state, shared with libcurl's callbacks. */
struct xfer {
	CURL *curl;
	int fd;
	unsigned long long start;	/* range asked for */
	unsigned long long have;	/* bytes in the .part file */
	unsigned long long limit;	/* the expected size */
	unsigned long long received;
	int too_big;
	int io_errno;
	volatile sig_atomic_t *stop;
};

static size_t
on_data(char *data, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, off = 0;
	ssize_t w;

	if (x->have + len > x->limit) {
		x->too_big = 1;
		return 0;
	}
	while (off < len) {
		w = write(x->fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			x->io_errno = errno;
			return 0;
		}
		off += (size_t)w;
	}
	x->have += len;
	x->received += len;
	return len;
}

/* libcurl's progress hook: a signal stops the transfer. */
static int
on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct xfer *x = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return x->stop != NULL && *x->stop;
}

/*
 * One transfer into the locked .part file from where it ends.  Returns 0
 * when the server sent the rest, 1 when the connection dropped (err says
 * how; the bytes so far are kept and a retry resumes), or a negative
 * error.
 */
static int
transfer(const char *url, int fd, unsigned long long size,
    volatile sig_atomic_t *stop, struct http_stats *st, struct so_err *err)
{
	struct xfer x = { .fd = fd, .stop = stop,
	    .limit = size > 0 ? size : HTTP_UNKNOWN_SIZE_MAX };
	char curlerr[CURL_ERROR_SIZE] = "";
	struct stat sb;
	CURLcode cc;
	long code = 0;
	int rc = 0;

	if (fstat(fd, &sb) != 0)
		return so_error(err, SO_EIO, "fetch \"%s\": %s", url,
		    strerror(errno));
	x.have = x.start = (unsigned long long)sb.st_size;
	if (x.start >= size && size > 0) {
		/* A complete .part from an earlier run: the hash decides. */
		return 0;
	}
	if (lseek(fd, (off_t)x.start, SEEK_SET) < 0)
		return so_error(err, SO_EIO, "fetch \"%s\": %s", url,
		    strerror(errno));
	if ((x.curl = curl_easy_init()) == NULL)
		return so_error(err, SO_ENOMEM, "fetch \"%s\": cannot start "
		    "libcurl", url);
	curl_easy_setopt(x.curl, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(x.curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(x.curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(x.curl, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(x.curl, CURLOPT_REDIR_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(x.curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(x.curl, CURLOPT_MAXREDIRS, (long)HTTP_MAX_REDIRECTS);
	curl_easy_setopt(x.curl, CURLOPT_CONNECTTIMEOUT,
	    (long)HTTP_CONNECT_TIMEOUT);
	curl_easy_setopt(x.curl, CURLOPT_TIMEOUT, (long)HTTP_TOTAL_TIMEOUT);
	/* A stalled server is a dropped connection, not a long wait. */
	curl_easy_setopt(x.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(x.curl, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(x.curl, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(x.curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x.curl, CURLOPT_USERAGENT, "seqorch");
	curl_easy_setopt(x.curl, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(x.curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(x.curl, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(x.curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(x.curl, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(x.curl, CURLOPT_NOPROGRESS, 0L);
	if (x.start > 0)
		curl_easy_setopt(x.curl, CURLOPT_RESUME_FROM_LARGE,
		    (curl_off_t)x.start);
	if (st != NULL) {
		st->attempts++;
		if (x.start > 0)
			st->resumed_at = x.start;
	}
	cc = curl_easy_perform(x.curl);
	curl_easy_getinfo(x.curl, CURLINFO_RESPONSE_CODE, &code);
	if (st != NULL)
		st->bytes += x.received;
	switch (cc) {
	case CURLE_OK:
		break;
	case CURLE_ABORTED_BY_CALLBACK:
		rc = so_error(err, SO_EINTR, "fetch \"%s\": interrupted", url);
		break;
	case CURLE_HTTP_RETURNED_ERROR:
		rc = so_error(err, SO_ENET, "fetch \"%s\": HTTP status %ld",
		    url, code);
		break;
	case CURLE_TOO_MANY_REDIRECTS:
		rc = so_error(err, SO_ENET, "fetch \"%s\": more than %d "
		    "redirects (a redirect loop?)", url, HTTP_MAX_REDIRECTS);
		break;
	case CURLE_WRITE_ERROR:
		if (x.too_big)
			rc = so_error(err, SO_ECHECKSUM, "fetch \"%s\": more "
			    "than the %s %llu bytes", url, size > 0 ?
			    "expected" : "most (size not pinned) of",
			    x.limit);
		else
			rc = so_error(err, SO_EIO, "fetch \"%s\": cannot write "
			    "the download: %s", url, strerror(x.io_errno));
		break;
	case CURLE_RANGE_ERROR:
		/* The server cannot resume: start the file over. */
		if (ftruncate(fd, 0) != 0) {
			rc = so_error(err, SO_EIO, "fetch \"%s\": cannot restart "
			    "the download: %s", url, strerror(errno));
			break;
		}
		so_error(err, SO_ENET, "fetch \"%s\": the server does not "
		    "resume a download (no HTTP range support)", url);
		rc = 1;
		break;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
		/* Worth resuming: the bytes so far are kept. */
		if (size > 0)
			so_error(err, SO_ENET, "fetch \"%s\": connection "
			    "dropped after %llu of %llu bytes (%s)", url,
			    x.have, size,
			    curlerr[0] ? curlerr : curl_easy_strerror(cc));
		else
			so_error(err, SO_ENET, "fetch \"%s\": connection "
			    "dropped after %llu bytes (%s)", url, x.have,
			    curlerr[0] ? curlerr : curl_easy_strerror(cc));
		rc = 1;
		break;
	default:
		rc = so_error(err, SO_ENET, "fetch \"%s\": %s", url,
		    curlerr[0] ? curlerr : curl_easy_strerror(cc));
		break;
	}
	curl_easy_cleanup(x.curl);
	return rc;
}

/*
 * A .part is resumed only from the URL that sent its bytes, which
 * PART.url names: bytes from another URL (a truncating or lying mirror)
 * would make an honest URL's download fail and be blamed.  A .part from
 * another URL, or of unknown origin, is emptied; then PART.url names url.
 */
static int
part_origin(const char *part, int fd, const char *url, struct so_err *err)
{
	char *side = xasprintf("%s.url", part), had[4096];
	size_t ulen = strlen(url);
	ssize_t n = -1;
	struct stat sb;
	int sfd, rc = 0;

	sfd = open(side, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (sfd >= 0) {
		if (fstat(sfd, &sb) == 0 && S_ISREG(sb.st_mode))
			n = read(sfd, had, sizeof had);
		close(sfd);
	}
	if (n != (ssize_t)ulen || memcmp(had, url, ulen) != 0) {
		if (ftruncate(fd, 0) != 0)
			rc = so_error(err, SO_EIO, "cannot restart \"%s\": %s",
			    part, strerror(errno));
		else
			rc = write_file_atomic(side, url, ulen, 0644, err);
	}
	free(side);
	return rc;
}

/* n bytes are the size expected (0: not pinned, any). */
static int
size_ok(unsigned long long n, unsigned long long size)
{
	return size == 0 || n == size;
}

/* "N bytes", or "any size" when it is not pinned, into buf. */
static const char *
size_text(unsigned long long size, char *buf, size_t len)
{
	if (size == 0)
		return "any size";
	snprintf(buf, len, "%llu bytes", size);
	return buf;
}

/*
 * Is DIR/<sha> a file of that hash?  A damaged one is removed, and so is
 * a link or anything else that is not a regular file (never followed or
 * waited on): the download replaces it.
 */
static int
cached(const char *path, const char *sha256, unsigned long long size)
{
	char got[65];
	unsigned long long n;
	struct so_err e;
	struct stat sb;
	int fd, ok;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			unlink(path);
		return 0;
	}
	ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sha256_fd(fd, path, got, &n, &e) == 0 && size_ok(n, size) &&
	    strcmp(got, sha256) == 0;
	close(fd);
	if (!ok)
		unlink(path);
	return ok;
}

int
http_import(const char *file, const char *sha256, unsigned long long size,
    const char *dir, char **path, struct so_err *err)
{
	char *final = xasprintf("%s/%s", dir, sha256);
	char *part = xasprintf("%s/%s.part", dir, sha256), got[65];
	unsigned long long n = 0;
	char buf[65536], want[32];
	FILE *in = NULL;
	int fd = -1, ifd = -1, rc;
	size_t len;

	*path = NULL;
	if ((rc = make_dirs(dir, err)) != 0)
		goto out;
	if (cached(final, sha256, size))
		goto done;
	/* Checked by its descriptor: the name may have changed since. */
	if ((rc = open_regular(file, &ifd, err)) != 0)
		goto out;
	if ((in = fdopen(ifd, "rb")) == NULL) {
		rc = so_error(err, SO_ENOMEM, "cannot read \"%s\": %s", file,
		    strerror(errno));
		close(ifd);
		goto out;
	}
	if ((rc = open_part(part, &fd, err)) != 0)
		goto out;
	if (ftruncate(fd, 0) != 0) {
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", part,
		    strerror(errno));
		goto out;
	}
	while (rc == 0 && (len = fread(buf, 1, sizeof buf, in)) > 0)
		rc = write_all(fd, buf, len, part, err);
	if (rc == 0 && (ferror(in) || fsync(fd) != 0))
		rc = so_error(err, SO_EIO, "cannot copy \"%s\" to \"%s\": %s",
		    file, part, strerror(errno));
	if (rc != 0) {
		unlink(part);
		goto out;
	}
	/* The copy is what the cache keeps: it is the one checked. */
	if ((rc = part_sha256(fd, part, got, &n, err)) != 0)
		goto out;
	if (!size_ok(n, size) || strcmp(got, sha256) != 0) {
		unlink(part);
		rc = so_error(err, SO_ECHECKSUM, "\"%s\": %llu bytes with "
		    "SHA-256 %s, expected %s with SHA-256 %s (copy deleted)",
		    file, n, got, size_text(size, want, sizeof want), sha256);
		goto out;
	}
	if (rename(part, final) != 0) {
		rc = so_error(err, SO_EIO, "cannot rename \"%s\" to \"%s\": %s",
		    part, final, strerror(errno));
		goto out;
	}
done:
	*path = final;
	final = NULL;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (in != NULL)
		fclose(in);
	free(part);
	free(final);
	return rc;
}

int
http_fetch(const char *url, const char *sha256, unsigned long long size,
    const char *dir, volatile sig_atomic_t *stop, char **path,
    struct http_stats *st, struct so_err *err)
{
	char *final = xasprintf("%s/%s", dir, sha256);
	char *part = xasprintf("%s/%s.part", dir, sha256), got[65];
	char *side = NULL, want[32];
	unsigned long long n = 0;
	unsigned attempt;
	struct stat sb;
	int fd = -1, rc;

	*path = NULL;
	if (st != NULL)
		memset(st, 0, sizeof *st);
	pthread_once(&curl_once, init_curl);
	if (curl_init_rc != CURLE_OK) {
		rc = so_error(err, SO_ENET, "fetch \"%s\": libcurl does not "
		    "initialise: %s", url, curl_easy_strerror(curl_init_rc));
		goto out;
	}
	if ((rc = make_dirs(dir, err)) != 0)
		goto out;
	if (cached(final, sha256, size)) {
		if (st != NULL)
			st->cached = 1;
		goto done;
	}
	if ((rc = open_part(part, &fd, err)) != 0)
		goto out;
	/* It may have arrived while we waited for the lock. */
	if (cached(final, sha256, size))
		goto done;
	side = xasprintf("%s.url", part);
	if ((rc = part_origin(part, fd, url, err)) != 0)
		goto out;
	/*
	 * A size not pinned cannot tell a complete .part from a partial
	 * one: its hash can, and a range past its end would be refused.
	 */
	if (size == 0 && (rc = part_sha256(fd, part, got, &n, err)) != 0)
		goto out;
	for (attempt = 0; attempt < HTTP_ATTEMPTS &&
	    !(size == 0 && n > 0 && strcmp(got, sha256) == 0); attempt++) {
		rc = transfer(url, fd, size, stop, st, err);
		if (rc != 1)
			break;
	}
	if (rc == 1)
		rc = SO_ENET;	/* err says how the last attempt ended */
	if (rc != 0)
		goto out;
	if (fsync(fd) != 0) {
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", part,
		    strerror(errno));
		goto out;
	}
	if ((rc = part_sha256(fd, part, got, &n, err)) != 0)
		goto out;
	if (!size_ok(n, size) || strcmp(got, sha256) != 0) {
		/* Never resumed from: the bytes are wrong, not missing. */
		unlink(part);
		unlink(side);
		rc = so_error(err, SO_ECHECKSUM, "fetch \"%s\": got %llu bytes "
		    "with SHA-256 %s, expected %s with SHA-256 %s (download "
		    "deleted)", url, n, got, size_text(size, want, sizeof want),
		    sha256);
		goto out;
	}
	if (rename(part, final) != 0) {
		rc = so_error(err, SO_EIO, "cannot rename \"%s\" to \"%s\": %s",
		    part, final, strerror(errno));
		goto out;
	}
	unlink(side);
done:
	*path = final;
	final = NULL;
	rc = 0;
out:
	/* Nothing arrived: nothing to resume from, so nothing is left. */
	if (rc != 0 && fd >= 0 && side != NULL && fstat(fd, &sb) == 0 &&
	    sb.st_size == 0) {
		unlink(part);
		unlink(side);
	}
	if (fd >= 0)
		close(fd);
	free(side);
	free(part);
	free(final);
	return rc;
}

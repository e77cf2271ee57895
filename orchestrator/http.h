/*
 * Downloads with libcurl into a content-addressed cache: DIR/<sha256> is
 * a file whose SHA-256 is its name, and nothing else ever gets that name.
 * A download goes to DIR/<sha256>.part (locked while written, kept for a
 * resumed download with an HTTP range), is checked for its size and hash,
 * then renamed into place.  DIR/<sha256>.part.url names the URL the
 * .part's bytes came from: a .part is resumed only from that URL.  http(s) only, at most HTTP_MAX_REDIRECTS
 * redirects, a connect and a total timeout; libcurl honours the proxy
 * variables of the environment (http_proxy, https_proxy, HTTPS_PROXY,
 * ALL_PROXY, no_proxy).  Nothing here exits or prints.
 */
#ifndef SEQORCH_HTTP_H
#define SEQORCH_HTTP_H

#include "util.h"

#include <signal.h>

#define HTTP_MAX_REDIRECTS 5
#define HTTP_CONNECT_TIMEOUT 30		/* seconds */
#define HTTP_TOTAL_TIMEOUT 1800		/* seconds, per attempt */
#define HTTP_ATTEMPTS 3			/* a dropped transfer resumes */
/* A download whose size is not pinned (size 0) stops past this. */
#define HTTP_UNKNOWN_SIZE_MAX (1ULL << 30)

struct http_stats {
	int cached;			/* it was in the cache already */
	unsigned attempts;		/* transfers started */
	unsigned long long resumed_at;	/* last range start, 0 if none */
	unsigned long long bytes;	/* bytes received over the network */
};

/*
 * Make DIR/<sha256> hold the file of that hash and size (0: a size not
 * pinned, the hash alone decides, at most HTTP_UNKNOWN_SIZE_MAX bytes
 * are taken), downloading it
 * from url unless it is there (a cached file is re-hashed: a damaged one
 * is removed and fetched again).  dir is created if missing.  *path gets
 * the cached file's path (caller frees).  Errors name the URL: SO_ENET
 * (HTTP status, connection, timeout, too many redirects), SO_ECHECKSUM
 * (wrong size or hash; the download is deleted), SO_EIO (local files),
 * SO_EINTR (*stop set).  st may be NULL; stop may be NULL.
 */
/*
 * The same for a file already here (an offline copy of the download):
 * copied into DIR/<sha256>.part, that copy's size and SHA-256 checked,
 * then renamed.  SO_ECHECKSUM (the copy is deleted), SO_EIO.
 */
int http_import(const char *file, const char *sha256,
    unsigned long long size, const char *dir, char **path,
    struct so_err *err);

int http_fetch(const char *url, const char *sha256, unsigned long long size,
    const char *dir, volatile sig_atomic_t *stop, char **path,
    struct http_stats *st,
    struct so_err *err);

/* SHA-256 (lowercase hex, 65 bytes with the NUL) of a file; 0 or SO_EIO. */
int http_file_sha256(const char *path, char out[65], unsigned long long *size,
    struct so_err *err);

#endif

/* Content-addressed artifacts beside results.db (artifact.h). */
#include "artifact.h"
#include "progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GC_MIN_AGE 600	/* seconds an unrecorded file is left alone */

void
artifact_sha256(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	hex_encode(md, 32, out);
}

/*
 * The directory of db's file, as a new string (caller frees): SQLite's
 * full path of it, links resolved.  Its store is artifacts/ there, so
 * every database in it shares that store.
 */
static char *
db_dir(struct db *db)
{
	char *copy = xstrdup(db_path(db)), *dir;

	dir = xstrdup(dirname(copy));
	free(copy);
	return dir;
}

char *
artifact_dir(struct db *db)
{
	char *parent = db_dir(db), *dir;

	dir = xasprintf("%s/artifacts", parent);
	free(parent);
	return dir;
}

char *
artifact_path(struct db *db, const char *sha256)
{
	char *dir = artifact_dir(db), *p;

	p = xasprintf("%s/%s", dir, sha256);
	free(dir);
	return p;
}

/* Write data to path through a temporary file, synced, then renamed. */
static int
write_whole(const char *dir, const char *path, const void *data, size_t len,
    struct so_err *err)
{
	char *tmp = xasprintf("%s/.tmp.%ld.XXXXXX", dir, (long)getpid());
	int fd, rc = 0;

	if ((fd = mkstemp(tmp)) < 0) {
		rc = so_error(err, SO_EIO, "cannot create a file in \"%s\": %s",
		    dir, strerror(errno));
		goto out;
	}
	rc = write_all(fd, data, len, tmp, err);
	if (rc == 0 && (fsync(fd) != 0 || fchmod(fd, 0444) != 0))
		rc = so_error(err, SO_EIO, "cannot sync \"%s\": %s", tmp,
		    strerror(errno));
	if (close(fd) != 0 && rc == 0)
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", tmp,
		    strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0)
		rc = so_error(err, SO_EIO, "cannot rename \"%s\": %s", tmp,
		    strerror(errno));
	if (rc != 0)
		unlink(tmp);
out:
	free(tmp);
	return rc;
}

/*
 * Open path for reading if it is a regular file: never through a link,
 * and without blocking (a FIFO planted in the store would hang open and
 * read).  SO_ENOTFOUND when missing, SO_EINVAL when not a regular file.
 */
static int
open_regular(const char *path, int *fd, struct stat *sb, struct so_err *err)
{
	*fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT ? so_error(err, SO_ENOTFOUND, "artifact "
		    "\"%s\" is missing", path) : errno == ELOOP ?
		    so_error(err, SO_EINVAL, "artifact \"%s\" is a symbolic "
		    "link, not a regular file", path) : so_error(err, SO_EIO,
		    "cannot open \"%s\": %s", path, strerror(errno));
	if (fstat(*fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EINVAL, "artifact \"%s\" is not a "
		    "regular file", path);
	}
	return 0;
}

/* Is path already the regular file of len bytes that hashes to sha? */
static int
stored_whole(const char *path, const char *sha, size_t len)
{
	unsigned char buf[65536], md[32];
	EVP_MD_CTX *ctx = NULL;
	uint64_t total = 0;
	char got[65];
	struct stat sb;
	unsigned int n;
	ssize_t r;
	int fd, ok = 0;

	if (open_regular(path, &fd, &sb, NULL) != 0)
		return 0;
	if ((size_t)sb.st_size != len || (ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		goto out;
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		total += (uint64_t)r;
	}
	if (r == 0 && total == len && EVP_DigestFinal_ex(ctx, md, &n) == 1) {
		hex_encode(md, 32, got);
		ok = strcmp(got, sha) == 0;
	}
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return ok;
}

/*
 * Open the store's lock file, or *fd = -1 when there is none to open (a
 * read-only store without one).  One that is there but this user cannot
 * open (its mode, its owner) stops gc, which would remove without it; a
 * writer says so once and goes on: refused, a run would lose the raw
 * output it cannot measure again, where going on risks only a gc that
 * runs meanwhile.
 */
static int
lock_open(const char *path, int exclusive, int *fd, struct so_err *err)
{
	static atomic_int warned;
	struct stat sb;
	int e;

	/* O_NONBLOCK: a FIFO planted under the name is refused, not waited. */
	*fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC, 0644);
	if (*fd < 0 && (errno == EACCES || errno == EROFS))
		*fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	if (*fd < 0) {
		if ((e = errno) == ENOENT)
			return 0;
		if (e == EACCES && !exclusive) {
			if (atomic_exchange(&warned, 1) == 0)
				progress_note("cannot open \"%s\": %s: storing "
				    "artifacts without the store's lock, so a gc "
				    "meanwhile may remove one this names", path,
				    strerror(e));
			return 0;
		}
		return so_error(err, SO_EIO, e == ELOOP ? "\"%s\" is a "
		    "symbolic link: refusing to lock through it" : "cannot "
		    "open \"%s\": %s", path, strerror(e));
	}
	if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(*fd);
		*fd = -1;
		return so_error(err, SO_EIO, "\"%s\" is not a regular file: "
		    "refusing to lock it", path);
	}
	return 0;
}

int
artifact_lock(struct db *db, int exclusive, int *fd, struct so_err *err)
{
	char *dir = artifact_dir(db), *path = xasprintf("%s/.lock", dir);
	int op = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB, rc = 0;
	int wait_s = exclusive ? ARTIFACT_GC_WAIT_S : ARTIFACT_LOCK_WAIT_S;
	struct timespec start, now, pause = { 0, 20 * 1000 * 1000 };

	*fd = -1;
	/* A writer stores into it next; gc leaves a database without one so. */
	if (!exclusive)
		(void)mkdir(dir, 0755);
	if ((rc = lock_open(path, exclusive, fd, err)) != 0 || *fd < 0)
		goto out;
	if (flock(*fd, op) == 0)
		goto out;
	if (errno == EWOULDBLOCK) {
		/*
		 * Polled, not a blocking flock: the wait has a bound without
		 * signals, in a coordinator with a thread per host.
		 */
		progress_note("%sartifact store \"%s\" is in use by %s: "
		    "waiting for it, up to %d s", exclusive ? "gc: " : "", dir,
		    exclusive ? "a run or an import storing into it" : "gc",
		    wait_s);
		clock_gettime(CLOCK_MONOTONIC, &start);
		do {
			nanosleep(&pause, NULL);
			if (flock(*fd, op) == 0)
				goto out;
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while ((errno == EWOULDBLOCK || errno == EINTR) &&
		    (now.tv_sec - start.tv_sec) * 1000000000LL +
		    (now.tv_nsec - start.tv_nsec) < wait_s * 1000000000LL);
		if (errno == EWOULDBLOCK || errno == EINTR) {
			rc = so_error(err, SO_EBUSY, "artifact store \"%s\" "
			    "stayed in use by %s for %d s", dir, exclusive ?
			    "a run or an import" : "gc", wait_s);
			goto out;
		}
	}
	rc = so_error(err, SO_EIO, "cannot lock \"%s\": %s", path,
	    strerror(errno));
out:
	if (rc != 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	free(path);
	free(dir);
	return rc;
}

void
artifact_unlock(int fd)
{
	/* Closing the only descriptor of the open file releases its lock. */
	if (fd >= 0)
		close(fd);
}

int
artifact_put(struct db *db, const void *data, size_t len, char *sha256,
    struct so_err *err)
{
	char sha[65], *dir = NULL, *path = NULL;
	int rc;

	if (len > ARTIFACT_MAX)
		return so_error(err, SO_EINVAL, "an artifact of %zu bytes is "
		    "over %u MiB: not kept", len, ARTIFACT_MAX >> 20);
	artifact_sha256(data, len, sha);
	if (sha256 != NULL)
		memcpy(sha256, sha, sizeof sha);
	dir = artifact_dir(db);
	path = xasprintf("%s/%s", dir, sha);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		rc = so_error(err, SO_EIO, "cannot create \"%s\": %s", dir,
		    strerror(errno));
		goto out;
	}
	/*
	 * A file already under the name is trusted only if it hashes to it:
	 * a damaged one (or a link, a FIFO) is replaced with the right bytes.
	 */
	if (!stored_whole(path, sha, len) &&
	    (rc = write_whole(dir, path, data, len, err)) != 0)
		goto out;
	rc = 0;
out:
	free(path);
	free(dir);
	return rc;
}

int
artifact_keep(struct db *db, int64_t build_id, const char *kind,
    const char *name, const void *data, size_t len, char *sha256,
    struct so_err *err)
{
	char sha[65];
	int rc, lock;

	if ((rc = artifact_lock(db, 0, &lock, err)) != 0 ||
	    (rc = artifact_put(db, data, len, sha, err)) != 0 ||
	    (rc = db_artifact_add(db, sha, len, err)) != 0) {
		/* Say what it was. */
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof err->msg - n, " (%s \"%s\")",
		    kind, name);
		goto out;
	}
	if (sha256 != NULL)
		memcpy(sha256, sha, sizeof sha);
	rc = db_artifact_ref(db, build_id, kind, name, sha, err);
out:
	artifact_unlock(lock);
	return rc;
}

int
artifact_name(struct db *db, int64_t build_id, const char *kind,
    const char *name, const char *sha256, struct so_err *err)
{
	int rc, lock;

	if ((rc = artifact_lock(db, 0, &lock, err)) != 0)
		return rc;
	if ((rc = db_artifact_have(db, sha256, err)) == 1)
		rc = db_artifact_ref(db, build_id, kind, name, sha256, err);
	else if (rc == 0)
		rc = SO_ENOTFOUND;
	artifact_unlock(lock);
	return rc;
}

int
artifact_load(struct db *db, const char *sha256, char **data, size_t *len,
    struct so_err *err)
{
	char *path = artifact_path(db, sha256), *buf = NULL, sha[65];
	size_t got = 0;
	struct stat sb;
	int fd = -1, rc;

	*data = NULL;
	*len = 0;
	if ((rc = open_regular(path, &fd, &sb, err)) != 0)
		goto out;
	if (sb.st_size > ARTIFACT_MAX) {
		rc = so_error(err, SO_EIO, "artifact \"%s\" is over %u MiB",
		    path, ARTIFACT_MAX >> 20);
		goto out;
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	while (got < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != (size_t)sb.st_size) {
		rc = so_error(err, SO_EIO, "cannot read \"%s\"", path);
		goto out;
	}
	buf[got] = '\0';
	artifact_sha256(buf, got, sha);
	if (strcmp(sha, sha256) != 0) {
		rc = so_error(err, SO_EPROTO, "artifact \"%s\" was changed: its "
		    "content hashes to %s", path, sha);
		goto out;
	}
	*data = buf;
	*len = got;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

struct gc_state {
	struct db *db;
	int dry_run;
	FILE *out;
	uint64_t n, bytes;
	char (*keep)[65];	/* what other databases name, sorted */
	size_t nkeep;
	struct so_err *err;
};

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* File path of the store, listed as name and what it is, goes. */
static int
gc_remove(struct gc_state *g, const char *path, const char *name,
    int64_t size, const char *what)
{
	fprintf(g->out, "%s  %lld bytes%s%s\n", name, (long long)size, what,
	    g->dry_run ? " (would remove)" : "");
	g->n++;
	g->bytes += (uint64_t)size;
	if (!g->dry_run && unlink(path) != 0 && errno != ENOENT)
		return so_error(g->err, SO_EIO, "cannot remove \"%s\": %s",
		    path, strerror(errno));
	return 0;
}

/* Another database beside this one names it: the file stays. */
static int
gc_kept(const struct gc_state *g, const char *sha256)
{
	return g->nkeep > 0 && bsearch(sha256, g->keep, g->nkeep,
	    sizeof *g->keep, cmp_name) != NULL;
}

static int
gc_one(void *arg, const char *sha256, int64_t size)
{
	struct gc_state *g = arg;
	char *path;
	int rc = 0;

	/* A row that names no file of the store: dropped, nothing unlinked. */
	if (!artifact_name_ok(sha256)) {
		fprintf(g->out, "(a row named \"%.80s\", not a sha256: no file "
		    "removed)\n", sha256);
		g->n++;
		return 0;
	}
	if (gc_kept(g, sha256))
		return 0;
	path = artifact_path(g->db, sha256);
	rc = gc_remove(g, path, sha256, size, "");
	free(path);
	return rc;
}


/* Count a row whose file gc_one would remove, removing nothing. */
static int
gc_count(void *arg, const char *sha256, int64_t size)
{
	struct gc_state *g = arg;

	(void)size;
	if (artifact_name_ok(sha256) && !gc_kept(g, sha256))
		g->n++;
	return 0;
}

/*
 * Can gc remove the files of the rows it would forget?  Rows go before
 * their files (a crash between leaves a file no row records, for the next
 * sweep, never a row naming no file), so from a store this user cannot
 * write gc forgot every row and kept every file.  0, or SO_EIO naming the
 * store when it cannot and there is a file to remove.
 */
static int
gc_can_remove(struct gc_state *g, const char *dir, struct so_err *err)
{
	struct gc_state count = *g;
	int rc, e;

	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 ||
	    (e = errno) == ENOENT)
		return 0;
	count.n = 0;
	if ((rc = db_artifact_gc(g->db, 1, gc_count, &count, err)) != 0)
		return rc;
	if (count.n == 0)
		return 0;
	return so_error(err, SO_EIO, "cannot remove files from \"%s\": %s",
	    dir, strerror(e));
}

static int
keep_name(void *arg, const char *sha256)
{
	struct gc_state *g = arg;

	/* Anything else is no file's name in the store. */
	if (artifact_name_ok(sha256)) {
		ALLOC_GROW(g->keep, g->nkeep);
		memcpy(g->keep[g->nkeep++], sha256, sizeof *g->keep);
	}
	return 0;
}

/*
 * Every name that another database in the directory of db's file records
 * or names, into g->keep, sorted: they all share one store, and each
 * database knows only its own names.  Any file there that is an SQLite
 * database is one of them, a link to one too (an SQLite that does not
 * resolve links puts its store beside the link), and one that cannot be
 * read stops gc before it removes anything.
 */
static int
gc_shared(struct gc_state *g, struct so_err *err)
{
	char *dir = db_dir(g->db), *path = NULL;
	struct stat self, sb;
	struct db *other;
	struct dirent *e;
	DIR *d = NULL;
	int rc = 0;

	if (stat(db_path(g->db), &self) != 0) {
		rc = so_error(err, SO_EIO, "cannot read \"%s\": %s",
		    db_path(g->db), strerror(errno));
		goto out;
	}
	if ((d = opendir(dir)) == NULL) {
		rc = so_error(err, SO_EIO, "cannot read \"%s\": %s", dir,
		    strerror(errno));
		goto out;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		free(path);
		path = xasprintf("%s/%s", dir, e->d_name);
		/* A dangling link names no database; db itself is read already. */
		if (stat(path, &sb) != 0) {
			if (errno != ENOENT)
				rc = so_error(err, SO_EIO, "cannot read \"%s\": "
				    "%s", path, strerror(errno));
			continue;
		}
		if (!S_ISREG(sb.st_mode) ||
		    (sb.st_dev == self.st_dev && sb.st_ino == self.st_ino))
			continue;
		if ((rc = db_open_any(path, &other, err)) == 0) {
			rc = db_artifact_names(other, keep_name, g, err);
			db_close(other);
		}
		if (rc == SO_ENOTFOUND)
			rc = 0;
	}
	if (g->nkeep > 0)
		qsort(g->keep, g->nkeep, sizeof *g->keep, cmp_name);
out:
	if (d != NULL)
		closedir(d);
	free(path);
	free(dir);
	return rc;
}

int
artifact_gc(struct db *db, int dry_run, FILE *out, uint64_t *n,
    uint64_t *bytes, struct so_err *err)
{
	struct gc_state g = { db, dry_run, out, 0, 0, NULL, 0, err };
	char *dir = artifact_dir(db), *path, msg[sizeof err->msg];
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int rc, lock = -1;

	/*
	 * From the first database read to the last file removed: a run could
	 * otherwise name a file after gc read its database, and lose it.
	 */
	if ((!dry_run && (rc = artifact_lock(db, 1, &lock, err)) != 0) ||
	    (rc = gc_shared(&g, err)) != 0 ||
	    (!dry_run && (rc = gc_can_remove(&g, dir, err)) != 0)) {
		snprintf(msg, sizeof msg, "%s", err->msg);
		so_error(err, rc, "gc: %s: nothing removed", msg);
		goto out;
	}
	if ((rc = db_artifact_gc(db, dry_run, gc_one, &g, err)) != 0)
		goto out;
	/* Files a crash left behind before they were recorded. */
	if ((d = opendir(dir)) == NULL)
		goto out;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		int have = 0;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    time(NULL) - sb.st_mtime <= GC_MIN_AGE)
			;
		else if (strncmp(e->d_name, ".tmp.", 5) == 0)
			/*
			 * A write artifact_put never renamed into place (its
			 * process died): no database can name it.  Files
			 * neither ours nor such are left alone.
			 */
			rc = gc_remove(&g, path, e->d_name,
			    (int64_t)sb.st_size, ", a write cut short");
		else if (artifact_name_ok(e->d_name) &&
		    (have = db_artifact_have(db, e->d_name, err)) == 0)
			rc = gc_one(&g, e->d_name, (int64_t)sb.st_size);
		if (have < 0)
			rc = have;
		free(path);
	}
	closedir(d);
out:
	artifact_unlock(lock);
	*n = g.n;
	*bytes = g.bytes;
	free(g.keep);
	free(dir);
	return rc < 0 ? rc : 0;
}

int
artifact_name_ok(const char *name)
{
	size_t i;

	if (name == NULL)
		return 0;
	for (i = 0; i < 64; i++)
		if (!((name[i] >= '0' && name[i] <= '9') ||
		    (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return name[64] == '\0';
}

/* Sources generated on the coordinator from a study's artifacts. */
#include "generate.h"

#include "deploy.h"
#include "fetch.h"
#include "strbuf.h"
#include "study.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A generated file larger than this is a broken script, not a source. */
#define GEN_FILE_MAX (4 << 20)

/* Remove dir and the plain files in it (the generator's output). */
static void
remove_flat(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *p;

		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' ||
		    (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

/* perl script tarball outdir, its stderr passed on; 0 or SO_EBUILD. */
static int
run_script(const char *script, const char *tarball, const char *outdir,
    const char *what, struct so_err *err)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return so_error(err, SO_EIO, "cannot fork: %s",
		    strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* stdout is the command's results: the script has none. */
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execlp("perl", "perl", script, tarball, outdir, (char *)NULL);
		fprintf(stderr, "seqorch: cannot run perl: %s\n",
		    strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return so_error(err, SO_EIO, "waitpid: %s",
			    strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return so_error(err, SO_EBUILD, "generating %s failed (perl %s, %s "
	    "%d; perl is needed on the coordinator for it)", what, script,
	    WIFEXITED(status) ? "status" : "signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* Read the files of dir into g as "name/<file>", sorted by readdir. */
static int
load_files(struct generated *g, const char *dir, const char *name,
    struct so_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return so_error(err, SO_EIO, "cannot read \"%s\": %s", dir,
		    strerror(errno));
	while (rc == 0 && (e = readdir(d)) != NULL) {
		struct gen_file *f;
		char *p;
		FILE *fp;
		long n;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		fp = fopen(p, "rb");
		if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 ||
		    (n = ftell(fp)) < 0 || n > GEN_FILE_MAX ||
		    fseek(fp, 0, SEEK_SET) != 0) {
			rc = so_error(err, SO_EIO, "cannot read \"%s\"", p);
		} else {
			ALLOC_GROW(g->files, g->nfiles);
			f = &g->files[g->nfiles++];
			f->path = xasprintf("%s/%s", name, e->d_name);
			f->data = xmalloc((size_t)n + 1);
			f->len = fread(f->data, 1, (size_t)n, fp);
			f->data[f->len] = '\0';
			if (f->len != (size_t)n)
				rc = so_error(err, SO_EIO, "cannot read "
				    "\"%s\"", p);
		}
		if (fp != NULL)
			fclose(fp);
		free(p);
	}
	closedir(d);
	return rc;
}

/* The generated folder's key: the artifact's hash and the script's. */
static void
gen_key(const struct artifact_entry *a, const void *script, size_t len,
    char key[17])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[32];
	unsigned int n;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestUpdate(ctx, a->sha256, strlen(a->sha256) + 1);
	EVP_DigestUpdate(ctx, script, len);
	EVP_DigestFinal_ex(ctx, md, &n);
	EVP_MD_CTX_free(ctx);
	hex_encode(md, 8, key);
}

/*
 * The version the sources of a name (its meta's "NAME.version=V" line)
 * is a's: a tarball named as another version than it holds would be
 * recorded under the wrong one.  0 or SO_EINVAL.
 */
static int
check_version(const struct generated *g, const struct artifact_entry *a,
    struct so_err *err)
{
	char *meta = xasprintf("%s/meta", a->name);
	char *key = xasprintf("%s.version=", a->name);
	const char *line = NULL, *v;
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < g->nfiles; i++)
		if (strcmp(g->files[i].path, meta) == 0)
			line = g->files[i].data;
	while (line != NULL && strncmp(line, key, strlen(key)) != 0 &&
	    (line = strchr(line, '\n')) != NULL)
		line++;
	if (line == NULL) {
		rc = so_error(err, SO_EINVAL, "the sources generated from "
		    "\"%s\" name no version (%s)", a->name, meta);
		goto out;
	}
	v = line + strlen(key);
	n = strcspn(v, "\n");
	if (strlen(a->version) != n || strncmp(v, a->version, n) != 0)
		rc = so_error(err, SO_EINVAL, "the %s tarball of SHA-256 %s "
		    "holds version %.*s, not %s", a->name, a->sha256, (int)n, v,
		    a->version);
out:
	free(key);
	free(meta);
	return rc;
}

/* One artifact's sources into g, generating them unless cached. */
static int
generate_one(struct generated *g, const struct artifact_entry *a,
    const char *cache, const void *script, size_t slen, struct so_err *err)
{
	char *tarball = xasprintf("%s/%s", cache, a->sha256);
	char *top = NULL, *dir = NULL, *tmp = NULL, *spath = NULL;
	char *what = NULL, key[17];
	struct stat sb;
	int rc = 0;

	gen_key(a, script, slen, key);
	top = xasprintf("%s/generated/%s", cache, key);
	dir = xasprintf("%s/%s", top, a->name);
	/* A finished folder has its meta: written last, renamed whole. */
	tmp = xasprintf("%s/meta", dir);
	if (stat(tmp, &sb) == 0)
		goto load;
	free(tmp);
	tmp = xasprintf("%s/.%s.%ld", top, a->name, (long)getpid());
	spath = xasprintf("%s/generate-%ld.pl", top, (long)getpid());
	what = xasprintf("the sources of study \"%s\" from \"%s\"",
	    a->study, a->name);
	if ((rc = make_dirs(top, err)) != 0 ||
	    (rc = write_file_atomic(spath, script, slen, 0644, err)) != 0)
		goto out;
	remove_flat(tmp);
	rc = run_script(spath, tarball, tmp, what, err);
	unlink(spath);
	if (rc != 0)
		goto out;
	/* Another run may have finished the same folder first. */
	if (rename(tmp, dir) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
		rc = so_error(err, SO_EIO, "cannot rename \"%s\": %s", tmp,
		    strerror(errno));
		goto out;
	}
	remove_flat(tmp);
load:
	if ((rc = load_files(g, dir, a->name, err)) != 0)
		goto out;
	if (a->version != NULL && (rc = check_version(g, a, err)) != 0)
		goto out;
	ALLOC_GROW(g->names, g->nnames);
	g->names[g->nnames++] = xstrdup(a->name);
out:
	free(what);
	free(spath);
	free(tmp);
	free(dir);
	free(top);
	free(tarball);
	return rc;
}

int
generate_study(const char *study, const struct fetch_choice *c,
    const char *cache, struct generated **out, struct so_err *err)
{
	const struct artifact_entry *a;
	struct artifact_entry e;
	char *url;
	struct generated *g = NULL;
	struct strbuf keys = STRBUF_INIT;
	const void *script = NULL;
	char *path = NULL, *sp = NULL;
	size_t slen = 0;
	int rc = 0;

	*out = NULL;
	for (a = artifact_table; a->study != NULL && rc == 0; a++) {
		struct stat sb;

		if (strcmp(a->study, study) != 0 || !a->generate)
			continue;
		fetch_choose(a, c, &e, &url);
		free(path);
		path = xasprintf("%s/%s", cache, e.sha256);
		if (stat(path, &sb) != 0) {
			free(url);
			continue;
		}
		if (script == NULL) {
			sp = xasprintf("kernels/%s/generate.pl", study);
			script = deploy_shipped_file(sp, &slen);
			if (script == NULL) {
				rc = so_error(err, SO_ENOTFOUND, "study \"%s\" "
				    "marks \"%s\" generate, but has no %s",
				    study, a->name, sp);
				free(url);
				break;
			}
		}
		if (g == NULL)
			g = xcalloc(1, sizeof *g);
		rc = generate_one(g, &e, cache, script, slen, err);
		if (rc == 0) {
			char k[17];

			gen_key(&e, script, slen, k);
			strbuf_addstr(&keys, k);
		}
		free(url);
	}
	if (rc == 0 && g != NULL) {
		unsigned char md[32];
		unsigned int n;

		EVP_Digest(keys.buf, keys.len, md, &n, EVP_sha256(), NULL);
		hex_encode(md, 8, g->key);
		*out = g;
		g = NULL;
	}
	generated_free(g);
	strbuf_release(&keys);
	free(sp);
	free(path);
	return rc;
}

int
generated_has(const struct generated *g, const char *name)
{
	size_t i;

	for (i = 0; g != NULL && i < g->nnames; i++)
		if (strcmp(g->names[i], name) == 0)
			return 1;
	return 0;
}

void
generated_free(struct generated *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->nfiles; i++) {
		free(g->files[i].path);
		free(g->files[i].data);
	}
	for (i = 0; i < g->nnames; i++)
		free(g->names[i]);
	free(g->files);
	free(g->names);
	free(g);
}

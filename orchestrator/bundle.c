/* Result bundles: make, save, load and verify (bundle.h). */
#include "bundle.h"

#include "artifact.h"
#include "study.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT "seqorch-bundle"
#define FORMAT_VERSION 1
#define TAR_BLOCK 512
#define MAX_DEPTH 4

static void
sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	hex_encode(md, 32, out);
}

static void
add_file(struct bundle *b, const char *path, void *data, size_t len)
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

/* An encrypted key would make OpenSSL prompt: refuse it instead. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

static int
fingerprint(EVP_PKEY *k, char out[65])
{
	unsigned char raw[64];
	size_t len = sizeof raw;

	if (EVP_PKEY_get_raw_public_key(k, raw, &len) != 1)
		return -1;
	sha256_hex(raw, len, out);
	return 0;
}

static int
load_key(const char *path, int private, EVP_PKEY **out, struct so_err *err)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *k;

	*out = NULL;
	if (f == NULL)
		return so_error(err, SO_EIO, "cannot open key \"%s\": %s", path,
		    strerror(errno));
	k = private ? PEM_read_PrivateKey(f, NULL, no_passphrase, NULL) :
	    PEM_read_PUBKEY(f, NULL, no_passphrase, NULL);
	fclose(f);
	if (k == NULL)
		return so_error(err, SO_EINVAL, "key \"%s\": not an unencrypted "
		    "PEM %s key (make one with `openssl genpkey -algorithm "
		    "ed25519 -out key.pem`%s)", path, private ? "private" :
		    "public", private ? "" : " and `openssl pkey -in key.pem "
		    "-pubout -out key.pub`");
	if (EVP_PKEY_get_id(k) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(k);
		return so_error(err, SO_EINVAL, "key \"%s\": not an Ed25519 "
		    "key", path);
	}
	*out = k;
	return 0;
}

/* Compare on path, so manifests list files in one order. */
static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct bundle_file *)a)->path,
	    ((const struct bundle_file *)b)->path);
}

static int
sign(const char *key_path, const char *msg, size_t len, char *sig_hex,
    struct so_err *err)
{
	unsigned char sig[64];
	size_t siglen = sizeof sig;
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *k = NULL;
	int rc;

	if ((rc = load_key(key_path, 1, &k, err)) != 0)
		return rc;
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)msg,
	    len) != 1)
		rc = so_error(err, SO_EIO, "cannot sign with \"%s\"", key_path);
	else
		hex_encode(sig, siglen, sig_hex);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}

int
bundle_make(struct db *db, int64_t run_id, cJSON *summary,
    const char *key_path, struct bundle *out, struct so_err *err)
{
	cJSON *rows = NULL, *man = NULL, *files, *arts, *row;
	char sha[65], fpr[65] = "", sig[129], *text, *data;
	size_t i, len;
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = db_run_rows(db, run_id, &rows, err)) != 0)
		goto out;
	text = cJSON_PrintUnformatted(summary);
	add_file(out, "summary.json", text, strlen(text));
	text = cJSON_PrintUnformatted(rows);
	add_file(out, "rows.json", text, strlen(text));
	/* The artifacts rows name every file the run keeps. */
	arts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(rows, "tables"), "artifacts"),
	    "rows");
	cJSON_ArrayForEach(row, arts) {
		const cJSON *s = cJSON_GetArrayItem(row, 0);
		char path[80];

		if (!cJSON_IsString(s)) {
			rc = so_error(err, SO_EDB, "artifacts: a row without "
			    "its sha256");
			goto out;
		}
		if ((rc = artifact_load(db, s->valuestring, &data, &len,
		    err)) != 0)
			goto out;
		snprintf(path, sizeof path, "artifacts/%s", s->valuestring);
		add_file(out, path, data, len);
	}
	if (out->n > 0)
		qsort(out->files, out->n, sizeof *out->files, by_path);
	man = cJSON_CreateObject();
	cJSON_AddStringToObject(man, "format", FORMAT);
	cJSON_AddNumberToObject(man, "version", FORMAT_VERSION);
	cJSON_AddStringToObject(man, "seqorch", SEQORCH_VERSION);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(man, "runs"),
	    cJSON_CreateNumber((double)run_id));
	{
		/* Who measured (the run's coordinator), not who exported. */
		cJSON *o = cJSON_AddObjectToObject(man, "origin"), *runs, *c;
		const char *coord = NULL;
		int i = 0;

		runs = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(rows, "tables"), "runs");
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(runs,
		    "columns")) {
			if (cJSON_IsString(c) &&
			    strcmp(c->valuestring, "coordinator") == 0)
				coord = cJSON_GetStringValue(cJSON_GetArrayItem(
				    cJSON_GetArrayItem(cJSON_GetObjectItem(
				    runs, "rows"), 0), i));
			i++;
		}
		cJSON_AddStringToObject(o, "coordinator", coord ? coord :
		    db_coordinator_id());
		cJSON_AddStringToObject(o, "db", db_path(db));
	}
	if (key_path != NULL) {
		EVP_PKEY *k;

		/* Signed along: it tells a reader which public key to use. */
		if ((rc = load_key(key_path, 1, &k, err)) != 0)
			goto out;
		fingerprint(k, fpr);
		EVP_PKEY_free(k);
		cJSON_AddStringToObject(man, "key_fingerprint", fpr);
	}
	files = cJSON_AddArrayToObject(man, "files");
	for (i = 0; i < out->n; i++) {
		cJSON *f = cJSON_CreateObject();

		sha256_hex(out->files[i].data, out->files[i].len, sha);
		cJSON_AddStringToObject(f, "path", out->files[i].path);
		cJSON_AddStringToObject(f, "sha256", sha);
		cJSON_AddNumberToObject(f, "size", (double)out->files[i].len);
		cJSON_AddItemToArray(files, f);
	}
	text = cJSON_Print(man);
	len = strlen(text);
	if (key_path != NULL) {
		if ((rc = sign(key_path, text, len, sig, err)) != 0) {
			free(text);
			goto out;
		}
		add_file(out, "manifest.sig", xasprintf("%s\n", sig),
		    strlen(sig) + 1);
	}
	add_file(out, "manifest.json", text, len);
	if (out->n > 0)
		qsort(out->files, out->n, sizeof *out->files, by_path);
out:
	cJSON_Delete(man);
	cJSON_Delete(rows);
	cJSON_Delete(summary);
	if (rc != 0)
		bundle_free(out);
	return rc;
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

static int
write_file(const char *path, const void *data, size_t len, struct so_err *err)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (f == NULL)
		return so_error(err, SO_EIO, "cannot create \"%s\": %s", path,
		    strerror(errno));
	if (fwrite(data, 1, len, f) != len)
		rc = so_error(err, SO_EIO, "cannot write \"%s\": %s", path,
		    strerror(errno));
	if (fclose(f) != 0 && rc == 0)
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
	char *tmp = xasprintf("%s.tmp", dest);
	unsigned char *tar = NULL;
	size_t len;
	int rc;

	if ((rc = bundle_tar(b, &tar, &len, err)) == 0 &&
	    (rc = write_file(tmp, tar, len, err)) == 0 &&
	    rename(tmp, dest) != 0)
		rc = so_error(err, SO_EIO, "cannot rename \"%s\": %s", tmp,
		    strerror(errno));
	if (rc != 0)
		unlink(tmp);
	free(tar);
	free(tmp);
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

static int
read_all(const char *path, unsigned char **data, size_t *len, size_t max,
    struct so_err *err)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	int rc = 0;

	*data = NULL;
	if (f == NULL)
		return so_error(err, SO_EIO, "cannot open \"%s\": %s", path,
		    strerror(errno));
	if (fstat(fileno(f), &sb) != 0 || (uint64_t)sb.st_size > max) {
		rc = so_error(err, SO_EPARSE, "\"%s\" is over the bundle size "
		    "limit", path);
		goto out;
	}
	*len = (size_t)sb.st_size;
	*data = xmalloc(*len + 1);
	if (fread(*data, 1, *len, f) != *len) {
		rc = so_error(err, SO_EIO, "cannot read \"%s\"", path);
		free(*data);
		*data = NULL;
	}
out:
	fclose(f);
	return rc;
}

static int
load_tar(const char *src, struct bundle *out, struct so_err *err)
{
	unsigned char *tar = NULL, *h;
	size_t len = 0, off = 0, size, i;
	unsigned sum, want;
	char name[101], *end;
	int rc;

	if ((rc = read_all(src, &tar, &len, BUNDLE_MAX_BYTES, err)) != 0)
		return rc;
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
		want = (unsigned)strtoul((const char *)h + 148, NULL, 8);
		for (sum = 0, i = 0; i < TAR_BLOCK; i++)
			sum += i >= 148 && i < 156 ? ' ' : h[i];
		size = (size_t)strtoull((const char *)h + 124, &end, 8);
		if (sum != want || memcmp(h + 257, "ustar", 5) != 0) {
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
		add_file(out, name, xmalloc(size + 1), size);
		memcpy(out->files[out->n - 1].data, h + TAR_BLOCK, size);
		off += TAR_BLOCK + (size + TAR_BLOCK - 1) / TAR_BLOCK *
		    TAR_BLOCK;
	}
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
				add_file(out, r, data, len);
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
	rc = S_ISDIR(sb.st_mode) ? load_dir(src, "", 0, out, &total, err) :
	    load_tar(src, out, err);
	if (rc != 0)
		bundle_free(out);
	else if (out->n > 0)
		qsort(out->files, out->n, sizeof *out->files, by_path);
	return rc;
}

void
bundle_info_free(struct bundle_info *info)
{
	cJSON_Delete(info->manifest);
	cJSON_Delete(info->rows);
	memset(info, 0, sizeof *info);
}

static int
check_signature(const struct bundle *b, const char *pubkey_path,
    struct bundle_info *info, struct so_err *err)
{
	const struct bundle_file *man = bundle_get(b, "manifest.json");
	const struct bundle_file *sig = bundle_get(b, "manifest.sig");
	unsigned char raw[64];
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *k = NULL;
	size_t i;
	int rc;

	if (man == NULL)
		return so_error(err, SO_EPARSE, "bundle: no manifest.json");
	if (sig == NULL)
		return so_error(err, SO_EINVAL, "bundle: manifest.sig is "
		    "missing: the bundle is not signed");
	for (i = 0; i < 64; i++) {
		unsigned v;

		if (sig->len < 128 || sscanf((const char *)sig->data + 2 * i,
		    "%2x", &v) != 1)
			return so_error(err, SO_EPARSE, "bundle: manifest.sig "
			    "is not 64 bytes of hex");
		raw[i] = (unsigned char)v;
	}
	if ((rc = load_key(pubkey_path, 0, &k, err)) != 0)
		return rc;
	fingerprint(k, info->key_fingerprint);
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestVerify(ctx, raw, sizeof raw, man->data, man->len) != 1)
		rc = so_error(err, SO_EINVAL, "bundle: manifest.json: the "
		    "signature does not verify with key \"%s\" (%.16s...)",
		    pubkey_path, info->key_fingerprint);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}

/* Every listed file present with its hash and size; nothing unlisted. */
static int
check_files(const struct bundle *b, const cJSON *files, struct so_err *err)
{
	const cJSON *f;
	char sha[65];
	size_t i, listed = 0;

	if (!cJSON_IsArray(files))
		return so_error(err, SO_EPARSE, "manifest.json: no \"files\"");
	cJSON_ArrayForEach(f, files) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "path");
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(f, "sha256");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(f, "size");
		const struct bundle_file *bf;

		if (!cJSON_IsString(p) || !cJSON_IsString(s) ||
		    !cJSON_IsNumber(n))
			return so_error(err, SO_EPARSE, "manifest.json: a file "
			    "entry lacks path, sha256 or size");
		if ((bf = bundle_get(b, p->valuestring)) == NULL)
			return so_error(err, SO_EINVAL, "bundle: \"%s\" is "
			    "listed in the manifest but missing",
			    p->valuestring);
		sha256_hex(bf->data, bf->len, sha);
		if (strcmp(sha, s->valuestring) != 0 ||
		    (double)bf->len != n->valuedouble)
			return so_error(err, SO_EINVAL, "bundle: \"%s\" was "
			    "changed: sha256 %s, the manifest says %s",
			    p->valuestring, sha, s->valuestring);
		listed++;
	}
	for (i = 0; i < b->n; i++) {
		const char *p = b->files[i].path;

		if (strcmp(p, "manifest.json") == 0 ||
		    strcmp(p, "manifest.sig") == 0)
			continue;
		cJSON_ArrayForEach(f, files)
			if (strcmp(cJSON_GetObjectItemCaseSensitive(f,
			    "path")->valuestring, p) == 0)
				break;
		if (f == NULL)
			return so_error(err, SO_EINVAL, "bundle: \"%s\" is not "
			    "in the manifest", p);
	}
	(void)listed;
	return 0;
}

/* Column index of name in a rows.json table, or -1. */
static int
col(const cJSON *table, const char *name)
{
	const cJSON *c;
	int i = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(table,
	    "columns")) {
		if (cJSON_IsString(c) && strcmp(c->valuestring, name) == 0)
			return i;
		i++;
	}
	return -1;
}

struct ref_memo {
	char study[64], seed[129], digest[129];
	uint64_t steps;
};

/* Each sample's digest against its study's reference, recomputed here. */
static int
check_samples(const cJSON *rows, struct bundle_info *info, FILE *log,
    struct so_err *err)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(rows, "tables"), "samples");
	struct ref_memo *memo = NULL;
	size_t nmemo = 0, i;
	const cJSON *row;
	int cs = col(t, "study"), cd = col(t, "digest"), cv = col(t, "valid");
	int cseed = col(t, "seed"), cn = col(t, "steps"), ci = col(t, "id");
	int rc = 0;

	if (t == NULL)
		return 0;
	if (cs < 0 || cd < 0 || cv < 0 || cseed < 0 || cn < 0)
		return so_error(err, SO_EPARSE, "rows.json: samples lack study, "
		    "seed, steps, digest or valid");
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(t, "rows")) {
		const char *study = cJSON_GetStringValue(
		    cJSON_GetArrayItem(row, cs));
		const char *seed = cJSON_GetStringValue(
		    cJSON_GetArrayItem(row, cseed));
		const char *digest = cJSON_GetStringValue(
		    cJSON_GetArrayItem(row, cd));
		double steps = cJSON_GetNumberValue(cJSON_GetArrayItem(row, cn));
		int valid = cJSON_GetNumberValue(cJSON_GetArrayItem(row, cv))
		    == 1;
		const struct study_entry *e;
		uint8_t x[KERNEL_MAX_STATE];
		char why[160];

		if (study == NULL || seed == NULL || digest == NULL ||
		    !(steps >= 1)) {
			rc = so_error(err, SO_EPARSE, "rows.json: a malformed "
			    "sample");
			break;
		}
		for (i = 0; i < nmemo; i++)
			if (strcmp(memo[i].study, study) == 0 &&
			    strcmp(memo[i].seed, seed) == 0 &&
			    memo[i].steps == (uint64_t)steps)
				break;
		if (i == nmemo) {
			if ((e = study_find(study)) == NULL) {
				rc = so_error(err, SO_EINVAL, "bundle: study "
				    "\"%s\" has no reference in this seqorch",
				    study);
				break;
			}
			if (strlen(seed) != 2 * e->study->state_len ||
			    hex_decode(seed, x, e->study->state_len) != 0) {
				rc = so_error(err, SO_EPARSE, "rows.json: bad "
				    "seed \"%.40s\"", seed);
				break;
			}
			if (log != NULL)
				fprintf(log, "seqorch: recomputing %s: %.0f "
				    "steps from %.16s...\n", study, steps,
				    seed);
			if (e->ref->chain(x, (uint64_t)steps, NULL, why,
			    sizeof why) != 0) {
				rc = so_error(err, SO_EIO, "reference of study "
				    "\"%s\" failed: %s", study, why);
				break;
			}
			memo = xrealloc(memo, (nmemo + 1) * sizeof *memo);
			snprintf(memo[nmemo].study, sizeof memo[nmemo].study,
			    "%s", study);
			snprintf(memo[nmemo].seed, sizeof memo[nmemo].seed,
			    "%s", seed);
			memo[nmemo].steps = (uint64_t)steps;
			hex_encode(x, e->study->state_len, memo[nmemo].digest);
			nmemo++;
		}
		if ((strcmp(memo[i].digest, digest) == 0) != valid) {
			rc = so_error(err, SO_EINVAL, "bundle: sample %.0f "
			    "(%s) is marked %s but its digest %.16s... %s the "
			    "reference %.16s...", ci >= 0 ?
			    cJSON_GetNumberValue(cJSON_GetArrayItem(row, ci)) :
			    0.0, study, valid ? "valid" : "invalid", digest,
			    valid ? "differs from" : "equals", memo[i].digest);
			break;
		}
		info->samples_checked++;
	}
	free(memo);
	return rc;
}

int
bundle_verify(const struct bundle *b, const char *pubkey_path,
    struct bundle_info *info, FILE *log, struct so_err *err)
{
	const struct bundle_file *man, *rows;
	const cJSON *fmt, *runs, *r, *origin;
	int rc;

	memset(info, 0, sizeof *info);
	if ((rc = check_signature(b, pubkey_path, info, err)) != 0)
		goto fail;
	man = bundle_get(b, "manifest.json");
	sha256_hex(man->data, man->len, info->manifest_sha256);
	info->manifest = cJSON_ParseWithLength((const char *)man->data,
	    man->len);
	fmt = cJSON_GetObjectItemCaseSensitive(info->manifest, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) != 0) {
		rc = so_error(err, SO_EPARSE, "manifest.json: not a seqorch "
		    "bundle");
		goto fail;
	}
	if ((rc = check_files(b, cJSON_GetObjectItemCaseSensitive(
	    info->manifest, "files"), err)) != 0)
		goto fail;
	origin = cJSON_GetObjectItemCaseSensitive(info->manifest, "origin");
	info->coordinator = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(origin, "coordinator"));
	info->db_path = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(origin, "db"));
	runs = cJSON_GetObjectItemCaseSensitive(info->manifest, "runs");
	cJSON_ArrayForEach(r, runs)
		if (cJSON_IsNumber(r) && info->nruns < 64)
			info->runs[info->nruns++] = (int64_t)r->valuedouble;
	if (info->coordinator == NULL || info->nruns == 0) {
		rc = so_error(err, SO_EPARSE, "manifest.json: no origin or no "
		    "runs");
		goto fail;
	}
	if ((rows = bundle_get(b, "rows.json")) == NULL ||
	    (info->rows = cJSON_ParseWithLength((const char *)rows->data,
	    rows->len)) == NULL) {
		rc = so_error(err, SO_EPARSE, "bundle: rows.json is missing or "
		    "not JSON");
		goto fail;
	}
	if (bundle_get(b, "summary.json") == NULL) {
		rc = so_error(err, SO_EPARSE, "bundle: summary.json is missing");
		goto fail;
	}
	if ((rc = check_samples(info->rows, info, log, err)) != 0)
		goto fail;
	return 0;
fail:
	bundle_info_free(info);
	return rc;
}

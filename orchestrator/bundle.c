/* Result bundles: make and sign, and verify (bundle.h); bundle-io.c
 * writes and reads their files. */
#include "bundle.h"
#include "bundle-int.h"

#include "artifact.h"
#include "strbuf.h"
#include "study.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORMAT "seqorch-bundle"
#define FORMAT_VERSION 1
#define CHUNK (1u << 20)	/* rows.json written in pieces of about this */

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
	artifact_sha256(raw, len, out);
	return 0;
}

/* Does s hold a control character (C0, DEL)? */
static int
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
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

/*
 * rows.json as db_run_rows_each gives it, printed as cJSON_PrintUnformatted
 * printed the whole tree before (the same bytes: each row is printed by
 * cJSON), into sp through a buffer; along the way, what the manifest and
 * the artifacts need: the run's coordinator and the artifacts' names.
 */
struct rows_out {
	struct bundle_out *o;
	struct bundle_spool *sp;
	struct strbuf buf;
	char *row;			/* a row as cJSON prints it */
	size_t rowcap;
	int ntables, nrows;
	int coord_col;			/* the runs table's coordinator, or -1 */
	int in_runs, in_artifacts;
	char *coordinator;		/* of the first runs row, or NULL */
	char **arts;			/* the artifacts rows' names */
	size_t narts;
};

static int
rows_flush(struct rows_out *ro, size_t keep, struct so_err *err)
{
	int rc = 0;

	if (ro->buf.len > keep) {
		rc = bundle_spool_write(ro->sp, ro->buf.buf, ro->buf.len, err);
		strbuf_reset(&ro->buf);
		if (rc != 0)
			ro->o->failed = 1;
	}
	return rc;
}

/* v printed unformatted into ro->buf. */
static int
rows_print(struct rows_out *ro, const cJSON *v, const char *what,
    struct so_err *err)
{
	char *text;

	if (ro->row == NULL) {
		ro->rowcap = 4096;
		ro->row = xmalloc(ro->rowcap);
	}
	while (!cJSON_PrintPreallocated((cJSON *)v, ro->row, (int)ro->rowcap,
	    0)) {
		/* A long build log: printed alone, then kept room for. */
		if (ro->rowcap >= (1u << 20)) {
			if ((text = cJSON_PrintUnformatted(v)) == NULL)
				return so_error(err, SO_ENOMEM, "cannot format "
				    "rows.json: %s", what);
			strbuf_addstr(&ro->buf, text);
			cJSON_free(text);
			return 0;
		}
		ro->rowcap *= 2;
		ro->row = xrealloc(ro->row, ro->rowcap);
	}
	strbuf_addstr(&ro->buf, ro->row);
	return 0;
}

static int
rows_table(void *arg, const char *name, const cJSON *columns,
    struct so_err *err)
{
	struct rows_out *ro = arg;
	cJSON *n = cJSON_CreateString(name);
	const cJSON *c;
	int rc, i = 0;

	strbuf_addstr(&ro->buf, ro->ntables++ == 0 ? "{\"tables\":{" : "]},");
	rc = rows_print(ro, n, name, err);
	cJSON_Delete(n);
	if (rc != 0)
		return rc;
	strbuf_addstr(&ro->buf, ":{\"columns\":");
	if ((rc = rows_print(ro, columns, name, err)) != 0)
		return rc;
	strbuf_addstr(&ro->buf, ",\"rows\":[");
	ro->nrows = 0;
	ro->in_runs = strcmp(name, "runs") == 0;
	ro->in_artifacts = strcmp(name, "artifacts") == 0;
	ro->coord_col = -1;
	cJSON_ArrayForEach(c, columns) {
		if (ro->in_runs && strcmp(c->valuestring, "coordinator") == 0)
			ro->coord_col = i;
		i++;
	}
	return 0;
}

/*
 * Does cJSON print v as plain text we can write ourselves: an integer of
 * at most 15 digits (as "%d", or "%1.15g" that round-trips: the same
 * digits), or a string with nothing to escape?  Most values of a run are,
 * and printing them here rather than through printf and sscanf halves the
 * time of a big export.
 */
static int
rows_plain(struct rows_out *ro, const cJSON *v)
{
	const unsigned char *p;
	char num[24];

	if (cJSON_IsNumber(v) && v->valuedouble > -1e15 &&
	    v->valuedouble < 1e15 &&
	    v->valuedouble == (double)(long long)v->valuedouble) {
		snprintf(num, sizeof num, "%lld", (long long)v->valuedouble);
		strbuf_addstr(&ro->buf, num);
		return 1;
	}
	if (!cJSON_IsString(v))
		return 0;
	for (p = (const unsigned char *)v->valuestring; *p != '\0'; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\')
			return 0;
	strbuf_addch(&ro->buf, '"');
	strbuf_add(&ro->buf, v->valuestring, (size_t)(p -
	    (const unsigned char *)v->valuestring));
	strbuf_addch(&ro->buf, '"');
	return 1;
}

static int
rows_row(void *arg, const cJSON *row, struct so_err *err)
{
	struct rows_out *ro = arg;
	const cJSON *v;
	int rc;

	if (ro->nrows++ > 0)
		strbuf_addch(&ro->buf, ',');
	strbuf_addch(&ro->buf, '[');
	cJSON_ArrayForEach(v, row) {
		if (v != row->child)
			strbuf_addch(&ro->buf, ',');
		if (!rows_plain(ro, v) &&
		    (rc = rows_print(ro, v, "a value", err)) != 0)
			return rc;
	}
	strbuf_addch(&ro->buf, ']');
	/* Who measured (the run's coordinator), not who exported. */
	if (ro->in_runs && ro->nrows == 1 && ro->coord_col >= 0 &&
	    cJSON_IsString(cJSON_GetArrayItem(row, ro->coord_col)))
		ro->coordinator = xstrdup(cJSON_GetArrayItem(row,
		    ro->coord_col)->valuestring);
	/* The artifacts rows name every file the run keeps. */
	if (ro->in_artifacts) {
		const cJSON *s = cJSON_GetArrayItem(row, 0);

		if (!cJSON_IsString(s) || !artifact_name_ok(s->valuestring))
			return so_error(err, SO_EDB, "artifacts: a row whose "
			    "name \"%.80s\" is not a sha256", cJSON_IsString(s) ?
			    s->valuestring : "");
		ALLOC_GROW(ro->arts, ro->narts);
		ro->arts[ro->narts++] = xstrdup(s->valuestring);
	}
	return rows_flush(ro, CHUNK, err);
}

/* A file of the manifest's list. */
struct listed {
	char path[80];
	char sha256[65];
	uint64_t size;
};

static int
by_listed_path(const void *a, const void *b)
{
	return strcmp(((const struct listed *)a)->path,
	    ((const struct listed *)b)->path);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * manifest.json's text (cJSON_Print) for files[0..n), sorted by path: a
 * new string the caller frees, or NULL when out of memory.
 */
static char *
manifest_text(struct db *db, int64_t run_id, const char *coordinator,
    const char *fpr, const struct listed *files, size_t n)
{
	cJSON *man = cJSON_CreateObject(), *list, *o;
	char *text;
	size_t i;

	cJSON_AddStringToObject(man, "format", FORMAT);
	cJSON_AddNumberToObject(man, "version", FORMAT_VERSION);
	cJSON_AddStringToObject(man, "seqorch", SEQORCH_VERSION);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(man, "runs"),
	    cJSON_CreateNumber((double)run_id));
	o = cJSON_AddObjectToObject(man, "origin");
	cJSON_AddStringToObject(o, "coordinator", coordinator != NULL ?
	    coordinator : db_coordinator_id());
	cJSON_AddStringToObject(o, "db", db_path(db));
	/* Signed along: it tells a reader which public key to use. */
	if (fpr != NULL)
		cJSON_AddStringToObject(man, "key_fingerprint", fpr);
	list = cJSON_AddArrayToObject(man, "files");
	for (i = 0; i < n; i++) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddStringToObject(f, "path", files[i].path);
		cJSON_AddStringToObject(f, "sha256", files[i].sha256);
		cJSON_AddNumberToObject(f, "size", (double)files[i].size);
		cJSON_AddItemToArray(list, f);
	}
	text = cJSON_Print(man);
	cJSON_Delete(man);
	return text;
}

/*
 * The bundle of run_id into o, its files in order of path: artifacts/,
 * manifest.json and manifest.sig, rows.json, summary.json.  rows.json is
 * spooled first (the manifest holds its hash, and the artifacts it names
 * come before it), summary.json is held as text.
 */
static int
make(struct db *db, int64_t run_id, cJSON *summary, const char *key_path,
    struct bundle_out *o, struct so_err *err)
{
	struct rows_out ro = { .buf = STRBUF_INIT };
	struct db_rows_visitor v = { rows_table, rows_row, &ro };
	struct bundle_spool sp = { .fd = -1 };
	struct stored_run run = { 0 };
	struct listed *files = NULL;
	char fpr[65] = "", sig[129], *sum = NULL, *man = NULL, *data = NULL;
	size_t i, n = 0, len;
	int rc;

	/*
	 * A run imported here is someone else's: bundled again, it would
	 * carry this database as its origin and this key's signature, and
	 * an unsigned import would come out signed.
	 */
	if ((rc = db_run_load(db, run_id, &run, err)) != 0)
		goto out;
	if (run.imported_from != NULL) {
		rc = so_error(err, SO_EINVAL, "run %lld was imported from a "
		    "bundle (run %lld of %s): only its own coordinator bundles "
		    "it", (long long)run_id, (long long)run.origin_run_id,
		    run.imported_from);
		goto out;
	}
	if (key_path != NULL) {
		EVP_PKEY *k;

		if ((rc = load_key(key_path, 1, &k, err)) != 0)
			goto out;
		fingerprint(k, fpr);
		EVP_PKEY_free(k);
	}
	/* The summary's text, its tree gone before the rows come. */
	sum = cJSON_PrintUnformatted(summary);
	cJSON_Delete(summary);
	summary = NULL;
	if (sum == NULL) {
		rc = so_error(err, SO_ENOMEM, "cannot format summary.json");
		goto out;
	}
	if ((rc = bundle_out_spool(o, "rows.json", &sp, err)) != 0)
		goto out;
	ro.o = o;
	ro.sp = &sp;
	if ((rc = db_run_rows_each(db, run_id, &v, err)) != 0)
		goto out;
	strbuf_addstr(&ro.buf, ro.ntables > 0 ? "]}}}" : "{\"tables\":{}}");
	if ((rc = rows_flush(&ro, 0, err)) != 0)
		goto out;
	bundle_spool_done(&sp);
	files = xcalloc(ro.narts + 2, sizeof *files);
	if (ro.narts > 0)
		qsort(ro.arts, ro.narts, sizeof *ro.arts, by_name);
	for (i = 0; i < ro.narts; i++, n++) {
		snprintf(files[n].path, sizeof files[n].path, "artifacts/%s",
		    ro.arts[i]);
		if ((rc = artifact_load(db, ro.arts[i], &data, &len,
		    err)) != 0)
			goto out;
		artifact_sha256(data, len, files[n].sha256);
		files[n].size = len;
		rc = bundle_out_file(o, files[n].path, data, len, err);
		free(data);
		if (rc != 0)
			goto out;
	}
	snprintf(files[n].path, sizeof files[n].path, "rows.json");
	memcpy(files[n].sha256, sp.sha256, sizeof sp.sha256);
	files[n++].size = sp.len;
	snprintf(files[n].path, sizeof files[n].path, "summary.json");
	artifact_sha256(sum, strlen(sum), files[n].sha256);
	files[n++].size = strlen(sum);
	qsort(files, n, sizeof *files, by_listed_path);
	if ((man = manifest_text(db, run_id, ro.coordinator, key_path != NULL ?
	    fpr : NULL, files, n)) == NULL) {
		rc = so_error(err, SO_ENOMEM, "cannot format manifest.json");
		goto out;
	}
	if ((rc = bundle_out_file(o, "manifest.json", man, strlen(man),
	    err)) != 0)
		goto out;
	if (key_path != NULL) {
		char line[130];

		if ((rc = sign(key_path, man, strlen(man), sig, err)) != 0)
			goto out;
		snprintf(line, sizeof line, "%s\n", sig);
		if ((rc = bundle_out_file(o, "manifest.sig", line,
		    strlen(line), err)) != 0)
			goto out;
	}
	if ((rc = bundle_out_put_spool(o, &sp, err)) != 0)
		goto out;
	rc = bundle_out_file(o, "summary.json", sum, strlen(sum), err);
out:
	bundle_spool_free(&sp);
	for (i = 0; i < ro.narts; i++)
		free(ro.arts[i]);
	free(ro.arts);
	free(ro.coordinator);
	free(ro.row);
	strbuf_release(&ro.buf);
	free(files);
	free(man);
	cJSON_free(sum);
	cJSON_Delete(summary);
	db_run_info_free(&run);
	return rc;
}

int
bundle_write(struct db *db, int64_t run_id, cJSON *summary,
    const char *key_path, const char *dest, int *output_failed,
    struct so_err *err)
{
	struct bundle_out o;
	int rc;

	if (output_failed != NULL)
		*output_failed = 0;
	if ((rc = bundle_out_open(&o, dest, err)) != 0) {
		cJSON_Delete(summary);
		if (output_failed != NULL)
			*output_failed = 1;
		return rc;
	}
	if ((rc = make(db, run_id, summary, key_path, &o, err)) == 0)
		rc = bundle_out_close(&o, err);
	else
		bundle_out_abort(&o);
	if (rc != 0 && output_failed != NULL)
		*output_failed = o.failed;
	return rc;
}

int
bundle_write_tar_fd(struct db *db, int64_t run_id, cJSON *summary,
    const char *key_path, int fd, const char *spool_dir, uint64_t *len,
    struct so_err *err)
{
	struct bundle_out o;
	int rc;

	bundle_out_open_fd(&o, fd, "the bundle's .tar", spool_dir);
	if ((rc = make(db, run_id, summary, key_path, &o, err)) == 0 &&
	    (rc = bundle_out_close(&o, err)) == 0)
		*len = o.size;
	else if (rc != 0 && o.dest != NULL)
		bundle_out_abort(&o);
	return rc;
}

void
bundle_info_free(struct bundle_info *info)
{
	cJSON_Delete(info->manifest);
	if (info->rows != NULL)
		rows_doc_free(info->rows);
	free(info->rows);
	memset(info, 0, sizeof *info);
}

/* man, manifest.json's len bytes, against manifest.sig. */
static int
check_signature(const struct bundle *b, const unsigned char *man, size_t len,
    const char *pubkey_path, struct bundle_info *info, struct so_err *err)
{
	const struct bundle_file *sig = bundle_get(b, "manifest.sig");
	unsigned char raw[64], *text = NULL;
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *k = NULL;
	size_t i;
	int rc;

	if (sig == NULL)
		return so_error(err, SO_EINVAL, "bundle: manifest.sig is "
		    "missing: the bundle is not signed");
	if ((rc = bundle_file_read(sig, BUNDLE_MAX_MANIFEST, &text, err)) != 0)
		return rc;
	for (i = 0; i < 64; i++) {
		unsigned v;

		if (sig->len < 128 || sscanf((const char *)text + 2 * i,
		    "%2x", &v) != 1) {
			free(text);
			return so_error(err, SO_EPARSE, "bundle: manifest.sig "
			    "is not 64 bytes of hex");
		}
		raw[i] = (unsigned char)v;
	}
	free(text);
	if ((rc = load_key(pubkey_path, 0, &k, err)) != 0)
		return rc;
	fingerprint(k, info->key_fingerprint);
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) != 1 ||
	    EVP_DigestVerify(ctx, raw, sizeof raw, man, len) != 1)
		rc = so_error(err, SO_EINVAL, "bundle: manifest.json: the "
		    "signature does not verify with key \"%s\" (%.16s...)",
		    pubkey_path, info->key_fingerprint);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	return rc;
}

/*
 * Every listed file present with its hash and size; nothing unlisted.
 * Each file's hash is left in shas[] (by its index in b), "" if unlisted.
 */
static int
check_files(const struct bundle *b, const cJSON *files, char (*shas)[65],
    struct so_err *err)
{
	const cJSON *f;
	char *sha;
	size_t i;
	int rc;

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
		/* Hashed once, when first listed: a second entry is a lie. */
		sha = shas[bf - b->files];
		if (sha[0] != '\0')
			return so_error(err, SO_EPARSE, "manifest.json: \"%s\" "
			    "is listed twice", p->valuestring);
		if ((rc = bundle_file_sha256(bf, sha, err)) != 0)
			return rc;
		if (strcmp(sha, s->valuestring) != 0 ||
		    (double)bf->len != n->valuedouble)
			return so_error(err, SO_EINVAL, "bundle: \"%s\" was "
			    "changed: sha256 %s, the manifest says %s",
			    p->valuestring, sha, s->valuestring);
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
	return 0;
}

/* Column index of name in a rows.json table's columns, or -1. */
static int
col(const cJSON *columns, const char *name)
{
	const cJSON *c;
	int i = 0;

	cJSON_ArrayForEach(c, columns) {
		if (cJSON_IsString(c) && strcmp(c->valuestring, name) == 0)
			return i;
		i++;
	}
	return -1;
}

/* Seconds on the monotonic clock. */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * x after steps steps of e's reference.  The chain is iterated in place,
 * so it runs in pieces (the first short, then doubled up to about half a
 * second each), and a long one shows how far it is on log.
 */
static int
recompute(const struct study_entry *e, uint8_t *x, uint64_t steps,
    uint64_t msg_len, FILE *log, char *why, size_t whylen)
{
	uint64_t done = 0, chunk = 1u << 16;
	double start = now_s(), shown = start;

	while (done < steps) {
		uint64_t n = steps - done < chunk ? steps - done : chunk;
		double t0 = now_s(), t;

		if ((msg_len > 0 ? e->ref->msg_chain(x, n, (size_t)msg_len,
		    NULL, why, whylen) : e->ref->chain(x, n, NULL, why,
		    whylen)) != 0)
			return -1;
		done += n;
		t = now_s();
		if (t - t0 < 0.5 && chunk < (UINT64_C(1) << 40))
			chunk *= 2;
		/* The first after a second, then every five. */
		if (log != NULL && done < steps &&
		    t - shown >= (shown == start ? 1.0 : 5.0)) {
			fprintf(log, "seqorch: recomputing %s: %.0f%% (%llu of "
			    "%llu %s), about %.0f s left\n", e->name,
			    100.0 * (double)done / (double)steps,
			    (unsigned long long)done, (unsigned long long)steps,
			    e->study->unit_plural, (t - start) *
			    (double)(steps - done) / (double)done);
			shown = t;
		}
	}
	return 0;
}

/* One run of the bundle: what its samples must agree with. */
struct run_ref {
	int64_t id;
	char *study, *seed;		/* owned */
	uint64_t steps;
	uint64_t msg_len;	/* --msg-len L, 0: the study's own chain */
	const struct study_entry *e;
	char digest[2 * KERNEL_MAX_STATE + 1];	/* "" until recomputed */
};

/*
 * A row's msg_len (schema 20): 0 when NULL or when the table has no such
 * column (a bundle from before it), else its value, -1 if not a number.
 */
static double
row_msg_len(const cJSON *row, int cm)
{
	const cJSON *v;

	if (cm < 0 || cJSON_IsNull(v = cJSON_GetArrayItem(row, cm)))
		return 0;
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The walk of the runs rows, then of the samples rows. */
struct sample_walk {
	struct bundle_info *info;
	struct run_ref rr[64];
	FILE *log;
	int ci, cs, cseed, cn, cm, cd, cv, cr;
	struct so_err *err;
};

/* A runs row: kept when it is one of the manifest's. */
static int
read_run(void *arg, const cJSON *row, long rown)
{
	struct sample_walk *w = arg;
	struct bundle_info *info = w->info;
	int64_t id = (int64_t)cJSON_GetArrayItem(row, w->ci)->valuedouble;
	double steps = cJSON_GetArrayItem(row, w->cn)->valuedouble;
	double msg_len = row_msg_len(row, w->cm);
	struct run_ref *r;
	uint64_t max;
	size_t i;

	(void)rown;
	for (i = 0; i < info->nruns && info->runs[i] != id; i++)
		;
	if (i == info->nruns)
		return 0;
	r = &w->rr[i];
	r->id = id;
	free(r->study);
	free(r->seed);
	r->study = xstrdup(cJSON_GetArrayItem(row, w->cs)->valuestring);
	r->seed = xstrdup(cJSON_GetArrayItem(row, w->cseed)->valuestring);
	if ((r->e = study_find(r->study)) == NULL)
		return so_error(w->err, SO_EINVAL, "bundle: study \"%.64s\" of "
		    "run %lld has no reference in this seqorch", r->study,
		    (long long)id);
	/* What `seqorch run --steps` takes: the work verify sets. */
	max = study_max_steps(r->e->study);
	if (!(steps >= 1 && steps <= (double)max))
		return so_error(w->err, SO_EINVAL, "rows.json: run %lld: steps "
		    "%.0f is outside 1..%llu (study \"%s\")", (long long)id,
		    steps, (unsigned long long)max, r->e->name);
	r->steps = (uint64_t)steps;
	/* What `seqorch run --msg-len` takes, for a study that has it. */
	if (msg_len != 0 && (r->e->ref->msg_chain == NULL ||
	    !(msg_len >= (double)r->e->study->state_len &&
	    msg_len <= KERNEL_MAX_MSG) ||
	    msg_len != (double)(uint64_t)msg_len))
		return so_error(w->err, SO_EINVAL, "rows.json: run %lld: msg_len "
		    "%.0f is not a message length of study \"%s\"",
		    (long long)id, msg_len, r->e->name);
	r->msg_len = (uint64_t)msg_len;
	return 0;
}

/* The manifest's runs as rows.json has them (types checked already). */
static int
read_runs(struct rows_doc *rows, struct sample_walk *w)
{
	const struct rows_doc_table *t;
	const cJSON *cols;
	size_t i, slot = 0;
	int rc;

	t = db_rows_table(rows, "runs", &slot);
	cols = t != NULL ? t->columns : NULL;
	w->ci = col(cols, "id");
	w->cs = col(cols, "study");
	w->cseed = col(cols, "seed");
	w->cn = col(cols, "steps");
	w->cm = col(cols, "msg_len");
	if (w->ci < 0 || w->cs < 0 || w->cseed < 0 || w->cn < 0)
		return so_error(w->err, SO_EPARSE, "rows.json: no runs table "
		    "with id, study, seed and steps");
	if ((rc = rows_doc_each(rows, slot, read_run, w)) != 0)
		return rc;
	for (i = 0; i < w->info->nruns; i++)
		if (w->rr[i].study == NULL)
			return so_error(w->err, SO_EPARSE, "rows.json: run %lld "
			    "of the manifest is not there", (long long)
			    w->info->runs[i]);
	return 0;
}

/* A samples row against its run. */
static int
check_sample(void *arg, const cJSON *row, long rown)
{
	struct sample_walk *w = arg;
	struct bundle_info *info = w->info;
	struct run_ref *rr = w->rr;
	/* db_rows_check vouched for each value's type and range. */
	int64_t run = (int64_t)cJSON_GetArrayItem(row, w->cr)->valuedouble;
	double id = cJSON_GetArrayItem(row, w->ci)->valuedouble;
	const char *study = cJSON_GetArrayItem(row, w->cs)->valuestring;
	const char *seed = cJSON_GetArrayItem(row, w->cseed)->valuestring;
	const char *digest = cJSON_GetArrayItem(row, w->cd)->valuestring;
	double steps = cJSON_GetArrayItem(row, w->cn)->valuedouble;
	double valid = cJSON_GetArrayItem(row, w->cv)->valuedouble;
	double msg_len = row_msg_len(row, w->cm);
	struct so_err *err = w->err;
	FILE *log = w->log;
	struct run_ref *r;
	uint8_t x[KERNEL_MAX_STATE];
	char why[160];
	size_t i, len;

	(void)rown;	/* a sample is named by its id */
	for (i = 0; i < info->nruns && rr[i].id != run; i++)
		;
	if (i == info->nruns)
		return so_error(err, SO_EPARSE, "rows.json: sample %.0f is of "
		    "no run of the manifest", id);
	r = &rr[i];
	if (strcmp(study, r->study) != 0 || steps != (double)r->steps)
		return so_error(err, SO_EINVAL, "rows.json: sample %.0f is "
		    "%.64s of %.0f steps, its run %lld %s of %llu", id, study,
		    steps, (long long)run, r->study,
		    (unsigned long long)r->steps);
	/* Its message length sets its chain as steps set its work. */
	if (msg_len != (double)r->msg_len)
		return so_error(err, SO_EINVAL, "rows.json: sample %.0f has "
		    "msg_len %.0f, its run %lld has %llu", id, msg_len,
		    (long long)run, (unsigned long long)r->msg_len);
	if (strcmp(seed, r->seed) != 0) {
		if (valid == 1)
			return so_error(err, SO_EINVAL, "bundle: sample %.0f is "
			    "marked valid but its seed %.16s... is not its "
			    "run's", id, seed);
		info->samples_checked++;
		return 0;
	}
	len = r->e->study->state_len;
	/* Runs of the same chain share its digest. */
	for (i = 0; i < info->nruns && r->digest[0] == '\0'; i++)
		if (rr[i].digest[0] != '\0' &&
		    strcmp(rr[i].study, r->study) == 0 &&
		    strcmp(rr[i].seed, r->seed) == 0 &&
		    rr[i].steps == r->steps && rr[i].msg_len == r->msg_len)
			memcpy(r->digest, rr[i].digest, sizeof r->digest);
	if (r->digest[0] == '\0') {
		if (strlen(seed) != 2 * len || hex_decode(seed, x, len) != 0)
			return so_error(err, SO_EPARSE, "rows.json: run %lld: "
			    "bad seed \"%.40s\"", (long long)run, seed);
		if (log != NULL && r->msg_len > 0)
			fprintf(log, "seqorch: recomputing %s: %llu %s of "
			    "%llu-byte messages from %.16s...\n", r->study,
			    (unsigned long long)r->steps,
			    r->e->study->unit_plural,
			    (unsigned long long)r->msg_len, seed);
		else if (log != NULL)
			fprintf(log, "seqorch: recomputing %s: %llu %s from "
			    "%.16s...\n", r->study, (unsigned long long)r->steps,
			    r->e->study->unit_plural, seed);
		why[0] = '\0';
		if (recompute(r->e, x, r->steps, r->msg_len, log, why,
		    sizeof why) != 0)
			return so_error(err, SO_EIO, "reference of study \"%s\" "
			    "failed: %s", r->study, why);
		hex_encode(x, len, r->digest);
	}
	if ((strcmp(r->digest, digest) == 0) != (valid == 1))
		return so_error(err, SO_EINVAL, "bundle: sample %.0f (%s) is "
		    "marked %s but its digest %.16s... %s the reference "
		    "%.16s...", id, study, valid == 1 ? "valid" : "invalid",
		    digest, valid == 1 ? "differs from" : "equals", r->digest);
	info->samples_checked++;
	return 0;
}

/*
 * Every sample against its run: the run's study and steps (a sample of
 * other steps would set its own work), its digest recomputed from the
 * run's seed with the study's reference, once per run, and its valid flag
 * consistent with that.  A sample of another seed is invalid whatever its
 * digest (as the runner stores it), so it must say so.
 */
static int
check_samples(struct rows_doc *rows, struct bundle_info *info, FILE *log,
    struct so_err *err)
{
	struct sample_walk w;
	const struct rows_doc_table *t;
	const cJSON *cols;
	size_t i, slot = 0;
	int rc;

	memset(&w, 0, sizeof w);
	w.info = info;
	w.log = log;
	w.err = err;
	if ((rc = read_runs(rows, &w)) != 0)
		goto out;
	if ((t = db_rows_table(rows, "samples", &slot)) == NULL)
		goto out;
	cols = t->columns;
	w.cs = col(cols, "study");
	w.cd = col(cols, "digest");
	w.cv = col(cols, "valid");
	w.cseed = col(cols, "seed");
	w.cn = col(cols, "steps");
	w.ci = col(cols, "id");
	w.cr = col(cols, "run_id");
	w.cm = col(cols, "msg_len");
	if (w.cs < 0 || w.cd < 0 || w.cv < 0 || w.cseed < 0 || w.cn < 0 ||
	    w.ci < 0) {
		rc = so_error(err, SO_EPARSE, "rows.json: samples lack study, "
		    "seed, steps, digest or valid");
		goto out;
	}
	rc = rows_doc_each(rows, slot, check_sample, &w);
out:
	for (i = 0; i < sizeof w.rr / sizeof w.rr[0]; i++) {
		free(w.rr[i].study);
		free(w.rr[i].seed);
	}
	return rc;
}

/* The manifest's runs: positive integers, each once, at most 64. */
static int
read_manifest_runs(const cJSON *runs, struct bundle_info *info,
    struct so_err *err)
{
	const cJSON *r;
	size_t i;

	cJSON_ArrayForEach(r, runs) {
		double v = cJSON_GetNumberValue(r);

		if (!cJSON_IsNumber(r) || !(v >= 1 && v <= 9007199254740991.0) ||
		    v != (double)(int64_t)v)
			return so_error(err, SO_EPARSE, "manifest.json: \"runs\" "
			    "holds a value that is not a run id");
		if (info->nruns == sizeof info->runs / sizeof info->runs[0])
			return so_error(err, SO_EPARSE, "manifest.json: over "
			    "%zu runs", info->nruns);
		for (i = 0; i < info->nruns; i++)
			if (info->runs[i] == (int64_t)v)
				return so_error(err, SO_EPARSE, "manifest.json: "
				    "run %.0f is listed twice", v);
		info->runs[info->nruns++] = (int64_t)v;
	}
	return 0;
}

/*
 * Every artifacts/ file is named by the SHA-256 of its bytes (shas: as
 * check_files found them, every such file being listed).
 */
static int
check_artifact_files(const struct bundle *b, char (*shas)[65],
    struct so_err *err)
{
	const char *sha;
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct bundle_file *f = &b->files[i];

		if (strncmp(f->path, "artifacts/", 10) != 0)
			continue;
		sha = shas[i];
		if (!artifact_name_ok(f->path + 10) ||
		    strcmp(sha, f->path + 10) != 0)
			return so_error(err, SO_EINVAL, "bundle: \"%.100s\" is "
			    "not named by the sha256 of its bytes (%s)",
			    f->path, sha);
	}
	return 0;
}

/* JS_SYNTAX as verify says it, or an error reading rows.json as it is. */
static int
not_json(int rc, struct so_err *err)
{
	if (rc < 0)
		return rc;
	return so_error(err, SO_EPARSE, "bundle: rows.json is missing or not "
	    "JSON");
}

/*
 * rows.json checked as JSON (but for its rows: db_rows_check) and opened
 * to be read a row at a time (info->rows), straight from the bundle's
 * file.
 */
static int
open_rows(const struct bundle *b, struct bundle_info *info,
    struct so_err *err)
{
	const struct bundle_file *f = bundle_get(b, "rows.json");
	int fd = -1, rc;

	if (f != NULL && (rc = bundle_file_open(f, &fd, err)) != 0)
		return rc;
	if (f != NULL) {
		info->rows = xcalloc(1, sizeof *info->rows);
		rc = fd >= 0 ? db_rows_open_fd(info->rows, fd, f->off, f->len,
		    f->path, err) : db_rows_open_mem(info->rows, f->data, f->len,
		    f->path, err);
		if (rc == 0)
			return 0;
	}
	return not_json(f != NULL ? rc : JS_SYNTAX, err);
}

int
bundle_verify(const struct bundle *b, const char *pubkey_path,
    struct bundle_info *info, FILE *log, struct so_err *err)
{
	const struct bundle_file *man;
	const cJSON *fmt, *runs, *origin;
	const char *fpr;
	double version;
	unsigned char *mtext = NULL;
	char (*shas)[65] = xcalloc(b->n + 1, sizeof *shas);
	struct so_err later = { 0, "" };
	int rc, rc2;

	memset(info, 0, sizeof *info);
	man = bundle_get(b, "manifest.json");
	if (man == NULL) {
		rc = so_error(err, SO_EPARSE, "bundle: no manifest.json");
		goto fail;
	}
	if ((rc = bundle_file_read(man, BUNDLE_MAX_MANIFEST, &mtext,
	    err)) != 0)
		goto fail;
	if (pubkey_path != NULL && (rc = check_signature(b, mtext, man->len,
	    pubkey_path, info, err)) != 0)
		goto fail;
	artifact_sha256(mtext, man->len, info->manifest_sha256);
	info->manifest = cJSON_ParseWithLength((const char *)mtext, man->len);
	fmt = cJSON_GetObjectItemCaseSensitive(info->manifest, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) != 0) {
		rc = so_error(err, SO_EPARSE, "manifest.json: not a seqorch "
		    "bundle");
		goto fail;
	}
	/* A newer format may mean what this seqorch would read otherwise. */
	version = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
	    info->manifest, "version"));
	if (!(version >= 1 && version <= 9007199254740991.0) ||
	    version != (double)(int64_t)version) {
		rc = so_error(err, SO_EPARSE, "manifest.json: \"version\" is "
		    "not a format version");
		goto fail;
	}
	if (version > FORMAT_VERSION) {
		rc = so_error(err, SO_EPARSE, "manifest.json: format version "
		    "%.0f is newer than this seqorch reads (%d)", version,
		    FORMAT_VERSION);
		goto fail;
	}
	/* The key it names is the one that signed it, or it misleads. */
	fpr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    info->manifest, "key_fingerprint"));
	if (pubkey_path != NULL && (fpr == NULL ||
	    strcmp(fpr, info->key_fingerprint) != 0)) {
		rc = so_error(err, SO_EINVAL, "manifest.json: it names key "
		    "%.64s, but key \"%s\" (%s) signed it", fpr != NULL ?
		    fpr : "(none)", pubkey_path, info->key_fingerprint);
		goto fail;
	}
	if ((rc = check_files(b, cJSON_GetObjectItemCaseSensitive(
	    info->manifest, "files"), shas, err)) != 0)
		goto fail;
	origin = cJSON_GetObjectItemCaseSensitive(info->manifest, "origin");
	info->coordinator = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(origin, "coordinator"));
	info->db_path = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(origin, "db"));
	runs = cJSON_GetObjectItemCaseSensitive(info->manifest, "runs");
	if ((rc = read_manifest_runs(runs, info, err)) != 0)
		goto fail;
	if (info->coordinator == NULL || info->nruns == 0) {
		rc = so_error(err, SO_EPARSE, "manifest.json: no origin or no "
		    "runs");
		goto fail;
	}
	/* Printed by import and verify, stored for every report. */
	if (has_control(info->coordinator) || (info->db_path != NULL &&
	    has_control(info->db_path))) {
		rc = so_error(err, SO_EPARSE, "manifest.json: the origin's "
		    "coordinator or database holds a control character");
		goto fail;
	}
	if ((rc = open_rows(b, info, err)) != 0)
		goto fail;
	/*
	 * rows.json's rows are checked to be JSON as they are first read
	 * (db_rows_check): until then, what is found elsewhere waits, so that
	 * "not JSON" comes first, as it did when rows.json was parsed whole.
	 */
	if (bundle_get(b, "summary.json") == NULL)
		rc = so_error(&later, SO_EPARSE, "bundle: summary.json is "
		    "missing");
	else
		rc = check_artifact_files(b, shas, &later);
	if (rc != 0) {
		if ((rc2 = rows_doc_check(info->rows)) != 0) {
			rc = not_json(rc2, err);
			goto fail;
		}
		*err = later;
		goto fail;
	}
	if ((rc = db_rows_check(info->rows, info->runs, info->nruns,
	    err)) > 0) {
		rc = not_json(rc, err);
		goto fail;
	}
	if (rc != 0 || (rc = check_samples(info->rows, info, log, err)) != 0)
		goto fail;
	free(mtext);
	free(shas);
	return 0;
fail:
	free(mtext);
	free(shas);
	bundle_info_free(info);
	return rc;
}

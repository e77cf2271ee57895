/* Result bundles: make and sign, and verify (bundle.h); bundle-io.c
 * writes and reads their files. */
#include "bundle.h"

#include "artifact.h"
#include "study.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORMAT "seqorch-bundle"
#define FORMAT_VERSION 1

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
 * Add j to b as path, printed without formatting.  cJSON allocates
 * through xmalloc (so_json_hooks), yet a NULL it returns is an error here,
 * never a string.
 */
static int
add_json(struct bundle *b, const char *path, const cJSON *j,
    struct so_err *err)
{
	char *text;

	if ((text = cJSON_PrintUnformatted(j)) == NULL)
		return so_error(err, SO_ENOMEM, "cannot format %s", path);
	bundle_add(b, path, text, strlen(text));
	return 0;
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
	if ((rc = add_json(out, "summary.json", summary, err)) != 0 ||
	    (rc = add_json(out, "rows.json", rows, err)) != 0)
		goto out;
	/* The artifacts rows name every file the run keeps. */
	arts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(rows, "tables"), "artifacts"),
	    "rows");
	cJSON_ArrayForEach(row, arts) {
		const cJSON *s = cJSON_GetArrayItem(row, 0);
		char path[80];

		if (!cJSON_IsString(s) || !artifact_name_ok(s->valuestring)) {
			rc = so_error(err, SO_EDB, "artifacts: a row whose name "
			    "\"%.80s\" is not a sha256", cJSON_IsString(s) ?
			    s->valuestring : "");
			goto out;
		}
		if ((rc = artifact_load(db, s->valuestring, &data, &len,
		    err)) != 0)
			goto out;
		snprintf(path, sizeof path, "artifacts/%s", s->valuestring);
		bundle_add(out, path, data, len);
	}
	bundle_sort(out);
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

		artifact_sha256(out->files[i].data, out->files[i].len, sha);
		cJSON_AddStringToObject(f, "path", out->files[i].path);
		cJSON_AddStringToObject(f, "sha256", sha);
		cJSON_AddNumberToObject(f, "size", (double)out->files[i].len);
		cJSON_AddItemToArray(files, f);
	}
	if ((text = cJSON_Print(man)) == NULL) {
		rc = so_error(err, SO_ENOMEM, "cannot format manifest.json");
		goto out;
	}
	len = strlen(text);
	if (key_path != NULL) {
		if ((rc = sign(key_path, text, len, sig, err)) != 0) {
			free(text);
			goto out;
		}
		bundle_add(out, "manifest.sig", xasprintf("%s\n", sig),
		    strlen(sig) + 1);
	}
	bundle_add(out, "manifest.json", text, len);
	bundle_sort(out);
out:
	cJSON_Delete(man);
	cJSON_Delete(rows);
	cJSON_Delete(summary);
	if (rc != 0)
		bundle_free(out);
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
		artifact_sha256(bf->data, bf->len, sha);
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
	const char *study, *seed;
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

/* The manifest's runs as rows.json has them (types checked already). */
static int
read_runs(const cJSON *rows, struct bundle_info *info, struct run_ref *rr,
    struct so_err *err)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(rows, "tables"), "runs");
	int ci = col(t, "id"), cs = col(t, "study"), cseed = col(t, "seed");
	int cn = col(t, "steps"), cm = col(t, "msg_len");
	const cJSON *row;
	uint64_t max;
	size_t i;

	if (ci < 0 || cs < 0 || cseed < 0 || cn < 0)
		return so_error(err, SO_EPARSE, "rows.json: no runs table with "
		    "id, study, seed and steps");
	memset(rr, 0, info->nruns * sizeof *rr);
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(t, "rows")) {
		int64_t id = (int64_t)cJSON_GetArrayItem(row, ci)->valuedouble;
		double steps = cJSON_GetArrayItem(row, cn)->valuedouble;
		double msg_len = row_msg_len(row, cm);

		for (i = 0; i < info->nruns && info->runs[i] != id; i++)
			;
		if (i == info->nruns)
			continue;
		rr[i].id = id;
		rr[i].study = cJSON_GetArrayItem(row, cs)->valuestring;
		rr[i].seed = cJSON_GetArrayItem(row, cseed)->valuestring;
		if ((rr[i].e = study_find(rr[i].study)) == NULL)
			return so_error(err, SO_EINVAL, "bundle: study \"%.64s\" "
			    "of run %lld has no reference in this seqorch",
			    rr[i].study, (long long)id);
		/* What `seqorch run --steps` takes: the work verify sets. */
		max = study_max_steps(rr[i].e->study);
		if (!(steps >= 1 && steps <= (double)max))
			return so_error(err, SO_EINVAL, "rows.json: run %lld: "
			    "steps %.0f is outside 1..%llu (study \"%s\")",
			    (long long)id, steps, (unsigned long long)max,
			    rr[i].e->name);
		rr[i].steps = (uint64_t)steps;
		/* What `seqorch run --msg-len` takes, for a study that has it. */
		if (msg_len != 0 && (rr[i].e->ref->msg_chain == NULL ||
		    !(msg_len >= (double)rr[i].e->study->state_len &&
		    msg_len <= KERNEL_MAX_MSG) ||
		    msg_len != (double)(uint64_t)msg_len))
			return so_error(err, SO_EINVAL, "rows.json: run %lld: "
			    "msg_len %.0f is not a message length of study "
			    "\"%s\"", (long long)id, msg_len, rr[i].e->name);
		rr[i].msg_len = (uint64_t)msg_len;
	}
	for (i = 0; i < info->nruns; i++)
		if (rr[i].study == NULL)
			return so_error(err, SO_EPARSE, "rows.json: run %lld of "
			    "the manifest is not there", (long long)
			    info->runs[i]);
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
check_samples(const cJSON *rows, struct bundle_info *info, FILE *log,
    struct so_err *err)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(rows, "tables"), "samples");
	struct run_ref rr[64];
	const cJSON *row;
	size_t i;
	long rown = 0;
	int cs = col(t, "study"), cd = col(t, "digest"), cv = col(t, "valid");
	int cseed = col(t, "seed"), cn = col(t, "steps"), ci = col(t, "id");
	int cr = col(t, "run_id"), cm = col(t, "msg_len");
	int rc;

	if ((rc = read_runs(rows, info, rr, err)) != 0)
		return rc;
	if (t == NULL)
		return 0;
	if (cs < 0 || cd < 0 || cv < 0 || cseed < 0 || cn < 0 || ci < 0)
		return so_error(err, SO_EPARSE, "rows.json: samples lack study, "
		    "seed, steps, digest or valid");
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(t, "rows")) {
		/* db_rows_check vouched for each value's type. */
		int64_t run = (int64_t)cJSON_GetArrayItem(row, cr)->valuedouble;
		double id = cJSON_GetArrayItem(row, ci)->valuedouble;
		const char *study = cJSON_GetArrayItem(row, cs)->valuestring;
		const char *seed = cJSON_GetArrayItem(row, cseed)->valuestring;
		const char *digest = cJSON_GetArrayItem(row, cd)->valuestring;
		double steps = cJSON_GetArrayItem(row, cn)->valuedouble;
		double valid = cJSON_GetArrayItem(row, cv)->valuedouble;
		double msg_len = row_msg_len(row, cm);
		struct run_ref *r;
		uint8_t x[KERNEL_MAX_STATE];
		char why[160];
		size_t len;

		rown++;
		for (i = 0; i < info->nruns && rr[i].id != run; i++)
			;
		if (i == info->nruns)
			return so_error(err, SO_EPARSE, "rows.json: sample %.0f "
			    "is of no run of the manifest", id);
		r = &rr[i];
		if (valid != 0 && valid != 1)
			return so_error(err, SO_EINVAL, "rows.json: table "
			    "\"samples\", row %ld, column \"valid\": expected 0 "
			    "or 1, not %.0f", rown, valid);
		if (strcmp(study, r->study) != 0 || steps != (double)r->steps)
			return so_error(err, SO_EINVAL, "rows.json: sample %.0f "
			    "is %.64s of %.0f steps, its run %lld %s of %llu",
			    id, study, steps, (long long)run, r->study,
			    (unsigned long long)r->steps);
		/* Its message length sets its chain as steps set its work. */
		if (msg_len != (double)r->msg_len)
			return so_error(err, SO_EINVAL, "rows.json: sample %.0f "
			    "has msg_len %.0f, its run %lld has %llu",
			    id, msg_len, (long long)run,
			    (unsigned long long)r->msg_len);
		if (strcmp(seed, r->seed) != 0) {
			if (valid == 1)
				return so_error(err, SO_EINVAL, "bundle: sample "
				    "%.0f is marked valid but its seed %.16s... "
				    "is not its run's", id, seed);
			info->samples_checked++;
			continue;
		}
		len = r->e->study->state_len;
		/* Runs of the same chain share its digest. */
		for (i = 0; i < info->nruns && r->digest[0] == '\0'; i++)
			if (rr[i].digest[0] != '\0' &&
			    strcmp(rr[i].study, r->study) == 0 &&
			    strcmp(rr[i].seed, r->seed) == 0 &&
			    rr[i].steps == r->steps &&
			    rr[i].msg_len == r->msg_len)
				memcpy(r->digest, rr[i].digest,
				    sizeof r->digest);
		if (r->digest[0] == '\0') {
			if (strlen(seed) != 2 * len ||
			    hex_decode(seed, x, len) != 0)
				return so_error(err, SO_EPARSE, "rows.json: run "
				    "%lld: bad seed \"%.40s\"", (long long)run,
				    seed);
			if (log != NULL && r->msg_len > 0)
				fprintf(log, "seqorch: recomputing %s: %llu %s "
				    "of %llu-byte messages from %.16s...\n",
				    r->study, (unsigned long long)r->steps,
				    r->e->study->unit_plural,
				    (unsigned long long)r->msg_len, seed);
			else if (log != NULL)
				fprintf(log, "seqorch: recomputing %s: %llu %s "
				    "from %.16s...\n", r->study,
				    (unsigned long long)r->steps,
				    r->e->study->unit_plural, seed);
			why[0] = '\0';
			if (recompute(r->e, x, r->steps, r->msg_len, log, why,
			    sizeof why) != 0)
				return so_error(err, SO_EIO, "reference of "
				    "study \"%s\" failed: %s", r->study, why);
			hex_encode(x, len, r->digest);
		}
		if ((strcmp(r->digest, digest) == 0) != (valid == 1))
			return so_error(err, SO_EINVAL, "bundle: sample %.0f "
			    "(%s) is marked %s but its digest %.16s... %s the "
			    "reference %.16s...", id, study, valid == 1 ?
			    "valid" : "invalid", digest, valid == 1 ?
			    "differs from" : "equals", r->digest);
		info->samples_checked++;
	}
	return 0;
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

/* Every artifacts/ file is named by the SHA-256 of its bytes. */
static int
check_artifact_files(const struct bundle *b, struct so_err *err)
{
	char sha[65];
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct bundle_file *f = &b->files[i];

		if (strncmp(f->path, "artifacts/", 10) != 0)
			continue;
		artifact_sha256(f->data, f->len, sha);
		if (!artifact_name_ok(f->path + 10) ||
		    strcmp(sha, f->path + 10) != 0)
			return so_error(err, SO_EINVAL, "bundle: \"%.100s\" is "
			    "not named by the sha256 of its bytes (%s)",
			    f->path, sha);
	}
	return 0;
}

int
bundle_verify(const struct bundle *b, const char *pubkey_path,
    struct bundle_info *info, FILE *log, struct so_err *err)
{
	const struct bundle_file *man, *rows;
	const cJSON *fmt, *runs, *origin;
	int rc;

	memset(info, 0, sizeof *info);
	man = bundle_get(b, "manifest.json");
	if (man == NULL) {
		rc = so_error(err, SO_EPARSE, "bundle: no manifest.json");
		goto fail;
	}
	if (pubkey_path != NULL &&
	    (rc = check_signature(b, pubkey_path, info, err)) != 0)
		goto fail;
	artifact_sha256(man->data, man->len, info->manifest_sha256);
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
	if ((rc = check_artifact_files(b, err)) != 0 ||
	    (rc = db_rows_check(info->rows, info->runs, info->nruns,
	    err)) != 0 ||
	    (rc = check_samples(info->rows, info, log, err)) != 0)
		goto fail;
	return 0;
fail:
	bundle_info_free(info);
	return rc;
}

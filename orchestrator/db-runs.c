/*
 * results.db: runs, their hosts, builds, variants, samples and metrics,
 * reference digests and events; and what --resume reads back.
 */
#include "db-int.h"
#include "db-report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
db_run_begin(struct db *db, const struct run_info *ri, int64_t *run_id,
    struct so_err *err)
{
	const char *coord = db_coordinator_id();
	char now[40];
	struct run_out o;

	iso_now(now, sizeof now);
	if (db_sql(db, &o, "INSERT INTO runs (study, started_at, status, steps, "
	    "samples_per_variant, command, seed, variants, hosts, "
	    "exploratory, coordinator, version, openssl_cap, "
	    "openssl_cap_clear, max_cv, max_samples, msg_len, warmup) VALUES "
	    "(?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "NULLIF(?, 0), NULLIF(?, 0))",
	    "ssiissssissssdiii", ri->study, now, (int64_t)ri->steps,
	    (int64_t)ri->samples, ri->command, ri->seed, ri->variants,
	    ri->hosts, (int64_t)ri->exploratory, coord, SEQORCH_VERSION,
	    ri->openssl_cap, ri->openssl_cap_clear, ri->max_cv,
	    (int64_t)ri->max_samples, (int64_t)ri->msg_len,
	    (int64_t)ri->warmup) != SQLITE_DONE)
		return db_err(db, err, "cannot record run");
	*run_id = o.rowid;
	return 0;
}

int
db_run_finish(struct db *db, int64_t run_id, const char *status,
    struct so_err *err)
{
	return db_exec(db, err, "cannot finish run", NULL, "UPDATE runs SET "
	    "status = ?, finished_at = ? WHERE id = ?", "sti", status,
	    run_id);
}

static int
tally_row(sqlite3_stmt *st, void *ctx)
{
	struct run_tally *t = ctx;

	t->samples = (uint64_t)sqlite3_column_int64(st, 0);
	t->valid = (uint64_t)sqlite3_column_int64(st, 1);
	t->invalid = (uint64_t)sqlite3_column_int64(st, 2);
	return 1;
}

int
db_run_tally(struct db *db, int64_t run_id, struct run_tally *t,
    struct so_err *err)
{
	int rc;

	memset(t, 0, sizeof *t);
	rc = db_each(db, err, "cannot count the run's samples", tally_row, t,
	    "SELECT COALESCE(SUM(warmup = 0), 0), "
	    "COALESCE(SUM(valid = 1 AND warmup = 0), 0), "
	    "COALESCE(SUM(valid = 0 AND instr(COALESCE(invalid_reason, ''), "
	    "?) != 1), 0) FROM samples WHERE run_id = ?", "si",
	    SAMPLE_FORBIDDEN, run_id);
	return rc < 0 ? rc : 0;
}

int
db_run_host_begin(struct db *db, int64_t run_id, const char *host,
    struct so_err *err)
{
	/*
	 * A resumed host keeps its facts (its pin among them): the samples
	 * stored before were taken with them, and a host with nothing
	 * missing starts no agent that would send them again.
	 */
	return db_exec(db, err, "cannot record host", NULL, "INSERT INTO "
	    "run_hosts (run_id, host, status, started_at) VALUES (?, ?, "
	    "'running', ?) ON CONFLICT (run_id, host) DO UPDATE SET status = "
	    "'running', error = NULL, started_at = excluded.started_at, "
	    "finished_at = NULL", "ist", run_id, host);
}

int
db_run_host_facts(struct db *db, int64_t run_id, const char *host,
    const struct host_facts *f, struct so_err *err)
{
	char now[40];

	iso_now(now, sizeof now);
	if (db_sql(db, NULL, "UPDATE run_hosts SET pin_cpu = ?, pinned = ?, "
	    "pin_error = ?, governor = ?, calib_mhz = ?, openssl = ?, "
	    "facts = ?, cpu_choice = ?, counters = ?, counters_error = ? "
	    "WHERE run_id = ? AND host = ?",
	    f->pin_cpu >= 0 ? "iissdsssssis" : "nissdsssssis",
	    (int64_t)f->pin_cpu, (int64_t)f->pinned, f->pin_error,
	    f->governor, f->calib_mhz, f->openssl, f->json, f->cpu_choice,
	    f->counters, f->counters_error, run_id, host) != SQLITE_DONE)
		return db_err(db, err, "cannot record host facts");
	return db_exec(db, err, "cannot record host", NULL, "INSERT INTO "
	    "hosts (name, address, arch, os, kernel, cpu_model, cores, "
	    "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) "
	    "DO UPDATE SET address = excluded.address, arch = excluded.arch, "
	    "os = excluded.os, kernel = excluded.kernel, cpu_model = "
	    "excluded.cpu_model, cores = excluded.cores, updated_at = "
	    "excluded.updated_at", "ssssssis", host, f->address, f->arch,
	    f->os, f->kernel, f->cpu_model, (int64_t)f->cores, now);
}

int
db_run_host_finish(struct db *db, int64_t run_id, const char *host,
    const char *status, const char *error, struct so_err *err)
{
	return db_exec(db, err, "cannot finish host", NULL, "UPDATE "
	    "run_hosts SET status = ?, error = ?, finished_at = ? WHERE "
	    "run_id = ? AND host = ?", "sstis", status, error, run_id,
	    host);
}

int
db_build_insert(struct db *db, int64_t run_id, const struct build_info *b,
    int64_t *build_id, struct so_err *err)
{
	char now[40];
	struct run_out o;

	iso_now(now, sizeof now);
	if (db_sql(db, &o, "INSERT INTO builds (run_id, host, compiler, "
	    "compiler_version, target, cflags, native, commands, log, status, "
	    "source_sha256, binary_sha256, openssl, created_at, targeting, "
	    "study, extra) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    "issssssssssssssss",
	    run_id, b->host, b->compiler, b->compiler_version, b->target,
	    b->cflags, b->native, b->commands, b->log, b->status,
	    b->source_sha256, b->binary_sha256, b->openssl, now, b->targeting,
	    b->study, b->extra) !=
	    SQLITE_DONE)
		return db_err(db, err, "cannot record build");
	*build_id = o.rowid;
	return 0;
}

int
db_variant_status(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, const char *study, const char *variant,
    const char *status, const char *reason, struct so_err *err)
{
	return db_exec(db, err, "cannot record variant", NULL, "INSERT OR "
	    "REPLACE INTO variants (run_id, host, build_id, study, variant, "
	    "status, reason) VALUES (?, ?, ?, ?, ?, ?, ?)", "isissss", run_id,
	    host, build_id, study, variant, status, reason);
}

int
db_sample_insert(struct db *db, int64_t run_id, const struct sample_row *s,
    struct so_err *err)
{
	char now[40];
	struct run_out o;
	int rc;

	iso_now(now, sizeof now);
	rc = db_sql(db, &o, "INSERT INTO samples (run_id, host, build_id, study, "
	    "variant, sample_index, position, steps, ns, digest, seed, valid, "
	    "invalid_reason, calib_mhz, calib_after_mhz, cpu, received_at, "
	    "reason, cycles, instructions, cycles_source, openssl_cap, "
	    "host_position, openssl_cap_detected, openssl_cap_cleared, "
	    "msg_len, warmup, window_id) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, NULLIF(?, -1), ?, ?, NULLIF(?, 0), ?, NULLIF(?, 0)) "
	    "ON CONFLICT DO NOTHING",
	    s->counted ?
	    "isissiiiissisddissiississiii" : "isissiiiissisddissnnssissiii",
	    run_id,
	    s->host, s->build_id, s->study, s->variant, s->sample_index,
	    s->position, (int64_t)s->steps, (int64_t)s->ns, s->digest,
	    s->seed, (int64_t)s->valid, s->invalid_reason, s->calib_mhz,
	    s->calib_after_mhz, (int64_t)s->cpu, now, s->reason, s->cycles,
	    s->instructions, s->cycles_source, s->openssl_cap,
	    s->host_position, s->openssl_cap_detected,
	    s->openssl_cap_cleared, (int64_t)s->msg_len,
	    (int64_t)s->warmup, s->window_id);
	if (rc != SQLITE_DONE)
		return db_err(db, err, "cannot store sample");
	if (o.changes == 0)
		return so_error(err, SO_EBUSY, "sample %lld of \"%s\" on host "
		    "\"%s\" already stored", (long long)s->sample_index,
		    s->variant, s->host);
	return 0;
}

int
db_sample_metrics(struct db *db, int64_t run_id, const struct sample_row *s,
    const char *const *names, const double *values, size_t n,
    struct so_err *err)
{
	size_t i;

	/* One statement each: the connection is shared by the host threads,
	 * so a transaction here would take their samples in with it. */
	for (i = 0; i < n; i++)
		if (db_sql(db, NULL, "INSERT OR REPLACE INTO sample_metrics "
		    "(sample_id, name, value) SELECT id, ?, ? FROM samples "
		    "WHERE run_id = ? AND host = ? AND build_id = ? AND "
		    "variant = ? AND sample_index = ?", "sdisisi", names[i],
		    values[i], run_id, s->host, s->build_id, s->variant,
		    s->sample_index) != SQLITE_DONE)
			return db_err(db, err, "cannot store sample metrics");
	return 0;
}

int
db_ref_get(struct db *db, const char *study, const char *seed,
    uint64_t steps, uint64_t msg_len, char *digest, size_t len,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->h, "SELECT digest FROM refs WHERE study = ? "
	    "AND seed = ? AND steps = ? AND msg_len = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_err(db, err, "cannot read references");
	sqlite3_bind_text(st, 1, study, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, seed, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)steps);
	sqlite3_bind_int64(st, 4, (int64_t)msg_len);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(digest, len, "%s",
		    (const char *)sqlite3_column_text(st, 0));
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = SO_ENOTFOUND;
	else
		rc = db_err(db, err, "cannot read references");
	sqlite3_finalize(st);
	return rc;
}

int
db_ref_put(struct db *db, const char *study, const char *seed,
    uint64_t steps, uint64_t msg_len, const char *digest,
    const char *method, struct so_err *err)
{
	return db_exec(db, err, "cannot store reference", NULL, "INSERT OR "
	    "REPLACE INTO refs (study, seed, steps, msg_len, digest, method, "
	    "computed_at) VALUES (?, ?, ?, ?, ?, ?, ?)", "ssiisst", study,
	    seed, (int64_t)steps, (int64_t)msg_len, digest, method);
}

int
db_event(struct db *db, int64_t run_id, const char *host, const char *level,
    const char *message, struct so_err *err)
{
	return db_exec(db, err, "cannot record event", NULL, "INSERT INTO "
	    "events (run_id, host, at, level, message) VALUES (?, ?, ?, ?, "
	    "?)", run_id > 0 ? "istss" : "nstss", run_id, host, level,
	    message);
}

int
db_run_load(struct db *db, int64_t run_id, struct stored_run *out,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(db->h, "SELECT study, seed, variants, hosts, "
	    "status, steps, samples_per_variant, exploratory, openssl_cap, "
	    "i.origin_coordinator, i.origin_run_id, openssl_cap_clear, "
	    "max_cv, max_samples, COALESCE(msg_len, 0), COALESCE(warmup, 0) "
	    "FROM runs r LEFT JOIN "
	    "imports i ON i.run_id = r.id WHERE r.id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_err(db, err, "cannot read runs");
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->study = db_col_dup(st, 0);
		out->seed = db_col_dup(st, 1);
		out->variants = db_col_dup(st, 2);
		out->hosts = db_col_dup(st, 3);
		out->status = db_col_dup(st, 4);
		out->steps = (uint64_t)sqlite3_column_int64(st, 5);
		out->samples = (uint64_t)sqlite3_column_int64(st, 6);
		out->exploratory = sqlite3_column_int(st, 7);
		out->openssl_cap = db_col_dup(st, 8);
		out->imported_from = db_col_dup(st, 9);
		out->origin_run_id = sqlite3_column_int64(st, 10);
		out->openssl_cap_clear = db_col_dup(st, 11);
		out->max_cv = sqlite3_column_double(st, 12);
		out->max_samples = (uint64_t)sqlite3_column_int64(st, 13);
		out->msg_len = (uint64_t)sqlite3_column_int64(st, 14);
		out->warmup = (uint64_t)sqlite3_column_int64(st, 15);
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = db_report_no_run(db->h, run_id, err);
	else
		rc = db_err(db, err, "cannot read runs");
	sqlite3_finalize(st);
	return rc;
}

void
db_run_info_free(struct stored_run *r)
{
	free(r->imported_from);
	free(r->openssl_cap);
	free(r->openssl_cap_clear);
	free(r->status);
	free(r->hosts);
	free(r->variants);
	free(r->seed);
	free(r->study);
	memset(r, 0, sizeof *r);
}

static int
recorded_facts_row(sqlite3_stmt *st, void *ctx)
{
	struct recorded_host *r = ctx;

	r->facts = sqlite3_column_type(st, 0) != SQLITE_NULL;
	r->pin_cpu = sqlite3_column_type(st, 1) != SQLITE_NULL ?
	    sqlite3_column_int64(st, 1) : -1;
	r->cpu_auto = sqlite3_column_type(st, 2) != SQLITE_NULL;
	return 1;
}

static int
recorded_build_row(sqlite3_stmt *st, void *ctx)
{
	struct recorded_host *r = ctx;

	r->compiler = xrealloc(r->compiler, (r->nbuilds + 1) *
	    sizeof *r->compiler);
	r->cflags = xrealloc(r->cflags, (r->nbuilds + 1) * sizeof *r->cflags);
	r->compiler[r->nbuilds] = db_col_dup(st, 0);
	r->cflags[r->nbuilds] = db_col_dup(st, 1);
	r->nbuilds++;
	return 0;
}

int
db_run_host_recorded(struct db *db, int64_t run_id, const char *host,
    struct recorded_host *out, struct so_err *err)
{
	int rc;

	memset(out, 0, sizeof *out);
	out->pin_cpu = -1;
	rc = db_each(db, err, "cannot read the run's hosts", recorded_facts_row,
	    out, "SELECT facts, pin_cpu, cpu_choice FROM run_hosts WHERE "
	    "run_id = ? AND host = ?", "is", run_id, host);
	if (rc >= 0)
		rc = db_each(db, err, "cannot read builds", recorded_build_row,
		    out, "SELECT compiler, cflags FROM builds WHERE run_id = ? "
		    "AND host = ? ORDER BY id", "is", run_id, host);
	if (rc < 0)
		db_recorded_host_free(out);
	return rc < 0 ? rc : 0;
}

void
db_recorded_host_free(struct recorded_host *r)
{
	size_t i;

	for (i = 0; i < r->nbuilds; i++) {
		free(r->compiler[i]);
		free(r->cflags[i]);
	}
	free(r->compiler);
	free(r->cflags);
	memset(r, 0, sizeof *r);
}

struct names {
	char **v;
	size_t n;
};

static int
name_row(sqlite3_stmt *st, void *ctx)
{
	struct names *l = ctx;

	l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = db_col_dup(st, 0);
	return 0;
}

int
db_run_host_names(struct db *db, int64_t run_id, char ***names, size_t *n,
    struct so_err *err)
{
	struct names l = { NULL, 0 };
	int rc;

	rc = db_each(db, err, "cannot read the run's hosts", name_row, &l,
	    "SELECT host FROM run_hosts WHERE run_id = ? ORDER BY host", "i",
	    run_id);
	if (rc < 0) {
		while (l.n > 0)
			free(l.v[--l.n]);
		free(l.v);
		l.v = NULL;
	}
	*names = l.v;
	*n = l.n;
	return rc < 0 ? rc : 0;
}

/*
 * A run still "running" whose coordinator, "HOST pid N", may be alive:
 * SO_EBUSY saying so.  On this machine kill(pid, 0) tells (our own pid
 * is a dead coordinator's, reused); on another one nothing can.
 */
static int
check_not_running(int64_t run_id, const char *status, const char *coord,
    int take_over, struct so_err *err)
{
	char host[256];
	long pid;

	if (status == NULL || strcmp(status, "running") != 0 ||
	    db_coordinator_parse(coord, host, sizeof host, &pid) != 0)
		return 0;
	if (strcmp(coord, db_coordinator_id()) == 0 ||
	    db_holder_dead(host, pid))
		return 0;
	if (db_holder_here(host))
		return so_error(err, SO_EBUSY, "run %lld is still running (pid "
		    "%ld on this machine): wait for it, or stop it first",
		    (long long)run_id, pid);
	/* A copied database, a renamed machine: only the user knows. */
	if (take_over)
		return 0;
	return so_error(err, SO_EBUSY, "run %lld is still running on \"%s\" "
	    "(pid %ld), or its coordinator there stopped without ending it: "
	    "this machine cannot tell; resume it on \"%s\", or add "
	    "--take-over if that coordinator is gone", (long long)run_id, host,
	    pid, host);
}

int
db_run_resume(struct db *db, int64_t run_id, int take_over,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, began = 0;

	pthread_mutex_lock(&db->mu);
	/* Checked and taken in one transaction: two resumes cannot both. */
	if ((rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL)) !=
	    SQLITE_OK)
		goto out;
	began = 1;
	if ((rc = sqlite3_prepare_v2(db->h, "SELECT status, coordinator FROM "
	    "runs WHERE id = ?", -1, &st, NULL)) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, run_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = check_not_running(run_id,
		    (const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1), take_over, err);
	else if (rc == SQLITE_DONE)
		rc = 0;
	if (rc != 0)
		goto out;
	sqlite3_finalize(st);
	/* The coordinator is whoever runs it now, for the next resume. */
	if ((rc = sqlite3_prepare_v2(db->h, "UPDATE runs SET status = "
	    "'running', finished_at = NULL, resumes = resumes + 1, "
	    "coordinator = ? WHERE id = ?", -1, &st, NULL)) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(st, 1, db_coordinator_id(), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, run_id);
	if ((rc = sqlite3_step(st)) == SQLITE_DONE)
		rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
out:
	/* Below zero: refused by check_not_running, err says why. */
	if (rc > 0)
		rc = db_err(db, err, "cannot resume run");
	sqlite3_finalize(st);
	if (rc != 0 && began)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

int
db_build_find(struct db *db, int64_t run_id, const char *host,
    const char *compiler, const char *binary_sha256, int64_t *build_id,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->h, "SELECT id FROM builds WHERE run_id = ? "
	    "AND host = ? AND compiler = ? AND binary_sha256 = ? AND "
	    "status = 'ok' ORDER BY id LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return db_err(db, err, "cannot read builds");
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, compiler, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, binary_sha256 ? binary_sha256 : "", -1,
	    SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*build_id = sqlite3_column_int64(st, 0);
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = SO_ENOTFOUND;
	else
		rc = db_err(db, err, "cannot read builds");
	sqlite3_finalize(st);
	return rc;
}

/* Missing indices of one variant: updates the running totals. */
static int
missing_of(struct db *db, int64_t run_id, const char *host, int64_t build_id,
    const char *variant, uint64_t samples, uint64_t *first, uint64_t *last,
    uint64_t *count, int *any)
{
	sqlite3_stmt *st = NULL;
	uint64_t i;
	int rc = 0;

	if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM samples WHERE run_id = ? "
	    "AND host = ? AND build_id = ? AND variant = ? AND "
	    "sample_index = ?", -1, &st, NULL) != SQLITE_OK)
		return -1;
	*any = 0;
	for (i = 0; i < samples; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, build_id);
		sqlite3_bind_text(st, 4, variant, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (int64_t)i);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			continue;
		if (rc != SQLITE_DONE)
			break;
		rc = 0;
		if (*count == 0 || i < *first)
			*first = i;
		if (*count == 0 || i > *last)
			*last = i;
		(*count)++;
		*any = 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == 0 ? 0 : -1;
}

int
db_missing_cells(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, uint64_t samples, const char *const *want,
    char **variants, uint64_t *first, uint64_t *last, uint64_t *count,
    struct so_err *err)
{
	sqlite3_stmt *st = NULL;
	char *list = NULL, *tmp;
	size_t i;
	int rc = 0, any, step;

	*variants = NULL;
	*first = *last = *count = 0;
	/*
	 * Every requested variant is expected, whether or not the first
	 * attempt got to record it: only one that this build tried and could
	 * not time (skipped, failed) has nothing to measure.
	 */
	if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM variants WHERE "
	    "run_id = ? AND host = ? AND build_id = ? AND variant = ? AND "
	    "status != 'ok'", -1, &st, NULL) != SQLITE_OK)
		return db_err(db, err, "cannot read variants");
	for (i = 0; want[i] != NULL; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, build_id);
		sqlite3_bind_text(st, 4, want[i], -1, SQLITE_STATIC);
		step = sqlite3_step(st);
		if (step == SQLITE_ROW)
			continue;
		if (step != SQLITE_DONE || missing_of(db, run_id, host,
		    build_id, want[i], samples, first, last, count,
		    &any) != 0) {
			rc = db_err(db, err, "cannot read samples");
			break;
		}
		if (!any)
			continue;
		tmp = xasprintf("%s%s%s", list ? list : "", list ? "," : "",
		    want[i]);
		free(list);
		list = tmp;
	}
	sqlite3_finalize(st);
	if (rc != 0)
		free(list);
	else
		*variants = list;
	return rc;
}

static int
identity_row(sqlite3_stmt *st, void *ctx)
{
	const char *id = (const char *)sqlite3_column_text(st, 0);

	if (id != NULL && strlen(id) == 32 &&
	    strspn(id, "0123456789abcdef") == 32)
		memcpy(ctx, id, 33);
	return 1;
}

int
db_identity(struct db *db, char id[33], struct so_err *err)
{
	int rc;

	id[0] = '\0';
	rc = db_each(db, err, "cannot read the database's identity",
	    identity_row, id, "SELECT id FROM db_identity", "");
	if (rc < 0)
		return rc;
	if (id[0] == '\0')
		return so_error(err, SO_EDB, "database: its identity (table "
		    "db_identity) is missing or not 32 hex digits: run "
		    "directories on hosts could not be told from another "
		    "database's");
	return 0;
}

static int
end_row(sqlite3_stmt *st, void *ctx)
{
	*(int64_t *)ctx = sqlite3_column_int64(st, 0);
	return 1;
}

/* One past the largest of what sql selects of a build's samples, or 0. */
static int
build_end(struct db *db, const char *sql, int64_t run_id, const char *host,
    int64_t build_id, int64_t *end, struct so_err *err)
{
	int rc;

	*end = 0;
	rc = db_each(db, err, "cannot read samples", end_row, end, sql, "isi",
	    run_id, host, build_id);
	return rc < 0 ? rc : 0;
}

int
db_build_end_position(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, int64_t *end, struct so_err *err)
{
	return build_end(db, "SELECT COALESCE(MAX(host_position) + 1, 0) FROM "
	    "samples WHERE run_id = ? AND host = ? AND build_id = ?", run_id,
	    host, build_id, end, err);
}

int
db_build_index_end(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, int64_t *end, struct so_err *err)
{
	return build_end(db, "SELECT COALESCE(MAX(sample_index) + 1, 0) FROM "
	    "samples WHERE run_id = ? AND host = ? AND build_id = ? AND "
	    "warmup = 0", run_id, host, build_id, end, err);
}

struct sample_rows {
	int (*row)(void *arg, const char *variant, int64_t index, int64_t ns);
	void *arg;
};

static int
sample_row(sqlite3_stmt *st, void *ctx)
{
	struct sample_rows *r = ctx;
	const char *variant = (const char *)sqlite3_column_text(st, 0);

	return r->row(r->arg, variant != NULL ? variant : "",
	    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
}

int
db_build_samples(struct db *db, int64_t run_id, const char *host,
    int64_t build_id, int64_t skip_lo, int64_t skip_hi,
    int (*row)(void *arg, const char *variant, int64_t index, int64_t ns),
    void *arg, struct so_err *err)
{
	struct sample_rows r = { row, arg };

	return db_each(db, err, "cannot read samples", sample_row, &r,
	    "SELECT variant, sample_index, ns FROM samples WHERE run_id = ? "
	    "AND host = ? AND build_id = ? AND warmup = 0 AND sample_index "
	    "NOT BETWEEN ? AND ? ORDER BY host_position, id", "isiii", run_id,
	    host, build_id, skip_lo, skip_hi);
}

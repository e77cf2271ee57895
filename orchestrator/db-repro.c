/*
 * Reproductions (db-repro.h): which runs a `seqorch reproduce` made, for
 * which part of its seed's protocol, and what its published table reads.
 */
#include "db-int.h"
#include "db-repro.h"

#include <stdlib.h>
#include <string.h>

static const char *
text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int
db_repro_begin(struct db *db, const char *name, int64_t steps_cap,
    const char *command, int64_t *id, struct so_err *err)
{
	struct run_out o;
	int rc;

	rc = db_exec(db, err, "cannot record reproduction", &o, "INSERT INTO "
	    "reproductions (name, started_at, steps_cap, command) VALUES "
	    "(?, ?, ?, ?)", steps_cap > 0 ? "stis" : "stns", name, steps_cap,
	    command);
	if (rc == 0)
		*id = o.rowid;
	return rc;
}

int
db_repro_host(struct db *db, int64_t id, const char *host,
    const char *reference, struct so_err *err)
{
	return db_exec(db, err, "cannot record reproduction host", NULL,
	    "INSERT OR REPLACE INTO reproduction_hosts (reproduction_id, "
	    "host, reference) VALUES (?, ?, ?)", "iss", id, host, reference);
}

int
db_repro_run(struct db *db, int64_t id, int64_t run_id, const char *part,
    struct so_err *err)
{
	return db_exec(db, err, "cannot record reproduction run", NULL,
	    "INSERT INTO reproduction_runs (reproduction_id, run_id, part) "
	    "VALUES (?, ?, ?)", "iis", id, run_id, part);
}

struct latest {
	int64_t *id, *steps_cap;
	char **started_at;
};

static int
latest_row(sqlite3_stmt *st, void *arg)
{
	struct latest *l = arg;

	*l->id = sqlite3_column_int64(st, 0);
	*l->steps_cap = sqlite3_column_int64(st, 1);
	*l->started_at = db_col_dup(st, 2);
	return 1;
}

int
db_repro_latest(struct db *db, const char *name, int64_t *id,
    int64_t *steps_cap, char **started_at, struct so_err *err)
{
	struct latest l = { id, steps_cap, started_at };
	int rc;

	*id = *steps_cap = 0;
	*started_at = NULL;
	rc = db_each(db, err, "cannot read reproductions", latest_row, &l,
	    "SELECT id, COALESCE(steps_cap, 0), started_at FROM "
	    "reproductions WHERE name = ? ORDER BY id DESC LIMIT 1", "s",
	    name);
	return rc < 0 ? rc : 0;
}

struct runs_arg {
	void (*fn)(const struct db_repro_run *r, void *arg);
	void *arg;
};

static int
run_row(sqlite3_stmt *st, void *arg)
{
	const struct runs_arg *a = arg;
	struct db_repro_run r = {
		.part = text(st, 0), .run_id = sqlite3_column_int64(st, 1),
		.study = text(st, 2), .status = text(st, 3),
		.steps = sqlite3_column_int64(st, 4),
		.samples = sqlite3_column_int64(st, 5),
	};

	a->fn(&r, a->arg);
	return 0;
}

int
db_repro_runs(struct db *db, int64_t id,
    void (*fn)(const struct db_repro_run *r, void *arg), void *arg,
    struct so_err *err)
{
	struct runs_arg a = { fn, arg };

	return db_each(db, err, "cannot read reproduction runs", run_row, &a,
	    "SELECT rr.part, r.id, r.study, r.status, r.steps, "
	    "r.samples_per_variant FROM reproduction_runs rr JOIN runs r ON "
	    "r.id = rr.run_id WHERE rr.reproduction_id = ? ORDER BY r.id",
	    "i", id);
}

struct hosts_arg {
	void (*fn)(const char *host, const char *reference, void *arg);
	void *arg;
};

static int
host_row(sqlite3_stmt *st, void *arg)
{
	const struct hosts_arg *a = arg;

	a->fn(text(st, 0), text(st, 1), a->arg);
	return 0;
}

int
db_repro_hosts(struct db *db, int64_t id,
    void (*fn)(const char *host, const char *reference, void *arg),
    void *arg, struct so_err *err)
{
	struct hosts_arg a = { fn, arg };

	return db_each(db, err, "cannot read reproduction hosts", host_row, &a,
	    "SELECT host, reference FROM reproduction_hosts WHERE "
	    "reproduction_id = ? ORDER BY host", "i", id);
}

struct samples_arg {
	void (*fn)(const struct db_repro_sample *s, void *arg);
	void *arg;
};

static int
sample_row(sqlite3_stmt *st, void *arg)
{
	const struct samples_arg *a = arg;
	struct db_repro_sample s = {
		.host = text(st, 0), .variant = text(st, 1),
		.msg_len = sqlite3_column_int64(st, 2),
		.steps = sqlite3_column_int64(st, 3),
		.ns = sqlite3_column_int64(st, 4),
		.cycles = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 5),
		.calib_mhz = sqlite3_column_double(st, 6),
		.calib_after_mhz = sqlite3_column_double(st, 7),
		.cycles_source = text(st, 8),
	};

	a->fn(&s, a->arg);
	return 0;
}

int
db_repro_samples(struct db *db, int64_t run_id,
    void (*fn)(const struct db_repro_sample *s, void *arg), void *arg,
    struct so_err *err)
{
	struct samples_arg a = { fn, arg };

	return db_each(db, err, "cannot read the samples", sample_row, &a,
	    "SELECT host, variant, COALESCE(msg_len, 0), steps, ns, cycles, "
	    "calib_mhz, calib_after_mhz, cycles_source FROM samples WHERE "
	    "run_id = ? AND valid = 1 AND ns > 0 AND warmup = 0 ORDER BY host, "
	    "variant, "
	    "sample_index", "i", run_id);
}

struct targets_arg {
	void (*fn)(const char *host, const char *target, void *arg);
	void *arg;
};

static int
target_row(sqlite3_stmt *st, void *arg)
{
	const struct targets_arg *a = arg;

	a->fn(text(st, 0), text(st, 1), a->arg);
	return 0;
}

int
db_repro_targets(struct db *db, int64_t id,
    void (*fn)(const char *host, const char *target, void *arg), void *arg,
    struct so_err *err)
{
	struct targets_arg a = { fn, arg };

	return db_each(db, err, "cannot read reproduction builds", target_row,
	    &a, "SELECT DISTINCT v.host, b.target FROM variants v JOIN "
	    "builds b ON b.id = v.build_id JOIN reproduction_runs rr ON "
	    "rr.run_id = v.run_id WHERE rr.reproduction_id = ? AND b.target "
	    "IS NOT NULL ORDER BY v.host", "i", id);
}

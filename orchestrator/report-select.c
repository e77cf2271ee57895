/*
 * Which runs a report shows (report_select), and why none when nothing
 * matches: the messages name the database and what it does hold.
 */
#include "db-report.h"
#include "report-model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int
select_one(sqlite3 *db, const struct report_opts *o, int64_t **ids,
    size_t *n, struct so_err *err)
{
	const char *name = o->db_path != NULL ? o->db_path : "results.db";
	char *study = NULL, *latest;
	int ret;

	ret = db_report_run_study(db, o->run_id, &study, err);
	if (ret == 0 && o->study != NULL && strcmp(o->study, study) != 0)
		ret = so_error(err, SO_EINVAL, "run %" PRId64 " is of study "
		    "\"%s\", not \"%s\"", o->run_id, study, o->study);
	else if (ret == 0) {
		*ids = xmalloc(sizeof **ids);
		(*ids)[0] = o->run_id;
		*n = 1;
	} else if (ret == SO_ENOTFOUND) {
		latest = db_report_recent_ids(db);
		if (latest != NULL)
			ret = so_error(err, SO_ENOTFOUND, "no run with id %"
			    PRId64 " in \"%s\" (latest: %s)", o->run_id, name,
			    latest);
		else
			ret = so_error(err, SO_ENOTFOUND, "no run with id %"
			    PRId64 " in \"%s\" (it has no runs)", o->run_id,
			    name);
		free(latest);
	}
	free(study);
	return ret;
}

/*
 * Why nothing matched, for the message: hidden exploratory runs, or the
 * studies that do have runs.
 */
static int
explain_none(sqlite3 *db, const struct report_opts *o, struct so_err *err)
{
	const char *name = o->db_path != NULL ? o->db_path : "results.db";
	int64_t hidden;
	char *studies;
	int ret;

	if ((ret = db_report_absent(db, o->study, &hidden, &studies,
	    err)) != 0)
		return ret;
	if (hidden > 0)
		ret = so_error(err, SO_ENOTFOUND, "no runs%s%s%s in \"%s\" "
		    "(%" PRId64 " exploratory run%s hidden; use --explore)",
		    o->study != NULL ? " of study \"" : "",
		    o->study != NULL ? o->study : "",
		    o->study != NULL ? "\"" : "", name, hidden,
		    hidden == 1 ? "" : "s");
	else if (o->study != NULL && studies != NULL)
		ret = so_error(err, SO_ENOTFOUND, "no runs of study \"%s\" in "
		    "\"%s\" (studies with runs: %s)", o->study, name, studies);
	else if (o->study != NULL)
		ret = so_error(err, SO_ENOTFOUND, "no runs of study \"%s\" in "
		    "\"%s\" (it has no runs yet)", o->study, name);
	else
		ret = so_error(err, SO_ENOTFOUND, "no runs in \"%s\" yet "
		    "(start one with \"seqorch run\")", name);
	free(studies);
	return ret;
}

int
report_select(sqlite3 *db, const struct report_opts *o, int64_t **ids,
    size_t *n, struct so_err *err)
{
	int ret;

	*ids = NULL;
	*n = 0;
	if (o->run_id > 0)
		return select_one(db, o, ids, n, err);
	if ((ret = db_report_latest(db, o->study, o->explore, ids, n,
	    err)) != 0)
		return ret;
	if (*n == 0)
		return explain_none(db, o, err);
	return 0;
}

int
report_select_first(sqlite3 *db, const struct report_opts *o, int64_t *id,
    struct so_err *err)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int ret;

	if ((ret = report_select(db, o, &ids, &n, err)) != 0)
		return ret;
	*id = ids[0];
	free(ids);
	return 0;
}

int
report_load_one(sqlite3 *db, int64_t id, const char *db_path,
    unsigned flags, struct rrun *r, struct so_err *err)
{
	struct report_opts o = { .run_id = id, .db_path = db_path };
	int ret;

	if ((ret = report_select_first(db, &o, &id, err)) != 0)
		return ret;
	return report_load_run(db, id, flags, r, err);
}

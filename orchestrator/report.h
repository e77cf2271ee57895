/*
 * The report over results.db: for each study, per cell (variant x host x
 * build) the median rate in the study's unit with quartiles, range, cv,
 * n, ns per step, one clock and the cycles it implies, and digest
 * agreement; the best variant per host; the ratios between hosts and
 * against a host's best with bootstrap intervals and verdicts (stats.h);
 * position bias; and the run's header and warnings, as text, Markdown,
 * CSV, JSON or HTML.  Medians, minima and maxima are those of the
 * schema's `summary` view (computed the same way, over one run), so the
 * report and a hand-written query agree.
 *
 * Functions return 0 or a negative SO_E* code, fill err and never exit.
 * They write only to the FILE * given and only read the database.
 */
#ifndef SEQORCH_REPORT_H
#define SEQORCH_REPORT_H

#include "util.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

struct rrun;
struct report_opts;

/*
 * The version of the JSON schema `report --format json`, summary.json
 * (export) and `compare --format json` share ("schema_version" in each;
 * docs/report.md): 3 names no faster host where the interval cannot
 * tell two apart (ratios[].a and .b; faster and slower null), gives a
 * refused ratio its members as null and position_bias null when not
 * measurable; 2 gave them one vocabulary (cells, hosts[].name, cv_pct,
 * cycles_source "calibration"); summary.json's "summary_version" 1 came
 * before.
 */
#define REPORT_SCHEMA_VERSION 4

/*
 * A format of the report, as curl describes a protocol by a handler: its
 * --format name, the extensions -o FILE picks it by (space-separated, as
 * ".html .htm"; NULL: none) and what renders the loaded runs.  render
 * returns 0 or SO_E* with err filled.
 */
struct report_renderer {
	const char	*name;
	const char	*ext;
	int		(*render)(sqlite3 *db, const struct rrun *runs,
			    size_t n, const struct report_opts *o, FILE *out,
			    struct so_err *err);
};
/*
 * Every format, in the order --format lists them (text first, the
 * default), ended by an entry whose name is NULL.
 */
extern const struct report_renderer report_renderers[];
/* The renderer FILE's extension names (case-insensitive); text if none. */
const struct report_renderer *report_renderer_for_path(const char *path);

struct report_opts {
	int64_t run_id;		/* > 0: only this run; 0: latest per study */
	const char *study;	/* NULL: every study */
	int explore;		/* let the latest pick see exploratory runs */
	const struct report_renderer *format;	/* NULL: text */
	const char *db_path;	/* how messages name the database */
	const char *reference;	/* a published reference id, or NULL */
	double max_cv;		/* a cell's cv above it is unstable; 0:
				 * REPORT_MAX_CV, as run's --max-cv */
	int per_cell;		/* csv: one row per cell, not per sample */
};

#define REPORT_MAX_CV 0.01

/*
 * Choose the runs o selects: run_id alone, or else the newest run of each
 * study (only o->study when set), by study name.  Exploratory runs count
 * only with o->explore; a run asked for by id is always taken.
 *
 * Returns 0 with *ids (caller frees) and *n >= 1.  SO_ENOTFOUND when there
 * is nothing to report: run_id names no run (the message lists the latest
 * ids) or no run matches (the message says why, e.g. hidden exploratory
 * runs).  SO_EINVAL when run_id's study is not o->study.  SO_EDB.
 */
int report_select(sqlite3 *db, const struct report_opts *o, int64_t **ids,
    size_t *n, struct so_err *err);

/*
 * Select as report_select does and print the report to out in o->format.
 * Returns 0, or report_select's codes; nothing is printed on failure.
 */
int report_print(sqlite3 *db, const struct report_opts *o, FILE *out,
    struct so_err *err);

/*
 * A rate in hashes per second with four significant digits and an SI
 * suffix ("6.813M", "812.5k", "950.0"); "-" for a rate that is not
 * positive.  buf should hold 16 bytes.
 */
void report_format_rate(double rate, char *buf, size_t len);

#endif

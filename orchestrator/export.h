/*
 * summary.json: one run as a self-describing document (the seeds' summary
 * file): the run, its common digest, hosts and builds (compiler metadata,
 * source and binary hashes), and per cell the valid samples' durations
 * (ns) with median, mean, quartiles, range and cv of their rates, plus
 * the ratios and their verdicts.  docs/summary.schema.json is its JSON Schema.  Kept apart from
 * the command so that other commands (signed bundles) build the same
 * document.
 */
#ifndef SEQORCH_EXPORT_H
#define SEQORCH_EXPORT_H

#include "report.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdint.h>

/*
 * Read run run_id from db and build its summary.  0 with *out (the caller
 * frees it with cJSON_Delete); SO_ENOTFOUND when there is no such run
 * (the message names db_path and the latest ids); SO_EDB.
 */
int export_summary(sqlite3 *db, int64_t run_id, const char *db_path,
    cJSON **out, struct so_err *err);

/*
 * Run run_id in the shape of hyperfine's --export-json: {"results": [...]}
 * with one result per cell with valid samples, its "times" the samples'
 * ns / 1e9 in the order they ran; "user" and "system" are null (not
 * measured).  docs/report.md lists the keys.  Codes as export_summary's.
 */
int export_hyperfine(sqlite3 *db, int64_t run_id, const char *db_path,
    cJSON **out, struct so_err *err);

#endif

/*
 * The report's sections about builds: paired ratios between the builds
 * of a host (measured in one alternating order) and, for studies built
 * per targeting and measuring phases (randomx), rates per host and
 * build, native/default ratios, and the phase shares of hashing time.  Kept apart from report.c; each
 * section prints nothing when the run has nothing for it.
 *
 * Returns 0 or a negative SO_E* code (SO_EDB); only reads the database
 * and writes only to out.
 */
#ifndef SEQORCH_REPORT_BUILDS_H
#define SEQORCH_REPORT_BUILDS_H

#include "util.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

struct rrun;
struct cJSON;

/*
 * The text sections: paired ratios against each host's baseline build,
 * the best valid (variant, build) against the host's other builds, then
 * the rates, targeting ratios and phase shares of db.
 */
int report_builds_text(sqlite3 *db, const struct rrun *r, FILE *out,
    struct so_err *err);
/* The paired ratios and the best build's, as JSON (new; the caller owns). */
struct cJSON *report_builds_json(const struct rrun *r);
/* The same as an HTML section; nothing for a run of one build per host. */
void report_builds_html(const struct rrun *r, FILE *out);

#endif

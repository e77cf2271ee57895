/*
 * The report's sections for studies built per targeting and measuring
 * phases (randomx): rates per host and build, native/default ratios, and
 * the phase shares of hashing time.  Kept apart from report.c; each
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

int report_builds_text(sqlite3 *db, int64_t run_id, FILE *out,
    struct so_err *err);

#endif

/*
 * The report's sections about builds: paired ratios between the builds
 * of a host (measured in one alternating order) and, for studies built
 * per targeting and measuring phases (randomx), rates per host and
 * build, native/default ratios, and the phase shares of hashing time.  Kept apart from report.c; each
 * section prints nothing when the run has nothing for it.
 *
 * They render the run's model (report-model.h) and write only to out.
 */
#ifndef SEQORCH_REPORT_BUILDS_H
#define SEQORCH_REPORT_BUILDS_H

#include "util.h"

#include <stdint.h>
#include <stdio.h>

struct rrun;
struct rpaired;
struct cJSON;

/*
 * The text sections: paired ratios against each host's baseline build,
 * the best valid (variant, build) against the host's other builds, then
 * the rates, targeting ratios and phase shares the run loaded
 * (report-load.c): nothing here reads the database.
 */
void report_builds_text(const struct rrun *r, FILE *out);
/*
 * The rates, targeting ratios and phase shares: as members build_rates,
 * targeting and phases of the run's JSON object o; as tables in Markdown
 * (html 0) or HTML.
 */
void report_builds_json_sections(const struct rrun *r, struct cJSON *o);
void report_builds_tables(const struct rrun *r, FILE *out, int html);
/* A native/default ratio's verdict in words; static. */
struct rtargeting;
const char *report_targeting_verdict(const struct rtargeting *t);
/* The paired ratios and the best build's, as JSON (new; the caller owns). */
struct cJSON *report_builds_json(const struct rrun *r);
/*
 * The pair of rows a and b, two builds of one host and variant (its
 * count of pairs in n), with the paired ratio a / b in *s; NULL when
 * they were not paired (another host or variant, no sample of one index
 * valid in both).
 */
struct rrow;
struct stats_ratio;
const struct rpaired *report_paired(const struct rrun *r,
    const struct rrow *a, const struct rrow *b, struct stats_ratio *s);
/* The same as an HTML section; nothing for a run of one build per host. */
void report_builds_html(const struct rrun *r, FILE *out);

#endif

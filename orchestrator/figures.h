/*
 * Published reference figures: the seeds' results (reference/seeds.json,
 * embedded at build time), so that a report can show a local result
 * beside the matching published one (--reference seed:genoa).
 *
 * figures_find fills a struct whose strings point into a table built
 * once and kept for the life of the process; nothing is freed.
 */
#ifndef SEQORCH_FIGURES_H
#define SEQORCH_FIGURES_H

#include "util.h"

#include <stdint.h>

/* A share of a published sample's time ("execute", 0.906). */
struct figure_phase {
	const char	*name;		/* the phase_NAME metric's NAME */
	const char	*words;		/* what the seed calls it */
	double		 share;
};

#define FIGURE_MAX_PHASES 8

struct figure {
	const char	*id;		/* "seed:genoa" */
	const char	*machine;
	const char	*study;
	int64_t		 steps;
	int64_t		 samples;
	const char	*variant;
	double		 median_rate;	/* steps per second */
	const char	*document;
	const char	*note;
	int		 version;	/* of the reference file */
	const char	*targeting;	/* "native", "default", or NULL */
	struct figure_phase phases[FIGURE_MAX_PHASES];
	size_t		 nphases;
};

/* A published ratio between two machines at a study. */
struct figure_ratio {
	const char	*study, *faster, *slower;	/* "seed:m4" */
	double		 ratio;
	const char	*document;
};

/*
 * Every figure of study (every machine, every targeting) into out, at
 * most max, in the file's order; returns how many there are.
 */
size_t figures_of_study(const char *study, struct figure *out, size_t max);

/* The same for the published ratios of study. */
size_t figures_ratios(const char *study, struct figure_ratio *out,
    size_t max);

/*
 * Seed 003's eBASH rows: cycles per byte of one primitive by message
 * length on the seed's machine, the first quartile, median and third
 * quartile at each length; bytes 0 is the "long messages" column.
 */
#define FIGURE_MAX_LENGTHS 8
struct figure_cpb {
	const char	*id, *machine, *study, *primitive, *document;
	size_t		 nlengths;
	int64_t		 bytes[FIGURE_MAX_LENGTHS];
	double		 quartiles[FIGURE_MAX_LENGTHS][3];
};
/* Those of study into out, at most max; returns how many there are. */
size_t figures_cpb(const char *study, struct figure_cpb *out, size_t max);

/*
 * The reference id for study.  SO_ENOTFOUND (message lists the ids that
 * exist) when there is no such id, SO_EINVAL when it has no figure for
 * that study (message says which studies it has), SO_EPARSE if the
 * embedded file is broken.
 */
int figures_find(const char *id, const char *study, struct figure *out,
    struct so_err *err);

/* Is id a reference id at all (for option checking)? */
int figures_known(const char *id);

#endif

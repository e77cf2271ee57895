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
};

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

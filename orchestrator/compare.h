/*
 * Two runs side by side, the way pyperf compare_to does it: per cell
 * (variant, host, compiler) the change of the median rate from the
 * baseline to the new run with a bootstrap interval and a verdict, cells
 * that cannot be compared (study, steps, seed or digest differ) refused
 * with the reason, and the geometric mean of the changes.
 *
 * Functions return 0 or a negative SO_E* code with err filled; they only
 * read the database and write to out.
 */
#ifndef SEQORCH_COMPARE_H
#define SEQORCH_COMPARE_H

#include "report.h"
#include "util.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

struct compare_opts {
	int64_t		 base, next;	/* run ids: next == 0: the newest of
					 * base's study */
	enum report_format format;	/* text, json or markdown */
	double		 fail_slower;	/* > 0: a percentage */
	const char	*db_path;
};

/*
 * Compare and print.  *slower_cells counts the cells decided slower by
 * more than o->fail_slower percent (0 when it is not set).  SO_ENOTFOUND
 * for an unknown run, SO_EINVAL when the runs are of different studies
 * (nothing would be comparable), SO_EDB.
 */
int compare_print(sqlite3 *db, const struct compare_opts *o, FILE *out,
    size_t *slower_cells, struct so_err *err);

#endif

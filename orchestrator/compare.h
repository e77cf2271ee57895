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

struct cmp;
struct compare_opts;
/*
 * A format of the comparison (as report.h's struct report_renderer): its
 * --format name and what prints a comparison.  compare_renderers ends
 * with a NULL name; text first, the default.
 */
struct compare_renderer {
	const char	*name;
	void		(*render)(const struct cmp *c,
			    const struct compare_opts *o, FILE *out);
};
extern const struct compare_renderer compare_renderers[];

struct compare_opts {
	int64_t		 base, next;	/* run ids: next == 0: the newest of
					 * base's study */
	const struct compare_renderer *format;	/* NULL: text */
	double		 fail_slower;	/* > 0: a percentage */
	const char	*db_path;
	/* --baseline-db: base's file (NULL: db_path's, as next's). */
	const char	*base_db_path;
};

/*
 * What a CI gate needs to know of a comparison.  undecided says why it
 * cannot decide, "run 4 failed; no cell could be compared" (NULL when it
 * can; owned here, freed by compare_gate_free): the new run is not ok,
 * no cell was compared, a cell was refused, has no interval (n < 2), is
 * slower than the threshold by its interval with its verdict withheld
 * by the t-test, or is missing from the new run.
 */
struct compare_gate {
	int64_t		 next;		/* the new run's id */
	size_t		 slower;	/* decided slower than fail_slower allows */
	size_t		 compared;	/* cells compared (in the mean) */
	char		*undecided;
};

/*
 * Compare and print, filling *gate: run base of base_db (NULL: of db)
 * with run next of db.  With --baseline alone (next 0) the new run is the
 * newest run of the study after the baseline measured here (with a
 * base_db of its own: the newest in db), whatever its status; newer
 * imported or --explore runs are named on stderr.  SO_ENOTFOUND for an unknown run or no such run, SO_EINVAL when the runs are of different
 * studies (nothing would be comparable), SO_EDB.
 */
int compare_print(sqlite3 *db, sqlite3 *base_db,
    const struct compare_opts *o, FILE *out,
    struct compare_gate *gate, struct so_err *err);
void compare_gate_free(struct compare_gate *gate);

#endif

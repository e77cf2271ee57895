/*
 * A resumed --max-cv build: the spread of what the run stored of each
 * variant, which its resumed agent starts from (--stored-spread), so
 * that extra rounds are decided on the whole run's samples, as the
 * uninterrupted agent decided them, and not on the resumed agent's
 * alone.  Every timed sample counts, valid or not: the agent cannot tell
 * them apart and counted each, and each is a cell that --max-samples
 * bounds.
 */
#include "runner-int.h"

#include "remote.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

static int
add_sample(void *arg, const char *variant, int64_t index, int64_t ns)
{
	struct stored_build *sb = arg;
	size_t i;

	(void)index;
	for (i = 0; i < sb->n && strcmp(sb->variants[i], variant) != 0; i++)
		;
	if (i == sb->n) {
		sb->variants = xrealloc(sb->variants, (sb->n + 1) *
		    sizeof *sb->variants);
		sb->spread = xrealloc(sb->spread, (sb->n + 1) *
		    sizeof *sb->spread);
		sb->variants[i] = xstrdup(variant);
		memset(&sb->spread[i], 0, sizeof sb->spread[i]);
		sb->n++;
	}
	spread_add(&sb->spread[i], (double)ns);
	return 0;
}

int
run_stored(struct hostrun *hr, const struct build_result *b,
    uint64_t skip_lo, uint64_t skip_hi, struct stored_build *sb)
{
	const struct run_params *p = hr->p;
	struct so_err err;
	int64_t end;
	int rc;

	memset(sb, 0, sizeof *sb);
	if ((rc = db_build_index_end(hr->db, p->run_id, hr->host->name,
	    b->build_id, &end, &err)) != 0 ||
	    (rc = db_build_samples(hr->db, p->run_id, hr->host->name,
	    b->build_id, (int64_t)skip_lo, (int64_t)skip_hi, add_sample, sb,
	    &err)) != 0) {
		run_fail(hr, err.msg);
		return rc;
	}
	sb->next = (uint64_t)end > p->samples ? (uint64_t)end : p->samples;
	return 0;
}

char *
run_stored_unsteady(const struct run_params *p, const struct stored_build *sb)
{
	struct strbuf list = STRBUF_INIT;
	char why[128];
	size_t i;

	for (i = 0; i < sb->n; i++)
		if (sb->spread[i].n < p->max_samples &&
		    spread_too_wide(&sb->spread[i], p->max_cv, why, sizeof why))
			strbuf_addf(&list, "%s%s", list.len ? "," : "",
			    sb->variants[i]);
	if (list.len == 0) {
		strbuf_release(&list);
		return NULL;
	}
	return strbuf_detach(&list);
}

/* Is name one of the comma list's (every name when list is NULL)? */
static int
listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (list == NULL)
		return 1;
	for (p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' ||
		    p[n] == '\0'))
			return 1;
	return 0;
}

void
run_stored_args(const struct stored_build *sb, const char *build,
    const char *variants, struct strbuf *cmd)
{
	size_t i;

	for (i = 0; i < sb->n; i++) {
		if (!listed(variants, sb->variants[i]))
			continue;
		/* %.17g: the agent reads back the very doubles. */
		rcmd_raw(cmd, " --stored-spread");
		rcmd_argf(cmd, "%s%s%s:%llu:%.17g:%.17g", build ? build : "",
		    build ? ":" : "", sb->variants[i],
		    (unsigned long long)sb->spread[i].n, sb->spread[i].mean,
		    sb->spread[i].m2);
	}
}

void
run_stored_free(struct stored_build *sb)
{
	size_t i;

	for (i = 0; i < sb->n; i++)
		free(sb->variants[i]);
	free(sb->variants);
	free(sb->spread);
	memset(sb, 0, sizeof *sb);
}

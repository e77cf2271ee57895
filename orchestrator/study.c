/* Look-ups in the study tables that kernels/registry.sh generates. */
#include "study.h"
#include "strbuf.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
study_arch(const char *target, char *buf, size_t len)
{
	size_t n = target ? strcspn(target, "-") : 0, i;

	for (i = 0; arch_aliases[i].other != NULL; i++)
		if (strlen(arch_aliases[i].other) == n &&
		    strncmp(arch_aliases[i].other, target, n) == 0) {
			snprintf(buf, len, "%s", arch_aliases[i].name);
			return buf;
		}
	snprintf(buf, len, "%.*s", (int)n, target ? target : "");
	return buf;
}

const struct study_entry *
study_find(const char *name)
{
	size_t i;

	for (i = 0; study_table[i].name != NULL; i++)
		if (strcmp(study_table[i].name, name) == 0)
			return &study_table[i];
	return NULL;
}

uint64_t
study_max_steps(const struct study *st)
{
	return st->max_steps != 0 ? st->max_steps : STUDY_MAX_STEPS;
}

const struct variant_entry *
study_variant(const char *study, const char *name)
{
	size_t i;

	for (i = 0; variant_table[i].study != NULL; i++)
		if (strcmp(variant_table[i].study, study) == 0 &&
		    strcmp(variant_table[i].variant, name) == 0)
			return &variant_table[i];
	return NULL;
}

const char *
study_unit(const char *name)
{
	const struct study_entry *e = name != NULL ? study_find(name) : NULL;

	return e != NULL ? e->study->unit : "step";
}

const char *
study_unit_plural(const char *name)
{
	const struct study_entry *e = name != NULL ? study_find(name) : NULL;

	return e != NULL ? e->study->unit_plural : "steps";
}

const struct study_group *
study_group_find(const char *name)
{
	size_t i;

	for (i = 0; study_groups[i].name != NULL; i++)
		if (strcmp(study_groups[i].name, name) == 0)
			return &study_groups[i];
	return NULL;
}

char *
study_expand(const char *list, char **twice)
{
	struct strbuf sb = STRBUF_INIT;
	char *copy = xstrdup(list), *p = copy, *name, *one, *q, *m;
	const struct study_group *g;

	*twice = NULL;
	while ((name = strsep(&p, ",")) != NULL) {
		g = study_group_find(name);
		one = xstrdup(g != NULL ? g->studies : name);
		for (q = one; (m = strsep(&q, ",")) != NULL; ) {
			if (*twice == NULL && sb.len > 0 && list_has(sb.buf, ',', m))
				*twice = xstrdup(m);
			if (sb.len > 0)
				strbuf_addch(&sb, ',');
			strbuf_addstr(&sb, m);
		}
		free(one);
	}
	free(copy);
	return strbuf_detach(&sb);
}

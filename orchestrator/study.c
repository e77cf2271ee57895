/* Look-ups in the study tables that kernels/registry.sh generates. */
#include "study.h"

#include <stdio.h>
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

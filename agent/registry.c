/* Look-ups in the generated tables (registry.h). */
#include "registry.h"

#include <string.h>

const struct registry_study *
registry_study(const char *name)
{
	size_t i;

	for (i = 0; registry_studies[i].name != NULL; i++)
		if (strcmp(registry_studies[i].name, name) == 0)
			return &registry_studies[i];
	return NULL;
}

/* --hosts: a selection of hosts and @groups from the inventory. */
#include "config-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

static int
has_group(const struct host *h, const char *group)
{
	size_t i;

	for (i = 0; i < h->ngroups; i++)
		if (strcmp(h->groups[i], group) == 0)
			return 1;
	return 0;
}

/* Mark the hosts of group in chosen; SO_ENOTFOUND if it has none. */
static int
select_group(const struct config *cfg, const char *group,
    unsigned char *chosen, struct so_err *err)
{
	char valid[SO_ERR_MAX / 2];
	size_t i, j, found = 0;

	for (i = 0; i < cfg->nhosts; i++) {
		if (has_group(&cfg->hosts[i], group)) {
			chosen[i] = 1;
			found++;
		}
	}
	if (found > 0)
		return 0;
	/* Each group once, in the order it first appears. */
	*valid = '\0';
	for (i = 0; i < cfg->nhosts; i++) {
		for (j = 0; j < cfg->hosts[i].ngroups; j++) {
			const char *g = cfg->hosts[i].groups[j];
			size_t k;

			for (k = 0; k < i && !has_group(&cfg->hosts[k], g); k++)
				;
			if (k == i)
				cfg_append_name(valid, sizeof valid, g);
		}
	}
	if (*valid == '\0')
		return so_error(err, SO_ENOTFOUND, "unknown group \"@%s\" "
		    "(%s defines no groups)", group, cfg->path);
	return so_error(err, SO_ENOTFOUND, "unknown group \"@%s\" (groups in "
	    "%s: %s)", group, cfg->path, valid);
}

static int
select_host(const struct config *cfg, const char *name,
    unsigned char *chosen, struct so_err *err)
{
	char valid[SO_ERR_MAX / 2];
	struct nearest n = NEAREST_INIT(name);
	size_t i;

	for (i = 0; i < cfg->nhosts; i++) {
		if (strcmp(cfg->hosts[i].name, name) == 0) {
			chosen[i] = 1;
			return 0;
		}
	}
	*valid = '\0';
	for (i = 0; i < cfg->nhosts; i++) {
		cfg_append_name(valid, sizeof valid, cfg->hosts[i].name);
		nearest_try(&n, cfg->hosts[i].name);
	}
	if (nearest_word(&n) != NULL)
		return so_error(err, SO_ENOTFOUND, "unknown host \"%s\" in %s; "
		    "did you mean \"%s\"?", name, cfg->path, nearest_word(&n));
	return so_error(err, SO_ENOTFOUND, "unknown host \"%s\" (hosts in %s: "
	    "%s)", name, cfg->path, valid);
}

/* Strip the spaces people leave after commas ("a, b"); in place. */
static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int
config_select(const struct config *cfg, const char *spec,
    struct host ***out, size_t *n, struct so_err *err)
{
	unsigned char *chosen;
	char *copy, *rest, *name;
	struct host **list;
	size_t i, count = 0;
	int r = 0;

	chosen = xcalloc(cfg->nhosts, 1);
	copy = rest = xstrdup(spec);
	if (*trim(copy) == '\0') {
		r = so_error(err, SO_EINVAL, "empty host selection");
		goto out;
	}
	while ((name = strsep(&rest, ",")) != NULL) {
		name = trim(name);
		if (*name == '\0' || strcmp(name, "@") == 0) {
			r = so_error(err, SO_EINVAL, "empty name in host "
			    "selection \"%s\"", spec);
			goto out;
		}
		if (strcmp(name, "all") == 0)
			memset(chosen, 1, cfg->nhosts);
		else if (*name == '@')
			r = select_group(cfg, name + 1, chosen, err);
		else
			r = select_host(cfg, name, chosen, err);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < cfg->nhosts; i++)
		count += chosen[i];
	list = xcalloc(count, sizeof *list);
	for (i = 0, count = 0; i < cfg->nhosts; i++)
		if (chosen[i])
			list[count++] = &cfg->hosts[i];
	*out = list;
	*n = count;
out:
	/* Names typed by the user are echoed: no terminal escapes. */
	if (r < 0 && err != NULL)
		strip_ctrl(err->msg);
	free(copy);
	free(chosen);
	return r;
}
